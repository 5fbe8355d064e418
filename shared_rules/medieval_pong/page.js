// Medieval Pong on the page: its scoreboard, its table and what each player is asked, in words.
// Loaded by the page shell (host/battlement/static/page.js) as /games/medieval-pong.js; it renders only what
// the bridge sent this page, which the rules made for this viewer.
(function () {
  "use strict";
  const B = window.Battlement;
  const { add, cap, stat } = B;

  const PONG_STEPS = {
    choose: "choose which tower your two balls destroy", swap: "swap two of your towers (or not), on your own page",
    ask: "ask the Seer about a character, on your own page", roof: "put the Architect's tower as a roof on another tower",
    stack: "stack the Guard's tower on another tower", trap: "hide the Hunter's trap in a tower, on your own page",
    rebuild: "rebuild a tower (or pass), on your own page", destroy: "destroy one of your own towers",
  };

  function pongAsk(v, a) {
    if (v.phase === "team") return "pick your characters on your own page.";
    if (v.phase === "place") return "place your characters in your towers on your own page, then press ready.";
    const st = v.step || {};
    if (st.k === "throw") return "your turn: throw at the other kingdom" + (st.balls > 1 ? " (" + st.balls + " balls)." : ".");
    if (st.k === "fire") return "fire at will: everyone throws until a ball enters a tower.";
    return (PONG_STEPS[st.k] || "decide") + ".";
  }

  function pongBoard(v, box) {
    // once the game is over the headline says who won: no phase of a battle that has ended
    if (!v.over) {
      const phase = { team: "Picking characters", place: "Placing characters in secret", play: "Battle" }[v.phase] || cap(v.phase);
      stat(box, "phase", phase);
    }
    stat(box, "crowns to win", v.crowns_to_win);
    if (!v.over && v.step && v.step.side) stat(box, "throwing", cap(v.step.side) + (v.step.balls > 1 ? " (" + v.step.balls + " balls)" : ""));
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

  // Each kingdom as a grid of towers; a destroyed tower shows the character it held ("was"), a
  // standing one only what this page may know.
  function pongTable(v, box) {
    const sides = v.sides || {};
    Object.keys(sides).sort().forEach((s) => {
      const towers = sides[s].towers;
      if (!towers) return;
      const g = add(box, "div", undefined, "grid"); add(g, "div", s + " kingdom", "grid-title");
      const rows = {};
      Object.keys(towers).sort().forEach((t) => { (rows[t[0]] = rows[t[0]] || []).push(t); });
      Object.keys(rows).sort().forEach((r) => {
        const row = add(g, "div", undefined, "grid-row");
        rows[r].forEach((t) => {
          const tv = towers[t];
          const down = tv.was !== undefined || tv.status === "box";
          const c = add(row, "span", t + (tv.character ? " " + tv.character : tv.was ? " " + tv.was : "") + (tv.crown ? " \u265b" : ""),
            "tower " + s + (down ? " down" : ""));
          c.dataset.tower = s + "." + t; c.dataset.state = down ? "down" : tv.status;
          c.title = cap(s) + " tower " + t + ": " + (down ? "fallen" : tv.status === "up" ? "standing" : tv.status) + (tv.was ? " (held the " + tv.was + ")" : "") +
            (tv.crown ? ", a crown" : "");
        });
      });
    });
  }

  const legend = [{ mark: "A1", cls: "red", text: "Red's towers" }, { mark: "A1", cls: "blue", text: "Blue's towers" },
    { mark: "A1", cls: "down", text: "a fallen tower" }, { mark: "\u265b", cls: "plain", text: "a crown" }];

  B.register("medieval-pong", { board: pongBoard, table: pongTable, ask: pongAsk, legend: legend,
    timeoutWords: () => "missed (no ball in)", sensorWords: { ball: "ball into", tilt: "roof tips over" } });
})();
