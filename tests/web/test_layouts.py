"""The pages at a phone's 390x844, a laptop's 1280x800 and a TV's 1920x1080, in Chromium: nothing
overflows sideways, the headline is big enough for the distance the page is read from, a phone's
targets (a Ringo cell too) are 44 px and its text 16 px or more, also with every folded card open,
every text has 4.5:1 contrast and every piece 3:1, the side page opens on what to do now, the host
page is not a long scroll on a phone. Each page is saved as a screenshot in test-artifacts/web/.
Then what the layouts are for: Ringo played by tapping, the live region, and the words each game
puts on the page."""

import random
import re
import time

import pytest
from playwright.sync_api import expect
from support.bridgeproc import Ws
from support.layout import facts, summary

SIZES = {"phone": (390, 844), "laptop": (1280, 800), "tv": (1920, 1080)}
HEADLINE = {"phone": 24, "laptop": 32, "tv": 48}  # px: the headline ("Waiting for Red", "Red won!")
PHONE_HOST_MAX = 2000  # px: the host page on a phone (it was 2,561 to 3,197 px before its cards folded)
TIMEOUT_WORDS = {"plingpong": "Missed every cup"}
TARGET = 44  # px: every target on a phone, a Ringo cell too (the board zooms while a side may move)
# Every folded card and closed <details> of a page, opened: what is folded on a phone is a tap away and
# must pass too (the host's speech card, and so its mute box, was only ever measured folded).
UNFOLD = """() => { document.querySelectorAll(".card.folded h2 > button.fold").forEach((b) => b.click());
                      document.querySelectorAll("details:not([open])").forEach((d) => { d.open = true; }); }"""


def side_of(b):
    codes = Ws(b.url, role="host", code=b.host_code).state()["codes"]
    side = min(codes)
    return codes, "/side/%s?code=%s" % (side, codes[side])


def check(page, size, what):
    f = facts(page)
    line = "%s at %s: %s" % (what, size, summary(f))
    assert f["scrollWidth"] <= f["clientWidth"], line
    assert not f["wide"], (line, f["wide"][:5])
    assert f["headline"] is not None and f["headline"] >= HEADLINE[size], line
    low = [t for t in f["texts"] if t["contrast"] < 4.5]
    assert not low, (line, low[:5])
    faint = [g for g in f["graphics"] if g["contrast"] < 3]
    assert not faint, (line, faint[:5])
    if size == "phone":
        small = [t for t in f["targets"] if min(t["w"], t["h"]) < TARGET - 0.5]
        assert not small, (line, small[:5])
        tiny = [t for t in f["texts"] if t["size"] < 16]
        assert not tiny, (line, tiny[:5])
    return f


@pytest.mark.parametrize("game", ["medieval-pong", "plingpong", "ringo"])
def test_layouts_at_three_sizes(bridge_process, browser, shots, docs_shot, game):
    b = bridge_process("--simulate", "--game", game)
    _, side = side_of(b)
    for size, (w, h) in SIZES.items():
        ctx = browser.new_context(viewport={"width": w, "height": h})
        page = ctx.new_page()  # one page per size, going from page to page: a new one costs a renderer
        for what, path in (("scoreboard", "/"), ("host", "/host?code=" + b.host_code), ("side", side)):
            page.goto(b.url + path)
            page.wait_for_selector("#turn:not(:empty)")
            f = check(page, size, "%s %s" % (game, what))
            if what == "host" and size == "laptop":
                # the timeout button says what it enters; none in Ringo (nobody throws, nothing is missed),
                # nor while Medieval Pong's kingdoms are still being set up
                if game not in TIMEOUT_WORDS:
                    expect(page.locator("#miss")).to_be_hidden()
                else:
                    expect(page.locator("#miss")).to_have_text(TIMEOUT_WORDS[game])
            if size == "tv" and what == "scoreboard":
                assert f["height"] <= h, "the TV's scoreboard scrolls: " + summary(f)  # all of it at a glance
            if size == "phone" and what == "host":
                assert f["height"] <= PHONE_HOST_MAX, summary(f)
                if game == "ringo":  # docs/playing.md's host page: down to the private codes, which change
                    docs_shot(page, "host-phone", clip={"x": 0, "y": 0, "width": w, "height": page.locator("#codes").bounding_box()["y"]})
            if size == "phone" and what == "side":
                # the first card on the screen is what to do now
                tops = page.eval_on_selector_all("main > section:not([hidden])", "cs => cs.filter(c => c.offsetHeight).map(c => [c.id, c.getBoundingClientRect().top])")
                assert min(tops, key=lambda x: x[1])[0] == "prompts", tops
                assert page.locator("#prompts h2").inner_text().startswith("What to do now")
            shots(page, "%s-%s-%s" % (game, what, size))
            if size == "phone":
                page.evaluate(UNFOLD)
                check(page, size, "%s %s, every card open" % (game, what))
        ctx.close()


def test_ringo_moves_by_tapping_a_piece_then_its_cell(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "ringo")
    codes, _ = side_of(b)
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    board = ctx.new_page()  # the scoreboard's live region says each turn and what the rules announced
    board.goto(b.url + "/")
    live = board.locator('#live[aria-live="polite"]')
    expect(live).to_have_text("Waiting for Attackers")
    att = ctx.new_page()
    att.goto("%s/side/attackers?code=%s" % (b.url, codes["attackers"]))
    # the legend names both sides by shape as well as colour
    expect(att.locator("#legend")).to_contain_text("Attackers (round)")
    expect(att.locator("#legend")).to_contain_text("Defenders (square)")
    expect(att.locator("#turn")).to_have_text("Your turn")  # the side's own page speaks to it
    b5 = att.locator('svg.ring [data-cell="b5"]')
    expect(b5).to_have_attribute("role", "button")
    assert att.locator('svg.ring [data-cell="b4"]').get_attribute("role") is None  # not a destination yet
    b5.tap()
    expect(att.locator('svg.ring [data-cell="b4"]')).to_have_class(re.compile(r"\bdest\b"))
    expect(att.locator(".move-help")).to_contain_text("Now tap a gold cell")
    shots(att, "ringo-side-picked-phone")
    att.locator('svg.ring [data-cell="b4"]').tap()
    expect(att.locator('svg.ring [data-cell="b4"]')).to_have_attribute("data-piece", "attackers")
    # on the scoreboard the two cells the move changed and the headline are animated, nothing else
    expect(board.locator("#turn")).to_have_class(re.compile(r"\bjust\b"))
    assert sorted(g.get_attribute("data-cell") for g in board.locator("svg.ring g.just").all()) == ["b4", "b5"]
    assert att.locator('svg.ring [data-cell="b5"]').get_attribute("data-piece") == ""
    expect(att.locator("#turn")).to_have_text("Waiting for Defenders")
    expect(live).to_contain_text("Waiting for Defenders")
    said = [n["text"] for n in b.get("/api/state")["notices"] if n["kind"] == "say"]
    assert said and said[-1] in live.inner_text()  # the move, as the rules announced it
    # the defenders by keyboard only: Tab to a piece, Enter, Tab to where it goes, Enter
    dfd = ctx.new_page()
    dfd.goto("%s/side/defenders?code=%s" % (b.url, codes["defenders"]))
    piece = dfd.locator('svg.ring g.movable').first
    cell = piece.get_attribute("data-cell")
    piece.focus()
    dfd.keyboard.press("Enter")
    expect(dfd.locator('svg.ring g.picked')).to_have_attribute("data-cell", cell)
    dest = dfd.locator("svg.ring g.dest").first
    to = dest.get_attribute("data-cell")
    dest.focus()
    dfd.keyboard.press("Enter")
    expect(dfd.locator('svg.ring [data-cell="%s"]' % to)).to_have_attribute("data-piece", "defenders")
    # the moves stay a list of buttons too, folded under the question
    expect(att.locator("#prompt-list details.move-list summary")).to_contain_text("The moves as a list")
    ctx.close()


def test_plingpong_words_and_trays_in_seat_order(bridge_process, browser):
    b = bridge_process("--simulate", "--game", "plingpong")
    host_ws = Ws(b.url, role="host", code=b.host_code)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(b.url + "/host?code=" + b.host_code)
    page.wait_for_selector("#turn:not(:empty)")
    view = host_ws.state()["view"]
    seats = view["seats"]
    colours = {p: view["sides"][p]["colours"][0] for p in seats}
    # trays and players as they sit (clockwise from the first seat), not alphabetically
    expect(page.locator("#grids .grid-title")).to_have_text([colours[p] + " tray" for p in seats])
    expect(page.locator("table.players tr[data-side]")).to_have_count(4)
    assert [r.get_attribute("data-side") for r in page.locator("table.players tr[data-side]").all()] == seats
    for n, cup in enumerate(("green.1", "green.2", "green.3", "green.4")):
        page.wait_for_selector("text=Waiting for Player %d" % (n + 1))
        assert host_ws.act(action="sense", input={"t": "ball", "cup": cup})["ok"]
    page.locator("#prompt-list button", has_text="score").click()
    page.wait_for_selector("text=Round 1")
    assert host_ws.act(action="sense", input={"t": "ball", "cup": "yellow.6"})["ok"]
    stat = page.locator('.stat:has(> .stat-name:text-is("this round")) > .stat-value')
    expect(stat).to_have_text("Player 1: yellow cup 6")
    # the void is offered in words, never as the input's type
    void = page.locator("#prompt-list button", has_text="void the last shot")
    expect(void).to_have_text("void the last shot (it did not bounce in its zone)")
    text = page.locator("main").inner_text()
    assert "may also" not in text and "\u2192" not in text and "yellow.6" not in text
    assert "Player 1 can also:" in text
    # three players: whoever lost rock, paper, scissors sits in the middle (seats p2, p1, p3)
    assert host_ws.act(action="new", options={"players": 3})["ok"]
    page.wait_for_selector("#prompt-list button:has-text('middle colour')")
    middle = next(i for i in host_ws.state(lambda m: any(d["t"] == "middle" for d in m["decisions"]))["decisions"]
              if i["t"] == "middle" and i["by"] == "p1")
    assert host_ws.act(action="input", input=middle)["ok"]
    view = host_ws.state(lambda m: m["view"]["seats"] == ["p2", "p1", "p3"])["view"]
    expect(page.locator("table.players tr[data-side]")).to_have_count(3)
    expect(page.locator("table.players tr[data-side] td:first-child")).to_have_text(["Player 2", "Player 1", "Player 3"])
    expect(page.locator("#grids .grid-title")).to_have_text([view["sides"][p]["colours"][0] + " tray" for p in view["seats"]])


def play_until_over(b, seed=1, limit=300):
    """Random legal play, mostly balls, as the pages would send it, until the rules call a winner."""
    rnd = random.Random(seed)
    host = Ws(b.url, role="host", code=b.host_code)
    codes = host.state()["codes"]
    host.close()
    for _ in range(limit):
        host = Ws(b.url, role="host", code=b.host_code)
        st = host.state()
        if st["view"]["over"]:
            host.close()
            return st
        options = [("host", "sense", i) for i in st["sensed"]] + [("host", "input", i) for i in st["decisions"]]
        for side, code in codes.items():
            ws = Ws(b.url, role="side", side=side, code=code)
            options += [(ws, "input", i) for i in ws.state()["decisions"]]
        balls = [o for o in options if o[2]["t"] == "ball"]
        who, action, inp = rnd.choice(balls) if balls and rnd.random() < 0.9 else rnd.choice(options)
        ws = host if who == "host" else who
        assert ws.act(action=action, input=inp)["ok"], inp
        time.sleep(0.3 if inp["t"] == "ball" else 0)  # the fire-at-will tie window passes
    raise AssertionError("no winner after %d inputs" % limit)


def test_pong_after_a_win_says_no_phase(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(b.url + "/")
    page.wait_for_selector("#turn:not(:empty)")
    won = play_until_over(b)
    winner = won["view"]["winner"].capitalize()
    expect(page.locator("#turn")).to_have_text(winner + " won!")
    assert "phase" not in page.locator("#summary").inner_text()  # no "phase: Battle" under "Red won!"
    assert "throwing" not in page.locator("#summary").inner_text()
    page.wait_for_timeout(1500)  # the win's animations are over
    shots(page, "medieval-pong-scoreboard-won-tv")
