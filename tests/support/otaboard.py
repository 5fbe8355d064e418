"""A board being updated over the air, for the update tests (tests/firmware/test_ota_faults.py,
tests/cli/test_update.py) and the update bench (tests/bench/bench_update.py).

Rig: the real firmware under MicroPython on MQTT with a signing key, its flash (a folder) kept across
restarts, and restarted whenever its process ends, as a board comes back when it resets or its power
does; the bridge's transport beside it, taking and acknowledging its events; and the Updater of
`battlement update`. Sets: firmware sets built once (compiled, as updates send them), in versions.
"""

import asyncio
import collections
import os
import pathlib

from battlement.boards import firmware as fwbuild
from battlement.boards.update import FirmwareSet, Updater
from battlement.link.messages import Event, Hello
from battlement.link.transport import MqttTransport
from battlement.sim.firmware import FirmwareProcess

KEY = bytes(range(16))
BOARD = "cup-board"
CUPS = [{"id": "cup-1", "kind": "beam"}]


def variant(base, tmp, version, app_source=None):
    """base with another version module (and another app.mpy, e.g. one that cannot start)."""
    d = pathlib.Path(tmp) / version
    d.mkdir(parents=True, exist_ok=True)
    files = dict(base.files)
    files[fwbuild.VERSION_MODULE + ".mpy"] = fwbuild.write_version(d, version, compiled=True).read_bytes()
    if app_source is not None:
        (d / "app.py").write_text(app_source)
        fwbuild.compile_module(d / "app.py", d / "app.mpy")
        files["app.mpy"] = (d / "app.mpy").read_bytes()
    return FirmwareSet(version, tuple(sorted(files.items())))


def build_sets(tmp):
    """The firmware compiled once as an update sends it, in two versions, and one that crashes at start."""
    tmp = pathlib.Path(tmp)
    a = FirmwareSet.from_folder(fwbuild.stage(tmp / "a", compiled=True, ver="0.2.0-aaaaaaaa"), "0.2.0-aaaaaaaa")
    return {"a": a, "b": variant(a, tmp, "0.2.0-bbbbbbbb"),
            "crash": variant(a, tmp, "0.2.0-crashing", 'raise RuntimeError("this firmware cannot start")\n')}


class Rig:
    def __init__(self, broker, tmp, table, version="0.1.9-flashed", trial_s=8.0, answer_s=5.0, boot_s=15.0,
                 updater=Updater, drain_s=5.0):
        self.table = table
        self.home = pathlib.Path(tmp) / "board"
        self.budget = self.home / "power-cut"
        self.fw = FirmwareProcess(BOARD, "esp32-s3-devkitc-1", CUPS, transport="mqtt", mqtt_url=broker.url,
                                  table=table, leds=4, home=self.home, version=version,
                                  settings={"key": KEY.hex(), "mqtt": {"keepalive": 5}})
        self.bridge = MqttTransport(broker.url, table=table)
        self.bridge.sign(table, {BOARD: KEY})
        self.up = updater(MqttTransport(broker.url, table=table), {(table, BOARD): KEY}, trial_s=trial_s,
                          answer_s=answer_s, boot_s=boot_s, drain_s=drain_s)
        self.widths = collections.Counter()  # every event the bridge took, by width (each ball has its own)
        self.hellos: list[Hello] = []
        self.exits: list[int] = []  # how each run of the board's process ended (3: it reset itself)
        self.logs: list[str] = []
        self.dropped = 0
        self.armed = 0  # how many times cut_power_at was called
        self.stopping = False
        self._tasks: list[asyncio.Task] = []

    async def start(self):
        await self.bridge.start()
        await asyncio.to_thread(self._boot)
        await self.up.start()
        self._tasks = [asyncio.create_task(self._watch()), asyncio.create_task(self._take())]
        end = asyncio.get_running_loop().time() + 20
        while not self.hellos:  # its hello comes after it subscribed: from here it hears the updater
            assert asyncio.get_running_loop().time() < end, "the board never said hello:\n" + self.log()
            await asyncio.sleep(0.02)
        return self

    async def stop(self):
        self.stopping = True
        watch, take = self._tasks or (None, None)
        if watch is not None:
            await asyncio.wait_for(watch, 30)  # a restart under way ends first: its process is then stopped
            take.cancel()
        await self.up.stop()
        await self.bridge.stop()
        await asyncio.to_thread(self.fw.stop)

    def _boot(self):
        os.environ["BATTLEMENT_FS_KILL"] = str(self.budget)  # read by the fake os (tests/firmware/fakes/powercut/os.py)
        try:
            self.fw.start()
        except RuntimeError:  # it died before its machine module said hello to us: _watch starts it again
            pass
        finally:
            del os.environ["BATTLEMENT_FS_KILL"]

    async def _watch(self):
        """A board whose process ended (a reset, a power cut) is started again on the same flash."""
        while not self.stopping:
            await asyncio.sleep(0.02)
            p = self.fw.proc
            if p is not None and p.poll() is not None and not self.stopping:
                self.exits.append(p.returncode)
                self.logs.append(self.fw.log())
                await asyncio.to_thread(self.fw.stop)
                await asyncio.to_thread(self._boot)

    async def _take(self):
        while True:
            m = await self.bridge.get()
            if isinstance(m, Event):
                self.widths[m.width_us] += 1
            elif isinstance(m, Hello):
                self.hellos.append(m)

    def log(self):
        return "\n".join(self.logs[-3:] + [self.fw.log()])[-4000:]

    # --- what a test does ------------------------------------------------------------------

    def drop(self, n=1):
        """n balls, each of its own width; returns their widths in us."""
        out = []
        for _ in range(n):
            self.dropped += 1
            w = 2000 + 250 * self.dropped
            self.fw.drop_ball("cup-1", width_ms=w / 1000)
            out.append(w)
        self.fw.sync()
        return out

    async def arrived(self, widths, timeout=10.0):
        """Every one of widths taken by the bridge (exactly once: checked by exactly_once)."""
        end = asyncio.get_running_loop().time() + timeout
        while any(self.widths[w] < 1 for w in widths):
            if asyncio.get_running_loop().time() > end:
                raise AssertionError("events %s never arrived; the bridge took %s\n%s" % (
                    [w for w in widths if not self.widths[w]], dict(self.widths), self.log()))
            await asyncio.sleep(0.02)

    def exactly_once(self):
        """Every ball dropped arrived once, none twice, nothing else."""
        want = {2000 + 250 * i for i in range(1, self.dropped + 1)}
        assert {w: n for w, n in self.widths.items() if n != 1 or w not in want} == {}, self.log()

    async def running(self, timeout=20.0):
        """The board's `ota info` once it answers again (after restarts): what it runs now."""
        end = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                return await self.up.info(self.table, BOARD)
            except TimeoutError:
                if asyncio.get_running_loop().time() > end:
                    raise AssertionError("the board never answered again (exits %s, alive %s, writes %s):\n%s" % (
                        self.exits, self.fw.alive(), self.writes()[-5:], self.log())) from None

    def cut_power_at(self, n, at=None):
        """The board dies at its n-th filesystem write from now (counted across its restarts), or at the n-th
        whose "<op> <path>" the regex `at` matches (tests/firmware/fakes/powercut/os.py)."""
        self.armed += 1
        self.budget.with_name(self.budget.name + ".log").unlink(missing_ok=True)
        tmp = self.budget.with_name(self.budget.name + ".tmp")
        tmp.write_text("%d %d %s" % (self.armed, n, at) if at else "%d %d" % (self.armed, n))
        os.replace(tmp, self.budget)  # whole: the board never reads half of it

    def was_cut(self):
        """The power went, as cut_power_at asked, since it was last called."""
        count = self.budget.with_name(self.budget.name + ".count")
        return count.exists() and count.read_text() == "%d cut" % self.armed

    def writes(self):
        """The filesystem writes since cut_power_at, as "<op> <path>"; the last one is where it died."""
        log = self.budget.with_name(self.budget.name + ".log")
        if not log.exists():
            return []
        return [line.split(" ", 1)[1] for line in log.read_text().splitlines()]

    def power_stays(self):
        self.budget.unlink(missing_ok=True)
