"""MqttTransport's link to the broker on a real Mosquitto: MQTT 5 (session kept across a dropped
link, stale commands expire), the fallback to 3.1.1, TLS, a silent broker, a command the broker
never acknowledged, a burst of commands beyond the broker's receive maximum."""

import asyncio
import os
import signal
import ssl
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from battlement.errors import UserError
from battlement.link.messages import Event, Led
from battlement.link.transport import MqttTransport
from battlement.link.transport import mqtt as mqtt_transport
from support.aio import take, until
from support.board import MqttBoard
from support.procs import Broker
from support.proxy import Proxy

# Bounds on waits for what a loaded machine may be slow to do (a broker's answer, a reconnect): each
# test waits on the thing itself, up to this, never a fixed time that a busy CI machine can outlast.
SLOW = 30


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


class Watcher:
    """A paho client keeping (topic, payload) of every message on a filter. session: MQTT 5 with a
    session the broker keeps for a minute, so what comes while it is away waits for it."""

    def __init__(self, broker, filter, session=False, client_id=None):
        self.got = []
        self.ready = threading.Event()  # connected and subscribed (the broker's SUBACK came)
        self.filter = filter
        kw = {"protocol": mqtt.MQTTv5} if session else {}
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or "watch-%d" % time.monotonic_ns(),
                             **kw)
        self.c.on_connect = lambda c, u, f, rc, p=None: c.subscribe(filter, 1)
        self.c.on_subscribe = lambda *a: self.ready.set()
        self.c.on_message = lambda c, u, m: self.got.append((m.topic, m.payload))
        self.broker, self.session = broker, session
        self.connect()

    def connect(self):
        self.ready.clear()
        if self.session:
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties

            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 60
            self.c.connect(self.broker.host, self.broker.port, clean_start=False, properties=props)
        else:
            self.c.connect(self.broker.host, self.broker.port)
        self.c.loop_start()
        assert self.ready.wait(SLOW), "no SUBACK from the broker"

    def away(self):
        self.c.disconnect()
        self.c.loop_stop()

    close = away


def led_frames(got):
    """The LED commands a Watcher got, the markers left out."""
    return [p for _t, p in got if p.startswith(b"led ") and p.split()[3] != b"marker"]


async def marker(t, board, table):
    """Send one more command to the board after those under test and wait until it is there.

    It takes their path: one publisher (t, on one connection), one topic, QoS 1, one subscriber
    (board) on one connection, and MQTT keeps that in order. A copy of an earlier command (from
    the broker's session queue, or a resend by t, which happens only when it reconnects) was
    published before the marker, so it arrives before the marker too: once the marker is in, what
    came is all that will come, however slow the machine."""
    n = len(board.got)
    mid = await t.send(Led("tower-1", "marker", "solid", 0x1, 0, table))
    await until(lambda: any(p.startswith(b"led tower-1 %d marker " % mid) for _t, p in board.got[n:]), SLOW,
                "the marker command")


def test_mqtt_5_is_used_and_a_command_left_waiting_at_the_broker_dies_when_stale(mosquitto, monkeypatch):
    """The board is away (its session kept); a command sent then is dropped by the broker once older than
    COMMAND_EXPIRY, and one sent just before it comes back is delivered."""
    # Long enough for the board to get back (a reconnect on a busy machine) before the fresh one is stale.
    expiry = 3
    monkeypatch.setattr(mqtt_transport, "COMMAND_EXPIRY", expiry)
    board = Watcher(mosquitto, "battlement/expiry-1/tower-1/down", session=True, client_id="expiry-board")
    spy = Watcher(mosquitto, "battlement/expiry-1/tower-1/down")  # what the broker has passed on, live

    async def main():
        t = MqttTransport(mosquitto.url, table="expiry-1")
        await t.start()
        try:
            await until(lambda: t.links[t.url] == "connected", SLOW, "connected")
            assert t.version == "MQTT 5"
            board.away()
            await t.send(Led("tower-1", "ring", "solid", 0xFF0000, 0, "expiry-1"))  # stale by the time it is back
            await asyncio.sleep(expiry + 1.2)  # older than the expiry: this wait is what is tested
            fresh = await t.send(Led("tower-1", "ring", "solid", 0x00FF00, 0, "expiry-1"))
            # at the broker, waiting in the board's session (passed on to every subscriber at once)
            await until(lambda: any(p.startswith(b"led tower-1 %d " % fresh) for _t, p in spy.got), SLOW,
                        "the fresh command at the broker")
            await asyncio.get_running_loop().run_in_executor(None, board.connect)
            await until(lambda: led_frames(board.got), SLOW, "the fresh command")
            await marker(t, board, "expiry-1")
            assert t.connects == 1  # no reconnect: nothing of ours was published twice
            return fresh
        finally:
            await t.stop()

    try:
        fresh = run(main())
    finally:
        board.close()
        spy.close()
    (frame,) = led_frames(board.got)  # the stale one never came, the fresh one once
    assert frame.startswith(b"led tower-1 %d ring solid ff00 0" % fresh)


def test_what_comes_while_the_link_is_cut_waits_in_the_session_and_arrives_after(mosquitto):
    proxy = Proxy(mosquitto.port).start()
    sender = Watcher(mosquitto, "session-1/none")

    async def main():
        heard = []
        t = MqttTransport("mqtt://127.0.0.1:%d" % proxy.port, table="session-1", keepalive=1)
        t.subscribe_extra("session-1/news", lambda topic, payload: heard.append(payload))
        notes = []
        t.log = notes.append
        await t.start()
        try:
            await until(lambda: t.links[t.url] == "connected", SLOW, "connected")
            proxy.blackhole()  # Wi-Fi gone, no FIN: the broker still takes us for there
            for i in range(5):
                sender.c.publish("session-1/news", b"while away %d" % i, qos=1)
            # (the state itself may be "connected" again before a poll sees it: the keeper is straight back)
            await until(lambda: any("disconnected: the broker went silent" in n for n in notes), SLOW,
                        "the silent link noticed")
            await until(lambda: t.links[t.url] == "connected" and t.connects == 2, SLOW, "connected again")
            await until(lambda: len(heard) == 5, SLOW, "what came while away")
            assert heard == [b"while away %d" % i for i in range(5)]
        finally:
            await t.stop()

    try:
        run(main())
    finally:
        sender.close()
        proxy.close()


class Mqtt311Only:
    """A broker that speaks MQTT 3.1.1 only: it answers an MQTT 5 CONNECT with "unacceptable protocol
    version" and closes, as the 3.1.1 specification says; anything else goes on to the real Mosquitto."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.refused_v5 = 0

    async def start(self):
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _client(self, r, w):
        head = await r.readexactly(2)
        n, shift, b = head[1] & 0x7F, 7, head[1]
        while b & 0x80:
            b = (await r.readexactly(1))[0]
            head += bytes((b,))
            n |= (b & 0x7F) << shift
            shift += 7
        body = await r.readexactly(n)
        if body[6] == 5:  # protocol level, after the name "MQTT" and its length
            self.refused_v5 += 1
            w.write(b"\x20\x02\x00\x01")
            await w.drain()
            w.close()
            return
        br, bw = await asyncio.open_connection("127.0.0.1", self.target_port)
        bw.write(head + body)

        async def pump(src, dst):
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pump(r, bw), pump(br, w))

    def close(self):
        self.server.close()


def test_a_broker_that_refuses_mqtt_5_gets_3_1_1_and_events_and_commands_still_flow(mosquitto):
    async def main():
        old = await Mqtt311Only(mosquitto.port).start()
        t = MqttTransport("mqtt://127.0.0.1:%d" % old.port, table="old-broker")
        notes = []
        t.log = notes.append
        await t.start()
        board = MqttBoard(mosquitto.port, "old-broker").start()
        try:
            await until(lambda: t.links[t.url] == "connected", SLOW, "connected")
            assert t.version == "MQTT 3.1.1" and old.refused_v5 == 1
            assert any("refuses MQTT 5" in n for n in notes)
            await take(t, 1, SLOW)  # hello
            board.event()
            (ev,) = await take(t, 1, SLOW)
            assert isinstance(ev, Event) and ev.seq == 1
            msgid = await t.send(Led("tower-1", "ring", "chase", 0x3366FF, 800))
            await until(lambda: board.down_of("led"), SLOW, "the LED command at the board")
            assert board.down_of("led") == [("tower-1", msgid, "ring", "chase", 0x3366FF, 800)]
        finally:
            board.stop()
            await t.stop()
            old.close()

    run(main())


def burst(broker, table, leds, done):
    """Send leds (at once, beyond the broker's receive maximum) to tower-1 of table; wait until
    done(LED frames the board got); returns (their msgids, the transport's counters, the frames)."""
    board = Watcher(broker, "battlement/%s/tower-1/down" % table)

    async def main():
        t = MqttTransport(broker.url, table=table)
        await t.start()
        try:
            await until(lambda: t.links[t.url] == "connected", SLOW, "connected")
            ids = [await t.send(led) for led in leds]
            await until(lambda: done(led_frames(board.got), ids), SLOW, "the commands")
            await marker(t, board, table)  # and nothing after them
            return ids, dict(t.counters)
        finally:
            await t.stop()

    try:
        ids, counters = run(main())
    finally:
        board.close()
    return ids, counters, led_frames(board.got)


def test_a_burst_of_commands_beyond_the_brokers_receive_maximum_all_arrive_in_order(mosquitto):
    """Mosquitto lets a client have 20 QoS 1 messages unacknowledged: the rest wait their turn."""
    leds = [Led("tower-1", "cell-%d" % i, "solid", i, 0, "burst-1") for i in range(300)]
    ids, counters, frames = burst(mosquitto, "burst-1", leds, lambda got, ids: len(got) == 300)
    assert counters["dropped-inflight"] == 0 and counters["superseded"] == 0
    assert [int(f.split()[2]) for f in frames] == ids


def test_a_waiting_command_for_an_led_gives_way_to_a_newer_one_for_the_same_led(mosquitto):
    """Behind the receive maximum, 300 colours for one LED and one for another: the LED ends on the
    last colour without showing the stale ones late, nothing is dropped, msgids still rise."""
    leds = [Led("tower-1", "ring", "solid", i, 0, "burst-2") for i in range(300)]
    leds.append(Led("tower-1", "gate", "blink", 0xFF, 500, "burst-2"))
    ids, counters, frames = burst(mosquitto, "burst-2", leds,
                                  lambda got, ids: any(int(f.split()[2]) == ids[-1] for f in got))
    assert counters["dropped-inflight"] == 0 and counters["superseded"] > 200
    ring = [f.split() for f in frames if f.split()[3] == b"ring"]
    assert int(ring[-1][2]) == ids[-2] and ring[-1][5] == b"%x" % 299  # the LED shows the last colour
    assert len(ring) < 100  # the stale ones were not sent
    msgids = [int(f.split()[2]) for f in frames]
    assert msgids == sorted(msgids) and msgids[-1] == ids[-1]  # a signed board takes only rising msgids


def test_an_urgent_message_goes_before_the_commands_waiting_for_the_broker(mosquitto):
    """A venue's ready or result (publish_raw, urgent) behind 300 LED commands waiting for the broker's receive
    maximum: it leaves as soon as a packet id is free, before the commands still waiting."""
    down, venue = "battlement/burst-3/tower-1/down", "battlement-venue/bar/burst-3/up"
    seen = Watcher(mosquitto, [(down, 1), (venue, 1)])  # one connection: the order they left in

    async def main():
        t = MqttTransport(mosquitto.url, table="burst-3")
        await t.start()
        try:
            await until(lambda: t.links[t.url] == "connected" and seen.ready.is_set(), SLOW, "connected")
            for i in range(300):
                await t.send(Led("tower-1", "cell-%d" % i, "solid", i, 0, "burst-3"))
            assert t.publish_raw(venue, b"ready", qos=1, urgent=True)
            await until(lambda: len(seen.got) == 301, SLOW, "every message")
        finally:
            await t.stop()

    try:
        run(main())
    finally:
        seen.close()
    topics = [topic for topic, _p in seen.got]
    assert topics.count(venue) == 1 and topics.index(venue) < 100, topics.index(venue)  # not 300th
    assert [int(f.split()[2]) for f in led_frames(seen.got)] == sorted(int(f.split()[2]) for f in led_frames(seen.got))


def test_a_command_the_broker_never_acknowledged_goes_again_after_a_restart(mosquitto_fresh):
    broker = mosquitto_fresh
    board = None

    async def main():
        nonlocal board
        t = MqttTransport(broker.url, table="hall")
        await t.start()
        try:
            await until(lambda: t.links[t.url] == "connected", SLOW, "connected")
            broker.proc.send_signal(signal.SIGSTOP)  # the broker takes the packet but never answers
            try:
                msgid = await t.send(Led("tower-1", "ring", "solid", 0xFF0000, 0, "hall"))
                await asyncio.sleep(0)  # one turn of the loop: the connection's gathered writes leave (codec._Gather)
            finally:
                broker.proc.send_signal(signal.SIGKILL)
                broker.proc.wait()
            broker.start()  # no persistence: it has no session of ours
            # Subscribed (its SUBACK in) before the transport is back: this blocks the loop the transport runs on.
            board = Watcher(broker, "battlement/#")
            await until(lambda: t.links[t.url] == "connected" and t.connects >= 2, SLOW, "reconnected")
            await until(lambda: led_frames(board.got), SLOW, "the command sent again")
            connects = t.connects
            await marker(t, board, "hall")
            assert t.connects == connects  # no reconnect since: no second round of resends
            (frame,) = led_frames(board.got)  # once, and the one that was sent
            assert frame.startswith(b"led tower-1 %d ring solid ff0000 0" % msgid)
        finally:
            await t.stop()

    try:
        run(main())
    finally:
        if board is not None:
            board.close()


def test_a_broker_gone_silent_is_noticed_by_keepalive_and_the_link_comes_back(mosquitto_fresh):
    async def main():
        t = MqttTransport(mosquitto_fresh.url, table="silent", keepalive=1)
        await t.start()
        try:
            await until(lambda: t.links[t.url] == "connected", SLOW, "connected")
            mosquitto_fresh.proc.send_signal(signal.SIGSTOP)  # no FIN, no RST: just nothing
            try:
                await until(lambda: t.links[t.url].startswith("disconnected"), SLOW, "the silence noticed")
                assert "silent" in t.links[t.url]
            finally:
                mosquitto_fresh.proc.send_signal(signal.SIGCONT)
            await until(lambda: t.links[t.url] == "connected", SLOW, "connected again")
        finally:
            await t.stop()

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
            await until(lambda: "certificate is not trusted" in stranger.links[stranger.url], SLOW, "refusal reported")
            assert "--tls-ca" in stranger.links[stranger.url]
            assert t.links[t.url] == "connected"
            ctx = ssl.create_default_context(cafile=str(tls_broker.ca))
            board = MqttBoard(tls_broker.port, "hall", tls=ctx).start()
            await take(t, 1, SLOW)  # hello
            board.event()
            (ev,) = await take(t, 1, SLOW)
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
