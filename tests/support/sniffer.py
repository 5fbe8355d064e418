"""A keyless client on the broker that records every message under battlement/ and publishes what it is told:
the stranger who captures a board's signed frames to replay them later, elsewhere, or after its reboots."""

import threading
import time

import paho.mqtt.client as mqtt


class Sniffer:
    def __init__(self, port, host="127.0.0.1"):
        self.seen: list[tuple[str, bytes, bool]] = []  # (topic, payload, retained)
        self.lock = threading.Lock()
        ready = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="sniffer-%d" % time.monotonic_ns())
        c.on_connect = lambda c, *a: (c.subscribe("battlement/#", qos=1), ready.set())
        c.on_message = self._got
        c.connect(host, port)
        c.loop_start()
        self.c = c
        if not ready.wait(10):
            raise RuntimeError("the sniffer could not reach the broker on port %d" % port)
        time.sleep(0.1)  # the SUBACK: what is published from here on is seen

    def _got(self, c, userdata, msg):
        with self.lock:
            self.seen.append((msg.topic, msg.payload, msg.retain))

    def payloads(self, topic, start=b""):
        with self.lock:
            return [p for t, p, _r in self.seen if t == topic and p.startswith(start)]

    def wait(self, topic, start=b"", n=1, timeout=15):
        """The first n payloads on topic that start so, once there are n."""
        deadline = time.monotonic() + timeout
        while len(got := self.payloads(topic, start)) < n:
            if time.monotonic() > deadline:
                raise AssertionError("never saw %d message(s) %r... on %s; saw %s" % (n, start, topic, self.seen[-10:]))
            time.sleep(0.02)
        return got[:n]

    def publish(self, topic, payload, retain=False):
        self.c.publish(topic, payload, qos=1, retain=retain).wait_for_publish(10)

    def stop(self):
        self.c.disconnect()
        self.c.loop_stop()
