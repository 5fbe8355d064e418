"""The table's keys file outside `battlement run`: `battlement sim` signs with it, so a bridge with
the same table's keys hears its boards; `battlement monitor` checks every MAC with it, refusing what a
keyless sender says, and says in words when it has no key to check with."""

import os
import select
import shutil
import signal
import time

from battlement.link import keys as boardkeys
from battlement.link import wire
from battlement.table import maps as tables
from cli.test_monitor import monitor, wait_line
from support.board import SerialBoard
from support.procs import command

KEY = bytes(range(16))


def _keys_file(folder, board="tower-1", table="hall"):
    """Table's keys, in folder as the keys folder."""
    folder.mkdir(exist_ok=True)
    f = folder / (table + ".keys.toml")
    f.write_text('[keys]\n%s = "%s"\n' % (board, KEY.hex()))
    os.chmod(f, 0o600)
    return f


def _ringo_map(tmp_path):
    tmap = tmp_path / "ringo.toml"
    shutil.copy(tables.default_path("ringo"), tmap)
    return tmap


def _sim(tmap, keys_dir):
    """`battlement sim` for that table map, its output read by wait_line."""
    return command("sim", "--table", str(tmap), "--keys-dir", str(keys_dir), "--wait", "30")


def test_monitor_with_the_keys_checks_every_mac_and_acknowledges_nothing(pty_pair, tmp_path):
    _keys_file(tmp_path)
    proc = monitor("--serial", pty_pair.a, "--table", "hall", "--keys-dir", str(tmp_path), "--every", "0.3",
                   "--seconds", "40")
    try:
        wait_line(proc, "signatures: checked with the keys of 1 board(s)")
        wait_line(proc, " open\n")
        board = SerialBoard(pty_pair.b, key=KEY, table="hall").open()  # its MACs bind its table, as flashed
        board.hello()
        board.event(sensor="cup-1")
        wait_line(proc, "event  #1 cup-1 beam")
        board.key = None  # the same id without the key: a forger on the cable
        board.event(sensor="cup-1")
        wait_line(proc, "rejected mac frame")
        board.pump(0.5)
        assert board.down_of("evack") == []  # the bridge acknowledges, not a watcher beside it
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)  # a bound: a loaded machine may be slow to stop it


def test_monitor_without_keys_says_it_cannot_check(pty_pair):
    proc = monitor("--serial", pty_pair.a, "--every", "0.3", "--seconds", "40")
    try:
        wait_line(proc, "signatures: not checked (no keys: a table's keys: give --table T)")
        wait_line(proc, " open\n")
        board = SerialBoard(pty_pair.b, key=KEY).open()
        board.hello()
        wait_line(proc, "board tower-1 signs its frames: their MAC is not checked here")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)  # a bound: a loaded machine may be slow to stop it


def test_sim_signs_with_the_tables_keys_file(tmp_path):
    tmap = _ringo_map(tmp_path)
    board = min(tables.load(str(tmap)).boards)
    _keys_file(tmp_path / "keys", board, "ringo")
    proc = _sim(tmap, tmp_path / "keys")
    try:
        lines = wait_line(proc, "# board %s" % board)
        where = boardkeys.path_of("ringo", tmp_path / "keys")
        assert any("boards sign with the keys in %s (1 of them)" % where in x for x in lines)
        port = next(x.split()[1] for x in lines if x.strip().endswith("# board %s" % board))
        fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
        try:
            os.write(fd, wire.sign(wire.encode("ping", (board, 1)), KEY, "ringo", board, 0))  # asks for its hello
            got, deadline = b"", time.monotonic() + 10
            while b"\n" not in got and time.monotonic() < deadline:
                if select.select([fd], [], [], 0.2)[0]:
                    got += os.read(fd, 4096)
            hello = got.split(b"\n")[0] + b"\n"
            typ, fields = wire.decode(hello)
            assert typ == "hello" and wire.verify(hello, KEY, "ringo", board, fields[1])
        finally:
            os.close(fd)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)  # a bound: a loaded machine may be slow to stop it


def test_sim_without_keys_says_its_boards_do_not_sign(tmp_path):
    tmap = _ringo_map(tmp_path)
    proc = _sim(tmap, tmp_path / "keys")
    try:
        wait_line(proc, "boards do not sign (no keys file")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)  # a bound: a loaded machine may be slow to stop it
