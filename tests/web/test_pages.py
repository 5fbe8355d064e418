"""The page in a real browser: set up a side in secret, play sensed throws, watch the scoreboard
update live; the public page and its websocket never carry a hidden placement; codes guard private pages."""

import json
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect  # waits as the page changes (its CSP forbids eval'd predicates)
from support.bridgeproc import Ws


def tower_secrets(view):
    """(side, tower, key) of every character/crown/trap field in a view: what the public must never see."""
    out = []
    for side, sv in (view.get("sides") or {}).items():
        for key in ("trap", "to_place"):
            if key in sv:
                out.append((side, "-", key))
        for t, tv in (sv.get("towers") or {}).items():
            for key in ("character", "crown"):
                if key in tv:
                    out.append((side, t, key))
    return out


def status(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def set_up_side(page):
    """Place every character by clicking the side page's decision buttons, then 'ready'."""
    for _ in range(40):
        ready = page.locator("#prompt-list button", has_text="ready")
        if ready.count():
            ready.first.click()
            page.locator("#prompt-list button").first.wait_for(state="detached")
            return
        first = page.locator("#prompt-list button").first.inner_text()
        page.locator("#prompt-list button", has_text="place").first.click()
        expect(page.locator("#prompt-list button").first).not_to_have_text(first)
    raise AssertionError("set-up never offered 'ready'")


def test_secret_setup_and_live_scoreboard_never_leak(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    public_frames = []
    public = ctx.new_page()
    public.on("websocket", lambda ws: ws.on("framereceived", lambda payload: public_frames.append(payload)))
    public.goto(b.url + "/")
    public.wait_for_selector("text=Waiting for blue and red")

    host = ctx.new_page()
    host_frames = []
    host.on("websocket", lambda ws: ws.on("framereceived", lambda payload: host_frames.append(payload)))
    host.goto(b.url + "/host?code=" + b.host_code)
    host.wait_for_selector("a.code")
    codes = {a.get_attribute("data-side"): a.get_attribute("data-code") for a in host.locator("a.code").all()}
    assert sorted(codes) == ["blue", "red"]

    sides, side_frames = {}, {"red": [], "blue": []}
    for side in ("red", "blue"):
        page = ctx.new_page()
        page.on("websocket", lambda ws, side=side: ws.on("framereceived", lambda payload: side_frames[side].append(payload)))
        page.goto("%s/side/%s?code=%s" % (b.url, side, codes[side]))
        page.wait_for_selector("#prompt-list button")
        # no rule has asked yet: the page still says in words what the buttons are for
        assert "place your characters in your towers" in page.locator("#prompt-list p.ask").first.inner_text()
        set_up_side(page)
        sides[side] = page
    shots(sides["red"], "pong-red-private-after-setup")
    assert "with a crown" in sides["red"].locator("#private-list").inner_text()  # red sees its own placements

    # what red's own page shows: its placements, and none of blue's
    red = Ws(b.url, role="side", side="red", code=codes["red"]).state()
    red_secrets = tower_secrets(red["view"])
    assert {s for s, _, _ in red_secrets} == {"red"} and len(red_secrets) >= 9
    red_king = [t for t, tv in red["view"]["sides"]["red"]["towers"].items() if tv.get("character") == "king"]
    assert len(red_king) == 1

    # the rules' question to red, on red's page beside its answer (the throw itself is sensed)
    red_ask = sides["red"].locator("#prompt-list .ask-group", has_text="Red, your turn: throw at Blue's kingdom.")
    red_ask.locator("button", has_text="miss").wait_for()
    public.wait_for_selector("#asked >> text=Red, your turn: throw at the other kingdom.")
    # red throws first: the host's sensor buttons are the towers' beams on the simulated boards
    host.wait_for_selector("#sensors button.sense")
    n_notes = public.locator("#notices li").count()
    host.locator("#sensors button.sense", has_text="ball blue").first.click()
    public.locator("#notices li").nth(n_notes).wait_for()  # one notice more
    shots(host, "pong-host-after-throw")
    shots(public, "pong-public-after-throw")
    # the scoreboard's red kingdom shows tower names only; the tower red's ball entered shows what it held
    assert sorted(c.inner_text() for c in public.locator('[data-tower^="red."]').all()) == sorted(
        red["view"]["sides"]["red"]["towers"])
    assert len(public.locator('[data-tower^="blue."]').first.inner_text().split()) >= 2
    blue_card = public.locator('.army[data-side="blue"]')
    blue_card.locator("text=8 of 9").wait_for()  # the tower the ball entered is down
    assert "0 of 1" in blue_card.inner_text() and "9 of 9" in public.locator('.army[data-side="red"]').inner_text()
    # the host sees each question in words, never its choices (they can name the towers with a crown)
    host_states = [json.loads(f) for f in host_frames if isinstance(f, str) and '"state"' in f]
    assert any(p["to"] == "blue" for st in host_states for p in st.get("prompts", []))
    assert not [p for st in host_states for p in st.get("prompts", []) if "choices" in p]
    for side, frames in side_frames.items():  # each side's page: its own secrets, and only what a ball revealed
        for f in frames:
            st = json.loads(f)
            if st.get("type") != "state":
                continue
            for s_, t, key in tower_secrets(st["view"]):
                assert s_ == side or st["view"]["sides"][s_]["towers"][t]["status"] != "up", (side, s_, t, key)

    served = status(b.url + "/")[1]
    assert "character" not in served and "crown" not in served  # the page itself carries no state
    states = [json.loads(f) for f in public_frames if isinstance(f, str)]
    assert len(states) >= 3
    for st in states:
        if st.get("type") != "state":
            continue
        for side, t, key in tower_secrets(st["view"]):
            # only a tower a ball has entered may show what was in it
            assert st["view"]["sides"][side]["towers"][t]["status"] != "up" or side == "blue", (side, t, key)
        raw = json.dumps(st)
        assert "is in tower" not in raw  # the private "The King is in tower C1 with a crown." stays private
        for code in codes.values():
            assert code not in raw  # the codes are for the host screen only
    # the red kingdom was not hit: nothing of red's is public
    last = [s for s in states if s.get("type") == "state"][-1]
    assert not [x for x in tower_secrets(last["view"]) if x[0] == "red"]
    revealed = len(tower_secrets(last["view"]))
    assert public.content().count(">character<") <= revealed  # what the page shows is no more than that
    ctx.close()


def test_private_pages_need_their_own_code(bridge_process):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    host = Ws(b.url, role="host", code=b.host_code).state()
    codes = host["codes"]
    code, text = status(b.url + "/side/red")
    assert code == 403 and "needs its code" in text
    code, text = status("%s/side/red?code=%s" % (b.url, codes["blue"]))
    assert code == 403 and "red" in text
    code, text = status("%s/side/green?code=x" % b.url)
    assert code == 404 and "no side 'green'" in text
    assert status(b.url + "/host")[0] == 403
    ws = Ws(b.url, role="side", side="red", code=codes["blue"])
    assert ws.recv()["type"] == "error"
    # a side page cannot decide for the other side, and the scoreboard cannot act at all
    red = Ws(b.url, role="side", side="red", code=codes["red"])
    blue_move = {"t": "place", "by": "blue", "tower": "A1", "character": "king"}
    reply = red.act(action="input", input=blue_move)
    assert not reply["ok"] and "only decide for red" in reply["message"]
    pub = Ws(b.url, role="public")
    assert "only watches" in pub.act(action="undo")["message"]
    # and the bridge is still serving
    assert status(b.url + "/api/state")[0] == 200


@pytest.mark.parametrize("game", ["ringo"])
def test_host_sensor_buttons_play_a_ringo_move(bridge_process, browser, shots, game):
    b = bridge_process("--simulate", "--game", game)
    public = browser.new_page()
    public.goto(b.url + "/")
    public.wait_for_selector('svg.ring [data-cell="b5"][data-piece="attackers"]')
    page = browser.new_page()
    page.goto(b.url + "/host?code=" + b.host_code)
    page.wait_for_selector("#sensors button.sense")
    page.locator("#sensors button.sense", has_text="b5 to b4").first.click()
    page.wait_for_selector("text=Waiting for defenders")
    assert "A" in page.locator("#picture").inner_text().splitlines()[2]  # ring 4 now holds an attacker
    # the public ring: the attacker stands on b4, b5 is empty, the defenders are to move
    public.wait_for_selector('svg.ring [data-cell="b4"][data-piece="attackers"]')
    assert public.locator('svg.ring [data-cell="b5"]').get_attribute("data-piece") == ""
    assert public.locator('svg.ring [data-piece="defenders"]').count() == 4
    assert "Defenders" in public.locator("#summary").inner_text() and "b5-b4" in public.locator("#summary").inner_text()
    shots(public, "ringo-public")
    page.locator("#undo").click()
    page.locator("#undo").click()
    page.wait_for_selector("text=Waiting for attackers")
    shots(page, "ringo-host")
