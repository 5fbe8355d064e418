// Ringo on the page: its scoreboard, its rings and what each player is asked, in words.
// Loaded by the page shell (host/battlement/static/page.js) as /games/ringo.js; it renders only what
// the bridge sent this page, which the rules made for this viewer.
// A move is played by tapping a piece and then where it goes (or with the keyboard: Tab to a piece,
// Enter, Tab to a gold cell, Enter); the moves are also listed as buttons. On a phone the rings are
// too small for a finger (a cell 29 px on a 390 px screen), so while this page may move the board is
// drawn bigger, each cell's hit area 44 px across, in a frame that scrolls sideways and shows the
// pieces that can move, then the one picked up and where it may go.
(function () {
  "use strict";
  const B = window.Battlement;
  const { add, cap, stat, SVG } = B;
  const SIDE_WORD = { attackers: "attacker", defenders: "defender" };

  function ringoBoard(v, box) {
    if (!v.over) stat(box, "to move", cap(v.turn));
    stat(box, "attackers", v.attackers + " (" + v.castle + " in the castle)");
    stat(box, "defenders", v.defenders);
    if (v.neutral) stat(box, "attackers in the Neutral Zone", v.neutral.attackers + " of " + v.neutral.limit);
    stat(box, "turns", v.turns);
    if (v.last) stat(box, "last move", v.last);
  }

  // The moves this page may play now: its own decisions (a side page, the host's), each with how it
  // is sent. On the host page of simulated boards a move goes through the boards, as a hand makes it.
  function movesNow() {
    const s = B.state() || {};
    if ((s.view || {}).over) return [];
    const own = (s.decisions || []).filter((i) => i.t === "move");
    if (B.role === "host" && s.bridge && s.bridge.simulated) {
      const sensed = (s.sensed || []).filter((i) => i.t === "move");
      if (sensed.length) return sensed.map((i) => ({ inp: i, action: "sense" }));
    }
    return own.map((i) => ({ inp: i, action: "input" }));
  }

  let picked = null;  // the cell of the piece tapped, waiting for where it goes
  let panned = null;  // how far the zoomed board was scrolled sideways, kept across redraws

  // A cell's centre on the drawing: ring r at radius 10 + 20 r, slice i at i * 45 degrees from the top.
  const SLICES = "nabcdefg", HALF = 134;  // the drawing is 2 * HALF across
  function centre(cell) {
    if (cell === "castle") return [0, 0];
    const a = (SLICES.indexOf(cell[0]) * 45 - 90) * Math.PI / 180, rad = 10 + Number(cell.slice(1)) * 20;
    return [rad * Math.cos(a), rad * Math.sin(a)];
  }

  // Five rings of eight slices around the castle; slice n (the Neutral Zone) at the top, clockwise.
  function ringoRings(v) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", [-HALF, -HALF, 2 * HALF, 2 * HALF].join(" ")); svg.setAttribute("class", "ring");
    svg.setAttribute("role", "group"); svg.setAttribute("aria-label", "the Ringo board");
    const mk = (tag, attrs, parent) => { const e = document.createElementNS(SVG, tag); Object.keys(attrs).forEach((k) => e.setAttribute(k, attrs[k])); (parent || svg).appendChild(e); return e; };
    const moves = movesNow();
    const from = {};
    moves.forEach((m) => { (from[m.inp.from] = from[m.inp.from] || []).push(m); });
    if (picked && !from[picked]) picked = null;  // the state moved on: that piece cannot move now
    const dest = {};
    (picked ? from[picked] : []).forEach((m) => { dest[m.inp.to] = m; });
    // a tappable cell: a button to the keyboard and to a screen reader as well as to a finger
    const tappable = (g, words, act) => {
      g.setAttribute("role", "button"); g.setAttribute("tabindex", "0"); g.setAttribute("aria-label", words);
      g.addEventListener("click", act);
      g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); act(); } });
    };
    const pick = (cell) => () => { picked = picked === cell ? null : cell; B.rerender(); focusAfter(cell); };
    const play = (m) => () => { picked = null; B.send({ action: m.action, input: m.inp }); };

    for (let r = 5; r >= 1; r--) mk("circle", { r: 20 + r * 20, class: "ring-line" });
    for (let i = 0; i < 8; i++) {
      const a = (i * 45 - 112.5) * Math.PI / 180;
      mk("line", { x1: 20 * Math.cos(a), y1: 20 * Math.sin(a), x2: 120 * Math.cos(a), y2: 120 * Math.sin(a), class: "ring-line" });
    }
    const nz = mk("path", { d: "M0 0", class: "neutral" });
    const a0 = -112.5 * Math.PI / 180, a1 = -67.5 * Math.PI / 180;
    nz.setAttribute("d", "M" + 20 * Math.cos(a0) + " " + 20 * Math.sin(a0) + " L" + 120 * Math.cos(a0) + " " + 120 * Math.sin(a0) +
      " A120 120 0 0 1 " + 120 * Math.cos(a1) + " " + 120 * Math.sin(a1) + " L" + 20 * Math.cos(a1) + " " + 20 * Math.sin(a1) + " A20 20 0 0 0 " + 20 * Math.cos(a0) + " " + 20 * Math.sin(a0));
    svg.insertBefore(nz, svg.firstChild);
    for (let i = 0; i < 8; i++) {
      for (let r = 1; r <= 5; r++) {
        const name = SLICES[i] + r, [x, y] = centre(name);
        const who_ = (v.cells || {})[name];
        const g = mk("g", { "data-cell": name, "data-piece": who_ || "" });
        mk("title", {}, g).textContent = name + (who_ ? ": " + SIDE_WORD[who_] : ": empty");
        // 9.6 of the 10 between two rings: neighbours' hit areas never overlap, and zoomed they are 44 px
        mk("circle", { cx: x, cy: y, r: 9.6, class: "hit-area" }, g);
        // the two sides differ in shape and letter as well as colour: attackers round "A", defenders square "D"
        if (who_ === "defenders") mk("rect", { x: x - 8, y: y - 8, width: 16, height: 16, rx: 2, class: "piece " + who_ }, g);
        else mk("circle", { cx: x, cy: y, r: who_ ? 8.5 : 2.5, class: who_ ? "piece " + who_ : "cell" }, g);
        if (who_) mk("text", { x: x, y: y + 3.5, class: "piece-letter" }, g).textContent = who_ === "defenders" ? "D" : "A";
        if (from[name]) {
          g.classList.add(picked === name ? "picked" : "movable");
          tappable(g, (picked === name ? "put back " : "pick up ") + "the " + SIDE_WORD[who_] + " on " + name, pick(name));
        } else if (dest[name]) {
          g.classList.add("dest");
          tappable(g, "move the " + SIDE_WORD[(v.cells || {})[picked]] + " from " + picked + " to " + name, play(dest[name]));
        }
      }
      const a = (i * 45 - 90) * Math.PI / 180;
      mk("text", { x: 128 * Math.cos(a), y: 128 * Math.sin(a) + 4, class: "slice" }).textContent = SLICES[i];
    }
    const c = mk("g", { "data-cell": "castle" });
    mk("circle", { r: 18, class: "hit-area" }, c);
    mk("circle", { r: 18, class: "castle" }, c);
    mk("text", { y: 5, class: "castle-count" }, c).textContent = String(v.castle || 0);
    mk("title", {}, c).textContent = "castle: " + (v.castle || 0) + " attackers in";
    if (dest.castle) { c.classList.add("dest"); tappable(c, "move the attacker from " + picked + " into the castle", play(dest.castle)); }
    // what the zoomed board shows: the piece picked up and where it may go, else the pieces that can move
    return { svg: svg, moves: moves.length, shown: picked ? [picked].concat(Object.keys(dest)) : Object.keys(from) };
  }

  // After a re-render the focus goes back to the cell the keyboard was on.
  function focusAfter(cell) {
    const g = document.querySelector('svg.ring [data-cell="' + cell + '"]');
    if (g && g.focus) g.focus({ preventScroll: true });  // the zoomed board scrolls to it itself
  }

  function ringoTable(v, box) {
    const drawn = ringoRings(v);
    if (drawn.moves) add(box, "p", (picked ? "Now tap a gold cell where the piece goes (or the piece again to put it back)."
      : "Your move: tap one of your pieces (white ring), then where it goes.") + (B.phone ? " Swipe the board sideways to see all of it." : ""), "move-help");
    // the frame scrolls only where page.css zooms the board (a phone): elsewhere it fits, and stays put
    const frame = add(box, "div", undefined, "ring-frame" + (drawn.moves ? " zoom" : ""));
    frame.appendChild(drawn.svg);
    if (!drawn.moves) { panned = null; return; }
    const scale = drawn.svg.getBoundingClientRect().width / (2 * HALF);
    if (picked || panned === null) {
      const xs = drawn.shown.map((cell) => centre(cell)[0]);
      panned = ((Math.min.apply(null, xs) + Math.max.apply(null, xs)) / 2 + HALF) * scale - frame.clientWidth / 2;
    }
    frame.scrollLeft = panned;
    frame.addEventListener("scroll", () => { panned = frame.scrollLeft; });
  }

  function ringoLabel(inp) {
    if (inp.t === "move") return "move " + inp.from + (inp.to === "castle" ? " into the castle" : " to " + inp.to);
    if (inp.t === "cell") return inp.cell + (inp.occupied ? " piece put down" : " piece lifted");
    return "";
  }

  B.register("ringo", { board: ringoBoard, table: ringoTable, label: ringoLabel, sensorWords: { move: "lift and put down", cell: "cell" },
    legend: [{ mark: "A", cls: "attackers", text: "Attackers (round)" }, { mark: "D", cls: "defenders", text: "Defenders (square)" }],
    foldDecisions: (inp) => inp.t === "move", actOnTable: true,
    ask: () => "your move: lift a piece and put it on a free cell (or jump to capture)." });
})();
