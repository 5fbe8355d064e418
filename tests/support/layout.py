"""Layout facts of a page as Chromium computed them: overflow, the headline's size, the smallest tap
target and text, and the WCAG contrast of every visible text and of the game's coloured pieces."""

# One evaluate() call: the page's CSP forbids eval'd code in the page, but Playwright's evaluate runs
# through the debugger protocol, which the CSP does not see.
FACTS_JS = r"""
() => {
  const W = document.documentElement.clientWidth, H = window.innerHeight;
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
  const rgba = (s) => { const m = s.match(/[\d.]+/g) || [0, 0, 0, 0]; return m.map(Number).concat([1]).slice(0, 4); };
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]); };
  // the colour an element's text sits on: the nearest painted background, blended down to the page's
  function backdrop(e) {
    const layers = [];
    for (let x = e; x; x = x.parentElement) {
      const c = rgba(getComputedStyle(x).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let c = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c);
    return c;
  }
  const shown = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && !e.closest("[hidden], details:not([open]) > :not(summary), .sr-only"); };
  // inside a box that scrolls sideways (a zoomed board): that box holds it, the page does not widen
  const scrolled = (e) => { for (let x = e.parentElement; x && x !== document.body; x = x.parentElement) {
    if (["auto", "scroll"].indexOf(getComputedStyle(x).overflowX) >= 0) return true; } return false; };
  const texts = [], wide = [];
  document.querySelectorAll("body *").forEach((e) => {
    if (!shown(e)) return;
    const r = e.getBoundingClientRect();
    if (r.right > W + 1 && getComputedStyle(e).position !== "fixed" && !scrolled(e)) wide.push(e.tagName + "#" + e.id + "." + e.className + " right " + Math.round(r.right));
    const own = Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || e.closest("svg")) return;
    const s = getComputedStyle(e);
    const fg = over(rgba(s.color), backdrop(e));
    texts.push({ text: e.textContent.trim().slice(0, 40), size: parseFloat(s.fontSize), contrast: ratio(fg, backdrop(e)), tag: e.tagName });
  });
  document.querySelectorAll("svg text").forEach((e) => {
    if (!shown(e)) return;
    const fill = rgba(getComputedStyle(e).fill), under = e.closest("[data-cell]") && e.closest("[data-cell]").querySelector(".piece") ? rgba(getComputedStyle(e.closest("[data-cell]").querySelector(".piece")).fill) : backdrop(e.closest("svg"));
    texts.push({ text: "svg " + e.textContent, size: 99, contrast: ratio(over(fill, under), under), tag: "text" });
  });
  // targets: what a finger presses (buttons, links, inputs, the board's tappable cells), each by its own
  // box: a checkbox's label takes a tap too, but the box is what a finger aims at
  const targets = [];
  document.querySelectorAll("button, a, select, input, summary, [role=button]").forEach((e) => {
    if (!shown(e)) return;
    const r = e.getBoundingClientRect();
    targets.push({ what: (e.getAttribute("aria-label") || e.id || e.textContent || e.tagName).trim().slice(0, 40), w: r.width, h: r.height });
  });
  // meaningful graphics: each game piece against what it stands on
  const graphics = [];
  document.querySelectorAll("[data-cup], [data-tower], .pawn, .figure").forEach((e) => {
    if (!shown(e)) return;
    const own = rgba(getComputedStyle(e).backgroundColor);
    if (own[3] === 0) return;
    graphics.push({ what: e.dataset.cup || e.dataset.tower || e.textContent.trim(), contrast: ratio(over(own, backdrop(e.parentElement)), backdrop(e.parentElement)) });
  });
  document.querySelectorAll("svg .piece").forEach((e) => {
    const under = backdrop(e.closest("svg"));
    graphics.push({ what: "piece " + e.getAttribute("class"), contrast: ratio(rgba(getComputedStyle(e).fill), under) });
  });
  const head = document.getElementById("turn");
  return {
    scrollWidth: document.documentElement.scrollWidth, clientWidth: W, height: document.documentElement.scrollHeight, viewport: H,
    wide: wide, texts: texts, targets: targets, graphics: graphics,
    headline: head && head.textContent ? parseFloat(getComputedStyle(head).fontSize) : null,
    headlineText: head ? head.textContent : "",
  };
}
"""


def facts(page):
    return page.evaluate(FACTS_JS)


def summary(f):
    """One line of figures: what a report or a failing assertion shows."""
    low = min((t["contrast"] for t in f["texts"]), default=None)
    gfx = min((g["contrast"] for g in f["graphics"]), default=None)
    small = min((min(t["w"], t["h"]) for t in f["targets"]), default=None)
    text = min((t["size"] for t in f["texts"]), default=None)
    return ("height %d, headline %s px, smallest target %s px, smallest text %s px, lowest text contrast %s, "
            "lowest graphic contrast %s, overflow %d>%d" % (
                f["height"], f["headline"], None if small is None else round(small), text,
                None if low is None else round(low, 2), None if gfx is None else round(gfx, 2),
                f["scrollWidth"], f["clientWidth"]))
