"""`battlement monitor`: watch a table's boards live while wiring it.

Prints one line per decoded message (hello, event, heartbeat, replies), what the
transport notices (ports opening, boards booting, gaps, rejected frames), and
the counters every few seconds. Ctrl-C stops it cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import time

from battlement.errors import UserError
from battlement.messages import Beat, Event, Hello, Reply
from battlement.transport import args as transport_args

EPILOG = """examples:
  battlement monitor --serial /dev/ttyACM0
  battlement monitor --serial /dev/ttyACM0 --serial /dev/ttyACM1
  battlement monitor --mqtt mqtt://192.168.1.10 --table hall-1
  battlement monitor --mqtt mqtts://user:secret@broker.example:8883

Lines starting with '--' are what the host noticed (ports, boots, gaps, rejects);
lines starting with '==' are the counters: accepted messages, then rejections by reason.
"""


def register(sub) -> None:
    p = sub.add_parser(
        "monitor",
        help="print live decoded events and counters from boards (serial or MQTT)",
        description="Print every message the boards send, decoded, with rejection counters. "
        "Use it while wiring a table: break a beam and watch its event appear.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    transport_args.add_arguments(p)
    p.add_argument("--every", type=float, default=5.0, metavar="SECONDS", help="print counters this often (default 5)")
    p.add_argument("--count", type=int, default=0, metavar="N", help="stop after N messages (default: run until Ctrl-C)")
    p.add_argument("--seconds", type=float, default=0, help="stop after this many seconds (default: until Ctrl-C)")
    p.set_defaults(func=run)


def describe(msg) -> str:
    """One human-readable line for a message."""
    where = ("%s/%s" % (msg.table, msg.board)) if msg.table else msg.board
    if isinstance(msg, Event):
        text = "event  #%d %s %s %s" % (msg.seq, msg.sensor, msg.kind, msg.value)
        if msg.kind == "beam":
            text += " width %.1f ms" % (msg.width_us / 1000.0)
        return "%-16s %s  t=%dus" % (where, text, msg.t_us)
    if isinstance(msg, Hello):
        sensors = " ".join("%s:%s" % (k, msg.sensors[k]) for k in sorted(msg.sensors)) or "(no sensors)"
        port = ("  on " + msg.port) if msg.port else ""
        return "%-16s hello  boot %x firmware %s profile %s v%d%s  sensors %s" % (
            where, msg.boot, msg.firmware, msg.profile, msg.proto, port, sensors)
    if isinstance(msg, Beat):
        return "%-16s beat   up %.1f s  outbox %d queued %d dropped %d reconnects %d" % (
            where, msg.uptime_ms / 1000.0, msg.outbox, msg.queued, msg.dropped, msg.reconnects)
    if isinstance(msg, Reply):
        return "%-16s %s" % (where, ("ack    #%d" % msg.msgid) if msg.ok else "error  #%d %s" % (msg.msgid, msg.reason))
    return "%-16s %r" % (where, msg)


def counters_line(t) -> str:
    c = t.counters
    rejected = " ".join("%s %d" % (k, c[k]) for k in sorted(c) if k != "accepted" and c[k]) or "none"
    boards = " ".join("%s(%s)" % (b, "up" if t.online.get(b) else "down") for b in sorted(t.boards)) or "none yet"
    links = " ".join("%s: %s" % (k, t.links[k]) for k in sorted(t.links))
    return "== accepted %d | rejected/noted: %s | boards: %s | %s" % (c["accepted"], rejected, boards, links)


def _say(line: str) -> None:
    print("%s %s" % (time.strftime("%H:%M:%S"), line), flush=True)


async def watch(t, every: float = 5.0, count: int = 0, seconds: float = 0) -> int:
    """Print messages from transport t until Ctrl-C/SIGTERM, count messages or seconds; returns messages seen."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    t.log = lambda text: _say("-- " + text)
    seen = 0
    await t.start()
    try:
        deadline = loop.time() + seconds if seconds else None
        next_counters = loop.time() + every
        while not stop.is_set() and not (count and seen >= count):
            now = loop.time()
            if deadline is not None and now >= deadline:
                break
            wait = next_counters - now
            if deadline is not None:
                wait = min(wait, deadline - now)
            getter = asyncio.ensure_future(t.get())
            stopper = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({getter, stopper}, timeout=max(0.0, wait), return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if getter in done:
                seen += 1
                _say(describe(getter.result()))
            else:
                getter.cancel()
            if loop.time() >= next_counters:
                _say(counters_line(t))
                next_counters = loop.time() + every
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        _say(counters_line(t))
        await t.stop()
    return seen


def run(args) -> int:
    if args.every <= 0:
        raise UserError("--every must be a positive number of seconds, got %s" % args.every)
    t = transport_args.from_args(args)
    _say("-- monitoring %s (Ctrl-C to stop)" % transport_args.describe(args))
    asyncio.run(watch(t, args.every, args.count, args.seconds))
    return 0
