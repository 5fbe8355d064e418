// One script for the three pages; the role decides what is shown and which actions exist.
// The server decides what each role may see: this script only renders what it is sent.
(function () {
  "use strict";
  const body = document.body;
  const role = body.dataset.role, table = body.dataset.table, side = body.dataset.side;
  const code = new URLSearchParams(location.search).get("code") || "";
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  let ws = null, last = null;
  let sent = [];  // the actions sent and not yet answered: the websocket answers each in order
  let spaces = null;  // a board game's spaces, fetched once per game and options (they never change in a game)
  let spacesFor = "";

  function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function add(parent, tag, text, cls) { return parent.appendChild(el(tag, text, cls)); }
  function cap(s) { s = String(s); return s.charAt(0).toUpperCase() + s.slice(1); }
  function and(words) { return words.length < 2 ? words.join("") : words.slice(0, -1).join(", ") + " and " + words[words.length - 1]; }
  function toast(text) { const t = $("toast"); t.textContent = text; t.style.display = "block"; setTimeout(() => { t.style.display = "none"; }, 4000); }
  function send(msg) { if (ws && ws.readyState === 1) { ws.send(JSON.stringify(msg)); sent.push(msg.action); } }

  function connect() {
    const q = new URLSearchParams({ role: role, table: table, side: side, code: code });
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?" + q);
    ws.onopen = () => { $("status").textContent = "live"; sent = []; };
    ws.onclose = () => { $("status").textContent = "reconnecting..."; setTimeout(connect, 1000); };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === "error") { $("status").textContent = m.message; ws.onclose = null; return; }
      if (m.type === "reply") {
        if (!m.ok) toast(m.message);
        if (sent.shift() === "new") newGameReply(m);
        return;
      }
      if (m.type === "state") { last = m; render(m); loadSpaces(m); }
      window.dispatchEvent(new CustomEvent("battlement:message", { detail: m }));  // for health.js and the like
    };
  }

  function loadSpaces(s) {
    const key = s.game + JSON.stringify(s.view && s.view.board);
    if (s.game !== "medieval-madness" || key === spacesFor) return;
    spacesFor = key;
    fetch("/api/spaces?table=" + encodeURIComponent(table)).then((r) => r.json()).then((list) => {
      spaces = Array.isArray(list) ? list : null;
      if (last) render(last);
    }).catch(() => { spacesFor = ""; });  // try again with the next state
  }

  // --- names as players say them -------------------------------------------------------

  // "p2" -> "Player 2" (Medieval Madness names come from its view), "orcs" -> "Orcs"
  function who(id, v) {
    if (id === null || id === undefined || id === "") return "Everyone";
    const p = (v.players || []).find((x) => x.id === id);
    if (p && p.name) return p.name;
    const m = /^p(\d+)$/.exec(id);
    return m ? "Player " + m[1] : cap(id);
  }
  // "orcs.warrior3" -> "warrior 3", "knights.castle-catapult" -> "castle catapult"
  function piece(name) { return String(name).split(".").slice(1).join(".").replace(/-/g, " ").replace(/(\D)(\d+)$/, "$1 $2"); }
  const DIE = ["", "\u2680", "\u2681", "\u2682", "\u2683", "\u2684", "\u2685"];

  // A decision or sensor input as a button label; the input type comes first ("ball blue A1", "place king A1").
  function label(inp, v) {
    const parts = [inp.t];
    Object.keys(inp).filter((k) => k !== "t" && k !== "by").sort().forEach((k) => {
      const x = inp[k];
      if (k === "occupied") parts.push(x ? "on" : "off");
      else if (k === "yes") parts.push(x ? "yes" : "no");
      else if (k === "player") parts.push(x === null ? "nobody" : who(x, v));
      else if (k === "dice") parts.push(x.join(" and "));
      else if (k === "piece" || k === "weapon") parts.push(piece(x));
      else if (x !== null && x !== undefined) parts.push(String(x));
    });
    return parts.join(" ");
  }

  // --- what each game is waiting for, in words --------------------------------------------
  // The rules' own prompt is shown when there is one; these cover the moments without one
  // (a new game, after an undo), worded from the public view only.
  const PONG_STEPS = {
    choose: "choose which tower your two balls destroy", swap: "swap two of your towers (or not), on your own page",
    ask: "ask the Seer about a character, on your own page", roof: "put the Architect's tower as a roof on another tower",
    stack: "stack the Guard's tower on another tower", trap: "hide the Hunter's trap in a tower, on your own page",
    rebuild: "rebuild a tower (or pass), on your own page", destroy: "destroy one of your own towers",
  };
  const BG_CHECKS = {
    power: "place up to {n} power disks under your warriors or hero, then confirm",
    balcony: "choose the figure on the castle balcony, who works the castle catapult, or confirm an empty balcony",
    camp: "confirm your castle, bricks, weapons and army stand within 40 centimetres of your end",
    manned: "confirm every weapon has a warrior or the hero within 5 centimetres, to its front or side",
    placement: "confirm no warrior, hero or flag stands behind a weapon or building",
  };
  const ASK = {
    "medieval-pong": (v, a) => {
      if (v.phase === "team") return "pick your characters on your own page.";
      if (v.phase === "place") return "place your characters in your towers on your own page, then press ready.";
      const st = v.step || {};
      if (st.k === "throw") return "your turn: throw at the other kingdom" + (st.balls > 1 ? " (" + st.balls + " balls)." : ".");
      if (st.k === "fire") return "fire at will: everyone throws until a ball enters a tower.";
      return (PONG_STEPS[st.k] || "decide") + ".";
    },
    plingpong: (v, a) => {
      if (v.phase === "shootoff") return "shoot a ball for the first turn.";
      if (v.phase === "score") return "every ball is in: say score to count the cups.";
      return "your shot: throw a ball into a cup.";
    },
    battleground: (v, a) => {
      if (v.setup) return (BG_CHECKS[v.setup.check] || v.setup.check + " check: decide, then confirm")
        .replace("{n}", (v.armies[a] || {}).power_disks_to_place) + ".";
      if (v.aiming) return "who stands within 5 centimetres of the " + spoken(v.aiming) + " to fire it?";
      if (v.shot) return "the " + spoken(v.shot.weapon) + " fired: knock-downs are sensed; say when the shot is over.";
      const p = (v.pending || [])[0];
      if (p) return p.kind === "bonus" ? "three flags in one shot: two warriors back, or an extra turn?" : "which warrior comes back to life?";
      return "fire, move or end your turn (" + v.actions_left + " action" + (v.actions_left === 1 ? "" : "s") + " left).";
    },
    ringo: (v, a) => "your move: lift a piece and put it on a free cell (or jump to capture).",
    "medieval-madness": (v, a) => (v.question && v.question.who === a ? v.question.text + "." : "wait for your turn."),
  };
  function askOf(v, actor) {
    const f = ASK[v.game];
    return who(actor, v) + ", " + (f ? f(v, actor) : "your decision.");
  }

  // --- scoreboards: one per game, from the public view ----------------------------------

  function stat(parent, name, value, cls) {
    const d = add(parent, "div", undefined, "stat" + (cls ? " " + cls : ""));
    add(d, "span", name, "stat-name"); add(d, "span", String(value), "stat-value");
    return d;
  }

  function pongBoard(v, box) {
    const phase = { team: "Picking characters", place: "Placing characters in secret", play: "Battle" }[v.phase] || cap(v.phase);
    stat(box, "phase", phase);
    stat(box, "crowns to win", v.crowns_to_win);
    if (v.step && v.step.side) stat(box, "throwing", cap(v.step.side) + (v.step.balls > 1 ? " (" + v.step.balls + " balls)" : ""));
    Object.keys(v.sides || {}).sort().forEach((s) => {
      const sv = v.sides[s];
      const towers = sv.towers || {};
      const names = Object.keys(towers);
      const up = names.filter((t) => towers[t].status === "up").length;
      const card = add(box, "div", undefined, "army " + s);
      card.dataset.side = s;
      add(card, "h3", cap(s) + " kingdom");
      stat(card, "crowns captured", sv.crowns_captured + " of " + v.crowns_to_win, "crowns");
      stat(card, "towers standing", up + " of " + names.length, "towers");
      if (v.phase === "place") stat(card, "set-up", sv.ready ? "ready" : "placing");
      if (sv.trap_hidden) stat(card, "trap", "hidden somewhere");
      if (sv.bitten) stat(card, "bitten", "throws with the other hand");
      if ((sv.discarded || []).length) stat(card, "out of the game", sv.discarded.join(", "));
    });
  }

  function plingBoard(v, box) {
    const phase = { shootoff: "Shoot-off for the first turn", round: "Round " + v.round, score: "Counting the cups" }[v.phase] || cap(v.phase);
    stat(box, "round", v.round);
    stat(box, "phase", phase);
    if (v.shooter) stat(box, "shooting", who(v.shooter, v));
    if (v.black) stat(box, "balls in the black cup", v.black);
    const t = add(box, "table", undefined, "players");
    const hr = add(t, "tr"); ["player", "colours", "cups"].forEach((h) => add(hr, "th", h));
    Object.keys(v.sides || {}).sort().forEach((s) => {
      const sv = v.sides[s];
      const tr = add(t, "tr"); tr.dataset.side = s;
      if (sv.players.indexOf(v.shooter) >= 0) tr.className = "current";
      add(tr, "td", sv.players.length > 1 ? cap(s) + " (" + sv.players.map((p) => who(p, v)).join(", ") + ")" : who(sv.players[0] || s, v));
      add(tr, "td", sv.colours.join(", "));
      add(tr, "td", sv.cups, "cups");
    });
    const shots = (v.shots || []).filter((x) => !x.void);
    if (shots.length) stat(box, "this round", shots.map((x) => who(x.by, v) + " \u2192 " + (x.cup || "missed")).join("; "));
  }

  // "orcs.warrior3" -> "Orc warrior 3": a piece named with its army where both armies are listed together
  function spoken(name) { const sd = String(name).split(".")[0]; return cap(sd.replace(/s$/, "")) + " " + piece(name); }

  function bgBoard(v, box) {
    if (v.setup) stat(box, "set-up", cap(v.setup.side) + ": " + v.setup.check + " check");
    else {
      stat(box, "turn", v.turn_number);
      if (v.turn) stat(box, "actions left", v.actions_left);
    }
    const falling = v.shot ? v.shot.falls : [];
    if (v.shot) stat(box, "shot", spoken(v.shot.weapon) + " fired by " + piece(v.shot.crew) + (falling.length ? "; knocked down: " + falling.map(spoken).join(", ") : ""));
    if ((v.stand_up || []).length) stat(box, "stand back up", v.stand_up.map(spoken).join(", "), "warn");
    const down = v.down || [];
    // one chip per tilt piece: standing, knocked down in the shot being fired, or fallen (out of play)
    function chips(parent, names, isUp, power) {
      const row = add(parent, "div", undefined, "figures");
      names.forEach((f) => {
        const up = isUp(f), hit = falling.indexOf(f) >= 0;
        const c = add(row, "span", piece(f) + (up ? (hit ? " knocked down" : "") : " fallen") + (power && power[f] ? " +" + power[f] : ""),
          "figure" + (up ? (hit ? " hit" : "") : " fallen"));
        c.dataset.piece = f; c.dataset.state = up ? (hit ? "hit" : "up") : "fallen";
      });
    }
    const byNumber = (x, y) => x.localeCompare(y, undefined, { numeric: true });
    Object.keys(v.armies || {}).sort().forEach((s) => {
      const a = v.armies[s];
      const card = add(box, "div", undefined, "army " + s); card.dataset.side = s;
      add(card, "h3", cap(s) + (v.turn === s ? " (to play)" : ""));
      const figs = Object.keys(a.figures).sort((x, y) => (x.endsWith("hero") ? 1 : 0) - (y.endsWith("hero") ? 1 : 0) || byNumber(x, y));
      const power = {}; figs.forEach((f) => { power[f] = a.figures[f].power; });
      chips(card, figs, (f) => a.figures[f].up, power);
      const hero = a.figures[s + ".hero"];
      stat(card, "warriors standing", a.warriors_left + (hero ? ", hero " + (hero.up ? "standing" : "fallen") : ""), "warriors");
      const flagsDown = down.filter((p) => p.startsWith(s + ".flag"));
      const bricksDown = down.filter((p) => p.startsWith(s + ".brick"));
      stat(card, "flags", a.flags_up.length + " standing" + (flagsDown.length ? ", " + flagsDown.length + " down" : ""), "flags");
      stat(card, "bricks", a.bricks_up.length + " standing, " + bricksDown.length + " fallen", "bricks");
      stat(card, "gate", a.gate, "gate");
      chips(card, a.flags_up.concat(flagsDown).sort(byNumber).concat(a.bricks_up.concat(bricksDown).sort(byNumber)).concat([s + ".gate"]),
        (f) => down.indexOf(f) < 0);
      if (a.balcony) stat(card, "on the balcony", piece(a.balcony));
      if (a.ram_uses) stat(card, "battering ram uses", a.ram_uses);
      if (a.power_disks_to_place) stat(card, "power disks to place", a.power_disks_to_place);
      if (a.actions_lost_next_turn) stat(card, "actions lost next turn", a.actions_lost_next_turn, "warn");
      if (a.turns_to_miss) stat(card, "turns to miss", a.turns_to_miss, "warn");
      if (a.extra_turns) stat(card, "extra turns", a.extra_turns);
    });
  }

  function ringoBoard(v, box) {
    stat(box, "to move", cap(v.turn));
    stat(box, "attackers", v.attackers + " (" + v.castle + " in the castle)");
    stat(box, "defenders", v.defenders);
    if (v.neutral) stat(box, "attackers in the Neutral Zone", v.neutral.attackers + " of " + v.neutral.limit);
    stat(box, "turns", v.turns);
    if (v.last) stat(box, "last move", v.last);
  }

  function mmBoard(v, box) {
    if (v.dice) {
      const d = stat(box, "dice", v.dice.map((n) => DIE[n] + " " + n).join("  ") + "  (" + v.dice.reduce((x, y) => x + y, 0) + ")", "dice");
      d.dataset.dice = v.dice.join(",");
    } else stat(box, "dice", "not rolled yet", "dice");
    if (v.contest) stat(box, "contest", cap(v.contest.kind) + " called by " + who(v.contest.by, v) + " against " + v.contest.rivals.map((r) => who(r, v)).join(", ") + " (round " + v.contest.round + ")");
    stat(box, "royal treasury", v.treasury + " gold nobles");
    stat(box, "cottages left", v.cottages_left);
    const t = add(box, "table", undefined, "players");
    const hr = add(t, "tr"); ["player", "gold nobles", "cottages", "title", "where"].forEach((h) => add(hr, "th", h));
    (v.players || []).forEach((p) => {
      const tr = add(t, "tr"); tr.dataset.player = p.id;
      if (p.id === v.turn) tr.className = "current";
      add(tr, "td", p.name);
      add(tr, "td", p.gold, "gold");
      add(tr, "td", p.cottages);
      add(tr, "td", p.title || "-");
      const notes = [];
      if (p.dungeon) notes.push("in the dungeon");
      if (p.pass) notes.push("has a dungeon pass");
      if (p.champion) notes.push("has a champion");
      if (p.lose_turns) notes.push("loses " + p.lose_turns + " turn" + (p.lose_turns > 1 ? "s" : ""));
      add(tr, "td", (p.space >= 0 ? p.space + ", " : "") + p.space_name + (notes.length ? " (" + notes.join(", ") + ")" : ""), "space");
    });
  }

  const BOARDS = { "medieval-pong": pongBoard, plingpong: plingBoard, battleground: bgBoard, ringo: ringoBoard, "medieval-madness": mmBoard };

  // --- the table: kingdoms and trays as grids, the Ringo board as rings --------------------

  function renderTable(v) {
    let box = $("grids");
    if (!box) { box = el("div"); box.id = "grids"; $("board").insertBefore(box, $("picture")); }
    box.replaceChildren();
    const sides = v.sides || {};
    Object.keys(sides).sort().forEach((s) => {
      const towers = sides[s].towers;
      if (!towers) return;
      const g = add(box, "div", undefined, "grid"); add(g, "div", s, "grid-title");
      const rows = {};
      Object.keys(towers).sort().forEach((t) => { (rows[t[0]] = rows[t[0]] || []).push(t); });
      Object.keys(rows).sort().forEach((r) => {
        const row = add(g, "div", undefined, "grid-row");
        rows[r].forEach((t) => {
          const tv = towers[t];
          const down = tv.was !== undefined || tv.status === "box";
          // a destroyed tower shows the character it held ("was"), a standing one only what this page may know
          const c = add(row, "span", t + (tv.character ? " " + tv.character : tv.was ? " " + tv.was : "") + (tv.crown ? " \u265b" : ""),
            "tower " + s + (down ? " down" : ""));
          c.dataset.tower = s + "." + t;
          c.title = tv.status + (tv.was ? " (was " + tv.was + ")" : "");
        });
      });
    });
    const trays = v.trays || {};
    Object.keys(trays).sort().forEach((tray) => {
      const g = add(box, "div", undefined, "grid"); add(g, "div", tray, "grid-title");
      const row = add(g, "div", undefined, "grid-row");
      trays[tray].forEach((sp) => {
        const c = add(row, "span", sp.cup.split(".")[1] + (sp.balls ? " (" + sp.balls + ")" : ""), "tower " + (sp.height ? sp.colour : "down"));
        c.dataset.cup = sp.cup;
      });
    });
    if (v.game === "ringo") box.appendChild(ringoRings(v));
    if (v.game === "medieval-madness" && spaces) box.appendChild(madnessTrack(v));
    $("picture").textContent = Array.isArray(v.picture) ? v.picture.join("\n") : (v.picture || "");
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

  // The castle's two walls of spaces with every pawn where it stands (the entrance before the first roll).
  function madnessTrack(v) {
    const out = el("div", undefined, "track");
    const pawns = {};
    (v.players || []).forEach((p) => { (pawns[p.space] = pawns[p.space] || []).push(p); });
    const line = (title, list, id) => {
      add(out, "div", title, "grid-title");
      const row = add(out, "div", undefined, "mm-spaces");
      list.forEach((sp) => {
        const c = add(row, "div", undefined, "mm-space" + (pawns[sp.id] ? " taken" : ""));
        c.dataset.space = id === undefined ? sp.id : id; c.title = sp.name;
        add(c, "span", id === undefined ? String(sp.id) : "", "space-no");
        add(c, "span", sp.name, "space-name");
        (pawns[id === undefined ? sp.id : id] || []).forEach((p) => {
          const t = add(c, "span", p.id.replace("p", "P"), "pawn pawn-" + p.id); t.title = p.name;
        });
      });
    };
    if (pawns[-1]) line("Castle entrance", [{ id: -1, name: "the castle entrance" }], -1);
    line("Outer wall", spaces.filter((sp) => sp.wall === "outer"));
    line("Inner wall", spaces.filter((sp) => sp.wall !== "outer"));
    return out;
  }

  // --- decisions: each question in words next to the buttons that answer it ------------------

  function renderDecisions(s, v) {
    const groups = {}, order = [];
    const group = (actor) => {
      const k = actor === null || actor === undefined ? "" : actor;
      if (!groups[k]) { groups[k] = { actor: k, asks: [], buttons: [] }; order.push(k); }
      return groups[k];
    };
    (s.prompts || []).forEach((p) => { if (p.ask) group(p.to).asks.push(p.ask); });
    (v.over ? [] : v.awaiting || []).forEach((a) => {
      if (role === "side" && a !== side) return;
      if (role === "public") return;  // the scoreboard says who is asked what
      group(a);
    });
    (s.decisions || []).forEach((inp) => group(inp.by).buttons.push(inp));
    const pl = $("prompt-list"); pl.replaceChildren();
    order.forEach((k) => {
      const g = groups[k];
      const box = add(pl, "div", undefined, "ask-group"); box.dataset.actor = k;
      if (g.asks.length) g.asks.forEach((a) => add(box, "p", (k && a.indexOf(who(k, v)) < 0 ? who(k, v) + ": " : "") + a, "ask"));
      else if (k && (v.awaiting || []).indexOf(k) >= 0) add(box, "p", askOf(v, k), "ask");
      else if (g.buttons.length) add(box, "p", who(k, v) + " may also:", "ask");
      g.buttons.forEach((inp) => {
        const b = add(box, "button", label(inp, v));
        b.onclick = () => send({ action: "input", input: inp });
      });
    });
  }

  // --- the whole page -------------------------------------------------------------------

  function render(s) {
    const v = s.view || {};
    $("title").textContent = s.title + (role === "side" ? " - " + who(side, v) : "") + (s.paused ? " (paused)" : "");
    $("turn").textContent = v.over ? (v.winner ? who(v.winner, v) + " won!" : "Game over") :
      ((v.awaiting || []).length ? "Waiting for " + and(v.awaiting.map((a) => who(a, v))) : "");
    const asked = $("asked"); asked.replaceChildren();  // host and side pages say it beside their buttons
    if (role === "public" && !v.over) (v.awaiting || []).forEach((a) => add(asked, "div", askOf(v, a)));
    const sum = $("summary"); sum.replaceChildren();
    const board = BOARDS[v.game];
    if (board) board(v, sum);
    renderTable(v);
    if (role === "host") $("view").replaceChildren(kv(v));
    const notes = $("notices"); notes.replaceChildren();
    (s.notices || []).slice().reverse().forEach((n) => add(notes, "li", n.text, n.kind));
    renderDecisions(s, v);
    if (role === "side") {
      const pv = $("private-list"); pv.replaceChildren();
      (s.private || []).forEach((t) => add(pv, "li", t));
    }
    if (role === "host") renderHost(s, v);
    // a card with nothing in it (the scoreboard's decisions, a board game's table) is left out
    $("prompts").hidden = !$("prompt-list").children.length && role !== "side";
    $("board").hidden = role !== "host" && !$("grids").children.length && !$("picture").textContent;
  }

  // The raw view, for the host's collapsible "raw view".
  function kv(obj) {
    const t = el("table"); t.className = "kv";
    Object.keys(obj).sort().forEach((k) => {
      const x = obj[k];
      if (k === "picture" || k === "log") return;
      const tr = add(t, "tr"); add(tr, "td", k);
      const td = add(tr, "td");
      if (x && typeof x === "object") td.appendChild(Array.isArray(x) && x.every((y) => typeof y !== "object") ? el("span", x.join(", ")) : kv(x));
      else td.textContent = String(x);
    });
    return t;
  }

  // Sensor buttons grouped as the table is: one row per kingdom, tray, army or kind of move.
  function sensorGroup(inp) {
    const owner = inp.side || (inp.cup || inp.piece || "").split(".")[0] || inp.by || "";
    return (owner ? cap(owner) + ": " : "") + ({ ball: "ball into", tilt: "tower tips over", fell: "knocked down", stood: "stood back up", move: "lift and put down", cell: "cell" }[inp.t] || inp.t);
  }

  function renderHost(s, v) {
    const codes = $("codes"); codes.replaceChildren();
    Object.keys(s.codes || {}).sort().forEach((k) => {
      const a = el("a", who(k, v) + " private page (code " + s.codes[k] + ")");
      a.href = "/side/" + encodeURIComponent(k) + "?table=" + encodeURIComponent(table) + "&code=" + s.codes[k];
      a.target = "_blank"; a.className = "code"; a.dataset.side = k; a.dataset.code = s.codes[k];
      add(codes, "div").appendChild(a);
    });
    const simulated = s.bridge && s.bridge.simulated;
    $("simnote").textContent = simulated ? "(simulated boards: each button is a sensor)" : "(enter what a sensor missed)";
    const sens = $("sensors");
    const picked = {};  // a re-render must not reset what the host has chosen in a list
    sens.querySelectorAll("select").forEach((x) => { picked[x.id] = x.value; });
    sens.replaceChildren();
    const rows = {};
    (s.sensed || []).forEach((inp) => {
      const key = sensorGroup(inp);
      if (!rows[key]) { rows[key] = el("div", undefined, "sensor-row"); add(rows[key], "span", key, "sensor-label"); sens.appendChild(rows[key]); }
      const b = add(rows[key], "button", label(inp, v), "sense");
      b.onclick = () => send({ action: simulated ? "sense" : "input", input: inp });
    });
    if (v.game === "medieval-madness") madnessSensors(s, v, sens);
    sens.querySelectorAll("select").forEach((x) => { if (picked[x.id] !== undefined) x.value = picked[x.id]; });
    if (!sens.children.length) add(sens, "p", v.over ? "The game is over." : "No sensor means anything right now.", "small");
    const c = Object.assign({}, s.counters || {}, (s.bridge || {}).counters || {});
    $("counters").textContent = Object.keys(c).sort().map((k) => k + " " + c[k]).join(" | ");
    $("pause").textContent = s.paused ? "Resume" : "Pause";
    renderOptions(s);
  }

  // --- the host's new-game form: one control per option of the game, its help under it ----------
  // It starts from this game's options (the table map's own options are the defaults); what the host
  // changes survives the state pushes of the game going on until a new game starts with it.
  let optionsShown = "";  // the game and option values the form was last built from
  let chosen = {}, chosenGame = "";  // option -> control value the host changed

  function optionText(x) { return x === true ? "yes" : x === false ? "no" : x === "" ? "empty" : String(x); }
  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
  function optionName(key) { return key.replace(/_/g, " "); }

  function renderOptions(s) {
    const specs = s.option_specs || [];
    const changed = specs.filter((o) => !same(o.value, o.default));
    $("options-now").textContent = "(this game: " + (changed.length ? changed.map((o) => optionName(o.key) + " " + optionText(o.value)).join(", ") : "the table's defaults") + ")";
    const key = s.game + JSON.stringify(specs);
    if (key === optionsShown) return;  // rebuilding would throw away what the host is choosing
    optionsShown = key;
    if (s.game !== chosenGame) { chosen = {}; chosenGame = s.game; }
    const form = $("option-form"); form.replaceChildren();
    specs.forEach((o) => {
      const id = "opt-" + o.key;
      const lab = add(form, "label", optionName(o.key)); lab.htmlFor = id;
      let c;
      if (o.choices) {  // a list of what the rules accept; the value is the choice's place in it
        c = add(form, "select");
        o.choices.forEach((x, i) => { const opt = add(c, "option", optionText(x)); opt.value = String(i); opt.selected = same(x, o.value); });
      } else {
        c = add(form, "input"); c.type = "text"; c.value = o.value === null || o.value === undefined ? "" : String(o.value);
      }
      c.id = id; c.name = o.key;
      if (chosen[o.key] !== undefined) c.value = chosen[o.key];
      c.oninput = c.onchange = () => { chosen[o.key] = c.value; };
      const help = add(form, "div", o.help + (same(o.default, o.value) ? "" : " (default: " + optionText(o.default) + ")"), "option-help small");
      help.id = id + "-help"; c.setAttribute("aria-describedby", help.id);
    });
  }

  // The options as the rules take them: a choice's own value (number, yes/no, name), or the text typed.
  function chosenOptions() {
    const out = {};
    ((last && last.option_specs) || []).forEach((o) => {
      const c = $("opt-" + o.key);
      if (!c) return;
      const text = c.value.trim();
      out[o.key] = o.choices ? o.choices[Number(c.value)] : (typeof o.default === "number" && /^-?\d+$/.test(text) ? Number(text) : text);
    });
    return out;
  }

  // A refusal stays beside the form (the toast goes away): what was wrong, and that nothing changed.
  function newGameReply(m) {
    const r = $("new-result");
    r.className = "small" + (m.ok ? "" : " refused");
    r.textContent = m.ok ? "New game started." : "Not started: " + String(m.message).replace(/\.$/, "") + ". The current game is unchanged.";
    if (m.ok) chosen = {};
  }

  // Medieval Madness: dice are entered here (no dice sensor). "Pawn on its space" acts as the space's
  // presence sensor (through the simulated boards when there are some); "put pawn" names whose pawn it is,
  // which a presence sensor cannot tell, so it goes to the rules as a typed input.
  function madnessSensors(s, v, sens) {
    const roll = (s.decisions || []).find((i) => i.t === "roll");
    if (roll) {
      const n = v.question && v.question.what === "die" ? 1 : 2;
      const row = add(sens, "div", undefined, "sensor-row"); row.id = "dice-row";
      add(row, "span", who(roll.by, v) + ": the dice show", "sensor-label");
      const picks = [];
      for (let i = 0; i < n; i++) {
        const sel = add(row, "select"); sel.className = "die"; sel.id = "die-" + (i + 1); sel.setAttribute("aria-label", "die " + (i + 1));
        for (let f = 1; f <= 6; f++) { const o = add(sel, "option", DIE[f] + " " + f); o.value = f; }
        picks.push(sel);
      }
      const b = add(row, "button", "roll these", "sense"); b.id = "roll-dice";
      b.onclick = () => send({ action: "input", input: { t: "roll", by: roll.by, dice: picks.map((p) => Number(p.value)) } });
    }
    const row = add(sens, "div", undefined, "sensor-row"); row.id = "pawn-row";
    add(row, "span", "Pawn on its space:", "sensor-label");
    (v.players || []).forEach((p) => {
      if (p.space < 0) return;
      const b = add(row, "button", "pawn " + p.name + " on " + p.space_name, "sense");
      b.onclick = () => send({ action: "sense", input: { t: "pawn", space: p.space } });
    });
    if (spaces && spaces.length) {
      const prow = add(sens, "div", undefined, "sensor-row");
      add(prow, "span", "Put a pawn on:", "sensor-label");
      const who_ = add(prow, "select"); who_.id = "pawn-player";
      (v.players || []).forEach((p) => { const o = add(who_, "option", p.name); o.value = p.id; });
      const where = add(prow, "select"); where.id = "pawn-space";
      spaces.forEach((sp) => { const o = add(where, "option", sp.id + " " + sp.name); o.value = sp.id; });
      const b = add(prow, "button", "put pawn", "sense"); b.id = "put-pawn";
      b.onclick = () => send({ action: "input", input: { t: "pawn", player: who_.value, space: Number(where.value) } });
    }
  }

  if (role === "host") {
    $("miss").onclick = () => send({ action: "miss" });
    $("undo").onclick = () => send({ action: "undo" });
    $("pause").onclick = () => send({ action: "pause", paused: !(last && last.paused) });
    const startNew = () => send({ action: "new", options: chosenOptions() });
    $("new").onclick = startNew;
    $("option-form").onsubmit = (e) => { e.preventDefault(); startNew(); };
  }
  // one bridge, several tables: a link to each table's page of the same kind
  const tables = window.BATTLEMENT_TABLES || [];
  if (tables.length > 1 && role !== "side") {
    const nav = el("nav", "Tables: ");
    tables.forEach((t) => {
      const a = el("a", t); a.href = location.pathname + "?table=" + encodeURIComponent(t) + (code ? "&code=" + code : "");
      if (t === table) a.className = "current";
      nav.appendChild(a); nav.appendChild(document.createTextNode(" "));
    });
    document.querySelector("header").appendChild(nav);
  }
  connect();
})();
