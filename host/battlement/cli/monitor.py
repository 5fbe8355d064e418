"""`battlement monitor`: watch a table's boards live while wiring it.

Prints one line per decoded message (hello, event, heartbeat, replies), what the
transport notices (ports opening, boards booting, gaps, rejected frames), and
the counters every few seconds. Ctrl-C stops it cleanly.

With --bridge it watches a running bridge instead, by asking it (GET /api/health with
the host code): a serial port can have only one reader, and the bridge is it. It
prints each frame the bridge rejected with its reason, the bridge's notes, task
restarts and board heartbeats as they come, and every counter by reason.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import time
import urllib.error
import urllib.request

from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.messages import Beat, Event, Hello, Reply
from battlement.link.transport import args as transport_args
from battlement.link.transport.base import in_order, named

EPILOG = """examples:
  battlement monitor --serial /dev/ttyACM0
  battlement monitor --serial /dev/ttyACM0 --serial /dev/ttyACM1
  battlement monitor --mqtt mqtt://192.168.1.10 --table hall-1
  battlement monitor --mqtt mqtts://user:secret@broker.example:8883
  battlement monitor --serial /dev/ttyACM0 --table plingpong      # checks with table plingpong's keys
  battlement monitor --bridge http://127.0.0.1:8000 --code H    # a running bridge (its host code)

With a table's keys (found as every command finds them: <keys dir>/<table>.keys.toml, the keys dir
hardware/tables unless --keys-dir) the monitor checks every frame's MAC: a forged or unsigned frame
from a board with a key is rejected and shown as `mac`. --table names the table (with --serial too);
on MQTT without --table, every table with a keys file there is checked. Without keys it says so, and
shows signed frames unverified. On MQTT, or with keys, it does not acknowledge events: that is the
bridge's (an acknowledged event leaves its board's outbox). Alone on a serial port without keys it
acknowledges, as nothing else can read that port.

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
    transport_args.add_arguments(p, required=False)
    p.add_argument("--bridge", metavar="URL", help="watch a running bridge (its page's address) instead of the "
                   "boards: the bridge keeps the ports, the monitor asks it")
    p.add_argument("--code", metavar="H", help="with --bridge: the bridge's host code")
    boardkeys.add_argument(p)
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
    boards = " ".join("%s(%s)" % (named(k), "up" if t.online.get(k) else "down")
                      for k in sorted(t.boards, key=in_order)) or "none yet"
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


def _ask(url: str, code: str) -> dict:
    req = urllib.request.Request(url.rstrip("/") + "/api/health", headers={"Authorization": "Bearer " + code})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            why = json.loads(e.read()).get("error", e.reason)
        except ValueError:
            why = e.reason
        raise UserError("the bridge at %s answered %d: %s" % (url, e.code, why)) from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise ConnectionError("cannot reach the bridge at %s (%s): is 'battlement run' serving there?"
                              % (url, reason)) from None


def bridge_counters_line(h: dict) -> str:
    parts = []
    for t in h.get("transports", []):
        c = t["counters"]
        rejected = " ".join("%s %d" % (k, c[k]) for k in sorted(c) if k != "accepted" and c[k]) or "none"
        parts.append("%s: accepted %d | rejected/noted: %s" % (t["name"], c.get("accepted", 0), rejected))
    for table, c in sorted(h.get("router", {}).items()):
        parts.append("router %s: %s" % (table, " ".join("%s %d" % (k, c[k]) for k in sorted(c)) or "none"))
    bridge = {**h.get("counters", {}), **{"web." + k: v for k, v in h.get("web", {}).items()}}
    parts.append("bridge: %s" % (" ".join("%s %d" % (k, v) for k, v in sorted(bridge.items()) if v) or "none"))
    return "== " + " || ".join(parts)


def board_lines(h: dict, seen: dict) -> list[str]:
    """What changed on each board since the last look (seen is kept between looks): online or offline,
    a new hello, each sensor's new triggers (a beam's width beside its threshold), unknown boards."""
    out = []
    bh = h.get("board_health") or {}
    for b in bh.get("boards", []):
        name = "%s/%s" % (b["table"], b["board"])
        hello = b.get("hello") or {}
        state = (b["state"], hello.get("boot"))
        if seen.get(name) != state:
            words = "board %s %s" % (name, b["state"])
            if hello:
                words += " (boot %s, firmware %s, profile %s)" % (hello["boot"], hello["firmware"], hello["profile"])
            if b.get("missing"):
                words += "; the map has sensor(s) it lacks: " + ", ".join(b["missing"])
            out.append(words)
            seen[name] = state
        for s in b.get("sensors", []):
            key = (name, s["id"])
            if s["count"] and seen.get(key) != s["count"]:
                seen[key] = s["count"]
                words = "board %s sensor %s%s %s = %s" % (name, s["id"], " (%s)" % s["object"] if s["object"] else "",
                                                          s["kind"], s["last_value"])
                if s["kind"] == "beam" and s.get("widths_us"):
                    words += ", width %.1f ms (a ball counts from %.1f ms)" % (s["widths_us"][-1] / 1000.0,
                                                                                s["min_pulse_us"] / 1000.0)
                out.append(words)
    for u in bh.get("unknown", []):
        if seen.get(("unknown", u["board"])) is None:
            seen[("unknown", u["board"])] = True
            out.append(u["words"])
    return out


def boards_line(h: dict) -> str:
    parts = []
    for b in (h.get("board_health") or {}).get("boards", []):
        beat = b.get("beat")
        parts.append("%s/%s %s%s" % (b["table"], b["board"], b["state"], (" outbox %d queued %d dropped %d reconnects %d"
                     % (beat["outbox"], beat["queued"], beat["dropped"], beat["reconnects"])) if beat else ""))
    return "== boards: " + (" | ".join(parts) or "none")


def watch_bridge(url: str, code: str, every: float = 5.0, seconds: float = 0, poll: float = 1.0) -> int:
    """Print what a running bridge reports until Ctrl-C or `seconds`; returns the rejected frames seen."""
    seen_rejected: set = set()
    notes: list[str] = []
    tasks: dict[str, str] = {}
    beats: dict[tuple, int] = {}
    boards_seen: dict = {}
    shown = 0
    h = _ask(url, code)  # the first one fails loudly: wrong address or code
    _say("-- watching the bridge at %s (Ctrl-C to stop)" % url)
    start = next_counters = time.monotonic()
    first = True
    while True:
        for t in h.get("transports", []):
            for r in t.get("rejected", []):
                key = (t["name"], r["at"], r["text"])
                if key not in seen_rejected:
                    seen_rejected.add(key)
                    shown += 1
                    _say("-- %s: %s" % (t["name"], r["text"]))
        new_notes = h.get("notes", [])
        if not first:  # the notes are a window of the last 20: print those past what we had
            k = len(notes)
            while k and new_notes[:k] != notes[-k:]:
                k -= 1
            for n in new_notes[k:]:
                _say("-- " + n)
        notes = new_notes
        for task in h.get("tasks", []):
            if tasks.get(task["name"]) != task["words"] and (task["restarts"] or not first):
                _say("-- task " + task["words"])
            tasks[task["name"]] = task["words"]
        for b in h.get("boards", []):
            board = (b["table"], b["board"])
            if b["dropped"] != beats.get(board, 0):
                _say("-- board %s/%s: outbox %d, dropped %d" % (b["table"], b["board"], b["outbox"], b["dropped"]))
            beats[board] = b["dropped"]
        for line in board_lines(h, boards_seen):
            _say("-- " + line)
        first = False
        now = time.monotonic()
        if now >= next_counters:
            _say(bridge_counters_line(h))
            _say(boards_line(h))
            next_counters = now + every
        if seconds and now - start >= seconds:
            _say(bridge_counters_line(h))
            return shown
        time.sleep(poll)
        try:
            h = _ask(url, code)
        except ConnectionError as e:
            _say("-- %s; asking again" % e)
            time.sleep(poll)


def use_keys(t, keys_dir: str | None, table: str | None, mqtt: bool) -> str:
    """Give transport t the keys of the table (of every table with keys, on MQTT without one), found as
    every command finds them; returns what the monitor checks, in words."""
    found = {table: boardkeys.of_table(table, None, keys_dir)} if table else (
        boardkeys.all_tables(keys_dir) if mqtt else {})
    found = {k: tk for k, tk in found.items() if tk.keys}
    if not found:
        _unsigned_notes(t)
        where = boardkeys.path_of(table, keys_dir) if table else "a table's keys: give --table T"
        said = "signatures: not checked (no keys: %s): frames are shown as they come, a signed one unverified" % where
        if mqtt:  # a bridge on the broker may be down or behind: what we acknowledged it would never journal
            t.acknowledges = False
            said += "; events are not acknowledged here (the bridge does)"
        return said
    boardkeys.give(t, found, mqtt)
    t.acknowledges = False  # the bridge acknowledges what it journalled; a watcher must not
    return ("signatures: checked with the keys of %d board(s) from %s (frames without the right MAC are "
            "rejected as mac); events are not acknowledged here"
            % (sum(len(tk.keys) for tk in found.values()), ", ".join(str(tk.path) for tk in found.values())))


def _unsigned_notes(t) -> None:
    """Without keys: say once per board that its frames carry a MAC this monitor cannot check."""
    inner, said = t._handle_line, set()

    def handle_line(line, link, *args):
        if b" ~" in line:
            board = line.split(b" ", 2)[1][:32] if line.count(b" ") >= 2 else b"?"
            if board not in said:
                said.add(board)
                _say("-- board %s signs its frames: their MAC is not checked here (no key; --table T)"
                     % board.decode("ascii", "replace"))
        inner(line, link, *args)
    t._handle_line = handle_line


def run(args) -> int:
    if args.every <= 0:
        raise UserError("--every must be a positive number of seconds, got %s" % args.every)
    if args.bridge:
        if args.serial or args.mqtt:
            raise UserError("--bridge watches a running bridge: leave out --serial and --mqtt (the bridge has them)")
        if not args.code:
            raise UserError("--bridge needs --code, the host code 'battlement run' printed")
        try:
            watch_bridge(args.bridge, args.code, args.every, args.seconds)
        except ConnectionError as e:
            raise UserError(str(e)) from None
        return 0
    if args.code:
        raise UserError("--code goes with --bridge")
    table = args.table
    if args.serial:  # on serial, --table only names whose keys check the frames (a board's id names it)
        args.table = None
    t = transport_args.from_args(args)
    if t is None:
        raise UserError("what to watch: --serial PORT, --mqtt URL, or a running bridge with --bridge URL --code H")
    _say("-- monitoring %s (Ctrl-C to stop)" % transport_args.describe(args))
    _say("-- " + use_keys(t, args.keys_dir, table, bool(args.mqtt)))
    asyncio.run(watch(t, args.every, args.count, args.seconds))
    return 0
