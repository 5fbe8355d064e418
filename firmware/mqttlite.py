"""A small asyncio MQTT 3.1.1 client for the board: connect with a last will,
publish QoS 0/1 (PUBACKs tracked), subscribe, ping. Just enough for Battlement.

Written to survive months on a flaky Wi-Fi (the ideas of Peter Hinch's mqtt_as):
- every failure surfaces as MQTTError (an OSError), including EOF, timeouts and
  TLS errors, so the link has one thing to catch and reconnect on;
- every write waits for the socket with a timeout (a stalled peer cannot hang
  the board), and one lock serialises writers: the reader's PUBACKs and the
  publisher share the stream, whose buffer two concurrent drains would corrupt;
- close() closes the socket itself: MicroPython's StreamWriter.close() does
  nothing, and on lwIP every forgotten socket is a PCB the board runs out of;
- overdue() says when a PUBACK or PINGRESP is late, so a half-open link shows
  within the response time instead of only after the keepalive.

TCP_NODELAY is set after connecting: without it Nagle's algorithm holds each
small packet back for tens of milliseconds.
"""

import asyncio
import socket
import struct
import time

CONNECT, CONNACK, PUBLISH, PUBACK = 0x10, 0x20, 0x30, 0x40
SUBSCRIBE, SUBACK, PINGREQ, PINGRESP, DISCONNECT = 0x82, 0x90, 0xC0, 0xD0, 0xE0
_EINPROGRESS = 115  # errno on lwIP and Linux alike
_MAX_PACKET = 4096  # the board gets one-frame commands (< 600 bytes); anything bigger is garbage
_BATCH = 1400  # bytes of PUBLISH packets per write: about one TCP segment (lwIP's MSS is 1460)


class MQTTError(OSError):
    pass


# What sockets, streams and TLS raise when a link fails (mbedtls: ValueError for a bad certificate;
# a TLS handshake can run out of heap); all become MQTTError.
_FAILURES = (OSError, EOFError, ValueError, MemoryError)


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


def der(pem):
    """PEM text -> DER bytes of its first certificate (mbedtls on the ports takes DER as cadata)."""
    import binascii

    body = pem.split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0]
    return binascii.a2b_base64("".join(body.split()))


class MQTTClient:
    def __init__(
        self, client_id, host, port=1883, user=None, password=None, keepalive=30, ca=None, response_ms=10000
    ):
        """ca: PEM text of the CA that signed the broker's certificate; given, the link is TLS (verified)."""
        self.client_id = client_id
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.keepalive = keepalive
        self.ca = ca
        self.response_ms = response_ms
        self.will = None
        self.sock = None  # the TCP socket, closed for real in close()
        self.tls = None  # the TLS socket wrapped around it
        self.r = None
        self.w = None
        self.lock = asyncio.Lock()
        self.pid = 0
        # QoS 1 PUBLISHes the broker has not acknowledged, and since when it has been silent about them.
        # A count, not a table by packet id: a broker PUBACKs in order (MQTT 3.1.1, 4.6), and a table as
        # long as a full outbox needs a block of heap a fragmented heap may not have.
        self.unacked = 0
        self.acked_at = time.ticks_ms()
        self.ping_at = None  # ticks_ms of a PINGREQ not yet answered
        self.last_rx = time.ticks_ms()
        self.granted = None  # SUBACK return code: 0/1 granted, 0x80 refused
        self.on_message = None  # callback(topic: str, payload: bytes)

    def set_last_will(self, topic, msg, retain=False, qos=0):
        self.will = (topic, msg, retain, qos)

    async def connect(self, addr, timeout_ms=5000):
        """Open the socket to addr (a getaddrinfo address), send CONNECT, wait for CONNACK; MQTTError if not."""
        self.close()
        try:
            await asyncio.wait_for_ms(self._connect(addr), timeout_ms)
        except asyncio.TimeoutError:  # noqa: UP041 - MicroPython has no builtin TimeoutError
            self.close()
            raise MQTTError("no CONNACK within %d ms" % timeout_ms)
        except _FAILURES as e:
            self.close()
            raise _error(e)

    async def _connect(self, addr):
        s = socket.socket()
        self.sock = s  # owned from here on: close() reaches it whatever fails next
        s.setblocking(False)
        try:
            s.connect(addr)
        except OSError as e:
            if e.args[0] != _EINPROGRESS:
                raise
        stream = s
        if self.ca:
            import ssl

            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.verify_mode = ssl.CERT_REQUIRED  # type: ignore[attr-defined]  # in MicroPython, not in the stubs
            ctx.load_verify_locations(cadata=der(self.ca))
            # The handshake runs inside the first writes and reads, under their timeouts.
            stream = ctx.wrap_socket(s, server_hostname=self.host, do_handshake_on_connect=False)
            stream.setblocking(False)
            self.tls = stream
        try:
            s.setsockopt(6, 1, 1)  # IPPROTO_TCP, TCP_NODELAY
        except (OSError, AttributeError):
            pass
        self.r = self.w = asyncio.StreamWriter(stream, {})  # one Stream reads and writes
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
        typ, data = await self._read()
        if typ != CONNACK or len(data) < 2 or data[1] != 0:
            raise MQTTError(
                "broker refused connection (code %d)" % (data[1] if typ == CONNACK and len(data) > 1 else -1)
            )
        self.unacked = 0
        self.ping_at = None
        self.last_rx = time.ticks_ms()

    async def _send(self, pkt):
        async with self.lock:
            w = self.w
            if w is None:
                raise MQTTError("not connected")
            try:
                w.write(pkt)
                if getattr(w, "out_buf", True):  # not all gone at once: wait for room, but not forever
                    await asyncio.wait_for_ms(w.drain(), self.response_ms)
                else:
                    await w.drain()  # only yields: the usual case costs no timeout task
            except asyncio.TimeoutError:  # noqa: UP041 - as above
                raise MQTTError("write stalled for %d ms" % self.response_ms)
            except _FAILURES as e:
                raise _error(e)

    async def _read(self):
        r = self.r
        if r is None:
            raise MQTTError("not connected")
        try:
            head = (await r.readexactly(1))[0]
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
            if n > _MAX_PACKET:
                raise MQTTError("packet of %d bytes" % n)
            data = await r.readexactly(n) if n else b""
        except _FAILURES as e:
            raise _error(e)
        self.last_rx = time.ticks_ms()
        return head, data

    def _next_pid(self):
        self.pid = self.pid % 65535 + 1
        return self.pid

    def _publish_packet(self, topic, msg, retain, qos):
        body = _str(topic)
        if qos:
            pid = self._next_pid()
            if not self.unacked:
                self.acked_at = time.ticks_ms()
            self.unacked += 1
            body += struct.pack("!H", pid)
        return _packet(PUBLISH | (qos << 1) | (1 if retain else 0), body + msg)

    async def publish(self, topic, msg, retain=False, qos=0):
        await self._send(self._publish_packet(topic, msg, retain, qos))

    async def publish_all(self, topic, msgs, qos=1):
        """Several messages per write and drain (a burst of events, the outbox after a reconnect),
        about one TCP segment at a time, so a full outbox never needs one big block of heap."""
        batch = []
        size = 0
        for m in msgs:
            pkt = self._publish_packet(topic, m, False, qos)
            batch.append(pkt)
            size += len(pkt)
            if size >= _BATCH:
                await self._send_batch(batch)
                batch = []
                size = 0
        if batch:
            await self._send_batch(batch)

    async def _send_batch(self, batch):
        try:
            pkts = b"".join(batch)
        except MemoryError:  # a fragmented heap has no block of _BATCH bytes: the packets one at a time
            for p in batch:
                await self._send(p)
            return
        await self._send(pkts)

    async def subscribe(self, topic, qos=1):
        pid = self._next_pid()
        self.granted = None
        await self._send(_packet(SUBSCRIBE, struct.pack("!H", pid) + _str(topic) + bytes((qos,))))

    async def ping(self):
        if self.ping_at is None:
            self.ping_at = time.ticks_ms()
        await self._send(bytes((PINGREQ, 0)))

    def overdue(self, now):
        """A PUBACK or PINGRESP later than response_ms: the link is dead even if TCP has not noticed."""
        late = self.response_ms
        if self.ping_at is not None and time.ticks_diff(now, self.ping_at) > late:
            return True
        return bool(self.unacked) and time.ticks_diff(now, self.acked_at) > late

    async def wait_msg(self):
        """Read one packet and act on it (deliver PUBLISH, PUBACK it, note PUBACKs and PINGRESPs)."""
        head, data = await self._read()
        typ = head & 0xF0
        try:
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
                if len(data) < 2:
                    raise MQTTError("bad packet 0x%02x: %d bytes" % (head, len(data)))
                if self.unacked:
                    self.unacked -= 1
                    self.acked_at = time.ticks_ms()  # the broker is answering: the rest are not late yet
            elif typ == PINGRESP:
                self.ping_at = None
            elif typ == SUBACK:
                self.granted = data[2]
                if self.granted == 0x80:
                    raise MQTTError("broker refused the subscription")
        except (IndexError, ValueError, UnicodeError) as e:  # a garbled packet: the stream is lost
            raise MQTTError("bad packet 0x%02x: %r" % (head, e))
        return typ

    def close(self):
        """Close the socket for real (no DISCONNECT: the broker publishes our will, which is the truth)."""
        for s in (self.tls, self.sock):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        self.tls = self.sock = self.r = self.w = None


def _error(e):
    """Whatever a socket, a stream or TLS raised, as MQTTError (EOFError and ValueError are not OSErrors)."""
    if isinstance(e, MQTTError):
        return e
    if isinstance(e, EOFError):
        return MQTTError("connection closed by the broker")
    return MQTTError("%s: %s" % (type(e).__name__, e))
