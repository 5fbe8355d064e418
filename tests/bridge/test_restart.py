"""The bridge killed (kill -9) at random moments and started again, with the real firmware under
MicroPython as the board, over a pty and over a real Mosquitto: every ball the board saw is in the
journal exactly once. Also a clean stop and start.

The board drops balls all along, also while no bridge runs: those wait in its outbox, and the next
bridge learns where the board stands (its hello's `acked`, and what the journal holds) before it
takes any event as new, so the hole from the stop to the first event after the restart is gone.
"""

import random
import sqlite3
import time
import urllib.parse

import pytest
from battlement.sim.firmware import FirmwareProcess
from support.balls import Balls
from support.procs import Broker, PtyPair

BOARD = "proto-1"
CYCLES = 20
# A bridge start can take seconds on a busy machine: an outbox this deep outlasts it (a full outbox
# drops its oldest event, which the board counts in `dropped`; that is not what is tested here).
# A beat every half second says soon where the board stands (its outbox) once the balls stop.
SETTINGS = {"outbox": 1024, "beat_ms": 500}
SETTLE = 120  # s: the most a loaded machine may take to journal the last balls (it is waited on, not slept)


def journalled(path):
    db = sqlite3.connect(path, timeout=10)
    try:
        return db.execute("SELECT boot, seq FROM events WHERE board=? ORDER BY id", (BOARD,)).fetchall()
    finally:
        db.close()


def settled(b, since):
    """Wait until the board's heartbeat, sent after `since`, says it has nothing left to send or resend
    (queue and outbox empty: every event acknowledged, so journalled). The bridge handles the board's
    frames in order, so a resend that came before that beat was handled before it: nothing more can
    be journalled after this returns. False if that never happened within SETTLE."""
    deadline = time.monotonic() + SETTLE
    while time.monotonic() < deadline:
        for beat in b.get("/api/health?code=" + urllib.parse.quote(b.host_code))["boards"]:
            if beat["board"] == BOARD and beat["at"] > since and beat["outbox"] == beat["queued"] == 0:
                return True
        time.sleep(0.1)
    return False


def cycles(bridge_process, args, journal, fw, rng, kills):
    """Start the bridge, let balls land for a random moment, kill -9 it; then a clean stop and start."""
    balls = Balls(fw)
    balls.start()
    try:
        for _ in range(kills):
            b = bridge_process(*args, journal=journal)
            time.sleep(rng.uniform(0.0, 0.5))  # a random moment: mid-batch, mid-commit, mid-evack
            b.kill9()
            time.sleep(rng.uniform(0.0, 0.3))  # balls keep landing with no bridge at all
        b = bridge_process(*args, journal=journal)
        time.sleep(0.3)
        b.stop()  # clean stop (SIGTERM)
        time.sleep(0.2)
        b = bridge_process(*args, journal=journal)
    finally:
        balls.stop()  # every ball dropped is in the board's hands now
    stopped = time.time()
    quiet = settled(b, stopped)
    rows = journalled(journal)
    b.stop()
    assert quiet, "the board still had events unacknowledged %d s after the last ball" % SETTLE
    return balls.n, rows


def check(n, rows, ordered=True):
    """n balls, each journalled once; ordered: also in the order they fell (no seq ever went missing
    on the way, so none was applied late, after a newer one: docs/protocol.md rule 5)."""
    boots = {boot for boot, _ in rows}
    assert len(boots) == 1, "the board never rebooted: %s" % boots
    seqs = [seq for _, seq in rows]
    doubled = len(seqs) - len(set(seqs))
    lost = n - len(set(seqs))
    assert (lost, doubled) == (0, 0), "%d balls: %d lost, %d doubled" % (n, lost, doubled)
    assert sorted(seqs) == list(range(1, n + 1))
    assert seqs == sorted(seqs) or not ordered, "applied out of order"


def test_kill_9_at_random_moments_over_serial_loses_and_doubles_nothing(bridge_process, tmp_path):
    pair = PtyPair(tmp_path / "pty").start()
    journal = str(tmp_path / "j.sqlite")
    fw = FirmwareProcess(BOARD, "pico-w", {"cup-1": "beam"}, port=pair.b, settings=SETTINGS).start()
    try:
        n, rows = cycles(bridge_process, ("--game", "plingpong", "--serial", pair.a), journal, fw,
                         random.Random(11), CYCLES)
        check(n, rows)
        assert n >= 100
    finally:
        fw.stop()
        pair.close()


def test_kill_9_at_random_moments_over_mqtt_loses_and_doubles_nothing(bridge_process, tmp_path):
    broker = Broker(tmp_path / "mqtt").start()
    journal = str(tmp_path / "j.sqlite")
    fw = FirmwareProcess(BOARD, "pico-w", {"cup-1": "beam"}, transport="mqtt", mqtt_url=broker.url,
                         table="plingpong", settings=SETTINGS).start()
    try:
        n, rows = cycles(bridge_process, ("--game", "plingpong", "--mqtt", broker.url), journal, fw,
                         random.Random(12), CYCLES)
        check(n, rows)
        assert n >= 100
    finally:
        fw.stop()
        broker.close()


@pytest.mark.soak
@pytest.mark.parametrize("transport", ["serial", "mqtt"])
def test_soak_100_kills(bridge_process, tmp_path, transport):
    journal = str(tmp_path / "j.sqlite")
    if transport == "serial":
        link = PtyPair(tmp_path / "pty").start()
        fw = FirmwareProcess(BOARD, "pico-w", {"cup-1": "beam"}, port=link.b, settings=SETTINGS).start()
        args = ("--game", "plingpong", "--serial", link.a)
    else:
        link = Broker(tmp_path / "mqtt").start()
        fw = FirmwareProcess(BOARD, "pico-w", {"cup-1": "beam"}, transport="mqtt", mqtt_url=link.url,
                             table="plingpong", settings=SETTINGS).start()
        args = ("--game", "plingpong", "--mqtt", link.url)
    try:
        n, rows = cycles(bridge_process, args, journal, fw, random.Random(13), 100)
        check(n, rows)
    finally:
        fw.stop()
        link.close()
