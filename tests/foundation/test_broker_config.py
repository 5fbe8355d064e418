"""`battlement broker-config` files on a real Mosquitto: a board publishes its own events, cannot
publish as another board or read another's commands, and anonymous clients are refused; the bridge
writes Home Assistant's discovery and reads its birth message, Home Assistant reads them and the boards'
status, and a board can write none of Home Assistant's topics."""

import os
import pathlib
import socket
import stat
import subprocess
import threading
import time
import tomllib

import paho.mqtt.client as mqtt
from battlement.brokercfg import BRIDGE_USER, HASS_USER, write
from support.procs import MOSQUITTO, free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAP = ROOT / "hardware" / "tables" / "plingpong.toml"


class Client:
    def __init__(self, port, user=None, password=None):
        self.got, self.rc = [], None
        self.up = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="t-%s-%d" % (user, time.monotonic_ns()))
        if user:
            c.username_pw_set(user, password)
        c.on_connect = self._connected
        c.on_message = lambda c, u, m: self.got.append((m.topic, m.payload))
        c.connect("127.0.0.1", port)
        c.loop_start()
        self.c = c

    def _connected(self, c, userdata, flags, rc, props=None):
        self.rc = rc
        self.up.set()

    def ok(self):
        self.up.wait(5)
        return self.rc is not None and not self.rc.is_failure

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


def test_generated_password_file_and_acl_hold_on_a_real_mosquitto(tmp_path):
    port = free_port()
    users = write(str(MAP), str(tmp_path / "mq"), port, "127.0.0.1")
    d = tmp_path / "mq"
    assert stat.S_IMODE(os.stat(d / "passwords").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(d / "credentials.toml").st_mode) == 0o600
    with open(d / "credentials.toml", "rb") as f:
        assert tomllib.load(f)["users"] == users
    boards = sorted(u for u in users if u not in (BRIDGE_USER, HASS_USER))
    assert len(boards) >= 2
    a, b = boards[:2]
    conf = (d / "mosquitto.conf").read_text()
    assert "set_tcp_nodelay true" in conf and "allow_anonymous false" in conf
    if os.geteuid() == 0:  # else mosquitto drops to its own user and cannot read a private dir
        (d / "mosquitto.conf").write_text(conf + "user root\n")
    proc = subprocess.Popen([MOSQUITTO, "-c", str(d / "mosquitto.conf")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    clients = []
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()
                time.sleep(0.05)
        bridge = Client(port, BRIDGE_USER, users[BRIDGE_USER])
        clients.append(bridge)
        assert bridge.ok()
        bridge.c.subscribe([("battlement/+/+/up", 1), ("battlement/+/+/status", 1), ("homeassistant/status", 1)])
        ha = Client(port, HASS_USER, users[HASS_USER])
        clients.append(ha)
        assert ha.ok()
        ha.c.subscribe([("homeassistant/#", 1), ("battlement/#", 1)])
        board_a = Client(port, a, users[a])
        clients.append(board_a)
        assert board_a.ok()
        board_a.c.subscribe("battlement/plingpong/%s/down" % b, 1)  # another board's commands
        time.sleep(0.3)
        board_a.c.publish("battlement/plingpong/%s/up" % a, b"mine", qos=1).wait_for_publish(5)
        board_a.c.publish("battlement/plingpong/%s/up" % b, b"as another board", qos=1).wait_for_publish(5)
        bridge.c.publish("battlement/plingpong/%s/down" % b, b"for b only", qos=1).wait_for_publish(5)
        for topic in ("homeassistant/sensor/battlement-plingpong/game/config", "battlement/plingpong/game",
                      "battlement/plingpong/event", "battlement/bridge/plingpong"):
            bridge.c.publish(topic, b"from the bridge", qos=1).wait_for_publish(5)
            board_a.c.publish(topic, b"from a board", qos=1).wait_for_publish(5)
        ha.c.publish("homeassistant/status", b"online", qos=1).wait_for_publish(5)
        ha.c.publish("battlement/plingpong/%s/down" % a, b"from home assistant", qos=1).wait_for_publish(5)
        anon = Client(port)
        clients.append(anon)
        wrong = Client(port, a, users[b])
        clients.append(wrong)
        time.sleep(0.5)
        assert bridge.got == [("battlement/plingpong/%s/up" % a, b"mine"), ("homeassistant/status", b"online")]
        assert board_a.got == []  # b's commands are not a's to read
        # Home Assistant reads the bridge's discovery and state and the boards' status, no board's events
        # or commands, and nothing a board wrote on its topics
        assert sorted(ha.got) == sorted(
            [(t, b"from the bridge") for t in ("homeassistant/sensor/battlement-plingpong/game/config",
                                               "battlement/plingpong/game", "battlement/plingpong/event",
                                               "battlement/bridge/plingpong")] + [("homeassistant/status", b"online")])
        assert not anon.ok() and not wrong.ok()
    finally:
        for c in clients:
            c.close()
        proc.terminate()
        proc.wait(5)


def test_running_it_again_keeps_every_password(tmp_path):
    first = write(str(MAP), str(tmp_path), 1883)
    assert write(str(MAP), str(tmp_path), 1883) == first
