"""Run the real board firmware under the MicroPython unix port, with simulated pins.

The firmware in firmware/ runs unchanged; only `machine` and `neopixel` are
replaced (tests/firmware/fakes, through MICROPYPATH). This object drives the
simulated pins from outside over a loopback control socket, so a test or the
bridge's simulator can drop balls, tip towers and place pieces while the
firmware talks to the host over its real link:

    with FirmwareProcess("pong-a", "pico-w", {"tower-a1": "beam", "tilt-a1": "tilt"},
                         transport="serial", port=pty_b, leds=10) as fw:
        fw.drop_ball("tower-a1", width_ms=12)      # one event: beam 1, width 12000 us
        fw.tilt("tilt-a1", fallen=True)           # tilt 1 once settled (settle time simulated)
        fw.wait_pixels(lambda px: px[3] == (255, 0, 0), timeout=5)

    FirmwareProcess(board_id, profile, sensors, transport="serial", port=PTY_PATH)
    FirmwareProcess(board_id, profile, sensors, transport="mqtt", mqtt_url="mqtt://127.0.0.1:1883", table="hall-1")
    FirmwareProcess(..., model="esp32-gc")   # the board's timing model (tests/firmware/fakes/machine.py)
    FirmwareProcess(..., home=DIR)           # the board's flash: start() after stop() or kill() is a reboot
    FirmwareProcess(..., version="0.0.9-old") # its firmware says it is this version (an update's tests)

sensors: {id: kind} (pins assigned from the profile in sorted id order) or a
list of pin-map entries ({"id", "kind", "pin", "lower", "mux", "channel", ...}),
or pass a whole pin map with `pinmap=` (e.g. hardware/boards/red-kingdom.json).
A beam with "two": true gets a lower beam (mouth + lower, bounce-outs not counted).

Methods: start()/stop() (or use as a context manager), pulse(sensor, width_us),
drop_ball(sensor, width_ms=10, bounce=False), tilt(sensor, fallen),
presence(sensor, occupied), advance(us), sync(), board_stats(), pixels(), wait_pixels(pred, timeout),
log() (the firmware's stderr/stdout). The clock the firmware measures pulses
with is virtual: real time plus the work the firmware did (each port's costs)
plus every advance(); on the ESP32 models only the board's own sleeps let real
time in, so a busy host never looks like a pause the board did not ask for. Widths are exact on the ideal board (the default) and
within the port's IRQ latency on the others, and settle times pass instantly
when asked (settle=True), so nothing depends on how busy the machine is.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from typing import Self

from battlement.boards import hardware

# The tests build and stage the firmware through this module, as the simulated boards do.
from battlement.boards.firmware import FIRMWARE, ROOT, compile_module, firmware_modules, stage, venv_tool  # noqa: F401
from battlement.errors import UserError

FAKES = ROOT / "tests" / "firmware" / "fakes"
POWERCUT = "powercut"
# The unix port keeps native code in memory of its own: mpy-cross's name for this machine, if it has one.
NATIVE = {"x86_64": "x64", "amd64": "x64", "i686": "x86", "i386": "x86"}.get(platform.machine().lower())


def micropython_binary() -> str:
    return venv_tool("micropython", "the micropython unix port")


def board_modules() -> pathlib.Path:
    """The simulated board (tests/firmware/fakes) compiled to .mpy, once per content.

    Compiled, it costs the MicroPython heap little to load, so heap-limit runs measure the firmware; as
    machine code where the port runs it (NATIVE), its code is outside that heap, as a board's drivers are
    (C, in ROM).
    Its powercut/ folder (the `os` that cuts the power at a chosen write) goes on the path only
    for a board that is told where (BATTLEMENT_FS_KILL): otherwise it is the port's own os, and
    costs the firmware's heap nothing.
    """
    srcs = sorted(FAKES.glob("*.py")) + sorted(FAKES.glob(POWERCUT + "/*.py"))
    h = hashlib.sha256((NATIVE or "").encode())
    for p in srcs:
        h.update(str(p.relative_to(FAKES)).encode() + b"\0" + p.read_bytes())
    out = pathlib.Path(tempfile.gettempdir()) / ("battlement-board-" + h.hexdigest()[:16])
    if not out.is_dir():
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="battlement-board-"))
        (tmp / POWERCUT).mkdir()
        for p in srcs:
            compile_module(p, tmp / p.relative_to(FAKES).with_suffix(".mpy"), NATIVE, native=NATIVE is not None)
        try:
            tmp.rename(out)
        except OSError:  # another process made it first
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def micropython_env(code_dir: str | pathlib.Path, extra: dict | None = None, model: str | None = None) -> dict:
    """Environment for the unix port running the firmware on the simulated board.

    model: the board's timing model (ideal, rp2, esp32, esp32-gc; tests/firmware/fakes/machine.py).
    """
    env = dict(os.environ)
    if model:
        env["BATTLEMENT_BOARD"] = model
    env.update(extra or {})
    board = board_modules()
    path = [board, code_dir, ".frozen"]
    if env.get("BATTLEMENT_FS_KILL"):
        path.insert(0, board / POWERCUT)
    env["MICROPYPATH"] = ":".join(str(p) for p in path)
    return env


class FirmwareProcess:
    def __init__(
        self,
        board_id: str,
        profile: str = "pico-w",
        sensors=None,
        transport: str = "serial",
        port: str | None = None,
        mqtt_url: str | None = None,
        table: str = "table",
        leds: int = 10,
        pinmap: dict | str | None = None,
        settings: dict | None = None,
        heapsize: str | None = None,
        compiled: bool = False,
        model: str | None = None,
        home: str | pathlib.Path | None = None,
        version: str | None = None,
    ):
        if pinmap is not None:
            m = hardware.load_map(pinmap) if isinstance(pinmap, (str, pathlib.Path)) else dict(pinmap)
        else:
            m = hardware.pins_for(profile, sensors or {}, leds)
        m = dict(m)
        m["board"] = board_id
        m["table"] = table  # as `battlement flash --table` writes it: the board's MACs bind it
        m.update(settings or {})
        # The simulated machine reads its control socket when the firmware feeds the watchdog.
        m["wdt_ms"] = m.get("wdt_ms") or 8000
        problems = hardware.check(m, "simulated board %s" % board_id)
        if problems:
            raise UserError("; ".join(problems))
        self.board = board_id
        if transport == "mqtt":
            if not mqtt_url:
                raise UserError("transport mqtt needs mqtt_url")
            from battlement.link.transport.mqtt import parse_url

            host, mport, _tls, user, password = parse_url(mqtt_url)
            m["transport"] = "mqtt"
            m["mqtt"] = {
                "host": host,
                "port": mport,
                "table": table,
                "user": user or "",
                "password": password or "",
                "keepalive": 5,
            }
            # settings={"mqtt": {...}} adds to these (keepalive, tls and ca for a TLS broker).
            m["mqtt"].update((settings or {}).get("mqtt") or {})
        elif transport == "serial":
            if not port:
                raise UserError("transport serial needs port (the board's end of a pty pair)")
            m["transport"] = "serial"
            m["serial"] = {"path": port}
        else:
            raise UserError("transport must be serial or mqtt, not %r" % transport)
        self.config = m
        self.specs = {s["id"]: s for s in m["sensors"]}
        self.heapsize = heapsize
        self.compiled = compiled
        self.model = model  # board timing model (ideal, rp2, esp32, esp32-gc); None: ideal
        # The board's own folder, its flash: kept from one start() to the next, so a restart is a reboot (its
        # boot counter goes on). None: a fresh temporary one per start, removed at stop().
        self.home = pathlib.Path(home) if home is not None else None
        self.version = version  # the version its firmware says it is (None: this build's; an update's tests differ)
        self.proc: subprocess.Popen | None = None
        self._dir: pathlib.Path | None = None
        self._ctl: socket.socket | None = None
        self._lock = threading.Condition()
        self._pixels: list[tuple[int, int, int]] = []
        self._px_frames = 0
        self._synced = 0
        self._sync_no = 0
        self._stats: dict | None = None
        self._reader: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------

    def start(self) -> Self:
        if self.home is not None:
            self.home.mkdir(parents=True, exist_ok=True)
        self._dir = self.home or pathlib.Path(tempfile.mkdtemp(prefix="battlement-fw-"))
        code = stage(self._dir / "code", compiled=self.compiled, ver=self.version)
        (self._dir / "config.json").write_text(json.dumps(self.config))
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        srv.settimeout(0.05)
        env = micropython_env(
            code,
            {
                "BATTLEMENT_SIM": "127.0.0.1:%d" % srv.getsockname()[1],
                "BATTLEMENT_CONFIG": str(self._dir / "config.json"),
            },
            model=self.model,
        )
        cmd = [micropython_binary()]
        if self.heapsize:
            cmd += ["-X", "heapsize=" + self.heapsize]
        cmd += [str(code / "main.py")]
        self._logf = open(self._dir / "firmware.log", "wb")  # noqa: SIM115 - the child writes it until stop()
        self.proc = subprocess.Popen(
            cmd, cwd=str(self._dir), env=env, stdout=self._logf, stderr=subprocess.STDOUT
        )
        try:
            self._ctl = self._accept(srv)
        except OSError:
            self.stop()
            raise RuntimeError("simulated board %s did not start: %s" % (self.board, self.log()[-800:]))
        finally:
            srv.close()
        self._ctl.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        return self

    def _accept(self, srv: socket.socket) -> socket.socket:
        """The firmware's control connection (its `machine` makes it at import); OSError at once if the process
        ends first (a board dying at boot, before it imports machine), or after 15 s."""
        end = time.monotonic() + 15
        while True:
            try:
                return srv.accept()[0]
            except TimeoutError:
                assert self.proc is not None
                if self.proc.poll() is not None or time.monotonic() > end:
                    raise

    def stop(self) -> None:
        if self._ctl is not None:
            try:
                self._ctl.close()  # the fake machine exits when its controller goes away
            except OSError:
                pass
            self._ctl = None
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.wait(2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(3)
        if getattr(self, "_logf", None):
            self._logf.close()
        if self._dir is not None:
            self._last_log = self.log()
            if self.home is None:
                shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def kill(self) -> None:
        """Power lost: the process ends at once, wherever it was (SIGKILL); its folder stays for the next start()."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        if self._dir is None:
            return getattr(self, "_last_log", "")
        try:
            return (self._dir / "firmware.log").read_text(errors="replace")
        except OSError:
            return ""

    # --- control channel ------------------------------------------------------------

    def _read_loop(self) -> None:
        buf = b""
        sock = self._ctl
        while sock is not None:
            try:
                data = sock.recv(65536)
            except OSError:
                break
            if not data:
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            with self._lock:
                for line in lines:
                    if line.startswith(b"px "):
                        self._pixels = [
                            (int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16))
                            for c in line[3:].decode().split(",")
                            if c
                        ]
                        self._px_frames += 1
                    elif line.startswith(b"sync "):
                        self._synced = int(line[5:])
                    elif line.startswith(b"stats "):
                        self._stats = json.loads(line[6:])
                self._lock.notify_all()

    def _send(self, *cmds: str) -> None:
        if self._ctl is None:
            raise RuntimeError("simulated board %s is not running" % self.board)
        self._ctl.sendall((";".join(cmds) + "\n").encode())

    def sync(self, timeout: float = 10.0) -> None:
        """Wait until the firmware has applied every pin change sent so far."""
        self._sync_no += 1
        n = self._sync_no
        self._send("sync %d" % n)
        with self._lock:
            if not self._lock.wait_for(lambda: self._synced >= n or not self.alive(), timeout):
                # The pins are read where the sensing loop feeds the watchdog: it has stopped (a real
                # board's watchdog would reset it). Its log says why.
                raise TimeoutError("simulated board %s did not answer sync within %g s (its sensing loop is "
                                   "not running); its log ends: %s" % (self.board, timeout, self.log()[-1500:]))

    def board_stats(self, timeout: float = 10.0) -> dict:
        """The simulated board's own counters, once every pin change sent so far is applied: "sched_lost" (edges
        whose handler the port's full scheduler queue refused: the firmware never saw them), "console_held"
        (writes that held the board, pin handlers too: the ESP32's USB-Serial/JTAG console), "unasked", "gc"."""
        with self._lock:
            self._stats = None
        self._send("stats")
        with self._lock:
            if not self._lock.wait_for(lambda: self._stats is not None or not self.alive(), timeout):
                raise TimeoutError("simulated board %s did not answer stats within %g s" % (self.board, timeout))
            return dict(self._stats or {})

    def _spec(self, sensor: str, kind: str | None = None) -> dict:
        s = self.specs.get(sensor)
        if s is None:
            raise UserError(
                "board %s has no sensor %r (it has %s)" % (self.board, sensor, ", ".join(sorted(self.specs)))
            )
        if kind and s["kind"] != kind:
            raise UserError("sensor %s on %s is a %s, not a %s" % (sensor, self.board, s["kind"], kind))
        return s

    def _level_cmd(self, s: dict, on: bool) -> str:
        active = s.get("active", 0)
        level = active if on else 1 - active
        if "mux" in s:
            mc = self.config["muxes"][s["mux"]]
            return "mux %d %s %d %d" % (
                mc["sig"],
                ",".join(str(p) for p in mc["select"]),
                s["channel"],
                level,
            )
        return "set %d %d" % (s["pin"], level)

    def advance(self, us: int) -> None:
        """Move the firmware's sensor clock forward by us microseconds."""
        self._send("adv %d" % us)

    def _pulse_cmds(self, s: dict, pin_key: str, width_us: int) -> list[str]:
        active = s.get("active", 0)
        pin = s[pin_key]
        return ["set %d %d" % (pin, active), "adv %d" % width_us, "set %d %d" % (pin, 1 - active)]

    def pulse(self, sensor: str, width_us: int, lower: bool = False, gap_us: int | None = None) -> None:
        """Break one beam (the mouth, or the lower beam) for exactly width_us, then leave a gap."""
        s = self._spec(sensor, "beam")
        gap = (
            gap_us
            if gap_us is not None
            else 1000 * s.get("lockout_ms", self.config.get("lockout_ms", 5)) + 1000
        )
        cmds = self._pulse_cmds(s, "lower" if lower else "pin", width_us)
        self._send(*cmds, "adv %d" % gap)

    def drop_ball(self, sensor: str, width_ms: float = 10, bounce: bool = False) -> None:
        """A ball into a beam sensor. Two-beam sensors: through the mouth, then the lower beam unless bounce."""
        s = self._spec(sensor, "beam")
        w = int(width_ms * 1000)
        gap = 1000 * s.get("lockout_ms", self.config.get("lockout_ms", 5)) + 1000
        cmds = self._pulse_cmds(s, "pin", w)
        if "lower" in s:
            cmds += ["adv 30000"]
            if not bounce:
                cmds += self._pulse_cmds(s, "lower", w)
        self._send(*cmds, "adv %d" % gap)

    def _settled(self, s: dict, on: bool, settle: bool) -> None:
        cmds = [self._level_cmd(s, on)]
        if settle:
            default = self.config.get(s["kind"] + "_settle_ms", 100 if s["kind"] == "tilt" else 150)
            ms = s.get("settle_ms", default) + 2 * self.config.get("scan_ms", 5) + 2
            # Let a mux scan see the new level before the clock jumps, so settling is timed from it.
            self._send(*cmds)
            self.sync()
            time.sleep(0.02)
            cmds = ["adv %d" % (ms * 1000)]
        self._send(*cmds)

    def tilt(self, sensor: str, fallen: bool, settle: bool = True) -> None:
        """Tip a tower or figure over (fallen=True) or stand it up; settle=True skips the settle wait."""
        self._settled(self._spec(sensor, "tilt"), fallen, settle)

    def presence(self, sensor: str, occupied: bool, settle: bool = True) -> None:
        """Put a piece on a cell (occupied=True) or take it away."""
        self._settled(self._spec(sensor, "presence"), occupied, settle)

    def trigger_all(self, sensors: dict[str, str]) -> None:
        """Every sensor once (id -> kind, as a hello lists them): an 8 ms ball through each beam, each tilt
        fallen, each cell occupied, none waiting to settle; then 0.3 s of the board's time for them to be told."""
        for sid, kind in sorted(sensors.items()):
            if kind == "beam":
                self.drop_ball(sid, width_ms=8)
            elif kind == "tilt":
                self.tilt(sid, True, settle=False)
            else:
                self.presence(sid, True, settle=False)
        self.sync()
        self.advance(300_000)

    def raw(self, *cmds: str) -> None:
        """Send control commands as they are (set/adv/mux; see tests/firmware/fakes/machine.py)."""
        self._send(*cmds)

    # --- LEDs -------------------------------------------------------------------

    def pixels(self) -> list[tuple[int, int, int]]:
        """The colours the NeoPixel strip shows now, as (r, g, b) per pixel."""
        with self._lock:
            return list(self._pixels)

    def wait_pixels(self, predicate, timeout: float = 5.0) -> list[tuple[int, int, int]]:
        """Wait until predicate(pixels) is true; returns those pixels or raises TimeoutError."""
        with self._lock:
            ok = self._lock.wait_for(lambda: bool(self._pixels) and predicate(list(self._pixels)), timeout)
            if not ok:
                raise TimeoutError("pixels never matched on %s; last shown %s" % (self.board, self._pixels))
            return list(self._pixels)
