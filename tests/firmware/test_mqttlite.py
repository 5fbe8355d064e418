"""firmware/mqttlite.py under the real MicroPython, against a broker stand-in that misbehaves on purpose
(tests/firmware/mp/mqtt_client.py): shared writers, a broker that stops reading, an EOF before CONNACK."""

import json

from fwtest import HERE, run_mp
from support.procs import free_port

SCRIPT = HERE / "mp" / "mqtt_client.py"


def scenario(fw_code, name):
    p = run_mp(fw_code, SCRIPT, [name, free_port()], timeout=30)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_publishers_and_the_readers_pubacks_never_interleave_or_lose_a_packet(fw_code):
    # Two publishers and the reader's PUBACKs write while the send buffer is full, so drains wait:
    # without one writer lock, a packet written during another's drain was dropped or cut.
    r = scenario(fw_code, "writers")
    assert "error" not in r, r
    assert r["clean"], "the byte stream is not whole MQTT packets"
    assert r["publish"] == sorted(["a-%03d" % k for k in range(60)] + ["b-%03d" % k for k in range(60)])
    assert r["puback"] == r["heard"] == 40


def test_a_broker_that_stops_reading_fails_the_publish_within_the_response_time(fw_code):
    r = scenario(fw_code, "stall")
    assert r["stall_error"] == "MQTTError"
    assert r["stall_ms"] < 3000  # response time 400 ms per write; before, a drain waited forever


def test_eof_before_connack_is_an_mqtt_error_and_the_socket_is_closed(fw_code):
    r = scenario(fw_code, "eof")
    assert r == {"connect_error": "MQTTError", "closed": True}
