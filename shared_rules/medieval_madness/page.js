// Medieval Madness on the page: its scoreboard, its table and what each player is asked, in words.
// Loaded by the page shell (host/battlement/static/page.js) as /games/medieval-madness.js; it renders only what
// the bridge sent this page, which the rules made for this viewer.
(function () {
  "use strict";
  const B = window.Battlement;
  const { el, add, cap, who, stat, DIE } = B;

  // The board's spaces, fetched once per game and options (they never change in a game).
  let spaces = null, spacesFor = "";
  function loadSpaces(s) {
    const key = s.game + JSON.stringify(s.view && s.view.board);
    if (key === spacesFor) return;
    spacesFor = key;
    fetch("/api/spaces?table=" + encodeURIComponent(B.table)).then((r) => r.json()).then((list) => {
      spaces = Array.isArray(list) ? list : null;
      B.rerender();
    }).catch(() => { spacesFor = ""; });  // try again with the next state
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
      b.onclick = () => B.send({ action: "input", input: { t: "roll", by: roll.by, dice: picks.map((p) => Number(p.value)) } });
    }
    const row = add(sens, "div", undefined, "sensor-row"); row.id = "pawn-row";
    add(row, "span", "Pawn on its space:", "sensor-label");
    (v.players || []).forEach((p) => {
      if (p.space < 0) return;
      const b = add(row, "button", "pawn " + p.name + " on " + p.space_name, "sense");
      b.onclick = () => B.send({ action: "sense", input: { t: "pawn", space: p.space } });
    });
    if (spaces && spaces.length) {
      const prow = add(sens, "div", undefined, "sensor-row");
      add(prow, "span", "Put a pawn on:", "sensor-label");
      const who_ = add(prow, "select"); who_.id = "pawn-player";
      (v.players || []).forEach((p) => { const o = add(who_, "option", p.name); o.value = p.id; });
      const where = add(prow, "select"); where.id = "pawn-space";
      spaces.forEach((sp) => { const o = add(where, "option", sp.id + " " + sp.name); o.value = sp.id; });
      const b = add(prow, "button", "put pawn", "sense"); b.id = "put-pawn";
      b.onclick = () => B.send({ action: "input", input: { t: "pawn", player: who_.value, space: Number(where.value) } });
    }
  }

  B.register("medieval-madness", { board: mmBoard, update: loadSpaces, hostSensors: madnessSensors, table: (v, box) => { if (spaces) box.appendChild(madnessTrack(v)); },
    ask: (v, a) => (v.question && v.question.who === a ? v.question.text + "." : "wait for your turn.") });
})();
