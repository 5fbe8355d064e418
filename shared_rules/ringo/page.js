// Ringo on the page: its scoreboard, its table and what each player is asked, in words.
// Loaded by the page shell (host/battlement/static/page.js) as /games/ringo.js; it renders only what
// the bridge sent this page, which the rules made for this viewer.
(function () {
  "use strict";
  const B = window.Battlement;
  const { add, cap, stat, SVG } = B;

  function ringoBoard(v, box) {
    stat(box, "to move", cap(v.turn));
    stat(box, "attackers", v.attackers + " (" + v.castle + " in the castle)");
    stat(box, "defenders", v.defenders);
    if (v.neutral) stat(box, "attackers in the Neutral Zone", v.neutral.attackers + " of " + v.neutral.limit);
    stat(box, "turns", v.turns);
    if (v.last) stat(box, "last move", v.last);
  }

  // Five rings of eight slices around the castle; slice n (the Neutral Zone) at the top, clockwise.
  function ringoRings(v) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "-130 -130 260 260"); svg.setAttribute("class", "ring");
    const mk = (tag, attrs, parent) => { const e = document.createElementNS(SVG, tag); Object.keys(attrs).forEach((k) => e.setAttribute(k, attrs[k])); (parent || svg).appendChild(e); return e; };
    const slices = "nabcdefg";
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
        const name = slices[i] + r, a = (i * 45 - 90) * Math.PI / 180, rad = 10 + r * 20;
        const who_ = (v.cells || {})[name];
        const g = mk("g", { "data-cell": name, "data-piece": who_ || "" });
        mk("title", {}, g).textContent = name + (who_ ? ": " + who_.slice(0, -1) : ": empty");
        mk("circle", { cx: rad * Math.cos(a), cy: rad * Math.sin(a), r: who_ ? 8 : 2.5, class: who_ ? "piece " + who_ : "cell" }, g);
      }
      const a = (i * 45 - 90) * Math.PI / 180;
      mk("text", { x: 127 * Math.cos(a), y: 127 * Math.sin(a) + 3, class: "slice" }).textContent = slices[i];
    }
    const c = mk("g", { "data-cell": "castle" });
    mk("circle", { r: 18, class: "castle" }, c);
    mk("text", { y: 5, class: "castle-count" }, c).textContent = String(v.castle || 0);
    mk("title", {}, c).textContent = "castle: " + (v.castle || 0) + " attackers in";
    return svg;
  }

  B.register("ringo", { board: ringoBoard, table: (v, box) => box.appendChild(ringoRings(v)), sensorWords: { move: "lift and put down", cell: "cell" },
    ask: () => "your move: lift a piece and put it on a free cell (or jump to capture)." });
})();
