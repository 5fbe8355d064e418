"""Just enough MQTT 3.1.1 for the bridge, as an asyncio protocol.

Why not paho here: paho reads a packet with three recv calls and a dozen Python calls
around it, which was half the bridge's time per event with 100 tables on one broker.
This client reads whatever the socket holds in one go and cuts every whole packet out
of it, answers a burst of QoS 1 messages with one write of PUBACKs, and gathers the
packets published within one loop turn into one write. (paho stays for the simulated
boards and the tests, which play the part of independent boards.)

What it does: CONNECT (clean session, user/password, TLS through asyncio), SUBSCRIBE,
PUBLISH at QoS 0 and 1 both ways, PUBACK, keepalive pings, DISCONNECT. QoS 1 messages
not yet acknowledged survive a reconnect and go out again with the DUP flag. Nothing
here reconnects: the owner (MqttTransport) decides when to try again.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from collections.abc import Callable

CONNECT, CONNACK, PUBLISH, PUBACK, SUBSCRIBE, SUBACK, PINGREQ, PINGRESP, DISCONNECT = (
    0x10, 0x20, 0x30, 0x40, 0x82, 0x90, 0xC0, 0xD0, 0xE0)
REFUSALS = {1: "unacceptable protocol version", 2: "client id rejected", 3: "server unavailable",
            4: "bad user name or password", 5: "not authorised"}
MAX_PACKET = 1 << 20  # a board frame is at most 512 bytes: anything near this is not ours
INFLIGHT_MAX = 10_000  # QoS 1 messages kept for a broker that is away; the oldest go first
_PINGREQ, _DISCONNECT = bytes((PINGREQ, 0)), bytes((DISCONNECT, 0))
_PUBACK = struct.Struct("!BBH")


class Refused(Exception):
    """The broker answered CONNECT with a refusal; str() says which."""


class ProtocolError(Exception):
    """The broker sent something MQTT 3.1.1 does not allow here."""


def _length(n: int) -> bytes:
    """MQTT's remaining-length: 7 bits a byte, low first, top bit = more follows."""
    out = bytearray()
    while True:
        n, digit = divmod(n, 128)
        out.append(digit | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _text(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("!H", len(b)) + b


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + _length(len(body)) + body


def publish_packet(topic: str, payload: bytes, qos: int, pid: int = 0, dup: bool = False, retain: bool = False) -> bytes:
    body = _text(topic) + (struct.pack("!H", pid) if qos else b"") + payload
    return _packet(PUBLISH | (dup << 3) | (qos << 1) | retain, body)


def connect_packet(client_id: str, keepalive: int, username: str | None, password: str | None,
                   will: tuple[str, bytes, bool] | None = None) -> bytes:
    """will: (topic, payload, retain), which the broker publishes (QoS 1) if we vanish without a DISCONNECT."""
    flags = 0x02  # clean session: boards resend what we missed, the inbox drops the copies
    payload = _text(client_id)
    if will is not None:
        flags |= 0x04 | (1 << 3) | (0x20 if will[2] else 0)
        payload += _text(will[0]) + _text(will[1])
    if username is not None:
        flags |= 0x80
        payload += _text(username)
        if password is not None:
            flags |= 0x40
            payload += _text(password)
    return _packet(CONNECT, _text("MQTT") + bytes((4, flags)) + struct.pack("!H", keepalive) + payload)


class MqttClient:
    """One client id, across as many connections as it takes.

    on_message(topic, payload) is called for every PUBLISH that arrives, on the loop.
    """

    def __init__(self, client_id: str, on_message: Callable[[str, bytes], None],
                 username: str | None = None, password: str | None = None, keepalive: int = 15,
                 counters: dict[str, int] | None = None, will: tuple[str, bytes, bool] | None = None):
        self.client_id, self.username, self.password, self.keepalive = client_id, username, password, keepalive
        self.will = will
        self.on_message = on_message
        # what went wrong, by name (the transport passes its own counters, so people see them in one place)
        self.counters = counters if counters is not None else {}
        self.counters.setdefault("dropped-inflight", 0)
        self.counters.setdefault("handler-errors", 0)
        self._proto: _Connection | None = None
        self._pid = 0
        self._inflight: dict[int, bytes] = {}  # pid -> PUBLISH packet awaiting its PUBACK
        self._subacks: dict[int, asyncio.Future] = {}

    @property
    def connected(self) -> bool:
        return self._proto is not None and self._proto.ready

    async def connect(self, host: str, port: int, tls: bool = False, ca: str | None = None,
                      timeout: float = 5.0) -> asyncio.Future:
        """Open a connection and log in (over TLS, checked against the system's CAs or the file ca).
        Returns a future that resolves (to the reason, a str) when this connection is lost.
        Raises Refused, OSError (ssl.SSLError included) or TimeoutError."""
        loop = asyncio.get_running_loop()
        ctx = ssl.create_default_context(cafile=ca) if tls or ca else None
        proto = _Connection(self, loop)
        await asyncio.wait_for(loop.create_connection(lambda: proto, host, port, ssl=ctx), timeout)
        proto.write(connect_packet(self.client_id, self.keepalive, self.username, self.password, self.will))
        try:
            await asyncio.wait_for(asyncio.shield(proto.connack), timeout)
        except BaseException:
            proto.close("no CONNACK")
            raise
        self._proto = proto
        proto.ready = True
        # What the last connection left unacknowledged goes again, marked as a possible duplicate.
        for pkt in self._inflight.values():
            proto.write(bytes((pkt[0] | 0x08,)) + pkt[1:])
        proto.start_pings()
        return proto.lost

    async def subscribe(self, filters: list[tuple[str, int]], timeout: float = 5.0) -> list[int]:
        """Subscribe and wait for the SUBACK; returns the granted QoS per filter (0x80 = refused)."""
        proto = self._need()
        pid = self._next_pid()
        fut = asyncio.get_running_loop().create_future()
        self._subacks[pid] = fut
        body = struct.pack("!H", pid) + b"".join(_text(f) + bytes((q,)) for f, q in filters)
        proto.write(_packet(SUBSCRIBE, body))
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._subacks.pop(pid, None)

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False) -> bool:
        """Queue a message; QoS 1 is kept until the broker has it, across reconnects.
        Returns False if it could not go now (QoS 0 while disconnected: dropped)."""
        if qos:
            pid = self._next_pid()
            pkt = publish_packet(topic, payload, 1, pid, retain=retain)
            if len(self._inflight) >= INFLIGHT_MAX:
                del self._inflight[next(iter(self._inflight))]
                self.counters["dropped-inflight"] += 1
            self._inflight[pid] = pkt
        else:
            pkt = publish_packet(topic, payload, 0, retain=retain)
        proto = self._proto
        if proto is None or not proto.ready:
            return False
        proto.write(pkt)
        return True

    def disconnect(self) -> None:
        """Say goodbye and close; unacknowledged QoS 1 messages stay for a later connect()."""
        proto, self._proto = self._proto, None
        if proto is not None:
            proto.write(_DISCONNECT)
            proto.close("disconnected on purpose")

    @property
    def inflight(self) -> int:
        return len(self._inflight)

    def _need(self) -> _Connection:
        if self._proto is None or not self._proto.ready:
            raise ConnectionError("not connected")
        return self._proto

    def _next_pid(self) -> int:
        for _ in range(65535):
            self._pid = self._pid % 65535 + 1
            if self._pid not in self._inflight and self._pid not in self._subacks:
                return self._pid
        raise ConnectionError("all 65535 packet ids are waiting for the broker")

    def _lost(self, proto: _Connection) -> None:
        if self._proto is proto:
            self._proto = None


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection: cuts packets out of the stream, coalesces writes."""

    def __init__(self, client: MqttClient, loop: asyncio.AbstractEventLoop):
        self.client, self.loop = client, loop
        self.connack: asyncio.Future = loop.create_future()
        self.lost: asyncio.Future = loop.create_future()
        self.ready = False
        self._tr: asyncio.Transport | None = None
        self._buf = b""
        self._out: list[bytes] = []
        self._flush_due = False
        self._heard = loop.time()
        self._pinger: asyncio.TimerHandle | None = None

    # --- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport) -> None:
        self._tr = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:  # tiny latency-bound packets: no waiting for Nagle's ACK
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass

    def connection_lost(self, exc) -> None:
        self._end(str(exc) if exc else "closed by the broker")

    def data_received(self, data: bytes) -> None:
        self._heard = self.loop.time()
        b = self._buf + data if self._buf else data
        i, n = 0, len(b)
        acks = []
        on_message = self.client.on_message
        try:
            while i + 2 <= n:
                first = b[i]
                size = b[i + 1]
                j = i + 2
                if size & 0x80:  # remaining length over 127: up to 4 bytes, 7 bits each
                    size &= 0x7F
                    shift = 7
                    while True:
                        if j >= n:
                            size = -1
                            break
                        d = b[j]
                        j += 1
                        size |= (d & 0x7F) << shift
                        if not d & 0x80:
                            break
                        shift += 7
                        if shift > 21:
                            raise ProtocolError("remaining length longer than 4 bytes")
                    if size < 0:
                        break  # the length itself is not all here yet
                if size > MAX_PACKET:
                    raise ProtocolError("a %d-byte packet" % size)
                end = j + size
                if end > n:
                    break
                kind = first & 0xF0
                if kind == PUBLISH:
                    tlen = (b[j] << 8) | b[j + 1]
                    p = j + 2 + tlen
                    topic = b[j + 2:p].decode("utf-8", "replace")
                    qos = (first >> 1) & 3
                    if p + (2 if qos else 0) > end:
                        raise ProtocolError("PUBLISH whose topic runs past its end")
                    if qos:
                        if qos == 2:
                            raise ProtocolError("QoS 2 message on a QoS 1 subscription")
                        acks.append((b[p] << 8) | b[p + 1])
                        p += 2
                    try:
                        on_message(topic, b[p:end])
                    except Exception:  # noqa: BLE001 -- one message must not cost the rest of the read
                        self.client.counters["handler-errors"] += 1
                else:
                    self._control(kind, b[j:end])
                i = end
        except ProtocolError as e:
            self.close("protocol error: %s" % e)
            return
        finally:
            self._buf = b[i:] if i < n else b""
            if acks:  # a burst is acknowledged in one write
                self.write(b"".join(_PUBACK.pack(PUBACK, 2, pid) for pid in acks))

    # --- packets other than PUBLISH --------------------------------------------------------

    def _control(self, kind: int, body: bytes) -> None:
        if kind == PUBACK:
            self.client._inflight.pop(struct.unpack_from("!H", body)[0], None)
        elif kind == CONNACK:
            if len(body) != 2:
                raise ProtocolError("CONNACK of %d bytes" % len(body))
            if not self.connack.done():
                if body[1]:
                    self.connack.set_exception(Refused(REFUSALS.get(body[1], "refused (code %d)" % body[1])))
                else:
                    self.connack.set_result(True)
        elif kind == SUBACK:
            fut = self.client._subacks.get(struct.unpack_from("!H", body)[0])
            if fut is not None and not fut.done():
                fut.set_result(list(body[2:]))
        elif kind == PINGRESP:
            pass  # _heard is already updated
        else:
            raise ProtocolError("unexpected packet type %d" % (kind >> 4))

    # --- writing -----------------------------------------------------------------------------

    def write(self, pkt: bytes) -> None:
        """Everything written within one loop turn leaves in one send."""
        self._out.append(pkt)
        if not self._flush_due:
            self._flush_due = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        out, self._out = self._out, []
        if self._tr is not None and not self._tr.is_closing() and out:
            self._tr.write(b"".join(out))

    # --- keepalive and the end ------------------------------------------------------------

    def start_pings(self) -> None:
        self._pinger = self.loop.call_later(self.client.keepalive / 2, self._ping)

    def _ping(self) -> None:
        if self.lost.done():
            return
        if self.loop.time() - self._heard > self.client.keepalive * 1.5:
            self.close("the broker went silent for %d s" % (self.client.keepalive * 1.5))
            return
        self.write(_PINGREQ)
        self._pinger = self.loop.call_later(self.client.keepalive / 2, self._ping)

    def close(self, reason: str) -> None:
        if self._tr is not None:
            self._flush()
            self._tr.close()
        self._end(reason)

    def _end(self, reason: str) -> None:
        self.ready = False
        if self._pinger is not None:
            self._pinger.cancel()
            self._pinger = None
        if not self.connack.done():
            self.connack.set_exception(ConnectionError(reason))
            self.connack.exception()  # retrieved here: connect() may already have given up waiting
        for fut in self.client._subacks.values():
            if not fut.done():
                fut.set_exception(ConnectionError(reason))
        if not self.lost.done():
            self.lost.set_result(reason)
        self.client._lost(self)
