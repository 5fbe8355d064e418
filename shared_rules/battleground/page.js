// Battleground on the page: its scoreboard, its table and what each player is asked, in words.
// Loaded by the page shell (host/battlement/static/page.js) as /games/battleground.js; it renders only what
// the bridge sent this page, which the rules made for this viewer.
(function () {
  "use strict";
  const B = window.Battlement;
  const { add, cap, piece, stat } = B;

  const BG_CHECKS = {
    power: "place up to {n} power disks under your warriors or hero, then confirm",
    balcony: "choose the figure on the castle balcony, who works the castle catapult, or confirm an empty balcony",
    camp: "confirm your castle, bricks, weapons and army stand within 40 centimetres of your end",
    manned: "confirm every weapon has a warrior or the hero within 5 centimetres, to its front or side",
    placement: "confirm no warrior, hero or flag stands behind a weapon or building",
  };

  // "orcs.warrior3" -> "Orc warrior 3": a piece named with its army where both armies are listed together
  function spoken(name) { const sd = String(name).split(".")[0]; return cap(sd.replace(/s$/, "")) + " " + piece(name); }

  function bgAsk(v, a) {
    if (v.setup) return (BG_CHECKS[v.setup.check] || v.setup.check + " check: decide, then confirm")
      .replace("{n}", (v.armies[a] || {}).power_disks_to_place) + ".";
    if (v.aiming) return "who stands within 5 centimetres of the " + spoken(v.aiming) + " to fire it?";
    if (v.shot) return "the " + spoken(v.shot.weapon) + " fired: knock-downs are sensed; say when the shot is over.";
    const p = (v.pending || [])[0];
    if (p) return p.kind === "bonus" ? "three flags in one shot: two warriors back, or an extra turn?" : "which warrior comes back to life?";
    return "fire, move or end your turn (" + v.actions_left + " action" + (v.actions_left === 1 ? "" : "s") + " left).";
  }

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

  B.register("battleground", { board: bgBoard, ask: bgAsk, timeoutWords: () => "the shot is over", sensorWords: { fell: "knocked down", stood: "stood back up" } });
})();
