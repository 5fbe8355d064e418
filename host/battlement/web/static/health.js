// The bridge's health on the host page: its tasks in words, whether each table's boards sign, every
// counter by reason, the last rejected frames with their reason, each board's heartbeat and facts, and the
// fleet: one line a board of every table served (board_health.fleet, boards/registry.py says whence).
// page.js announces each websocket message ("battlement:message"): the host's states carry the
// health, and between them the bridge sends {"type": "health"} when it changed; this file draws its
// own section only.
(function () {
  "use strict";
  if (document.body.dataset.role !== "host") return;
  const css = document.createElement("link");
  css.rel = "stylesheet"; css.href = "/static/health.css";
  document.head.appendChild(css);

  function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function add(parent, tag, text, cls) { return parent.appendChild(el(tag, text, cls)); }
  function counts(c) {
    const keys = Object.keys(c || {}).filter((k) => c[k]).sort();
    return keys.length ? keys.map((k) => k + " " + c[k]).join(" | ") : "none";
  }
  function time(at) { return new Date(at * 1000).toLocaleTimeString(); }
  function ago(at) {
    if (!at) return "never";
    const s = Math.max(0, Math.round(Date.now() / 1000 - at));
    return time(at) + " (" + (s < 60 ? s + " s" : Math.round(s / 60) + " min") + " ago)";
  }
  // a fact's time: the clock for today's, the date beside it for older ones ("never" when there is none)
  function when(at) {
    if (!at) return "never";
    const s = Math.max(0, Math.round(Date.now() / 1000 - at)), d = new Date(at * 1000);
    const age = s < 120 ? s + " s" : s < 7200 ? Math.round(s / 60) + " min" : s < 172800 ? Math.round(s / 3600) + " h" : Math.round(s / 86400) + " days";
    return (s < 72000 ? d.toLocaleTimeString() : d.toLocaleString()) + " (" + age + " ago)";
  }
  // A board's facts from the registry, in the fleet's order: what a card and a fleet line say alike.
  function facts(f) {
    return {
      firmware: f.firmware || "unknown",
      seen: f.last_seen ? when(f.last_seen) : "never seen",
      key: f.key ? "yes" : f.table_signs ? "MISSING (its table signs: its frames are refused)" : "none",
      transport: f.transport ? f.transport + " (" + f.transport_from + ")" : "unknown",
      flashed: f.flashed_at ? when(f.flashed_at) : "not by flash --table",
      boot: f.boot === null || f.boot === undefined ? "-" : String(f.boot),
    };
  }
  const FLEET = [["table", "Table"], ["board", "Board"], ["state", "State"], ["key", "Key"], ["transport", "Transport"],
    ["firmware", "Firmware"], ["flashed", "Flashed"], ["seen", "Last seen"], ["boot", "Boot"]];
  function fleetTable(parent, fleet) {
    const table = add(parent, "table", undefined, "small fleet");
    table.id = "fleet";
    const head = add(add(table, "thead"), "tr");
    FLEET.forEach(([, title]) => add(head, "th", title));
    const body = add(table, "tbody");
    fleet.forEach((f) => {
      const row = add(body, "tr", undefined, f.state.replace(" ", "-"));
      row.dataset.table = f.table; row.dataset.board = f.board;
      const words = Object.assign({ table: f.table, board: f.board + (f.mapped === false ? " (on no map)" : ""),
        state: STATE[f.state] + (f.link ? " on " + f.link : "") }, facts(f));
      FLEET.forEach(([k]) => add(row, "td", words[k], "fleet-" + k + (k === "key" && !f.key && f.table_signs ? " warn" : "")));
    });
  }
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach((k) => e.setAttribute(k, attrs[k]));
    if (parent) parent.appendChild(e);
    return e;
  }
  // A beam's recent break widths (dots, oldest left) against the threshold the firmware counts a ball
  // from (dashed line): breaks close to or under it mean a badly aligned beam.
  function widthPlot(sensor) {
    const W = 180, H = 44, widths = sensor.widths_us || [], min = sensor.min_pulse_us;
    const top = Math.max(min * 2, ...widths) * 1.1;
    const y = (us) => (H - 4 - (H - 8) * us / top).toFixed(1);
    const plot = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", class: "width-plot" });
    const words = widths.length ? "last " + widths.length + " breaks " + (Math.min(...widths) / 1000).toFixed(1) + "-" +
      (Math.max(...widths) / 1000).toFixed(1) + " ms" : "no breaks yet";
    svg("title", {}, plot).textContent = sensor.id + ": " + words + "; a ball counts from " + (min / 1000).toFixed(1) + " ms";
    svg("rect", { x: 0, y: 0, width: W, height: H, class: "plot-bg" }, plot);
    svg("line", { x1: 0, x2: W, y1: y(min), y2: y(min), class: "threshold" }, plot);
    const label = (text, x, yy, anchor) => { const e = svg("text", { x: x, y: yy, "text-anchor": anchor, class: "plot-label" }, plot); e.textContent = text; };
    label("ball from " + (min / 1000).toFixed(1) + " ms", W - 3, Math.max(9, y(min) - 3), "end");
    if (widths.length) label((Math.max(...widths) / 1000).toFixed(1) + " ms", 3, 9, "start");
    widths.forEach((us, i) => svg("circle", { cx: (6 + i * (W - 12) / Math.max(1, widths.length - 1)).toFixed(1), cy: y(us), r: 2.5,
      class: us < min * 1.5 ? "near" : "ok" }, plot));
    return plot;
  }
  const send = (msg) => window.BATTLEMENT_SEND && window.BATTLEMENT_SEND(msg);
  const STATE = { online: "online", offline: "OFFLINE", "never seen": "never seen (no hello yet)" };

  // One card per board, as ESPHome lists its devices.
  function boardCards(parent, bh) {
    const fleet = new Map((bh.fleet || []).map((f) => [f.table + "/" + f.board, f]));  // each card's facts
    (bh.boards || []).forEach((b) => {
      const card = add(parent, "div", undefined, "board-card " + b.state.replace(" ", "-"));
      card.dataset.table = b.table; card.dataset.board = b.board; card.dataset.state = b.state;
      const head = add(card, "div", undefined, "board-head");
      add(head, "strong", b.table + "/" + b.board);
      add(head, "span", " " + STATE[b.state] + (b.link ? " on " + b.link : "") +
        (b.state === "offline" && b.since ? " since " + time(b.since) : ""), "board-state");
      if (b.leds) {
        const test = add(head, "button", "LED test", "led-test");
        test.title = "blink this board's " + b.leds + " lights for a moment";
        test.disabled = b.state !== "online";
        test.onclick = () => send({ action: "led-test", table: b.table, board: b.board });  // the card's table, not the page's
      }
      const h = b.hello, beat = b.beat;
      add(card, "div", "hello " + (h ? ago(h.at) + ", boot " + h.boot + ", firmware " + h.firmware + ", profile " + h.profile : "never"), "small board-hello");
      add(card, "div", "beat " + (beat ? ago(beat.at) + ": outbox " + beat.outbox + ", queued " + beat.queued + ", dropped " +
        beat.dropped + ", reconnects " + beat.reconnects + ", up " + Math.round(beat.uptime_ms / 1000) + " s" : "none yet"),
        "small board-beat" + (beat && beat.dropped ? " warn" : ""));
      const known = fleet.get(b.table + "/" + b.board);
      if (known) {
        const f = facts(known);
        add(card, "div", "firmware " + f.firmware + ", last seen " + f.seen + ", key " + f.key + ", " + f.transport +
          ", flashed " + f.flashed + ", boot " + f.boot, "small board-facts");
      }
      if ((b.missing || []).length) add(card, "div", "the map has sensor(s) this board does not: " + b.missing.join(", "), "small warn board-missing");
      const list = add(card, "ul", undefined, "small sensors");
      b.sensors.forEach((s) => {
        const li = add(list, "li"); li.dataset.sensor = s.id;
        li.appendChild(el("span", s.id + (s.object ? " (" + s.object + ")" : "") + " " + s.kind + ": last " +
          (s.last_at ? ago(s.last_at) + " = " + s.last_value + (s.count > 1 ? ", " + s.count + " in all" : "") : "never")));
        if (s.blocked) li.appendChild(el("strong", " " + s.blocked, "warn beam-blocked"));
        if (s.kind === "beam") li.appendChild(widthPlot(s));
      });
    });
    (bh.unknown || []).forEach((u) => add(parent, "div", u.words, u.elsewhere ? "small unknown-board" : "small warn unknown-board"));
  }

  const section = el("section", undefined, "card");
  section.id = "health";
  add(section, "h2", "Bridge health");
  const summary = add(section, "div", "", "health-summary");
  summary.id = "health-summary";
  // whether each table's boards sign: said always, as the banner says it (anyone may act as an unsigned board)
  const signing = add(section, "ul", undefined, "small signing");
  signing.id = "signing";
  const details = add(section, "div");
  const main = document.querySelector("main");
  const log = document.getElementById("log");
  if (main) main.insertBefore(section, log || null);

  let boardsOpen = null, wasDown = false, fleetOpen = false;  // the host's own choice to fold or open the boards wins
  function render(h) {
    const tasks = h.tasks || [];
    const troubled = tasks.filter((t) => t.restarts || t.state !== "running");
    const boards = h.boards || [];
    const dropped = boards.filter((b) => b.dropped);
    const words = [];
    words.push(troubled.length ? troubled.map((t) => t.words).join("; ") : "All " + tasks.length + " tasks running.");
    if (dropped.length) words.push(dropped.map((b) => "board " + b.table + "/" + b.board + " dropped " + b.dropped + " event" + (b.dropped === 1 ? "" : "s") + " (its outbox overflowed)").join("; "));
    summary.textContent = words.join(" ");
    summary.className = "health-summary" + (troubled.length || dropped.length ? " warn" : "");

    signing.replaceChildren();
    Object.keys(h.signing || {}).sort().forEach((t) => add(signing, "li", t + ": " + h.signing[t], h.signing[t].startsWith("signing: OFF") ? "warn" : ""));
    details.replaceChildren();
    add(details, "h3", "Tasks");
    const tl = add(details, "ul", undefined, "small tasks");
    tasks.forEach((t) => add(tl, "li", t.words, t.restarts ? "warn" : ""));
    add(details, "h3", "Bridge counters");
    add(details, "div", counts(h.counters), "small counters-bridge");
    add(details, "div", "web: " + counts(h.web), "small counters-web");
    (h.transports || []).forEach((t) => {
      add(details, "h3", "Transport " + t.name);
      // Flow control is not a rejection: held back, the boards' events wait at the broker or on the line.
      const c = t.counters || {};
      add(details, "div", "accepted " + (c.accepted || 0) + "; rejected and noted: " + counts(Object.assign({}, c, { accepted: 0, paused: 0, "paused-ms": 0 })), "small transport-counters");
      add(details, "div", (t.paused ? "behind: not reading its links now" : "reading") + "; held back " + (c.paused || 0) + " time" + (c.paused === 1 ? "" : "s") + ", " + ((c["paused-ms"] || 0) / 1000).toFixed(1) + " s in all", "small transport-flow" + (t.paused ? " warn" : ""));
      add(details, "div", "links: " + (Object.keys(t.links || {}).map((k) => k + " " + t.links[k]).join(", ") || "none"), "small");
      if ((t.rejected || []).length) {
        const rl = add(details, "ol", undefined, "small rejected");
        t.rejected.slice().reverse().forEach((r) => add(rl, "li", time(r.at) + " [" + r.reason + "] " + r.text));
      }
    });
    Object.keys(h.router || {}).sort().forEach((table) => {
      add(details, "div", "router " + table + ": " + counts(h.router[table]), "small router-counters");
    });
    const bh = h.board_health || {};
    const cards = bh.boards || [];
    const down = cards.filter((b) => b.state !== "online");
    if (cards.length) words.push(down.length ? down.length + " of " + cards.length + " boards not online: " +
      down.map((b) => b.table + "/" + b.board + " " + b.state).join(", ") + "." : "All " + cards.length + " boards online.");
    // boards of tables other bridges serve (a shared broker) are named, but are no warning
    const strangers = (bh.unknown || []).filter((u) => !u.elsewhere);
    if (strangers.length) words.push(strangers.length + " unknown board(s).");
    summary.textContent = words.join(" ");
    if (down.length || strangers.length) summary.className = "health-summary warn";
    if (cards.length || (bh.unknown || []).length) {
      // folded while every board is well (the page stays short on a phone), open when one is not
      const fold = add(details, "details", undefined, "boards-fold");
      fold.open = boardsOpen === null ? down.length > 0 || strangers.length > 0 : boardsOpen;
      if (down.length && !wasDown) fold.open = true;
      wasDown = down.length > 0;
      const head = add(fold, "summary", "Boards: " + (cards.length - down.length) + " of " + cards.length + " online" +
        (strangers.length ? ", " + strangers.length + " unknown" : ""));
      head.onclick = () => { boardsOpen = !fold.open; };  // the host's click, not a redraw's
      boardCards(add(fold, "div", undefined, "board-cards"), bh);
    }
    if ((bh.fleet || []).length) {
      const fold = add(details, "details", undefined, "fleet-fold");
      fold.open = fleetOpen;
      const tables = new Set(bh.fleet.map((f) => f.table)).size;
      const head = add(fold, "summary", "Fleet: " + bh.fleet.length + " board" + (bh.fleet.length === 1 ? "" : "s") +
        " on " + tables + " table" + (tables === 1 ? "" : "s"));
      head.onclick = () => { fleetOpen = !fold.open; };
      fleetTable(fold, bh.fleet);
    }
    if (boards.length) {
      add(details, "h3", "Boards (last heartbeat)");
      const bl = add(details, "ul", undefined, "small boards");
      boards.forEach((b) => add(bl, "li", b.table + "/" + b.board + ": outbox " + b.outbox + ", dropped " + b.dropped + ", reconnects " + b.reconnects + ", up " + Math.round(b.uptime_ms / 1000) + " s (at " + time(b.at) + ")", b.dropped ? "warn" : ""));
    }
    if ((h.notes || []).length) {
      add(details, "h3", "Bridge notes");
      const nl = add(details, "ol", undefined, "small notes");
      h.notes.slice().reverse().forEach((n) => add(nl, "li", n));
    }
  }

  window.addEventListener("battlement:message", (ev) => {
    const m = ev.detail || {};
    if (m.type === "health" && m.health) render(m.health);
    else if (m.type === "state" && m.bridge && m.bridge.health) render(m.bridge.health);
  });
})();
