"""Signed frames: the codec's own HMAC-SHA256 (MicroPython has no hmac module) against CPython's,
the MAC bound to the board's table, id and boot, keys files made 0600 and kept out of git, and a signed serial
board end to end (an unsigned one is refused and counted as mac)."""

import asyncio
import hashlib
import hmac
import os
import pathlib
import stat
import subprocess

import pytest
from battlement.link import keys as boardkeys
from battlement.link import wire
from battlement.link.messages import Event, Led
from battlement.link.transport import SerialTransport
from hypothesis import given, settings
from hypothesis import strategies as st
from support.aio import drain, running, take, until
from support.board import SerialBoard

ROOT = pathlib.Path(__file__).resolve().parents[2]
KEY = bytes(range(16))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=600))
def test_our_hmac_is_cpythons_hmac(key, msg):
    assert wire.hmac_sha256(key, msg) == hmac.new(key, msg, hashlib.sha256).digest()


def test_micropython_signs_byte_for_byte_what_cpython_verifies(micropython, tmp_path):
    script = tmp_path / "mp_sign.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\nimport wire\n"
        "k = bytes(range(16))\n"
        "f = wire.sign(wire.encode('event', ('tower-1', 0x5f3a9c, 12, 'cup-1', 'beam', 1, 834211, 8200)), k, 'hall-1', "
        "'tower-1', 0x5f3a9c)\n"
        "sys.stdout.write(f.decode())\n"
        "print(wire.verify(f, k, 'hall-1', 'tower-1', 0x5f3a9c), wire.verify(f, k, 'hall-1', 'tower-1', 1), "
        "wire.hmac_sha256(b'k' * 100, b'abc').hex())\n"
        % str(pathlib.Path(wire.__file__).parent))
    out = subprocess.run([micropython, str(script)], capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    frame, check = out.stdout.splitlines(keepends=True)
    assert wire.verify(frame.encode(), KEY, "hall-1", "tower-1", 0x5F3A9C)
    assert check.split() == ["True", "False", hmac.new(b"k" * 100, b"abc", hashlib.sha256).hexdigest()]


def test_a_signed_frame_decodes_as_before_and_verifies_only_with_its_key_table_board_and_boot():
    frame = wire.encode("led", ("tower-1", 9, "ring", "pulse", 0xFF8000, 1200))
    signed = wire.sign(frame, KEY, "hall-1", "tower-1", 0xB007)
    assert signed.count(b" ~") == 1 and len(signed) == len(frame) + 18
    assert wire.decode(signed) == wire.decode(frame)
    assert wire.verify(signed, KEY, "hall-1", "tower-1", 0xB007)
    assert not wire.verify(signed, KEY, "hall-1", "tower-1", 0xB008)  # recorded during another boot
    assert not wire.verify(signed, KEY, "hall-2", "tower-1", 0xB007)  # a copy of the table with the same keys
    assert not wire.verify(signed, KEY, "hall-1", "tower-2", 0xB007)  # another board holding the same key
    assert not wire.verify(signed, bytes(16), "hall-1", "tower-1", 0xB007)
    assert not wire.verify(frame, KEY, "hall-1", "tower-1", 0xB007)  # unsigned
    i = signed.index(b"~") + 1
    for k in range(16):  # any digit of the MAC changed (and the CRC made right again)
        body = bytearray(signed[:signed.rindex(b"*")])
        body[i + k] = ord("0") if body[i + k] != ord("0") else ord("1")
        again = bytes(body) + b"*%08x\n" % wire.crc32(bytes(body))
        assert wire.decode(again) and not wire.verify(again, KEY, "hall-1", "tower-1", 0xB007)


def test_keys_file_is_private_stable_and_ignored_by_git(tmp_path):
    path = tmp_path / "tables" / "hall.keys.toml"
    k1 = boardkeys.provision(path, "tower-1")
    assert len(k1) == 32 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert boardkeys.provision(path, "tower-1") == k1  # reflashing keeps the key
    k2 = boardkeys.provision(path, "tower-2")
    assert k2 != k1 and boardkeys.load(path) == {"tower-1": bytes.fromhex(k1), "tower-2": bytes.fromhex(k2)}
    assert boardkeys.path_of("ringo") == ROOT / "hardware" / "tables" / "ringo.keys.toml"
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "hardware/tables/ringo.keys.toml"],
                             check=False)
    assert ignored.returncode == 0
    (tmp_path / "open.toml").write_text('table = "x"\n[signing]\nserial = false\n')
    assert boardkeys.serial_signing(tmp_path / "open.toml") is False
    assert boardkeys.serial_signing(ROOT / "hardware" / "tables" / "ringo.toml") is True


def test_flash_puts_the_boards_key_in_its_config_and_the_keys_file(tmp_path):
    from argparse import Namespace

    from battlement.boards.flash import plan

    keys = tmp_path / "hall.keys.toml"
    args = Namespace(board="pico-w", port="/dev/null", id="red-kingdom", map=None, dry_run=False,
                     mqtt=None, table="hall", wifi_ssid=None, wifi_password=None, build_dir=str(tmp_path / "b"),
                     keys_dir=str(tmp_path))
    cfg = plan(args)[0]
    assert bytes.fromhex(cfg["key"]) == boardkeys.load(keys)["red-kingdom"]
    assert plan(args)[0]["key"] == cfg["key"]


def test_a_signed_serial_board_is_heard_and_an_unsigned_one_is_refused(pty_pair):
    async def main():
        board = SerialBoard(pty_pair.b, key=KEY).open()
        t = SerialTransport([pty_pair.a])
        t.sign(None, {"tower-1": KEY})
        async with running(t, board) as t:
            board.hello()
            board.event()
            msgs = await take(t, 2)
            assert [type(m).__name__ for m in msgs] == ["Hello", "Event"]
            await asyncio.to_thread(board.pump, 0.3)  # the host's evack is signed: the board trims
            assert board.unacked() == [] and board.forged == 0
            msgid = await t.send(Led("tower-1", "ring", "solid", 0xFF0000, 0))
            await asyncio.to_thread(board.pump, 0.3)
            assert [f[1] for f in board.down_of("led")] == [msgid]
            board.key = None  # the same board id, no key: nothing it says counts
            board.event()
            board.write(b"event tower-1 b007 3 cup-1 beam 1 5 9 ~0123456789abcdef*" + b"0" * 8 + b"\n")
            await until(lambda: t.counters.get("mac", 0) == 1, what="unsigned event refused")
            await asyncio.sleep(0.1)
            assert not [m for m in drain(t) if isinstance(m, Event)]
            assert t.counters.get("crc", 0) == 1

    asyncio.run(asyncio.wait_for(main(), 30))


@pytest.mark.parametrize("typ", ["event", "hello", "ping"])
def test_signing_costs_18_bytes_and_fits_the_frame(typ):
    fields = {"event": ("tower-1", 1, 1, "cup-1", "beam", 1, 0, 0),
              "hello": ("tower-1", 1, "1.0", wire.VERSION, "tower", "-", 0, 0), "ping": ("tower-1", 1)}[typ]
    f = wire.encode(typ, fields)
    assert len(wire.sign(f, KEY, "hall-1", "tower-1", 1)) == len(f) + 18
