"""Overload at twice the capacity measured in the same run, with firmware-like boards (outbox 128,
resend after 1 s without progress) on a real Mosquitto against a real `battlement run`: the bridge
degrades instead of collapsing (goodput at least 60% of the capacity measured in the same run), the
page answers under the overload about as fast as under a full load, nothing is doubled, and nothing is
lost that a board did not drop from its own full outbox (whose `dropped` is then on the host page).
What the full bridge queue refused is counted on the host page, and was not acknowledged.
Speeds are the benchmark's business (tests/bench/bench_overload.py); this asserts what users notice,
each figure as a ratio to one measured in the same run."""

import asyncio
import time

from battlement import wire
from battlement.messages import Event, Hello, up_frame
from battlement.transport import base
from support.overload import drain, events_handled, journal_books, phase, report, start

TABLES = 10


def test_twice_the_capacity_degrades_and_drains_with_nothing_lost(bridge_process, mosquitto, tmp_path):
    b, boards, pager = start(bridge_process, mosquitto, tmp_path, TABLES, "ov")
    try:
        boards.warm_up()
        # Capacity and 2x taken in turn, twice, so a change in what else this machine runs weighs on both.
        caps, overs = [], []
        for _ in range(2):
            caps.append(phase(b, boards, pager, 3.0, closed_loop=True))
            drain(b, boards, pager, 5)
            overs.append(phase(b, boards, pager, 3.0, rate=2 * caps[-1]["goodput"]))
            took = drain(b, boards, pager, 10)
        cap, over = merged(caps), merged(overs)
        capacity = cap["goodput"]
        print("\n%s; %s" % (report("capacity", cap, capacity), report("2x capacity", over, capacity)))
        time.sleep(0.5)  # the last batch committed and counted
        _, h = events_handled(b)
        t = boards.totals()
        intake = h["transports"][0]["counters"]
        journalled, doubled = journal_books(b.journal, boards)
        print("generated %d, journalled %d, doubled %d, dropped by boards %d, resent %d, outboxes %s; intake %s"
              % (t["generated"], journalled, doubled, t["dropped"], t["resent"],
                 "drained in %.1f s" % took if took is not None else "still holding %d" % t["unacked"], intake))
        assert doubled == 0
        assert journalled + t["dropped"] >= t["generated"]  # nothing lost that a board did not drop itself
        assert journalled == sum(x.get("events", 0) for x in h["tables"].values())  # all that came is kept
        if t["dropped"]:  # and then the host page says so, per board
            assert sum(x["dropped"] for x in h["boards"]) > 0
        assert took is not None, "the backlog did not drain once the load fell"
        # Degraded, not collapsed (before the bounded queue: 26% at 2x, and the backlog never drained). The
        # issue's 90% is not reached yet: about 65-76% on this machine, see docs/bridge.md, "Overload".
        assert over["goodput"] >= 0.6 * capacity, "collapsed: %.0f/s at 2x of %.0f/s" % (over["goodput"], capacity)
        assert over["failed"] == 0 and over["answered"] > 0  # the page answered every time...
        # ...and not much slower than under a full load (before: p99 6-8 times that under the overload)
        assert over["p99"] <= 4 * cap["p99"], "the page slowed under overload"
        assert intake.get("queue-full", 0) > 0  # what the bounded queue refused is on the host page
        assert all(x["restarts"] == 0 for x in h["tasks"])
    finally:
        pager.close()
        boards.close()


def merged(phases):
    """Phases of equal length as one: mean goodput and offered load, the worst p99, all answers."""
    n = len(phases)
    return {"goodput": sum(p["goodput"] for p in phases) / n, "offered": sum(p["offered"] for p in phases) / n,
            "cpu": sum(p["cpu"] for p in phases) / n, "per_cpu": sum(p["per_cpu"] for p in phases) / n,
            "p50": max(p["p50"] for p in phases), "p99": max(p["p99"] for p in phases),
            "answered": sum(p["answered"] for p in phases), "failed": sum(p["failed"] for p in phases)}


class _Link(base.Transport):
    """The protocol layer alone, its frames to the boards kept."""

    def __init__(self):
        super().__init__()
        self.sent = []

    def _link_for(self, board, table):
        return table

    def _write(self, link, board, frame):
        self.sent.append(wire.decode(frame))


def test_a_full_queue_takes_no_event_and_acknowledges_nothing_it_did_not_take(monkeypatch):
    """The bridge's queue is bounded: past QUEUE_MAX events the intake refuses the next (counted
    `queue-full`), none of them is acknowledged, and the board's resend brings them in once there is room."""
    monkeypatch.setattr(base, "QUEUE_MAX", 5)

    async def main():
        t = _Link()
        t.bounded = t.acks_on_commit = True
        await t.start()
        t._handle_line(up_frame(Hello("t", "b1", 7, "fw", wire.VERSION, "p", {"s": "beam"})), "t", "t", "b1")
        frames = [up_frame(Event("t", "b1", 7, n, "s", "beam", 1, n, 10)) for n in range(1, 9)]
        for f in frames:
            t._handle_line(f, "t", "t", "b1")
        assert t.counters["queue-full"] == 3
        got = []
        while (m := t.get_nowait()) is not None:
            got.append(m)
        t.committed()
        t._flush_evacks()
        assert [m.seq for m in got if isinstance(m, Event)] == [1, 2, 3, 4, 5]
        assert [f[1][2] for f in t.sent if f[0] == "evack"] == [5]  # not a seq it refused
        for f in frames[5:]:  # the board's outbox again
            t._handle_line(f, "t", "t", "b1")
        got = [m.seq for m in iter(t.get_nowait, None)]
        t.committed()
        t._flush_evacks()
        assert got == [6, 7, 8] and t.sent[-1][1][2] == 8
        await t.stop()

    asyncio.run(main())


def test_a_hole_the_board_dropped_is_let_go_when_it_resends_past_it():
    """A board whose full outbox dropped seq 3 before the bridge got it resends 4-5 forever while the
    cumulative evack waits at 2: the bridge pings it, and the hello's `acked` lets the hole go."""

    async def main():
        t = _Link()
        t.bounded = t.acks_on_commit = True
        await t.start()

        def hello(acked):
            return up_frame(Hello("t", "b1", 7, "fw", wire.VERSION, "p", {"s": "beam"}, acked=acked))

        def event(n):
            return up_frame(Event("t", "b1", 7, n, "s", "beam", 1, n, 10))

        def settle():
            while t.get_nowait() is not None:
                pass
            t.committed()
            t._flush_evacks()
            return [f[1][2] for f in t.sent if f[0] == "evack"]

        t._handle_line(hello(0), "t", "t", "b1")
        for n in (1, 2, 4, 5):  # 3 never arrives
            t._handle_line(event(n), "t", "t", "b1")
        assert settle()[-1] == 2
        for n in (4, 5):  # the board resends its outbox: 3 is no longer in it
            t._handle_line(event(n), "t", "t", "b1")
        assert [f[0] for f in t.sent].count("ping") == 1 and t.counters["resync-gap"] == 1
        t._handle_line(hello(3), "t", "t", "b1")  # its answer: it needs nothing up to 3
        assert settle()[-1] == 5  # the outbox can go
        await t.stop()

    asyncio.run(main())
