"""Two tables on one broker with the same board ids (two Ringo tables, each with its board ring-5), served
by one `battlement run`: what the host page's API and /metrics say about each table's ring-5 is that
board's own (online or offline, its hello, its heartbeat's dropped count), a board of a third table
the bridge does not serve is named as unknown although its id is on both maps, and each table's
events apply to that table exactly once."""

import time
import urllib.parse

import paho.mqtt.subscribe as mqtt_subscribe
from battlement.link.messages import Beat, up_frame
from battlement.table import maps as tables
from ops.test_metrics import samples, scrape, value
from support.board import MqttBoard
from support.bridgeproc import Ws
from support.overload import table_files

BOARD = "ring-5"


def wait(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


def retained(broker, table):
    """The board's retained status as the broker holds it now."""
    msg = mqtt_subscribe.simple("battlement/%s/%s/status" % (table, BOARD), hostname="127.0.0.1",
                                port=broker.port, retained=True, msg_count=1)
    return msg.payload


def test_two_tables_with_the_same_board_ids_each_see_their_own_board(bridge_process, mosquitto, tmp_path):
    files = table_files(tmp_path, 3, prefix="twin%d" % mosquitto.port)
    (a, file_a), (b, file_b), (stranger, _) = files
    sensors = tables.load(file_a).sensors_of(BOARD)
    # B's board first, then A's: the broker keeps (and hands a new subscriber) B's status before A's.
    board_b = MqttBoard(mosquitto.port, b, board=BOARD, boot=0xB1, sensors=sensors).start()
    board_a = MqttBoard(mosquitto.port, a, board=BOARD, boot=0xA1, sensors=sensors).start()
    boards = [board_b, board_a]
    try:
        board_a.power_off()  # A's ring-5 loses power before the bridge starts: its will says offline
        wait(lambda: retained(mosquitto, a) == b"offline", "A's board's will")

        bridge = bridge_process("--table", file_a, "--table", file_b, "--mqtt", mosquitto.url)

        def health():
            return bridge.get("/api/health?code=" + urllib.parse.quote(bridge.host_code))

        def card(h, table):
            return next(c for c in h["board_health"]["boards"] if c["table"] == table and c["board"] == BOARD)

        def online_metric(table):
            return value(samples(scrape(bridge)), "battlement_board_online", table=table, board=BOARD)

        # The bridge came after both hellos: it asks B's board (online) for its hello, though A's is offline.
        wait(lambda: card(health(), b)["state"] == "online", "B's ring-5 online with its hello")
        h = health()
        assert card(h, b)["hello"]["boot"] == "b1"
        assert card(h, a)["state"] == "offline"
        assert online_metric(b) == 1 and online_metric(a) == 0

        # A's board is back with a new boot; each board sends its events, then all of them again.
        board_a = MqttBoard(mosquitto.port, a, board=BOARD, boot=0xA2, sensors=sensors).start()
        boards.append(board_a)
        wait(lambda: card(health(), a)["state"] == "online", "A's ring-5 back online")
        for v in (0, 1, 0):  # A: b5 lifted, put back, lifted
            board_a.event(sensor="b", value=v, width_us=0)
        board_b.event(sensor="f", value=0, width_us=0)  # B: f5 lifted
        board_a.resend()
        board_b.resend()
        board_a.publish(up_frame(Beat(None, BOARD, 0xA2, 5000, 7, 0, 0, 0)))  # A's outbox overflowed: 7 dropped
        board_b.publish(up_frame(Beat(None, BOARD, 0xB1, 5000, 0, 0, 0, 0)))
        wait(lambda: not board_a.unacked() and not board_b.unacked(), "every event acknowledged")
        wait(lambda: {(x["table"], x["dropped"]) for x in health()["boards"]} == {(a, 7), (b, 0)}, "both heartbeats")

        h = health()
        assert h["tables"][a]["events"] == 3 and h["tables"][b]["events"] == 1
        assert card(h, a)["hello"]["boot"] == "a2" and card(h, b)["hello"]["boot"] == "b1"
        assert card(h, a)["beat"]["dropped"] == 7 and card(h, b)["beat"]["dropped"] == 0
        sensed = {t: {s["id"]: s["count"] for s in card(h, t)["sensors"] if s["count"]} for t in (a, b)}
        assert sensed == {a: {"b": 3}, b: {"f": 1}}
        assert online_metric(a) == 1 and online_metric(b) == 1
        assert sorted((x["table"], x["board"], x["online"]) for x in h["transports"][0]["boards"]) == [
            (a, BOARD, True), (b, BOARD, True)]

        # The LED test on B's ring-5 card, from A's host page: B's board blinks, A's does not.
        host = Ws(bridge.url, role="host", table=a, code=bridge.host_code)
        try:
            assert host.act(action="led-test", table=b, board=BOARD)["ok"]
        finally:
            host.close()

        def tested(board):
            return [f for f in board.down_of("led") if f[3] == "blink" and f[4] == 0xFFFFFF]
        wait(lambda: len(tested(board_b)) == 8, "B's ring-5 blinking")
        assert tested(board_a) == []

        # A ring-5 of a table this bridge does not serve says hello: it is named, and changes neither table.
        other = MqttBoard(mosquitto.port, stranger, board=BOARD, boot=0xC1, sensors=sensors).start()
        boards.append(other)
        wait(lambda: any(u["table"] == stranger for u in health()["board_health"]["unknown"]), "the stranger named")
        assert card(health(), a)["hello"]["boot"] == "a2"
        assert online_metric(a) == 1 and online_metric(b) == 1

        # A's board loses power again: A's ring-5 is offline, B's stays online, everywhere.
        board_a.power_off()
        wait(lambda: card(health(), a)["state"] == "offline", "A's ring-5 offline")
        h = health()
        assert card(h, b)["state"] == "online"
        assert online_metric(a) == 0 and online_metric(b) == 1
        assert (a, BOARD, False) in {(x["table"], x["board"], x["online"]) for x in h["transports"][0]["boards"]}
        assert (b, BOARD, True) in {(x["table"], x["board"], x["online"]) for x in h["transports"][0]["boards"]}
        assert h["tables"][a]["events"] == 3 and h["tables"][b]["events"] == 1
    finally:
        for board in boards:
            board.stop()


def test_two_simulated_tables_with_the_same_board_ids_on_ptys_are_refused_in_one_line(tmp_path):
    """Simulated boards without --mqtt are on serial ports, where a board's id alone names it (its hello
    says no table): refused at start as two serial tables with one board id are, before anything mixes."""
    import subprocess

    from support.bridgeproc import BATTLEMENT
    from support.procs import free_port

    args = [BATTLEMENT, "run", "--simulate", "--journal", str(tmp_path / "j.sqlite"), "--port", str(free_port())]
    for _tid, f in table_files(tmp_path, 2, prefix="ptys"):
        args += ["--table", f]
    r = subprocess.run(args, check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0
    assert "board castle is on tables ptys-0 and ptys-1" in r.stderr and "--mqtt" in r.stderr
