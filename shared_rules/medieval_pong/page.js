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

  // A tower as the rules have it: "up" stands (a Princess's or King's tower stays up when the ball takes
  // its character, and the crown under it is then exposed), "box" has fallen to the rampart, "hand" has
  // fallen and waits for its character's power, "roof" and "guard" lie on another tower.
  const exposed = (tv) => tv.status === "up" && !!tv.crown && !tv.character;
  const TOWER_WORDS = { up: "standing", box: "fallen", hand: "fallen (its power uses it next)", roof: "a roof on ", guard: "stacked on " };
  function towerWords(tv) {
    if (exposed(tv)) return "standing, crown exposed";
    const w = TOWER_WORDS[tv.status] || tv.status;
    return w + (tv.on ? tv.on : "") + (tv.status === "up" && tv.was ? ", empty" : "");
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
      const bare = names.filter((t) => exposed(towers[t])).sort();
      if (bare.length) stat(card, bare.length > 1 ? "crowns exposed" : "crown exposed", bare.join(", "), "warn");
      if (v.phase === "place") stat(card, "set-up", sv.ready ? "ready" : "placing");
      if (sv.trap_hidden) stat(card, "trap", "hidden somewhere");
      if (sv.bitten) stat(card, "bitten", "throws with the other hand");
      if ((sv.discarded || []).length) stat(card, "out of the game", sv.discarded.join(", "));
    });
  }

  // Each kingdom as a grid of towers; a destroyed tower shows the character it held ("was"), a
  // standing one only what this page may know; an exposed crown stands in its tower, drawn apart.
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
          const down = tv.status !== "up", bare = exposed(tv);
          const c = add(row, "span", t + (tv.character ? " " + tv.character : tv.was && down ? " " + tv.was : "") + (tv.crown ? " \u265b" : ""),
            "tower " + s + (down ? " down" : bare ? " exposed" : ""));
          if (down || bare) add(c, "span", ": " + towerWords(tv), "sr-only");  // what the look says, to a screen reader
          c.dataset.tower = s + "." + t; c.dataset.state = down ? "down" : bare ? "exposed" : tv.status;
          c.title = cap(s) + " tower " + t + ": " + towerWords(tv) + (tv.was ? " (held the " + tv.was + ")" : "") +
            (tv.crown && !bare ? ", a crown" : "");
        });
      });
    });
  }

  const legend = [{ mark: "A1", cls: "red", text: "Red's towers" }, { mark: "A1", cls: "blue", text: "Blue's towers" },
    { mark: "A1", cls: "down", text: "a fallen tower" }, { mark: "\u265b", cls: "exposed", text: "a crown exposed (its tower stands)" },
    { mark: "\u265b", cls: "plain", text: "a crown" }];

  B.register("medieval-pong", { board: pongBoard, table: pongTable, ask: pongAsk, legend: legend,
    timeoutWords: () => "missed (no ball in)", sensorWords: { ball: "ball into", tilt: "roof tips over" } });
})();
