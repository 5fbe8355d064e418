"""MQTT transport: many tables, many boards, one broker.

Topics (docs/protocol.md, "MQTT"):
    battlement/<table>/<board>/status   retained "online"/"offline" (board's last will: "offline")
    battlement/<table>/<board>/up       board -> host frames, one per message, events QoS 1
    battlement/<table>/<board>/down     host -> board frames (led/config/ping/evack), QoS 1

The connection is gmqtt (native asyncio, MQTT 5; chosen by measurement, docs/bridge.md "MQTT
client"), on the bridge's loop: no network thread to fight over the GIL. Messages go straight to
the shared intake (transport.base), which decodes, dedupes and queues them; a keeper task connects,
subscribes, and reconnects (1 s doubling to 5 s) whenever the link drops. MQTT 5 where the broker
speaks it: the broker keeps our session (subscriptions, what boards send meanwhile, commands not yet
acknowledged) across a dropped link for SESSION_EXPIRY, and commands expire after COMMAND_EXPIRY so a
stale LED pattern is never shown late; a broker that refuses 5 gets 3.1.1 with a clean session.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import re
import socket
import ssl
import time
import uuid
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

import gmqtt
from gmqtt.mqtt.constants import MQTTv50, MQTTv311
from gmqtt.mqtt.handler import MQTTConnectError
from gmqtt.mqtt.package import Package

from battlement.errors import UserError
from battlement.link.transport.base import PING_EVERY, NoRoute, Transport
from battlement.link.wire import MAX_FRAME

ROOT = "battlement"
TOPICS_KNOWN = 10_000  # parsed topics remembered (a table of boards has a handful each)
RECONNECT_MIN, RECONNECT_MAX = 1.0, 5.0  # seconds between connection attempts, doubling
FIRST_CONNECT = 5.0  # start() waits at most this long for the first attempt (subscribed, refused or unreachable)
ANSWER_WITHIN = 5.0  # seconds for the broker to answer CONNECT or SUBSCRIBE
KEEPALIVE = 15  # seconds; a broker silent for two of these is taken as gone
SESSION_EXPIRY = 120  # MQTT 5: seconds the broker keeps our session after the link drops
COMMAND_EXPIRY = 10  # MQTT 5: seconds a command may wait at the broker before it is dropped as stale
OUTBOX_MAX = 10_000  # QoS 1 messages waiting for a free packet id (the broker's receive maximum); oldest go first
TOPICS_MATCHED = 1000  # topics remembered per extra subscription lookup
# Bytes taken from the socket per read: gmqtt handles a whole read (asyncio's default, 256 KiB, about
# 2,700 frames) in one turn of the loop before a page request gets its own; 16 KiB is about 2 ms.
READ_SIZE = 16 * 1024
# The socket's receive buffer: what the kernel holds for us once flow control stops reading. Linux grows
# it up to tcp_rmem's maximum (often 32 MiB, half a minute of frames); fixed, what waits beyond it waits
# in the broker's queue for us, where a board's resend can take its place.
RECEIVE_BUFFER = 256 * 1024
# MQTT 5: QoS 1 messages (the boards' events) the broker may have on their way to us unacknowledged;
# while flow control holds the socket unread, the rest wait in the broker's queue for us (Mosquitto's
# max_queued_messages) and what overflows it is dropped there, for the boards to resend: a backlog
# of a fraction of a second, not whatever the kernel's buffers hold (gmqtt's default is 65,535).
RECEIVE_MAXIMUM = 5000
# Each evack is a QoS 1 message, and Mosquitto lets 20 be unacknowledged: one per board every 10 ms
# (serial's pace) was 10,000 a second at 100 tables, nearly all superseded while they waited. A board
# resends only after a second without one.
EVACK_EVERY = 0.05
VERSIONS = {MQTTv50: "MQTT 5", MQTTv311: "MQTT 3.1.1"}
# gmqtt logs every lost connection as a warning with a traceback; the transport says it in words
# (links, notes). Its errors still show.
logging.getLogger("gmqtt").setLevel(logging.ERROR)
ID_RE = re.compile(r"^[a-z0-9-]{1,32}$")


def check_id(what: str, value: str) -> str:
    """Table and board ids go into topics: lowercase letters, digits and '-', 1 to 32 long."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise UserError("%s id %r is not allowed: use 1-32 of a-z, 0-9 and '-'" % (what, value))
    return value


def check_ca(path: str | None) -> str | None:
    """--tls-ca names a file that exists (checked before anything connects)."""
    if path is not None and not os.path.isfile(path):
        raise UserError("--tls-ca %s: no such file (the PEM certificate of the CA that signed the broker's)" % path)
    return path


def topic(table: str, board: str, leaf: str) -> str:
    return "%s/%s/%s/%s" % (ROOT, table, board, leaf)


def parse_url(url: str) -> tuple[str, int, bool, str | None, str | None]:
    """mqtt://[user:pass@]host[:port] (or mqtts:// for TLS) -> (host, port, tls, user, password)."""
    u = urlsplit(url if "://" in url else "mqtt://" + url)
    if u.scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
        raise UserError("MQTT url %r: scheme must be mqtt:// or mqtts://" % url)
    tls = u.scheme in ("mqtts", "ssl")
    if not u.hostname:
        raise UserError("MQTT url %r has no host (e.g. mqtt://127.0.0.1:1883)" % url)
    try:
        port = u.port or (8883 if tls else 1883)
    except ValueError:
        raise UserError("MQTT url %r: port is not a number" % url)
    user = unquote(u.username) if u.username else None
    password = unquote(u.password) if u.password else None
    return u.hostname, port, tls, user, password


class Refused(Exception):
    """The broker refused the login or a subscription; str() says which."""


class _Client(gmqtt.Client):
    """gmqtt with what the transport needs at 100 tables left to it:
    - when to reconnect: the keeper's backoff and link states;
    - a QoS 1 message beyond the broker's receive maximum (Mosquitto's is 20): it waits in an
      outbox, sent as acknowledgements come, instead of raising; a waiting one that a newer one
      makes pointless (the same LED's command, a board's cumulative evack, a retained state on
      the same topic) gives its place up to it (counted `superseded`);
    - what a broker that kept no session of ours will never acknowledge: gmqtt drops it but keeps
      its packet id (a few broker restarts would use them all up); here the id is freed and the
      message goes again unless it is stale by then;
    - the packets of every message, built and read here (a PUBLISH out; a PUBLISH in, read from the
      socket's data, and its PUBACK): gmqtt's general path for them cost 8 us out and 9 us in per
      message, ours 4 and 1.5 (docs/bridge.md, "MQTT client"). Anything else (properties on what
      comes in, QoS 2, CONNECT, SUBSCRIBE, the session's resend) stays gmqtt's.
    """

    def __init__(self, client_id: str, counters: dict[str, int], **kw):
        super().__init__(client_id, **kw)
        self.counters = counters
        self.sent: dict[int, list] = {}  # packet id -> message, until the broker acknowledges it
        self.outbox: collections.deque = collections.deque()  # messages waiting for a packet id
        self._waiting: dict[tuple, list] = {}  # key -> the waiting message that holds it
        self._dead = 0  # superseded messages still in the outbox (skipped when their turn comes)
        self._headers: dict[str, bytes] = {}  # topic -> its length-prefixed UTF-8 (a PUBLISH's start)
        self.why: str | None = None  # why the last connection ended, if known
        h = self._package_handler
        self._gmqtt_publish_in = h._handle_publish_packet
        h._handle_publish_packet = self._publish_in  # found before the class's (gmqtt looks it up by name)
        self.reading = True  # False: flow control holds the socket unread (the broker queues for us)

    def set_reading(self, on: bool) -> None:
        """Flow control (transport.base, QUEUE_HIGH): stop or go on reading the broker's socket."""
        self.reading = on
        conn = self._connection
        if conn is not None and not conn.is_closing():
            if on:
                conn._transport.resume_reading()
            else:
                conn._transport.pause_reading()

    async def reconnect(self, delay=False):  # called by gmqtt when a link drops: the keeper decides
        pass

    async def _create_connection(self, *args, **kw):
        conn = await super()._create_connection(*args, **kw)
        self.why = None
        proto = conn._protocol
        closed = proto.connection_lost

        def connection_lost(exc):  # why it ended, before gmqtt's bookkeeping writes over it
            silent = time.monotonic() - conn._last_data_in
            if silent >= 2 * conn.keepalive:
                self.why = "the broker went silent for %d s" % silent
            elif exc is not None:
                self.why = str(exc) or type(exc).__name__
            closed(exc)

        proto.connection_lost = connection_lost
        gmqtt_read = proto._read_packet
        proto._read_packet = lambda data: self._read(conn, data, gmqtt_read)  # found before the class's
        conn._transport.max_size = READ_SIZE  # a read at a time between the pages' turns
        sock = conn._transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        conn._transport = proto._transport = _Gather(conn._transport, asyncio.get_running_loop())
        return conn

    # --- out ---------------------------------------------------------------------------------

    def send(self, topic: str, payload: bytes, qos: int, retain: bool, expiry: float | None, key=None) -> None:
        """Publish now, or (QoS 1, no packet id free) as soon as the broker acknowledges an earlier one.
        key: what a newer waiting message supersedes an older one by (COMMAND: read it off the frame)."""
        msg = [topic, payload, qos, retain, None if expiry is None else time.monotonic() + expiry, key]
        # In order behind those already waiting; kept while the link is down (and sent after it is back).
        if qos and self.outbox or not self.is_connected or not self._try(msg):
            self._wait(msg)

    def _wait(self, msg: list) -> None:
        key = msg[5]
        if key is COMMAND:
            key = msg[5] = _command_key(msg[0], msg[1])
        if key is not None:
            old = self._waiting.get(key)
            if old is not None:  # its newer self goes at the end instead: order (and msgids) stay rising
                old[1] = None
                self._dead += 1
                self.counters["superseded"] += 1
            self._waiting[key] = msg
        out = self.outbox
        if len(out) - self._dead >= OUTBOX_MAX:
            while out[0][1] is None:
                out.popleft()
                self._dead -= 1
            self._gone(out.popleft())
            self.counters["dropped-inflight"] += 1
        elif self._dead > 1000 and self._dead * 2 > len(out):  # mostly superseded: keep it short
            self.outbox = collections.deque(m for m in out if m[1] is not None)
            self._dead = 0
        self.outbox.append(msg)

    def _gone(self, msg: list) -> None:
        if msg[5] is not None and self._waiting.get(msg[5]) is msg:
            del self._waiting[msg[5]]

    def _try(self, msg: list) -> bool:
        topic, payload, qos, retain, deadline, _key = msg
        v5 = self._connection_state.protocol_version == MQTTv50
        props = b""
        if deadline is not None:
            left = int(deadline - time.monotonic() + 0.999)
            if left <= 0:
                self.counters["expired"] = self.counters.get("expired", 0) + 1
                return True  # stale: gone, as the broker would have dropped it
            if v5:
                props = b"\x05\x02" + left.to_bytes(4, "big")  # message expiry interval (s)
        elif v5:
            props = b"\x00"
        head = self._headers.get(topic) or self._header(topic)
        if qos:
            try:
                mid = self._package_handler.id_generator.next_id()
            except OverflowError:  # the broker's receive maximum is reached
                return False
            body = head + mid.to_bytes(2, "big") + props + payload
        else:
            body = head + props + payload
        packet = _fixed_header(0x30 | qos << 1 | bool(retain), len(body)) + body
        self._connection.send_package(packet)
        if qos:
            self.sent[mid] = msg
            self._persistent_storage.push_message(mid, packet)  # resent as is on a resumed session
        return True

    def _header(self, topic: str) -> bytes:
        if len(self._headers) >= TOPICS_KNOWN:
            self._headers.clear()
        t = topic.encode()
        head = self._headers[topic] = len(t).to_bytes(2, "big") + t
        return head

    def publish0(self, topic: str, payload: bytes, retain: bool) -> bool:
        """A QoS 0 PUBLISH now (nothing to wait for, nothing kept); False if the link is down."""
        if not self.is_connected:
            return False
        body = (self._headers.get(topic) or self._header(topic)) + (
            b"\x00" if self._connection_state.protocol_version == MQTTv50 else b"") + payload
        self._connection.send_package(_fixed_header(0x30 | bool(retain), len(body)) + body)
        return True

    def drain(self) -> None:
        """Send what waits, as far as the broker's receive maximum allows."""
        out = self.outbox
        while out and self.is_connected:
            m = out[0]
            if m[1] is None:
                out.popleft()
                self._dead -= 1
                continue
            if not self._try(m):
                break
            out.popleft()
            self._gone(m)

    def _remove_message_from_queue(self, mid):  # the broker acknowledged mid
        super()._remove_message_from_queue(mid)
        if self.sent.pop(mid, None) is not None and self.outbox:
            self.drain()

    def _clear_resend_qos_queue(self):  # the broker has no session of ours: it acknowledges nothing sent before
        super()._clear_resend_qos_queue()
        gen = self._package_handler.id_generator
        for mid in self.sent:
            gen.free_id(mid)
        again = []
        for m in self.sent.values():  # oldest first, before what waited, unless a newer one waits
            if m[5] is COMMAND:
                m[5] = _command_key(m[0], m[1])
            if m[5] is not None and m[5] in self._waiting:
                self.counters["superseded"] += 1
                continue
            if m[5] is not None:
                self._waiting[m[5]] = m
            again.append(m)
        self.outbox.extendleft(reversed(again))
        self.sent.clear()

    # --- in ----------------------------------------------------------------------------------

    def _read(self, conn, data: bytes, gmqtt_read) -> int:
        """gmqtt's _read_packet (cut every whole packet out of what was read; how much that was, -1 if
        malformed), handing a QoS 0 or 1 PUBLISH straight to _publish_in rather than through gmqtt's
        package dispatch; every other packet goes that way as before."""
        if self._package_handler.current_connection is not conn:
            return gmqtt_read(data)  # a connection already replaced: gmqtt drops what it says
        conn._last_data_in = time.monotonic()
        n, i = len(data), 0
        while n - i >= 2:
            j, size, mult = i + 1, 0, 1
            while True:  # the remaining length: MQTT's variable byte integer
                if j >= n:
                    return i
                b = data[j]
                j += 1
                size += (b & 0x7F) * mult
                if not b & 0x80:
                    break
                mult *= 128
                if mult > 2097152:
                    return -1
            end = j + size
            if end > n:
                return i
            cmd = data[i]
            if cmd & 0xF4 == 0x30:  # PUBLISH, QoS 0 or 1 (dup and retain either way)
                try:
                    self._publish_in(cmd, data[j:end])
                except Exception:
                    logging.getLogger("gmqtt").exception("[MqttPackageHandler] error handling package")
            else:
                conn.put_package(Package(cmd, data[j:end]))
            i = end
        return i

    def _publish_in(self, cmd: int, raw: bytes) -> None:
        """A PUBLISH from the broker: a QoS 0 or 1 one without properties (every board frame) is cut here,
        and a QoS 1 one acknowledged at once; anything else goes through gmqtt as before."""
        qos = cmd >> 1 & 3
        end = 2 + (raw[0] << 8 | raw[1]) if len(raw) > 2 else 0  # the topic's end; the packet id follows (QoS 1)
        props = end + 2 * qos  # MQTT 5: where the property list starts
        start = props + 1 if self._connection_state.protocol_version == MQTTv50 else props
        # a topic, and (MQTT 5) an empty property list; else (a topic alias, say) gmqtt reads it
        if qos > 1 or end <= 2 or len(raw) < start or (start > props and raw[props]):
            return self._gmqtt_publish_in(cmd, raw)
        try:
            name = raw[2:end].decode()
        except UnicodeDecodeError:
            return self._gmqtt_publish_in(cmd, raw)
        if qos:
            self._connection.send_package(b"\x40\x02" + raw[end:end + 2])  # PUBACK (MQTT 5: success, no properties)
        self._package_handler.on_message(name, raw[start:], qos, _NO_PROPERTIES)

COMMAND = object()  # send(key=COMMAND): a board command, superseded by the next for the same LED or evack
_NO_PROPERTIES: dict = {}


def _command_key(topic: str, frame: bytes) -> tuple | None:
    """What makes a waiting board command pointless: a newer LED command for the same LED, a newer
    evack (cumulative); nothing else (config, ping) is ever superseded."""
    if frame.startswith(b"led "):
        parts = frame.split(b" ", 4)
        return (topic, parts[3]) if len(parts) == 5 else None
    if frame.startswith(b"evack "):
        return (topic, b"evack")
    return None


def _fixed_header(first: int, n: int) -> bytes:
    """A packet's first byte and its remaining length (MQTT's variable byte integer)."""
    if n < 128:
        return bytes((first, n))
    out = bytearray((first,))
    while True:
        n, d = divmod(n, 128)
        out.append(d | (0x80 if n else 0))
        if not n:
            return bytes(out)


class _Gather:
    """A connection's writes within one loop turn leave in one send: a burst's PUBACKs, a batch's LED
    commands and evacks. gmqtt writes each packet as it goes, a system call each, which at 100 tables
    was most of what it cost beyond the hand-written client it replaced (docs/bridge.md, "MQTT client")."""

    def __init__(self, tr: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._tr, self._loop = tr, loop
        self._out: list = []
        self._due = False

    def write(self, data) -> None:
        self._out.append(data)
        if not self._due:
            self._due = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._due = False
        out, self._out = self._out, []
        if out and not self._tr.is_closing():
            self._tr.write(b"".join(out))

    def close(self) -> None:
        self.flush()  # the DISCONNECT (and what went before it) still leaves
        self._tr.close()

    def is_closing(self) -> bool:
        return self._tr.is_closing()

    def __getattr__(self, name):
        return getattr(self._tr, name)


class MqttTransport(Transport):
    """Boards on an MQTT broker. table=None listens to every table on the broker.

    For other parts of the bridge on the same connection (Home Assistant discovery):
    will = (topic, payload, retain) set before start() is the connection's last will;
    on_connected callables run after every (re)connect and subscribe; subscribe_extra()
    and publish_raw() reach topics outside battlement/.
    """

    evack_delay = EVACK_EVERY

    def __init__(
        self,
        url: str,
        table: str | None = None,
        username: str | None = None,
        password: str | None = None,
        tls: bool = False,
        tls_ca: str | None = None,
        allow: list[str] | None = None,
        client_id: str | None = None,
        keepalive: int = KEEPALIVE,
    ):
        super().__init__(allow)
        self.url = url
        self.host, self.port, url_tls, url_user, url_pass = parse_url(url)
        self.tls = tls or url_tls or bool(tls_ca)
        self.tls_ca = check_ca(tls_ca)
        self.username = username or url_user
        self.password = password or url_pass
        self.table = check_id("table", table) if table is not None else None
        self.client_id = client_id or "battlement-host-" + uuid.uuid4().hex[:12]
        self.keepalive = keepalive
        self.connects = 0
        self.version: str | None = None  # "MQTT 5" or "MQTT 3.1.1" once connected
        self.will: tuple[str, bytes, bool] | None = None
        self.on_connected: list[Callable[[], None]] = []
        self.links[url] = "connecting"
        self.counters.setdefault("dropped-inflight", 0)
        self.counters.setdefault("superseded", 0)
        self.counters.setdefault("handler-errors", 0)
        self._client: _Client | None = None
        self._up = False  # connected and subscribed: commands go out
        self._keeper: asyncio.Task | None = None
        self._lost: asyncio.Future | None = None
        self._suback: asyncio.Future | None = None
        self._extra: dict[str, list[Callable[[str, bytes], None]]] = {}
        self._extra_under_root = False  # an extra filter that may match battlement/ topics too
        self._matched: dict[str, list] = {}  # topic -> extra callbacks it matches
        self._topics: dict[str, tuple[str, str, str] | None] = {}  # topic -> (table, board, leaf), None if bad
        self._settled = asyncio.Event()  # the first connection attempt is over, one way or another

    # --- for the rest of the bridge -------------------------------------------------------

    def subscribe_extra(self, topic_filter: str, callback: Callable[[str, bytes], None]) -> None:
        """callback(topic, payload) for every message on topic_filter, subscribed (QoS 1) on every connect."""
        self._extra.setdefault(topic_filter, []).append(callback)
        self._matched.clear()
        if topic_filter.split("/")[0] in (ROOT, "+", "#"):
            self._extra_under_root = True
        if self._up and self._client is not None:
            self._client.subscribe(gmqtt.Subscription(topic_filter, qos=1))

    def publish_raw(self, topic_name: str, payload: bytes, qos: int = 0, retain: bool = False) -> bool:
        """Publish outside the boards' protocol (no expiry). QoS 1 is kept across a reconnect; False: not sent now."""
        c = self._client
        if c is None or not (qos or self._up):
            return False
        if not qos:
            return c.publish0(topic_name, payload, retain)
        # A retained state supersedes its own waiting predecessor: only the last one is ever read.
        c.send(topic_name, payload, qos, retain, None, (topic_name,) if retain else None)
        return self._up

    # --- the connection ---------------------------------------------------------------------

    async def start(self) -> None:
        await super().start()
        will = None
        if self.will is not None:
            wt, wp, wr = self.will
            will = gmqtt.Message(wt, wp, qos=1, retain=wr)
        # MQTT 5: the session outlives a dropped link (the clean-start flag is set per attempt, _attempt).
        self._client = _Client(self.client_id, self.counters, will_message=will,
                               session_expiry_interval=SESSION_EXPIRY, receive_maximum=RECEIVE_MAXIMUM)
        self._client.on_message = self._from_broker
        self._client.on_disconnect = lambda client, packet, exc=None: self._link_lost("closed by the broker")
        self._client.on_subscribe = self._subscribed
        if self.username is not None:
            self._client.set_auth_credentials(self.username, self.password)
        self._keeper = asyncio.create_task(self._keep(self._client))
        # Boards publish their hello once: be subscribed before the caller starts anything else.
        try:
            await asyncio.wait_for(self._settled.wait(), FIRST_CONNECT)
        except TimeoutError:
            pass

    async def stop(self) -> None:
        await super().stop()  # the last evacks are written here, so they leave with the DISCONNECT
        c, self._client = self._client, None
        self._up = False
        if self._keeper is not None:
            self._keeper.cancel()
            try:
                await self._keeper
            except asyncio.CancelledError:
                pass
            self._keeper = None
        if c is not None:
            await _hang_up(c, session_expiry_interval=0)  # we are not coming back: no session to keep
        self.links[self.url] = "stopped"

    async def _keep(self, c: _Client) -> None:
        """Connect and subscribe; when the link drops, again (1 s doubling to 5 s between failures)."""
        delay = RECONNECT_MIN
        version = MQTTv50
        while True:
            try:
                lost = await self._attempt(c, version)
            except _Downgrade:
                version = MQTTv311  # the broker speaks 3.1.1 only: at once, in that
                self._note("mqtt %s refuses MQTT 5: using MQTT 3.1.1" % self.url)
                continue
            except (Refused, MQTTConnectError) as e:
                self._link_state("refused: %s" % _refusal(e))
            except ssl.SSLCertVerificationError as e:
                self._link_state("refused: the broker's TLS certificate is not trusted (%s); if a private CA "
                                 "signed it, give --tls-ca with that CA's PEM file, retrying" % e.verify_message)
            except (OSError, TimeoutError, ConnectionError) as e:
                self._link_state("cannot reach %s:%d, retrying (%s)" % (self.host, self.port, e or type(e).__name__))
            else:
                self._up = True
                # Flow control holds across a reconnect (not before: CONNACK and SUBACK must be read).
                c.set_reading(not self.paused())
                self._link_state("connected")
                self._settled.set()  # from now on no board message is missed
                if self.connects > 1:  # what boards sent while we were away went nowhere: resync them
                    self._resync(list(self._unsynced), None)
                for fn in list(self.on_connected):
                    try:
                        fn()
                    except Exception as e:  # noqa: BLE001 -- a hook's failure must not cost the boards their link
                        self._count("hook-errors")
                        self._note("mqtt %s: after connecting, %s failed: %s: %s"
                                   % (self.url, getattr(fn, "__qualname__", fn), type(e).__name__, e))
                c.drain()
                delay = RECONNECT_MIN
                reason = await lost
                self._up = False
                # From now on, until each board's next hello, its events are not taken as new: the
                # ones sent while we are away are lost on the way, and the first to come back would
                # otherwise jump ahead of them.
                self._unsynced.update(self._route)
                self._link_state("disconnected: %s" % reason)
                await _hang_up(c)
                continue  # straight back: a broker restart should cost as little as possible
            await _hang_up(c)
            self._settled.set()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX)

    async def _attempt(self, c: _Client, version: int) -> asyncio.Future:
        """One connection: CONNECT, SUBSCRIBE. Returns a future that resolves (to the reason) when it is lost."""
        loop = asyncio.get_running_loop()
        lost = self._lost = loop.create_future()
        # MQTT 5: pick the session up again if the broker still has it (a fresh client id has none);
        # 3.1.1 has no expiry, so a kept session would stay at the broker for ever: clean.
        c._clean_session = version < MQTTv50
        ctx = ssl.create_default_context(cafile=self.tls_ca) if self.tls else False
        await self._answer(c.connect(self.host, self.port, ssl=ctx, keepalive=self.keepalive, version=version),
                           lost, "CONNECT", c, version)
        self.version = VERSIONS.get(version, str(version))
        sub = "%s/%s/+/" % (ROOT, self.table or "+")
        filters = [sub + "up", sub + "status", *self._extra]
        self._suback = loop.create_future()
        c.subscriptions = []  # gmqtt matches SUBACKs against this list: this connection's filters only
        c.subscribe([gmqtt.Subscription(f, qos=1) for f in filters])
        granted = await self._answer(self._suback, lost, "SUBSCRIBE", c, version)
        if any(q >= 0x80 for q in granted[:2]):
            raise Refused("subscription to %s* refused (check the broker's ACL)" % sub)
        for f, q in zip(filters[2:], granted[2:]):
            if q >= 0x80:  # the boards still play; only what came with this filter is missing
                self._note("mqtt %s: subscription to %s refused (check the broker's ACL)" % (self.url, f))
        return lost

    async def _answer(self, what, lost: asyncio.Future, name: str, c: _Client, version: int):
        """The result of what (CONNECT or SUBSCRIBE), unless the link is lost or the broker is silent first."""
        task = asyncio.ensure_future(what)
        try:
            done, _ = await asyncio.wait({task, lost}, timeout=ANSWER_WITHIN, return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                return task.result()
            if lost.done():
                if version == MQTTv50 and c._connection_state.protocol_version != version:
                    raise _Downgrade()  # gmqtt saw "unacceptable protocol version" to our MQTT 5 CONNECT
                raise ConnectionError("%s before the broker answered %s" % (lost.result(), name))
            raise TimeoutError("no answer to %s within %d s" % (name, ANSWER_WITHIN))
        finally:
            if not task.done():
                task.cancel()

    def _subscribed(self, client, mid, granted, properties) -> None:
        fut = self._suback
        if fut is not None and not fut.done():
            fut.set_result(list(granted))

    def _link_lost(self, reason: str) -> None:
        c = self._client
        if c is not None and getattr(c, "why", None):
            reason = str(c.why)
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(reason)

    def _link_state(self, state: str) -> None:
        if state == "connected":
            self.connects += 1
        if state.startswith("disconnected") and self.links.get(self.url, "").startswith("refused"):
            return  # the refusal is the news; the disconnect that follows it is not
        if self.links.get(self.url) != state:
            self.links[self.url] = state
            self._note("mqtt %s %s%s" % (self.url, state, " (%s)" % self.version if state == "connected" else ""))

    # --- what arrives ---------------------------------------------------------------------------

    def _from_broker(self, client, name: str, payload: bytes, qos, properties) -> None:
        try:
            ours = name.startswith(ROOT + "/")
            if self._extra and (self._extra_under_root or not ours) and self._to_extra(name, payload) and not ours:
                return
            self._on_message(name, payload)
        except Exception:  # noqa: BLE001 -- one message must not cost the rest of the read
            self.counters["handler-errors"] += 1

    def _to_extra(self, name: str, payload: bytes) -> bool:
        try:
            callbacks = self._matched[name]
        except KeyError:
            if len(self._matched) >= TOPICS_MATCHED:
                self._matched.clear()
            callbacks = self._matched[name] = [cb for f, cbs in self._extra.items() if topic_matches(f, name)
                                               for cb in cbs]
        for cb in callbacks:
            try:
                cb(name, payload)
            except Exception as e:  # noqa: BLE001 -- a hook's failure is counted, the link goes on
                self._count("hook-errors")
                self._note("mqtt %s: handling %s failed: %s: %s" % (self.url, name, type(e).__name__, e))
        return bool(callbacks)

    def _on_message(self, name: str, payload: bytes) -> None:
        try:
            where = self._topics[name]
        except KeyError:
            where = _parse_topic(name)
            if len(self._topics) >= TOPICS_KNOWN:
                self._topics.clear()
            self._topics[name] = where
        if where is None:
            self._reject("topic", name, "ids must be 1-32 of a-z, 0-9, '-'")
            return
        table, board, leaf = where
        if leaf == "status":
            if payload in (b"online", b"offline"):
                self._set_online((table, board), payload == b"online")
                self._note("board %s/%s is %s" % (table, board, payload.decode()))
                if payload == b"online" and (table, board) not in self._route and self._loop is not None:
                    # Its hello normally follows; if it went out before we subscribed, ask for it.
                    self._loop.call_later(PING_EVERY, self._hello_due, table, board)
            else:
                self._reject("syntax", name, "status must be online or offline")
            return
        if len(payload) > MAX_FRAME:
            self._reject("length", name, "%d bytes" % len(payload))
            return
        self._handle_line(payload, table, table, board)

    def _stop_reading(self) -> None:
        if self._client is not None:
            self._client.set_reading(False)

    def _start_reading(self) -> None:
        if self._client is not None:
            self._client.set_reading(True)

    def _hello_due(self, table: str, board: str) -> None:
        if self._client is not None and self.online.get((table, board)) and (table, board) not in self._route:
            self._ask_hello(board, None, table, table)

    def _link_for(self, board: str, table: str | None):
        table = table or self.table
        if (table, board) in self._route:  # it said hello on that table: its ids are known good
            return table
        if table is None:
            on = sorted(t for t, b in self.boards if b == board)
            if len(on) != 1:  # never heard, or a board id that several tables use
                raise NoRoute("board %s has %s on %s; give the command a table" % (
                    board, "said hello on tables %s" % ", ".join(on) if on else "not said hello", self.url))
            table = on[0]
        check_id("board", board)
        return check_id("table", table)  # type: ignore[arg-type]

    def _write(self, link, board: str, frame: bytes) -> None:
        if self._client is None:
            self._count("unsent")
            return
        # QoS 1, kept while the broker is away and sent after reconnecting, unless it went stale first
        # (MQTT 5: the broker drops it too once it has waited COMMAND_EXPIRY for the board).
        self._client.send(topic(link, board, "down"), frame, 1, False, COMMAND_EXPIRY, COMMAND)


class _Downgrade(Exception):
    """The broker refused MQTT 5 with "unacceptable protocol version": try 3.1.1."""


def _refusal(e: Exception) -> str:
    """gmqtt's 'code 4 (Connection Refused: bad user name or password)' -> 'bad user name or password'."""
    if isinstance(e, MQTTConnectError):
        return e.message.replace("Connection Refused: ", "").lower()
    return str(e)


async def _hang_up(c: _Client, **properties) -> None:
    """Close this connection (DISCONNECT if it is still up), never waiting long for the broker."""
    conn = c._connection
    if conn is None or conn.is_closing():
        return
    try:
        if c.is_connected:
            await asyncio.wait_for(c.disconnect(**properties), 2)
        else:
            await asyncio.wait_for(conn.close(), 2)
    except (OSError, TimeoutError, ConnectionError):
        pass


def topic_matches(filter: str, name: str) -> bool:
    """MQTT filter matching: '+' is one level, '#' the rest (and the level above it)."""
    f, n = filter.split("/"), name.split("/")
    for i, part in enumerate(f):
        if part == "#":
            return True
        if i >= len(n) or (part != "+" and part != n[i]):
            return False
    return len(f) == len(n)


def _parse_topic(name: str) -> tuple[str, str, str] | None:
    parts = name.split("/")
    if len(parts) != 4 or parts[0] != ROOT or not ID_RE.match(parts[1]) or not ID_RE.match(parts[2]):
        return None
    return parts[1], parts[2], parts[3]
