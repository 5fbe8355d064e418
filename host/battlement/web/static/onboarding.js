// The host page's "phones and the TV" card: this bridge's LAN addresses and a QR code for each page,
// so players scan their side's page and the TV opens the scoreboard. Host page only: it names the codes.
(function () {
  "use strict";
  const body = document.body;
  if (body.dataset.role !== "host") return;
  const code = new URLSearchParams(location.search).get("code") || "";
  const card = document.createElement("section");
  card.id = "onboarding";
  card.className = "card";
  card.innerHTML = '<h2>Phones and the TV</h2><div id="addresses" class="small"></div><div id="qr-codes" class="qr-codes"></div>';
  const controls = document.getElementById("controls");
  controls.parentNode.insertBefore(card, controls.nextSibling);
  let shown = "";

  function load() {
    fetch("/api/onboarding?code=" + encodeURIComponent(code)).then((r) => r.json()).then((info) => {
      const key = JSON.stringify(info);
      if (key === shown || info.error) return;
      shown = key;
      const where = document.getElementById("addresses");
      where.textContent = "Put the scoreboard on the TV and scan the codes. This bridge: " +
        (info.addresses || []).join(", ") + (info.mdns ? " | battlement.local: " + info.mdns : "") +
        (info.hint ? " | " + info.hint : "");
      const list = document.getElementById("qr-codes");
      list.replaceChildren();
      (info.pages || []).filter((p) => p.table === body.dataset.table).forEach((p) => {
        const fig = document.createElement("figure");
        fig.className = "qr";
        fig.dataset.page = p.page;
        fig.innerHTML = p.qr;  // segno's SVG, made by the bridge from the address below
        const cap = document.createElement("figcaption");
        const a = document.createElement("a");
        a.href = p.url; a.textContent = p.page.charAt(0).toUpperCase() + p.page.slice(1);
        cap.appendChild(a);
        cap.appendChild(document.createElement("br"));
        cap.appendChild(document.createTextNode(p.url));
        fig.appendChild(cap);
        list.appendChild(fig);
      });
    }).catch(() => { shown = ""; });
  }
  // a new game makes new side codes: look again when the page's state says the codes changed
  let codes = "";
  (window.BATTLEMENT_HOOKS = window.BATTLEMENT_HOOKS || []).push((m) => {
    if (m.type !== "state") return;
    const now = JSON.stringify(m.codes || {});
    if (now !== codes) { codes = now; load(); }
  });
})();
