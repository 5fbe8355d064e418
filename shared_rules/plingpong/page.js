// PlingPong on the page: its scoreboard, its table and what each player is asked, in words.
// Loaded by the page shell (host/battlement/static/page.js) as /games/plingpong.js; it renders only what
// the bridge sent this page, which the rules made for this viewer.
(function () {
  "use strict";
  const B = window.Battlement;
  const { add, cap, stat, who } = B;

  // each colour's cups carry a shape as well as the colour, so no one needs to tell colours apart
  const SHAPE = { green: "\u25b2", red: "\u25cf", yellow: "\u25a0", blue: "\u25c6" };

  // "yellow.6" -> "yellow cup 6", as the rules say a cup (rules.cup_text); "black" -> "the Black Cup"
  function cupWords(name) {
    if (name === "black") return "the Black Cup";
    const [tray, n] = String(name).split(".");
    return tray + " cup " + n;
  }

  // The trays as the players sit: clockwise from the first seat (the rules' seat order), each
  // player's or team's own colours in turn; the rules' tray order for any left over.
  function seatOrder(v) {
    const sides = v.sides || {}, out = [];
    const sideOf = (p) => Object.keys(sides).find((s) => sides[s].players.indexOf(p) >= 0);
    (v.seats || []).forEach((p) => { const s = sideOf(p); if (s && out.indexOf(s) < 0) out.push(s); });
    Object.keys(sides).forEach((s) => { if (out.indexOf(s) < 0) out.push(s); });
    return out;
  }
  function trayOrder(v) {
    const trays = Object.keys(v.trays || {}), out = [];
    seatOrder(v).forEach((s) => (v.sides[s].colours || []).forEach((c) => { if (trays.indexOf(c) >= 0 && out.indexOf(c) < 0) out.push(c); }));
    trays.forEach((t) => { if (out.indexOf(t) < 0) out.push(t); });
    return out;
  }

  function plingAsk(v, a) {
    if (v.phase === "shootoff") return "shoot a ball for the first turn.";
    if (v.phase === "score") return "every ball is in: say score to count the cups.";
    return "your shot: throw a ball into a cup.";
  }

  function plingBoard(v, box) {
    if (!v.over) {
      const phase = { shootoff: "Shoot-off for the first turn", round: "Round " + v.round, score: "Counting the cups" }[v.phase] || cap(v.phase);
      stat(box, "round", v.round);
      stat(box, "phase", phase);
    } else stat(box, "rounds played", v.round);
    if (v.shooter) stat(box, "shooting", who(v.shooter, v));
    if (v.black) stat(box, "balls in the black cup", v.black);
    const t = add(box, "table", undefined, "players");
    const hr = add(t, "tr"); ["player", "colours", "cups"].forEach((h) => add(hr, "th", h));
    seatOrder(v).forEach((s) => {
      const sv = v.sides[s];
      const tr = add(t, "tr"); tr.dataset.side = s;
      if (sv.players.indexOf(v.shooter) >= 0) tr.className = "current";
      add(tr, "td", sv.players.length > 1 ? cap(s) + " (" + sv.players.map((p) => who(p, v)).join(", ") + ")" : who(sv.players[0] || s, v));
      add(tr, "td", sv.colours.map((c) => (SHAPE[c] || "") + " " + c).join(", "));
      add(tr, "td", sv.cups, "cups");
    });
    const shots = (v.shots || []).filter((x) => !x.void);
    if (shots.length) stat(box, "this round", shots.map((x) => who(x.by, v) + ": " + (x.cup ? cupWords(x.cup) : "missed")).join("; "));
  }

  // Each tray as a row of cups, with the balls in each; in seat order.
  function plingTable(v, box) {
    const trays = v.trays || {};
    trayOrder(v).forEach((tray) => {
      const g = add(box, "div", undefined, "grid"); add(g, "div", tray + " tray", "grid-title");
      const row = add(g, "div", undefined, "grid-row");
      trays[tray].forEach((sp) => {
        const n = sp.cup.split(".")[1];
        const c = add(row, "span", undefined, "tower " + (sp.height ? sp.colour : "down"));
        if (sp.height) add(c, "span", SHAPE[sp.colour] || "", "mark").setAttribute("aria-hidden", "true");
        add(c, "span", n + (sp.height > 1 ? " \u00d7" + sp.height : "") + (sp.balls ? " (" + sp.balls + ")" : ""));
        c.dataset.cup = sp.cup;
        c.title = sp.height ? (sp.colour + " cup" + (sp.height > 1 ? "s (" + sp.height + " stacked)" : "") + " on " + tray + " space " + n +
          (sp.balls ? ", " + sp.balls + " ball" + (sp.balls > 1 ? "s" : "") : "")) : tray + " space " + n + ": no cup";
      });
    });
  }

  // The decisions in words (the rules' input types are "void", "miss", ...).
  function plingLabel(inp, v) {
    if (inp.t === "ball") return cupWords(inp.cup);
    if (inp.t === "void") return "void the last shot (it did not bounce in its zone)";
    if (inp.t === "miss") return "missed every cup";
    if (inp.t === "score") return "score: count the cups";
    if (inp.t === "middle") return "lost rock, paper, scissors: take the middle colour";
    return "";
  }

  const legend = Object.keys(SHAPE).map((c) => ({ mark: SHAPE[c], cls: c, text: c + " cups" }))
    .concat([{ mark: "6", cls: "down", text: "empty space" }, { mark: "(2)", cls: "plain", text: "balls in a cup" }]);

  B.register("plingpong", { board: plingBoard, table: plingTable, ask: plingAsk, label: plingLabel, legend: legend,
    timeoutWords: () => "missed every cup", sensorWords: { ball: "ball into" } });
})();
