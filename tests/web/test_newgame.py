"""New game and undo on the host page in Chromium, as a person expects: New game asks first, in the page
and not beside Undo; the game set aside can be taken up again; the simulated table switches game; one
Ringo move (a lift and a place) is one Undo and stays in the log struck through and marked undone; a
sensor pressed while paused is said on the page. And the scoreboard's own voice: it reads out exactly
the public announcements, in order, and never a side's secret."""

import json
import time

from support.bridgeproc import Ws

LIFT = {"t": "cell", "cell": "b5", "occupied": False}
PLACE = {"t": "cell", "cell": "b4", "occupied": True}


def host_page(browser, b):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(b.url + "/host?code=" + b.host_code)
    page.wait_for_selector("#turn:not(:empty)")
    return page


def test_new_game_asks_first_and_the_previous_game_can_be_taken_up_again(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "ringo")
    page = host_page(browser, b)
    # not in the row with Undo: a slip of the finger beside Undo must not end the game
    assert page.evaluate_handle("document.getElementById('new').parentNode !== document.getElementById('undo').parentNode")
    ws = Ws(b.url, role="host", code=b.host_code)
    ws.act(action="sense", input=LIFT)
    ws.act(action="sense", input=PLACE)
    page.locator("#notices li", has_text="moves from b5 to b4").wait_for()
    assert page.is_hidden("#set-aside")

    games = page.locator("#notices li", has_text="New game").count()
    page.click("#new")
    page.wait_for_selector("#new-confirm:visible")
    assert "set aside" in page.inner_text("#new-question") and "Games set aside" in page.inner_text("#new-question")
    shots(page, "host-new-game-asks")
    page.click("#new-no")  # keep playing: nothing changed
    page.wait_for_selector("#new-confirm", state="hidden")
    page.click("#new")
    page.keyboard.press("Escape")  # so does Escape
    page.wait_for_selector("#new-confirm", state="hidden")
    # The marker: a pause from the page, on its own socket, comes back after anything it sent before.
    page.click("#pause")
    page.wait_for_selector("#pause:text-is('Resume')")
    assert page.locator("#notices li", has_text="moves from b5 to b4").count() == 1
    assert page.locator("#notices li", has_text="New game").count() == games
    page.click("#pause")
    page.wait_for_selector("#pause:text-is('Pause')")

    page.click("#new")
    page.click("#new-yes")
    page.wait_for_selector("#new-result:has-text('New game started.')")
    page.locator("#notices li", has_text="New game of Ringo.").wait_for()
    resume = page.locator("#set-aside li", has_text="2 inputs")
    resume.wait_for()
    resume.locator("button").click()
    page.wait_for_selector("#new-confirm:visible")
    assert "resume Ringo of" in page.inner_text("#new-question")
    page.click("#new-yes")
    page.locator("#notices li", has_text="Resumed the game of Ringo after 2 inputs.").wait_for()
    state = Ws(b.url, role="public").state()
    assert state["view"]["cells"].get("b4") == "attackers" and "b5" not in state["view"]["cells"]
    ws.close()


def test_one_move_is_one_undo_and_stays_in_the_log_marked_undone(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "ringo")
    page = host_page(browser, b)
    ws = Ws(b.url, role="host", code=b.host_code)
    ws.act(action="sense", input=LIFT)
    ws.act(action="sense", input=PLACE)
    page.locator("#notices li", has_text="moves from b5 to b4").wait_for()
    page.click("#undo")  # once
    page.locator("#notices li", has_text="Undid: The attacker moves from b5 to b4.").wait_for()
    entry = page.locator("#notices li.undone", has_text="moves from b5 to b4")
    entry.wait_for()
    assert entry.locator("s").count() == 1 and entry.locator(".undone-word").inner_text().strip() == "undone"
    assert "line-through" in entry.locator("s").evaluate("e => getComputedStyle(e).textDecorationLine")
    state = Ws(b.url, role="public").state()
    assert state["view"]["cells"].get("b5") == "attackers" and "b4" not in state["view"]["cells"]
    shots(page, "host-undone-move")
    # paused: a sensor pressed is said on the host page and counted
    page.click("#pause")
    page.wait_for_selector("#paused-note:has-text('sensors are not played')")
    ws.act(action="sense", input=LIFT)
    page.wait_for_selector("#paused-note:has-text('1 sensor change not played (the last at b5)')")
    page.locator("#notices li", has_text="The game is paused: 1 sensor change was not played.").wait_for()
    page.wait_for_selector("#counters:has-text('paused 1')")
    ws.close()


def test_the_simulated_table_switches_game_from_the_host_page(bridge_process, browser):
    b = bridge_process("--simulate", "--game", "ringo")
    page = host_page(browser, b)
    score = browser.new_page()
    score.goto(b.url + "/")
    score.wait_for_selector("#turn:not(:empty)")
    page.wait_for_selector("#game-switch option[value='plingpong']", state="attached")
    page.select_option("#game-switch", "plingpong")
    assert page.inner_text("#new") == "Switch game..."
    page.click("#new")
    assert "Switch this table to PlingPong?" in page.inner_text("#new-question")
    page.click("#new-yes")
    page.wait_for_selector("#title:has-text('PlingPong')")
    page.locator("#notices li", has_text="New game of PlingPong.").wait_for()
    page.locator("#set-aside li", has_text="Ringo").wait_for()
    assert page.locator("#sensors button.sense").count() > 0  # the new game's sensors, on new simulated boards
    score.wait_for_selector("script[src='/games/plingpong.js']", state="attached")  # the scoreboard reloaded
    score.wait_for_selector("#title:has-text('PlingPong')")


def test_the_scoreboard_speaks_exactly_the_public_announcements_in_order(bridge_process, browser):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    page = browser.new_page()
    # the browser's voice, recorded: what this device would say, in the order it is asked to
    page.add_init_script("""
        window.__spoken = [];
        Object.defineProperty(window, 'speechSynthesis', {value: {
            speak: (u) => window.__spoken.push(u.text), cancel: () => {}, getVoices: () => []}});
    """)
    page.goto(b.url + "/")
    page.wait_for_selector("#speak-here")
    page.check("#speak-here")
    def now(**who):  # the page's state as it is now (a fresh socket is sent it at once)
        w = Ws(b.url, **who)
        try:
            return w.state()
        finally:
            w.close()

    watcher = Ws(b.url, role="public")  # every public state, as another scoreboard receives them
    host = Ws(b.url, role="host", code=b.host_code)
    codes = now(role="host", code=b.host_code)["codes"]
    secrets = []
    for _ in range(30):  # the secret set-up, then throws: whatever each page may decide, the first of it
        s = now(role="host", code=b.host_code)
        if s["view"].get("over"):
            break
        for side, code in codes.items():
            mine = now(role="side", side=side, code=code)
            secrets += mine["private"]
            if mine["decisions"]:
                w = Ws(b.url, role="side", side=side, code=code)
                w.act(action="input", input=mine["decisions"][0])
                w.close()
                break
        else:
            pick = s["decisions"] or s["sensed"]
            if not pick:
                break
            done = s["counters"]["inputs"] + s["counters"]["illegal"]
            host.act(action="sense" if pick is s["sensed"] else "input", input=pick[0])
            # applied (a sensed ball first waits out the fire-at-will tie window on the bridge)
            host.state(lambda m, done=done: m["counters"]["inputs"] + m["counters"]["illegal"] > done)
    for side, code in codes.items():
        secrets += now(role="side", side=side, code=code)["private"]
    heard = {}  # notice id -> text of every public announcement, however many states they came in
    # The marker: with every input applied, a message on the watcher's own socket. Its reply comes after
    # the states pushed before it, and the state pushed after the reply holds every announcement.
    watcher.conn.send(json.dumps({"action": "undo"}))  # refused: a scoreboard only watches
    answered = False
    while True:
        m = watcher.recv()
        answered = answered or m.get("type") == "reply"
        for n in m.get("notices", []) if m.get("type") == "state" else []:
            if n["kind"] == "say":
                heard[n["id"]] = n["text"]
        if answered and m.get("type") == "state":
            break
    said = [heard[k] for k in sorted(heard)]
    assert len(said) >= 3
    deadline = time.monotonic() + 10
    while page.evaluate("window.__spoken.length") < len(said) and time.monotonic() < deadline:
        time.sleep(0.05)
    spoken = page.evaluate("window.__spoken")
    assert spoken == said
    assert secrets and not set(secrets) & set(spoken)
    host.close()
