"""The boot counter (firmware/bootcount.py) under the real MicroPython: raised in flash at every boot before
the first frame goes out, never going back whatever point a kill lands on, and a torn or garbage slot
survived. A board whose counter went back would have its fresh boots refused as replays by the host."""

import asyncio
import os
import random
import signal
import subprocess
import time
from binascii import crc32

import pytest
from battlement.link.messages import Hello
from battlement.link.transport import SerialTransport
from battlement.sim import firmware as fwsim
from battlement.sim.firmware import FirmwareProcess
from support.aio import running

SLOTS = ("boot.a", "boot.b")


def slot(n):
    body = b"boot %08x" % n
    return b"%s %08x\n" % (body, crc32(body))


def held(home):
    """The count each slot holds (None: missing, torn or garbage), read as the firmware reads it."""
    out = []
    for name in SLOTS:
        try:
            data = (home / name).read_bytes()
        except OSError:
            out.append(None)
            continue
        ok = len(data) == 23 and data.startswith(b"boot ") and crc32(data[:13]) == int(data[14:22] or b"0", 16)
        out.append(int(data[5:13], 16) if ok else None)
    return out


def advance(fw_code, home, floor=0):
    """One boot's bootcount.advance() under MicroPython: the count it returns."""
    p = subprocess.run([fwsim.micropython_binary(), "-c", "import bootcount; print(bootcount.advance(%r, %d))"
                        % (str(home), floor)], env=fwsim.micropython_env(fw_code), capture_output=True, text=True,
                       timeout=30, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    return int(p.stdout.split()[-1]), p.stderr


@pytest.mark.parametrize(("a", "b", "floor", "want", "written"), [
    (None, None, 0, 1, "boot.a"),  # a new board
    (slot(5), b"garbage\n", 0, 6, "boot.b"),  # a slot that is not one
    (slot(7)[:11], slot(7), 0, 8, "boot.a"),  # torn by a reset while it was written
    (slot(9), slot(3), 0, 10, "boot.b"),  # the lower slot is the one written: the highest is never touched
    (slot(4), slot(9)[:-3] + b"00\n", 0, 5, "boot.b"),  # a wrong CRC
    (slot(9), None, 1000, 1000, "boot.b"),  # `battlement flash`'s boots_from: past every boot before an erase
    (slot(0xFFFFFFFF), slot(0xFFFFFFFE), 0, 0xFFFFFFFF, "boot.b"),  # the wire's last boot: it stays there
])
def test_a_torn_missing_or_garbage_slot_is_survived_and_the_count_never_goes_back(fw_code, tmp_path, a, b, floor,
                                                                               want, written):
    for name, data in zip(SLOTS, (a, b)):
        if data is not None:
            (tmp_path / name).write_bytes(data)
    before = held(tmp_path)
    n, said = advance(fw_code, tmp_path, floor)
    assert n == want
    after = held(tmp_path)
    i = SLOTS.index(written)
    assert after[i] == want and after[1 - i] == before[1 - i]  # the other slot, the highest, is as it was
    unreadable = any(data is not None and count is None for data, count in zip((a, b), before))
    assert ("unreadable" in said) == unreadable  # said on the console, and the board boots all the same


def test_the_counter_survives_kills_at_random_points_of_its_writes(fw_code, tmp_path):
    """Boots as fast as MicroPython can count them, killed (SIGKILL) at a random moment, 150 times: every count a
    board went on with (the printed ones) is below what the next boot gets, and every boot boots."""
    loop = tmp_path / "boots.py"
    loop.write_text("import sys, bootcount\nwhile True:\n    sys.stdout.write('%d\\n' % bootcount.advance(sys.argv[1]))\n")
    rng = random.Random(2024)
    env = fwsim.micropython_env(fw_code)
    used, torn = 0, 0
    for _ in range(150):
        first, _said = advance(fw_code, tmp_path)
        assert first > used, "boot %d after boot %d went on: the counter went back" % (first, used)
        if None in held(tmp_path):
            torn += 1
        p = subprocess.Popen([fwsim.micropython_binary(), str(loop), str(tmp_path)], env=env,
                             stdout=subprocess.PIPE)
        time.sleep(rng.uniform(0.002, 0.03))
        p.send_signal(signal.SIGKILL)
        out, _ = p.communicate(timeout=10)
        counts = [int(x) for x in out.split()[:-1]]  # the last line may be cut short by the kill
        assert counts == sorted(set(counts)) and (not counts or counts[0] > first)
        used = max([first, *counts])
    assert advance(fw_code, tmp_path)[0] > used
    assert torn, "no kill landed inside a write: the test proved nothing"


def test_a_restarted_board_says_hello_with_the_next_boot_held_in_flash_before_it(pty_pair, tmp_path):
    """The whole firmware: each start in the same folder (its flash) is the next boot, in the first frame it sends."""
    async def main():
        fw = FirmwareProcess("tower-1", "pico-w", {"cup-1": "beam"}, port=pty_pair.b, home=tmp_path / "board")
        async with running(SerialTransport([pty_pair.a])) as t:
            boots = []
            for restart in range(3):
                fw.start()
                try:
                    first = await asyncio.wait_for(t.get(), 30)
                    assert isinstance(first, Hello), first
                    assert max(b or 0 for b in held(tmp_path / "board")) == first.boot  # in flash before it went out
                    boots.append(first.boot)
                finally:
                    fw.kill() if restart % 2 else fw.stop()
            assert boots == [1, 2, 3]
            assert os.path.exists(tmp_path / "board" / "config.json")

    asyncio.run(asyncio.wait_for(main(), 120))
