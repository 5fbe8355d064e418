"""Degrade, never collapse: goodput at 1x, 2x and 4x of the capacity measured in the same run.

A real `battlement run` with TABLES Ringo tables on a real Mosquitto; one firmware-like board per
table (outbox 128, oldest dropped when full, resend after 1 s without progress; see
tests/support/overload.py). Capacity: the boards keep their outboxes full (closed loop: a new event
only when one was acknowledged), so the bridge is never idle and never flooded. Then the boards
produce at 1x, 2x and 4x that rate for SECONDS each, the page (GET /api/state) asked every 50 ms
all along; after each, the load stops until every outbox is acknowledged away. Printed: goodput
(distinct events journalled and ruled per second) beside the capacity, the page's p50/p99, and
the books: generated, journalled, doubled, dropped by the boards' outboxes.
"""

import os
import tempfile
import time

import benchutil  # noqa: F401 -- puts tests/ and host/ on the path
from bridge.conftest import BridgeProcess
from support.overload import Boards, Pager, drain, journal_books, phase, report, table_broker, table_files

TABLES = int(os.environ.get("BENCH_OVERLOAD_TABLES", "20"))
SECONDS = float(os.environ.get("BENCH_OVERLOAD_SECONDS", "8"))


def run(tables=TABLES, seconds=SECONDS, factors=(1, 2, 4), say=print):
    """Returns (capacity, {factor: phase result}, books)."""
    with tempfile.TemporaryDirectory() as tmp:
        broker = table_broker(os.path.join(tmp, "mosquitto"))
        files = table_files(tmp, tables, prefix="bench")
        args = []
        for _tid, f in files:
            args += ["--table", f]
        b = BridgeProcess(tmp, *args, "--mqtt", broker.url).start()
        boards = Boards(broker, [tid for tid, _ in files])
        pager = Pager(b.url)
        try:
            boards.warm_up()
            capacity = phase(b, boards, pager, seconds, closed_loop=True)
            say("  capacity (closed loop, %d tables)   %7.0f events/s  page p50 %.1f ms p99 %.1f ms" % (
                tables, capacity["goodput"], capacity["p50"] * 1000, capacity["p99"] * 1000))
            drain(b, boards, pager, 30)
            out = {}
            for k in factors:
                x = phase(b, boards, pager, seconds, rate=k * capacity["goodput"])
                took = drain(b, boards, pager, 120)
                out[k] = dict(x, drained=took)
                say("  " + report("%dx capacity" % k, x, capacity["goodput"])
                    + "  backlog drained in %s" % ("%.1f s" % took if took is not None else "NOT drained"))
            time.sleep(0.5)
            t = boards.totals()
            journalled, doubled = journal_books(b.journal, boards)
            books = dict(t, journalled=journalled, doubled=doubled)
            say("  books: generated %d, journalled %d, doubled %d, dropped by full outboxes %d, resent %d; "
                "lost beyond the drops %d" % (t["generated"], journalled, doubled, t["dropped"], t["resent"],
                                               max(0, t["generated"] - t["dropped"] - journalled)))
            return capacity["goodput"], out, books
        finally:
            pager.close()
            boards.close()
            b.stop()
            broker.close()


def main():
    run()


if __name__ == "__main__":
    main()
