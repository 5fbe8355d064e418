"""A bridge that stops reading a board's USB serial port for seconds (a GC pause, a busy machine,
SIGSTOP), with the real firmware under MicroPython as the board on a USB-CDC-like line
(support/cdc.py): the board's port cuts a frame mid-way once its FIFO has been full for 500 ms, as
rp2 and ESP32-S3 boards do, and the next frame's bytes follow the cut part on the same line. The
bridge rejects that line (crc or syntax, counted and shown on /api/health), and the board's outbox
brings every ball again: each is journalled exactly once.
"""

import os
import signal
import sqlite3
import time
import urllib.parse

import pytest
from battlement.sim.firmware import FirmwareProcess
from support.balls import Balls
from support.cdc import PORTS, CdcLink

from bridge.test_restart import BOARD, SETTINGS, check, journalled, settled

# s the bridge stays stopped once the board's FIFO is full: past the 500 ms after which the port cuts
# the write it is in (if any), past the board's 1 s resend, and once past its 8 s
# watchdog (a board held inside its writes all that time would reset and lose its outbox). The JTAG
# port never holds the board long (after one timeout it drops at once); a long stall drops hundreds of
# events the board still holds, a hole the bridge's gap window once gave up (see test_inbox_messages.py).
STALLS = {"rp2": (2, 2, 10), "esp32-s3-usb": (2, 2, 10), "esp32-s3-jtag": (2, 2, 2)}
BOUND = 30  # s: the most a loaded machine may take for any one step (waited on, not slept)


def wait(cond, what):
    deadline = time.monotonic() + BOUND
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.02)


def journalled_kinds(path):
    """{kind: events of that kind} the board's events were journalled as."""
    db = sqlite3.connect(path, timeout=10)
    try:
        return dict(db.execute("SELECT kind, COUNT(*) FROM events WHERE board=? GROUP BY kind", (BOARD,)).fetchall())
    finally:
        db.close()


def health(b):
    return b.get("/api/health?code=" + urllib.parse.quote(b.host_code))


@pytest.mark.parametrize("port", sorted(PORTS))
def test_a_stalled_bridge_on_usb_cdc_gets_cut_frames_and_every_ball_once(bridge_process, tmp_path, port):
    link = CdcLink(tmp_path / "cdc", port).start()
    journal = str(tmp_path / "j.sqlite")
    profile = "esp32-s3-devkitc-1" if port.startswith("esp32") else "pico-w"
    fw = FirmwareProcess(BOARD, profile, {"cup-1": "beam"}, port=link.b, settings=SETTINGS, model=link.model).start()
    b = bridge_process("--game", "plingpong", "--serial", link.a, journal=journal)
    balls = Balls(fw)
    balls.start()
    try:
        wait(lambda: len(journalled(journal)) >= 5, "the first balls journalled")
        for stall in STALLS[port]:
            os.killpg(b.proc.pid, signal.SIGSTOP)  # the bridge reads nothing: the host's buffer, then the FIFO fill
            try:
                wait(lambda: link.full, "the board's USB FIFO to fill")
                time.sleep(stall)  # the stall goes on (a busy host): the board senses and resends meanwhile
            finally:
                os.killpg(b.proc.pid, signal.SIGCONT)
            rows = len(journalled(journal))
            wait(lambda rows=rows: len(journalled(journal)) > rows, "balls journalled again after the stall")
    finally:
        balls.stop()  # every ball dropped is in the board's hands now
    board = fw.board_stats()
    quiet = settled(b, time.time())
    rows = journalled(journal)
    h = health(b)
    alive, log = fw.alive(), fw.log()
    fw.stop()
    link.close()
    assert alive, "the board stopped: " + log[-500:]
    assert quiet, "the board still had events unacknowledged after the last ball"
    # Cut frames and the frames glued to them arrive after the event they ended with: order is lost
    # there (a gap applied at once, the missing ones late), never a ball.
    # Each ball is counted once or asked about once (a "blind" question: a pause held its edges back),
    # never both: balls and questions together are the events, each journalled once.
    kinds = journalled_kinds(journal)
    assert set(kinds) <= {"beam", "blind"}, kinds
    check(len(rows), rows, ordered=False)
    answers = kinds.get("beam", 0) + kinds.get("blind", 0)
    if port == "esp32-s3-jtag":
        # The JTAG console holds the whole board, pin handlers too, while a write waits (200 ms, once a stall):
        # the scheduler keeps 8 of the edges that come meanwhile and refuses the rest (the board model counts
        # them). A ball whose edges it refused is one the firmware never saw; after a hold that may have lost
        # edges it asks once more on every beam. Every ball it saw is counted once or asked about once.
        unseen = (board["sched_lost"] + 1) // 2
        assert balls.n - unseen <= answers <= balls.n + board.get("console_held", 0), (balls.n, kinds, board)
    else:
        assert answers == balls.n, (balls.n, kinds)
    if port == "esp32-s3-usb":
        # Native USB runs the pin handlers while a write waits for the host: its edges keep their times,
        # so the stall hides no ball and the board asks about none (a referee has nothing to answer).
        assert kinds.get("blind", 0) == 0, (balls.n, kinds)
    assert b.proc.poll() is None
    assert all(t["restarts"] == 0 for t in h["tasks"]), h["tasks"]
    serial = h["transports"][0]
    bad = serial["counters"].get("crc", 0) + serial["counters"].get("syntax", 0)
    # Each cut leaves one partial line that the next bytes end: frames were cut (most stalls cut one;
    # one whose FIFO filled exactly at a frame's end cuts none), and no rejection that a cut does not
    # explain (no clean frame refused).
    assert 1 <= bad + serial["counters"].get("length", 0) <= link.counters["cut"], (serial, link.counters)
    assert {r["reason"] for r in serial["rejected"]} <= {"crc", "syntax", "length"}
    assert any(r["reason"] in ("crc", "syntax") for r in serial["rejected"]), serial["rejected"]
