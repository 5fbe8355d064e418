"""MQTT transport: many tables, many boards, one broker (paho-mqtt 2.x).

Topics (docs/protocol.md, "MQTT"):
    battlement/<table>/<board>/status   retained "online"/"offline" (board's last will: "offline")
    battlement/<table>/<board>/up       board -> host frames, one per message, events QoS 1
    battlement/<table>/<board>/down     host -> board frames (led/config/ping/evack), QoS 1

paho runs its network loop in its own thread (reconnecting by itself); each
message is handed to the asyncio loop with call_soon_threadsafe, where the
shared intake (transport.base) decodes, dedupes and queues it.
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import threading
import uuid
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt

from battlement.errors import UserError
from battlement.transport.base import NoRoute, Transport
from battlement.wire import MAX_FRAME

ROOT = "battlement"
ID_RE = re.compile(r"^[a-z0-9-]{1,32}$")


def check_id(what: str, value: str) -> str:
    """Table and board ids go into topics: lowercase letters, digits and '-', 1 to 32 long."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise UserError("%s id %r is not allowed: use 1-32 of a-z, 0-9 and '-'" % (what, value))
    return value


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
        self._inbound: list[tuple[str, bytes]] = []  # from paho's thread, under _inlock
        self._inlock = threading.Lock()
        self._wake_due = False

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.client_id)
        if self.username:
            c.username_pw_set(self.username, self.password)
        if self.tls:
            c.tls_set_context(ssl.create_default_context())
        c.reconnect_delay_set(1, 5)
        # One frame per message; the board's resend covers anything lost while we reconnect,
        # and the inbox drops the copies, so a clean session is enough.
        sub = "%s/%s/+/" % (ROOT, self.table or "+")

        def on_socket_open(client, userdata, sock):
            # Nagle's algorithm holds small MQTT packets ~40 ms waiting for an ACK;
            # our frames are tiny and latency-bound, so send each at once.
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except (OSError, AttributeError):  # TLS wrappers / non-TCP sockets
                pass

        def on_connect(client, userdata, flags, reason_code, properties):
            if reason_code.is_failure:
                loop.call_soon_threadsafe(self._link_state, "refused: %s" % reason_code)
                return
            client.subscribe([(sub + "up", 1), (sub + "status", 1)])
            loop.call_soon_threadsafe(self._link_state, "connected")

        def on_disconnect(client, userdata, flags, reason_code, properties):
            loop.call_soon_threadsafe(self._link_state, "disconnected: %s" % reason_code)

        def on_connect_fail(client, userdata):
            loop.call_soon_threadsafe(self._link_state, "cannot reach %s:%d, retrying" % (self.host, self.port))

        def on_message(client, userdata, msg):
            # Batch hand-offs: wake the loop once per burst, not once per message.
            with self._inlock:
                self._inbound.append((msg.topic, msg.payload))
                if self._wake_due:
                    return
                self._wake_due = True
            loop.call_soon_threadsafe(self._drain_inbound)

        c.on_socket_open = on_socket_open
        c.on_connect = on_connect
        c.on_disconnect = on_disconnect
        c.on_connect_fail = on_connect_fail
        c.on_message = on_message
        c.connect_async(self.host, self.port, keepalive=15)
        c.loop_start()
        self._client = c

    async def stop(self) -> None:
        await super().stop()
        c, self._client = self._client, None
        if c is not None:
            c.disconnect()
            await asyncio.get_running_loop().run_in_executor(None, c.loop_stop)
        self.links[self.url] = "stopped"

    def _drain_inbound(self) -> None:
        with self._inlock:
            batch, self._inbound = self._inbound, []
            self._wake_due = False
        for name, payload in batch:
            self._on_message(name, payload)

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
            else:
                self._reject("syntax", name, "status must be online or offline")
            return
        if len(payload) > MAX_FRAME:
            self._reject("length", name, "%d bytes" % len(payload))
            return
        self._handle_line(payload, table, table, board)

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
