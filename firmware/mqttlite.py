"""A small asyncio MQTT 3.1.1 client for the board: connect with a last will,
publish QoS 0/1 (PUBACKs tracked), subscribe, ping. Just enough for Battlement.

TCP_NODELAY is set after connecting: without it Nagle's algorithm holds each
small packet back for tens of milliseconds.
"""

import asyncio
import struct

CONNECT, CONNACK, PUBLISH, PUBACK = 0x10, 0x20, 0x30, 0x40
SUBSCRIBE, SUBACK, PINGREQ, PINGRESP, DISCONNECT = 0x82, 0x90, 0xC0, 0xD0, 0xE0


class MQTTError(OSError):
    pass


def _str(s):
    if isinstance(s, str):
        s = s.encode()
    return struct.pack("!H", len(s)) + s


def _packet(head, body):
    n = len(body)
    out = bytearray((head,))
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            break
    return bytes(out) + body


class MQTTClient:
    def __init__(self, client_id, host, port=1883, user=None, password=None, keepalive=30):
        self.client_id = client_id
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.keepalive = keepalive
        self.will = None
        self.r = None
        self.w = None
        self.pid = 0
        self.inflight = {}  # packet id -> topic, until the broker's PUBACK
        self.on_message = None  # callback(topic: str, payload: bytes)

    def set_last_will(self, topic, msg, retain=False, qos=0):
        self.will = (topic, msg, retain, qos)

    async def connect(self, timeout_ms=5000):
        self.r, self.w = await asyncio.wait_for_ms(asyncio.open_connection(self.host, self.port), timeout_ms)
        try:
            self.w.s.setsockopt(6, 1, 1)  # IPPROTO_TCP, TCP_NODELAY
        except (OSError, AttributeError):
            pass
        flags = 0x02  # clean session: the board resends what matters itself
        body = _str(self.client_id)
        if self.will:
            topic, msg, retain, qos = self.will
            flags |= 0x04 | (qos << 3) | (0x20 if retain else 0)
            body += _str(topic) + _str(msg)
        if self.user:
            flags |= 0x80
            body += _str(self.user)
            if self.password:
                flags |= 0x40
                body += _str(self.password)
        head = _str("MQTT") + bytes((4, flags)) + struct.pack("!H", self.keepalive)
        await self._send(_packet(CONNECT, head + body))
        typ, data = await asyncio.wait_for_ms(self._read(), timeout_ms)  # type: ignore[var-annotated]
        if typ != CONNACK or len(data) < 2 or data[1] != 0:
            raise MQTTError("broker refused connection (code %d)" % (data[1] if len(data) > 1 else -1))
        self.inflight = {}

    async def _send(self, pkt):
        if self.w is None:
            raise MQTTError("not connected")
        self.w.write(pkt)
        await self.w.drain()

    async def _read(self):
        r = self.r
        if r is None:
            raise MQTTError("not connected")
        b = await r.readexactly(1)
        head = b[0]
        n = 0
        shift = 0
        while True:
            c = (await r.readexactly(1))[0]
            n |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                break
            if shift > 21:
                raise MQTTError("bad remaining length")
        data = await r.readexactly(n) if n else b""
        return head, data

    def _next_pid(self):
        self.pid = self.pid % 65535 + 1
        return self.pid

    async def publish(self, topic, msg, retain=False, qos=0):
        body = _str(topic)
        if qos:
            pid = self._next_pid()
            self.inflight[pid] = topic
            body += struct.pack("!H", pid)
        await self._send(_packet(PUBLISH | (qos << 1) | (1 if retain else 0), body + msg))

    async def subscribe(self, topic, qos=1):
        pid = self._next_pid()
        await self._send(_packet(SUBSCRIBE, struct.pack("!H", pid) + _str(topic) + bytes((qos,))))

    async def ping(self):
        await self._send(bytes((PINGREQ, 0)))

    async def wait_msg(self):
        """Read one packet and act on it (deliver PUBLISH, PUBACK it, note PUBACKs)."""
        head, data = await self._read()
        typ = head & 0xF0
        if typ == PUBLISH:
            tl = (data[0] << 8) | data[1]
            topic = data[2 : 2 + tl].decode()
            pos = 2 + tl
            qos = (head >> 1) & 3
            if qos:
                pid = (data[pos] << 8) | data[pos + 1]
                pos += 2
                await self._send(bytes((PUBACK, 2, pid >> 8, pid & 0xFF)))
            if self.on_message:
                self.on_message(topic, data[pos:])
        elif typ == PUBACK:
            self.inflight.pop((data[0] << 8) | data[1], None)
        return typ

    async def disconnect(self):
        try:
            await self._send(bytes((DISCONNECT, 0)))
        except OSError:
            pass
        self.close()

    def close(self):
        if self.w is not None:
            try:
                self.w.close()
            except OSError:
                pass
        self.r = self.w = None
