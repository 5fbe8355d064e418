"""`battlement sim`: virtual boards that speak the real wire protocol, over a pty or MQTT.

A VirtualBoard behaves like the firmware from the host's side: hello at start and
after every ping, numbered events kept in an outbox until the host's evack, an
ack for every command, the LED state the host asked for, and a heartbeat every
5 s. `battlement run --simulate` runs them inside the bridge (one pty per board,
read by the real serial transport) so any game can be tried with no hardware;
`battlement sim` runs them on their own, scripted (JSON Lines) or random, for a
bridge started separately, on ptys or an MQTT broker (mqttlink.py).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import random
import time
import tty

from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link import wire
from battlement.link.messages import Beat, Event, Hello, Reply, status_payload, up_frame
from battlement.link.transport.mqtt import check_ca, parse_url
from battlement.sim.mqttlink import MqttLink, close_all, watch_broker
from battlement.table.maps import TableMap, load

FIRMWARE = "sim-1"
RESEND = 1.0  # seconds without an evack before the outbox goes again, as the firmware's resend_ms
BEAT = 5.0  # seconds between heartbeats, as the firmware's beat_ms
BACKLOG = 1 << 16  # bytes a pty holds for a bridge that is not reading (yet)
# A virtual board has no flash to count its boots in (firmware/bootcount.py): its boot is the clock, in
# eighths of a second since this moment (2023-11), so it rises from one start to the next, as a counter's.
SIM_EPOCH = 1_700_000_000
_drawn = [0]  # the last boot drawn in this process: boards started together still get rising boots


def next_boot() -> int:
    _drawn[0] = max(_drawn[0] + 1, int((time.time() - SIM_EPOCH) * 8))
    return _drawn[0] & 0xFFFFFFFF or 1


class VirtualBoard:
    def __init__(self, board: str, sensors: dict[str, str], profile: str = "sim", table: str | None = None,
                 key: bytes | None = None):
        self.board, self.sensors, self.profile, self.table = board, dict(sensors), profile, table
        self.key = key  # signing key (battlement.link.keys): frames signed and checked as the firmware does
        self.msgid = 0  # last command msgid applied
        self.boot = next_boot()
        self.seq = 0
        self.outbox: dict[int, bytes] = {}
        self.pixels: dict[str, tuple[str, int, int]] = {}  # LED target -> (pattern, rgb, period)
        self.write = lambda frame: None  # set by the link
        self.counters = {"events": 0, "commands": 0, "bad-frames": 0}
        self.on_led = None  # callback(board, target, pattern, rgb) for watchers (the page, tests)
        self.t0 = time.monotonic()
        self.progress = self.t0  # when the host last acknowledged something (or the outbox last went)
        self.beat_s, self.beat_at = BEAT, self.t0
        self.reconnects = 0  # set by an MQTT link: connections after the first

    def hello(self) -> None:
        acked = min(self.outbox) - 1 if self.outbox else self.seq  # where it stands, like the firmware
        self._send(up_frame(Hello(None, self.board, self.boot, FIRMWARE, wire.VERSION, self.profile, self.sensors,
                                  None, acked, self.msgid)))

    def beat(self) -> None:
        """The firmware's heartbeat. Nothing waits to be sent here (queued 0) and nothing is dropped."""
        up = int((time.monotonic() - self.t0) * 1000) % (1 << 32)  # a uint32 on the wire, as the firmware's
        self._send(up_frame(Beat(None, self.board, self.boot, up, 0, 0, self.reconnects, len(self.outbox))))

    def _signed(self, frame: bytes) -> bytes:
        return wire.sign(frame, self.key, self.table, self.board, self.boot) if self.key else frame

    def status(self, up: bool, session: int) -> bytes:
        """Its MQTT status (or will) for this link session: signed with a key, as the firmware's."""
        return status_payload(self.board, self.boot, session, up, self.key, self.table)

    def _send(self, frame: bytes) -> None:
        self.write(self._signed(frame))

    def sense(self, sensor: str, value: int, width_us: int = 12000, kind: str | None = None) -> int:
        """Report a sensor change like the firmware does; returns its seq. kind "blind": a beam's break
        inside a garbage collection the board ran (value: its ms), as an ESP32 board reports one."""
        if sensor not in self.sensors:
            raise UserError("board %s has no sensor %r (sensors: %s)" % (self.board, sensor, ", ".join(sorted(self.sensors))))
        if kind == "blind" and self.sensors[sensor] != "beam":
            raise UserError("board %s: only a beam reports blind, %s is a %s" % (self.board, sensor, self.sensors[sensor]))
        kind = kind or self.sensors[sensor]
        self.seq += 1
        t_us = int((time.monotonic() - self.t0) * 1e6) & (2**30 - 1)
        frame = self._signed(up_frame(Event(None, self.board, self.boot, self.seq, sensor, kind, value, t_us,
                                            width_us if kind in ("beam", "blind") else 0)))
        self.outbox[self.seq] = frame
        self.counters["events"] += 1
        self.write(frame)
        return self.seq

    def on_frame(self, line: bytes) -> None:
        try:
            typ, fields = wire.decode(line)
        except wire.WireError:
            self.counters["bad-frames"] += 1
            return
        if not fields or fields[0] != self.board:
            return  # addressed to another board on the same link
        if self.key and not (wire.verify(line, self.key, self.table, self.board, self.boot)
                             or (typ == "ping" and wire.verify(line, self.key, self.table, self.board, 0))):
            self.counters["bad-frames"] += 1  # forged or for another boot: no answer, as the firmware
            return
        if typ == "evack":
            if fields[1] == self.boot:
                done = [s for s in self.outbox if s <= fields[2]]
                for s in done:
                    del self.outbox[s]
                if done:
                    self.progress = time.monotonic()
            return
        msgid = fields[1]
        if typ == "ping":  # the host's resync: hello first (so the ack's boot is known), ack, the outbox
            self.counters["commands"] += 1
            self.hello()
            self._send(up_frame(Reply(None, self.board, msgid, True)))
            self.resend()
            return
        d = (msgid - self.msgid) % wire.MSGID
        if self.key and self.msgid and (d == 0 or d > wire.MSGID // 2):
            self.counters["bad-frames"] += 1  # a recorded command played back
            return
        self.msgid = msgid
        self.counters["commands"] += 1
        if typ == "led":
            _b, _m, target, pattern, rgb, period = fields
            self.pixels[target] = (pattern, rgb, period)
            if self.on_led:
                self.on_led(self.board, target, pattern, rgb)
        if typ == "config" and fields[2] == "beat_ms" and fields[3].isdigit():
            self.beat_s = max(int(fields[3]), 100) / 1000  # as the firmware takes it
        if typ in ("led", "config"):
            self._send(up_frame(Reply(None, self.board, msgid, True)))

    def resync(self) -> None:
        """hello, then the whole outbox oldest first: after a ping or a reconnect, as the firmware does."""
        self.hello()
        self.resend()

    def resend(self) -> None:
        self.progress = time.monotonic()
        for s in sorted(self.outbox):
            self.write(self.outbox[s])

    def housekeeping(self, now: float) -> None:
        """Events unacknowledged for RESEND seconds go again (the host may have been away); a beat is due
        every beat_s."""
        if self.outbox and now - self.progress >= RESEND:
            self.resend()
        if now - self.beat_at >= self.beat_s:
            self.beat_at = now
            self.beat()


class PtyLink:
    """One pty per board: the board writes the master side, the bridge opens `path` like a USB port."""

    def __init__(self, board: VirtualBoard):
        self.board = board
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.splitter = wire.Splitter()
        self.out = b""
        self.loop: asyncio.AbstractEventLoop | None = None
        board.write = self._write

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.loop.add_reader(self.master, self._readable)
        self.board.hello()

    def _write(self, frame: bytes) -> None:
        if self.out:
            if len(self.out) < BACKLOG:  # beyond, nobody reads the port: the outbox keeps the events
                self.out += frame
            return
        try:
            n = os.write(self.master, frame)
        except BlockingIOError:
            n = 0
        if n < len(frame):
            self.out = frame[n:]
            if self.loop:
                self.loop.add_writer(self.master, self._flush)

    def _flush(self) -> None:
        try:
            n = os.write(self.master, self.out)
        except BlockingIOError:
            return
        self.out = self.out[n:]
        if not self.out and self.loop:
            self.loop.remove_writer(self.master)

    def _readable(self) -> None:
        try:
            data = os.read(self.master, 4096)
        except OSError as e:
            if e.errno in (errno.EAGAIN, errno.EIO):
                return
            raise
        for line in self.splitter.feed(data):
            self.board.on_frame(line)

    def close(self) -> None:
        if self.loop:
            self.loop.remove_reader(self.master)
            self.loop.remove_writer(self.master)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


class Simulator:
    """Virtual boards for every board of a table map; press(object, value) acts as its sensor."""

    def __init__(self, tmap: TableMap, mqtt_url: str | None = None, username: str | None = None,
                 password: str | None = None, tls: bool = False, tls_ca: str | None = None,
                 keys: dict[str, bytes] | None = None):
        self.tmap = tmap
        self.boards: dict[str, VirtualBoard] = {}
        self.links: dict[str, PtyLink | MqttLink] = {}
        self._keeper: asyncio.Task | None = None
        for b in sorted(tmap.boards):
            vb = VirtualBoard(b, tmap.sensors_of(b), str(tmap.boards[b].get("profile", "sim")), tmap.table,
                              (keys or {}).get(b))
            self.boards[b] = vb
            self.links[b] = (MqttLink(vb, mqtt_url, tmap.table, username, password, tls, tls_ca) if mqtt_url
                             else PtyLink(vb))

    @property
    def ports(self) -> list[str]:
        return [link.path for link in self.links.values() if isinstance(link, PtyLink)]

    def start(self) -> None:
        for link in self.links.values():
            link.start()
        self._keeper = asyncio.get_running_loop().create_task(self._keep())

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(0.2)
            now = time.monotonic()
            for b in self.boards.values():
                b.housekeeping(now)

    @property
    def mqtt_links(self) -> list[MqttLink]:
        return [link for link in self.links.values() if isinstance(link, MqttLink)]

    def unacknowledged(self) -> int:
        """Events no bridge has acknowledged yet (still in the boards' outboxes)."""
        return sum(len(b.outbox) for b in self.boards.values())

    def close(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            self._keeper = None
        for link in self.links.values():
            if isinstance(link, PtyLink):
                link.close()
        close_all(self.mqtt_links)  # together, in bounded time: a broker may be missing

    def press(self, obj: str, value: int) -> None:
        o = self.tmap.objects.get(obj)
        if o is None:
            raise UserError("table %s has no object %r" % (self.tmap.table, obj))
        self.boards[o.board].sense(o.sensor, value)

    def led_of(self, obj: str):
        o = self.tmap.objects.get(obj)
        if o is None or o.led_board is None or o.led is None:
            return None
        return self.boards[o.led_board].pixels.get(o.led)


def read_script(path: str) -> list[dict]:
    """JSON Lines of {"at": seconds, "object": name, "value": 0|1} (or "board" and "sensor" instead of object)."""
    steps = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise UserError("script %s: %s" % (path, e.strerror or e))
    for i, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            step = json.loads(line)
        except ValueError as e:
            raise UserError("%s:%d: not JSON: %s" % (path, i, e))
        if not isinstance(step, dict) or not ("object" in step or ("board" in step and "sensor" in step)):
            raise UserError('%s:%d: a step needs "object" (or "board" and "sensor"), "value" and "at"' % (path, i))
        step.setdefault("at", 0)
        step.setdefault("value", 1)
        step["line"] = i
        steps.append(step)
    return steps


async def play(sim: Simulator, steps: list[dict], speed: float = 1.0, echo=print) -> None:
    t0 = time.monotonic()
    for step in sorted(steps, key=lambda s: (float(s["at"]), s["line"])):
        delay = float(step["at"]) / speed - (time.monotonic() - t0)
        if delay > 0:
            await asyncio.sleep(delay)
        if "object" in step:
            sim.press(step["object"], int(step["value"]))
            echo("%.2fs %s -> %d" % (time.monotonic() - t0, step["object"], int(step["value"])))
        else:
            if step["board"] not in sim.boards:
                raise UserError("script line %d: no board %r on %s" % (step["line"], step["board"], sim.tmap.path))
            sim.boards[step["board"]].sense(step["sensor"], int(step["value"]), kind=step.get("kind"))  # kind: blind, blocked
            echo("%.2fs %s/%s -> %d" % (time.monotonic() - t0, step["board"], step["sensor"], int(step["value"])))


async def random_play(sim: Simulator, count: int, rate: float, seed: int, echo=print) -> None:
    rng = random.Random(seed)
    names = sorted(sim.tmap.objects)
    state: dict[str, int] = {}
    for i in range(count):
        if i:
            await asyncio.sleep(1.0 / rate)  # between changes: after the last, --linger is the wait
        obj = rng.choice(names)
        state[obj] = 1 - state.get(obj, 0)
        sim.press(obj, state[obj])
        echo("%s -> %d" % (obj, state[obj]))


def table_keys(tmap: TableMap, keys_dir: str | None, mqtt: bool) -> tuple[dict[str, bytes], str]:
    """The boards' keys, found as every command finds them (battlement.link.keys: by table id, in the
    keys folder), and a line saying whether and how the boards sign."""
    tk = boardkeys.of_table(tmap.table, tmap.path, keys_dir)
    if not tk.keys:
        return {}, "boards do not sign (no keys file %s; the bridge expects unsigned frames too)" % tk.path
    if not tk.on(mqtt):
        return {}, "boards do not sign: the table map turns signing off for serial ([signing] serial = false)"
    return tk.keys, "boards sign with the keys in %s (%d of them)" % (tk.path, len(tk.keys))


async def _main(args) -> int:
    tmap = load(args.table)
    if (args.tls or args.tls_ca) and not args.mqtt:
        raise UserError("--tls and --tls-ca go with --mqtt")
    check_ca(args.tls_ca)
    keys, signing = table_keys(tmap, args.keys_dir, bool(args.mqtt))
    steps = read_script(args.script) if args.script else None  # a bad script is one line, before any board
    sim = Simulator(tmap, args.mqtt, args.username, args.password, args.tls, args.tls_ca, keys)
    sim.start()
    echo("sim: " + signing)
    what = "%d boards of table %s" % (len(sim.boards), tmap.table)
    watch = None
    if args.mqtt:
        host, port = parse_url(args.mqtt)[:2]
        echo("sim: %s, connecting to broker %s:%d" % (what, host, port))
        watch = asyncio.create_task(watch_broker(sim.mqtt_links, what, echo)) if sim.mqtt_links else None
    else:
        echo("sim: %s; give the bridge these ports:" % what)
        for b, link in sim.links.items():
            echo("  --serial %s   # board %s" % (getattr(link, "path", ""), b))
    try:
        await asyncio.sleep(args.wait)
        if steps is not None:
            await play(sim, steps, args.speed, echo)
        elif args.random:
            await random_play(sim, args.random, args.rate, args.seed, echo)
        else:
            await asyncio.Event().wait()  # serve until Ctrl-C
        await asyncio.sleep(args.linger)
    finally:
        if watch is not None:
            watch.cancel()
        left = sim.unacknowledged()
        sim.close()
        if left:  # played into nothing: said (on Ctrl-C too), and the exit status says it
            echo("sim: %d event(s) never acknowledged by a bridge" % left)
    return 1 if left else 0


def echo(line: str) -> None:
    print(line, flush=True)  # line by line, also into a pipe


def run(args) -> int:
    try:
        return asyncio.run(_main(args))
    except KeyboardInterrupt:
        return 0



