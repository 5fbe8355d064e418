"""The host page asks about a break no sensor timed, in Chromium: a board on a real pty sends `blind`
(what an ESP32 sends for a ball that fell inside its garbage collection); the host page says it in
words with two buttons, the scoreboard never shows it, "Yes, a ball" plays one ball once, "No" nothing."""

import json

from support.board import SerialBoard
from support.bridgeproc import Ws
from support.procs import PtyPair

ASK = "The board looked away for a moment (30 ms): did a ball go into cup-green-1 (PlingPong, green.1)?"


def test_the_host_page_asks_about_a_blind_break_and_yes_plays_one_ball(bridge_process, browser, tmp_path, shots):
    pair = PtyPair(tmp_path / "pty").start()
    b = bridge_process("--game", "plingpong", "--serial", pair.a)
    board = SerialBoard(pair.b, board="plingpong-1", sensors={"cup-green-1": "beam"}).open()
    close_board = board.answer_in_thread()
    host = Ws(b.url, role="host", code=b.host_code)
    public = Ws(b.url, role="public")
    try:
        board.hello()
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(b.url + "/host?code=" + b.host_code)
        page.wait_for_selector("#turn:not(:empty)")
        board.event(sensor="cup-green-1", kind="blind", value=30, width_us=31000)
        page.locator("#blind-questions p", has_text=ASK).wait_for()
        shots(page, "host-blind-question")
        st = host.state(lambda s: s.get("blind"))
        assert st["counters"]["inputs"] == 0 and st["counters"]["router.blind"] == 1
        assert "looked away" not in json.dumps(public.state())  # the players' screen never asks

        page.click(".blind-yes")
        page.wait_for_selector("#blind-questions", state="hidden")
        st = host.state(lambda s: s["counters"]["inputs"] >= 1 and not s["blind"])
        assert st["counters"]["inputs"] == 1

        board.event(sensor="cup-green-1", kind="blind", value=30, width_us=31000)
        page.locator("#blind-questions p", has_text=ASK).wait_for()
        page.click(".blind-no")
        page.wait_for_selector("#blind-questions", state="hidden")
        st = host.state(lambda s: s["counters"].get("blind-no") == 1)
        assert st["counters"]["inputs"] == 1 and st["counters"]["blind-yes"] == 1
    finally:
        close_board()
        host.close()
        public.close()
        pair.close()
