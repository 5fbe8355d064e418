"""One registry of boards: what `battlement flash` records beside a board's key (when, which firmware, over
which transport), in a keys file that stays 0600 and is rewritten whole; a keys file from before those
records loads as it did; and the registry joins a table's map, keys file and journal records into one
entry a board, saying where each fact came from."""

import os
import pathlib
import stat
import time

import pytest
from battlement import cli
from battlement.boards import firmware as fwbuild
from battlement.boards import registry
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.table import maps as tables

TABLE = "hall-3"


def _map(tmp_path, table=TABLE):
    text = pathlib.Path(tables.default_path("ringo")).read_text().replace('table = "ringo"', 'table = "%s"' % table)
    path = tmp_path / "somewhere" / "any-name.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return tables.load(str(path))


def test_flash_records_when_which_firmware_and_how_beside_the_key_in_a_private_file(tmp_path):
    path = boardkeys.path_of(TABLE, tmp_path)
    key = boardkeys.provision(path, "ring-5")
    at = 1746124200.0  # 2025-05-01 18:30:00 UTC
    boardkeys.record_flash(path, "ring-5", "0.1.0", "mqtt", at)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert "[flashed.ring-5]\nat = 2025-05-01T18:30:00Z\nfirmware = \"0.1.0\"\ntransport = \"mqtt\"\n" in path.read_text()
    # a board added later keeps the first one's key and record: the file is read whole and written whole
    key4 = boardkeys.provision(path, "ring-4")
    assert boardkeys.load(path) == {"ring-5": bytes.fromhex(key), "ring-4": bytes.fromhex(key4)}
    assert boardkeys.flashed(path) == {"ring-5": {"at": at, "firmware": "0.1.0", "transport": "mqtt"}}
    boardkeys.record_flash(path, "ring-5", 'odd "1.0"\\', "serial", at + 60)  # reflashed: the newer record
    assert boardkeys.flashed(path)["ring-5"] == {"at": at + 60, "firmware": 'odd "1.0"\\', "transport": "serial"}
    assert boardkeys.provision(path, "ring-5") == key and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    tk = boardkeys.of_table(TABLE, None, tmp_path)
    assert set(tk.keys) == {"ring-4", "ring-5"} and set(tk.flashed) == {"ring-5"}


def test_a_keys_file_from_before_flash_recorded_loads_as_it_did(tmp_path):
    path = tmp_path / (TABLE + ".keys.toml")
    path.write_text('# board keys\n[keys]\nring-5 = "%s"\n' % ("ab" * 16))
    os.chmod(path, 0o600)
    tk = boardkeys.of_table(TABLE, None, tmp_path)
    assert tk.keys == {"ring-5": bytes.fromhex("ab" * 16)} and tk.flashed == {}
    assert tk.line(True) == "signing: on (1 board)"


@pytest.mark.parametrize("record", ['at = "yesterday"\nfirmware = "1"\ntransport = "mqtt"',
                                    'at = 2025-05-01T18:30:00Z\nfirmware = "1"\ntransport = "pigeon"',
                                    'at = 2025-05-01T18:30:00Z\ntransport = "mqtt"'])
def test_a_damaged_flash_record_is_one_line_naming_the_file_and_board(tmp_path, record):
    path = tmp_path / (TABLE + ".keys.toml")
    path.write_text('[keys]\nring-5 = "%s"\n\n[flashed.ring-5]\n%s\n' % ("ab" * 16, record))
    os.chmod(path, 0o600)
    with pytest.raises(UserError) as e:
        boardkeys.of_table(TABLE, None, tmp_path)
    assert str(e.value).startswith("%s: [flashed.ring-5] needs at = <UTC time" % path) and "\n" not in str(e.value)


def test_flash_says_what_it_will_record_and_the_version_is_the_hellos(tmp_path, capsys):
    rc = cli.main(["flash", "--dry-run", "--board", "pico-w", "--port", "/dev/ttyACM0", "--id", "ring-5",
                   "--table", TABLE, "--keys-dir", str(tmp_path), "--build-dir", str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "# then: %s records board ring-5 flashed now with firmware %s over serial" % (
        boardkeys.path_of(TABLE, tmp_path), fwbuild.version()) in out
    staged = fwbuild.stage(tmp_path / "set")  # the version the set says it is: what the board's hello says
    assert (staged / "fwversion.py").read_text() == 'VERSION = "%s"\n' % fwbuild.version()
    assert not boardkeys.path_of(TABLE, tmp_path).exists()  # a dry run writes nothing


def test_the_registry_joins_map_keys_and_journal_and_says_whence(tmp_path):
    tmap = _map(tmp_path)
    path = boardkeys.path_of(TABLE, tmp_path)
    boardkeys.provision(path, "ring-5")
    boardkeys.provision(path, "ring-9")  # a key for a board no map lists (yet)
    now = time.time()
    boardkeys.record_flash(path, "ring-5", "0.2.0", "mqtt", now - 100)
    boardkeys.record_flash(path, "ring-4", "0.2.0", "serial", now - 7200)
    records = [{"table": TABLE, "board": "ring-5", "boot": 7, "firmware": "0.1.0", "first_seen": now - 9000,
                "last_seen": now - 3600},  # heard before its latest flash: the flashed firmware runs now
               {"table": TABLE, "board": "ring-4", "boot": 12, "firmware": "0.3.0", "first_seen": now - 9000,
                "last_seen": now - 60},  # heard after its flash: what its hello said
               {"table": "elsewhere", "board": "ring-5", "boot": 1, "firmware": "x", "first_seen": 1, "last_seen": 1}]
    keys = {TABLE: boardkeys.of_table(TABLE, tmap.path, tmp_path)}
    fleet = {b["board"]: b for b in registry.fleet([TABLE], {TABLE: tmap}, keys, records)}
    assert sorted(fleet) == ["castle", "ring-1", "ring-2", "ring-3", "ring-4", "ring-5", "ring-9"]
    r5, r4, r1, r9 = fleet["ring-5"], fleet["ring-4"], fleet["ring-1"], fleet["ring-9"]
    assert (r5["key"], r5["transport"], r5["transport_from"], r5["firmware"], r5["boot"]) == (
        True, "mqtt", "flash", "0.2.0", 7)
    assert r5["flashed_at"] == pytest.approx(now - 100, abs=1) and r5["last_seen"] == now - 3600
    assert (r4["key"], r4["table_signs"], r4["transport"], r4["firmware"], r4["boot"]) == (
        False, True, "serial", "0.3.0", 12)
    # never flashed with --table, never heard: its pin map's transport, and nothing else known
    assert (r1["key"], r1["transport"], r1["transport_from"], r1["firmware"], r1["last_seen"], r1["boot"],
            r1["flashed_at"], r1["mapped"]) == (False, "serial", "pin map", None, None, None, None, True)
    assert r9["key"] and r9["mapped"] is False and r9["last_seen"] is None
    # a table whose map is not known: whether a board is on it is not known either
    (other,) = registry.fleet(["elsewhere"], {}, {}, records)
    assert (other["board"], other["mapped"], other["firmware"], other["boot"]) == ("ring-5", None, "x", 1)
    # what a running bridge heard since it started is newer than the journal's record
    live = registry.seen_now(r4, {"at": now, "boot": "d", "firmware": "0.4.0"}, now - 1)
    assert (live["last_seen"], live["boot"], live["firmware"]) == (now, 13, "0.4.0")
