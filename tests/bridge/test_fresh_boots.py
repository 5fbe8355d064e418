"""A replay of an earlier boot across bridge restarts, and a forged status, against the whole bridge
(`battlement run` with its journal), the real firmware under MicroPython as the board and a real Mosquitto.

The stranger records the board's signed hello and a ball it sent while no bridge listened; the board then
reboots (that ball dies with its outbox, never taken). After the bridge has heard the new boot and been
restarted (twice: the second run never hears the board before the replay), the stranger plays the old hello
and ball: refused and counted as old-boot, said in the log, on /metrics, and no game state changes. A forged
status does not show on the host page nor in Home Assistant.
"""

import os
import secrets
import sqlite3
import time
import urllib.parse
import urllib.request
from binascii import crc32

from battlement.sim.firmware import FirmwareProcess
from battlement.table import maps as tables
from support.overload import table_files
from support.sniffer import Sniffer

KEY = secrets.token_bytes(16)
BOARD = "ring-5"


def wait(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not (got := cond()):
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)
    return got


def health(b):
    return b.get("/api/health?code=" + urllib.parse.quote(b.host_code))


def counters(b):
    return health(b)["transports"][0]["counters"]


def card(b, table):
    return next(x for x in health(b)["board_health"]["boards"] if x["table"] == table and x["board"] == BOARD)


def metric(b, reason):
    with urllib.request.urlopen(b.url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if line.startswith("battlement_transport_frames_total{") and 'reason="%s"' % reason in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_an_earlier_boots_hello_and_ball_replayed_across_bridge_restarts_changes_nothing(bridge_process, mosquitto,
                                                                                        tmp_path):
    ((table, tmap),) = table_files(tmp_path, 1, prefix="fresh%d" % mosquitto.port)
    keys_dir = tmp_path / "keys"
    keys_dir.mkdir()
    keys = keys_dir / (table + ".keys.toml")
    keys.write_text('[keys]\n%s = "%s"\n' % (BOARD, KEY.hex()))
    os.chmod(keys, 0o600)
    up, status = "battlement/%s/%s/up" % (table, BOARD), "battlement/%s/%s/status" % (table, BOARD)
    sniff = Sniffer(mosquitto.port)
    fw = FirmwareProcess(BOARD, "pico-w", tables.load(tmap).sensors_of(BOARD), transport="mqtt",
                         mqtt_url=mosquitto.url, table=table, settings={"key": KEY.hex(), "beat_ms": 500},
                         home=tmp_path / "board")
    b = bridge_process("--table", tmap, "--mqtt", mosquitto.url, "--keys-dir", str(keys_dir))
    try:
        fw.start()
        wait(lambda: (card(b, table)["hello"] or {}).get("boot") == "1", "the board's hello, boot 1")
        fw.presence("b", True)
        wait(lambda: health(b)["tables"][table]["events"] == 1, "its first ball taken")
        b.stop()
        fw.presence("b", False)  # sent while no bridge listens: the stranger records it
        hello, ball = sniff.wait(up, b"hello %s 1 " % BOARD.encode())[0], sniff.wait(up, b"event %s 1 2 " % BOARD.encode())[0]
        fw.stop()  # ...and the board reboots: that ball dies with its outbox
        fw.start()
        b.start()
        wait(lambda: (card(b, table)["hello"] or {}).get("boot") == "2", "the bridge hears boot 2")
        fw.stop()
        b.stop()
        b.start()  # this run has never heard the board: boot 2 is known from the journal alone
        before = b.state()
        sniff.publish(up, hello)
        sniff.publish(up, ball)
        wait(lambda: counters(b).get("old-boot", 0) == 2, "the replay refused")
        assert b.state()["view"] == before["view"]  # no game state changed
        assert metric(b, "old-boot") == 2
        said = "%s/%s: boot 1 is older than boot 2 already seen: a replay" % (table, BOARD)
        assert said in b.output()  # in the log, in words
        assert counters(b).get("mac", 0) == 0 and health(b)["tables"][table]["events"] == 0

        fw.start()  # boot 3: its own ball is the marker that the replay was read before it
        wait(lambda: (card(b, table)["hello"] or {}).get("boot") == "3", "boot 3's hello")
        fw.presence("c", True)
        wait(lambda: health(b)["tables"][table]["events"] == 1, "boot 3's ball taken")
        db = sqlite3.connect(b.journal)
        try:
            rows = db.execute("SELECT boot, seq FROM events WHERE board=? ORDER BY id", (BOARD,)).fetchall()
            record = db.execute("SELECT boot FROM boards WHERE tbl=? AND board=?", (table, BOARD)).fetchall()
        finally:
            db.close()
        assert rows == [(1, 1), (3, 1)] and record == [(3,)]  # the replayed ball never journalled

        # A stranger's status for the board: plain, and a status frame with a made-up MAC. Neither shows.
        ha = "battlement/%s/%s/link" % (table, BOARD)
        wait(lambda: sniff.payloads(ha)[-1:] == [b"online"], "Home Assistant told the board is online")
        told = len(sniff.payloads(ha))
        sniff.publish(status, b"offline", retain=True)
        forged = b"status %s 3 0 offline ~%s" % (BOARD.encode(), secrets.token_hex(8).encode())
        sniff.publish(status, forged + b"*%08x" % crc32(forged), retain=True)
        wait(lambda: counters(b).get("mac", 0) == 2, "the forged status refused")
        assert card(b, table)["state"] == "online"
        assert metric(b, "mac") == 2

        fw.kill()  # the board's own will, signed at connect, is taken: the marker for Home Assistant's topic
        wait(lambda: card(b, table)["state"] == "offline", "the board's will")
        wait(lambda: sniff.payloads(ha)[-1:] == [b"offline"], "Home Assistant told it is offline")
        # the will's alone said offline (a bridge that reconnected on a busy machine says "online" again first)
        assert set(sniff.payloads(ha)[told:-1]) <= {b"online"}
    finally:
        sniff.publish(status, b"", retain=True)
        sniff.stop()
        fw.stop()
    assert "Traceback" not in b.output() and "Traceback" not in fw.log()
