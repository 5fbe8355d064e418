"""MQTT transport: many tables, many boards, one broker.

Topics (docs/protocol.md, "MQTT"):
    battlement/<table>/<board>/status   retained "online"/"offline" (board's last will: "offline")
    battlement/<table>/<board>/up       board -> host frames, one per message, events QoS 1
    battlement/<table>/<board>/down     host -> board frames (led/config/ping/evack), QoS 1

The connection is our own small asyncio MQTT client (transport.mqttclient), on the
bridge's loop: no network thread to fight over the GIL, a burst read in one go and
acknowledged in one write. Messages go straight to the shared intake
(transport.base), which decodes, dedupes and queues them; a keeper task connects,
subscribes, and reconnects (1 s doubling to 5 s) whenever the link drops.

Beside the boards' topics, others on the same connection (Home Assistant's, battlement.hass):
    t.will = (topic, payload, retain)        set before start(): the broker publishes it if we vanish
    t.on_connected.append(fn)                fn() after every (re)connect and subscribe
    t.subscribe_extra(filter, fn)            fn(topic, payload) for each message matching filter
    t.publish_raw(topic, payload, qos, retain) -> bool   False if it could not go now
"""

from __future__ import annotations

import asyncio
import os
import re
import ssl
import uuid
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from battlement.errors import UserError
from battlement.transport.base import PING_EVERY, NoRoute, Transport
from battlement.transport.mqttclient import MqttClient, Refused
from battlement.wire import MAX_FRAME

ROOT = "battlement"
TOPICS_KNOWN = 10_000  # parsed topics remembered (a table of boards has a handful each)
RECONNECT_MIN, RECONNECT_MAX = 1.0, 5.0  # seconds between connection attempts, doubling
FIRST_CONNECT = 5.0  # start() waits at most this long for the first attempt (subscribed, refused or unreachable)
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


class MqttTransport(Transport):
    """Boards on an MQTT broker. table=None listens to every table on the broker."""

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
        self.connects = 0
        self.links[url] = "connecting"
        self._client: MqttClient | None = None
        self._keeper: asyncio.Task | None = None
        self._topics: dict[str, tuple[str, str, str] | None] = {}  # topic -> (table, board, leaf), None if bad
        self._settled = asyncio.Event()  # the first connection attempt is over, one way or another
        self.will: tuple[str, bytes, bool] | None = None
        self.on_connected: list[Callable[[], None]] = []
        self._extra: list[tuple[str, Callable[[str, bytes], None]]] = []  # (filter, callback)
        self._extra_of: dict[str, list[Callable[[str, bytes], None]]] = {}  # topic -> callbacks that match it

    async def start(self) -> None:
        await super().start()
        self._client = MqttClient(self.client_id, self._on_message, self.username, self.password, keepalive=15,
                                  counters=self.counters, will=self.will)
        self._keeper = asyncio.create_task(self._keep(self._client))
        # Boards publish their hello once: be subscribed before the caller starts anything else.
        try:
            await asyncio.wait_for(self._settled.wait(), FIRST_CONNECT)
        except TimeoutError:
            pass

    async def stop(self) -> None:
        await super().stop()  # the last evacks are written here, so they leave with the DISCONNECT
        c, self._client = self._client, None
        if self._keeper is not None:
            self._keeper.cancel()
            try:
                await self._keeper
            except asyncio.CancelledError:
                pass
            self._keeper = None
        if c is not None:
            c.disconnect()
        self.links[self.url] = "stopped"

    async def _keep(self, c: MqttClient) -> None:
        """Connect and subscribe; when the link drops, again (1 s doubling to 5 s between failures)."""
        sub = "%s/%s/+/" % (ROOT, self.table or "+")
        delay = RECONNECT_MIN
        while True:
            try:
                lost = await c.connect(self.host, self.port, self.tls, self.tls_ca)
                granted = await c.subscribe([(sub + "up", 1), (sub + "status", 1)] + [(f, 1) for f, _ in self._extra])
                if 0x80 in granted[:2]:
                    c.disconnect()
                    raise Refused("subscription to %s* refused (check the broker's ACL)" % sub)
                for (f, _), g in zip(self._extra, granted[2:]):
                    if g == 0x80:  # the boards still play; only what came with this filter is missing
                        self._note("mqtt %s: subscription to %s refused (check the broker's ACL)" % (self.url, f))
            except Refused as e:
                self._link_state("refused: %s" % e)
            except ssl.SSLCertVerificationError as e:
                self._link_state("refused: the broker's TLS certificate is not trusted (%s); if a private CA "
                                 "signed it, give --tls-ca with that CA's PEM file, retrying" % e.verify_message)
            except (OSError, TimeoutError, ConnectionError) as e:
                self._link_state("cannot reach %s:%d, retrying (%s)" % (self.host, self.port, e or type(e).__name__))
            else:
                self._link_state("connected")
                self._settled.set()  # from now on no board message is missed
                if self.connects > 1:  # what boards sent while we were away went nowhere: resync them
                    self._resync(list(self._unsynced), None)
                self._connected_hooks()
                delay = RECONNECT_MIN
                reason = await lost
                # From now on, until each board's next hello, its events are not taken as new: the
                # ones sent while we are away are lost on the way, and the first to come back would
                # otherwise jump ahead of them.
                self._unsynced.update(self._route)
                self._link_state("disconnected: %s" % reason)
                continue  # straight back: a broker restart should cost as little as possible
            self._settled.set()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX)

    def _connected_hooks(self) -> None:
        for fn in list(self.on_connected):
            try:
                fn()
            except Exception as e:  # noqa: BLE001 -- a hook's failure must not cost the boards their link
                self._count("hook-errors")
                self._note("mqtt %s: after connecting, %s failed: %s: %s"
                           % (self.url, getattr(fn, "__qualname__", fn), type(e).__name__, e))

    def subscribe_extra(self, filter: str, callback: Callable[[str, bytes], None]) -> None:
        """Also receive what matches filter (outside the boards' topics): callback(topic, payload) on the loop.
        Subscribed now if connected, and again on every reconnect."""
        self._extra.append((filter, callback))
        self._topics.clear()  # a topic seen before may match it now
        self._extra_of.clear()
        c = self._client
        if c is not None and c.connected:
            asyncio.get_running_loop().create_task(self._subscribe_late(c, filter))

    async def _subscribe_late(self, c: MqttClient, filter: str) -> None:
        try:
            granted = await c.subscribe([(filter, 1)])
        except (ConnectionError, TimeoutError):
            return  # the reconnect subscribes it with the rest
        if granted and granted[0] == 0x80:
            self._note("mqtt %s: subscription to %s refused (check the broker's ACL)" % (self.url, filter))

    def publish_raw(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> bool:
        """Publish outside the boards' protocol. QoS 1 is kept across a reconnect; False: not sent now."""
        if self._client is None:
            return False
        return self._client.publish(topic, payload, qos, retain)

    def _link_state(self, state: str) -> None:
        if state == "connected":
            self.connects += 1
        if state.startswith("disconnected") and self.links.get(self.url, "").startswith("refused"):
            return  # the refusal is the news; the disconnect that follows it is not
        if self.links.get(self.url) != state:
            self.links[self.url] = state
            self._note("mqtt %s %s" % (self.url, state))

    def _on_message(self, name: str, payload: bytes) -> None:
        try:
            where = self._topics[name]
        except KeyError:
            extra = [cb for f, cb in self._extra if topic_matches(f, name)]
            where = ("", "", "") if extra else _parse_topic(name)
            if len(self._topics) >= TOPICS_KNOWN:
                self._topics.clear()
                self._extra_of.clear()
            self._topics[name] = where
            if extra:
                self._extra_of[name] = extra
        if where is None:
            self._reject("topic", name, "ids must be 1-32 of a-z, 0-9, '-'")
            return
        table, board, leaf = where
        if not table:  # one of subscribe_extra's
            for cb in self._extra_of.get(name, ()):
                try:
                    cb(name, payload)
                except Exception as e:  # noqa: BLE001 -- one bad message must not cost the boards theirs
                    self._count("hook-errors")
                    self._note("mqtt %s: handling %s failed: %s: %s" % (self.url, name, type(e).__name__, e))
            return
        if leaf == "status":
            if payload in (b"online", b"offline"):
                self.online[board] = payload == b"online"
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

    def _hello_due(self, table: str, board: str) -> None:
        if self._client is not None and self.online.get(board) and (table, board) not in self._route:
            self._ask_hello(board, None, table, table)

    def _link_for(self, board: str, table: str | None):
        table = table or self.table
        if (table, board) in self._route:  # it said hello on that table: its ids are known good
            return table
        if table is None:
            hello = self.boards.get(board)
            if hello is None:
                raise NoRoute("board %s has not said hello on %s; give the command a table" % (board, self.url))
            table = hello.table
        check_id("board", board)
        return check_id("table", table)  # type: ignore[arg-type]

    def _write(self, link, board: str, frame: bytes) -> None:
        if self._client is None:
            self._count("unsent")
            return
        # QoS 1: the client keeps it while the broker is away and sends it after reconnecting.
        self._client.publish(topic(link, board, "down"), frame, qos=1)


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
