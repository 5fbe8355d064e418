// Host flows beside the page shell (page.js draws the game; this file adds):
//  - host page: "New game" asks first, in the page and away from Undo; every game set aside is listed and
//    any one can be resumed, after asking in words that say what it does; the game can be switched when
//    the table supports it; a sensor changed while paused is said here.
//  - every page: entries an undo took back stay in the log, struck through and marked "undone".
//  - scoreboard: "Speak on this device" reads the public announcements aloud with the browser's
//    speechSynthesis, for a table whose bridge has no speaker. The scoreboard's state carries the
//    public notices only, so no side's secret can reach this voice.
(function () {
  "use strict";
  const body = document.body;
  const role = body.dataset.role;
  const $ = (id) => document.getElementById(id);
  const css = document.createElement("link");
  css.rel = "stylesheet"; css.href = "/static/flow.css";
  document.head.appendChild(css);
  function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  const send = (msg) => window.BATTLEMENT_SEND && window.BATTLEMENT_SEND(msg);
  let last = null;

  // --- undone entries in the log (page.js lists s.notices newest first) -------------------------
  function markUndone(s) {
    const items = $("notices") ? $("notices").children : [];
    const notes = (s.notices || []).slice().reverse();
    if (items.length !== notes.length) return;
    notes.forEach((n, i) => {
      const li = items[i];
      if (!n.undone || li.classList.contains("undone")) return;
      li.classList.add("undone");
      const text = el("s", li.textContent);
      li.replaceChildren(text, el("span", " undone", "undone-word"));
      li.setAttribute("aria-label", li.textContent.replace(/ undone$/, "") + " (undone)");
    });
  }

  // --- the host's game flow ----------------------------------------------------------------------
  function hostFlow() {
    const controls = $("controls");
    const box = el("div", undefined, "game-flow"); box.id = "game-flow";
    box.appendChild(el("h3", "Game"));
    const row = box.appendChild(el("div", undefined, "row"));
    const newButton = $("new");
    const startNew = newButton.onclick;  // page.js's: sends the new game with the form's options
    row.appendChild(newButton);  // out of the row with Undo: a slip of the finger must not end a game
    newButton.textContent = "New game...";
    const switcher = row.appendChild(el("span", undefined, "switch")); switcher.id = "game-switch-box";
    const pick = switcher.appendChild(el("select")); pick.id = "game-switch"; pick.setAttribute("aria-label", "game to play");
    const confirmBox = box.appendChild(el("div", undefined, "confirm")); confirmBox.id = "new-confirm";
    confirmBox.setAttribute("role", "alertdialog"); confirmBox.hidden = true;
    confirmBox.setAttribute("aria-labelledby", "new-question");
    const question = confirmBox.appendChild(el("p")); question.id = "new-question";
    const yes = confirmBox.appendChild(el("button", "Start the new game")); yes.id = "new-yes";
    const no = confirmBox.appendChild(el("button", "Keep playing")); no.id = "new-no";
    const paused = box.appendChild(el("div", "", "paused-note")); paused.id = "paused-note"; paused.setAttribute("role", "status");
    // every game set aside on this table, the latest first: the host picks the one to take up again
    const aside = box.appendChild(el("div", undefined, "set-aside")); aside.id = "set-aside"; aside.hidden = true;
    aside.appendChild(el("h3", "Games set aside"));
    const asideList = aside.appendChild(el("ul"));
    const asideMore = aside.appendChild(el("p", "", "small"));
    controls.insertBefore(box, $("new-options"));
    let pending = null;  // what "yes" does

    function ask(text, go, yesWords) {
      question.textContent = text;
      yes.textContent = yesWords || "Start the new game";
      pending = go;
      confirmBox.hidden = false;
      yes.focus();
    }
    function inProgress() {
      const v = (last && last.view) || {};
      return last && !v.over ? "The game in progress is set aside: it is listed under Games set aside, to resume later." :
        "The game is over.";
    }
    function askNew() {
      const title = last ? last.title : "the game";
      const other = pick.value && last && pick.value !== last.game ? (pick.selectedOptions[0] || {}).textContent : "";
      if (other) {
        ask("Switch this table to " + other + "? " + inProgress(),
          () => send({ action: "new", game: pick.value, options: {} }));
      } else {
        ask("Start a new game of " + title + " with the options below? " + inProgress(), () => startNew());
      }
    }
    newButton.onclick = askNew;
    $("option-form").onsubmit = (e) => { e.preventDefault(); askNew(); };
    yes.onclick = () => { const go = pending; pending = null; confirmBox.hidden = true; if (go) go(); newButton.focus(); };
    no.onclick = () => { pending = null; confirmBox.hidden = true; newButton.focus(); };
    confirmBox.onkeydown = (e) => { if (e.key === "Escape") no.onclick(); };
    pick.onchange = () => { newButton.textContent = pick.value && last && pick.value !== last.game ? "Switch game..." : "New game..."; };
    const at = (t) => new Date(t * 1000).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" });
    const inputs = (n) => n + " input" + (n === 1 ? "" : "s");
    function askResume(g) {
      const which = g.title + " of " + at(g.started) + ", " + inputs(g.inputs);
      const v = (last && last.view) || {};
      ask(last && !v.over ? "Set the game in progress aside and resume " + which + "? It stays under Games set aside." :
        "Resume " + which + "? The game in progress is over.", () => send({ action: "resume", id: g.id }), "Resume this game");
    }
    let asideShown = "";
    function drawAside(s, canSwitch) {
      // a game of another game only where the table can switch to it (a real table plays its one game)
      const games = (s.set_aside || []).filter((g) => g.here || canSwitch);
      const key = JSON.stringify(games) + s.set_aside_more;
      if (key === asideShown) return;  // redrawn only when the list changes: not under the host's finger
      asideShown = key;
      aside.hidden = !games.length;
      asideList.replaceChildren();
      games.forEach((g) => {
        const li = asideList.appendChild(el("li")); li.dataset.id = g.id;
        li.appendChild(el("span", g.title + ", game " + g.id + ": started " + at(g.started) +
          (g.last ? ", last played " + at(g.last) : "") + ", " + inputs(g.inputs) + " "));
        const b = li.appendChild(el("button", "Resume...")); b.onclick = () => askResume(g);
        b.setAttribute("aria-label", "Resume " + g.title + " of " + at(g.started) + ", game " + g.id);
      });
      asideMore.textContent = s.set_aside_more ? "and " + s.set_aside_more + " older: battlement run --list-games " +
        "lists them, and --resume ID takes one up at start." : "";
    }

    let gamesShown = "";
    return function (s) {
      const games = (s.bridge && s.bridge.games) || [];
      const key = JSON.stringify(games) + s.game;
      if (key !== gamesShown) {
        gamesShown = key;
        pick.replaceChildren();
        games.forEach((g) => { const o = el("option", g.title); o.value = g.name; o.selected = g.name === s.game; pick.appendChild(o); });
        pick.onchange();
      }
      switcher.hidden = games.length < 2;
      drawAside(s, games.length > 1);
      const ps = s.paused_sensed;
      paused.textContent = s.paused ? (ps ? "Paused: " + ps.count + " sensor change" + (ps.count === 1 ? "" : "s") +
        " not played (the last at " + ps.object + "). Put the table back as the game has it, then Resume." :
        "Paused: sensors are not played until you press Resume.") : "";
    };
  }

  // --- speech on the scoreboard's own device --------------------------------------------------------
  function scoreboardSpeech() {
    const card = el("section", undefined, "card"); card.id = "device-speech";
    const label = card.appendChild(el("label"));
    const box = label.appendChild(el("input")); box.type = "checkbox"; box.id = "speak-here";
    label.appendChild(document.createTextNode(" Speak the announcements on this device"));
    const note = card.appendChild(el("div", "", "small")); note.id = "speak-note";
    const main = document.querySelector("main");
    main.appendChild(card);  // last: the game comes first on the TV
    const synth = window.speechSynthesis;
    let heard = null;  // the newest announcement id already heard (or skipped when turned on)
    const KEY = "battlement.speakHere";
    try { box.checked = localStorage.getItem(KEY) === "1"; } catch (e) { /* private mode */ }
    function newest(s) { return (s.notices || []).reduce((m, n) => Math.max(m, n.id || 0), 0); }
    box.onchange = () => {
      try { localStorage.setItem(KEY, box.checked ? "1" : "0"); } catch (e) { /* private mode */ }
      heard = last ? newest(last) : null;  // from now on: what was said before is not read out
      if (!box.checked && synth) synth.cancel();
      note.textContent = box.checked ? (synth ? "Announcements are read out here." : "This browser cannot speak.") : "";
    };
    return function (s) {
      const top = newest(s);
      if (heard === null || top < heard) { heard = top; return; }  // first state, or a restarted bridge
      if (!box.checked || !synth) { heard = top; return; }
      (s.notices || []).filter((n) => n.kind === "say" && n.id > heard && !n.undone).forEach((n) => {
        const u = new SpeechSynthesisUtterance(n.text);
        u.lang = document.documentElement.lang || "en";
        synth.speak(u);  // the browser queues them: spoken in order, never over each other
      });
      heard = top;
    };
  }

  // --- "live" only when the table is: the bridge answering is not enough if its boards are gone ------
  function linkStatus(m) {
    const l = m.link, st = $("status");
    if (!l || !l.boards || !st || body.classList.contains("offline")) return;
    const down = l.boards - l.online;
    st.textContent = !down ? "live" : l.online === 0 ?
      "bridge live, but no board of the table is online (" + l.boards + " boards)" :
      "live; " + down + " of " + l.boards + " boards not online" + (l.offline.length ? " (" + l.offline.join(", ") + ")" : "");
    st.classList.toggle("boards-down", down > 0);
  }

  const draw = role === "host" ? hostFlow() : null;
  const speak = role === "public" ? scoreboardSpeech() : null;
  window.addEventListener("battlement:message", (ev) => {
    const m = ev.detail || {};
    if (m.type !== "state") return;
    // the table switched game: this page's board script is the old game's; the new one comes with a reload
    const board = document.querySelector("script[src^='/games/']");
    if (board && m.game && board.getAttribute("src") !== "/games/" + m.game + ".js") { location.reload(); return; }
    last = m;
    linkStatus(m);
    markUndone(m);
    if (draw) draw(m);
    if (speak) speak(m);
  });
})();
