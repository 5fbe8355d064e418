"""Sustained overload against a real `battlement run`: many boards that keep their events like
firmware/app.py, a page being asked all along, and the books kept on what was lost or doubled.

Each board: numbered events in an outbox of 128 (when full, the oldest is dropped and counted in
`dropped`, as the firmware does), trimmed by the host's cumulative evack; everything sent but
unacknowledged is sent again after 1 s without progress; a heartbeat every second carries
`dropped` and the outbox length; a ping is answered as firmware/app.py does, with a hello whose
`acked` is one less than the oldest seq in the outbox, then the whole outbox again. All boards
publish through one MQTT connection (the broker does not care which client writes a board's topic),
at QoS 1 as the boards do, written as ready-made PUBLISH packets, one write per tick, and read commands through a paho client:
so the load generator costs little next to the bridge it loads (paho's publish cost about as much
CPU as the bridge's whole intake, on the same two cores).

Tables are Ringo tables of one board (ring-5): an attacker lifted from b5 and put back, forever,
so every event is journalled, ruled and lit.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import socket
import sqlite3
import statistics
import struct
import threading
import time
import urllib.request
import zlib

import paho.mqtt.client as mqtt
from battlement.link import wire
from battlement.link.messages import Beat, Hello, up_frame
from battlement.table import maps as tables

from support.procs import Broker

OUTBOX = 128
# The closed loop (capacity): a board with room in its outbox sends at most this many events a tick (5 ms;
# 800 a second, past what the bridge takes from 20 boards), so its events reach the bridge interleaved
# with the others' as at 2x, where about 3 a board a tick go out. Refilled in bursts of a whole outbox
# instead, a batch held one or two tables' events, which the bridge handles about 10% faster (fewer
# journal pages a commit, one table's state warm): capacity was measured on traffic the overload never has.
CLOSED_CHUNK = 4
RESEND = 1.0
BEAT_EVERY = 1.0


def table_broker(workdir):
    """A Mosquitto as a table has it: its default queue per client (max_queued_messages 1000; the
    tests' brokers keep 100,000 for bursts), so what a bridge that stopped reading cannot take yet
    waits there up to that and the rest is dropped, for the boards to resend."""
    broker = Broker(workdir, nodelay=True)
    broker.conf.write_text(broker.conf.read_text().replace("max_queued_messages 100000\n", ""))
    return broker.start()


def pin_apart(bridge, broker):
    """The bridge on a CPU of its own, the broker and this process (the boards, the pager) on the others,
    where the machine has two or more: a table's boards are other hardware, and on two cores the load
    generator's bursts at 2x and 4x took the bridge's CPU (0.86 of a CPU at 4x against 0.95 at capacity),
    so overload was measured against a bridge with less of the machine than at capacity. Returns
    whether it pinned."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return False
    os.sched_setaffinity(bridge.proc.pid, {cpus[0]})
    rest = set(cpus[1:])
    os.sched_setaffinity(broker.proc.pid, rest)
    _pin_threads(rest)
    return True


def unpin():
    """This process's threads on every CPU again (the tests after the soak's)."""
    _pin_threads(set(range(os.cpu_count() or 1)))


def _pin_threads(cpus):
    for tid in os.listdir("/proc/self/task"):  # every thread of this process: boards, paho, pager
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(tid), cpus)


def table_files(tmp, n, prefix="ov"):
    path = tables.default_path("ringo")
    text = pathlib.Path(path).read_text()
    out = []
    for i in range(n):
        tid = "%s-%d" % (prefix, i)
        f = pathlib.Path(tmp) / (tid + ".toml")
        f.write_text(text.replace('table = "ringo"', 'table = "%s"' % tid))
        out.append((tid, str(f)))
    return out


def start(bridge_process, mosquitto, tmp, n, prefix):
    """A bridge process serving n PlingPong tables on mosquitto, their boards and a page poller."""
    files = table_files(tmp, n, prefix="%s%d" % (prefix, mosquitto.port))
    args = []
    for _tid, f in files:
        args += ["--table", f]
    b = bridge_process(*args, "--mqtt", mosquitto.url)
    return b, Boards(mosquitto, [tid for tid, _ in files]), Pager(b.url)


class Board:
    def __init__(self, table, boot):
        self.table, self.board, self.boot = table, "ring-5", boot
        self.up = "battlement/%s/%s/up" % (table, self.board)
        topic = self.up.encode()
        self.topic = struct.pack("!H", len(topic)) + topic  # a PUBLISH packet's topic, ready to prefix
        self.head = b"event %s %x " % (self.board.encode(), boot)
        self.seq = 0
        self.outbox = []  # [(seq, frame)] oldest first
        self.sent = 0  # highest seq written
        self.acked = 0
        self.progress = time.monotonic()
        self.dropped = 0
        self.resent = 0
        self.generated = 0

    def hello(self):
        """As firmware/app.py: acked = one less than the outbox's oldest, or the last seq if it is empty."""
        acked = self.outbox[0][0] - 1 if self.outbox else self.seq
        return up_frame(Hello(self.table, self.board, self.boot, "overload-1", wire.VERSION, "ringo-ring",
                              {s: "presence" for s in "nabcdefg"}, acked=acked))

    def resync(self):
        """A ping: the hello, then the whole outbox again (on the next take)."""
        self.sent = self.acked
        self.progress = time.monotonic()
        return self.hello()

    def emit(self):
        self.seq += 1
        self.generated += 1
        # the frame up_frame(Event(..., "b", "presence", seq % 2, t_us, 0)) makes, without its cost
        body = self.head + b"%d b presence %d %d 0" % (self.seq, self.seq % 2, (self.seq * 1000) & wire.TICKS)
        frame = body + b"*%08x\n" % (zlib.crc32(body) & 0xFFFFFFFF)
        if len(self.outbox) >= OUTBOX:
            self.outbox.pop(0)
            self.dropped += 1
        self.outbox.append((self.seq, frame))

    def take(self, now):
        """Frames to write now: new events, or the unacknowledged ones again after RESEND without progress."""
        if self.outbox and self.sent >= self.outbox[0][0] and now - self.progress >= RESEND:
            self.sent = self.acked
            self.progress = now
            self.resent += len(self.outbox)
        out = [f for s, f in self.outbox if s > self.sent]
        if self.outbox:
            self.sent = self.outbox[-1][0]
        return out

    def evack(self, boot, seq):
        if boot != self.boot:
            return
        seq = min(seq, self.seq)
        if seq > self.acked:
            self.acked = seq
            self.progress = time.monotonic()
        k = 0
        while k < len(self.outbox) and self.outbox[k][0] <= seq:
            k += 1
        del self.outbox[:k]

    def beat(self, up_ms):
        return up_frame(Beat(self.table, self.board, self.boot, up_ms, self.dropped, 0, 0, len(self.outbox)))


class Boards:
    """Firmware-like boards, one per table, driven by one thread; rate() sets events/s over all of them."""

    def __init__(self, broker, tids, boot_base=0x5000, window=OUTBOX):
        """window: in the closed loop, the events a board keeps unacknowledged at most (its outbox's room)."""
        self.boards = {tid: Board(tid, boot_base + i) for i, tid in enumerate(tids)}
        self.window = window
        self.lock = threading.Lock()
        self.rate = 0.0
        self.closed_loop = False  # True or "bursts": a board makes an event only when its outbox has room (capacity)
        self._stop = threading.Event()
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="overload-boards-%d" % boot_base)
        self.c.on_message = self._on_message
        self.c.connect(broker.host, broker.port, keepalive=30)
        self.c.subscribe([("battlement/%s/ring-5/down" % t, 0) for t in tids])
        self.c.loop_start()
        self.pub = _Publisher(broker.host, broker.port, "overload-up-%d" % boot_base)
        self.t0 = time.monotonic()
        with self.lock:
            self.pub.send([(b.topic, b.hello()) for b in self.boards.values()])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _on_message(self, client, userdata, msg):
        parts = msg.topic.split("/")
        b = self.boards.get(parts[1])
        if b is None:
            return
        with contextlib.suppress(wire.WireError):
            typ, fields = wire.decode(msg.payload)
            with self.lock:
                if typ == "evack":
                    b.evack(fields[1], fields[2])
                elif typ == "ping":
                    self.pub.send([(b.topic, b.resync())])

    def _run(self):
        tick = 0.005
        owed = 0.0
        last_beat = then = time.monotonic()
        boards = list(self.boards.values())
        i = 0
        while not self._stop.is_set():
            now = time.monotonic()
            with self.lock:
                if self.closed_loop:
                    # at most CLOSED_CHUNK a board a tick, so the boards' events reach the bridge
                    # interleaved, as at a rate; "bursts": each board refills its outbox at once
                    chunk = OUTBOX if self.closed_loop == "bursts" else CLOSED_CHUNK
                    for b in boards:
                        room = min(chunk, self.window - len(b.outbox))
                        for _ in range(room):
                            b.emit()
                else:
                    owed += self.rate * (now - then)  # by the clock: a late tick makes up for itself
                    while owed >= 1:
                        boards[i % len(boards)].emit()
                        i += 1
                        owed -= 1
                frames = [(b.topic, f) for b in boards for f in b.take(now)]
                if now - last_beat >= BEAT_EVERY:
                    last_beat = now
                    frames += [(b.topic, b.beat(int((now - self.t0) * 1000))) for b in boards]
            then = now
            self.pub.send(frames)
            time.sleep(max(0.0, tick - (time.monotonic() - now)))

    def warm_up(self, timeout=20.0):
        """A few events from every board until each has been acknowledged once (its hello heard)."""
        with self.lock:
            for b in self.boards.values():
                b.emit()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if all(b.acked > 0 for b in self.boards.values()):
                    return
            time.sleep(0.05)
        raise AssertionError("not every board was acknowledged: is the bridge listening?")

    def totals(self):
        with self.lock:
            bs = list(self.boards.values())
            return {"generated": sum(b.generated for b in bs), "dropped": sum(b.dropped for b in bs),
                    "unacked": sum(len(b.outbox) for b in bs), "resent": sum(b.resent for b in bs)}

    def close(self):
        self._stop.set()
        self._thread.join(5)
        self.c.loop_stop()
        self.c.disconnect()
        self.pub.close()


class _Publisher:
    """An MQTT 3.1.1 client that only publishes, at QoS 1 as the boards do (no keepalive): a whole tick's
    frames in one write, each packet joined from ready-made parts; the broker's PUBACKs are read and
    let go by a thread of its own."""

    def __init__(self, host, port, client_id):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cid = client_id.encode()
        body = b"\x00\x04MQTT\x04\x02\x00\x00" + struct.pack("!H", len(cid)) + cid
        self.sock.sendall(b"\x10" + _length(len(body)) + body)
        ack = b""
        while len(ack) < 4:
            got = self.sock.recv(4 - len(ack))
            if not got:
                raise ConnectionError("broker closed the connection before CONNACK")
            ack += got
        if ack[0] != 0x20 or ack[3] != 0:
            raise ConnectionError("broker refused: CONNACK %r" % ack)
        self.sock.settimeout(None)
        self.lock = threading.Lock()  # the ping answers come from paho's thread
        self.mid = 0
        self._acks = threading.Thread(target=self._read_acks, daemon=True)
        self._acks.start()

    def _read_acks(self):
        with contextlib.suppress(OSError):
            while self.sock.recv(65536):
                pass

    def send(self, frames):
        if not frames:
            return
        with self.lock:
            parts = []
            mid = self.mid
            for topic, f in frames:
                mid = mid % 0xFFFF + 1
                parts.append(b"\x32" + _length(len(topic) + 2 + len(f)) + topic + struct.pack("!H", mid) + f)
            self.mid = mid
            self.sock.sendall(b"".join(parts))

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.sendall(b"\xe0\x00")  # DISCONNECT
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self._acks.join(5)


def _length(n):
    """MQTT's remaining length: 7 bits a byte, low first."""
    out = bytearray()
    while True:
        n, digit = n >> 7, n & 0x7F
        out.append(digit | (0x80 if n else 0))
        if not n:
            return bytes(out)


class Pager:
    """Asks the page (GET /api/state) every `every` seconds from a thread; keeps each answer's time."""

    def __init__(self, url, every=0.05, timeout=5.0):
        self.url, self.every, self.timeout = url, every, timeout
        self.times, self.failures = [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            t = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url + "/api/state", timeout=self.timeout) as r:
                    r.read()
                self.times.append(time.perf_counter() - t)
            except OSError:
                self.failures += 1
            self._stop.wait(self.every)

    def take(self):
        """(p50, p99, answered, failed) of the answers since the last take, in seconds."""
        times, self.times = self.times, []
        failed, self.failures = self.failures, 0
        if not times:
            return float("nan"), float("nan"), 0, failed
        times.sort()
        return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))], len(times), failed

    def close(self):
        self._stop.set()
        self._thread.join(10)


def events_handled(bridge):
    """Distinct events the bridge's sessions have handled (journalled and ruled), over every table."""
    h = bridge.get("/api/health?code=" + bridge.host_code)
    return sum(c.get("events", 0) for c in h.get("tables", {}).values()), h


def journal_books(journal, boards):
    """(journalled distinct, doubled) events of these boards' boots, read from the journal file."""
    db = sqlite3.connect("file:%s?mode=ro" % journal, uri=True)
    try:
        boots = {b.boot for b in boards.boards.values()}
        rows = db.execute("SELECT tbl, boot, seq, COUNT(*) FROM events GROUP BY tbl, boot, seq").fetchall()
    finally:
        db.close()
    mine = [r for r in rows if r[1] in boots]
    return len(mine), sum(r[3] - 1 for r in mine if r[3] > 1)


def cpu_seconds(pid):
    """CPU time (user + system) the process has used so far, from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle_jiffies():
    """(jiffies the bridge could have had, total) of the whole machine so far (/proc/stat's first line, every
    core): idle, waiting for the disk, or running niced work, which yields to the bridge."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[1] + v[3] + v[4], sum(v)


def phase(bridge, boards, pager, seconds, rate=None, closed_loop=False):
    """Run the boards for `seconds` at `rate` events/s (or closed-loop); returns what the bridge did:
    goodput (distinct events handled a second), offered, the page's p50/p99, and `per_cpu`, the events
    handled a CPU-second of the bridge (what it makes of the CPU it got, on a machine shared with others)."""
    before, _ = events_handled(bridge)
    made = boards.totals()["generated"]
    pager.take()
    cpu0 = cpu_seconds(bridge.proc.pid)
    idle0 = idle_jiffies()
    with boards.lock:
        boards.closed_loop = closed_loop
        boards.rate = rate or 0.0
    t0 = time.monotonic()
    time.sleep(seconds)
    after, h = events_handled(bridge)
    dt = time.monotonic() - t0
    cpu = cpu_seconds(bridge.proc.pid) - cpu0
    idle1 = idle_jiffies()
    idle = (os.cpu_count() or 1) * (idle1[0] - idle0[0]) / max(1, idle1[1] - idle0[1])  # cores the bridge could have had
    p50, p99, answered, failed = pager.take()
    return {"goodput": (after - before) / dt, "offered": (boards.totals()["generated"] - made) / dt,
            "p50": p50, "p99": p99, "answered": answered, "failed": failed, "cpu": cpu / dt,
            "per_cpu": (after - before) / max(cpu, 1e-9), "idle": idle, "health": h}


def drain(bridge, boards, pager, timeout):
    """Stop the load; wait until every board's outbox is acknowledged away. Returns seconds taken (None: not)."""
    with boards.lock:
        boards.closed_loop = False
        boards.rate = 0.0
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if boards.totals()["unacked"] == 0:
            return time.monotonic() - t0
        time.sleep(0.1)
    return None


def report(name, x, capacity):
    return ("%-12s offered %6.0f/s  goodput %6.0f/s = %5.1f%% of capacity  page p50 %5.1f ms p99 %6.1f ms "
            "(%d answered, %d failed)  bridge CPU %3.0f%%, %5.0f events a CPU-second"
            % (name, x["offered"], x["goodput"], 100.0 * x["goodput"] / capacity, x["p50"] * 1000,
               x["p99"] * 1000, x["answered"], x["failed"], 100 * x["cpu"], x["per_cpu"]))


def json_of(x):
    return json.dumps({k: v for k, v in x.items() if k != "health"})
