"""The board: sensors -> numbered events -> outbox -> link; host commands -> LEDs and settings.

Every event gets a sequence number and stays in a bounded outbox until the
host's cumulative evack; the link (serial or MQTT) sends new events at once and
resends the unacknowledged ones after a reconnect or when the host stays silent,
so the host (which drops copies) sees each event exactly once.
"""

import asyncio
import gc
import json
import sys
import time
from binascii import unhexlify

import hal
import machine
import wire
from leds import PATTERNS, Strip
from outbox import BLIND, BLOCKED, Outbox
from sensors import SAFE_US, Ring

RELEASE = "0.1.0"  # the firmware's release; a build adds a hash of its sources (boards/firmware.py)
try:  # the installed set's version, written by the build: an update changes it (docs/protocol.md "Updates")
    from fwversion import VERSION as FIRMWARE  # type: ignore[import-not-found]
except ImportError:  # the sources run as they are, unbuilt
    FIRMWARE = RELEASE
# ms: main.py sets it when this firmware set runs on trial after an update; 0 once confirmed (_confirm)
TRIAL = 0

# Defaults for every setting the config may leave out (docs/hardware.md explains each).
DEFAULTS = {
    "min_pulse_us": 1000,  # dark for less than this is a glitch (a ball takes 5-30 ms; docs/hardware.md "Timing")
    "lockout_ms": 3,  # light for less than this inside a ball is its rim flickering, not a new ball
    "block_ms": 500,  # a beam dark longer than this is blocked (a hand, a cup), never a ball
    "tilt_settle_ms": 100,  # a tilt reading must hold this long before it counts
    "presence_settle_ms": 150,
    "scan_ms": 5,  # multiplexer scan interval
    "beat_ms": 5000,  # heartbeat interval
    "resend_ms": 1000,  # resend unacknowledged events after this long without an evack
    "outbox": 128,  # events kept until acknowledged
    "ring": 256,  # captured edges waiting for the sensing task
    "wdt_ms": 8000,  # watchdog: the board resets if the sensing loop stalls this long
    "gc_ms": 5000,  # with scheduled (soft) IRQs: collect garbage at least this often, when every beam is lit
    "gc_free": 32768,  # ... or sooner, once the heap has less than this many bytes free
}
# Host `config` keys: "<kind or sensor id>.<setting>" (e.g. beam.min_us, tower-3.lockout_ms) or a board
# setting, each with the values it takes (wire.SETTINGS: where the detection holds; docs/protocol.md).
SENSOR_KEYS = ("min_us", "lockout_ms", "block_ms", "stable_ms")
BOARD_KEYS = ("beat_ms", "resend_ms")
PIN_MAP = ("sensors", "leds", "muxes", "comment")  # config keys used only to build the board at start
# esp32: a stretch this long between two drains of the ring, beyond the collections and LED frames the
# firmware ran itself, was a pause it did not ask for (a flash write, Wi-Fi): its edges are untimed.
GAP_US = 3000
FRAME_US = 2000  # the longest an LED frame holds the firmware itself (RMT: ~0.4 ms for 73 pixels)
ROOM_PER_BYTE = 5  # a board's objects per byte of its config.json (red-kingdom: 3.4 KB -> ~17 KB)
OWED_EVENT = 1
OWED_HELLO = 2
ENCODE_US = 1000  # the longest making an event's frame takes (docs/hardware.md "Timing": 0.3 ms on esp32)
# Scheduled handlers waiting at once (MICROPY_SCHEDULER_DEPTH on esp32): a pause that let this many
# through may have dropped more (mp_sched_schedule refuses when full).
SCHED_DEPTH = 8


class App:
    def __init__(self, cfg, boot=1):
        """boot: this boot's count (bootcount.advance(), raised in flash by main() before any frame goes out).
        cfg's "sensors" are taken out of it as they are built."""
        self.cfg = cfg
        self.board = cfg["board"]
        self.role = cfg.get("role") or cfg.get("profile") or "board"  # hello's profile: what the board is for
        self.boot = boot
        # The table the board belongs to (`battlement flash --table`), on MQTT its topics': its MACs bind it.
        mq = (cfg.get("mqtt") or {}) if cfg.get("transport") == "mqtt" else {}
        self.table = mq.get("table") or cfg.get("table") or ""
        self.opt = {}
        for k, v in DEFAULTS.items():
            self.opt[k] = cfg.get(k, v)
        self.t0 = time.ticks_ms()
        # Signing key from `battlement flash` (hex); None: frames go unsigned and nothing is checked.
        self.key = unhexlify(cfg["key"]) if cfg.get("key") else None
        self.msgid = 0  # last command msgid applied: with a key, only newer ones are (no replays)
        # Uptime in whole seconds plus the milliseconds beyond: ticks_ms wraps (a diff from boot turns
        # negative after 6.2 days), and seconds stay a small int (no heap) for decades.
        self.up_s = 0
        self.up_ms = 0
        self.up_at = self.t0
        self.seq = 0
        self.outbox = Outbox(self.opt["outbox"])  # kept until the host's evack; its room is taken now
        self.owed = 0  # frames that found no heap, made again next cycle: OWED_EVENT, OWED_HELLO
        self.acked = 0  # highest seq the host acknowledged
        self.sent = 0  # highest seq handed to the link
        self.ctl = []  # hello / beat / ack / error frames waiting for the link
        self.dropped_events = 0  # outbox overflow: oldest unacknowledged event discarded
        self.rejected = 0  # host frames that failed to decode or were not for us
        self.reconnects = 0
        self.faults = 0  # sensing cycles that failed (a MemoryError, say): the loop goes on
        self.progress_ms = self.t0  # when the host last acknowledged something
        self.led_at = self.beat_at = self.gc_at = self.free_at = self.t0  # last LED frame, beat, collection, heap check
        self.free = 1 << 30  # heap bytes free at the last check
        self.soft = hal.PORT == "esp32"  # pin IRQs are scheduled, not hard
        self.sensed_at = hal.ticks_us()  # the clock read just before the ring was last drained
        self.own_us = 0  # ... and how long the firmware's own pauses (LED frames) held the VM since
        self.write_runs = False  # the console's write was seen running pin handlers while it waits (wrote())
        self.check = -1  # when to count what the last pause let through (-1: nothing to count)
        self.ring_lost = 0  # the ring's dropped count when last looked at
        self.pauses = 0  # pauses the firmware did not ask for, noticed afterwards
        self.overflows = 0  # pauses after which the scheduler may have dropped handlers
        self.held = self.held_max = 0  # edges whose handlers ran back to back (held together), now and at most
        self.last_t = 0  # the stamp of the edge before
        self._before_cb = self._before  # made once: a bound method made at each drain is garbage every cycle
        self.wake = asyncio.Event()
        self.ring = Ring(self.opt["ring"])
        self.channels = []  # ring channel number -> detector with .edge(level, t)
        self.beams = []  # every Beam detector (mouths and lower beams too)
        self.sensors = []
        self.by_id = {}
        self.muxes = {}
        now = hal.ticks_us()
        import build  # the pin map into sensors: boot-only code, let go once they are built

        build.sensors(self, cfg, now)
        del build, sys.modules["build"]
        self.scan_us = self.opt["scan_ms"] * 1000
        self.scan_at = hal.add(now, -self.scan_us)  # the first cycle scans
        led = cfg.get("leds") or {}
        self.strip = Strip(led.get("pin", 0), led.get("count", 0), led.get("status", -1), led.get("groups"))
        self.link = None
        # The pin map is built into the objects above: only the rest is kept (the link's settings, the key's
        # table, Improv's Wi-Fi), not ~10 KB of sensor specs for the board's whole life (Improv rereads the file).
        self.cfg = {k: v for k, v in cfg.items() if k not in PIN_MAP}
        if self.soft:
            hal.gc_manual()  # the port would collect whenever the heap filled: maybe inside a ball

    # --- sensors -----------------------------------------------------------------

    def sensor_list(self):
        return ",".join(s.id + ":" + s.kind for s in self.sensors) or "-"

    def sense(self, now=None):
        """Drain captured edges into the detectors, scan muxes, let settle timers fire.

        The clock is read after the drain (now is ignored): edges keep arriving while this
        runs, and a time from before them would misjudge the beams.
        """
        if self.soft:
            t0 = hal.ticks_us()
            if hal.diff(t0, self.sensed_at) - self.own_us > GAP_US:
                self.pauses += 1
                self._paused(self.sensed_at, t0)
            self.own_us = 0
            # The stretches checked meet end to end: a pause that begins once this reading is taken (during the
            # drain, or right after it) is in the next one, never between two.
            self.sensed_at = t0
        n = self.ring.drain(self.channels, self._before_cb)
        if self.ring.ctl[2] != self.ring_lost:
            self.ring_lost = self.ring.ctl[2]
            for b in self.beams:
                b.lost()  # the ring was full: any beam may have lost a break
        if self.check >= 0 and not self.ring.pending() and hal.diff(hal.ticks_us(), self.check) >= 0:
            self.check = -1
            if self.held_max >= SCHED_DEPTH - 1:
                self.overflows += 1  # the queue may have been full: a break may be missing anywhere
                for b in self.beams:
                    b.lost()
        if self.muxes and hal.diff(hal.ticks_us(), self.scan_at) >= self.scan_us:
            self.scan_at = hal.ticks_us()  # pieces hold 100 ms or more: between scans the loop is the beams'
            for name in self.muxes:
                self.muxes[name].scan()
        t = hal.ticks_us()
        if not self.ring.pending():
            self._judge_due(hal.add(t, -SAFE_US))  # an edge may still be on its way for SAFE_US
        for s in self.sensors:
            s.poll(t)
        return n

    def _paused(self, p0, p1):
        """The VM was held from p0 to p1: every beam's edges stamped around it are untimed; once they are
        all in, count them against the scheduler's queue."""
        self.check = hal.add(p1, SAFE_US) or 1
        self.held = self.held_max = 0
        for b in self.beams:
            b.paused(p0, p1)

    def wrote(self, w0, w1):
        """A console write held the firmware from w0 to w1: its own time, not a pause, on a port that runs the
        pin handlers while its write waits (native USB; USB-Serial/JTAG runs none). An edge whose handler ran
        inside a write, still in the ring (only the sensing task drains it), shows the port does."""
        self.write_runs = self.write_runs or (self.soft and self.ring.ran_within(w0, w1))
        if self.write_runs:
            self.own_us += hal.diff(w1, w0)

    def _before(self, t):
        """Ahead of each edge stamped t: count handlers run back to back since the last pause (the queue held
        them); ones that ran while the VM waited in a port that runs them come spread out, never filled it."""
        if self.check >= 0:
            self.held = self.held + 1 if self.held and hal.diff(t, self.last_t) < SAFE_US else 1
            self.held_max = max(self.held_max, self.held)
            self.last_t = t
        self._judge_due(t)

    def _judge_due(self, t):
        """Judge the balls whose light held long enough by t, oldest first, so events keep the order they fell in."""
        while True:
            first = None
            for b in self.beams:
                if b.due(t) and (first is None or hal.diff(b.clear, first.clear) < 0):
                    first = b
            if first is None:
                return
            first.judge()

    # --- outgoing ----------------------------------------------------------------

    def emit(self, sensor, value, t, width, kind=None):
        """kind: the sensor's own, "blind" for a break a pause kept from being timed, or "blocked".
        Allocates nothing: the event goes into the outbox as numbers, its frame is made when it is sent."""
        self.seq += 1
        code = BLIND if kind == "blind" else BLOCKED if kind == "blocked" else 0
        # Kept within what the wire carries, so its frame can always be made.
        if self.outbox.push(self.seq, self.sensors.index(sensor), code, min(value, wire.BLIND_MS), t & wire.TICKS,
                            min(width, wire.TICKS)):
            self.dropped_events += 1  # the outbox was full: its oldest unacknowledged event is gone
        self.wake.set()

    def _event_frame(self, i):
        """The frame of the outbox's i-th oldest event (the same bytes each time it is sent)."""
        ob = self.outbox
        k = ob.slot(i)
        sv = ob.sv[2 * k]
        sensor = self.sensors[sv >> 2]
        kind = "blind" if sv & 3 == BLIND else "blocked" if sv & 3 == BLOCKED else sensor.kind
        return self._signed(wire.encode("event", (self.board, self.boot, ob.first + i, sensor.id, kind,
                                                  ob.sv[2 * k + 1], ob.tw[2 * k], ob.tw[2 * k + 1])))

    def _signed(self, frame):
        return wire.sign(frame, self.key, self.table, self.board, self.boot) if self.key else frame

    def status(self, state, session):
        """The retained status (and will) payload: with a key, a status frame signed for this boot and link
        session (the host refuses any other); without, the plain word."""
        if not self.key:
            return state.encode()
        return self._signed(wire.encode("status", (self.board, self.boot, session, state)))[:-1]

    def send_ctl(self, typ, fields):
        self.ctl.append(self._signed(wire.encode(typ, fields)))
        self.wake.set()

    def hello(self):
        # acked: where this board stands, so a host learns it before taking any event as new
        # (everything before the outbox's oldest was acknowledged, or dropped and counted).
        stand = self.outbox.first - 1 if len(self.outbox) else self.seq
        try:
            self.send_ctl(
                "hello",
                (self.board, self.boot, FIRMWARE, wire.VERSION, self.role, self.sensor_list(), stand, self.msgid),
            )
        except wire.WireError:  # too many sensors for one frame (`battlement hardware check` warns of it)
            self.error(0, "hello-too-long")
        except MemoryError:  # its ~500-byte blocks not there now (a fragmented heap): made again next cycle,
            self.owed |= OWED_HELLO  # and nothing goes before it (the host takes no event from an unknown boot)
            return
        if self.owed & OWED_HELLO:
            self.owed &= ~OWED_HELLO
            self.ctl.insert(0, self.ctl.pop())

    def dropped(self):
        return self.ring.ctl[2] + self.dropped_events

    def beat(self):
        if self.owed & OWED_HELLO:
            return  # a host takes nothing from a boot it has no hello of: each beat would be heap for nothing
        up = self.uptime(time.ticks_ms()) % 0x100000000  # a uint32 on the wire: wraps after 49.7 days
        queued = self.ring.pending() + max(0, self.seq - self.sent)
        try:
            self.send_ctl(
                "beat", (self.board, self.boot, up, self.dropped(), queued, self.reconnects, len(self.outbox))
            )
        except MemoryError:
            pass  # the next beat says it all again; the cycle's housekeeping and collection still run

    def take(self):
        """Frames the link should write now, as (frame, is_event): control frames, then events not yet sent.

        A generator, not a list: a list as long as a full outbox needs one block of heap that a heap
        fragmented by the outbox's frames may not have. It reads the outbox as it is at each step
        (evacks trim it, new events join it while the link writes), and an event counts as sent
        once it has been handed over.
        """
        if self.owed & OWED_HELLO:
            return
        while self.ctl:
            yield self.ctl.pop(0), False
        ob = self.outbox
        while len(ob):
            i = max(0, self.sent + 1 - ob.first)  # seqs in the outbox run without gaps
            if i >= len(ob):
                return
            t0 = hal.ticks_us()
            try:
                frame = self._event_frame(i)
            except MemoryError:  # the event stays unsent, and keeps its place: made again next cycle
                self.owed |= OWED_EVENT
                return
            # Making a frame is the firmware's own work (pin handlers run meanwhile), not a pause it missed:
            # up to ENCODE_US; beyond that something held it.
            self.own_us += min(ENCODE_US, hal.diff(hal.ticks_us(), t0))
            self.sent = ob.first + i
            yield frame, True

    def untake(self, frames):
        """Frames take() gave that the link could not write now (the last ones it handed over): they
        go again first, at the next take()."""
        ctl = [f for f, is_event in frames if not is_event]
        events = sum(1 for _, is_event in frames if is_event)
        self.ctl = ctl + self.ctl
        if events:
            self.sent = max(self.acked, self.sent - events)  # the events handed over last end at sent

    def rewind(self):
        """Send every unacknowledged event again (after a reconnect or a silent host)."""
        self.sent = self.acked
        self.progress_ms = time.ticks_ms()
        if len(self.outbox):
            self.wake.set()

    def _count_up(self, now_ms):
        """Add the time since the last call to the uptime (every sensing cycle, so no diff ever wraps)."""
        d = time.ticks_diff(now_ms, self.up_at)
        if d > 0:
            self.up_at = now_ms
            self.up_ms += d
            if self.up_ms >= 1000:
                self.up_s += self.up_ms // 1000
                self.up_ms %= 1000

    def uptime(self, now_ms):
        """Milliseconds since boot (past 12 days a big int: made at beats only, not every cycle)."""
        self._count_up(now_ms)
        return self.up_s * 1000 + self.up_ms

    def housekeeping(self, now_ms):
        self._count_up(now_ms)
        ob = self.outbox
        if self.owed & OWED_HELLO:
            self.hello()
        if self.owed:
            self.owed &= ~OWED_EVENT
            self.wake.set()
        # Only what was already sent is resent; newer events are on their way anyway.
        if (
            len(ob)
            and self.sent >= ob.first
            and time.ticks_diff(now_ms, self.progress_ms) >= self.opt["resend_ms"]
        ):
            self.rewind()

    # --- incoming ----------------------------------------------------------------

    def error(self, msgid, reason):
        self.send_ctl("error", (self.board, msgid, reason))

    def on_line(self, line):
        """Act on one frame from the host; never raises."""
        try:
            typ, f = wire.decode(line)
        except (wire.WireError, ValueError, IndexError) as e:  # WireError names the reason
            self.rejected += 1
            reason = getattr(e, "reason", wire.R_SYNTAX)
            if reason not in (wire.R_CRC, wire.R_SYNTAX, wire.R_LENGTH):  # line noise gets no answer
                self.error(0, reason)
            return
        if typ not in ("led", "config", "ping", "evack"):
            self.rejected += 1
            self.error(0, "wrong-direction")
            return
        if f[0] != self.board:
            self.rejected += 1  # addressed to another board: ignored, as the protocol says
            return
        # Signed: the host's MAC for this boot (a ping may be for any boot: 0). Forgeries get no answer.
        if self.key and not (
            wire.verify(line, self.key, self.table, self.board, self.boot)
            or (typ == "ping" and wire.verify(line, self.key, self.table, self.board, 0))
        ):
            self.rejected += 1
            return
        if self.link is not None:
            self.link.heard()
        if typ == "evack":
            self._evack(f[1], f[2])
            return
        msgid = f[1]
        if typ == "ping":  # also the host's resync: hello (the host learns the boot first), ack, the outbox
            self.hello()
            self.send_ctl("ack", (self.board, msgid))
            self.rewind()
            return
        # A recorded command played back (same boot, so the MAC holds) is not newer than the last one.
        d = (msgid - self.msgid) % wire.MSGID
        if self.key and self.msgid and (d == 0 or d > wire.MSGID // 2):
            self.rejected += 1
            return
        self.msgid = msgid
        if typ == "led":
            reason = self._led(f[2], f[3], f[4], f[5])
            if reason:
                self.error(msgid, reason)
            else:
                self.send_ctl("ack", (self.board, msgid))
        else:
            reason = self._config(f[2], f[3])
            if reason:
                self.error(msgid, reason)
            else:
                self.send_ctl("ack", (self.board, msgid))

    def _evack(self, boot, seq):
        if boot != self.boot:
            return  # for an earlier boot of ours: those events are gone
        if TRIAL:
            self._confirm()
        seq = min(seq, self.seq)
        if seq > self.acked:
            self.acked = seq
            self.progress_ms = time.ticks_ms()
        self.sent = max(self.sent, self.acked)
        self.outbox.trim(seq)

    def _led(self, target, pattern, rgb, period):
        if pattern not in PATTERNS:
            return "unknown-pattern"
        if rgb > 0xFFFFFF:
            return "bad-colour"
        idxs = self.strip.target(target)
        if not idxs:
            return "unknown-target"
        self.strip.set(idxs, pattern, rgb, period, time.ticks_ms())
        self.strip.render(time.ticks_ms())
        return None

    def _config(self, key, value):
        try:
            v = int(value)
        except ValueError:
            return "bad-value"
        if v < 0:
            return "bad-value"
        if key in BOARD_KEYS:
            if not wire.SETTINGS[key][0] <= v <= wire.SETTINGS[key][1]:
                return wire.R_RANGE
            self.opt[key] = v
            return None
        scope, dot, k = key.rpartition(".")
        if not dot or k not in SENSOR_KEYS:
            return "unknown-key"
        if scope in ("beam", "tilt", "presence"):
            targets = [s for s in self.sensors if s.kind == scope]
        elif scope in self.by_id:
            targets = [self.by_id[scope]]
        else:
            return "unknown-sensor"
        if not wire.SETTINGS[k][0] <= v <= wire.SETTINGS[k][1]:
            return wire.R_RANGE  # outside it a ball may be lost or noise counted (docs/protocol.md)
        hit = False
        for s in targets:
            if s.set(k, v):
                hit = True
        return None if hit else "unknown-key"

    # --- running -----------------------------------------------------------------

    def cycle(self, now_ms):
        """One pass of the sensing loop: sensors, LED frame every 40 ms, beat, resends."""
        self.sense()
        if time.ticks_diff(now_ms, self.led_at) >= 40:
            self.led_at = now_ms
            r0 = hal.ticks_us()
            self.strip.render(now_ms)
            # A frame the firmware sent itself is not a pause it missed, up to FRAME_US: beyond, one held it.
            own = min(FRAME_US, hal.diff(hal.ticks_us(), r0))
            self.own_us += own
            if self.ring.watch is not None:
                self.ring.watch.own(r0, hal.add(r0, own))
        if time.ticks_diff(now_ms, self.beat_at) >= self.opt["beat_ms"]:
            self.beat_at = now_ms
            self.beat()
        self.housekeeping(now_ms)
        if self.soft and time.ticks_diff(now_ms, self.free_at) >= 250:
            self.free_at = now_ms  # gc.mem_free() walks the heap's whole allocation table: not every cycle
            self.free = hal.mem_free()
        if self.soft and (self.free < self.opt["gc_free"] or time.ticks_diff(now_ms, self.gc_at) >= self.opt["gc_ms"]):
            self._collect(now_ms)

    def _collect(self, now_ms):
        """Soft IRQs wait out a collection (~30 ms with the heap in PSRAM): collect only while every
        beam is lit, as seldom as the heap allows, so a pause never stretches a break into a ball and
        seldom hides one. The port's own collections are off (hal.gc_manual); if the beams stay busy
        the heap grows instead, and only a nearly full one is collected whatever the beams do."""
        if self.free >= self.opt["gc_free"] // 4:
            if self.ring.pending() or self.check >= 0 or hal.diff(hal.ticks_us(), self.sensed_at) > SAFE_US:
                return  # handlers may still be on their way (the scheduler is busy), or the last pause is not counted yet
            for b in self.beams:
                if not b.quiet():
                    return
        self.gc_at = now_ms
        self.free = 1 << 30
        p0 = hal.ticks_us()
        hal.collect()
        p1 = hal.ticks_us()
        self.own_us += hal.diff(p1, p0)
        self._paused(p0, p1)  # edges of this pause reach the ring only after it, timeless

    async def _sensing(self, wdt):
        while True:
            try:
                self.cycle(time.ticks_ms())
            except Exception as e:  # noqa: BLE001 - one failed cycle (a MemoryError) must not end the sensing
                self.faults += 1
                if self.faults <= 3:
                    print("sensing: a cycle failed: %r" % (e,), file=sys.stderr)
            wdt.feed()  # fed here, so a stalled sensing loop resets the board
            await asyncio.sleep_ms(1)

    async def run(self):
        wdt = machine.WDT(timeout=self.opt["wdt_ms"]) if self.opt["wdt_ms"] else _NoWatchdog()
        if self.cfg.get("transport", "serial") == "mqtt":
            from mqttlink import MqttLink

            self.link = MqttLink(self)
        else:
            from links import SerialLink

            self.link = SerialLink(self)
        self.strip.render(time.ticks_ms())
        asyncio.create_task(self._sensing(wdt))
        if TRIAL:
            asyncio.create_task(self._trial())
        await self.link.run()


    # --- updates (firmware/ota.py) -------------------------------------------------------

    def _confirm(self):
        """On trial, the host's evack for this boot came (after our hello): this set is the one to start now."""
        import ota

        ota.confirm(self, self.link)

    async def _trial(self):
        """On trial: not confirmed in time, the board resets and main.py starts the previous set."""
        await asyncio.sleep_ms(TRIAL)
        if TRIAL:
            print("update: no evack within the %d ms trial: back to the previous firmware" % TRIAL, file=sys.stderr)
            machine.reset()


class _NoWatchdog:
    """wdt_ms 0: no watchdog (on rp2 and esp32 a started watchdog cannot be stopped, not even by mpremote)."""

    def feed(self):
        pass


def load_config(path="config.json"):
    with open(path) as f:
        return json.load(f)


def _build(path):
    """The board's App. Its own frame: once it returns, no stale slot of main's keeps the whole config alive."""
    # The heap is filled from its start. Room kept there while the config is read puts the config above
    # it; let go, the board's own objects fill it, and the config's garbage goes as one piece at the top:
    # not as holes among them, which left no block for a hello's 500-byte frame in a heap with 11 KB free.
    room = _room(path)
    cfg = load_config(path)
    import bootcount

    # Raised in flash (in the board's folder: config.json's) before the first frame goes out.
    boot = bootcount.advance(path.rpartition("/")[0], cfg.get("boots_from", 0))
    del bootcount, sys.modules["bootcount"]  # used once a boot: its heap goes back to the sensing
    del room
    gc.collect()
    return App(cfg, boot)


def _room(path):
    """A block about the size of what the config's pin map becomes (ROOM_PER_BYTE per byte of it), or less."""
    import os

    try:
        n = os.stat(path)[6] * ROOM_PER_BYTE
    except OSError:
        return None
    gc.collect()
    while n >= 1024:
        try:
            return bytearray(min(n, gc.mem_free() // 2))
        except MemoryError:
            n //= 2
    return None


def main():
    path = "config.json"
    try:
        import os

        path = os.getenv("BATTLEMENT_CONFIG") or path
    except (ImportError, AttributeError):
        pass
    app = _build(path)
    try:
        asyncio.run(app.run())
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 - keep the board alive: log, reset (the host sees a new boot id)
        sys.print_exception(e, sys.stderr)  # type: ignore[arg-type]
        time.sleep_ms(2000)
        machine.reset()
