"""Updating one board's whole firmware over MQTT, beside the same bytes published raw, same broker, same run.

The board is the real firmware under the MicroPython unix port (tests/support/otaboard.py), as flashed
(its modules as sources), so an update sends every file of the compiled set: `battlement update`'s
Updater asks what it runs, signs the manifest, sends the files in 1 KB chunks (8 ahead of the board's
answers), swaps, waits for the new firmware's hello and confirms it. Two figures per round:

- transfer: the manifest's answer to the board holding the whole set, checked (what the size of the
  firmware costs);
- whole update: from asking what the board runs to the new firmware confirmed (the swap, the
  restart and the trial's hello and evack included).

Baseline: the same bytes in the same 1 KB messages at QoS 1 from a paho publisher to a paho subscriber
through the same broker, timed from the first publish to the last byte received. Best of ROUNDS each,
alternating, so a busy machine does not land on one side only.
"""

import asyncio
import pathlib
import tempfile
import threading
import time

import benchutil  # noqa: F401 - puts tests/ and host/ on the path
import paho.mqtt.client as mqtt
from battlement.boards.update import CHUNK
from support.otaboard import BOARD, Rig, build_sets
from support.procs import Broker

ROUNDS = 3


def raw(broker, fw):
    """Seconds for fw's bytes, in CHUNK messages at QoS 1, from a publisher to a subscriber on broker."""
    payloads = [b[i:i + CHUNK] for _, b in fw.files for i in range(0, len(b), CHUNK)]
    total = sum(len(p) for p in payloads)
    got = [0]
    done = threading.Event()
    subscribed = threading.Event()

    def on_message(client, userdata, msg):
        got[0] += len(msg.payload)
        if got[0] >= total:
            done.set()

    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-update-sub")
    sub.on_message = on_message
    sub.on_subscribe = lambda *a: subscribed.set()
    sub.connect(broker.host, broker.port)
    sub.loop_start()
    sub.subscribe("bench/update", qos=1)
    subscribed.wait(10)
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-update-pub")
    pub.connect(broker.host, broker.port)
    pub.loop_start()
    t0 = time.perf_counter()
    for p in payloads:
        pub.publish("bench/update", p, qos=1)
    if not done.wait(30):
        raise SystemExit("raw: only %d of %d bytes arrived" % (got[0], total))
    took = time.perf_counter() - t0
    for c in (pub, sub):
        c.loop_stop()
        c.disconnect()
    return took


async def update(broker, fw, n):
    """(transfer s, whole update s) for one board as flashed, updated to fw."""
    marks = {}

    def progress(done, total):
        marks.setdefault("first", time.perf_counter())
        if done == total:
            marks["staged"] = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        rig = await Rig(broker, tmp, "bench-%d" % n).start()
        try:
            await rig.running()
            t0 = time.perf_counter()
            o = await rig.up.update(rig.table, BOARD, lambda platform: fw, progress)
            t1 = time.perf_counter()
        finally:
            await rig.stop()
    if not o.ok:
        raise SystemExit("update failed: %s" % o.words)
    return marks["staged"] - marks["first"], t1 - t0


def main():
    broker = Broker(nodelay=True).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            fw = build_sets(pathlib.Path(tmp))["a"]
        kb = fw.size() / 1024
        rounds, raws = [], []
        for n in range(ROUNDS):
            rounds.append(asyncio.run(update(broker, fw, n)))
            raws.append(raw(broker, fw))
        transfer = min(r[0] for r in rounds)
        whole = min(r[1] for r in rounds)
        base = min(raws)
        print("update   whole firmware (%d files, %.1f KB) to one board, best of %d" % (len(fw.files), kb, ROUNDS))
        print("   transfer       %6.3f s  %6.0f KB/s   (raw publish of the same bytes %.3f s, %.0f KB/s, ratio %.1f)"
              % (transfer, kb / transfer, base, kb / base, transfer / base), flush=True)
        print("   whole update   %6.3f s               (from asking what it runs to the new firmware confirmed; "
              "ratio to raw %.1f)" % (whole, whole / base), flush=True)
    finally:
        broker.close()


if __name__ == "__main__":
    main()
