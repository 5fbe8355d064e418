"""Overload at twice the capacity measured in the same run, with firmware-like boards (outbox 128,
resend after 1 s without progress) on a real Mosquitto against a real `battlement run`: the bridge
degrades instead of collapsing, the page keeps answering, nothing is doubled, and nothing is lost that
a board did not drop from its own full outbox (whose `dropped` is then on the host page).
Speeds are the benchmark's business (tests/bench/bench_overload.py); this asserts what users notice."""

import time

from support.overload import Boards, Pager, drain, events_handled, journal_books, phase, report, table_files

TABLES = 10


def test_twice_the_capacity_degrades_and_drains_with_nothing_lost(bridge_process, mosquitto, tmp_path):
    files = table_files(tmp_path, TABLES, prefix="ov%d" % mosquitto.port)
    args = []
    for _tid, f in files:
        args += ["--table", f]
    b = bridge_process(*args, "--mqtt", mosquitto.url)
    boards = Boards(mosquitto, [tid for tid, _ in files])
    pager = Pager(b.url)
    try:
        boards.warm_up()
        cap = phase(b, boards, pager, 3.0, closed_loop=True)
        capacity = cap["goodput"]
        over = phase(b, boards, pager, 5.0, rate=2 * capacity)
        took = drain(b, boards, pager, 5)
        print("\ncapacity %.0f/s; %s" % (capacity, report("2x capacity", over, capacity)))
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
        assert over["goodput"] >= 0.5 * capacity, "collapsed: %.0f/s at 2x of %.0f/s" % (over["goodput"], capacity)
        assert over["failed"] == 0 and over["answered"] > 0  # the page answered every time
        assert all(x["restarts"] == 0 for x in h["tasks"])
    finally:
        pager.close()
        boards.close()
