// One script for the three pages; the role decides what is shown and which actions exist.
// The server decides what each role may see: this script only renders what it is sent.
(function () {
  "use strict";
  const body = document.body;
  const role = body.dataset.role, table = body.dataset.table, side = body.dataset.side;
  const code = new URLSearchParams(location.search).get("code") || "";
  const $ = (id) => document.getElementById(id);
  let ws = null, last = null;

  function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  function label(inp) {
    return Object.keys(inp).filter((k) => k !== "t" && k !== "by").sort()
      .map((k) => (k === "occupied" ? (inp[k] ? "on" : "off") : String(inp[k]))).join(" ").trim();
  }
  function toast(text) { const t = $("toast"); t.textContent = text; t.style.display = "block"; setTimeout(() => { t.style.display = "none"; }, 4000); }
  function send(msg) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(msg)); }

  function connect() {
    const q = new URLSearchParams({ role: role, table: table, side: side, code: code });
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?" + q);
    ws.onopen = () => { $("status").textContent = "live"; };
    ws.onclose = () => { $("status").textContent = "reconnecting..."; setTimeout(connect, 1000); };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === "error") { $("status").textContent = m.message; ws.onclose = null; return; }
      if (m.type === "reply") { if (!m.ok) toast(m.message); return; }
      if (m.type === "state") { last = m; render(m); }
    };
  }

  function kv(obj) {
    const t = el("table"); t.className = "kv";
    Object.keys(obj).sort().forEach((k) => {
      const v = obj[k];
      if (k === "picture" || k === "log") return;
      const tr = el("tr"); tr.appendChild(el("td", k));
      const td = el("td");
      if (v && typeof v === "object") td.appendChild(Array.isArray(v) && v.every((x) => typeof x !== "object") ? el("span", v.join(", ")) : kv(v));
      else td.textContent = String(v);
      tr.appendChild(td); t.appendChild(tr);
    });
    return t;
  }

  function render(s) {
    const v = s.view || {};
    $("title").textContent = s.title + (role === "side" ? " - " + side : "") + (s.paused ? " (paused)" : "");
    $("turn").textContent = v.over ? (v.winner ? v.winner + " won!" : "Game over") :
      ((v.awaiting || []).length ? "Waiting for " + v.awaiting.join(" and ") : "");
    const sum = $("summary"); sum.replaceChildren();
    ["turn", "turns", "attackers", "defenders", "castle", "crowns_to_win", "phase", "round"].forEach((k) => {
      if (v[k] !== undefined) sum.appendChild(el("div", k + ": " + v[k]));
    });
    if (v.sides) Object.keys(v.sides).sort().forEach((k) => {
      const sv = v.sides[k];
      if (sv && sv.crowns_captured !== undefined) sum.appendChild(el("div", k + " crowns captured: " + sv.crowns_captured));
    });
    $("picture").textContent = Array.isArray(v.picture) ? v.picture.join("\n") : (v.picture || "");
    renderTowers(v);
    $("view").replaceChildren(kv(v));
    const notes = $("notices"); notes.replaceChildren();
    (s.notices || []).slice().reverse().forEach((n) => notes.appendChild(el("li", n.text, n.kind)));
    const pl = $("prompt-list"); pl.replaceChildren();
    (s.prompts || []).forEach((p) => pl.appendChild(el("p", (p.to ? p.to + ": " : "") + p.ask)));
    (s.decisions || []).forEach((inp) => {
      const b = el("button", inp.t + " " + label(inp));
      b.onclick = () => send({ action: "input", input: inp });
      pl.appendChild(b);
    });
    if (role === "side") {
      const pv = $("private-list"); pv.replaceChildren();
      (s.private || []).forEach((t) => pv.appendChild(el("li", t)));
    }
    if (role === "host") renderHost(s);
  }

  // Medieval Pong kingdoms and PlingPong trays as small grids: a glance tells the state of the table.
  function renderTowers(v) {
    let box = $("grids");
    if (!box) { box = el("div"); box.id = "grids"; $("board").insertBefore(box, $("picture")); }
    box.replaceChildren();
    const sides = v.sides || {};
    Object.keys(sides).sort().forEach((side) => {
      const towers = sides[side].towers;
      if (!towers) return;
      const g = el("div", undefined, "grid"); g.appendChild(el("div", side, "grid-title"));
      const rows = {};
      Object.keys(towers).sort().forEach((t) => { (rows[t[0]] = rows[t[0]] || []).push(t); });
      Object.keys(rows).sort().forEach((r) => {
        const row = el("div", undefined, "grid-row");
        rows[r].forEach((t) => {
          const tv = towers[t];
          const down = tv.was !== undefined || tv.status === "box";
          const c = el("span", t + (tv.character ? " " + tv.character : "") + (tv.crown ? " \u265b" : ""),
            "tower " + side + (down ? " down" : ""));
          c.dataset.tower = side + "." + t; row.appendChild(c);
        });
        g.appendChild(row);
      });
      box.appendChild(g);
    });
    const trays = v.trays || {};
    Object.keys(trays).sort().forEach((tray) => {
      const g = el("div", undefined, "grid"); g.appendChild(el("div", tray, "grid-title"));
      const row = el("div", undefined, "grid-row");
      trays[tray].forEach((sp) => row.appendChild(el("span", sp.cup.split(".")[1] + (sp.balls ? " (" + sp.balls + ")" : ""),
        "tower " + (sp.height ? sp.colour : "down"))));
      g.appendChild(row); box.appendChild(g);
    });
  }

  function renderHost(s) {
    const codes = $("codes"); codes.replaceChildren();
    Object.keys(s.codes || {}).sort().forEach((k) => {
      const a = el("a", k + " private page (code " + s.codes[k] + ")");
      a.href = "/side/" + encodeURIComponent(k) + "?table=" + encodeURIComponent(table) + "&code=" + s.codes[k];
      a.target = "_blank"; a.className = "code"; a.dataset.side = k; a.dataset.code = s.codes[k];
      codes.appendChild(el("div")).appendChild(a);
    });
    const simulated = s.bridge && s.bridge.simulated;
    $("simnote").textContent = simulated ? "(simulated boards: each button is a sensor)" : "(enter what a sensor missed)";
    const sens = $("sensors"); sens.replaceChildren();
    (s.sensed || []).forEach((inp) => {
      const b = el("button", inp.t + " " + label(inp), "sense");
      b.onclick = () => send({ action: simulated ? "sense" : "input", input: inp });
      sens.appendChild(b);
    });
    const c = Object.assign({}, s.counters || {}, (s.bridge || {}).counters || {});
    $("counters").textContent = Object.keys(c).sort().map((k) => k + " " + c[k]).join(" | ");
    $("pause").textContent = s.paused ? "Resume" : "Pause";
  }

  if (role === "host") {
    $("miss").onclick = () => send({ action: "miss" });
    $("undo").onclick = () => send({ action: "undo" });
    $("pause").onclick = () => send({ action: "pause", paused: !(last && last.paused) });
    $("new").onclick = () => {
      let options = {};
      const text = $("options").value.trim();
      if (text) { try { options = JSON.parse(text); } catch (e) { toast("options must be JSON, e.g. {\"sets\": 2}"); return; } }
      send({ action: "new", options: options });
    };
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
