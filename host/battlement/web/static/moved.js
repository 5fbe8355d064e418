// A side page whose code is not its side's any more: the host switched the table to another game, started
// a new one or resumed an earlier one. The bridge then sends this page "moved" (never the view of a game
// its code does not open): which game the table plays now and the names of its sides, never their codes,
// which the host hands out. The page says so, in place of the game, and keeps listening: when the host
// takes this page's own game up again, its state comes back and the page is that game's again by itself.
(function () {
  "use strict";
  const body = document.body;
  if (body.dataset.role !== "side") return;
  const css = document.createElement("link");
  css.rel = "stylesheet"; css.href = "/static/moved.css";
  document.head.appendChild(css);
  const B = window.Battlement;  // page.js's helpers: the names of sides and players as every page says them
  const el = B.el, cap = B.cap;
  const card = el("section"); card.id = "moved"; card.className = "card"; card.hidden = true;
  card.setAttribute("role", "status");
  const main = document.querySelector("main");
  main.insertBefore(card, main.firstChild);
  const title = document.title;
  const at = (t) => new Date(t * 1000).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" });

  function show(m) {
    const now = m.now || {}, mine = m.mine || {};
    const headline = now.game === mine.game ? "This table now plays another game of " + now.title :
      "This table now plays " + now.title;
    document.getElementById("title").textContent = headline;
    document.title = headline;
    const sides = (now.sides || []).map((s) => B.who(s, { players: now.players }));
    card.replaceChildren(
      el("h2", cap(m.side) + "'s page waits for its game"),
      el("p", "This page was " + cap(m.side) + "'s, in the game of " + mine.title + " started " + at(mine.started) +
        " (game " + mine.id + "), " + (mine.set_aside ? "which is set aside: if the host resumes it, this page comes " +
        "back by itself." : "which is over.")),
      el("p", sides.length ? "The sides now: " + B.and(sides) + ". To play, ask the host for your new page: the host " +
        "page has a link and a QR code for each side." : "Nobody has a private page in this game: follow it on the scoreboard."));
    const link = card.appendChild(el("p")).appendChild(el("a", "The scoreboard"));
    link.href = "/?table=" + encodeURIComponent(body.dataset.table);
    card.hidden = false;
    body.classList.add("moved");
  }

  (window.BATTLEMENT_HOOKS = window.BATTLEMENT_HOOKS || []).push((m) => {
    if (m.type === "moved") show(m);
    else if (m.type === "state" && body.classList.contains("moved")) {  // its game is back
      body.classList.remove("moved");
      card.hidden = true;
      document.title = title;
    }
  });
})();
