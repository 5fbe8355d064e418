"""`battlement boards` lists the fleet: run beside a real bridge (simulated boards on a real Mosquitto) it reads
the journal without disturbing the bridge, and shows each board's key, transport, firmware, when it was
flashed, when it was last seen and its highest boot; a board never heard says so; the journal's facts
outlive the bridge; --json carries the same; --help says where each fact comes from."""

import json
import time

from battlement.link import keys as boardkeys
from battlement.table import maps as tables
from support.cli import battlement
from web.test_health import table_file


def listing(*args):
    code, out, err = battlement("boards", *args)
    assert code == 0 and err == "", err
    return out


def line_of(out, table, board):
    lines = [ln for ln in out.splitlines() if ln.split()[:2] == [table, board]]
    assert len(lines) == 1, out
    return lines[0]


def until_listed(args, cond, timeout=20):
    """The first listing cond accepts (the bridge journals a board's hello with its batch)."""
    deadline = time.monotonic() + timeout
    while True:
        out = listing(*args)
        if cond(out) or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def test_boards_lists_the_fleet_beside_a_running_bridge_and_after_it(bridge_process, mosquitto, tmp_path):
    tid = "hall-%d" % mosquitto.port
    tmap = table_file(tmp_path, tid)
    keys = tmp_path / "keys"
    path = boardkeys.path_of(tid, keys)
    for board in tables.load(tmap).boards:  # as `battlement flash --table` leaves them...
        if board != "castle":  # ...but for one board flashed without --table: its table signs, it does not
            boardkeys.provision(path, board)
    boardkeys.provision(path, "ring-9")  # provisioned, never heard, on no map
    flashed_at = time.time() - 2 * 86400
    boardkeys.record_flash(path, "ring-5", "0.0.9", "mqtt", flashed_at)
    b = bridge_process("--simulate", "--table", tmap, "--mqtt", mosquitto.url, "--keys-dir", str(keys))
    args = ["--keys-dir", str(keys), "--journal", b.journal]

    out = until_listed(args, lambda o: "sim-1" in line_of(o, tid, "ring-5"))
    assert out.splitlines()[0] == "%s: signing: on (6 boards)  (keys in %s)" % (tid, path)
    header = out.splitlines()[1].split("  ")
    assert [h.strip() for h in header if h.strip()] == ["TABLE", "BOARD", "KEY", "TRANSPORT", "FIRMWARE", "FLASHED",
                                                         "LAST SEEN", "BOOT"]
    r5 = line_of(out, tid, "ring-5")
    # its hello came after the flash: the firmware it says it runs; seen seconds ago; its boot counter
    assert " yes " in r5 and " mqtt (flash) " in r5 and " sim-1 " in r5 and "(2 days ago)" in r5, r5
    assert " s ago)" in r5.split("(2 days ago)")[1], r5
    boot = int(r5.split()[-1])
    assert boot >= 1
    r4 = line_of(out, tid, "ring-4")
    assert " serial (pin map) " in r4 and "not by flash --table" in r4 and " s ago)" in r4, r4
    r9 = line_of(out, tid, "ring-9")
    assert "never seen" in r9 and r9.endswith(" -") and " ? " in r9, r9
    assert "ring-9 (on no map)" not in out  # without the map, whether it is on it is not known
    assert "castle" not in out  # neither flashed with --table nor ever taken: only its map knows it

    # with the map: its boards, and the one it does not list
    out = listing("--table", tmap, *args)
    assert "ring-9 (on no map)" in line_of(out, tid, "ring-9")
    castle = line_of(out, tid, "castle")  # no key on a table that signs: its frames are refused, so never seen
    assert " MISSING " in castle and "never seen" in castle, castle

    # JSON: the same facts, never a key
    fleet = json.loads(listing("--json", "--table", tid, *args))
    r5 = next(x for x in fleet["boards"] if x["board"] == "ring-5")
    assert (r5["key"], r5["firmware"], r5["transport"], r5["transport_from"], r5["boot"]) == (
        True, "sim-1", "mqtt", "flash", boot)
    assert abs(r5["flashed_at"] - flashed_at) < 1 and r5["flashed_firmware"] == "0.0.9"
    assert time.time() - 60 < r5["last_seen"] <= time.time()
    assert fleet["tables"][tid]["signing"] == "signing: on (6 boards)"
    assert boardkeys.load(path)["ring-5"].hex() not in json.dumps(fleet)

    # the bridge was not disturbed: it still has its journal, and its boards are online
    live = b.get("/api/health?code=" + b.host_code)["board_health"]["fleet"]
    assert next(f for f in live if f["board"] == "ring-5")["state"] == "online"
    b.kill9()
    # the journal keeps what it heard: the fleet outlives the bridge
    assert "sim-1" in line_of(listing(*args), tid, "ring-5")


def test_boards_with_nothing_to_list_and_a_table_nobody_knows(tmp_path):
    args = ["--keys-dir", str(tmp_path / "keys"), "--journal", str(tmp_path / "none.sqlite")]
    out = listing(*args)
    assert out.startswith("no boards yet: none flashed with --table") and out.count("\n") == 1
    code, _out, err = battlement("boards", "--table", "hall-404", *args)
    assert code == 2 and err.count("\n") == 1 and "table hall-404: no board known" in err and "Traceback" not in err
    assert not (tmp_path / "none.sqlite").exists()  # looking creates no journal


def test_boards_help_says_where_each_fact_comes_from():
    code, out, _err = battlement("boards", "--help")
    text = " ".join(out.split())
    assert code == 0
    key = "KEY whether the table's keys file holds one (never the key itself; MISSING: its table signs, so its " \
        "frames are refused)"
    for said in (key, "TRANSPORT as flashed",
                 "hardware/boards/<board>.json", "FIRMWARE its last hello's", "FLASHED when `battlement flash`",
                 '"never seen"', "BOOT the highest boot", "--journal", "--keys-dir", "--json"):
        assert said in text, said
    code, out, _err = battlement("--help")
    assert "boards" in out and "list the fleet" in out
