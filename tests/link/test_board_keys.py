"""Where a table's board keys are: one place, by the table id its map declares (<keys dir>/<table>.keys.toml,
hardware/tables unless --keys-dir), for `flash`, `run`, `sim`, `monitor` and `broker-config` alike and for a
map stored anywhere under any name; a keys file others can read is refused in one line (as ssh refuses
such a key); a keys file left beside a map elsewhere is named, never passed over in silence."""

import os
import pathlib
import signal
from argparse import Namespace

import pytest
from battlement import cli
from battlement.boards.flash import plan
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.table import maps as tables
from cli.test_monitor import monitor, wait_line
from support.board import SerialBoard
from support.bridgeproc import run_refused
from support.procs import command

TABLE = "hall-7"


def _map(path: pathlib.Path, table: str = TABLE) -> str:
    """The Ringo map as table `table`, stored at path (any folder, any file name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = pathlib.Path(tables.default_path("ringo")).read_text()
    path.write_text(text.replace('table = "ringo"', 'table = "%s"' % table))
    return str(path)


def _flash(keys_dir, table=TABLE, board="ring-5"):
    """`battlement flash --table T --keys-dir D` for a serial board, as far as its key (nothing is run)."""
    args = Namespace(board="pico-w", port="/dev/null", id=board, map=None, dry_run=False, mqtt=None, table=table,
                     wifi_ssid=None, wifi_password=None, build_dir=None, keys_dir=str(keys_dir))
    return plan(args)[0]


def test_flash_puts_the_key_where_run_sim_monitor_and_broker_config_find_it(tmp_path, capsys, pty_pair,
                                                                            bridge_process):
    keys_dir = tmp_path / "keys"
    tmap = _map(tmp_path / "maps" / "the-big-one.toml")  # not named after its table, not in hardware/tables
    cfg = _flash(keys_dir)
    where = keys_dir / (TABLE + ".keys.toml")
    assert boardkeys.load(where) == {"ring-5": bytes.fromhex(cfg["key"])}

    # broker-config names each table's signing, from the same file
    assert cli.main(["broker-config", "--table", tmap, "--out", str(tmp_path / "mq"), "--keys-dir", str(keys_dir)]) == 0
    assert "%s: signing: on (1 board)" % TABLE in capsys.readouterr().out

    # sim signs with it
    sim = command("sim", "--table", tmap, "--keys-dir", str(keys_dir), "--wait", "30")
    try:
        wait_line(sim, "sim: boards sign with the keys in %s (1 of them)" % where)
    finally:
        sim.send_signal(signal.SIGINT)
        sim.communicate(timeout=60)  # a bound: a loaded machine may be slow to stop it

    # monitor checks with it (on serial too: --table names whose keys)
    proc = monitor("--serial", pty_pair.a, "--table", TABLE, "--keys-dir", str(keys_dir), "--seconds", "40")
    try:
        wait_line(proc, "signatures: checked with the keys of 1 board(s) from %s" % where)
        wait_line(proc, " open\n")
        board = SerialBoard(pty_pair.b, board="ring-5", key=bytes.fromhex(cfg["key"]), table=TABLE).open()
        board.hello()
        wait_line(proc, "hello  boot b007")
        board.key = None  # the board's id without its key
        board.hello()
        wait_line(proc, "rejected mac frame")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)  # a bound: a loaded machine may be slow to stop it

    # run: its banner says the table signs
    b = bridge_process("--simulate", "--table", tmap, "--keys-dir", str(keys_dir))
    assert "%s:" % TABLE in b.output() and "signing: on (1 board)" in b.output()


def test_a_keys_file_others_can_read_is_refused_in_one_line(tmp_path, capsys):
    keys_dir = tmp_path / "keys"
    tmap = _map(tmp_path / "hall.toml")
    _flash(keys_dir)
    where = keys_dir / (TABLE + ".keys.toml")
    os.chmod(where, 0o644)
    said = "keys file %s is readable by others (mode 0644): chmod 600 %s" % (where, where)
    rc = cli.main(["broker-config", "--table", tmap, "--out", str(tmp_path / "mq"), "--keys-dir", str(keys_dir)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and said in err
    rc, _out, err = run_refused(tmp_path / "j.sqlite", "--table", tmap, "--keys-dir", str(keys_dir))
    assert rc == 2 and said in err and "Traceback" not in err
    with pytest.raises(UserError) as e:
        _flash(keys_dir, board="ring-4")  # no key is added to a file that is not private
    assert str(e.value) == said


def test_a_keys_file_beside_a_map_elsewhere_is_named_not_ignored(tmp_path):
    keys_dir = tmp_path / "keys"
    tmap = _map(tmp_path / "maps" / "hall.toml")
    stray = tmp_path / "maps" / "hall.keys.toml"  # where the keys used to be looked for: beside the map
    boardkeys.provision(stray, "ring-5")
    rc, _out, err = run_refused(tmp_path / "j.sqlite", "--table", tmap, "--keys-dir", str(keys_dir))
    assert rc == 2 and err.count("\n") == 1, err
    assert "%s holds board keys, but table %s's keys are read from %s" % (stray, TABLE, keys_dir / "hall-7.keys.toml") in err
