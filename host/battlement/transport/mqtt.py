"""MQTT transport: many tables, many boards, one broker (paho-mqtt 2.x).

Topics (docs/protocol.md, "MQTT"):
    battlement/<table>/<board>/status   retained "online"/"offline" (board's last will: "offline")
    battlement/<table>/<board>/up       board -> host frames, one per message, events QoS 1
    battlement/<table>/<board>/down     host -> board frames (led/config/ping/evack), QoS 1

paho's socket is watched by the asyncio loop itself (add_reader/add_writer, paho's
external-loop callbacks), not by a paho network thread: a thread would fight the
bridge for the GIL on every packet (paho makes three recv calls per message) and
wake up for every published LED command, which cost the 100-table benchmark over
half its rate. Messages go straight to the shared intake (transport.base), which
decodes, dedupes and queues them; a keeper task reconnects and sends keepalives.
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import threading
import time
import uuid
from typing import Any
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt

from battlement.errors import UserError
from battlement.transport.base import PING_EVERY, NoRoute, Transport
from battlement.wire import MAX_FRAME

ROOT = "battlement"
READ_BURST = 1000  # packets read per wake-up while more are waiting: the bridge then sees them as one batch
RECONNECT_MIN, RECONNECT_MAX = 1.0, 5.0  # seconds between connection attempts, doubling
FIRST_CONNECT = 5.0  # start() waits at most this long for the first attempt (subscribed, refused or unreachable)
ID_RE = re.compile(r"^[a-z0-9-]{1,32}$")


def check_id(what: str, value: str) -> str:
    """Table and board ids go into topics: lowercase letters, digits and '-', 1 to 32 long."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise UserError("%s id %r is not allowed: use 1-32 of a-z, 0-9 and '-'" % (what, value))
    return value


def topic(table: str, board: str, leaf: str) -> str:
    return "%s/%s/%s/%s" % (ROOT, table, board, leaf)


def _more_waiting(sock) -> bool:
    """Is another packet (or the end of the stream) waiting on paho's socket, without blocking?"""
    if isinstance(sock, ssl.SSLSocket):
        return sock.pending() > 0  # else the loop sees the socket readable again
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True  # let paho read it and report the error
    return True


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
        allow: list[str] | None = None,
        client_id: str | None = None,
    ):
        super().__init__(allow)
        self.url = url
        self.host, self.port, url_tls, url_user, url_pass = parse_url(url)
        self.tls = tls or url_tls
        self.username = username or url_user
        self.password = password or url_pass
        self.table = check_id("table", table) if table is not None else None
        self.client_id = client_id or "battlement-host-" + uuid.uuid4().hex[:12]
        self.connects = 0
        self.links[url] = "connecting"
        self._client: mqtt.Client | None = None
        self._sock: Any = None  # paho's socket while it is open, watched by the loop
        self._keeper: asyncio.Task | None = None
        self._loop_thread = 0
        self._settled = asyncio.Event()  # the first connection attempt is over, one way or another

    async def start(self) -> None:
        await super().start()
        self._loop_thread = threading.get_ident()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.client_id)
        if self.username:
            c.username_pw_set(self.username, self.password)
        if self.tls:
            c.tls_set_context(ssl.create_default_context())
        # One frame per message; the board's resend covers anything lost while we reconnect,
        # and the inbox drops the copies, so a clean session is enough.
        sub = "%s/%s/+/" % (ROOT, self.table or "+")

        def on_connect(client, userdata, flags, reason_code, properties):
            if reason_code.is_failure:
                self._link_state("refused: %s" % reason_code)
                self._settled.set()
                return
            client.subscribe([(sub + "up", 1), (sub + "status", 1)])
            self._link_state("connected")

        def on_subscribe(client, userdata, mid, reason_codes, properties):
            self._settled.set()  # from now on no board message is missed

        def on_disconnect(client, userdata, flags, reason_code, properties):
            self._link_state("disconnected: %s" % reason_code)

        def on_message(client, userdata, msg):
            self._on_message(msg.topic, msg.payload)

        c.on_socket_open = lambda client, userdata, sock: self._in_loop(self._watch, sock)
        c.on_socket_close = lambda client, userdata, sock: self._in_loop(self._unwatch, sock)
        c.on_socket_register_write = lambda client, userdata, sock: self._in_loop(self._want_write, sock, True)
        c.on_socket_unregister_write = lambda client, userdata, sock: self._in_loop(self._want_write, sock, False)
        c.on_connect = on_connect
        c.on_disconnect = on_disconnect
        c.on_message = on_message
        c.on_subscribe = on_subscribe
        c.connect_async(self.host, self.port, keepalive=15)  # only records where to connect
        self._client = c
        self._keeper = asyncio.create_task(self._keep(c))
        # Boards publish their hello once: be subscribed before the caller starts anything else.
        try:
            await asyncio.wait_for(self._settled.wait(), FIRST_CONNECT)
        except TimeoutError:
            pass

    async def stop(self) -> None:
        await super().stop()
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
            c.loop_write()  # the DISCONNECT leaves now; paho then closes the socket
            deadline = time.monotonic() + 1.0
            while self._sock is not None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            if self._sock is not None:
                self._unwatch(self._sock)
        self.links[self.url] = "stopped"

    # --- paho on the asyncio loop ------------------------------------------------------

    def _in_loop(self, fn, *args) -> None:
        """paho calls these from the loop, or from the connecting executor thread."""
        if threading.get_ident() == self._loop_thread:
            fn(*args)
        elif self._loop is not None:
            self._loop.call_soon_threadsafe(fn, *args)

    def _watch(self, sock) -> None:
        # Nagle's algorithm holds small MQTT packets ~40 ms waiting for an ACK;
        # our frames are tiny and latency-bound, so send each at once.
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, AttributeError):  # TLS wrappers / non-TCP sockets
            pass
        self._sock = sock
        assert self._loop is not None
        self._loop.add_reader(sock, self._readable, sock)

    def _unwatch(self, sock) -> None:
        if self._loop is not None and sock.fileno() >= 0:
            self._loop.remove_reader(sock)
            self._loop.remove_writer(sock)
        if self._sock is sock:
            self._sock = None

    def _want_write(self, sock, on: bool) -> None:
        if self._loop is None or sock is not self._sock or sock.fileno() < 0:
            return
        if on:
            self._loop.add_writer(sock, self._writable, sock)
        else:
            self._loop.remove_writer(sock)

    def _writable(self, sock) -> None:
        if self._client is not None and sock is self._sock:
            self._client.loop_write()

    def _readable(self, sock) -> None:
        # paho reads one packet per call when nothing is in flight: keep reading while more is
        # waiting, so a burst reaches the bridge as one batch (one journal commit), not one by one.
        for _ in range(READ_BURST):
            c = self._client
            if c is None or sock is not self._sock:
                return
            if c.loop_read() != mqtt.MQTT_ERR_SUCCESS or not _more_waiting(sock):
                return

    async def _keep(self, c: mqtt.Client) -> None:
        """Connect, reconnect (1 s doubling to 5 s), and keepalive pings while connected."""
        assert self._loop is not None
        delay = RECONNECT_MIN
        while True:
            if self._sock is None:
                try:
                    # The TCP connect may block (a broker far away): off the loop, in a thread.
                    await self._loop.run_in_executor(None, c.reconnect)
                except (OSError, ValueError) as e:
                    self._link_state("cannot reach %s:%d, retrying (%s)" % (self.host, self.port, e))
                    self._settled.set()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RECONNECT_MAX)
                    continue
                await asyncio.sleep(RECONNECT_MIN)  # a refused login is retried no faster than this
                if self.links.get(self.url) == "connected":
                    delay = RECONNECT_MIN
                continue
            c.loop_misc()
            await asyncio.sleep(1.0)

    def _link_state(self, state: str) -> None:
        if state == "connected":
            self.connects += 1
        if state.startswith("disconnected") and self.links.get(self.url, "").startswith("refused"):
            return  # the refusal is the news; the disconnect that follows it is not
        if self.links.get(self.url) != state:
            self.links[self.url] = state
            self._note("mqtt %s %s" % (self.url, state))

    def _on_message(self, name: str, payload: bytes) -> None:
        parts = name.split("/")
        if len(parts) != 4 or parts[0] != ROOT or not ID_RE.match(parts[1]) or not ID_RE.match(parts[2]):
            self._reject("topic", name, "ids must be 1-32 of a-z, 0-9, '-'")
            return
        _, table, board, leaf = parts
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
        # QoS 1: paho keeps it while the broker is away and sends it after reconnecting.
        self._client.publish(topic(link, board, "down"), frame, qos=1)
