"""MQTT transport against a real Mosquitto: delivery, routing, bad input, broker restart with exactly-once."""

import asyncio
import itertools
import time

import paho.mqtt.client as mqtt
import pytest
from battlement.errors import UserError
from battlement.link import wire
from battlement.link.messages import Event, Hello, Led, Reply
from battlement.link.transport import MqttTransport
from support.aio import drain, take, until
from support.board import MqttBoard
from support.procs import Broker

_tables = itertools.count(1)


def fresh_table():
    """Tests share a broker per worker: each gets its own table id."""
    return "hall-%d" % next(_tables)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def events(msgs):
    return [(m.table, m.board, m.seq) for m in msgs if isinstance(m, Event)]


async def started(t):
    await t.start()
    await until(lambda: t.links[t.url] == "connected", what="host connected to broker")
    return t


def test_events_arrive_once_and_led_commands_reach_the_board(mosquitto):
    table = fresh_table()

    async def main():
        t = await started(MqttTransport(mosquitto.url, table=table))
        board = MqttBoard(mosquitto.port, table).start()
        try:
            hello = (await take(t, 1))[0]
            assert isinstance(hello, Hello) and hello.table == table and hello.sensors["cup-1"] == "beam"
            for _ in range(5):
                board.event()
            board.resend()  # duplicates on the wire are applied once
            msgs = await take(t, 5)
            assert events(msgs) == [(table, "tower-1", s) for s in range(1, 6)]
            await until(lambda: board.unacked() == [], what="board outbox trimmed by evack")
            assert t.online[(table, "tower-1")] is True
            msgid = await t.send(Led("tower-1", "ring", "chase", 0x3366FF, 800))
            reply = (await take(t, 1))[0]
            assert reply == Reply(table, "tower-1", msgid, True, "")
            assert board.down_of("led") == [("tower-1", msgid, "ring", "chase", 0x3366FF, 800)]
            await asyncio.sleep(0.1)
            assert drain(t) == []
        finally:
            board.stop()
            await t.stop()

    run(main())


def test_one_table_or_all_tables(mosquitto):
    t1, t2 = fresh_table(), fresh_table()

    async def main():
        only = await started(MqttTransport(mosquitto.url, table=t1))
        every = await started(MqttTransport(mosquitto.url))
        boards = [MqttBoard(mosquitto.port, t1, board="keep").start(), MqttBoard(mosquitto.port, t2, board="keep").start()]
        try:
            for b in boards:
                b.event()
            got_only = await take(only, 2)
            got_every = await take(every, 4)
            assert events(got_only) == [(t1, "keep", 1)]
            assert sorted(events(got_every)) == [(t1, "keep", 1), (t2, "keep", 1)]
            await asyncio.sleep(0.1)
            assert drain(only) == []
            # a command names its table when the transport listens to all of them
            await every.send(Led("keep", "flag", "solid", 0xFF0000, table=t2))
            await until(lambda: boards[1].down_of("led"), what="led on the second table")
            assert boards[0].down_of("led") == []
        finally:
            for b in boards:
                b.stop()
            await only.stop()
            await every.stop()

    run(main())


def test_bad_topics_and_spoofed_boards_are_counted_not_fatal(mosquitto):
    table = fresh_table()

    async def main():
        t = await started(MqttTransport(mosquitto.url))
        pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        pub.connect("127.0.0.1", mosquitto.port)
        pub.loop_start()
        try:
            good = wire.encode("hello", ("tower-1", 1, "x", wire.VERSION, "tower", "cup-1:beam", 0, 0))
            pub.publish("battlement/%s/Tower_1/up" % table, good, qos=1)  # id outside the safe charset
            pub.publish("battlement/%s/keep-9/up" % table, good, qos=1)  # frame says tower-1, topic keep-9
            pub.publish("battlement/%s/tower-1/up" % table, b"\xff" * 600, qos=1)
            pub.publish("battlement/%s/tower-1/up" % table, good[:-3] + b"00\n", qos=1)
            pub.publish("battlement/%s/tower-1/up" % table, wire.encode("ping", ("tower-1", 3)), qos=1)
            pub.publish("battlement/%s/tower-1/up" % table, good, qos=1).wait_for_publish(5)
            hello = (await take(t, 1))[0]
            assert hello.board == "tower-1" and hello.table == table
            c = t.counters
            assert (c["topic"], c["board-mismatch"], c["length"], c["crc"], c["wrong-direction"]) == (1, 1, 1, 1, 1)
        finally:
            pub.loop_stop()
            pub.disconnect()
            await t.stop()

    run(main())


def test_bad_url_and_table_are_clear_user_errors():
    with pytest.raises(UserError, match="scheme"):
        MqttTransport("http://127.0.0.1:1883")
    with pytest.raises(UserError, match="table id 'Hall 1'"):
        MqttTransport("mqtt://127.0.0.1", table="Hall 1")


def test_broker_restart_mid_stream_loses_nothing_and_applies_nothing_twice(mosquitto_fresh):
    table = fresh_table()
    total = 60

    async def main():
        t = await started(MqttTransport(mosquitto_fresh.url, table=table))
        board = MqttBoard(mosquitto_fresh.port, table).start()
        got = []
        try:
            await take(t, 1)  # hello
            for i in range(total):
                if i == total // 2:
                    mosquitto_fresh.restart()  # both sides drop; events keep coming into the outbox
                board.event(value=i % 2)
                await asyncio.sleep(0.002)
            # Both clients reconnect by themselves; the board resends its outbox on reconnect.
            await until(lambda: t.links[t.url] == "connected" and board.connected.is_set(), 20, "reconnect")

            resent = [time.monotonic()]

            def settled():
                got.extend(m for m in drain(t) if isinstance(m, Event))
                if len(got) < total and time.monotonic() - resent[0] > 0.5:
                    resent[0] = time.monotonic()
                    board.resend()  # a real board retries unacknowledged events periodically
                return len(got) >= total and not board.unacked()

            await until(settled, 30, "every event applied and acknowledged")
            await asyncio.sleep(0.2)
            got.extend(m for m in drain(t) if isinstance(m, Event))
            seqs = [e.seq for e in got]
            assert sorted(seqs) == list(range(1, total + 1))  # every event, each exactly once
            assert t.connects >= 2  # the restart really cut the link
            assert t.counters["accepted"] >= total + 1
        finally:
            board.stop()
            await t.stop()

    run(main())


def test_host_started_before_the_broker_says_so_and_connects_when_it_appears(mosquitto_fresh):
    async def main():
        mosquitto_fresh.stop()
        t = MqttTransport(mosquitto_fresh.url, table=fresh_table())
        await t.start()
        try:
            await until(lambda: t.links[t.url].startswith("cannot reach"), what="unreachable broker reported")
            mosquitto_fresh.start()
            await until(lambda: t.links[t.url] == "connected", 20, "connected once the broker is up")
        finally:
            await t.stop()

    run(main())


def test_login_refused_is_reported_and_the_right_password_connects(tmp_path):
    broker = Broker(tmp_path / "auth", users={"hall": "s3cret"}).start()

    async def main():
        wrong = MqttTransport(broker.url, table="t1", username="hall", password="nope")
        right = MqttTransport("mqtt://hall:s3cret@127.0.0.1:%d" % broker.port, table="t1")
        await wrong.start()
        await right.start()
        try:
            await until(lambda: wrong.links[wrong.url].startswith("refused"), what="refusal reported")
            await until(lambda: right.links[right.url] == "connected", what="login with the password in the url")
        finally:
            await wrong.stop()
            await right.stop()

    try:
        run(main())
    finally:
        broker.close()


def test_every_shape_of_publish_the_broker_delivers_reaches_the_intake_once(mosquitto):
    """The transport cuts a PUBLISH out of the socket's data itself (docs/bridge.md, "MQTT client"): at
    QoS 0 and 1, one longer than 127 bytes (two length bytes), one with MQTT 5 properties (read by gmqtt
    instead), one from a 3.1.1 client, several in one read. Each is taken once, in order."""
    table = fresh_table()
    base = "battlement/%s/tower-1/up" % table

    async def main():
        t = await started(MqttTransport(mosquitto.url, table=table))
        sensors = {"cup-%d" % i: "beam" for i in range(1, 9)}  # a hello past 127 bytes: two length bytes
        board = MqttBoard(mosquitto.port, table, sensors=sensors).start()
        assert len(board.hello_frame()) > 127
        v5 = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        v3 = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        try:
            assert isinstance((await take(t, 1))[0], Hello)
            for c in (v5, v3):
                c.connect(mosquitto.host, mosquitto.port)
                c.loop_start()
            props = mqtt.Properties(mqtt.PacketTypes.PUBLISH)
            props.UserProperty = ("from", "a bridge of brokers")
            frames = [board.event_frame() for _ in range(6)]
            v5.publish(base, frames[0], qos=0).wait_for_publish(5)
            v5.publish(base, frames[1], qos=1).wait_for_publish(5)
            v5.publish(base, frames[2], qos=1, properties=props).wait_for_publish(5)
            v3.publish(base, frames[3], qos=1).wait_for_publish(5)
            for f in frames[4:]:  # back to back: one read
                v5.publish(base, f, qos=1)
            msgs = await take(t, 6)
            assert events(msgs) == [(table, "tower-1", s) for s in range(1, 7)]
            assert t.counters.get("handler-errors", 0) == 0 and t.counters.get("stale-seq", 0) == 0
            # One marker from each client after those: a second copy of any of them (a packet read
            # twice, a redelivery) was published or read before its client's marker, and one client's
            # QoS 1 messages on one topic reach us in order, so it would come before the markers.
            v5.publish(base, board.event_frame(), qos=1).wait_for_publish(5)
            v3.publish(base, board.event_frame(), qos=1).wait_for_publish(5)
            msgs = []
            while len(events(msgs)) < 2:
                msgs += await take(t, 1)
            assert events(msgs) == [(table, "tower-1", 7), (table, "tower-1", 8)]  # nothing twice
            assert t.counters.get("stale-seq", 0) == 0 and events(drain(t)) == []
        finally:
            for c in (v5, v3):
                c.loop_stop()
                c.disconnect()
            board.stop()
            await t.stop()

    run(main())
