"""Pictures that read: what the table pictures draw says what the rules say, and a finger can hit what
it means to. A Medieval Pong crown that lost its Princess is drawn exposed in a standing tower, never
as a fallen tower; Ringo's 41 cells each take a 44 px tap on a 390 px phone without overlapping.
These tests also make the pictures of docs/playing.md (docs/images/)."""

import math
import re

from playwright.sync_api import expect
from support.bridgeproc import Ws

TV, PHONE = {"width": 1920, "height": 1080}, {"width": 390, "height": 844}
TARGET = 44  # px: a finger's target on a phone


def set_up(b, side, code, where):
    """A side's secret set-up through its own page's websocket: the characters in `where` on their
    towers, the others anywhere else (its page offers one character at a time), then ready."""
    ws = Ws(b.url, role="side", side=side, code=code)
    for _ in range(30):
        mine = [i for i in ws.state()["decisions"] if i.get("by") == side]
        ready = [i for i in mine if i["t"] == "ready"]
        if ready:
            assert ws.act(action="input", input=ready[0])["ok"]
            return
        places = [i for i in mine if i["t"] == "place"]
        want = [i for i in places if where.get(i["character"]) == i["tower"]]
        elsewhere = [i for i in places if i["tower"] not in where.values()]
        assert ws.act(action="input", input=(want or elsewhere)[0])["ok"]
    raise AssertionError("set-up never offered 'ready'")


def stat(scope, name):
    return scope.locator('.stat:has(> .stat-name:text-is("%s")) > .stat-value' % name).first


LOOK = """(e) => { const s = getComputedStyle(e);
  return { decoration: s.textDecorationLine, border: s.borderTopStyle, background: s.backgroundColor }; }"""


def test_an_exposed_crown_stands_in_its_tower_and_is_drawn_exposed_not_fallen(bridge_process, browser, docs_shot):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    host = Ws(b.url, role="host", code=b.host_code)
    codes = host.state()["codes"]
    for side in ("blue", "red"):
        set_up(b, side, codes[side], {"princess": "A1", "king": "A2"})
    page = browser.new_page(viewport=TV)
    page.goto(b.url + "/")
    expect(page.locator("#turn")).to_have_text("Waiting for Red")
    # red's ball into blue's A1: the Princess is discarded and her crown is exposed; the tower stands
    assert host.act(action="sense", input={"t": "ball", "side": "blue", "tower": "A1"})["ok"]
    # fire at will: red's next ball into a blue tower of a plain character, which falls
    blue = Ws(b.url, role="side", side="blue", code=codes["blue"]).state()["view"]["sides"]["blue"]["towers"]
    falls = next(t for t, tv in sorted(blue.items()) if tv["character"] not in (None, "princess", "king", "dragon"))
    assert host.act(action="sense", input={"t": "ball", "side": "blue", "tower": falls})["ok"]
    fallen = page.locator('[data-tower="blue.%s"]' % falls)
    expect(fallen).to_have_attribute("data-state", "down")

    exposed = page.locator('[data-tower="blue.A1"]')
    expect(exposed).to_have_attribute("data-state", "exposed")
    expect(exposed).to_have_attribute("title", re.compile(r"standing, crown exposed"))
    assert "\u265b" in exposed.inner_text()
    # drawn as what it is: a standing tower in its kingdom's colour, not an outline struck through
    look, down = exposed.evaluate(LOOK), fallen.evaluate(LOOK)
    assert look["decoration"] != "line-through" and look["border"] != "dashed", look
    assert down["decoration"] == "line-through" and down["border"] == "dashed", down
    assert look["background"] != down["background"], (look, down)
    # the picture agrees with the score: as many towers drawn standing as the kingdom counts
    card = page.locator('.army[data-side="blue"]')
    expect(stat(card, "towers standing")).to_have_text("8 of 9")
    drawn = page.locator('[data-tower^="blue."]:not([data-state="down"])')
    expect(drawn).to_have_count(8)
    expect(stat(card, "crown exposed")).to_have_text("A1")
    expect(page.locator("#legend")).to_contain_text("a crown exposed")
    expect(page.locator("#legend")).to_contain_text("a fallen tower")
    docs_shot(page, "scoreboard-tv", width=960)


# Each cell's hit area (a Ringo cell is a circle, the castle too): its centre, size, and what a tap
# at its centre lands on once the cell is scrolled into view.
HITS = """() => Array.from(document.querySelectorAll("svg.ring [data-cell]")).map((g) => {
  const hit = g.querySelector(".hit-area") || g.querySelector(".castle");
  hit.scrollIntoView({ block: "center", inline: "center" });
  const r = hit.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
  const at = document.elementFromPoint(x, y), under = at && at.closest("[data-cell]");
  return { cell: g.dataset.cell, x: x + scrollX + g.closest("svg").parentElement.scrollLeft, y: y + scrollY,
           w: r.width, h: r.height, tapped: under ? under.dataset.cell : null };
})"""


def hit_areas(page):
    """Every cell's hit area: 44 px or more, none overlapping another, a tap at its centre on that cell."""
    hits = page.evaluate(HITS)
    assert len(hits) == 41
    small = [h for h in hits if min(h["w"], h["h"]) < TARGET - 0.1]
    assert not small, ("cells under %d px" % TARGET, small[:5])
    wrong = [h for h in hits if h["tapped"] != h["cell"]]
    assert not wrong, ("a tap at the centre lands elsewhere", wrong[:5])
    overlaps = [(a["cell"], b["cell"]) for i, a in enumerate(hits) for b in hits[i + 1:]
                if math.dist((a["x"], a["y"]), (b["x"], b["y"])) < (a["w"] + b["w"]) / 2 - 0.1]
    assert not overlaps, ("hit areas overlap", overlaps[:5])


def tap_centre(page, g):
    """A finger on the centre of a cell's hit area."""
    g.scroll_into_view_if_needed()
    r = g.locator(".hit-area").bounding_box()
    page.touchscreen.tap(r["x"] + r["width"] / 2, r["y"] + r["height"] / 2)


def top_to(page, selector):
    """The whole page's width from its top to the bottom of an element: the part a doc shows."""
    r = page.evaluate("(s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.bottom + scrollY, innerWidth]; }", selector)
    return {"x": 0, "y": 0, "width": r[1], "height": r[0]}


def test_every_ringo_cell_takes_a_44_px_tap_on_a_phone(bridge_process, browser, docs_shot):
    b = bridge_process("--simulate", "--game", "ringo")
    codes = Ws(b.url, role="host", code=b.host_code).state()["codes"]
    ctx = browser.new_context(viewport=PHONE, has_touch=True)
    att = ctx.new_page()
    att.goto("%s/side/attackers?code=%s" % (b.url, codes["attackers"]))
    expect(att.locator("svg.ring g.movable")).to_have_count(7)
    hit_areas(att)
    # a tap on the centre of each piece's hit area picks that piece up, a second puts it back
    for cell in [g.get_attribute("data-cell") for g in att.locator("svg.ring g.movable").all()]:
        g = att.locator('svg.ring [data-cell="%s"]' % cell)
        tap_centre(att, g)
        expect(g).to_have_class(re.compile(r"\bpicked\b"))
        tap_centre(att, g)
        expect(g).to_have_class(re.compile(r"\bmovable\b"))
    tap_centre(att, att.locator('svg.ring [data-cell="b5"]'))
    expect(att.locator("svg.ring g.dest")).not_to_have_count(0)
    # the board shows the piece picked up and where it may go without a swipe
    box = att.locator("svg.ring").locator("xpath=..").bounding_box()
    for g in [att.locator("svg.ring g.picked")] + att.locator("svg.ring g.dest").all():
        r = g.locator(".hit-area").bounding_box()
        assert box["x"] - 0.5 <= r["x"] and r["x"] + r["width"] <= box["x"] + box["width"] + 0.5, (g.get_attribute("data-cell"), r, box)
    docs_shot(att, "side-phone", clip=top_to(att, "#board"))
    hit_areas(att)  # (it scrolls the board to each cell)
    tap_centre(att, att.locator('svg.ring [data-cell="b4"]'))
    expect(att.locator('svg.ring [data-cell="b4"]')).to_have_attribute("data-piece", "attackers")
    # while the other side moves, the whole board fits the phone: nothing to tap, nothing to swipe
    expect(att.locator("#turn")).to_have_text("Waiting for Defenders")
    expect(att.locator("svg.ring g[role=button]")).to_have_count(0)
    assert att.locator("svg.ring").bounding_box()["width"] <= PHONE["width"]
    ctx.close()
