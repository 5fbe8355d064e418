"""MQTT path over a private loopback Mosquitto: MqttTransport vs a raw paho subscriber on the same broker, same run.

Latency: one QoS 1 event published by a board client, time until it comes out
(transport: await get(), decoded and deduped; raw: paho's on_message).
Throughput: a burst of events, time until the last one is out.
"""

import asyncio
import queue
import time

import benchutil
import paho.mqtt.client as mqtt
from battlement.transport import MqttTransport
from support.board import MqttBoard
from support.procs import Broker

PINGS = 1000
BURST = 5000
ROUNDS = 2


def raw_side(broker, board):
    lat = []
    got: queue.Queue = queue.Queue()
    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    sub.on_message = lambda c, u, m: got.put(m.payload)
    sub.connect(broker.host, broker.port)
    sub.subscribe("battlement/raw/+/up", qos=1)
    sub.loop_start()
    try:
        time.sleep(0.3)
        board.publish(board.hello_frame())
        got.get(timeout=10)
        for _ in range(PINGS):
            frame = board.event_frame()
            t0 = time.perf_counter()
            board.publish(frame)
            got.get(timeout=10)
            lat.append(time.perf_counter() - t0)
        frames = [board.event_frame() for _ in range(BURST)]
        t0 = time.perf_counter()
        for f in frames:
            board.publish(f)
        for _ in range(BURST):
            got.get(timeout=30)
        rate = BURST / (time.perf_counter() - t0)
    finally:
        sub.loop_stop()
        sub.disconnect()
    return rate, lat


async def transport_side(broker, board):
    lat = []
    t = MqttTransport(broker.url, table="bench")
    await t.start()
    try:
        while t.links[t.url] != "connected":
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        board.publish(board.hello_frame())
        while True:  # skip anything but our board's hello
            if (await t.get()).__class__.__name__ == "Hello":
                break
        for _ in range(PINGS):
            frame = board.event_frame()
            t0 = time.perf_counter()
            board.publish(frame)
            await t.get()
            lat.append(time.perf_counter() - t0)
        frames = [board.event_frame() for _ in range(BURST)]
        t0 = time.perf_counter()
        for f in frames:
            board.publish(f)
        for _ in range(BURST):
            await t.get()
        rate = BURST / (time.perf_counter() - t0)
        rejected = {k: v for k, v in t.counters.items() if k != "accepted" and v}
    finally:
        await t.stop()
    return rate, lat, rejected


def main():
    broker = Broker(nodelay=True).start()  # as docs/bridge.md advises; same broker for both sides
    raw_board = MqttBoard(broker.port, "raw", board="tower-1")
    board = MqttBoard(broker.port, "bench", board="tower-1")
    raw_rounds, rounds, rejected = [], [], {}
    try:
        raw_board.start()
        board.start()
        for _ in range(ROUNDS):
            raw_rounds.append(raw_side(broker, raw_board))
            rate, lat, rejected = asyncio.run(transport_side(broker, board))
            rounds.append((rate, lat))
    finally:
        raw_board.stop()
        board.stop()
        broker.close()
    benchutil.report("mqtt", rounds, raw_rounds, "raw paho subscriber", rejected)


if __name__ == "__main__":
    main()
