"""An open host page survives a bridge restart: the host code is kept in the journal, so the page
reconnects by itself, says so while it waits, and its buttons work again without a reload. A question
the host had not answered yet ("did a ball go into cup-green-1 …?") is still on the page after the restart."""

import sqlite3

from support.board import SerialBoard
from support.bridgeproc import BridgeProcess, Ws
from support.procs import PtyPair

SLOW = 60_000  # ms: the most a loaded machine may take to show what is waited on (never a fixed sleep)


def test_the_host_page_reconnects_across_a_real_bridge_restart(tmp_path, browser, shots):
    b = BridgeProcess(tmp_path, "--simulate", "--game", "ringo", host_code=None).start()
    try:
        code, port = b.host_code, b.port
        assert code and len(code) >= 8
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(b.url + "/host?code=" + code, timeout=SLOW)
        page.wait_for_selector("#status:text-is('live')", timeout=SLOW)

        b.kill9()  # a crash, not a clean stop
        page.wait_for_selector("#status:has-text('reconnecting')", timeout=SLOW)
        assert page.evaluate("document.body.classList.contains('offline')")  # the buttons wait meanwhile
        shots(page, "host-reconnecting")

        b.start(port=port)  # the same journal, the same port
        assert b.host_code == code  # kept, not new
        page.wait_for_selector("#status:text-is('live')", timeout=SLOW)
        assert not page.evaluate("document.body.classList.contains('offline')")
        page.click("#pause", timeout=SLOW)  # the page's buttons act on the new bridge
        page.wait_for_selector("#title:has-text('(paused)')", timeout=SLOW)
    finally:
        b.stop()


ASK = "The board looked away for a moment (30 ms): did a ball go into cup-green-1 (PlingPong, green.1)?"


def test_an_unanswered_blind_question_is_on_the_host_page_after_a_kill_9_and_yes_plays_one_ball(
        bridge_process, browser, tmp_path, shots):
    pair = PtyPair(tmp_path / "pty").start()
    b = bridge_process("--game", "plingpong", "--serial", pair.a)
    board = SerialBoard(pair.b, board="plingpong-1", sensors={"cup-green-1": "beam"}).open()
    close_board = board.answer_in_thread()
    host = None
    try:
        board.hello()
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(b.url + "/host?code=" + b.host_code, timeout=SLOW)
        board.event(sensor="cup-green-1", kind="blind", value=30, width_us=31000)
        page.locator("#blind-questions p", has_text=ASK).wait_for(timeout=SLOW)

        b.kill9()
        page.wait_for_selector("#status:has-text('reconnecting')", timeout=SLOW)
        b.start(port=b.port)
        page.wait_for_selector("body:not(.offline)", state="attached", timeout=SLOW)  # reconnected
        page.reload(timeout=SLOW)  # what the new bridge says, not what the page kept
        page.locator("#blind-questions p", has_text=ASK).wait_for(timeout=SLOW)
        shots(page, "host-blind-question-after-restart")

        host = Ws(b.url, role="host", code=b.host_code)
        page.click(".blind-yes", timeout=SLOW)
        page.wait_for_selector("#blind-questions", state="hidden", timeout=SLOW)
        st = host.state(lambda s: s["counters"].get("blind-yes") == 1 and not s["blind"], timeout=SLOW / 1000)
        assert st["counters"]["inputs"] == 1
        db = sqlite3.connect(b.journal, timeout=10)
        try:
            (balls,) = db.execute("SELECT COUNT(*) FROM inputs WHERE source LIKE 'host page (a ball on %'").fetchone()
        finally:
            db.close()
        assert balls == 1  # one "yes", one ball
    finally:
        close_board()
        if host is not None:
            host.close()
        pair.close()
