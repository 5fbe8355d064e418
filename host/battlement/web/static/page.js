// The page shell, one script for the three pages; the role decides what is shown and which actions
// exist. The server decides what each role may see: this script only renders what it is sent.
// Each game's board (scoreboard, table, what a player is asked) is its own script beside its rules,
// loaded as /games/<game>.js, which calls Battlement.register(game, {board, table, ask, ...}).
(function () {
  "use strict";
  const body = document.body;
  const role = body.dataset.role, table = body.dataset.table, side = body.dataset.side;
  const code = new URLSearchParams(location.search).get("code") || "";
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  let ws = null, last = null;
  let sent = [];  // the actions sent and not yet answered: the websocket answers each in order
  const games = {};  // game -> its board: {board(v, box), table(v, box), ask(v, actor), label(inp, v),
  //                   hostSensors(s, v, box), update(s), sensorWords: {input type: words}}
  const game = (name) => games[name] || {};

  function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function add(parent, tag, text, cls) { return parent.appendChild(el(tag, text, cls)); }
  function cap(s) { s = String(s); return s.charAt(0).toUpperCase() + s.slice(1); }
  function and(words) { return words.length < 2 ? words.join("") : words.slice(0, -1).join(", ") + " and " + words[words.length - 1]; }
  function toast(text) { const t = $("toast"); t.textContent = text; t.style.display = "block"; setTimeout(() => { t.style.display = "none"; }, 4000); }
  const phone = window.matchMedia && window.matchMedia("(max-width: 600px)").matches;
  function send(msg) { if (ws && ws.readyState === 1) { ws.send(JSON.stringify(msg)); sent.push(msg.action); } }

  // Other page parts (static/sound.js, ...) get every message and may send: window.BATTLEMENT_HOOKS.
  const hooks = (window.BATTLEMENT_HOOKS = window.BATTLEMENT_HOOKS || []);
  window.BATTLEMENT_SEND = send;
  let tries = 0;  // reconnects since the bridge last answered
  function offline(text) { body.classList.add("offline"); $("status").textContent = text; }

  function connect() {
    const q = new URLSearchParams({ role: role, table: table, side: side, code: code });
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?" + q);
    ws.onopen = () => { $("status").textContent = "live"; body.classList.remove("offline"); sent = []; tries = 0; };
    // the bridge restarted or the network dropped: keep trying, and say so (the buttons wait meanwhile)
    ws.onclose = () => {
      tries += 1;
      offline("the bridge is not answering: reconnecting" + (tries > 1 ? " (try " + tries + ")" : "") + "...");
      setTimeout(connect, Math.min(1000 * tries, 3000));
    };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      hooks.forEach((f) => f(m));
      if (m.type === "error") { offline(m.message); ws.onclose = null; return; }
      if (m.type === "reply") {
        if (!m.ok) toast(m.message);
        if (sent.shift() === "new") newGameReply(m);
        return;
      }
      if (m.type === "state") {
        last = m;
        render(m);
        const g = game(m.game);
        if (g.update) g.update(m);
      }
      window.dispatchEvent(new CustomEvent("battlement:message", { detail: m }));  // for health.js and the like
    };
  }

  // --- names as players say them -------------------------------------------------------

  // "p2" -> "Player 2" (or the name the view gives the player), "orcs" -> "Orcs"
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
  // A game's board may word its own (label).
  function label(inp, v) {
    const g = game(v.game);
    if (g.label) { const l = g.label(inp, v); if (l) return l; }
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
  // The rules' own prompt is shown when there is one; the game's board covers the moments without
  // one (a new game, after an undo), worded from the view this page was sent.
  function askOf(v, actor) {
    const f = game(v.game).ask;
    return who(actor, v) + ", " + (f ? f(v, actor) : "your decision.");
  }

  // --- scoreboards: each game's board draws its own, from the view this page was sent ------

  function stat(parent, name, value, cls) {
    const d = add(parent, "div", undefined, "stat" + (cls ? " " + cls : ""));
    add(d, "span", name, "stat-name"); add(d, "span", String(value), "stat-value");
    return d;
  }



  // --- the table, as the game's board draws it -------------------------------------------

  function renderTable(v) {
    let box = $("grids");
    if (!box) { box = el("div"); box.id = "grids"; $("picture").parentNode.insertBefore(box, $("picture")); }
    box.replaceChildren();
    const f = game(v.game).table;
    if (f) f(v, box);
    // the legend: what each colour and shape on the table stands for, as the game's board names them
    const lg = $("legend"); lg.replaceChildren();
    (game(v.game).legend || []).forEach((x) => {
      const item = add(lg, "span", undefined, "legend-item");
      add(item, "span", x.mark, "legend-mark " + (x.cls || "")).setAttribute("aria-hidden", "true");
      add(item, "span", x.text);
    });
    $("picture").textContent = Array.isArray(v.picture) ? v.picture.join("\n") : (v.picture || "");
  }


  // --- decisions: each question in words next to the buttons that answer it ------------------

  const openLists = {};  // actor -> the folded list was opened: a new state keeps it open
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
      else if (g.buttons.length) add(box, "p", who(k, v) + (role === "side" ? ", you can also:" : " can also:"), "ask");
      // a game may list some answers folded (moves played by tapping the board: the list is the fallback)
      const fold = game(v.game).foldDecisions;
      let list = null;
      g.buttons.forEach((inp) => {
        let where = box;
        if (fold && fold(inp)) {
          if (!list) { list = add(box, "details", undefined, "move-list"); list.open = !!openLists[k]; list.ontoggle = () => { openLists[k] = list.open; }; add(list, "summary"); }
          where = list;
        }
        const b = add(where, "button", label(inp, v));
        b.onclick = () => send({ action: "input", input: inp });
      });
      if (list) list.querySelector("summary").textContent = "The moves as a list (" + (list.children.length - 1) + ")";
    });
  }

  // --- the whole page -------------------------------------------------------------------

  function render(s) {
    const v = s.view || {};
    const before = marks();
    $("title").textContent = s.title + (role === "side" ? " - " + who(side, v) : "") + (s.paused ? " (paused)" : "");
    const waiting = v.awaiting || [];
    const others = waiting.filter((a) => a !== side).map((a) => who(a, v));
    $("turn").textContent = v.over ? (v.winner ? who(v.winner, v) + " won!" : "Game over") :
      // a side's own page says it is that side's turn (and who else is awaited)
      role === "side" && waiting.indexOf(side) >= 0 ? "Your turn" + (others.length ? " (and " + and(others) + ")" : "") :
      (waiting.length ? "Waiting for " + and(waiting.map((a) => who(a, v))) : "");
    const asked = $("asked"); asked.replaceChildren();  // host and side pages say it beside their buttons
    if (role === "public" && !v.over) (v.awaiting || []).forEach((a) => add(asked, "div", askOf(v, a)));
    const sum = $("summary"); sum.replaceChildren();
    const board = game(v.game).board;
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
    $("legend").hidden = !$("legend").children.length;
    // the board as text beside a drawn one is for the host (and the raw view); a player reads the drawing
    $("picture").hidden = role !== "host" && $("grids").children.length > 0;
    $("private").hidden = role === "side" && !$("private-list").children.length;
    // a game played by tapping its table puts the table right under what to do now
    body.classList.toggle("act-on-table", !!game(v.game).actOnTable);
    if (s !== shown) { changed(before); announce(s, v); }  // a redraw of the same state (a tap) is no news
    shown = s;
    foldCards();
  }

  // --- what changed since the last state: animated on the page, said to a screen reader ----------

  // Every piece a game's board marks (a tower, a cup, a cell, a figure, a stat) keyed by what it is,
  // with what it showed; after a render the ones that show something new are animated once.
  const MARKED = "[data-tower], [data-cup], [data-cell], [data-piece], .stat, tr[data-side], tr[data-player]";
  function marked() { return Array.from(document.querySelectorAll("#summary, #grids")).flatMap((box) => Array.from(box.querySelectorAll(MARKED))); }
  function keyOf(e) {
    const d = e.dataset;
    if (d.tower || d.cup || d.cell || d.piece) return d.tower || d.cup || d.cell || d.piece;
    if (d.side || d.player) return "row " + (d.side || d.player);
    const card = e.closest("[data-side]");
    return "stat " + (card ? card.dataset.side + " " : "") + ((e.querySelector(".stat-name") || {}).textContent || "");
  }
  function marks() {
    const out = {};
    marked().forEach((e) => { out[keyOf(e)] = e.textContent + "|" + (e.dataset.state || "") + "|" + e.getAttribute("class") + "|" + (e.dataset.piece || ""); });
    out.turn = $("turn").textContent;
    return out;
  }
  let drawn = false;  // the first state is not news: nothing is animated or said for it
  let shown = null;  // the state last drawn
  function changed(before) {
    const now = marks();
    if (drawn) {
      Object.keys(now).forEach((k) => {
        if (k === "turn" || before[k] === undefined || before[k] === now[k]) return;
        marked().forEach((e) => { if (keyOf(e) === k) e.classList.add("just"); });
      });
      // the pieces are drawn anew at each state (the class goes with them); the headline stays, so
      // its class is taken off and put back for the animation to play again
      const t = $("turn");
      t.classList.remove("just");
      if (before.turn !== now.turn) { void t.offsetWidth; t.classList.add("just"); }
    }
  }

  // The live region: a turn that changed and each new announcement (a hit, a capture), in the game's words.
  let heard = [];  // the public notices already said
  let saidTurn = "";
  function announce(s, v) {
    const texts = (s.notices || []).map((n) => n.kind + "|" + n.text);
    let fresh = [];
    if (drawn) {
      // the notices are the last KEEP_NOTES: the new ones follow the longest run already heard
      let k = Math.min(heard.length, texts.length);
      while (k > 0 && heard.slice(heard.length - k).join("\n") !== texts.slice(0, k).join("\n")) k--;
      fresh = texts.slice(k).filter((t) => t.startsWith("say|")).map((t) => t.slice(4));
    }
    heard = texts;
    const turn = $("turn").textContent;
    const words = fresh.slice(-3);
    if (turn && turn !== saidTurn && (!words.length || words.join(" ").indexOf(turn) < 0)) words.push(turn);
    saidTurn = turn;
    if (words.length) $("live").textContent = words.join(" ");
    drawn = true;
  }

  // On a phone the host page keeps its cards for now (the score, the decisions, the controls) open;
  // the others fold under their heading, a tap away, so the page is not a long scroll.
  const SECONDARY = ["log", "board", "onboarding", "sound-card", "health"];
  function foldCards() {
    if (!phone) return;
    document.querySelectorAll("main > section.card").forEach((c) => {
      if (c.dataset.fold) return;
      const h = c.querySelector(":scope > h2");
      if (!h) return;
      c.dataset.fold = "1";
      const b = el("button", h.textContent, "fold");
      h.replaceChildren(b);
      const set = (open) => { c.classList.toggle("folded", !open); b.setAttribute("aria-expanded", String(open)); };
      set(!(role === "host" && SECONDARY.indexOf(c.id) >= 0));
      b.onclick = () => set(c.classList.contains("folded"));
    });
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

  // Sensor buttons grouped as the table is: one row per side (or the first part of an object's name)
  // and kind of input, in the game's words.
  function sensorGroup(inp, v) {
    const owner = inp.side || (inp.cup || inp.piece || "").split(".")[0] || inp.by || "";
    return (owner ? cap(owner) + ": " : "") + ((game(v.game).sensorWords || {})[inp.t] || inp.t);
  }

  function timeoutWords(inp, v) {
    const g = game(v.game);
    return (g.timeoutWords && g.timeoutWords(inp, v)) || label(inp, v);
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
      const key = sensorGroup(inp, v);
      if (!rows[key]) { rows[key] = el("div", undefined, "sensor-row"); add(rows[key], "span", key, "sensor-label"); sens.appendChild(rows[key]); }
      const b = add(rows[key], "button", label(inp, v), "sense");
      b.onclick = () => send({ action: simulated ? "sense" : "input", input: inp });
    });
    const more = game(v.game).hostSensors;
    if (more) more(s, v, sens);
    sens.querySelectorAll("select").forEach((x) => { if (picked[x.id] !== undefined) x.value = picked[x.id]; });
    if (!sens.children.length) add(sens, "p", v.over ? "The game is over." : "No sensor means anything right now.", "small");
    const c = Object.assign({}, s.counters || {}, (s.bridge || {}).counters || {});
    $("counters").textContent = Object.keys(c).sort().map((k) => k + " " + c[k]).join(" | ");
    $("pause").textContent = s.paused ? "Resume" : "Pause";
    // the timeout button enters what the game says a turn's timeout stands for now, in its words; a
    // game without one has no such button
    $("miss").hidden = !s.timeout;
    if (s.timeout) $("miss").textContent = cap(timeoutWords(s.timeout, v));
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

  if (role === "host") {
    $("miss").onclick = () => send({ action: "timeout" });
    if (phone) { $("sensors-fold").open = false; $("counters-fold").open = false; }
    $("undo").onclick = () => send({ action: "undo" });
    $("pause").onclick = () => send({ action: "pause", paused: !(last && last.paused) });
    const startNew = () => send({ action: "new", options: chosenOptions() });
    $("new").onclick = startNew;
    $("option-form").onsubmit = (e) => { e.preventDefault(); startNew(); };
  }
  if (role === "side") $("prompts-title").textContent = "What to do now";
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
  // What a game's board may use; it registers itself with register(game, board).
  window.Battlement = {
    el: el, add: add, cap: cap, and: and, who: who, piece: piece, stat: stat, label: label, DIE: DIE, SVG: SVG,
    role: role, table: table, side: side, send: send,
    register: (name, board) => { games[name] = board; if (last) render(last); },
    state: () => last, phone: phone,
    rerender: () => { if (last) render(last); },
  };
  // The game's board script comes after this one: connect once every script has run.
  if (document.readyState === "complete") connect(); else window.addEventListener("load", connect);
})();
