"""The gmqtt client under MqttTransport (_Client): flow control, the QoS 1 outbox, and the packets of
every message built and read here instead of through gmqtt's general path.

The transport (the package's MqttTransport) decides what to send and where messages go, and the
keeper (keeper.Keeper) when to connect; this is the connection's own machinery at 100 tables: what
waits for the broker's receive maximum, what a newer message makes pointless, what a broker that kept
no session of ours will never acknowledge, and the cost per message (docs/bridge.md, "MQTT client").
"""

from __future__ import annotations

import asyncio
import collections
import logging
import socket
import time
from collections.abc import Callable

import gmqtt
from gmqtt.mqtt.constants import MQTTv50
from gmqtt.mqtt.package import Package

from battlement.link.transport.mqtt.codec import COMMAND, _command_key, _fixed_header, _Gather
from battlement.link.transport.mqtt.names import TOPICS_KNOWN

OUTBOX_MAX = 10_000  # QoS 1 messages waiting for a free packet id (the broker's receive maximum); oldest go first
# Bytes taken from the socket per read: gmqtt handles a whole read (asyncio's default, 256 KiB, about
# 2,700 frames) in one turn of the loop before a page request gets its own; 16 KiB is about 2 ms.
READ_SIZE = 16 * 1024
# The socket's receive buffer: what the kernel holds for us once flow control stops reading. Linux grows
# it up to tcp_rmem's maximum (often 32 MiB, half a minute of frames); fixed, what waits beyond it waits
# in the broker's queue for us, where a board's resend can take its place.
RECEIVE_BUFFER = 256 * 1024
PACKETS_KEPT = 4096  # QoS 0 PUBLISHes kept made (publish0_all), then forgotten at once
_NO_PROPERTIES: dict = {}  # the properties of a PUBLISH cut here (_publish_in): none


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
    - the packets of every message, built and read here (a PUBLISH out and the broker's PUBACK of it;
      a PUBLISH in, read from the socket's data, and its PUBACK): gmqtt's general path for them cost
      8 us out and 9 us in per message, ours 4 and 1.5 (docs/bridge.md, "MQTT client"). Anything else
      (properties on what comes in, QoS 2, CONNECT, SUBSCRIBE, the session's resend) stays gmqtt's.
    """

    def __init__(self, client_id: str, counters: dict[str, int], **kw):
        super().__init__(client_id, **kw)
        self.counters = counters
        self.sent: dict[int, list] = {}  # packet id -> message, until the broker acknowledges it
        self.outbox: collections.deque = collections.deque()  # messages waiting for a packet id
        self.urgent: collections.deque = collections.deque()  # ...and those that go before them (send)
        self._waiting: dict[tuple, list] = {}  # key -> the waiting message that holds it
        self._dead = 0  # superseded messages still in the outbox (skipped when their turn comes)
        self._headers: dict[str, bytes] = {}  # topic -> its length-prefixed UTF-8 (a PUBLISH's start)
        self._publish0s: dict[bool, dict] = {}  # MQTT 5 or not -> (topic, payload) -> its QoS 0 PUBLISH
        self.why: str | None = None  # why the last connection ended, if known
        h = self._package_handler
        self._gmqtt_publish_in = h._handle_publish_packet
        h._handle_publish_packet = self._publish_in  # found before the class's (gmqtt looks it up by name)
        # A read's plain PUBLISHes, [(topic, payload, qos)] in order, handed over at once (the transport's); None:
        # each to on_message as gmqtt would. One call a read instead of a chain of them a message.
        self.on_messages: Callable[[list], None] | None = None
        self._names: dict[bytes, str] = {}  # a PUBLISH's topic as read -> as text (decoded once)
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

    def send(self, topic: str, payload: bytes, qos: int, retain: bool, expiry: float | None, key=None,
             urgent: bool = False) -> None:
        """Publish now, or (QoS 1, no packet id free) as soon as the broker acknowledges an earlier one.
        key: what a newer waiting message supersedes an older one by (COMMAND: read it off the frame).
        urgent: ahead of the others waiting (in order among the urgent): a table's "ready" or result for
        the venue's hub waited behind the LED commands of 50 busy tables, up to a second."""
        msg = [topic, payload, qos, retain, None if expiry is None else time.monotonic() + expiry, key]
        if urgent and qos:  # another topic than the commands': MQTT keeps QoS 1 in order per topic only
            if self.urgent or not self.is_connected or not self._try(msg):
                self.urgent.append(msg)
            return
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
        self._write(packet)
        if qos:
            self.sent[mid] = msg
            self._persistent_storage.push_message(mid, packet)  # resent as is on a resumed session
        return True

    def _write(self, packet: bytes) -> None:
        """What gmqtt's send_package does with a packet (the time of the last write, for its keepalive; the
        write), with one clock read where it took two: two or three packets an event. The connection's
        transport is a _Gather (codec.py): what is written once it is closing is dropped at its flush."""
        conn = self._connection
        conn._last_data_out = time.monotonic()
        conn._transport.write(packet)

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
        self._write(_fixed_header(0x30 | bool(retain), len(body)) + body)
        return True

    def publish0_all(self, messages: list[tuple[str, bytes]]) -> bool:
        """A QoS 0 PUBLISH of each (topic, payload), not retained, in one write (a loop turn's Home Assistant
        events): the link and the clock looked at once, not once a message."""
        if not self.is_connected:
            return False
        v5 = self._connection_state.protocol_version == MQTTv50
        made = self._publish0s.get(v5)
        if made is None or len(made) >= PACKETS_KEPT:
            made = self._publish0s[v5] = {}
        self._write(b"".join([made.get(m) or self._publish0(made, v5, m) for m in messages]))
        return True

    def _publish0(self, made: dict, v5: bool, message: tuple[str, bytes]) -> bytes:
        """A QoS 0 PUBLISH of (topic, payload), kept in made: a table's events are the same few over and over."""
        topic, payload = message
        body = (self._headers.get(topic) or self._header(topic)) + (b"\x00" if v5 else b"") + payload
        packet = made[message] = _fixed_header(0x30, len(body)) + body
        return packet

    def drain(self) -> None:
        """Send what waits, as far as the broker's receive maximum allows: the urgent first."""
        urgent = self.urgent
        while urgent and self.is_connected:
            if not self._try(urgent[0]):
                return
            urgent.popleft()
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
        if self.sent.pop(mid, None) is not None and (self.outbox or self.urgent):
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
        malformed), handing the QoS 0 and 1 PUBLISHes without properties (every board frame) over together
        (on_messages) rather than through gmqtt's package dispatch; every other packet goes that way as
        before, in its place among them."""
        if self._package_handler.current_connection is not conn:
            return gmqtt_read(data)  # a connection already replaced: gmqtt drops what it says
        conn._last_data_in = time.monotonic()
        v5 = self._connection_state.protocol_version == MQTTv50
        names = self._names
        got: list = []  # (topic, payload, qos) of this read's plain PUBLISHes, not yet handed over
        n, i = len(data), 0
        while n - i >= 2:
            j, size, mult = i + 1, 0, 1
            while True:  # the remaining length: MQTT's variable byte integer
                if j >= n:
                    self._hand(got)
                    return i
                b = data[j]
                j += 1
                size += (b & 0x7F) * mult
                if not b & 0x80:
                    break
                mult *= 128
                if mult > 2097152:
                    self._hand(got)
                    return -1
            end = j + size
            if end > n:
                break
            cmd = data[i]
            i = end
            if cmd & 0xF4 == 0x30 and size > 2:  # PUBLISH, QoS 0 or 1 (dup and retain either way)
                top = j + 2 + (data[j] << 8 | data[j + 1])  # the topic's end; the packet id follows (QoS 1)
                start = top + (cmd & 2) + v5  # the payload's (MQTT 5: after an empty property list)
                if top > j + 2 and start <= end and not (v5 and data[start - 1]):  # a topic, no properties
                    topic = data[j + 2:top]
                    name = names.get(topic) or self._name(topic)
                    if name is not None:
                        if cmd & 2:
                            self._write(b"\x40\x02" + data[top:top + 2])  # PUBACK (MQTT 5: success, no properties)
                        got.append((name, data[start:end], cmd >> 1 & 1))
                        continue
            self._hand(got)
            if cmd & 0xF4 == 0x30 or cmd == 0x40 and size >= 2:
                try:
                    if cmd != 0x40:  # a PUBLISH the loop above left (a topic alias, properties): gmqtt's way
                        self._publish_in(cmd, data[j:end])
                    else:  # PUBACK of ours: what gmqtt does with one (its id free, the message done), undispatched
                        mid = data[j] << 8 | data[j + 1]
                        self._package_handler.id_generator.free_id(mid)
                        self._remove_message_from_queue(mid)
                except Exception:
                    logging.getLogger("gmqtt").exception("[MqttPackageHandler] error handling package")
            else:
                conn.put_package(Package(cmd, data[j:end]))
        self._hand(got)
        return i

    def _name(self, topic: bytes) -> str | None:
        """A topic as text (kept: a bridge hears the same few hundred), None if it is not UTF-8 (gmqtt judges it)."""
        try:
            name = topic.decode()
        except UnicodeDecodeError:
            return None
        if len(self._names) >= TOPICS_KNOWN:
            self._names.clear()
        self._names[topic] = name
        return name

    def _hand(self, got: list) -> None:
        """Hand the PUBLISHes read so far over (on_messages, else one by one as gmqtt would), and forget them."""
        if not got:
            return
        if self.on_messages is not None:
            try:
                self.on_messages(got)  # (which counts a message's failure and goes on with the rest)
            except Exception:
                logging.getLogger("gmqtt").exception("[MqttPackageHandler] error handling package")
        else:
            on_message = self._package_handler.on_message
            for name, payload, qos in got:
                try:
                    on_message(name, payload, qos, _NO_PROPERTIES)
                except Exception:
                    logging.getLogger("gmqtt").exception("[MqttPackageHandler] error handling package")
        got.clear()

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
            self._write(b"\x40\x02" + raw[end:end + 2])  # PUBACK (MQTT 5: success, no properties)
        self._package_handler.on_message(name, raw[start:], qos, _NO_PROPERTIES)
