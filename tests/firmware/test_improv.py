"""Improv Wi-Fi on the real firmware under MicroPython, over a real pty: `battlement provision` gives a
flashed board its Wi-Fi, broker and table, with a real Mosquitto checking the login it was given, and
Improv packets share the serial link with the protocol's frames without breaking either."""

import fcntl
import json
import os
import pty
import select
import subprocess
import sys
import termios
import time

import pytest
from battlement.boards.provision import Reader
from battlement.cli import main
from battlement.link import improvwire as iw
from battlement.link import keys as boardkeys
from battlement.link import wire
from battlement.sim.firmware import ROOT, FirmwareProcess
from support.procs import Broker

PLINGPONG = str(ROOT / "hardware" / "boards" / "plingpong-1.json")
TABLE_MAP = str(ROOT / "hardware" / "tables" / "plingpong.toml")
LOGIN = "plingpong.plingpong-1"


def _config(fw):
    path = fw._dir / "config.json"
    return path, json.loads(path.read_text()), os.stat(path).st_ino


def _exit_code(fw, timeout=20):
    deadline = time.monotonic() + timeout
    while fw.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return fw.proc.poll()


@pytest.fixture
def venue(tmp_path, capsys):
    """broker-config's files for the PlingPong table, and a Mosquitto that takes its board's login."""
    out = tmp_path / "broker"
    assert main(["broker-config", "--table", TABLE_MAP, "--out", str(out)]) == 0
    capsys.readouterr()
    users = {u: p for u, p in _credentials(out).items() if u in (LOGIN, "battlement-bridge")}
    broker = Broker(tmp_path / "mq", users=users).start()
    yield out, broker
    broker.close()


def _credentials(out):
    from battlement.ops.broker import credentials

    return credentials(str(out))


def test_provision_gives_a_serial_board_wifi_broker_and_table_and_it_restarts_on_mqtt(
        pty_pair, tmp_path, capsys, venue):
    out, broker = venue
    keys = tmp_path / "keys"
    fw = FirmwareProcess("plingpong-1", pinmap=PLINGPONG, transport="serial", port=pty_pair.b).start()
    try:
        path, before, inode = _config(fw)
        assert before["transport"] == "serial" and "wifi" not in before
        rc = main(["provision", pty_pair.a, "--ssid", "castle", "--password", "drawbridge", "--broker",
                   "127.0.0.1:%d" % broker.port, "--broker-dir", str(out), "--table", "plingpong",
                   "--keys-dir", str(keys)])
        said, err = capsys.readouterr()
        assert rc == 0, err
        assert "board on %s: Battlement" % pty_pair.a in said and "board plingpong-1" in said
        assert "board: provisioned" in said
        assert ("provisioned: plingpong-1 joined castle and reports to 127.0.0.1:%d as table plingpong"
                % broker.port) in said
        # The board logged in with its broker-config login, kept it all and restarts on its new link.
        assert _exit_code(fw) == 3, fw.log()
        assert "machine.reset()" in fw.log()
        _, after, new_inode = _config(fw)
        assert after["transport"] == "mqtt" and after["wifi"] == {"ssid": "castle", "password": "drawbridge"}
        assert after["mqtt"] == {"host": "127.0.0.1", "port": broker.port, "user": LOGIN,
                                 "password": _credentials(out)[LOGIN], "table": "plingpong"}
        assert after["table"] == "plingpong"
        assert after["key"] == boardkeys.load(boardkeys.path_of("plingpong", keys))["plingpong-1"].hex()
        assert after["sensors"] == before["sensors"] and after["board"] == "plingpong-1"
        # Replaced whole (a new file renamed over the old), nothing left beside it.
        assert new_inode != inode
        assert sorted(p.name for p in path.parent.glob("config.json*")) == ["config.json"]
    finally:
        fw.stop()


def test_a_login_the_broker_refuses_is_one_line_and_the_board_keeps_its_config(pty_pair, tmp_path, capsys, venue):
    out, broker = venue
    creds = out / "credentials.toml"
    creds.write_text(creds.read_text().replace(_credentials(out)[LOGIN], "not-the-password"))
    fw = FirmwareProcess("plingpong-1", pinmap=PLINGPONG, transport="serial", port=pty_pair.b).start()
    try:
        path, _, inode = _config(fw)
        text = path.read_text()
        rc = main(["provision", pty_pair.a, "--ssid", "castle", "--password", "drawbridge", "--broker",
                   "127.0.0.1:%d" % broker.port, "--broker-dir", str(out), "--table", "plingpong",
                   "--keys-dir", str(tmp_path / "keys")])
        said, err = capsys.readouterr()
        assert rc == 2 and err == "battlement provision: error: board refused: unable to connect\n"
        assert "board: provisioning" in said
        assert path.read_text() == text and os.stat(path).st_ino == inode
        # Still the same board on the same link: it answers a frame.
        with _Raw(pty_pair.a) as host:
            host.write(wire.encode("ping", ("plingpong-1", 7)))
            assert host.until(lambda h: ("ack", ["plingpong-1", 7]) in h.frames)
        assert fw.alive()
    finally:
        fw.stop()


class _Raw:
    """The host's end of the pty, read as frames and Improv packets."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        self.reader = Reader()
        self.packets = []
        self.frames = []
        self.text = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.close(self.fd)

    def write(self, data):
        os.write(self.fd, data)

    def until(self, cond, timeout=15):
        deadline = time.monotonic() + timeout
        while not cond(self):
            if time.monotonic() > deadline:
                return False
            if select.select([self.fd], [], [], 0.1)[0]:
                data = os.read(self.fd, 4096)
                self.packets += self.reader.feed(data)
                self.text += data
                *lines, self.text = self.text.split(b"\n")
                for line in lines:
                    try:
                        typ, f = wire.decode(line + b"\n")
                    except (wire.WireError, ValueError, IndexError):
                        continue  # an Improv packet's bytes, split at its newlines
                    self.frames.append((typ, list(f)))
        return True


def test_garbage_and_cut_improv_packets_amid_frames_break_nothing(pty_pair):
    fw = FirmwareProcess("red-kingdom", pinmap=str(ROOT / "hardware" / "boards" / "red-kingdom.json"),
                         port=pty_pair.b).start()
    try:
        with _Raw(pty_pair.a) as host:
            def ping(n):
                return wire.encode("ping", ("red-kingdom", n))

            cut = iw.rpc(iw.WIFI, ["MyWirelessAP", "mysecurepassword"])[:18] + b"\n"  # a client cut short
            bad = bytearray(iw.rpc(iw.GET_INFO))
            bad[-2] ^= 0x5A  # its checksum
            garbage = b"IMPRO\x00\xff\x03 not improv at all\n"
            host.write(ping(1) + cut + ping(2) + bytes(bad) + ping(3) + garbage + ping(4))
            assert host.until(lambda h: ("ack", ["red-kingdom", 4]) in h.frames), (host.frames, fw.log())
            # Every frame was read, each bad packet answered with the standard's "invalid RPC packet".
            assert [f[1] for t, f in host.frames if t == "ack"] == [1, 2, 3, 4]
            assert host.packets == [(iw.ERROR, bytes((iw.INVALID_RPC,)))] * 2
            # ... and a good one after them is answered: the board's device information.
            host.write(iw.rpc(iw.GET_INFO))
            assert host.until(lambda h: any(p[0] == iw.RESULT for p in h.packets))
            res = [iw.command(d) for t, d in host.packets if t == iw.RESULT]
            assert res[0][0] == iw.GET_INFO
            hello = next(f for t, f in host.frames if t == "hello")
            assert res[0][1] == ["Battlement", hello[2], "pico-w/rp2", "red-kingdom"]  # its version: the hello's
            host.write(ping(5))
            assert host.until(lambda h: ("ack", ["red-kingdom", 5]) in h.frames)
        assert fw.alive(), fw.log()
    finally:
        fw.stop()


def test_ctrl_c_still_stops_the_firmware_for_mpremote(pty_pair):
    # The port's own Ctrl-C is off on the console (an Improv RPC's type byte is 3): the firmware looks for it
    # itself, so mpremote's "\r\x03" still stops it and `battlement flash` can reflash the board.
    fw = FirmwareProcess("red-kingdom", pinmap=str(ROOT / "hardware" / "boards" / "red-kingdom.json"),
                         port=pty_pair.b).start()
    try:
        with _Raw(pty_pair.a) as host:
            assert host.until(lambda h: any(t == "hello" for t, _ in h.frames))
            host.write(b"\r\x03")
            assert _exit_code(fw) not in (None, 0, 3)
        assert "KeyboardInterrupt" in fw.log()
    finally:
        fw.stop()


def test_an_mqtt_board_is_provisioned_over_its_usb_console(pty_pair, mosquitto, capsys):
    # On an MQTT board the USB console carries no frames; Improv is answered there (on the unix port a
    # pty stands in for the console).
    fw = FirmwareProcess("plingpong-1", pinmap=PLINGPONG, transport="mqtt", mqtt_url=mosquitto.url,
                         table="hall-improv", settings={"console": {"path": pty_pair.b}}).start()
    try:
        rc = main(["provision", pty_pair.a, "--ssid", "keep", "--password", "portcullis"])
        said, err = capsys.readouterr()
        assert rc == 0, err
        assert "provisioned: plingpong-1 joined keep" in said
        assert _exit_code(fw) == 3, fw.log()  # restarts to join the new Wi-Fi
        _, cfg, _ = _config(fw)
        assert cfg["wifi"] == {"ssid": "keep", "password": "portcullis"}
        assert cfg["mqtt"]["table"] == "hall-improv" and cfg["mqtt"]["port"] == mosquitto.port
    finally:
        fw.stop()


def test_what_is_not_given_is_asked_for_on_the_terminal_the_password_without_echo(pty_pair):
    fw = FirmwareProcess("red-kingdom", pinmap=str(ROOT / "hardware" / "boards" / "red-kingdom.json"),
                         port=pty_pair.b).start()
    term, tty = pty.openpty()  # the user's terminal, battlement's controlling tty

    def controlling_tty():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    cmd = [sys.executable, "-m", "battlement.cli", "provision", pty_pair.a]
    p = subprocess.Popen(cmd, stdin=tty, stdout=tty, stderr=tty, preexec_fn=controlling_tty)  # noqa: PLW1509
    os.close(tty)
    screen = b""

    def until(text, timeout=20):
        nonlocal screen
        deadline = time.monotonic() + timeout
        while text not in screen and time.monotonic() < deadline:
            if select.select([term], [], [], 0.1)[0]:
                try:
                    screen += os.read(term, 4096)
                except OSError:  # the command ended and closed the terminal
                    break
        return text in screen

    try:
        assert until(b"Wi-Fi network (SSID): "), screen
        os.write(term, b"castle\n")
        assert until(b"Wi-Fi password of castle: "), screen
        os.write(term, b"drawbridge\n")
        assert until(b"provisioned: red-kingdom joined castle"), screen
        assert p.wait(10) == 0
        assert b"castle" in screen and b"drawbridge" not in screen  # typed, but never shown
        _, cfg, _ = _config(fw)
        assert cfg["wifi"] == {"ssid": "castle", "password": "drawbridge"} and cfg["transport"] == "serial"
        assert fw.alive()  # a serial board keeps its link: no restart
    finally:
        if p.poll() is None:
            p.kill()
        os.close(term)
        fw.stop()
