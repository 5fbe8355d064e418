"""Keeping MqttTransport's connection to the broker: connect, subscribe, and when the link drops,
connect again; what the link's state is, in words, for people (links, notes).

Keeper is the half of MqttTransport (the package's own module) that owns the connection: the client
(client._Client), the keeper task that (re)connects with a backoff, the MQTT 5 session and the fall
back to 3.1.1, the last will and the hooks run after every connect, and flow control's reading on or
off. MqttTransport, on top of it, is what travels over the link: the boards' topics and commands,
and the extra subscriptions. It is a base class rather than an object of its own because the two
halves share the transport's state (links, counters, boards to resync) as one Transport.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import uuid
from collections.abc import Callable

import gmqtt
from gmqtt.mqtt.constants import MQTTv50, MQTTv311
from gmqtt.mqtt.handler import MQTTConnectError

from battlement.link.transport.base import Transport
from battlement.link.transport.mqtt.client import _Client
from battlement.link.transport.mqtt.names import ROOT, check_ca, check_id, parse_url

RECONNECT_MIN, RECONNECT_MAX = 1.0, 5.0  # seconds between connection attempts, doubling
FIRST_CONNECT = 5.0  # start() waits at most this long for the first attempt (subscribed, refused or unreachable)
ANSWER_WITHIN = 5.0  # seconds for the broker to answer CONNECT or SUBSCRIBE
KEEPALIVE = 15  # seconds; a broker silent for two of these is taken as gone
SESSION_EXPIRY = 120  # MQTT 5: seconds the broker keeps our session after the link drops
# MQTT 5: QoS 1 messages (the boards' events) the broker may have on their way to us unacknowledged;
# while flow control holds the socket unread, the rest wait in the broker's queue for us (Mosquitto's
# max_queued_messages) and what overflows it is dropped there, for the boards to resend: a backlog
# of a fraction of a second, not whatever the kernel's buffers hold (gmqtt's default is 65,535).
RECEIVE_MAXIMUM = 5000
VERSIONS = {MQTTv50: "MQTT 5", MQTTv311: "MQTT 3.1.1"}
# gmqtt logs every lost connection as a warning with a traceback; the transport says it in words
# (links, notes). Its errors still show.
logging.getLogger("gmqtt").setLevel(logging.ERROR)


class Refused(Exception):
    """The broker refused the login or a subscription; str() says which."""


class Keeper(Transport):
    """The connection of an MqttTransport: see the module's docstring. table=None subscribes to every
    table's boards on the broker."""

    # MqttTransport's extra subscriptions (subscribe_extra): subscribed to on every connect too.
    _extra: dict[str, list[Callable[[str, bytes], None]]]
    # False: a client that hears no boards, only its extra subscriptions (the venue hub): its login
    # need not be allowed the boards' topics, and their frames never reach it.
    hears_boards = True
    serves: set[str] | None = None  # the tables whose boards this link takes (None: every table it hears)

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
        self._client: _Client | None = None
        self._up = False  # connected and subscribed: commands go out
        self._keeper: asyncio.Task | None = None
        self._lost: asyncio.Future | None = None
        self._suback: asyncio.Future | None = None
        self._asked: set[str] = set()  # the filters the current connection's SUBSCRIBE named
        self._settled = asyncio.Event()  # the first connection attempt is over, one way or another

    def _from_broker(self, client, name: str, payload: bytes, qos, properties) -> None:
        """A message from the broker, for MqttTransport to route."""
        raise NotImplementedError

    def _subscribe_now(self, topic_filter: str) -> None:
        """An extra filter subscribed to on the connection that is up (MqttTransport)."""
        raise NotImplementedError

    def _from_broker_all(self, messages: list) -> None:
        """A read's messages, (topic, payload, qos) each, for MqttTransport to route."""
        raise NotImplementedError

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
        self._client.on_messages = self._from_broker_all
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
                # A filter added while this connect waited for its SUBACK was in neither its SUBSCRIBE nor
                # (not up yet) one of its own: subscribed now (the venue link attached after a slow start()).
                for f in [f for f in self._extra if f not in self._asked]:
                    self._subscribe_now(f)
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
        # MQTT 5: pick the session up again if the broker still has it (a fresh client id has none, but
        # broker-config's use_username_as_clientid names us by our login, so a restarted bridge finds it);
        # 3.1.1 has no expiry, so a kept session would stay at the broker for ever: clean.
        c._clean_session = version < MQTTv50
        ctx = ssl.create_default_context(cafile=self.tls_ca) if self.tls else False
        await self._answer(c.connect(self.host, self.port, ssl=ctx, keepalive=self.keepalive, version=version),
                           lost, "CONNECT", c, version)
        self.version = VERSIONS.get(version, str(version))
        boards = self._board_filters() if self.hears_boards else []
        filters = [*boards, *self._extra]
        self._asked = set(filters)
        self._suback = loop.create_future()
        c.subscriptions = []  # gmqtt matches SUBACKs against this list: this connection's filters only
        c.subscribe([gmqtt.Subscription(f, qos=1) for f in filters])
        granted = await self._answer(self._suback, lost, "SUBSCRIBE", c, version)
        refused = [f for f, q in zip(boards, granted) if q >= 0x80]
        if refused:  # (a bridge of 100 tables has 101 of them: the first few name it)
            raise Refused("subscription to %s%s refused (check the broker's ACL)" % (
                ", ".join(refused[:3]), " and %d more" % (len(refused) - 3) if len(refused) > 3 else ""))
        for f, q in zip(filters[len(boards):], granted[len(boards):]):
            if q >= 0x80:  # the boards still play; only what came with this filter is missing
                self._note("mqtt %s: subscription to %s refused (check the broker's ACL)" % (self.url, f))
        return lost

    def _board_filters(self) -> list[str]:
        """The boards' topics: of its table, or of every table. A bridge that serves some tables hears the frames
        of those alone: on a broker a venue's bridges share, each would otherwise be sent every table's events
        and drop most of them (4 bridges: 4 times the frames). Every table's status still comes, so that a board
        whose table none here serves (a wrong table id) is named among the unknown boards."""
        if self.table is not None or self.serves is None:
            sub = "%s/%s/+/" % (ROOT, self.table or "+")
            return [sub + "up", sub + "status"]
        return ["%s/%s/+/up" % (ROOT, t) for t in sorted(self.serves)] + ["%s/+/+/status" % ROOT]

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

    # --- flow control (transport.base, QUEUE_HIGH) ----------------------------------------------

    def _stop_reading(self) -> None:
        if self._client is not None:
            self._client.set_reading(False)

    def _start_reading(self) -> None:
        if self._client is not None:
            self._client.set_reading(True)


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

