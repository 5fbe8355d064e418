"""Degrade, never collapse: goodput at 1x, 2x and 4x of the capacity measured in the same run.

A real `battlement run` with TABLES Ringo tables on a real Mosquitto; one firmware-like board per
table (outbox 128, oldest dropped when full, resend after 1 s without progress; see
tests/support/overload.py). Capacity: the boards keep their outboxes full (closed loop: a new event
only when one was acknowledged, the boards' events interleaved as at a rate), so the bridge is never
idle and never flooded. Each factor's phase (the boards produce at 1x, 2x and 4x the capacity just
measured, for SECONDS) sits between two capacity phases and is printed beside their mean: this
machine's speed drifts by 15% within a minute. The page (GET /api/state) is asked every 50 ms all
along; before each capacity phase the load stops until every outbox is acknowledged away. Also
printed: the capacity with each board refilling its whole outbox at once (bursts of one table, which
the bridge handles faster than interleaved tables), and the books: generated, journalled, doubled,
dropped by the boards' outboxes.
"""

import os
import tempfile
import time

import benchutil  # noqa: F401 -- puts tests/ and host/ on the path
from support.bridgeproc import BridgeProcess
from support.overload import (
    Boards,
    Pager,
    drain,
    journal_books,
    phase,
    pin_apart,
    report,
    table_broker,
    table_files,
    unpin,
)

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
            if pin_apart(b, broker):  # as the soak: the boards and the broker are other machines at a table
                say("  (the bridge on a CPU of its own; the broker, boards and page poller on the others)")
            bursts = phase(b, boards, pager, seconds, closed_loop="bursts")
            drain(b, boards, pager, 30)
            caps = [phase(b, boards, pager, seconds, closed_loop=True)]
            out = {}
            for k in factors:
                x = phase(b, boards, pager, seconds, rate=k * caps[-1]["goodput"])
                took = drain(b, boards, pager, 120)
                caps.append(phase(b, boards, pager, seconds, closed_loop=True))
                drain(b, boards, pager, 30)
                capacity = (caps[-2]["goodput"] + caps[-1]["goodput"]) / 2
                out[k] = dict(x, drained=took, capacity=capacity)
                say("  " + report("%dx capacity" % k, x, capacity)
                    + " (of %.0f and %.0f/s either side)" % (caps[-2]["goodput"], caps[-1]["goodput"])
                    + "  backlog drained in %s" % ("%.1f s" % took if took is not None else "NOT drained"))
            capacity = {a: sum(c[a] for c in caps) / len(caps) for a in ("goodput", "p50", "p99", "per_cpu")}
            say("  capacity (closed loop, %d tables, mean of %d phases)   %7.0f events/s (%.0f-%.0f)  page p50 "
                "%.1f ms p99 %.1f ms, %5.0f events a CPU-second" % (
                    tables, len(caps), capacity["goodput"], min(c["goodput"] for c in caps),
                    max(c["goodput"] for c in caps), capacity["p50"] * 1000, capacity["p99"] * 1000,
                    capacity["per_cpu"]))
            say("  capacity, each board refilling its whole outbox at once   %7.0f events/s  (interleaved %.0f, "
                "ratio %.2f)" % (bursts["goodput"], capacity["goodput"], bursts["goodput"] / capacity["goodput"]))
            time.sleep(0.5)
            t = boards.totals()
            journalled, doubled = journal_books(b.journal, boards)
            books = dict(t, journalled=journalled, doubled=doubled)
            say("  books: generated %d, journalled %d, doubled %d, dropped by full outboxes %d, resent %d; "
                "lost beyond the drops %d" % (t["generated"], journalled, doubled, t["dropped"], t["resent"],
                                               max(0, t["generated"] - t["dropped"] - journalled)))
            return capacity["goodput"], out, books
        finally:
            unpin()
            pager.close()
            boards.close()
            b.stop()
            broker.close()


def main():
    run()


if __name__ == "__main__":
    main()
