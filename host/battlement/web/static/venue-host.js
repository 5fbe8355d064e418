// The venue host's page: teams and players, a new tournament, a correction, a held match moved, and the
// QR code of every team's page. The forms are made once; each state only refreshes what they list.
(function () {
  "use strict";
  if (document.body.dataset.role !== "host") return;
  const V = window.VENUE;
  const card = document.getElementById("host-card");
  card.innerHTML =
    '<h2>Host</h2><div class="forms">' +
    '<form id="team-form"><h3>Teams and players</h3>' +
    '<label>Team <input type="text" id="team-name-in" name="team" placeholder="Knights"></label>' +
    '<button type="submit">Add team</button></form>' +
    '<form id="player-form"><h3>A player</h3>' +
    '<label>Name <input type="text" id="player-name" placeholder="Ann"></label>' +
    '<label>Team <input type="text" id="player-team" list="team-list" placeholder="(none)"></label>' +
    '<datalist id="team-list"></datalist><button type="submit">Add player</button>' +
    '<div id="roster" class="small"></div></form>' +
    '<form id="tournament-form"><h3>New tournament</h3>' +
    '<label>Title <input type="text" id="t-title" placeholder="Friday Cup"></label>' +
    '<label>Game <select id="t-game"></select></label>' +
    '<label>Format <select id="t-format"><option value="single_elimination">single elimination</option>' +
    '<option value="double_elimination">double elimination</option><option value="round_robin">round robin</option>' +
    '</select></label>' +
    '<label>Seeding <select id="t-seeding"><option value="order">in the order given</option>' +
    '<option value="random">at random</option><option value="round_robin">by a round robin first</option></select></label>' +
    '<label>Round robin passes <input type="number" id="t-rounds" min="1" value="1"></label>' +
    '<label>Teams, one a line <textarea id="t-teams" rows="6"></textarea></label>' +
    '<label>Or a blind draw: players, one pool a line (best first), commas between <textarea id="t-pools" rows="3" ' +
    'placeholder="Ann, Bo, Cy, Di&#10;Ed, Flo, Gus, Hal"></textarea></label>' +
    '<label>Seed (blank: drawn now) <input type="number" id="t-seed" min="0"></label>' +
    '<label>Tables (blank: every table; or ids, commas between) <input type="text" id="t-tables"></label>' +
    '<button type="submit" id="t-create">Create tournament</button></form>' +
    '<form id="correct-form"><h3>Correct a result</h3>' +
    '<label>Match <select id="c-match"></select></label>' +
    '<label>Winner <select id="c-winner"></select></label>' +
    '<label><span id="c-scores-label">Scores</span> <input type="text" id="c-scores" placeholder="3-1 (blank: as refereed)"></label>' +
    '<label>Why <input type="text" id="c-why" placeholder="the castle sensor saw a hand"></label>' +
    '<button type="submit">Correct</button></form>' +
    '</div>' +
    '<h3>Held matches</h3><ul id="held" class="small"></ul>' +
    '<h3>Pages</h3><div id="links" class="qrs"></div>' +
    '<h3>Notes</h3><ol id="notes" class="notes small" reversed></ol>';
  const $ = (id) => document.getElementById(id);
  let matches = {};
  let gamesDone = false;

  const lines = (text) => text.split("\n").map((s) => s.trim()).filter(Boolean);
  $("team-form").onsubmit = (e) => { e.preventDefault(); V.send({ action: "team", name: $("team-name-in").value.trim() }); };
  $("player-form").onsubmit = (e) => {
    e.preventDefault();
    V.send({ action: "player", name: $("player-name").value.trim(), team: $("player-team").value.trim() || null });
  };
  $("tournament-form").onsubmit = (e) => {
    e.preventDefault();
    const pools = lines($("t-pools").value).map((l) => l.split(",").map((s) => s.trim()).filter(Boolean));
    const form = { title: $("t-title").value.trim(), game: $("t-game").value, format: $("t-format").value,
                   seeding: $("t-seeding").value, rounds: parseInt($("t-rounds").value || "1", 10) };
    if ($("t-format").value === "round_robin") delete form.seeding;
    else if ($("t-seeding").value !== "round_robin") delete form.rounds;
    if (pools.length) form.pools = pools; else form.teams = lines($("t-teams").value);
    if ($("t-seed").value !== "") form.seed = parseInt($("t-seed").value, 10);
    const tables = $("t-tables").value.split(",").map((s) => s.trim()).filter(Boolean);
    if (tables.length) form.tables = tables;
    V.send({ action: "tournament", form: form });
  };
  $("c-match").onchange = () => winners();
  $("correct-form").onsubmit = (e) => {
    e.preventDefault();
    const m = matches[$("c-match").value];
    const msg = { action: "correct", match: $("c-match").value, winner: $("c-winner").value, why: $("c-why").value };
    const s = $("c-scores").value.match(/^\s*(-?[\d.]+)\s*[-:]\s*(-?[\d.]+)\s*$/);
    if (s && m) msg.scores = { [m.teams[0]]: parseFloat(s[1]), [m.teams[1]]: parseFloat(s[2]) };
    V.send(msg);
  };

  function winners() {
    const m = matches[$("c-match").value];
    const sel = $("c-winner");
    const was = sel.value;
    sel.textContent = "";
    for (const t of m ? m.teams : []) sel.appendChild(new Option(t, t, false, t === was));
    $("c-scores-label").textContent = m ? "Scores, " + m.teams.join(" - ") : "Scores";
  }

  function fill(sel, values, keep) {
    const was = sel.value;
    sel.textContent = "";
    for (const [v, label] of values) sel.appendChild(new Option(label, v, false, v === was));
    if (keep && !was && values.length) sel.value = values[values.length - 1][0];
  }

  V.hooks.push((m) => {
    if (!gamesDone) {
      fill($("t-game"), m.games.map((g) => [g, g]));
      $("t-game").value = m.games[0];
      gamesDone = true;
    }
    if (!$("t-teams").value && document.activeElement !== $("t-teams")) $("t-teams").value = m.teams.join("\n");
    $("team-list").textContent = "";
    for (const t of m.teams) $("team-list").appendChild(new Option(t));
    $("roster").textContent = m.players.length ? "Players: " + m.players.map((p) => p.name + (p.team ? " (" + p.team + ")" : "")).join(", ") : "";
    // the matches the host may correct: played, or on a table
    matches = {};
    const t = m.tournament;
    const choices = [];
    for (const b of t ? t.brackets : []) for (const r of b.rounds) for (const x of r.matches) {
      if (x.state === "played" || (x.table && x.known[0] && x.known[1])) {
        matches[x.match] = x;
        choices.push([x.match, x.id + ": " + x.teams.join(" v ") + (x.winner ? " (" + x.winner + " won)" : " (" + x.state + ")")]);
      }
    }
    if (document.activeElement !== $("c-match")) fill($("c-match"), choices, true);
    if (document.activeElement !== $("c-winner")) winners();
    const held = $("held");
    held.textContent = "";
    for (const x of m.tables.filter((x) => x.state === "dropped" && x.match)) {
      const li = document.createElement("li");
      li.textContent = x.label + " dropped out: " + x.match + " (" + x.title + ") is held until it is back. ";
      const b = document.createElement("button");
      b.textContent = "Move it to a free table";
      b.onclick = () => V.send({ action: "move", match: x.match });
      li.appendChild(b);
      held.appendChild(li);
    }
    if (!held.children.length) {
      const li = document.createElement("li");
      li.textContent = "none: every table is answering";
      held.appendChild(li);
    }
    links(m.links);
    const notes = $("notes");
    notes.textContent = "";
    for (const n of m.notes.slice().reverse()) { const li = document.createElement("li"); li.textContent = n; notes.appendChild(li); }
  });

  let linksShown = "";
  function links(l) {
    const key = JSON.stringify(l.teams.map((x) => x.url)) + l.tv;
    if (key === linksShown) return;  // the QR codes are redrawn only when they change
    linksShown = key;
    const box = $("links");
    box.textContent = "";
    const one = (label, url, qr) => {
      const d = document.createElement("div");
      d.className = "qr";
      d.innerHTML = qr;
      const a = document.createElement("a");
      a.href = url;
      a.textContent = label;
      d.appendChild(a);
      box.appendChild(d);
    };
    one("the TV page", l.tv, l.tv_qr);
    for (const x of l.teams) one(x.team, x.url, x.qr);
  }
})();
