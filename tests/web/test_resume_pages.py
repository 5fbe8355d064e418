"""Recoveries in Chromium. The host page lists every game set aside (not only the latest) and resumes the one
picked, asking first in words that say what it does. An open side page follows its table: after a switch
it shows, styled, which game the table now plays and whose pages there are (never another side's code),
also when reloaded, and comes back by itself when the host resumes its game. A side page of a game set
aside sees nothing of the new game and cannot act in it."""

import json
import time

from support.bridgeproc import Ws

SLOW = 60_000  # ms: the most a loaded machine may take to show what is waited on (never a fixed sleep)
# every message a page's socket receives, kept for the test (page.js hands each to these hooks)
RECORD = "window.__got = []; (window.BATTLEMENT_HOOKS = window.BATTLEMENT_HOOKS || []).push((m) => window.__got.push(m));"


def play(ws, n):
    """n legal Ringo moves from the host's decision buttons."""
    st = ws.state()
    for _ in range(n):
        done = st["counters"]["inputs"]
        assert ws.act(action="input", input=next(d for d in st["decisions"] if d["t"] == "move"))["ok"]
        st = ws.state(lambda m, done=done: m["counters"]["inputs"] > done)  # a reply is followed by a state
    return st


def test_the_host_picks_any_game_set_aside_and_the_confirmation_says_what_it_does(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "ringo")
    ws = Ws(b.url, role="host", code=b.host_code)
    first = play(ws, 4)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(b.url + "/host?code=" + b.host_code)
    page.wait_for_selector("#turn:not(:empty)")
    assert page.is_hidden("#set-aside")  # nothing set aside yet
    for n in (1, 2):  # two "New game" presses
        page.click("#new")
        assert page.inner_text("#new-yes") == "Start the new game"
        page.click("#new-yes")
        page.wait_for_selector("#set-aside li >> nth=%d" % (n - 1), timeout=SLOW)
    row = page.locator("#set-aside li[data-id='%d']" % first["game_id"])
    words = row.inner_text()
    assert "Ringo" in words and "game %d" % first["game_id"] in words and "4 inputs" in words
    assert "started" in words and "last played" in words
    shots(page, "host-games-set-aside")
    row.locator("button").click()
    page.wait_for_selector("#new-confirm:visible")
    question = page.inner_text("#new-question")
    assert question.startswith("Set the game in progress aside and resume Ringo of ") and "4 inputs" in question
    assert page.inner_text("#new-yes") == "Resume this game"
    page.click("#new-yes")
    page.locator("#notices li", has_text="Resumed the game of Ringo after 4 inputs.").wait_for(timeout=SLOW)
    assert Ws(b.url, role="public").state()["view"] == first["view"]
    # the game it interrupted is listed in its turn; the one resumed is not
    page.wait_for_selector("#set-aside li[data-id='%d']" % (first["game_id"] + 2), timeout=SLOW)
    assert page.locator("#set-aside li[data-id='%d']" % first["game_id"]).count() == 0
    page.click("#new")  # and the new game's question is a new game's again
    assert page.inner_text("#new-yes") == "Start the new game"
    # an id that names no game set aside is refused in words, and nothing changes
    reply = ws.act(action="resume", id=999)
    assert not reply["ok"] and reply["message"].startswith("no game 999 set aside on table ringo (set aside: ")
    assert "needs the id" in ws.act(action="resume")["message"]
    assert Ws(b.url, role="public").state()["view"] == first["view"]
    ws.close()


def test_an_open_side_page_follows_its_table_through_a_switch_and_back(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    host = Ws(b.url, role="host", code=b.host_code)
    pong = host.state()
    page = browser.new_page(viewport={"width": 412, "height": 900})
    page.add_init_script(RECORD)
    page.goto("%s/side/blue?code=%s" % (b.url, pong["codes"]["blue"]))
    page.wait_for_selector("#prompt-list button", timeout=SLOW)  # blue places its characters
    assert host.act(action="new", game="ringo", options={})["ok"]
    ringo = host.state(lambda m: m["game"] == "ringo")

    moved = page.locator("#moved")
    moved.wait_for(timeout=SLOW)  # no reload by hand
    assert page.inner_text("#title") == "This table now plays Ringo"
    text = moved.inner_text()
    assert "Attackers" in text and "Defenders" in text and "ask the host" in text
    assert "Blue" in text and "Medieval Pong" in text  # which page this was
    assert page.evaluate("getComputedStyle(document.getElementById('moved')).borderTopStyle") == "solid"  # page.css
    assert page.locator("#prompt-list button").count() == 0 or page.is_hidden("#prompts")
    shots(page, "side-page-after-a-switch")

    response = page.reload()
    assert response.status == 200 and "text/html" in response.headers["content-type"]
    moved.wait_for(timeout=SLOW)
    assert page.inner_text("#title") == "This table now plays Ringo"
    assert "medieval-pong" not in page.inner_text("header")

    # the ringo sides' codes reach this page in no message and nowhere on it
    got = json.dumps(page.evaluate("window.__got")) + page.content()
    for code in ringo["codes"].values():
        assert code not in got

    assert host.act(action="resume", id=pong["game_id"])["ok"]  # the host takes the Pong game up again
    page.wait_for_selector("#moved", state="hidden", timeout=SLOW)
    page.wait_for_selector("#title:text-is('Medieval Pong - Blue')", timeout=SLOW)
    page.wait_for_selector("#prompt-list button", timeout=SLOW)  # its decisions are back, by themselves
    host.close()


def test_a_side_page_of_a_game_set_aside_sees_nothing_of_the_new_one_and_cannot_act_in_it(bridge_process):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    host = Ws(b.url, role="host", code=b.host_code)
    old = host.state()
    page = Ws(b.url, role="side", side="blue", code=old["codes"]["blue"])
    first = page.state()
    place, said = first["decisions"][0], max(n["id"] for n in first["notices"])
    assert host.act(action="new", options={})["ok"]  # a new game of the same game: new codes
    new = host.state(lambda m: m["codes"] != old["codes"])
    deadline = time.monotonic() + 10
    while True:
        m = page.recv(max(0.05, deadline - time.monotonic()))
        # a state of the old game may still come; one of the new game (its notices are newer) must not
        assert m.get("type") != "state" or max(n["id"] for n in m["notices"]) == said, m
        if m.get("type") == "moved":
            break
    assert m["now"]["title"] == "Medieval Pong" and m["mine"]["title"] == "Medieval Pong"
    assert new["codes"]["blue"] not in json.dumps(m)
    reply = page.act(action="input", input=place)
    assert not reply["ok"] and "ask the host" in reply["message"]
    st = Ws(b.url, role="side", side="blue", code=new["codes"]["blue"]).state()
    assert st["decisions"] and not st["view"]["sides"]["blue"].get("placed")  # the new blue: untouched
    page.close()
    host.close()
