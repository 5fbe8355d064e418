"""What MqttTransport offers beside the boards' topics (Home Assistant discovery uses it): a last will,
hooks run after every (re)connect, extra subscriptions, and raw publishes. On a real Mosquitto, with
paho as the other client."""

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt
from battlement.link.messages import Event
from battlement.link.transport.mqtt import MqttTransport, topic_matches
from support.aio import until
from support.procs import settle


class Watcher:
    """A paho client that keeps every message on a filter (retained ones flagged)."""

    def __init__(self, broker, filter):
        self.got = []
        self.ready = threading.Event()  # subscribed: the broker's SUBACK came
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="watch-%d" % time.monotonic_ns())
        c.on_connect = lambda c, u, f, rc, p=None: c.subscribe(filter, 1)
        c.on_subscribe = lambda *a: self.ready.set()
        c.on_message = lambda c, u, m: self.got.append((m.topic, m.payload, bool(m.retain)))
        c.connect(broker.host, broker.port)
        c.loop_start()
        self.c = c
        assert self.ready.wait(5)

    def payloads(self, topic):
        return [p for t, p, _r in self.got if t == topic]

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


async def publish_until(publish, heard, within=30.0):
    """publish() until heard() (the broker has the subscription and a message on it arrived); `within` s at
    most, for a busy machine."""
    deadline = time.monotonic() + within
    while not heard() and time.monotonic() < deadline:
        publish()
        await asyncio.sleep(0.05)


def test_topic_filters_match_as_mqtt_says():
    assert topic_matches("homeassistant/status", "homeassistant/status")
    assert topic_matches("a/+/c", "a/b/c") and not topic_matches("a/+/c", "a/b/d")
    assert topic_matches("a/#", "a/b/c") and topic_matches("a/#", "a")
    assert not topic_matches("a/+", "a/b/c") and not topic_matches("a/b/c", "a/b")


def test_hooks_run_after_every_connect_and_extra_topics_reach_their_callback(mosquitto_fresh):
    broker = mosquitto_fresh
    watch = Watcher(broker, "hooks/#")

    async def go():
        t = MqttTransport(broker.url, table="hooks-1")
        t.will = ("hooks/avail", b"offline", True)
        heard = []
        t.subscribe_extra("hooks/in/+", lambda topic, payload: heard.append((topic, payload)))
        t.on_connected.append(lambda: t.publish_raw("hooks/avail", b"online", qos=1, retain=True))
        await t.start()
        try:
            await until(lambda: watch.payloads("hooks/avail") == [b"online"], what="online after the first connect")
            watch.c.publish("hooks/in/x", b"hello", qos=1)
            watch.c.publish("battlement/hooks-1/board-1/nonsense", b"?", qos=1)  # not an extra topic: ignored
            await until(lambda: heard == [("hooks/in/x", b"hello")], what="the extra subscription")
            assert t.publish_raw("hooks/raw", b"r0", qos=0) and t.publish_raw("hooks/raw", b"r1", qos=1, retain=True)
            await until(lambda: watch.payloads("hooks/raw") == [b"r0", b"r1"], what="raw publishes")
            broker.restart()  # retained messages are not kept across it: the hook sends "online" again
            await until(lambda: t.connects >= 2, timeout=15, what="the reconnect")
            await until(lambda: watch.payloads("hooks/avail").count(b"online") == 2, timeout=10,
                        what="the hook after the reconnect")
            heard.clear()
            watch.c.publish("hooks/in/y", b"again", qos=1)
            await until(lambda: heard == [("hooks/in/y", b"again")], what="subscribed again after the reconnect")
            t.subscribe_extra("hooks/late", lambda topic, payload: heard.append((topic, payload)))
            await publish_until(lambda: watch.c.publish("hooks/late", b"late", qos=1),  # (no SUBACK to wait on)
                                lambda: ("hooks/late", b"late") in heard)
            assert ("hooks/late", b"late") in heard, "a filter added while connected heard nothing"
            assert t.counters.get("hook-errors", 0) == 0
        finally:
            await t.stop()

    try:
        watch.c.reconnect_delay_set(0.1, 0.5)
        asyncio.run(go())
        settle(watch.c, "hooks/marker", watch.payloads)  # the marker: a will would have come before it
        assert watch.payloads("hooks/avail")[-1] == b"online"  # a clean stop sends no will
    finally:
        watch.close()


CHILD = """
import asyncio, sys
from battlement.link.transport.mqtt import MqttTransport

async def main():
    t = MqttTransport(sys.argv[1], table="hooks-2")
    t.will = ("hooks2/avail", b"offline", True)
    t.on_connected.append(lambda: t.publish_raw("hooks2/avail", b"online", qos=1, retain=True))
    await t.start()
    print("up", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


def test_the_will_is_published_retained_when_the_process_dies(mosquitto):
    child = subprocess.Popen([sys.executable, "-c", CHILD, mosquitto.url], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "up"
        watch = Watcher(mosquitto, "hooks2/#")
        try:
            deadline = time.monotonic() + 5
            while watch.payloads("hooks2/avail") != [b"online"] and time.monotonic() < deadline:
                time.sleep(0.02)
            assert watch.payloads("hooks2/avail") == [b"online"]
            os.kill(child.pid, signal.SIGKILL)
            child.wait(5)
            while b"offline" not in watch.payloads("hooks2/avail") and time.monotonic() < deadline + 5:
                time.sleep(0.02)
            assert watch.payloads("hooks2/avail") == [b"online", b"offline"]
        finally:
            watch.close()
        late = Watcher(mosquitto, "hooks2/#")  # a client that comes later still learns it: retained
        try:
            deadline = time.monotonic() + 5
            while not late.got and time.monotonic() < deadline:  # retained messages follow the SUBACK
                time.sleep(0.02)
            assert late.got == [("hooks2/avail", b"offline", True)]
        finally:
            late.c.publish("hooks2/avail", b"", retain=True)  # leave the shared broker clean
            late.close()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(5)


def test_a_filter_added_while_every_packet_id_is_in_flight_is_still_subscribed(mosquitto):
    """A burst of QoS 1 commands takes every packet id the broker's receive maximum allows (the bridge's
    first lights of its tables); a filter added then (the venue link, attached after start) waits for an
    id instead of stopping the bridge with gmqtt's OverflowError, and its messages arrive."""
    async def go():
        t = MqttTransport(mosquitto.url, table="hooks-ids")
        heard = []
        await t.start()
        try:
            for i in range(100):  # no await between: none of their PUBACKs can come back meanwhile
                t.publish_raw("hooks-ids/burst", b"%d" % i, qos=1)
            t.subscribe_extra("hooks-ids/in", lambda topic, payload: heard.append(payload))
            await until(lambda: not t._client.outbox and not t._client.sent, what="the burst acknowledged")
            await publish_until(lambda: t.publish_raw("hooks-ids/in", b"hello", qos=1), lambda: heard)
            assert heard[:1] == [b"hello"]
        finally:
            await t.stop()
    asyncio.run(go())


def test_a_client_that_hears_no_boards_subscribes_only_to_its_own_filters(mosquitto):
    """The venue hub's connection: its extra filters, never the boards' frames (its login need not read them)."""
    watch = Watcher(mosquitto, "battlement/hooks-quiet/#")
    async def go():
        t = MqttTransport(mosquitto.url)
        t.hears_boards = False
        heard = []
        t.subscribe_extra("hooks-quiet/in", lambda topic, payload: heard.append(payload))
        await t.start()
        try:
            t.publish_raw("battlement/hooks-quiet/b1/status", b"online", qos=1)
            t.publish_raw("battlement/hooks-quiet/b1/up", b"hello b1 1 2 *00000000", qos=1)
            t.publish_raw("hooks-quiet/in", b"marker", qos=1)  # after both, on the same connection
            await until(lambda: heard == [b"marker"], what="the marker")
            await until(lambda: len(watch.got) == 2, what="a watcher that hears the boards' topics")
            assert t.counters["accepted"] == 0 and not t.online and not t.boards
            assert sum(t.counters.values()) == 0
        finally:
            await t.stop()
    try:
        asyncio.run(go())
    finally:
        watch.close()


def test_a_filter_under_battlement_added_later_hears_board_frames_already_heard_and_every_frame_still_counts(
        mosquitto):
    """Board frames are handed from a read to the intake by their topic alone once heard; an extra filter that
    takes them (added later, a watcher of the boards' topics) must hear them from then on, and a frame carrying
    MQTT 5 properties (read by gmqtt, not the fast path) counts like the others, in its place."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
    from support.board import MqttBoard

    board = MqttBoard(mosquitto.port, "watch-1").start()
    props = Properties(PacketTypes.PUBLISH)
    props.UserProperty = ("from", "test")

    async def go():
        t = MqttTransport(mosquitto.url, table="watch-1")
        await t.start()
        got: list = []
        try:
            board.publish(board.hello_frame())
            seqs = [board.event() for _ in range(3)]

            async def take(n):
                while len([m for m in got if isinstance(m, Event)]) < n:
                    got.append(await t.get())
            await asyncio.wait_for(take(3), 10)
            heard = []
            t.subscribe_extra("battlement/watch-1/+/up", lambda topic, payload: heard.append(payload))
            for _ in range(50):  # until the broker has the new subscription (no SUBACK to wait on here)
                seqs.append(board.event())
                await asyncio.wait_for(take(len(seqs)), 10)
                if heard:
                    break
            assert heard, "the filter added later heard none of the board's frames"
            board.client.publish(board.base + "up", board.event_frame(), qos=1, properties=props)
            seqs.append(board.seq)
            seqs.append(board.event())
            await asyncio.wait_for(take(len(seqs)), 10)
            assert [m.seq for m in got if isinstance(m, Event)] == seqs  # each once, in order
            assert t.counters.get("handler-errors", 0) == t.counters.get("hook-errors", 0) == 0
        finally:
            await t.stop()

    try:
        asyncio.run(go())
    finally:
        board.stop()


def test_a_filter_added_while_the_connect_waits_for_its_suback_is_subscribed_too(mosquitto, monkeypatch):
    """The venue link is attached once the bridge's start() is over, and start() waits for the first
    connect at most FIRST_CONNECT: on a busy machine the connect can still be waiting for its SUBACK then.
    The filter added in that window was in neither that connect's SUBSCRIBE nor (the link not up yet) one of
    its own, so the table never heard its hub until the next reconnect."""
    from battlement.link.transport.mqtt import keeper

    async def go():
        t = MqttTransport(mosquitto.url, table="hooks-race")
        heard = []
        subscribe = keeper._Client.subscribe

        def late(client, subs, *a, **kw):  # the connect's SUBSCRIBE is out; its SUBACK not read yet
            r = subscribe(client, subs, *a, **kw)
            if isinstance(subs, list) and not t._extra:
                t.subscribe_extra("hooks-race/in", lambda topic, payload: heard.append(payload))
            return r
        monkeypatch.setattr(keeper._Client, "subscribe", late)
        await t.start()
        try:
            assert t._up and "hooks-race/in" in t._extra
            await publish_until(lambda: t.publish_raw("hooks-race/in", b"start R1-M1", qos=1), lambda: heard)
            assert heard[:1] == [b"start R1-M1"]
            assert t.connects == 1  # on the first connection, not on a reconnect
        finally:
            await t.stop()
    asyncio.run(go())
