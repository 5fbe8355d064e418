// Host page: balls a board could not see (an ESP32 held for a moment while a beam broke: "looked away").
// The bridge never plays them; it asks the host here, in words, with one tap to answer: "Yes, a ball"
// plays what the sensor's ball would have (journalled, undoable), "No" dismisses it. Only the host's
// state carries these questions (s.blind), so no other page can show them.
(function () {
  "use strict";
  if (document.body.dataset.role !== "host") return;
  const send = (msg) => window.BATTLEMENT_SEND && window.BATTLEMENT_SEND(msg);
  function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
  const box = el("div", undefined, "blind-questions");
  box.id = "blind-questions";
  box.setAttribute("role", "alert");
  box.hidden = true;
  const controls = document.getElementById("controls");
  if (controls) controls.insertBefore(box, controls.children[1] || null);
  let shown = "";

  function draw(s) {
    const qs = s.blind || [];
    const key = qs.map((q) => q.id).join(",");
    if (key === shown) return;
    shown = key;
    box.replaceChildren();
    box.hidden = !qs.length;
    qs.forEach((q) => {
      const row = box.appendChild(el("div", undefined, "blind-question"));
      row.dataset.id = q.id;
      row.appendChild(el("p", q.ask));
      const yes = row.appendChild(el("button", "Yes, a ball", "blind-yes"));
      const no = row.appendChild(el("button", "No", "blind-no"));
      yes.setAttribute("aria-label", "Yes, a ball in " + q.sensor);
      no.setAttribute("aria-label", "No ball in " + q.sensor);
      yes.onclick = () => { yes.disabled = no.disabled = true; send({ action: "blind", id: q.id, ball: true }); };
      no.onclick = () => { yes.disabled = no.disabled = true; send({ action: "blind", id: q.id, ball: false }); };
    });
  }

  const css = document.createElement("link");  // a file: the pages' CSP takes no inline style
  css.rel = "stylesheet"; css.href = "/static/blind.css";
  document.head.appendChild(css);
  window.addEventListener("battlement:message", (ev) => {
    const m = ev.detail || {};
    if (m.type === "state") draw(m);
  });
})();
