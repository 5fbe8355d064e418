"""Signing is decided per table, not per transport: one `battlement run` serving two tables on one real
Mosquitto, one table with a keys file and one without. Both tables' events are taken; an unsigned frame
for the signed table is refused, counted and said in words; the banner, the log and the host page's
health say which table signs."""

import os
import time
import urllib.parse

import paho.mqtt.client as mqtt
from battlement.link.messages import Event, up_frame
from battlement.table import maps as tables
from support.board import MqttBoard, SerialBoard
from support.overload import table_files

BOARD = "ring-5"
KEY = bytes(range(16))


def wait(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


def publish(broker, topic, payload):
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="forger-%d" % time.monotonic_ns())
    c.connect(broker.host, broker.port)
    c.loop_start()
    c.publish(topic, payload, qos=1).wait_for_publish(10)
    c.loop_stop()
    c.disconnect()


def test_a_signed_and_an_unsigned_table_on_one_bridge_each_work_as_their_map_says(bridge_process, mosquitto,
                                                                                 tmp_path):
    (signed, file_s), (open_, file_o) = table_files(tmp_path, 2, prefix="sig%d" % mosquitto.port)
    keys_dir = tmp_path / "keys"
    keys_dir.mkdir()
    keys = keys_dir / (signed + ".keys.toml")
    keys.write_text('[keys]\n%s = "%s"\n' % (BOARD, KEY.hex()))
    os.chmod(keys, 0o600)
    bridge = bridge_process("--table", file_s, "--table", file_o, "--mqtt", mosquitto.url,
                            "--keys-dir", str(keys_dir))
    out = bridge.output()
    banner = out[out.index("Battlement bridge:"):]
    assert "%s:" % signed in banner and "signing: on (1 board)" in banner
    assert "%s:" % open_ in banner and "signing: OFF: anyone on the broker can act as a board" in banner
    warnings = [x for x in out.splitlines() if "WARNING" in x and open_ in x and "signing: OFF" in x]
    assert len(warnings) == 1, out  # said once, at start

    def health():
        return bridge.get("/api/health?code=" + urllib.parse.quote(bridge.host_code))

    assert health()["signing"] == {signed: "signing: on (1 board)",
                                   open_: "signing: OFF: anyone on the broker can act as a board"}

    sensors = tables.load(file_s).sensors_of(BOARD)
    board_s = MqttBoard(mosquitto.port, signed, board=BOARD, boot=0x51, sensors=sensors, key=KEY).start()
    board_o = MqttBoard(mosquitto.port, open_, board=BOARD, boot=0x0E, sensors=sensors).start()
    try:
        board_s.event(sensor="b", value=0, width_us=0)
        board_o.event(sensor="b", value=0, width_us=0)
        wait(lambda: not board_s.unacked() and not board_o.unacked(), "both tables' events acknowledged")
        h = health()
        assert h["tables"][signed]["events"] == 1 and h["tables"][open_]["events"] == 1

        # Someone on the broker speaks for the signed table's board, unsigned: refused, counted, said.
        forged = up_frame(Event(None, BOARD, 0x51, 2, "f", "presence", 0, 0, 0))
        publish(mosquitto, "battlement/%s/%s/up" % (signed, BOARD), forged)
        wait(lambda: health()["transports"][0]["counters"].get("mac", 0) == 1, "the unsigned frame refused")
        notes = health()["notes"]
        assert any("board %s/%s has a key but sent an unsigned frame: refused" % (signed, BOARD) in n
                   for n in notes), notes
        # The same frame for the unsigned table is taken, as its map says.
        publish(mosquitto, "battlement/%s/%s/up" % (open_, BOARD),
                up_frame(Event(None, BOARD, 0x0E, 2, "f", "presence", 0, 0, 0)))
        wait(lambda: health()["tables"][open_]["events"] == 2, "the unsigned table's event taken")
        board_s.event(sensor="f", value=0, width_us=0)  # the signed board's own seq 2
        wait(lambda: not board_s.unacked(), "the signed board's next event acknowledged")
        h = health()
        assert h["tables"][signed]["events"] == 2 and h["transports"][0]["counters"]["mac"] == 1
    finally:
        board_s.stop()
        board_o.stop()


def test_a_map_anywhere_finds_its_keys_and_a_keyed_board_heard_unsigned_on_serial_is_refused_in_words(
        bridge_process, pty_pair, tmp_path):
    """On serial too: the table's keys are found by its id wherever its map is, and a frame without a MAC
    from a board that has a key is refused, counted and said, while the board's signed frames are taken."""
    (tid, made), = table_files(tmp_path, 1, prefix="keep%d" % os.getpid())
    tmap = tmp_path / "stored" / "elsewhere" / "not-its-name.toml"  # any folder, any file name
    tmap.parent.mkdir(parents=True)
    os.replace(made, tmap)
    keys_dir = tmp_path / "keys"
    keys_dir.mkdir()
    keys = keys_dir / (tid + ".keys.toml")
    keys.write_text('[keys]\n%s = "%s"\n' % (BOARD, KEY.hex()))
    os.chmod(keys, 0o600)
    bridge = bridge_process("--table", str(tmap), "--serial", pty_pair.a, "--keys-dir", str(keys_dir))
    assert "%s:" % tid in bridge.output() and "signing: on (1 board)" in bridge.output()

    def health():
        return bridge.get("/api/health?code=" + urllib.parse.quote(bridge.host_code))

    board = SerialBoard(pty_pair.b, board=BOARD, boot=3, sensors=tables.load(str(tmap)).sensors_of(BOARD), key=KEY,
                        table=tid).open()
    close = board.answer_in_thread()
    try:
        wait(lambda: health()["transports"][0]["links"], "the bridge opened its serial port")
        board.hello()
        board.event(sensor="b", value=0, width_us=0)
        wait(lambda: health()["tables"][tid]["events"] == 1, "the signed board's event taken")
        # Its id without its key, on its own line: refused, counted and said in words.
        board.write(up_frame(Event(None, BOARD, 3, 2, "f", "presence", 0, 0, 0)))
        wait(lambda: health()["transports"][0]["counters"].get("mac", 0) == 1, "the unsigned frame refused")
        notes = health()["notes"]
        assert any("board %s has a key but sent an unsigned frame: refused" % BOARD in n for n in notes), notes
        board.event(sensor="f", value=0, width_us=0)  # the board's own seq 2, signed: the marker
        wait(lambda: health()["tables"][tid]["events"] == 2, "the signed board's next event taken")
        assert health()["transports"][0]["counters"]["mac"] == 1
    finally:
        close()
