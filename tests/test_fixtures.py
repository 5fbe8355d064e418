"""The shared fixtures really work: a broker that survives a restart, a pty pair both interpreters can use."""

import subprocess
import time

import paho.mqtt.client as mqtt
import pytest
import serial


def _roundtrip(url_port, topic, payload):
    got = []
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    c.on_message = lambda cl, ud, msg: got.append(msg.payload)
    c.connect("127.0.0.1", url_port)
    c.subscribe(topic, qos=1)
    c.loop_start()
    try:
        time.sleep(0.1)
        c.publish(topic, payload, qos=1).wait_for_publish(5)
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        c.loop_stop()
        c.disconnect()
    return got


def test_broker_delivers_and_comes_back_after_restart(mosquitto_fresh):
    assert mosquitto_fresh.url == "mqtt://127.0.0.1:%d" % mosquitto_fresh.port
    assert _roundtrip(mosquitto_fresh.port, "battlement/t1/b1/up", b"x") == [b"x"]
    mosquitto_fresh.restart()
    assert _roundtrip(mosquitto_fresh.port, "battlement/t1/b1/up", b"y") == [b"y"]


def test_pty_pair_links_pyserial_and_micropython(pty_pair, micropython):
    a, b = pty_pair
    with serial.Serial(a, timeout=5) as port:
        code = "f = open(%r, 'r+b')\nf.write(b'hello 1\\n')\nf.close()\n" % b
        subprocess.run([micropython, "-c", code], check=True, timeout=10)
        assert port.readline() == b"hello 1\n"


def test_pty_pair_unplug_makes_reader_fail_and_replug_restores(pty_pair):
    port = serial.Serial(pty_pair.a, timeout=1)
    pty_pair.unplug()
    with pytest.raises(serial.SerialException):
        for _ in range(3):
            port.read(1)
    port.close()
    pty_pair.replug()
    with serial.Serial(pty_pair.a, timeout=5) as port, open(pty_pair.b, "r+b", buffering=0) as w:
        w.write(b"back\n")
        assert port.readline() == b"back\n"


def test_a_bridge_whose_free_port_was_taken_meanwhile_starts_on_another(bridge_process, monkeypatch):
    # Defect: a free port is only free when it is picked; on a busy machine (make test beside make run) another
    # process bound it first, the bridge said "port ... is in use" and the test failed. The fixture picks again.
    import socket

    from support import bridgeproc

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    picks = [taken.getsockname()[1]]
    real = bridgeproc.free_port
    monkeypatch.setattr(bridgeproc, "free_port", lambda: picks.pop(0) if picks else real())
    try:
        b = bridge_process("--simulate")
        assert b.port != taken.getsockname()[1] and "ready in" in b.output()
    finally:
        taken.close()
