"""`battlement monitor`: what a person wiring a table sees."""

import signal
import subprocess
import sys
import time

from battlement.link import wire
from support.board import MqttBoard, SerialBoard
from support.procs import command

BATTLEMENT = [sys.executable, "-m", "battlement.cli"]


def monitor(*args):
    return command("monitor", *args)


def wait_line(proc, needle, timeout=15):
    """Read monitor output until a line containing needle; returns all lines read."""
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError("monitor never printed %r; got:\n%s" % (needle, "".join(lines)))


def test_monitor_prints_decoded_events_and_counters_from_serial(pty_pair):
    proc = monitor("--serial", pty_pair.a, "--every", "0.2", "--count", "3", "--seconds", "40")
    try:
        wait_line(proc, " open\n")  # the port is open (paths may contain "open" too)
        board = SerialBoard(pty_pair.b).open()
        board.write(b"line noise\n")
        board.hello()
        board.event(sensor="cup-1", width_us=8200)
        board.event(sensor="tilt-1", value=0, width_us=0)
        out, err = proc.communicate(timeout=15)
        board.close()
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "tower-1          hello  boot b007 firmware test-1.0 profile tower v%d" % wire.VERSION in out
    assert "sensors cup-1:beam tilt-1:tilt" in out
    assert "event  #1 cup-1 beam 1 width 8.2 ms" in out
    assert "event  #2 tilt-1 tilt 0" in out
    assert "rejected syntax frame" in out
    last = out.strip().splitlines()[-1]
    assert "== accepted 3" in last and "syntax 1" in last and "tower-1(up)" in last


def test_monitor_over_mqtt_stops_cleanly_on_ctrl_c(mosquitto):
    proc = monitor("--mqtt", mosquitto.url, "--table", "mon-1", "--seconds", "40")
    board = None
    try:
        wait_line(proc, "connected")
        board = MqttBoard(mosquitto.port, "mon-1", board="gate").start()
        board.event()
        wait_line(proc, "mon-1/gate       event  #1 cup-1 beam")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        if board:
            board.stop()
        proc.kill()
    assert proc.returncode == 0
    assert "Traceback" not in out + err
    assert "== accepted 2" in out.strip().splitlines()[-1]


def test_monitor_mistakes_are_one_clear_line():
    cases = [
        (["--mqtt", "http://x"], "scheme must be mqtt://"),
        (["--mqtt", "mqtt://127.0.0.1", "--table", "Hall_1"], "table id 'Hall_1' is not allowed"),
        (["--serial", "/dev/ttyX", "--username", "u"], "--table, --username, --password, --tls and --tls-ca go with --mqtt"),
        (["--serial", __file__], "is not a serial device"),
    ]
    for args, words in cases:
        r = subprocess.run([*BATTLEMENT, "monitor", *args], capture_output=True, text=True, timeout=20, check=False)
        assert r.returncode == 2, r
        assert words in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_monitor_help_explains():
    r = subprocess.run([*BATTLEMENT, "monitor", "--help"], capture_output=True, text=True, timeout=20, check=True)
    assert "--serial PORT" in r.stdout and "examples:" in r.stdout and "Ctrl-C" in r.stdout




def test_monitor_tells_apart_two_tables_boards_of_one_id(mosquitto):
    """Every table on the broker, two of them with a board `gate`: each is up or down on its own."""
    x, y = "mon-x-%d" % mosquitto.port, "mon-y-%d" % mosquitto.port
    proc = monitor("--mqtt", mosquitto.url, "--every", "0.2", "--seconds", "40")
    boards = []
    try:
        wait_line(proc, "connected")
        boards = [MqttBoard(mosquitto.port, t, board="gate", boot=boot).start() for t, boot in ((x, 0xA1), (y, 0xB1))]
        wait_line(proc, "%s/gate(up) %s/gate(up)" % (x, y))
        boards[0].power_off()  # x's gate loses power: its will says offline
        wait_line(proc, "%s/gate(down) %s/gate(up)" % (x, y))
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        for b in boards:
            b.stop()
        proc.kill()
    assert proc.returncode == 0 and "Traceback" not in out + err
    assert "%s/gate(down) %s/gate(up)" % (x, y) in out.strip().splitlines()[-1]


def test_monitor_on_mqtt_without_keys_leaves_the_boards_outbox_to_the_bridge(mosquitto):
    """On a broker the bridge may be down or behind: an event the monitor acknowledged would leave the
    board's outbox un-journalled, lost to the game. So the monitor only watches there."""
    table = "mon-ack-%d" % mosquitto.port
    proc = monitor("--mqtt", mosquitto.url, "--table", table, "--every", "0.2", "--seconds", "40")
    board = None
    try:
        lines = wait_line(proc, "connected")
        board = MqttBoard(mosquitto.port, table, board="gate").start()
        board.event()
        wait_line(proc, "/gate event  #1 cup-1 beam")
        board.event()
        wait_line(proc, "/gate event  #2 cup-1 beam")
        for _ in range(3):  # a few counter rounds after both events: an evack would have come by now
            wait_line(proc, "== accepted")
        proc.send_signal(signal.SIGINT)
        out, _err = proc.communicate(timeout=15)
    finally:
        if board:
            board.stop()
        proc.kill()
    assert sorted(board.outbox) == [1, 2]  # both still held by the board, for the bridge
    assert "events are not acknowledged here" in "".join(lines) + out
