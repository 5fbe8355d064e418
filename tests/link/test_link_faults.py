"""Links that come and go, many times, with events flowing all along: a serial board unplugged and
plugged back 50 times (a self-powered board keeps its outbox; now and then one reboots), and the real
firmware over a Mosquitto that is stopped 10 times (TERM and KILL), also on a heap as small as a
board's, where a full outbox leaves it fragmented. Every event once, in order.
"""

import asyncio
import os
import time

import pytest
from battlement.link.messages import Beat, Event
from battlement.link.transport import MqttTransport, SerialTransport
from battlement.sim.firmware import FirmwareProcess
from support.aio import until
from support.balls import Balls
from support.board import SerialBoard
from support.procs import Broker, PtyPair

REPLUGS = 50
BROKER_CYCLES = 10
# The unix port's objects are twice a board's (64-bit), so this is about the heap a Pico W has left
# for the firmware; a full outbox of 1024 events scatters its frames over it.
BOARD_HEAP = "300k"


def collect(t, got, beats=None):
    while (m := t.get_nowait()) is not None:
        if isinstance(m, Event):
            got.append((m.boot, m.seq))
        elif beats is not None and isinstance(m, Beat):
            beats.append(m)


async def replugs(tmp_path, cycles):
    pair = PtyPair(tmp_path / "pty").start()
    board = SerialBoard(pair.b).open()
    t = SerialTransport([pair.a], retry=0.02)
    await t.start()
    got: list = []
    sent: dict[int, int] = {}  # boot -> last seq sensed
    try:
        board.hello()
        for cycle in range(cycles):
            for _ in range(3):
                board.event()
            sent[board.boot] = board.seq
            if cycle % 10 == 9:  # this time the board loses power too: first let its outbox drain
                await until(lambda: (collect(t, got), board.pump(0), not board.unacked())[-1], 10, "outbox drained")
            board.close()
            pair.unplug()
            if cycle % 10 != 9:
                board.event_frame()  # sensed while unplugged: into the outbox only
                sent[board.boot] = board.seq
            await until(lambda: t.links[pair.a] != "open", 5, "unplug noticed")
            pair.replug()
            if cycle % 10 == 9:
                board.reboot(board.boot + 1)
            await until(lambda: t.links[pair.a] == "open", 5, "port reopened")
            board.open()
            board.hello()  # after every reconnect: hello, then the whole outbox
            board.resend()
            collect(t, got)
        sent[board.boot] = board.seq

        def done():
            collect(t, got)
            board.pump(0)
            if len(got) < sum(sent.values()):
                board.resend()
            return not board.unacked() and len(got) >= sum(sent.values())

        await until(done, 20, "every event applied and acknowledged")
        # The marker: one more event, on the same line; a copy of an earlier one would come before it.
        board.event()
        sent[board.boot] = board.seq
        await until(lambda: (collect(t, got), (board.boot, board.seq) in got)[-1], 10, "the marker event")
    finally:
        await t.stop()
        board.close()
        pair.close()
    want = [(boot, s) for boot in sent for s in range(1, sent[boot] + 1)]
    assert got == want, "lost %d, doubled %d" % (len(set(want) - set(got)), len(got) - len(set(got)))
    return t


def test_fifty_replugs_lose_nothing_double_nothing_and_keep_order(tmp_path):
    t = asyncio.run(asyncio.wait_for(replugs(tmp_path, REPLUGS), 120))
    assert t.counters.get("lost", 0) == 0


@pytest.mark.soak
def test_soak_five_hundred_replugs(tmp_path, soak_record):
    fds = open_fds()
    t = asyncio.run(asyncio.wait_for(replugs(tmp_path, 500), 1200))
    soak_record("500 serial replugs", 500, 500, t.counters.get("lost", 0), max(0, open_fds() - fds),
                "every event once and in order; leaked: the test process's file descriptors")


def open_fds(pid="self"):
    return len(os.listdir("/proc/%s/fd" % pid))


async def broker_cycles(tmp_path, cycles, heapsize=None):
    broker = Broker(tmp_path / "mqtt").start()
    t = MqttTransport(broker.url, table="faults")
    notes = []
    t.log = lambda text: notes.append("%.3f %s" % (time.monotonic(), text))
    await t.start()
    # An outbox deep enough for the longest outage (the board's reconnect backs off up to 4 s).
    fw = FirmwareProcess("faults-1", "pico-w", {"cup-1": "beam"}, transport="mqtt", mqtt_url=broker.url,
                         table="faults", settings={"outbox": 1024}, heapsize=heapsize).start()
    got: list = []
    balls = Balls(fw, width_ms=6)
    try:
        await until(lambda: ("faults", "faults-1") in t.boards, 15, "the board's hello")
        fds = open_fds(fw.proc.pid)
        balls.start()
        for cycle in range(cycles):
            await asyncio.sleep(0.3)
            collect(t, got)
            if cycle % 2:
                broker.kill()
            else:
                broker.stop()  # SIGTERM
            await asyncio.sleep(0.2)  # balls keep falling into the outbox
            broker.start()
            await until(lambda: t.links[t.url] == "connected", 15, "host reconnected")
        balls.stop()  # the board answers its sync: it is still sensing
        try:
            await until(lambda: (collect(t, got), len(got) >= balls.n)[-1], 30, "every ball")
        except AssertionError:
            raise AssertionError("%d of %d balls; %s; %s" % (len(got), balls.n, t.counters, fw.log()[-600:]))
        # The marker: a beat after every ball that says the board holds nothing unacknowledged (its
        # outbox empty, nothing queued). Nothing is left that it could resend, and what it sent before
        # the beat (on one topic, at QoS 1, in order) came before it.
        beats: list = []
        await until(lambda: (collect(t, got, beats), any(b.outbox == 0 and b.queued == 0 for b in beats))[-1], 30,
                    "a beat with an empty outbox")
        # Sockets the board forgot to close (on lwIP each is a PCB it runs out of).
        leaked = max(0, open_fds(fw.proc.pid) - fds)
    finally:
        balls.halt.set()
        fw.stop()
        await t.stop()
        broker.close()
    seqs = [s for _, s in got]
    assert len({b for b, _ in got}) == 1
    lost, doubled = balls.n - len(set(seqs)), len(seqs) - len(set(seqs))
    assert (lost, doubled) == (0, 0), "%d balls: %d lost, %d doubled" % (balls.n, lost, doubled)
    assert seqs == list(range(1, balls.n + 1)), "applied out of order: %s" % "; ".join(notes[-20:])
    assert t.connects >= cycles + 1
    assert "Traceback" not in fw.log()
    return balls.n, leaked


def test_broker_stopped_and_killed_ten_times_loses_and_doubles_nothing(tmp_path):
    asyncio.run(asyncio.wait_for(broker_cycles(tmp_path, BROKER_CYCLES), 150))


def test_broker_cycles_on_a_board_sized_heap_keep_the_board_sensing_and_sending(tmp_path):
    # A heap fragmented by the outbox's frames has no block as big as the outbox: the board must
    # neither stop sensing (a real one's watchdog would reset it, outbox and all) nor fail every
    # session for want of one.
    asyncio.run(asyncio.wait_for(broker_cycles(tmp_path, 24, heapsize=BOARD_HEAP), 150))


@pytest.mark.soak
def test_soak_broker_stopped_and_killed_a_hundred_times(tmp_path, soak_record):
    t0 = time.monotonic()
    n, leaked = asyncio.run(asyncio.wait_for(broker_cycles(tmp_path, 100), 1500))
    soak_record("100 broker stops and kills (MQTT)", 100, 100, 0, leaked,
                "%d balls from the real firmware, 0 doubled, in order; %.0f s; leaked: the board's sockets"
                % (n, time.monotonic() - t0))
