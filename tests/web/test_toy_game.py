"""A sixth game that lives only under tests/ (tests/toygame: tic-tac-toe with a hidden curse) plays
end to end through the simulated boards, the bridge and the page with no edit to the host: its
rules, table adapter and page board are all it brings."""

import pathlib
import sys

from support.bridgeproc import Ws

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "toygame"
LAUNCH = {"viewport": {"width": 1000, "height": 900}}


def click(page, text):
    page.locator("#prompt-list button, #sensors button", has_text=text).first.click()


def test_tic_tac_toe_with_a_curse_plays_from_the_page_with_no_edit_to_the_host(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--table", str(TOY / "tic-tac-toe.toml"),
                       command=[sys.executable, str(TOY / "run_bridge.py")])
    ctx = browser.new_context(**LAUNCH)
    public, host, x, o = ctx.new_page(), ctx.new_page(), ctx.new_page(), ctx.new_page()
    public.goto(b.url + "/")
    host.goto(b.url + "/host?code=" + b.host_code)
    host.wait_for_selector("#codes a[data-side=x]")
    codes = {a.get_attribute("data-side"): a.get_attribute("data-code") for a in host.locator("#codes a").all()}
    x.goto(b.url + "/side/x?code=" + codes["x"])
    o.goto(b.url + "/side/o?code=" + codes["o"])
    # the game's own board script draws the cells
    public.wait_for_selector("#ttt [data-cell=b2]")

    # each side hides its curse on its own page; nobody else sees where
    watch = Ws(b.url, role="public")
    click(x, "curse c3")
    click(o, "curse a3")
    x.wait_for_selector("text=Your curse is on c3.")
    public.wait_for_selector("#notices >> text=O has hidden its curse.")
    assert "curse" not in [btn.inner_text() for btn in host.locator("#prompt-list button").all()]

    # the host's sensor buttons are the simulated presence sensors: X b2, O c3 (X's curse: it burns
    # to stone and the curse is shown), X a2, O b1, X c2: three in a row
    for cell in ("b2", "c3", "a2", "b1", "c2"):
        click(host, "piece on " + cell)
        public.wait_for_selector("#ttt [data-cell=%s]:not([data-piece=''])" % cell)
    public.wait_for_selector("#notices >> text=Cell c3 was cursed by X! O's piece burns to stone.")
    public.wait_for_selector("#turn >> text=X won!")
    shots(public, "toy-game-won")
    st = b.state()
    assert st["view"]["cells"] == {"b2": "x", "c3": "stone", "a2": "x", "b1": "o", "c2": "x"}
    assert st["view"]["cursed"] == ["c3"]  # O's curse on a3 was never stepped on: still hidden
    # nothing the scoreboard's websocket carried names a curse still hidden
    watch.state(lambda s: s["view"]["cells"].get("c2") == "x")
    for f in watch.frames:
        assert "a3" not in str(f.get("view", {}).get("cursed")) and "my_curse" not in f.get("view", {})
        assert "Your curse" not in str(f)
    watch.close()
    assert "Traceback" not in b.output()
