"""The bridge's own MQTT client (transport.mqttclient): stream cutting, QoS 1 across a broker
restart, a silent broker, TLS. Against a real Mosquitto, or a real socket pair for the byte stream."""

import asyncio
import os
import random
import signal
import socket
import ssl
import struct

import paho.mqtt.client as mqtt
import pytest
from battlement.errors import UserError
from battlement.messages import Event
from battlement.transport import MqttTransport
from battlement.transport.mqttclient import MqttClient, _Connection, publish_packet
from support.aio import take, until
from support.board import MqttBoard
from support.procs import Broker


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_packets_cut_anywhere_by_tcp_come_out_whole_in_order_and_qos1_ones_are_acknowledged():
    rnd = random.Random(7)
    sent, stream = [], b""
    for i in range(400):
        # payload sizes cross the one-byte (127) and two-byte (16383) remaining-length limits
        payload = bytes(rnd.randrange(256) for _ in range(rnd.choice((0, 5, 120, 130, 500, 17000))))
        topic, qos = "battlement/t%d/b/up" % (i % 7), i % 2
        sent.append((topic, payload))
        stream += publish_packet(topic, payload, qos, pid=i + 1 if qos else 0)

    async def main():
        got = []
        client = MqttClient("cut-test", lambda t, p: got.append((t, p)))
        ours, theirs = socket.socketpair()
        loop = asyncio.get_running_loop()
        conn = _Connection(client, loop)
        await loop.create_connection(lambda: conn, sock=ours)
        theirs.setblocking(False)
        i = 0
        while i < len(stream):  # random cuts: inside a header, a length, a topic, a payload
            n = rnd.choice((1, 2, 3, 7, 100, 1500, 40000))
            await loop.sock_sendall(theirs, stream[i:i + n])
            i += n
            await asyncio.sleep(0)
        await until(lambda: len(got) == len(sent), what="every message delivered")
        acks = b""
        await asyncio.sleep(0.05)
        while True:
            try:
                acks += theirs.recv(65536)
            except BlockingIOError:
                break
        theirs.close()
        conn.close("test over")
        return got, acks

    got, acks = run(main())
    assert got == sent
    pids = [struct.unpack("!BBH", acks[k:k + 4]) for k in range(0, len(acks), 4)]
    assert pids == [(0x40, 2, i + 1) for i in range(400) if i % 2]  # one PUBACK per QoS 1 message, in order


def test_a_qos1_message_the_broker_never_acknowledged_goes_again_after_the_restart(mosquitto_fresh):
    async def main():
        client = MqttClient("resend-test", lambda t, p: None)
        await client.connect(mosquitto_fresh.host, mosquitto_fresh.port)
        mosquitto_fresh.proc.send_signal(signal.SIGSTOP)  # the broker takes the packet but never answers
        try:
            client.publish("battlement/hall/tower-1/down", b"led tower-1 1 ring solid ff0000 0", qos=1)
            await asyncio.sleep(0.1)
            assert client.inflight == 1
        finally:
            mosquitto_fresh.proc.send_signal(signal.SIGKILL)
            mosquitto_fresh.proc.wait()
        mosquitto_fresh.start()
        got = []
        sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="resend-watch")
        sub.on_message = lambda c, u, m: got.append((m.topic, m.payload, m.dup))
        sub.connect(mosquitto_fresh.host, mosquitto_fresh.port)
        sub.subscribe("battlement/#", qos=1)
        sub.loop_start()
        try:
            await asyncio.sleep(0.2)  # subscribed before the client comes back
            await client.connect(mosquitto_fresh.host, mosquitto_fresh.port)
            await until(lambda: got and client.inflight == 0, what="message resent and acknowledged")
            assert got == [("battlement/hall/tower-1/down", b"led tower-1 1 ring solid ff0000 0", False)]
        finally:
            sub.loop_stop()
            client.disconnect()

    run(main())


def test_a_broker_gone_silent_is_noticed_by_keepalive(mosquitto_fresh):
    async def main():
        client = MqttClient("silent-test", lambda t, p: None, keepalive=1)
        lost = await client.connect(mosquitto_fresh.host, mosquitto_fresh.port)
        mosquitto_fresh.proc.send_signal(signal.SIGSTOP)  # no FIN, no RST: just nothing
        try:
            reason = await asyncio.wait_for(lost, 10)
        finally:
            mosquitto_fresh.proc.send_signal(signal.SIGCONT)
        assert "silent" in reason
        assert not client.connected

    run(main())


@pytest.fixture
def tls_broker(tmp_path):
    broker = Broker(tmp_path / "tls", tls=True).start()
    yield broker
    broker.close()


def test_tls_with_the_brokers_ca_carries_events_and_an_untrusted_certificate_is_reported(tls_broker):
    async def main():
        stranger = MqttTransport(tls_broker.url, table="hall")  # system CAs: ours is not among them
        t = MqttTransport("mqtt://127.0.0.1:%d" % tls_broker.port, table="hall", tls_ca=str(tls_broker.ca))
        await stranger.start()
        await t.start()
        board = None
        try:
            await until(lambda: "certificate is not trusted" in stranger.links[stranger.url], what="refusal reported")
            assert "--tls-ca" in stranger.links[stranger.url]
            assert t.links[t.url] == "connected"
            ctx = ssl.create_default_context(cafile=str(tls_broker.ca))
            board = MqttBoard(tls_broker.port, "hall", tls=ctx).start()
            await take(t, 1)  # hello
            board.event()
            (ev,) = await take(t, 1)
            assert isinstance(ev, Event) and (ev.table, ev.board, ev.seq) == ("hall", "tower-1", 1)
        finally:
            if board is not None:
                board.stop()
            await stranger.stop()
            await t.stop()

    run(main())


def test_a_missing_ca_file_is_a_clear_error():
    with pytest.raises(UserError, match="--tls-ca .*no such file"):
        MqttTransport("mqtt://127.0.0.1:1883", tls_ca=os.path.join("nowhere", "ca.pem"))
