"""MQTT transport: many tables, many boards, one broker.

Topics (docs/protocol.md, "MQTT"):
    battlement/<table>/<board>/status   retained "online"/"offline" (board's last will: "offline"), or from a
                                        signing board a status frame signed for its boot (transport/boots.py)
    battlement/<table>/<board>/up       board -> host frames, one per message, events QoS 1
    battlement/<table>/<board>/down     host -> board frames (led/config/ping/evack), QoS 1

The connection is gmqtt (native asyncio, MQTT 5; chosen by measurement, docs/bridge.md "MQTT
client"), on the bridge's loop: no network thread to fight over the GIL. Messages go straight to
the shared intake (transport.base), which decodes, dedupes and queues them; a keeper task connects,
subscribes, and reconnects (1 s doubling to 5 s) whenever the link drops. MQTT 5 where the broker
speaks it: the broker keeps our session (subscriptions, what boards send meanwhile, commands not yet
acknowledged) across a dropped link for SESSION_EXPIRY, and commands expire after COMMAND_EXPIRY so a
stale LED pattern is never shown late; a broker that refuses 5 gets 3.1.1 with a clean session.

The package, by job (each module's docstring says more):
    names    topics, logins, the broker's URL, and the checks on ids (no connection needed)
    codec    a packet's fixed header, writes gathered per loop turn, what supersedes a waiting command
    client   _Client: gmqtt with flow control, the QoS 1 outbox, and the packets built and read here
    keeper   Keeper: the connection (connect, subscribe, reconnect, MQTT 5 session, link states)
    here     MqttTransport on top of it: the boards' topics and commands, extra subscriptions

MqttTransport is defined here, not in a module of its own, so that what is set on this module is what
it reads: a test shortens COMMAND_EXPIRY by setting it here. The other modules' tunables are theirs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import gmqtt

from battlement.link import wire
from battlement.link.messages import Hello, from_frame
from battlement.link.transport.base import NoRoute
from battlement.link.transport.mqtt.client import _Client as _Client
from battlement.link.transport.mqtt.codec import COMMAND
from battlement.link.transport.mqtt.codec import _command_key as _command_key
from battlement.link.transport.mqtt.keeper import KEEPALIVE, Keeper, Refused
from battlement.link.transport.mqtt.names import (
    ROOT,
    SEP,
    TOPICS_KNOWN,
    check_ca,
    check_id,
    login,
    parse_url,
    topic,
    topic_matches,
)
from battlement.link.transport.mqtt.names import _parse_topic as _parse_topic
from battlement.link.wire import MAX_FRAME

COMMAND_EXPIRY = 10  # MQTT 5: seconds a command may wait at the broker before it is dropped as stale
TOPICS_MATCHED = 1000  # topics remembered per extra subscription lookup
# Each evack is a QoS 1 message, and Mosquitto lets 20 be unacknowledged: one per board every 10 ms
# (serial's pace) was 10,000 a second at 100 tables, nearly all superseded while they waited. A board
# resends only after a second without one.
EVACK_EVERY = 0.05
_UNDER_ROOT = ROOT + "/"

# What the rest of the host imports from here (and, with "as" above, the private names tests reach for).
__all__ = [
    "SEP", "MqttTransport", "Refused", "check_ca", "check_id", "login", "parse_url", "topic", "topic_matches",
]


class MqttTransport(Keeper):
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
        super().__init__(url, table, username, password, tls, tls_ca, allow, client_id, keepalive)
        self.counters.setdefault("handler-errors", 0)
        self._extra: dict[str, list[Callable[[str, bytes], None]]] = {}
        self._extra_under_root = False  # an extra filter that may match battlement/ topics too
        self._matched: dict[str, list] = {}  # topic -> extra callbacks it matches
        self._topics: dict[str, tuple[str, str, str] | None] = {}  # topic -> (table, board, leaf), None if bad
        self._down: dict[tuple[str, str], str] = {}  # (table, board) -> its down topic
        self._boards_up: dict[str, tuple[str, str]] = {}  # a served board's up topic -> (table, board)

    # --- for the rest of the bridge -------------------------------------------------------

    def subscribe_extra(self, topic_filter: str, callback: Callable[[str, bytes], None]) -> None:
        """callback(topic, payload) for every message on topic_filter, subscribed (QoS 1) on every connect."""
        self._extra.setdefault(topic_filter, []).append(callback)
        self._matched.clear()
        self._boards_up.clear()  # the filter may take some of them
        if topic_filter.split("/")[0] in (ROOT, "+", "#"):
            self._extra_under_root = True
        self._subscribe_now(topic_filter)

    def _subscribe_now(self, topic_filter: str) -> None:
        """A filter added while the link is up is subscribed to at once; while every packet id is in flight
        (a burst of commands fills the broker's receive maximum), again a moment later, as they come back."""
        c = self._client
        if c is None or not self._up:
            return  # the next connect subscribes to it with the rest
        try:
            c.subscribe(gmqtt.Subscription(topic_filter, qos=1))
        except OverflowError:  # gmqtt listed it before finding no id: listed again on the next try
            c.subscriptions = [sub for sub in c.subscriptions if sub.topic != topic_filter]
            asyncio.get_running_loop().call_later(0.05, self._subscribe_now, topic_filter)

    def publish_raw(self, topic_name: str, payload: bytes, qos: int = 0, retain: bool = False,
                    urgent: bool = False) -> bool:
        """Publish outside the boards' protocol (no expiry). QoS 1 is kept across a reconnect; False: not sent now.
        urgent (QoS 1): before the board commands waiting for the broker (a venue's messages)."""
        c = self._client
        if c is None or not (qos or self._up):
            return False
        if not qos:
            return c.publish0(topic_name, payload, retain)
        # A retained state supersedes its own waiting predecessor: only the last one is ever read.
        c.send(topic_name, payload, qos, retain, None, (topic_name,) if retain else None, urgent)
        return self._up

    def publish0_all(self, messages: list[tuple[str, bytes]]) -> bool:
        """QoS 0 messages (topic, payload), in order and in one write (publish_raw's qos=0 for each); False: not sent."""
        c = self._client
        if c is None or not self._up:
            return False
        return c.publish0_all(messages)

    # --- what arrives ---------------------------------------------------------------------------

    def _from_broker_all(self, messages: list) -> None:
        """A read's messages, (topic, payload, qos) in order (the client's on_messages): a served board's up
        frame straight to the intake, found by its topic alone, the rest as _from_broker takes each."""
        up = self._boards_up
        serves = self.serves
        handle = self._handle_line
        for name, payload, qos in messages:
            where = up.get(name)
            if where is None or serves is not None and where[0] not in serves or len(payload) > MAX_FRAME:
                self._from_broker(None, name, payload, qos, None)
                continue
            try:
                handle(payload, where[0], where[0], where[1])
            except Exception:  # noqa: BLE001 -- one message must not cost the rest of the read
                self.counters["handler-errors"] += 1

    def _from_broker(self, client, name: str, payload: bytes, qos, properties) -> None:
        try:
            ours = name.startswith(_UNDER_ROOT)
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
        if self.serves is not None and table not in self.serves:
            self._elsewhere(table, board, leaf, payload)
            return
        if leaf == "status":  # plain words from an unsigned board, a signed status frame from a signing one
            self._on_status(table, board, payload, name)
            return
        if len(payload) > MAX_FRAME:
            self._reject("length", name, "%d bytes" % len(payload))
            return
        if leaf == "up" and not (self._extra and self._extra_under_root):  # no extra filter may take it
            if len(self._boards_up) >= TOPICS_KNOWN:
                self._boards_up.clear()
            self._boards_up[name] = (table, board)
        self._handle_line(payload, table, table, board)

    def _elsewhere(self, table: str, board: str, leaf: str, payload: bytes) -> None:
        """A message of a table this bridge does not serve (another bridge's, on a broker they share): never
        taken, asked for or answered, for an answer would acknowledge events that no journal here holds.
        Its status (and a hello, where its frames come too: Keeper._board_filters) only names the board among
        the unknown ones (board health)."""
        self._count("other-table")
        key = (table, board)
        try:
            if leaf == "status":
                words = payload in (b"online", b"offline")
                up = payload == b"online" if words else wire.decode(payload)[1][3] == "online"
                if key in self.boards:
                    self._set_online(key, up)
                else:
                    if len(self.strangers) >= TOPICS_KNOWN:
                        self.strangers.clear()
                    self.strangers[key] = up
            elif leaf == "up" and payload.startswith(b"hello "):
                typ, fields = wire.decode(payload)
                msg = from_frame(typ, fields, table)
                if isinstance(msg, Hello) and msg.board == board:
                    self.boards[key] = msg
                    self._set_online(key, True)
        except (wire.WireError, IndexError):
            pass  # a stranger's bad frame is its own bridge's to refuse and count

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
        down = self._down.get((link, board))
        if down is None:
            if len(self._down) >= TOPICS_KNOWN:
                self._down.clear()
            down = self._down[(link, board)] = topic(link, board, "down")
        self._client.send(down, frame, 1, False, COMMAND_EXPIRY, COMMAND)

