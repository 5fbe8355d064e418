"""What gets deployed: every module compiles with mpy-cross for both boards, and the compiled
firmware runs a full board inside a heap that fits a Pico W comfortably.

Heap figures, measured with the compiled firmware (MicroPython unix port, 64-bit,
so objects are about twice their size on the 32-bit boards; the simulated machine
module, compiled from source, is counted too): red-kingdom (18 beams, 9 tilts
through a mux, 73 pixels chasing) runs in 112K and fails at 104K; ringo-a (21 mux
cells, 22 pixels) runs in 96K and fails at 80K; outer-wall (Medieval Madness: 28 mux spaces,
29 pixels, a group per space) runs in 104K and fails at 96K. The limit below leaves ~15% room
for the largest kit; a Pico W has about 150K free with Wi-Fi up.
"""

import asyncio
import json

import pytest
from battlement.boards import firmware as fwbuild
from battlement.boards import hardware
from battlement.link.messages import Event, Hello, Led, Reply
from battlement.link.transport import SerialTransport
from battlement.sim import firmware as fwsim
from battlement.sim.firmware import FirmwareProcess
from fwtest import HERE, run_mp

# Measured with signed frames, the virtual-time board and red-kingdom's 27 sensors (roof switches
# included). The unix port is 64-bit, so objects take about twice what they take on the 32-bit Pico W
# (~150 KB free with Wi-Fi up), and the simulated board's own modules share this heap.
# The honest beam account took red-kingdom from 152K to 164K, boot counting, updates and Improv to 172-192K.
# Each detector's state in one array, no garbage from the sensing loop, the pin map let go after boot and
# each sensor's spec as it is built brought it to 140K; the outbox kept as numbers (no frame held per event),
# sensor building as boot-only code, a token cache that never fails a frame, and a simulated board whose own
# code is outside the heap (native, as a board's drivers are in ROM) to 125-126K (tests/bench/bench_heap.py
# measures each map beside the previous release, in 1K steps). The limit leaves room for a loaded machine,
# where the host's acks come late and control frames wait.
HEAP = "140K"


@pytest.mark.parametrize("march", ["armv6m", "xtensawin", None])
def test_every_firmware_module_compiles_with_mpy_cross(tmp_path, march):
    out = fwsim.stage(tmp_path / (march or "bytecode"), compiled=True, march=march)
    mods = sorted(p.name for p in out.iterdir())
    want = sorted([(p.stem + ".mpy") if p.name != "main.py" else p.name for p in fwsim.firmware_modules()]
                  + ["fwversion.mpy"])  # the version the build writes: what the hello says (docs/protocol.md)
    assert mods == want
    for p in out.glob("*.mpy"):
        assert p.read_bytes()[:1] == b"M" and (p.stat().st_size > 100 or p.name == "fwversion.mpy")
    assert fwbuild.version().encode() in (out / "fwversion.mpy").read_bytes()


async def _next(t, kind, timeout=30):  # generous: a busy test machine runs the small board slowly
    while True:
        m = await asyncio.wait_for(t.get(), timeout)
        if isinstance(m, kind):
            return m


@pytest.mark.parametrize("pinmap", ["red-kingdom", "ringo-a", "outer-wall"])
def test_compiled_firmware_runs_a_full_board_in_a_small_heap(pty_pair, pinmap):
    async def main():
        t = SerialTransport([pty_pair.a])
        await t.start()
        fw = FirmwareProcess(
            pinmap,
            pinmap=str(fwsim.ROOT / "hardware" / "boards" / (pinmap + ".json")),
            port=pty_pair.b,
            heapsize=HEAP,
            compiled=True,
        )
        try:
            fw.start()
            hello = await _next(t, Hello)
            group = {"red-kingdom": "kingdom", "ringo-a": "cells"}.get(pinmap, "all")
            await t.send(Led(pinmap, group, "chase", 0xFF0000, 400))
            assert (await _next(t, Reply)).ok
            want = len(hello.sensors)
            fw.trigger_all(hello.sensors)
            got = set()
            deadline = asyncio.get_running_loop().time() + 120  # beats keep coming: _next alone would wait for ever
            while len(got) < want:
                left = deadline - asyncio.get_running_loop().time()
                assert left > 0, "never reported: %s\n%s" % (sorted(set(hello.sensors) - got), fw.log()[-2000:])
                got.add((await _next(t, Event, min(30, left))).sensor)
            assert got == set(hello.sensors)
            fw.wait_pixels(lambda px: px.count((255, 0, 0)) == 1)
            await asyncio.sleep(0.5)
            assert fw.alive(), fw.log()
        finally:
            fw.stop()
            await t.stop()
        assert "MemoryError" not in fw.log()

    asyncio.run(main())


@pytest.mark.parametrize("model", ["rp2", "esp32-gc"])
def test_the_sensing_loop_allocates_nothing_once_the_board_is_up(fw_code, tmp_path, model):
    # Defect: every pass of the loop (1000 a second) made garbage (each sensor's tuple of beams, a bound method
    # per drain: 320 bytes on the 64-bit port), quiet or not. On an ESP32, whose port collects only when the
    # firmware lets it, that is what fills the heap between collections (and each collection is a pause a
    # ball may fall in); on a Pico W a collection whenever the heap fills. Quiet, and with noise on every beam
    # (edges through the handlers, the ring and the detectors, no ball to report), nothing is allocated now.
    cfg = dict(hardware.load_map(str(fwsim.ROOT / "hardware" / "boards" / "red-kingdom.json")), board="red-kingdom")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    p = run_mp(fw_code, HERE / "mp" / "quiet_heap.py", [path], heapsize="8M", model=model)
    assert p.returncode == 0, p.stdout + p.stderr
    quiet, noise, glitches = map(int, p.stdout.split())
    assert glitches >= 390  # the noise reached the detectors
    assert (quiet, noise) == (0, 0), "bytes allocated a pass: %d quiet, %d with noise" % (quiet, noise)
