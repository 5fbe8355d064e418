"""`battlement update` as a user runs it: the real command against a real Mosquitto, a board running the real
firmware under MicroPython, and a real bridge's page asked whether a game is under way."""

import asyncio
import subprocess
import sys

from battlement.boards import firmware as fwbuild
from support.bridgeproc import ROOT, Ws
from support.otaboard import BOARD, KEY, Rig
from support.procs import free_port


def update(*args):
    """`battlement update ARGS` with no terminal on stdin: (exit status, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "battlement.cli", "update", *args], cwd=ROOT, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120, check=False)
    return p.returncode, p.stdout, p.stderr


def one_error(err):
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def keys_dir(tmp_path, table):
    d = tmp_path / "keys"
    d.mkdir()
    f = d / (table + ".keys.toml")
    f.write_text('[keys]\n%s = "%s"\n' % (BOARD, KEY.hex()))
    f.chmod(0o600)
    return str(d)


def test_update_puts_this_checkouts_firmware_on_an_mqtt_board_and_says_how_it_went(mosquitto, tmp_path):
    base = ["--mqtt", mosquitto.url, "--table", "cli-ota", "--keys-dir", keys_dir(tmp_path, "cli-ota"),
            "--bridge", "http://127.0.0.1:%d" % free_port()]  # no bridge there: no game to interrupt
    version = fwbuild.version()

    async def main():
        rig = await Rig(mosquitto, tmp_path, "cli-ota").start()
        try:
            code, out, err = await asyncio.to_thread(update, *base)
            assert code == 2 and "give --yes to update cli-ota/cup-board to %s" % version in one_error(err)
            code, out, err = await asyncio.to_thread(update, *base, "--yes")
            assert code == 0, out + err
            assert "no bridge answers at" in out
            assert "cli-ota/cup-board: updated 0.1.9-flashed -> %s in" % version in out, out
            assert "KB sent" in out and out.rstrip().endswith("1 of 1 boards updated")
            assert rig.hellos[-1].firmware == version  # the bridge hears the new version
            code, out, err = await asyncio.to_thread(update, *base, "--yes")
            assert code == 0 and "cli-ota/cup-board: already runs %s" % version in out, out + err
        finally:
            await rig.stop()

    asyncio.run(main())


def test_update_refuses_to_restart_a_tables_boards_during_play(bridge_process, mosquitto, tmp_path):
    pong = bridge_process("--simulate")
    table = pong.state()["table"]
    base = ["--mqtt", mosquitto.url, "--table", table, "--bridge", pong.url, "--yes", "--keys-dir", str(tmp_path)]
    code, out, err = update(*base)
    line = one_error(err)
    assert code == 2 and "table %s is in the middle of a game of" % table in line and "--during-game" in line
    code, out, err = update(*base, "--during-game")  # told: it goes on, and says so (no board is online here)
    assert "a game of" in out and "updating all the same (--during-game)" in out
    assert code == 2 and "no board of table %s is online" % table in one_error(err)
    ws = Ws(pong.url, role="host", code=pong.host_code)
    assert ws.act(action="pause", paused=True)["ok"]
    ws.close()
    code, out, err = update(*base)  # paused on the host page: no game is interrupted
    assert code == 2 and "no board of table %s is online" % table in one_error(err)
