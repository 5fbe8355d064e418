// The venue's pages: the TV (bracket, standings, tables, the queue, the calls spoken aloud), a team's
// phone page, and the common part of the host's page. Each gets its whole state again on every change.
(function () {
  "use strict";
  const role = document.body.dataset.role;
  const params = new URLSearchParams(location.search);
  const $ = (id) => document.getElementById(id);
  const hooks = [];
  let ws = null, tries = 0, spokenUpTo = null;
  window.VENUE = { hooks: hooks, send: (msg) => ws && ws.readyState === 1 && ws.send(JSON.stringify(msg)) };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function toast(text, ok) {
    const t = $("toast");
    t.textContent = text;
    t.className = ok ? "ok" : "";
    t.style.display = text ? "block" : "none";
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.style.display = "none"; }, ok ? 2500 : 6000);
  }
  window.VENUE.toast = toast;

  function connect() {
    const q = new URLSearchParams({ role: role });
    for (const k of ["t", "name", "code"]) if (params.get(k)) q.set(k, params.get(k));
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?" + q);
    ws.onopen = () => { tries = 0; $("status").textContent = "live"; };
    ws.onclose = () => {
      tries += 1;
      $("status").textContent = "the hub is not answering: reconnecting" + (tries > 1 ? " (try " + tries + ")" : "") + "...";
      setTimeout(connect, Math.min(500 * tries, 3000));
    };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === "error") { $("status").textContent = m.message; return; }
      if (m.type === "reply") { toast(m.message || (m.ok ? "done" : "refused"), m.ok); return; }
      if (m.type !== "state") return;
      if (m.error) { $("team-name").textContent = m.error; return; }
      if (role === "team") team(m); else venue(m);
      for (const h of hooks) h(m);
    };
  }

  // --- the TV -----------------------------------------------------------------------------------

  function venue(m) {
    const t = m.tournament;
    const nav = $("tournaments");
    nav.textContent = "";
    if (m.tournaments.length > 1) {
      for (const x of m.tournaments) {
        const a = el("a", t && x.id === t.id ? "current" : "", x.title);
        const q = new URLSearchParams(params);
        q.set("t", x.id);
        a.href = "?" + q;
        nav.appendChild(a);
      }
    }
    $("title").textContent = t ? t.title : "Venue " + m.venue;
    document.title = $("title").textContent;
    const champ = $("champion");
    champ.hidden = !(t && t.champion);
    if (t && t.champion) champ.textContent = t.champion + " win " + t.title + "!";
    bracket(t);
    standings(t);
    tables(m.tables);
    list($("queue"), m.queue, (q) => q.title + " \u2014 " + q.where, "nothing waiting for a table");
    calls(m.announcements);
  }

  function bracket(t) {
    const box = $("bracket");
    box.textContent = "";
    $("bracket-title").textContent = t ? t.title + " \u2014 " + t.format.replace(/_/g, " ") + ", " + t.game +
      " (" + t.played + " played)" : "No tournament yet";
    if (!t) return;
    for (const b of t.brackets) {
      if (t.brackets.length > 1) box.appendChild(el("div", "bracket-name", b.title));
      const row = el("div", "bracket");
      row.dataset.bracket = b.name;
      for (const r of b.rounds) {
        const col = el("div", "round");
        col.appendChild(el("div", "round-title", r.title));
        const ms = el("div", "round-matches");
        for (const mt of r.matches) ms.appendChild(matchBox(mt, t));
        col.appendChild(ms);
        row.appendChild(col);
      }
      box.appendChild(row);
    }
  }

  const STATES = { queued: "waiting for a table", starting: "starting", playing: "playing", held: "held",
                   dropped: "table dropped out: held", waiting: "", bye: "bye", void: "not played", played: "",
                   undecided: "no winner: the host decides" };

  function matchBox(mt, t) {
    const box = el("div", "match " + mt.state);
    box.dataset.match = mt.id;
    mt.teams.forEach((name, i) => {
      const cls = !mt.known[i] ? "unknown" : mt.winner ? (mt.winner === name ? "won" : "lost") : "";
      const slot = el("div", "slot " + cls);
      slot.appendChild(el("span", "team", name));
      if (mt.scores) slot.appendChild(el("span", "score", String(mt.scores[i])));
      box.appendChild(slot);
    });
    const where = mt.table_label ? mt.table_label + (STATES[mt.state] ? " \u00b7 " + STATES[mt.state] : "") : STATES[mt.state];
    box.appendChild(el("div", "foot", mt.id + (where ? " \u00b7 " + where : "") + (mt.corrected ? " \u00b7 corrected" : "")));
    return box;
  }

  function standings(t) {
    const tb = $("standings");
    tb.textContent = "";
    if (!t) return;
    const head = el("tr");
    for (const h of ["#", "Team", "P", "W", "L", "+/-"]) head.appendChild(el("th", h.length < 4 && h !== "Team" ? "num" : "", h));
    tb.appendChild(head);
    for (const s of t.standings) {
      const tr = el("tr", s.out ? "out" : "");
      tr.dataset.team = s.team;
      for (const [v, c] of [[s.rank, "num"], [s.team, ""], [s.played, "num"], [s.wins, "num"], [s.losses, "num"],
                            [(s.diff > 0 ? "+" : "") + s.diff, "num"]]) tr.appendChild(el("td", c, String(v)));
      tb.appendChild(tr);
    }
  }

  function tables(ts) {
    const ul = $("tables");
    ul.textContent = "";
    if (!ts.length) ul.appendChild(el("li", "small", "no table has spoken yet (each bridge runs with --venue)"));
    for (const x of ts) {
      const li = el("li", x.state);
      li.dataset.table = x.table;
      li.appendChild(el("span", "label", x.label));
      li.appendChild(el("span", "words", x.words));
      if (x.title) li.appendChild(el("div", "", x.title));
      li.appendChild(el("div", "small", "boards " + x.boards[0] + "/" + x.boards[1] + (x.state === "dropped" ?
        ", silent " + Math.round(x.silent) + " s" : "")));
      ul.appendChild(li);
    }
  }

  function list(ol, items, text, empty) {
    ol.textContent = "";
    if (!items.length) ol.appendChild(el("li", "small", empty));
    for (const x of items) ol.appendChild(el("li", "", text(x)));
  }

  // The calls, each said once: what was there when the page opened is shown, not said again.
  function calls(as) {
    const ol = $("calls");
    ol.textContent = "";
    for (const a of as.slice().reverse()) ol.appendChild(el("li", "", a.text + (a.why ? " (" + a.why + ")" : "")));
    const top = as.length ? as[as.length - 1].id : 0;
    if (spokenUpTo === null) { spokenUpTo = top; return; }
    for (const a of as) {
      if (a.id > spokenUpTo) say(a.text);
    }
    spokenUpTo = Math.max(spokenUpTo, top);
  }

  function say(text) {
    if (role !== "tv" || !$("speak").checked || !window.speechSynthesis) return;
    const u = new SpeechSynthesisUtterance(text);
    u.onerror = (e) => { $("speech-note").textContent = "the browser would not speak (" + e.error + "): click the page once"; };
    u.onstart = () => { $("speech-note").textContent = ""; };
    window.speechSynthesis.speak(u);
  }

  if (role === "tv") {
    $("speak").checked = localStorage.getItem("venue-speak") !== "off";
    $("speak").onchange = (e) => localStorage.setItem("venue-speak", e.target.checked ? "on" : "off");
  }

  // --- a team's phone ---------------------------------------------------------------------------

  function team(m) {
    $("team-name").textContent = m.team + " \u2014 " + m.tournament.title;
    document.title = m.team;
    $("title").textContent = m.team;
    const champ = $("champion");
    champ.hidden = !m.champion;
    champ.textContent = "Champions of " + m.tournament.title + "!";
    $("team-next").textContent = m.next ? m.next.words : m.words;
    $("team-next").dataset.state = m.next ? m.next.state : "done";
    const r = m.record;
    $("team-record").textContent = "Place " + r.rank + ": " + r.wins + (r.wins === 1 ? " win, " : " wins, ") +
      r.losses + (r.losses === 1 ? " loss" : " losses") + (r.out ? " (out)" : "");
    list($("team-games"), m.games, (g) => (g.won ? "Won " : "Lost ") + g.score + " against " + g.against +
      " (" + g.match + ")", "no game played yet");
    for (const [i, g] of m.games.entries()) $("team-games").children[i].className = g.won ? "won" : "lost";
    $("team-players").textContent = m.players.length ? "Players: " + m.players.join(", ") : "";
  }

  if (document.readyState === "complete") connect(); else window.addEventListener("load", connect);
})();
