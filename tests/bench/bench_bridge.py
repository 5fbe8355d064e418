"""The bridge: overhead from an event arriving to its LED command leaving, tables per broker, start-up time.

Each figure is printed beside a baseline measured in the same run:
- latency (serial pty and MQTT): a board writes an event (a Ringo piece lifted, or put back), time
  until the LED command the rules caused for that cell comes back to the board. Baseline: the same transport with a bare
  handler that answers every event with an LED command at once (no map, journal, rules or effects).
- throughput: 100 Ringo tables on one Mosquitto, one board each, bursts of sensor changes from a
  publisher process; events/s fully handled (journalled, ruled, lit). Baseline: a raw paho
  subscriber process counting the same burst. Best of three alternating rounds each.
- metrics: the serial latency of events with the /metrics hooks on (the default) beside events of the
  same run with them off (every other lift-and-put-back pair), and the hooks' cost per batch (timed alone) beside the whole bridge's median time per event.
- signing: the serial latency with the table's keys file (every frame from the board carries its
  MAC, checked; every LED command is signed) beside the same bridge unsigned, alternating rounds;
  and the intake alone (frame -> accepted event) signed beside unsigned, per frame.
- start-up: `battlement run --simulate` until the page answers. Baseline: a bare Starlette app on
  uvicorn, same interpreter.
"""

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import benchutil
from battlement.bridge import Bridge
from battlement.link import wire
from battlement.link.messages import Event, Hello, Led, up_frame
from battlement.table import maps as tables
from support.procs import Broker, free_port

EVENTS = 400
TABLES = 100
PER_TABLE = 100  # events per table in the throughput burst
PY = sys.executable


KEY = bytes(range(16))  # the signed rounds' board key


def ringo_map(tid, keys_dir=None):
    """The Ringo map as table tid; with keys_dir, written there with its table's keys file (give the bridge
    that keys_dir)."""
    path = tables.default_path("ringo")
    with open(path) as f:
        text = f.read().replace('table = "ringo"', 'table = "%s"' % tid)
    if keys_dir is not None:
        path = os.path.join(keys_dir, tid + ".toml")
        with open(path, "w") as f:
            f.write(text)
        keys = os.path.join(keys_dir, tid + ".keys.toml")
        with open(keys, "w") as f:
            f.write('[keys]\nring-5 = "%s"\n' % KEY.hex())
        os.chmod(keys, 0o600)  # a keys file others can read is refused
    return tables.parse(text, path)


def frames(board="ring-5", boot=7, n=EVENTS, sensor="b", key=None, table="bench"):
    """A Ringo attacker lifted from b5 and put back, n times: every lift lights its destinations.
    key: signed as a board of `table` with that key signs them (made beforehand: the board's cost is not timed)."""
    hello = up_frame(Hello(None, board, boot, "bench", wire.VERSION, "ringo-ring",
                           {s: "presence" for s in "nabcdefg"}))
    evs = [up_frame(Event(None, board, boot, i + 1, sensor, "presence", i % 2, i, 0)) for i in range(n)]
    if key is not None:
        hello, evs = wire.sign(hello, key, table, board, boot), [wire.sign(f, key, table, board, boot) for f in evs]
    return hello, evs


# ---------------------------------------------------------------- latency over a pty


class PtyBoard:
    """The board's end of a pty, in a thread: writes frames, timestamps the first LED frame after each."""

    def __init__(self):
        self.master, slave = os.openpty()
        import tty

        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self.slave = slave
        self.buf = b""

    def write(self, frame):
        os.write(self.master, frame)

    def wait_led(self):
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if is_b5_led(line):
                    return time.perf_counter()
            self.buf += os.read(self.master, 4096)

    def drain(self):
        os.set_blocking(self.master, False)
        try:
            while os.read(self.master, 65536):
                pass
        except BlockingIOError:
            pass
        os.set_blocking(self.master, True)
        self.buf = b""

    def close(self):
        os.close(self.master)
        os.close(self.slave)


def is_b5_led(frame):
    """An LED command for cell b5's pixel (board ring-5, target b): what a lift or a put-back changes."""
    parts = frame.split(b" ")
    return len(parts) > 3 and parts[0] == b"led" and parts[3] == b"b"


def measure(write, wait_led, evs, ready, drain=lambda: None):
    """Each event (lift: b5 blinks; put back: b5 lit again) timed until its LED command arrives."""
    lat = []
    ready.wait(10)
    for f in evs:
        drain()  # the relight after a hello, evacks, other pixels: not what is timed
        t0 = time.perf_counter()
        write(f)
        lat.append(wait_led() - t0)
    return lat


async def bare_handler(transport, stop):
    """Baseline: answer each event with an LED command straight away."""
    while not stop.is_set():
        try:
            msg = await asyncio.wait_for(transport.get(), 0.2)
        except TimeoutError:
            continue
        if isinstance(msg, Event):
            await transport.send(Led(msg.board, "b", "blink" if msg.value == 0 else "solid", 0xFF5000, 400, msg.table))


async def start_side(bare, make_transport, make_bridge):
    """The measured side: a bare transport answering at once, or the whole bridge. Returns stop()."""
    if bare:
        t = make_transport()
        await t.start()
        stop = asyncio.Event()
        task = asyncio.create_task(bare_handler(t, stop))

        async def close():
            stop.set()
            await task
            await t.stop()
        return close
    b = make_bridge()
    await b.start()
    return b.stop


async def run_board(thread):
    thread.start()
    while thread.is_alive():
        await asyncio.sleep(0.01)


async def serial_latency(bare, toggle=None, key=None):
    from battlement.link.transport import SerialTransport

    board = PtyBoard()
    hello, evs = frames(key=key)
    result = {}
    ready = threading.Event()
    bridges = []

    def made(b):
        bridges.append(b)
        return b

    write = board.write
    if toggle is not None:
        sent = [0]

        def write(frame):
            # the metrics hooks on for every other lift and put-back pair, off for the rest: the same run,
            # the same load, as many lifts as put-backs on each side
            bridges[0].metrics = toggle if (sent[0] // 2) % 2 else None
            sent[0] += 1
            board.write(frame)
    thread = threading.Thread(target=lambda: result.setdefault("lat", measure(write, board.wait_led, evs, ready, board.drain)))
    with tempfile.TemporaryDirectory() as d:
        close = await start_side(bare, lambda: SerialTransport([board.path]),
                                 lambda: made(Bridge([ringo_map("bench", d if key else None)],
                                                     os.path.join(d, "j.sqlite"), serial=[board.path], keys_dir=d)))
        board.write(hello)
        await asyncio.sleep(0.3)
        ready.set()
        await run_board(thread)
        await close()
    board.close()
    return result["lat"]


# ---------------------------------------------------------------- latency over MQTT


class MqttBoard:
    def __init__(self, url, table, board="ring-5"):
        import paho.mqtt.client as mqtt
        from battlement.link.transport.mqtt import parse_url, topic

        host, port, *_ = parse_url(url)
        self.up, down = topic(table, board, "up"), topic(table, board, "down")
        self.leds = threading.Condition()
        self.led_times = []
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-board-" + table)
        self.c.on_message = self._msg
        self.c.connect(host, port)
        self.c.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as the firmware does
        self.c.subscribe(down, qos=1)
        self.c.publish(topic(table, board, "status"), b"online", qos=1, retain=True)
        self.c.loop_start()

    def _msg(self, c, u, m):
        if is_b5_led(m.payload):
            with self.leds:
                self.led_times.append(time.perf_counter())
                self.leds.notify()

    def write(self, frame):
        self.c.publish(self.up, frame, qos=1)

    def drain(self):
        time.sleep(0.001)
        with self.leds:
            self.led_times.clear()

    def wait_led(self):
        with self.leds:
            while not self.led_times:
                self.leds.wait(5)
            return self.led_times.pop()

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


async def mqtt_latency(broker, bare, table):
    from battlement.link.transport import MqttTransport

    hello, evs = frames()
    with tempfile.TemporaryDirectory() as d:
        close = await start_side(bare, lambda: MqttTransport(broker.url),
                                 lambda: Bridge([ringo_map(table)], os.path.join(d, "j.sqlite"), mqtt=broker.url))
        await asyncio.sleep(0.3)
        board = MqttBoard(broker.url, table)
        board.write(hello)
        await asyncio.sleep(0.3)
        with board.leds:
            board.led_times.clear()
        ready = threading.Event()
        result = {}
        thread = threading.Thread(target=lambda: result.setdefault("lat", measure(board.write, board.wait_led, evs, ready, board.drain)))
        ready.set()
        await run_board(thread)
        board.close()
        await close()
    return result["lat"]


# ---------------------------------------------------------------- 100 tables on one broker

PUBLISHER = r"""
import sys, time
sys.path[:0] = [%r, %r]
import paho.mqtt.client as mqtt
from battlement.link.transport.mqtt import topic
import bench_bridge as bb
url_port, tables, per = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-pub")
c.connect("127.0.0.1", url_port)
c.loop_start()
bursts = []
for i in range(tables):
    tid = "t%%03d" %% i
    hello, evs = bb.frames(n=per, boot=11)
    c.publish(topic(tid, "ring-5", "status"), b"online", qos=1, retain=True)
    c.publish(topic(tid, "ring-5", "up"), hello, qos=1)
    bursts.append((topic(tid, "ring-5", "up"), evs))
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
for k in range(per):
    for t, evs in bursts:
        c.publish(t, evs[k], qos=0)
c.loop_stop(); c.disconnect()
"""

SUBSCRIBER = r"""
import sys, time
import paho.mqtt.client as mqtt
port, total = int(sys.argv[1]), int(sys.argv[2])
n = [0, 0.0, 0.0]
def on_msg(c, u, m):
    if b" event " in b" " + m.payload[:6] or m.payload.startswith(b"event"):
        if n[0] == 0:
            n[1] = time.perf_counter()
        n[0] += 1
        if n[0] == total:
            n[2] = time.perf_counter()
c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-raw-sub")
c.on_message = on_msg
c.connect("127.0.0.1", port)
c.subscribe("battlement/+/+/up", qos=1)
c.loop_start()
sys.stdout.write("ready\n"); sys.stdout.flush()
deadline = time.time() + 60
while n[2] == 0 and time.time() < deadline:
    time.sleep(0.01)
c.loop_stop()
print("%d %.6f" % (n[0], (n[2] or time.perf_counter()) - n[1]))
"""


def publisher(broker, per):
    here = os.path.dirname(os.path.abspath(__file__))
    code = PUBLISHER % (here, os.path.join(benchutil.ROOT, "tests"))
    p = subprocess.Popen([PY, "-c", code, str(broker.port), str(TABLES), str(per)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, cwd=here)
    assert p.stdout.readline().strip() == "ready"
    return p


def raw_rate(broker):
    total = TABLES * PER_TABLE
    sub = subprocess.Popen([PY, "-c", SUBSCRIBER, str(broker.port), str(total)], stdout=subprocess.PIPE, text=True)
    assert sub.stdout.readline().strip() == "ready"
    pub = publisher(broker, PER_TABLE)
    pub.stdin.write("go\n")
    pub.stdin.flush()
    pub.wait(60)
    n, secs = sub.stdout.readline().split()
    sub.wait(10)
    return int(n) / float(secs), int(n)


async def bridge_rate(broker):
    total = TABLES * PER_TABLE
    with tempfile.TemporaryDirectory() as d:
        b = Bridge([ringo_map("t%03d" % i) for i in range(TABLES)], os.path.join(d, "j.sqlite"), mqtt=broker.url)
        await b.start()
        for t in b.transports:
            # The publisher sends its burst once and never resends, as no board would: it must all be
            # taken, so the bound on the queue (for boards that resend, bench_overload) is off here.
            t.bounded = False
        pub = publisher(broker, PER_TABLE)
        await asyncio.sleep(1.0)  # every board's hello in
        count = lambda: sum(s.counters["events"] for s in b.sessions.values())
        base = count()
        pub.stdin.write("go\n")
        pub.stdin.flush()
        while count() == base:
            await asyncio.sleep(0.0005)
        t0 = time.perf_counter()
        first = count()
        deadline = t0 + 60
        while count() - base < total and time.perf_counter() < deadline:
            await asyncio.sleep(0.002)
        secs = time.perf_counter() - t0
        done = count() - base
        pub.wait(30)
        await b.stop()
    return (done - (first - base)) / secs, done


# ---------------------------------------------------------------- start-up

BARE_APP = r"""
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
app = Starlette(routes=[Route("/", lambda r: PlainTextResponse("ok"))])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def time_to_page(argv, port):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=1) as r:
                    r.read()
                    return time.perf_counter() - t0
            except OSError:
                if p.poll() is not None:
                    raise RuntimeError("server exited") from None
                time.sleep(0.005)
    finally:
        p.terminate()
        p.wait(10)


def startup():
    bl = os.path.join(os.path.dirname(PY), "battlement")
    runs, bare = [], []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as d:
            port = free_port()
            runs.append(time_to_page([bl, "run", "--simulate", "--port", str(port), "--journal",
                                      os.path.join(d, "j.sqlite")], port))
        port = free_port()
        bare.append(time_to_page([PY, "-c", BARE_APP, str(port)], port))
    return min(runs), min(bare)


def hook_cost(n=20_000):
    """Seconds per batch the metrics hooks add (what the pump and a page push call, timed alone), and the
    same with prometheus-client's Histogram.observe for the three observations."""
    from battlement.ops.metrics import LATENCY_BUCKETS, Metrics
    from prometheus_client import CollectorRegistry, Histogram

    class Quiet:
        transports, counters, sessions, tmaps = [], {}, {}, {}

    m = Metrics(Quiet())
    clock = m.page_clock()
    t0 = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        m.taking = t
        clock.changed()
        m.committed(time.perf_counter())
        m.lit(t)
        clock.sent(clock.take())
    ours = (time.perf_counter() - t0) / n
    h = Histogram("bench_seconds", "bench", buckets=LATENCY_BUCKETS, registry=CollectorRegistry())
    t0 = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        h.observe(time.perf_counter() - t)
        h.observe(time.perf_counter() - t)
        h.observe(time.perf_counter() - t)
    return ours, (time.perf_counter() - t0) / n


def main():
    serial_figures()
    signing_figures()
    mqtt_figures()
    run, bare = startup()
    print("start-up  battlement run -> page %.2f s  (bare uvicorn app %.2f s, ratio %.2f; target < 2 s)"
          % (run, bare, run / bare), flush=True)


def serial_figures():
    from battlement.ops.metrics import Metrics

    bridge_lat, bare_lat, mixed = [], [], []
    for _ in range(2):  # alternate, so a burst of outside load does not fall on one side only
        bare_lat.append(asyncio.run(serial_latency(True)))
        bridge_lat.append(asyncio.run(serial_latency(False)))
    b = min(bridge_lat, key=lambda s: benchutil.pct(s, 0.99))
    r = min(bare_lat, key=lambda s: benchutil.pct(s, 0.99))
    report("serial", b, r)
    for _ in range(2):
        class Quiet:
            transports, counters, sessions, tmaps = [], {}, {}, {}
        mixed.append(asyncio.run(serial_latency(False, toggle=Metrics(Quiet()))))
    lat = min(mixed, key=lambda s: benchutil.pct(s, 0.99))
    on = [t for i, t in enumerate(lat) if (i // 2) % 2]
    off = [t for i, t in enumerate(lat) if not (i // 2) % 2]
    ms = benchutil.ms
    print("metrics  serial p50 %.3f ms p99 %.3f ms with the hooks  (off, every other pair of the same run: "
          "p50 %.3f p99 %.3f, ratio p50 %.2f)"
          % (ms(benchutil.pct(on, 0.5)), ms(benchutil.pct(on, 0.99)), ms(benchutil.pct(off, 0.5)),
             ms(benchutil.pct(off, 0.99)), benchutil.pct(on, 0.5) / benchutil.pct(off, 0.5)), flush=True)
    cost, theirs = hook_cost()
    print("metrics  hooks %.2f us a batch  (prometheus-client Histogram.observe instead %.2f us, ratio %.2f; "
          "the bridge's p50 event -> LED without hooks %.1f us, share %.1f%%)"
          % (cost * 1e6, theirs * 1e6, cost / theirs, benchutil.pct(off, 0.5) * 1e6,
             100 * cost / benchutil.pct(off, 0.5)), flush=True)


def signing_figures():
    """What the MAC costs: the same bridge signed and unsigned, alternating; then the intake alone."""
    signed, unsigned = [], []
    for _ in range(2):
        unsigned.append(asyncio.run(serial_latency(False)))
        signed.append(asyncio.run(serial_latency(False, key=KEY)))
    s = min(signed, key=lambda x: benchutil.pct(x, 0.99))
    u = min(unsigned, key=lambda x: benchutil.pct(x, 0.99))
    ms = benchutil.ms
    print("signed serial event -> LED  p50 %.3f ms p99 %.3f ms  (unsigned, same run: p50 %.3f p99 %.3f; "
          "the MAC adds p50 %+.3f ms)" % (ms(benchutil.pct(s, 0.5)), ms(benchutil.pct(s, 0.99)),
                                          ms(benchutil.pct(u, 0.5)), ms(benchutil.pct(u, 0.99)),
                                          ms(benchutil.pct(s, 0.5) - benchutil.pct(u, 0.5))), flush=True)
    per_s, per_u = intake_cost(KEY), intake_cost(None)
    print("signed intake  %.2f us a frame checked and taken  (unsigned %.2f us, ratio %.2f)"
          % (per_s * 1e6, per_u * 1e6, per_s / per_u), flush=True)


def intake_cost(key, n=20_000, rounds=3):
    """Seconds per event frame through the protocol layer (decode, MAC, exactly-once, queue), best round."""
    from battlement.link.transport.base import Transport

    best = float("inf")
    for r in range(rounds):
        t = Transport()
        if key is not None:
            t.sign(None, {"ring-5": key}, table_id="bench")
        hello, evs = frames(boot=100 + r, n=n, key=key)
        t._handle_line(hello, "bench")
        t0 = time.perf_counter()
        for f in evs:
            t._handle_line(f, "bench")
        best = min(best, (time.perf_counter() - t0) / n)
        assert t.counters["accepted"] == n + 1, t.counters
    return best


def mqtt_figures():
    with tempfile.TemporaryDirectory() as d:
        broker = nodelay_broker(d)
        try:
            bridge_lat, bare_lat = [], []
            for k in range(2):
                bare_lat.append(asyncio.run(mqtt_latency(broker, True, "bare%d" % k)))
                bridge_lat.append(asyncio.run(mqtt_latency(broker, False, "lat%d" % k)))
            b = min(bridge_lat, key=lambda s: benchutil.pct(s, 0.99))
            r = min(bare_lat, key=lambda s: benchutil.pct(s, 0.99))
            report("mqtt", b, r)
            # Best of three alternating rounds each: other load on the machine only ever slows a round.
            raws, ours_rounds = [], []
            for _ in range(3):
                raws.append(raw_rate(broker))
                ours_rounds.append(asyncio.run(bridge_rate(broker)))
            raw, n_raw = max(raws)
            ours, n_ours = max(ours_rounds)
            # events at QoS 0 and a lighter load than bench_mqtt's "whole bridge" row, which holds the target
            print("%d tables events/s %9s  (raw paho subscriber %s, ratio %.2f; events at QoS 0, see bench_mqtt)"
                  "  [%d and %d events; rounds %s vs %s]" % (
                      TABLES, f"{ours:,.0f}", f"{raw:,.0f}", ours / raw, n_ours, n_raw,
                      "/".join("%.0f" % r for r, _ in ours_rounds), "/".join("%.0f" % r for r, _ in raws)),
                  flush=True)
        finally:
            broker.close()


def nodelay_broker(d):
    """Mosquitto with set_tcp_nodelay (as docs/bridge.md advises): else Nagle holds each small frame ~40 ms."""
    return Broker(d, nodelay=True).start()


def report(name, lat, raw):
    p50, p99 = benchutil.ms(benchutil.pct(lat, 0.5)), benchutil.ms(benchutil.pct(lat, 0.99))
    r50, r99 = benchutil.ms(benchutil.pct(raw, 0.5)), benchutil.ms(benchutil.pct(raw, 0.99))
    print("%-6s event -> LED  p50 %.3f ms p99 %.3f ms  (bare transport p50 %.3f p99 %.3f; overhead p50 %+.3f "
          "p99 %+.3f ms; target p99 within 2 ms)" % (name, p50, p99, r50, r99, p50 - r50, p99 - r99), flush=True)


if __name__ == "__main__":
    main()
