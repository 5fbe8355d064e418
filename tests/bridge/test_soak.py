"""The soak variants (`make soak`, never in CI): a million fuzzed frames through a bridge over a real
pty, and ten minutes of overload against a real `battlement run`. Each records a row of the soak table."""

import asyncio
import os
import random
import select
import sqlite3
import threading
import time

import pytest
from battlement.bridge import Bridge
from battlement.link import wire
from battlement.link.messages import Event, Hello, up_frame
from battlement.table.maps import for_game
from support.aio import until
from support.overload import drain, journal_books, phase, pin_apart, start, table_broker, unpin

FRAMES = int(os.environ.get("SOAK_FRAMES", "1000000"))
OVERLOAD_SECONDS = float(os.environ.get("SOAK_OVERLOAD_SECONDS", "600"))
BOOT = 0xC0FFEE


def _rss_mb(pid="self"):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def _fds():
    return len(os.listdir("/proc/self/fd"))


def fuzzed(rng, n):
    """n frames: one in ten a valid Ringo event of ring-5 (in order), the rest junk of every kind."""
    seq = 0
    valid = []
    for i in range(n):
        if i % 10 == 0:
            seq += 1
            f = up_frame(Event(None, "ring-5", BOOT, seq, "b", "presence", seq % 2, seq * 1000, 0))
            valid.append(f)
            yield f
            continue
        kind = rng.randrange(7)
        if kind == 0:  # line noise
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 120))).replace(b"\n", b"") + b"\n"
        elif kind == 1 and valid:  # a valid frame with one byte changed
            f = bytearray(rng.choice(valid))
            f[rng.randrange(len(f) - 1)] = rng.randrange(32, 127)
            yield bytes(f)
        elif kind == 2 and valid:  # an old event again: must not be applied twice
            yield rng.choice(valid)
        elif kind == 3:  # CRC-valid, fields out of every range (numbers of 2^64, ids too long, kinds unknown)
            body = b"event %s %s %s b %s %s %s %s" % (
                rng.choice([b"ring-5", b"RING-5", b"r" * 40, b"ring-9"]), rng.choice([b"0", b"c0ffee", b"f" * 20]),
                str(rng.choice([0, 2 ** 32, 2 ** 64, -1])).encode(), rng.choice([b"presence", b"laser", b""]),
                str(rng.choice([2, 2 ** 63, -5])).encode(), str(rng.choice([2 ** 64, 0])).encode(), b"0")
            yield body + b"*%08x\n" % (wire.crc32(body) & 0xFFFFFFFF)
        elif kind == 4:  # longer than any frame
            yield b"event " + b"9" * rng.randrange(300, 3000) + b"\n"
        elif kind == 5:  # a hello of a stranger, or a beat of an unknown boot
            yield up_frame(Hello(None, "stranger-%d" % rng.randrange(5), rng.randrange(1, 1000), "x", wire.VERSION,
                                 "t", {"a": "beam"}))
        else:  # frames the host sends, the wrong way round
            body = b"evack ring-5 %x %d" % (BOOT, rng.randrange(1, 10 ** 6))
            yield body + b"*%08x\n" % (wire.crc32(body) & 0xFFFFFFFF)


@pytest.mark.soak
def test_a_million_fuzzed_frames_lose_and_double_nothing(tmp_path, soak_record):
    fds0, rss0 = _fds(), _rss_mb()
    master, slave = os.openpty()
    import tty

    tty.setraw(slave)
    path = os.ttyname(slave)
    stop = threading.Event()

    def drain_master():  # what the bridge writes back (evacks, LEDs, pings): read so it never blocks
        while not stop.is_set():
            try:
                if select.select([master], [], [], 0.05)[0]:
                    os.read(master, 65536)
            except OSError:
                return

    reader = threading.Thread(target=drain_master, daemon=True)
    reader.start()
    sent = {"valid": 0, "frames": 0}

    def write_all():
        os.write(master, up_frame(Hello(None, "ring-5", BOOT, "soak", wire.VERSION, "ringo-ring",
                                        {s: "presence" for s in "nabcdefg"})))
        time.sleep(0.5)
        buf = []
        for f in fuzzed(random.Random(11), FRAMES):
            buf.append(f)
            sent["frames"] += 1
            if len(buf) >= 50:
                os.write(master, b"".join(buf))
                buf = []
        os.write(master, b"".join(buf))
        sent["valid"] = (FRAMES + 9) // 10

    async def go():
        b = Bridge([for_game("ringo")], str(tmp_path / "j.sqlite"), serial=[path])
        await b.start()
        try:
            writer = threading.Thread(target=write_all, daemon=True)
            writer.start()
            t0 = time.monotonic()
            await until(lambda: not writer.is_alive(), timeout=3000, what="every frame written")
            await until(lambda: b.sessions["ringo"].counters["events"] >= sent["valid"], timeout=120,
                        what="every valid event handled")
            await asyncio.sleep(0.5)
            took = time.monotonic() - t0
            h = b.health()
        finally:
            await b.stop()
        return h, took

    h, took = asyncio.run(go())
    stop.set()
    reader.join(5)
    os.close(master)
    os.close(slave)
    db = sqlite3.connect(str(tmp_path / "j.sqlite"))
    rows = db.execute("SELECT seq, COUNT(*) FROM events WHERE board='ring-5' AND boot=? GROUP BY seq",
                      (BOOT,)).fetchall()
    db.close()
    doubled = sum(c - 1 for _, c in rows if c > 1)
    lost = sent["valid"] - len(rows)
    restarts = sum(t["restarts"] for t in h["tasks"])
    leaked = (_fds() - fds0) + max(0, round(_rss_mb() - rss0 - 50))  # 50 MB: the interpreter's own growth
    counters = h["transports"][0]["counters"]
    soak_record("%d fuzzed frames (serial)" % FRAMES, FRAMES, FRAMES if restarts == 0 else 0, lost + doubled, leaked,
                "%.0f s, %d valid; rejected %s" % (took, sent["valid"], ", ".join(
                    "%s %d" % (k, v) for k, v in sorted(counters.items()) if k != "accepted" and v)))
    assert doubled == 0 and lost == 0 and restarts == 0
    assert counters.get("handler-error", 0) == 0 and h["counters"]["handler-errors"] == 0


@pytest.mark.soak
def test_ten_minutes_of_overload(bridge_process, tmp_path, soak_record):
    """Rounds of 30 s at 2x, 4x and 1x, each between two capacity phases of 10 s (closed loop, after the
    backlog drained): a round is judged against the mean of the capacity just before and just after it,
    so a change in what this machine gives the bridge over ten minutes (15% seen from one minute to
    the next with nothing else running) falls on both sides of the comparison. The first 10 s of
    capacity only warm up: on a new journal the bridge ran 10-20% faster than a minute later (5,743
    events/s, then 4,580-5,447), and the first round was judged against that."""
    # a broker as a table has it (its default queue): the tests' 100,000 per client would hold the bridge
    # to reading that many stale resends after each overload round
    broker = table_broker(tmp_path / "mosquitto")
    b, boards, pager = start(bridge_process, broker, tmp_path, 20, "soak")
    try:
        boards.warm_up()
        pinned = pin_apart(b, broker)  # the soak runs alone: the bridge gets a CPU at capacity and at 4x alike
        rss0 = _rss_mb(b.proc.pid)

        def capacity_now():
            drain(b, boards, pager, 60)
            return phase(b, boards, pager, 10, closed_loop=True)["goodput"]

        phase(b, boards, pager, 10, closed_loop=True)  # warm-up, not judged: a new journal ran 10-20% faster
        caps = [capacity_now()]
        t0, rounds, worst_p99, failed, slow, ratios = time.monotonic(), 0, 0.0, 0, 0, []
        while time.monotonic() - t0 < OVERLOAD_SECONDS:
            k = (2, 4, 1)[rounds % 3]
            x = phase(b, boards, pager, 30, rate=k * caps[-1])
            caps.append(capacity_now())
            rounds += 1
            ratio = x["goodput"] / ((caps[-2] + caps[-1]) / 2)
            if k > 1:
                ratios.append(ratio)
                slow += ratio < 0.9
            worst_p99 = max(worst_p99, x["p99"])
            failed += x["failed"]
            print("round %d: %dx: %.1f%% of the capacity either side (%.0f, %.0f/s); %s" % (
                rounds, k, 100 * ratio, caps[-2], caps[-1],
                {a: round(v, 3) for a, v in x.items() if a != "health"}))
        took = drain(b, boards, pager, 120)
        time.sleep(1)
        t = boards.totals()
        journalled, doubled = journal_books(b.journal, boards)
        lost = max(0, t["generated"] - t["dropped"] - journalled)
        leaked = max(0, round(_rss_mb(b.proc.pid) - rss0))
        ratios.sort()
        soak_record("%.0f s of overload (MQTT, 20 tables)" % OVERLOAD_SECONDS, rounds, rounds - slow, lost + doubled,
                    leaked, "capacity %.0f-%.0f/s%s; 2x and 4x goodput of the capacity either side: median %.0f%%, "
                    "lowest %.0f%%, rounds under 90%%: %d; page p99 worst %.0f ms, %d failed; dropped by full "
                    "outboxes %d; outboxes %s; leaked = bridge RSS growth in MB"
                    % (min(caps), max(caps), ", bridge on a CPU of its own" if pinned else "",
                       100 * ratios[len(ratios) // 2], 100 * ratios[0], slow, worst_p99 * 1000, failed, t["dropped"],
                       "drained in %.0f s" % took if took is not None else "not drained (%d held)" % t["unacked"]))
        assert doubled == 0 and lost == 0 and failed == 0 and worst_p99 < 0.25
        # The 90%, as the middle of the rounds: one round alone moves by 5% with this machine's speed
        # (all 10 at 91-102% in one run, 3 of 10 at 89.6-89.9% in the run before); none may fall far.
        assert ratios[len(ratios) // 2] >= 0.9 and ratios[0] >= 0.85, "2x and 4x rounds: %s" % ratios
    finally:
        unpin()
        pager.close()
        boards.close()
        broker.close()
