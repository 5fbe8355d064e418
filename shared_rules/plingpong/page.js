// PlingPong on the page: its scoreboard, its table and what each player is asked, in words.
// Loaded by the page shell (host/battlement/static/page.js) as /games/plingpong.js; it renders only what
// the bridge sent this page, which the rules made for this viewer.
(function () {
  "use strict";
  const B = window.Battlement;
  const { add, cap, stat, who } = B;

  function plingAsk(v, a) {
    if (v.phase === "shootoff") return "shoot a ball for the first turn.";
    if (v.phase === "score") return "every ball is in: say score to count the cups.";
    return "your shot: throw a ball into a cup.";
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

  // Each tray as a row of cups, with the balls in each.
  function plingTable(v, box) {
    const trays = v.trays || {};
    Object.keys(trays).sort().forEach((tray) => {
      const g = add(box, "div", undefined, "grid"); add(g, "div", tray, "grid-title");
      const row = add(g, "div", undefined, "grid-row");
      trays[tray].forEach((sp) => {
        const c = add(row, "span", sp.cup.split(".")[1] + (sp.balls ? " (" + sp.balls + ")" : ""), "tower " + (sp.height ? sp.colour : "down"));
        c.dataset.cup = sp.cup;
      });
    });
  }

  B.register("plingpong", { board: plingBoard, table: plingTable, ask: plingAsk, sensorWords: { ball: "ball into" } });
})();
