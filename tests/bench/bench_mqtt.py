"""MQTT clients for the bridge, side by side on one private loopback Mosquitto, same run.

100 tables: one publisher process writes a burst of event frames for 100 tables
(battlement/t000..t099/ring-5/up) from pre-built packets on a bare socket, so the
publisher costs next to nothing and the broker feeds the subscriber as fast as it
acknowledges. The burst goes at QoS 1, as boards publish their events (each one then
arrives at QoS 1 and is acknowledged), and again at QoS 0 (no acknowledgements: the
clients' reading alone). Each subscriber runs in a process of its own, subscribed at
QoS 1 to battlement/+/+/up, and reports the events it took per second from the first
event to the last:

- raw paho: paho-mqtt's own network thread counting in on_message (the baseline);
- gmqtt: native asyncio, MQTT 5 (counting in on_message);
- aiomqtt: asyncio on paho, MQTT 5 (counting `async for message in client.messages`);
- MqttTransport: the bridge's transport on its library, every frame decoded, deduped,
  queued and taken with get(), evacks published back to each board;
- the bridge: the whole of it as `battlement run --mqtt` runs it (Home Assistant discovery on,
  its default): every event journalled, ruled, lit (LED commands to the board), evacked after
  its commit and published to Home Assistant. The events are Ringo's: a piece lifted from b5
  and put back, over and over, on each of the 100 tables. Target: >= 0.5 of raw paho at QoS 1 and at
  QoS 0 alike, in every round (docs/bridge.md, "Capacity").

Each path is measured in rounds that alternate with the others (best of the rounds),
each printed beside raw paho's rate and the ratio to it (BENCH_MQTT_PATHS and BENCH_MQTT_QOS: main()).

Then one board's latency: a QoS 1 event published by a board client, time until it comes
out of MqttTransport (decoded and deduped) beside a raw paho subscriber's on_message.
"""

import asyncio
import importlib.util
import os
import queue
import socket
import struct
import subprocess
import sys
import threading
import time

import bench_bridge
import benchutil
import gmqtt
import paho.mqtt.client as mqtt
from battlement.link.messages import Event, Hello
from battlement.link.transport import MqttTransport
from battlement.link.transport.mqtt import _Client
from gmqtt.mqtt.constants import MQTTv50
from gmqtt.mqtt.package import CommandWithMidPacket, PublishPacket
from gmqtt.mqtt.protocol import MQTTProtocol
from gmqtt.mqtt.utils import IdGenerator
from support.board import MqttBoard
from support.procs import Broker

TABLES = 100
PER_TABLE = 150  # events per table in a burst
ROUNDS = 3
PINGS = 1000
PY = sys.executable
HERE = os.path.dirname(os.path.abspath(__file__))
PATHS = ("paho", "gmqtt", "aiomqtt", "transport", "bridge")
NAMES = {"paho": "raw paho", "gmqtt": "gmqtt", "aiomqtt": "aiomqtt",
         "transport": "MqttTransport", "bridge": "whole bridge"}
TARGET = {"bridge": 0.5}  # the whole bridge at 100 tables, beside raw paho, in every round
FILTER = "battlement/+/+/up"


# ---------------------------------------------------------------- the publisher: pre-built packets on a bare socket


def _str(b):
    return struct.pack("!H", len(b)) + b


def _packet(first, body):
    n, out = len(body), bytearray((first,))
    while True:
        n, d = divmod(n, 128)
        out.append(d | (0x80 if n else 0))
        if not n:
            return bytes(out) + body


def table_frames(i, per):
    """Table i's Ringo board: its hello, then per events (the attacker on b5 lifted, put back, ...)."""
    return bench_bridge.frames(boot=11 + i, n=per)


def publisher(port, tables, per, qos):
    """Hellos first (on 'hello' from stdin), then the burst (on 'go') at qos, interleaved across tables."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(_packet(0x10, _str(b"MQTT") + bytes((4, 2)) + struct.pack("!H", 60) + _str(b"bench-pub")))
    threading.Thread(target=lambda: [None for _ in iter(lambda: s.recv(65536), b"")], daemon=True).start()
    pid = [0]

    def pub(topic, payload, qos=1):
        if not qos:
            return _packet(0x30, _str(topic) + payload)
        pid[0] = pid[0] % 65535 + 1
        return _packet(0x32, _str(topic) + struct.pack("!H", pid[0]) + payload)

    hellos, bursts = [], []
    for i in range(tables):
        t = b"battlement/t%03d/ring-5/up" % i
        hello, evs = table_frames(i, per)
        hellos.append(pub(t, hello))
        bursts.append([(t, e) for e in evs])
    burst = b"".join(pub(t, e, qos) for k in range(per) for t, e in (b[k] for b in bursts))
    print("ready", flush=True)
    sys.stdin.readline()
    s.sendall(b"".join(hellos))
    print("hellos", flush=True)
    sys.stdin.readline()
    s.sendall(burst)
    sys.stdin.readline()  # stay connected until told
    s.close()


# ---------------------------------------------------------------- the subscribers, each in a process of its own


class Counter:
    """Counts event frames; done when all of them are in."""

    def __init__(self, total):
        self.total, self.n, self.t0, self.t1 = total, 0, 0.0, 0.0

    def take(self, payload):
        if payload[:5] == b"event":
            if not self.n:
                self.t0 = time.perf_counter()
            self.n += 1
            if self.n == self.total:
                self.t1 = time.perf_counter()

    def report(self):
        secs = (self.t1 or time.perf_counter()) - self.t0
        print("%d %.6f" % (self.n, secs), flush=True)


def sub_paho(port, total):
    got = Counter(total)
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-paho")
    c.on_message = lambda cl, u, m: got.take(m.payload)
    c.on_connect = lambda cl, u, f, rc, p: cl.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.connect("127.0.0.1", port)
    c.subscribe(FILTER, qos=1)
    c.loop_start()
    time.sleep(0.3)
    print("ready", flush=True)
    deadline = time.time() + 60
    while not got.t1 and time.time() < deadline:
        time.sleep(0.005)
    c.loop_stop()
    got.report()


async def _wait(got, deadline=60):
    end = time.time() + deadline
    while not got.t1 and time.time() < end:
        await asyncio.sleep(0.005)


async def sub_gmqtt(port, total):
    import gmqtt

    got = Counter(total)
    c = gmqtt.Client("bench-gmqtt")
    c.on_message = lambda cl, topic, payload, qos, props: got.take(payload)
    await c.connect("127.0.0.1", port)
    c.subscribe(FILTER, qos=1)
    await asyncio.sleep(0.3)
    print("ready", flush=True)
    await _wait(got)
    got.report()
    await c.disconnect()


async def sub_aiomqtt(port, total):
    import aiomqtt

    got = Counter(total)
    opts = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    async with aiomqtt.Client("127.0.0.1", port, identifier="bench-aiomqtt", protocol=aiomqtt.ProtocolVersion.V5,
                              socket_options=opts) as c:
        await c.subscribe(FILTER, qos=1)
        print("ready", flush=True)

        async def take():
            async for m in c.messages:
                got.take(m.payload)

        task = asyncio.create_task(take())
        await _wait(got)
        task.cancel()
    got.report()


async def sub_transport(port, total):
    got = Counter(total)
    t = MqttTransport("mqtt://127.0.0.1:%d" % port)
    await t.start()
    print("ready", flush=True)

    async def take():
        while True:
            m = await t.get()
            if isinstance(m, Event):
                got.take(b"event")

    task = asyncio.create_task(take())
    await _wait(got)
    task.cancel()
    got.report()
    await t.stop()


async def sub_bridge(port, total):
    import tempfile

    from battlement.bridge import Bridge

    with tempfile.TemporaryDirectory() as d:
        b = Bridge([bench_bridge.ringo_map("t%03d" % i) for i in range(TABLES)], os.path.join(d, "j.sqlite"),
                   mqtt="mqtt://127.0.0.1:%d" % port)
        b._note = lambda text: None  # a hundred boards saying hello: not what is measured
        await b.start()  # flow control on, as users get it: behind, the bridge stops reading, the broker holds the rest
        print("ready", flush=True)
        sessions = list(b.sessions.values())
        count = lambda: sum(s.counters["events"] for s in sessions)
        while not count():  # polled: a hook per event would be part of what is measured
            await asyncio.sleep(0.002)
        t0, first = time.perf_counter(), count()
        end = t0 + 60
        while count() < total and time.perf_counter() < end:
            await asyncio.sleep(0.002)
        secs = time.perf_counter() - t0
        n = count()
        # what did not reach the boards or Home Assistant, or was refused (the MQTT transport's counters)
        lost = {k: v for t in b.transports for k, v in t.counters.items()
                if k in ("dropped-inflight", "expired", "queue-full") and v}
        # events after the first poll, over the time since it: the rate from the first event to the last
        print("%d %.6f %s" % (n, secs * n / max(1, n - first), ",".join("%s=%d" % kv for kv in sorted(lost.items()))),
              flush=True)
        await b.stop()


def subscriber(kind, port, total):
    if kind == "paho":
        sub_paho(port, total)
    else:
        asyncio.run(globals()["sub_" + kind](port, total))


# ---------------------------------------------------------------- one round of one path


def _spawn(*args):
    p = subprocess.Popen([PY, os.path.abspath(__file__), *map(str, args)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, cwd=HERE)
    line = p.stdout.readline().strip()
    if line != "ready":
        p.kill()
        raise RuntimeError("%s did not start: %r" % (args[0], line))
    return p


def _say(p, word):
    p.stdin.write(word + "\n")
    p.stdin.flush()


def burst_rate(broker, kind, qos):
    total = TABLES * PER_TABLE
    sub = _spawn("sub", kind, broker.port, total)
    pub = _spawn("pub", broker.port, TABLES, PER_TABLE, qos)
    try:
        _say(pub, "hello")
        assert pub.stdout.readline().strip() == "hellos"
        time.sleep(1.0 if kind == "bridge" else 0.5)  # every board's hello in (events count only after it)
        _say(pub, "go")
        n, secs, *lost = sub.stdout.readline().split()
        sub.wait(20)
    finally:
        _say(pub, "bye")
        pub.wait(10)
        if sub.poll() is None:
            sub.kill()
    if int(n) != total:
        print("         %s: %d of %d events in 60 s" % (NAMES[kind], int(n), total), flush=True)
    if lost:
        print("         %s: lost on the way: %s" % (NAMES[kind], lost[0]), flush=True)
    return int(n) / float(secs)


# ---------------------------------------------------------------- the two packets the transport makes itself


class _Wire:
    """A connection whose packets go nowhere (counted): what a client writes; what it reads, dispatched
    to its handler as gmqtt's connection does."""

    proto_ver = MQTTv50

    def __init__(self, client):
        self.id_generator = IdGenerator(max=65535)
        self.n = 0
        self._last_data_in = self._last_data_out = 0.0
        self._connection = self  # as a protocol: its connection
        self._transport = self  # as a connection: its transport (the client writes there)
        self.handler = client._package_handler
        self.handler._connection = client._connection = self
        client._connection_state.protocol_version = MQTTv50
        client.on_message = lambda *a: None

    def send_package(self, pkg):
        self.n += 1

    write = send_package

    def send_command_with_mid(self, cmd, mid, dup, reason_code=0):  # gmqtt's PUBACK, built as gmqtt does
        self.send_package(CommandWithMidPacket.build_package(cmd, mid, dup, reason_code, self.proto_ver))

    def put_package(self, pkg):
        gmqtt.mqtt.connection.MQTTConnection.put_package(self, pkg)

    @property
    def _handler(self):
        return self.handler


def packet_costs(n=20_000, rounds=5):
    """Seconds per message of the PUBLISH out (a board command, QoS 1 with its expiry) and of a QoS 1
    PUBLISH in (a board's event, read from a buffer of them) with its PUBACK: gmqtt's general path
    beside the transport's own, best of alternating rounds."""
    c = _Client("bench-packets", {"superseded": 0, "dropped-inflight": 0})
    g = gmqtt.Client("bench-gmqtt-packets")
    ours, theirs = _Wire(c), _Wire(g)
    gen, storage = c._package_handler.id_generator, c._persistent_storage
    topic, frame = "battlement/t001/ring-5/down", b"led ring-5 12345 b5 solid ff00 0*0a1b2c3d\n"
    _hello, evs = table_frames(1, 100)
    up = b"battlement/t001/ring-5/up"
    reads = b"".join(_packet(0x32, _str(up) + struct.pack("!H", k + 1) + b"\x00" + e) for k, e in enumerate(evs))
    per_read = len(evs)

    def gmqtt_out():
        for _ in range(n):
            mid, pkg = PublishPacket.build_package(gmqtt.Message(topic, frame, qos=1, message_expiry_interval=10), theirs)
            theirs.send_package(pkg)
            storage.push_message(mid, pkg)
            theirs.id_generator.free_id(mid)
            storage.remove_message_by_mid(mid)

    def ours_out():
        for _ in range(n):
            msg = [topic, frame, 1, False, time.monotonic() + 10, None]
            c._try(msg)
            mid = next(iter(c.sent))
            del c.sent[mid]
            gen.free_id(mid)
            storage.remove_message_by_mid(mid)

    def gmqtt_in():
        for _ in range(n // per_read):
            MQTTProtocol._read_packet(theirs, reads)

    def ours_in():
        for _ in range(n // per_read):
            c._read(ours, reads, None)

    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, fn, per in (("gmqtt out", gmqtt_out, n), ("ours out", ours_out, n),
                              ("gmqtt in", gmqtt_in, n // per_read * per_read),
                              ("ours in", ours_in, n // per_read * per_read)):
            t0 = time.perf_counter()
            fn()
            best[name] = min(best.get(name, 1.0), (time.perf_counter() - t0) / per)
    assert ours.n == theirs.n, "every PUBLISH read was acknowledged on both paths"
    return best


def packets_line():
    b = packet_costs()
    us = lambda k: b[k] * 1e6
    print("packets  PUBLISH out (a board command, QoS 1, expiry) %.2f us  (gmqtt's Message + build_package %.2f us, "
          "ratio %.2f);  QoS 1 PUBLISH read + PUBACK %.2f us  (gmqtt's read and dispatch %.2f us, ratio %.2f)"
          % (us("ours out"), us("gmqtt out"), b["ours out"] / b["gmqtt out"], us("ours in"), us("gmqtt in"),
             b["ours in"] / b["gmqtt in"]), flush=True)


# ---------------------------------------------------------------- latency of one board


def raw_latency(broker, board):
    lat = []
    got: queue.Queue = queue.Queue()
    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    sub.on_message = lambda c, u, m: got.put(m.payload)
    sub.connect(broker.host, broker.port)
    sub.subscribe("battlement/raw/+/up", qos=1)
    sub.loop_start()
    try:
        time.sleep(0.3)
        board.publish(board.hello_frame())
        got.get(timeout=10)
        for _ in range(PINGS):
            frame = board.event_frame()
            t0 = time.perf_counter()
            board.publish(frame)
            got.get(timeout=10)
            lat.append(time.perf_counter() - t0)
    finally:
        sub.loop_stop()
        sub.disconnect()
    return lat


async def transport_latency(broker, board):
    lat = []
    t = MqttTransport(broker.url, table="bench")
    await t.start()
    try:
        await asyncio.sleep(0.3)
        board.publish(board.hello_frame())
        while not isinstance(await t.get(), Hello):  # skip anything but our board's hello
            pass
        for _ in range(PINGS):
            frame = board.event_frame()
            t0 = time.perf_counter()
            board.publish(frame)
            await t.get()
            lat.append(time.perf_counter() - t0)
    finally:
        await t.stop()
    return lat


def latency_line(name, lat, raw_lat):
    p50, p99, r50, r99 = (benchutil.ms(benchutil.pct(s, q)) for s in (lat, raw_lat) for q in (0.5, 0.99))
    print("%-14s one event, p50 %.3f ms p99 %.3f ms  (raw paho p50 %.3f p99 %.3f, overhead p99 %+.3f ms)"
          % (name, p50, p99, r50, r99, p99 - r99), flush=True)


def main():
    # BENCH_MQTT_PATHS=bridge (raw paho, the baseline, always runs), BENCH_MQTT_QOS=0: those rows alone
    chosen = [k for k in os.environ.get("BENCH_MQTT_PATHS", "").split(",") if k]
    if set(chosen) - set(PATHS):
        sys.exit("BENCH_MQTT_PATHS=%s: the paths are %s" % (",".join(chosen), ", ".join(PATHS)))
    rows_only = bool(chosen) or "BENCH_MQTT_QOS" in os.environ
    if not rows_only:
        packets_line()
    paths = [k for k in PATHS if (k != "aiomqtt" or importlib.util.find_spec("aiomqtt"))
             and (not chosen or k == "paho" or k in chosen)]
    if "aiomqtt" not in paths and not chosen:  # measured once to choose the library (docs/bridge.md)
        print("  (aiomqtt is not installed: its row is left out; `pip install aiomqtt` to compare)", flush=True)
    broker = Broker(nodelay=True).start()  # as docs/bridge.md advises; one broker for every path
    try:
        for qos in [int(q) for q in os.environ.get("BENCH_MQTT_QOS", "1,0").split(",")]:
            rounds: dict[str, list[float]] = {k: [] for k in paths}
            for _ in range(ROUNDS):
                for kind in paths:
                    rounds[kind].append(burst_rate(broker, kind, qos))
            best = {k: max(r) for k, r in rounds.items()}
            raw = best["paho"]
            print("%d tables, %d events each in one burst published at QoS %d, best of %d alternating rounds:"
                  % (TABLES, PER_TABLE, qos, ROUNDS), flush=True)
            for kind in paths:
                each = ""
                if kind in TARGET:  # every round beside the raw paho round of the same pass, for "reliably"
                    each = "; target >= %.1f; rounds %s" % (TARGET[kind], " ".join(
                        "%.2f" % (r / p) for r, p in zip(rounds[kind], rounds["paho"])))
                print("  %-14s events/s %9s  (raw paho %s, ratio %.2f%s)"
                      % (NAMES[kind], f"{best[kind]:,.0f}", f"{raw:,.0f}", best[kind] / raw, each), flush=True)
        if rows_only:
            return
        raw_board = MqttBoard(broker.port, "raw", board="tower-1").start()
        board = MqttBoard(broker.port, "bench", board="tower-1").start()
        try:
            raw_lat = min((raw_latency(broker, raw_board) for _ in range(2)), key=lambda s: benchutil.pct(s, 0.99))
            lat = min((asyncio.run(transport_latency(broker, board)) for _ in range(2)),
                      key=lambda s: benchutil.pct(s, 0.99))
        finally:
            raw_board.stop()
            board.stop()
        latency_line("MqttTransport", lat, raw_lat)
    finally:
        broker.close()


if __name__ == "__main__":
    sys.path[:0] = [os.path.join(benchutil.ROOT, "tests"), os.path.join(benchutil.ROOT, "host")]
    if sys.argv[1:2] == ["sub"]:
        subscriber(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1:2] == ["pub"]:
        publisher(*map(int, sys.argv[2:6]))
    else:
        main()
