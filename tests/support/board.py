"""Scripted boards for tests and benchmarks: speak the wire protocol like real firmware would.

Both keep an outbox of unacknowledged events (trimmed by the host's cumulative
evack) and can resend it, which is what makes exactly-once possible.
"""

import os
import select
import socket
import threading
import time

import paho.mqtt.client as mqtt
from battlement.link import wire
from battlement.link.messages import Beat, Event, Hello, Reply, status_payload, up_frame


class _Outbox:
    def __init__(self, board, boot, sensors, key=None, table=None):
        self.board = board
        self.key = key  # signing key: frames signed and host frames checked, as the firmware does
        self.table = table  # the table id its MACs bind (a serial board's too: the one its key came with)
        self.msgid = 0
        self.forged = 0  # host frames refused: bad MAC, or a command played back
        self.boot = boot
        self.sensors = dict(sensors)
        self.seq = 0
        self.outbox = {}  # seq -> frame, until evack
        self.down = []  # decoded (type, fields) received from the host
        self.lock = threading.Lock()

    def reboot(self, boot):
        """Forget everything like a board that lost power: new boot id, seq from 1, empty outbox."""
        with self.lock:
            self.boot = boot
            self.seq = 0
            self.outbox = {}

    def hello_frame(self):
        with self.lock:
            acked = min(self.outbox) - 1 if self.outbox else self.seq  # where it stands, like the firmware
        return self.signed(up_frame(Hello(None, self.board, self.boot, "test-1.0", wire.VERSION, "tower",
                                          self.sensors, None, acked, self.msgid)))

    def signed(self, frame):
        return wire.sign(frame, self.key, self.table, self.board, self.boot) if self.key else frame

    def status(self, up, session=0):
        """Its MQTT status (or will): signed for this boot and link session with a key, as the firmware's."""
        return status_payload(self.board, self.boot, session, up, self.key, self.table)

    def event_frame(self, sensor=None, value=1, width_us=8000, kind=None):
        sensor = sensor or min(self.sensors)
        kind = kind or self.sensors.get(sensor, "beam")
        with self.lock:
            self.seq += 1
            frame = self.signed(up_frame(
                Event(None, self.board, self.boot, self.seq, sensor, kind, value, self.seq * 1000, width_us)
            ))
            self.outbox[self.seq] = frame
        return frame

    def beat_frame(self):
        return self.signed(up_frame(Beat(None, self.board, self.boot, 1000, 0, 0, 0, len(self.outbox))))

    def _took(self, line):
        """Act on one down frame like firmware: trim on evack, answer ping (ack + hello) and commands (ack)."""
        typ, fields = wire.decode(line)
        replies = []
        if self.key and not (wire.verify(line, self.key, self.table, self.board, self.boot)
                             or (typ == "ping" and wire.verify(line, self.key, self.table, self.board, 0))):
            self.forged += 1
            return replies
        if self.key and typ in ("led", "config"):
            d = (fields[1] - self.msgid) % wire.MSGID
            if self.msgid and (d == 0 or d > wire.MSGID // 2):
                self.forged += 1  # a recorded command played back
                return replies
        if typ in ("led", "config"):
            self.msgid = fields[1]
        with self.lock:
            self.down.append((typ, fields))
            if typ == "evack" and fields[1] == self.boot:
                while self.outbox:  # seqs are in insertion order: trim from the oldest
                    oldest = next(iter(self.outbox))
                    if oldest > fields[2]:
                        break
                    del self.outbox[oldest]
        if typ == "ping":  # the host's resync: hello, ack, then the whole outbox, like the firmware
            replies = [self.hello_frame(), self.signed(up_frame(Reply(None, self.board, fields[1], True))),
                       *self.unacked()]
        elif typ in ("led", "config"):
            replies = [self.signed(up_frame(Reply(None, self.board, fields[1], True)))]
        return replies

    def unacked(self):
        with self.lock:
            return [self.outbox[s] for s in sorted(self.outbox)]

    def down_of(self, typ):
        with self.lock:
            return [f for t, f in self.down if t == typ]


class SerialBoard(_Outbox):
    """A board on one end of a pty pair. Call pump() to read and answer what the host sent."""

    def __init__(self, path, board="tower-1", boot=0xB007, sensors=None, answer=True, key=None, table=None):
        _Outbox.__init__(self, board, boot, sensors or {"cup-1": "beam", "tilt-1": "tilt"}, key, table)
        self.path = path
        self.answer = answer
        self.fd = None
        self.splitter = wire.Splitter()

    def open(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY)
        self.splitter = wire.Splitter()
        return self

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def write(self, data):
        os.write(self.fd, data)

    def hello(self):
        self.write(self.hello_frame())

    def event(self, **kw):
        self.write(self.event_frame(**kw))
        return self.seq

    def resend(self):
        for frame in self.unacked():
            self.write(frame)

    def answer_in_thread(self):
        """Answer the host from a thread of its own (evacks trim the outbox; a ping gets hello, ack and
        the outbox again) until the close() this returns is called, which closes the board too."""
        halt = threading.Event()

        def answer():
            while not halt.is_set():
                self.pump(0.05)

        t = threading.Thread(target=answer, daemon=True)
        t.start()

        def close():
            halt.set()
            t.join(2)
            self.close()
        return close

    def pump(self, timeout=0.0):
        """Read what the host sent within timeout seconds; answer pings and commands."""
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.0, deadline - time.monotonic())
            if not select.select([self.fd], [], [], left)[0]:
                return
            for line in self.splitter.feed(os.read(self.fd, 4096)):
                for reply in self._took(line):
                    if self.answer:
                        self.write(reply)
            if time.monotonic() >= deadline:
                return


class MqttBoard(_Outbox):
    """A board on an MQTT broker: last will 'offline', retained 'online', QoS 1 events, resend on reconnect."""

    def __init__(self, port, table, board="tower-1", boot=0xB007, sensors=None, host="127.0.0.1", tls=None,
                 key=None):
        """tls: an ssl.SSLContext to connect with (the broker then speaks TLS only)."""
        _Outbox.__init__(self, board, boot, sensors or {"cup-1": "beam", "tilt-1": "tilt"}, key, table)
        self.base = "battlement/%s/%s/" % (table, board)
        self.connected = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="board-%s-%s" % (table, board))
        self.session = 0  # this connection's number: its status and will are signed for it
        c.will_set(self.base + "status", self.status(False, 0), qos=1, retain=True)
        c.reconnect_delay_set(1, 2)
        if tls is not None:
            c.tls_set_context(tls)
        c.on_connect = self._on_connect
        c.on_disconnect = lambda *a: self.connected.clear()
        c.on_message = self._on_message
        self.client = c
        self.host, self.port = host, port
        self.powered_off = False

    def start(self):
        self.client.connect_async(self.host, self.port, keepalive=5)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise RuntimeError("board %s could not reach the broker" % self.board)
        return self

    def stop(self):
        if not self.powered_off:
            self.client.disconnect()
        self.client.loop_stop()

    def power_off(self):
        """Gone without a word, as a board that loses power: the broker finds the link dead and
        publishes the board's will (offline)."""
        self.powered_off = True
        self.client.loop_stop()
        self.client.socket().close()

    def _on_connect(self, client, userdata, flags, rc, props):
        # Like the firmware: no Nagle delay, or a frame waits ~40 ms behind an unacknowledged PUBACK.
        sock = client.socket()
        if hasattr(sock, "setsockopt"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client.subscribe(self.base + "down", qos=1)
        client.publish(self.base + "status", self.status(True, self.session), qos=1, retain=True)
        self.session += 1  # paho connects again with the will set now: the next session's
        client.will_set(self.base + "status", self.status(False, self.session), qos=1, retain=True)
        # After every (re)connect: introduce ourselves, then resend whatever is unacknowledged.
        client.publish(self.base + "up", self.hello_frame(), qos=1)
        for frame in self.unacked():
            client.publish(self.base + "up", frame, qos=1)
        self.connected.set()

    def _on_message(self, client, userdata, msg):
        for reply in self._took(msg.payload):
            client.publish(self.base + "up", reply, qos=1)

    def publish(self, frame):
        self.client.publish(self.base + "up", frame, qos=1)

    def event(self, **kw):
        self.publish(self.event_frame(**kw))
        return self.seq

    def resend(self):
        for frame in self.unacked():
            self.publish(frame)
