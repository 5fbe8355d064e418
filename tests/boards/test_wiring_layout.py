"""Wiring diagrams a builder can read, as Chromium lays them out: no label on top of another, none cut
off at the drawing's edge. Checked on the drawings in docs/ (what a builder opens) and on fresh ones."""

import pathlib

from battlement.boards import wiring

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOARDS = sorted((ROOT / "hardware" / "boards").glob("*.json"))

# Every <text> as Chromium draws it (its box on the page), and the drawing's own box: an inline SVG's
# box is its viewBox scaled, so a label outside it is cut off.
BOXES_JS = r"""
() => {
  const svg = document.querySelector("svg"), v = svg.getBoundingClientRect();
  const texts = Array.from(svg.querySelectorAll("text")).map((t) => {
    const r = t.getBoundingClientRect();
    const lines = Array.from(t.querySelectorAll("tspan")).map((s) => s.textContent);
    return { text: lines.length ? lines.join(" / ") : t.textContent.trim(), x0: r.left, y0: r.top, x1: r.right, y1: r.bottom };
  });
  return { view: { x0: v.left, y0: v.top, x1: v.right, y1: v.bottom }, texts: texts };
}
"""


def problems(page, svg):
    page.set_content("<!doctype html><body style='margin:0'>%s</body>" % svg)
    got = page.evaluate(BOXES_JS)
    view, texts = got["view"], got["texts"]
    bad = []
    for t in texts:
        if t["x0"] < view["x0"] - 0.5 or t["y0"] < view["y0"] - 0.5 or t["x1"] > view["x1"] + 0.5 \
                or t["y1"] > view["y1"] + 0.5:
            bad.append("cut off at the edge: %r" % t["text"])
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            over_x = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
            over_y = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
            if over_x > 0.5 and over_y > 0.5:
                bad.append("%r on top of %r" % (a["text"], b["text"]))
    return len(texts), bad


def test_no_label_covers_another_or_is_cut_off(browser):
    page = browser.new_page()  # one browser for all boards: a launch costs more than a drawing
    unreadable = []
    for path in BOARDS:
        committed = (ROOT / "docs" / "wiring" / (path.stem + ".svg")).read_text()
        for what, svg in (("docs/wiring/%s.svg" % path.stem, committed),
                          ("battlement hardware draw %s" % path.name, wiring.draw(str(path)))):
            count, bad = problems(page, svg)
            assert count > 0, "%s: Chromium found no text in it" % what
            if bad:
                unreadable.append("%s: %d of %d labels unreadable: %s" % (what, len(bad), count, "; ".join(bad[:4])))
    assert not unreadable, "\n".join(unreadable)
