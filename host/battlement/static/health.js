// The bridge's health on the host page: its tasks in words, every counter by reason, the last
// rejected frames with their reason, and each board's heartbeat (outbox, dropped events).
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

  const section = el("section", undefined, "card");
  section.id = "health";
  add(section, "h2", "Bridge health");
  const summary = add(section, "div", "", "health-summary");
  summary.id = "health-summary";
  const details = add(section, "div");
  const main = document.querySelector("main");
  const log = document.getElementById("log");
  if (main) main.insertBefore(section, log || null);

  function render(h) {
    const tasks = h.tasks || [];
    const troubled = tasks.filter((t) => t.restarts || t.state !== "running");
    const boards = h.boards || [];
    const dropped = boards.filter((b) => b.dropped);
    const words = [];
    words.push(troubled.length ? troubled.map((t) => t.words).join("; ") : "All " + tasks.length + " tasks running.");
    if (dropped.length) words.push(dropped.map((b) => "board " + b.board + " dropped " + b.dropped + " event" + (b.dropped === 1 ? "" : "s") + " (its outbox overflowed)").join("; "));
    summary.textContent = words.join(" ");
    summary.className = "health-summary" + (troubled.length || dropped.length ? " warn" : "");

    details.replaceChildren();
    add(details, "h3", "Tasks");
    const tl = add(details, "ul", undefined, "small tasks");
    tasks.forEach((t) => add(tl, "li", t.words, t.restarts ? "warn" : ""));
    add(details, "h3", "Bridge counters");
    add(details, "div", counts(h.counters), "small counters-bridge");
    add(details, "div", "web: " + counts(h.web), "small counters-web");
    (h.transports || []).forEach((t) => {
      add(details, "h3", "Transport " + t.name);
      add(details, "div", "accepted " + ((t.counters || {}).accepted || 0) + "; rejected and noted: " + counts(Object.assign({}, t.counters, { accepted: 0 })), "small transport-counters");
      add(details, "div", "links: " + (Object.keys(t.links || {}).map((k) => k + " " + t.links[k]).join(", ") || "none"), "small");
      if ((t.rejected || []).length) {
        const rl = add(details, "ol", undefined, "small rejected");
        t.rejected.slice().reverse().forEach((r) => add(rl, "li", time(r.at) + " [" + r.reason + "] " + r.text));
      }
    });
    Object.keys(h.router || {}).sort().forEach((table) => {
      add(details, "div", "router " + table + ": " + counts(h.router[table]), "small router-counters");
    });
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
