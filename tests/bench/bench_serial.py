"""Serial path over a socat pty pair: SerialTransport vs raw pyserial readline on the same pty, same run.

Latency: one frame written, time until it comes out (transport: await get(),
decoded and deduped; raw: readline()). Throughput: a burst of frames from a
writer thread, time until the last one is out.
"""

import asyncio
import os
import threading
import time

import benchutil
import serial
from battlement.link.transport import SerialTransport
from support.board import SerialBoard
from support.procs import PtyPair

PINGS = 1000
BURST = 10000
ROUNDS = 2
RAW_BURST = 2000  # pyserial's readline reads byte by byte: a smaller burst gives the same rate sooner


def raw_side(pair):
    lat = []
    port = serial.Serial(pair.a, timeout=2)
    board = SerialBoard(pair.b).open()
    try:
        for _ in range(PINGS):
            frame = board.event_frame()
            t0 = time.perf_counter()
            board.write(frame)
            port.readline()
            lat.append(time.perf_counter() - t0)
        frames = [board.event_frame() for _ in range(RAW_BURST)]
        t0 = time.perf_counter()
        writer = threading.Thread(target=lambda: [board.write(f) for f in frames])
        writer.start()
        for _ in range(RAW_BURST):
            port.readline()
        rate = RAW_BURST / (time.perf_counter() - t0)
        writer.join()
    finally:
        board.close()
        port.close()
    return rate, lat


async def transport_side(pair):
    lat = []
    t = SerialTransport([pair.a])
    await t.start()
    board = SerialBoard(pair.b, answer=False).open()
    stop = threading.Event()

    def drain_acks():  # a real board reads the host's evacks; keep the pty from filling up
        while not stop.is_set():
            board.pump(0.05)

    reader = threading.Thread(target=drain_acks)
    reader.start()
    try:
        board.hello()
        await t.get()
        for _ in range(PINGS):
            frame = board.event_frame()
            t0 = time.perf_counter()
            os.write(board.fd, frame)
            await t.get()
            lat.append(time.perf_counter() - t0)
        frames = [board.event_frame() for _ in range(BURST)]
        t0 = time.perf_counter()
        writer = threading.Thread(target=lambda: [board.write(f) for f in frames])
        writer.start()
        for _ in range(BURST):
            await t.get()
        rate = BURST / (time.perf_counter() - t0)
        writer.join()
        rejected = {k: v for k, v in t.counters.items() if k != "accepted" and v}
    finally:
        stop.set()
        reader.join()
        board.close()
        await t.stop()
    return rate, lat, rejected


def main():
    pair = PtyPair().start()
    raw_rounds, rounds, rejected = [], [], {}
    try:
        for _ in range(ROUNDS):
            raw_rounds.append(raw_side(pair))
            rate, lat, rejected = asyncio.run(transport_side(pair))
            rounds.append((rate, lat))
    finally:
        pair.close()
    benchutil.report("serial", rounds, raw_rounds, "raw pyserial", rejected)


if __name__ == "__main__":
    main()
