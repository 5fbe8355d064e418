"""A virtual board on an MQTT broker, and what `battlement sim` says about reaching that broker.

The board publishes up and status and listens on down, like the firmware. A broker that is not there is
retried every RETRY seconds (not paho's backoff, which grows to two minutes), and closing gives every
board a bounded moment to say offline, so the sim never outstays its --linger.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Callable

from battlement.link.transport.mqtt import parse_url, topic

RETRY = 2  # seconds between attempts to reach the broker
CLOSE_WITHIN = 1.0  # seconds every board together gets to say offline and stop its thread


class MqttLink:
    """A board on an MQTT broker: publishes up/status, listens on down (paho's thread hands frames to the loop)."""

    def __init__(self, board, url: str, table: str, username: str | None = None,
                 password: str | None = None, tls: bool = False, tls_ca: str | None = None):
        import paho.mqtt.client as mqtt

        self.board = board
        host, port, url_tls, u, p = parse_url(url)
        tls = tls or url_tls
        self.up, self.down, self.status = (topic(table, board.board, leaf) for leaf in ("up", "down", "status"))
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="sim-%s-%s-%x" % (table, board.board, board.boot))
        if username or u:
            self.client.username_pw_set(username or u, password or p)
        if tls or tls_ca:
            self.client.tls_set(ca_certs=tls_ca)
        self.session = 0  # this connection's number (paho's thread): its status and will name it (signed)
        self.client.will_set(self.status, board.status(False, 0), qos=1, retain=True)
        self.client.reconnect_delay_set(RETRY, RETRY)
        self.client.connect_timeout = RETRY
        self.client.on_connect = self._connected
        self.client.on_connect_fail = self._failed
        self.client.on_disconnect = self._disconnected
        self.client.on_message = self._message
        self.host, self.port = host, port
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ready = asyncio.Event()
        self.online = False  # in the loop's thread: the broker has the board's session
        self.connects = 0
        self.failures = 0  # attempts that failed since the board was last online (paho's thread counts)
        self.refused: str | None = None  # the broker's reason when it answered no (a login, say)
        self.stopping: threading.Thread | None = None
        board.write = self._write

    def _connected(self, client, userdata, flags, rc, props=None):
        if rc.is_failure:
            self.failures += 1
            self.refused = str(rc)
            return
        sock = client.socket()
        if sock is not None and hasattr(sock, "setsockopt"):  # small frames go at once, as the firmware's do
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client.subscribe(self.down, qos=1)
        client.publish(self.status, self.board.status(True, self.session), qos=1, retain=True)
        # paho connects again with the will set now: the next session's, as the firmware signs it at connect
        self.session += 1
        client.will_set(self.status, self.board.status(False, self.session), qos=1, retain=True)
        if self.loop:
            self.loop.call_soon_threadsafe(self._online)

    def _failed(self, client, userdata):
        self.failures += 1

    def _disconnected(self, client, userdata, flags, rc, props=None):
        if self.loop and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._offline)

    def _online(self) -> None:
        self.online, self.failures, self.refused = True, 0, None
        self.connects += 1
        self.board.reconnects = self.connects - 1  # told in its beats, as the firmware counts them
        self.board.resync()
        self.ready.set()

    def _offline(self) -> None:
        self.online = False
        self.ready.clear()

    def _message(self, client, userdata, msg):
        if self.loop:
            self.loop.call_soon_threadsafe(self.board.on_frame, msg.payload)

    def _write(self, frame: bytes) -> None:
        # Offline, nothing is queued in paho: events wait in the board's outbox, sent again on connect with
        # a new hello; a beat or ack is not repeated (docs/protocol.md, MQTT).
        if self.online:
            self.client.publish(self.up, frame, qos=1)

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.client.connect_async(self.host, self.port, keepalive=30)
        self.client.loop_start()

    def stop(self) -> None:
        """Say offline and disconnect; paho's thread is stopped beside (it may be waiting out a connect
        attempt). join() waits for a board that had something to say; one that never got in has not."""
        stopping = threading.Thread(target=self.client.loop_stop, daemon=True)
        if self.online:
            self.client.publish(self.status, self.board.status(False, self.session - 1), qos=1, retain=True)
            self.stopping = stopping
        self.online = False
        self.client.disconnect()
        stopping.start()

    def join(self, deadline: float) -> None:
        if self.stopping is not None:
            self.stopping.join(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        self.stop()
        self.join(time.monotonic() + CLOSE_WITHIN)


def close_all(links: list[MqttLink]) -> None:
    """Every board says offline at once, then all get CLOSE_WITHIN together: a board whose thread is still
    waiting for an unreachable broker is left to end with the process (its thread is a daemon)."""
    for link in links:
        link.stop()
    deadline = time.monotonic() + CLOSE_WITHIN
    for link in links:
        link.join(deadline)


async def _reach(host: str, port: int) -> str | None:
    """Why a TCP connection to the broker fails ("connection refused"), or None when it opens."""
    try:
        _r, w = await asyncio.wait_for(asyncio.open_connection(host, port), RETRY)
    except TimeoutError:
        return "no answer in %g s" % RETRY
    except OSError as e:
        return (os.strerror(e.errno) if e.errno else str(e)).lower()  # asyncio's strerror names the address
    w.close()
    return None


async def watch_broker(links: list[MqttLink], what: str, echo: Callable[[str], None] = print) -> None:
    """One line when the boards cannot reach the broker (and why), one when they are all online: never a
    line per retry. what: e.g. "6 boards of table ringo". The broker is named by host and port (a URL
    may hold a password)."""
    host, port = links[0].host, links[0].port
    started = time.monotonic()
    said, probed = "", started - RETRY + 0.5  # a first look half a second in: a missing host is slow to fail
    while True:
        now = time.monotonic()
        if all(link.online for link in links):
            if said != "online":
                echo("sim: %s online on broker %s:%d" % (what, host, port))
                said = "online"
        elif said != "down" and (any(link.failures for link in links) or now - probed >= RETRY):
            refused = next((link.refused for link in links if link.refused), None)
            why = None if refused else await _reach(host, port)  # paho does not say why; a plain connection does
            probed = now
            if refused:
                echo("sim: broker %s:%d refused the boards (%s); retrying every %g s" % (host, port, refused, RETRY))
                said = "down"
            elif why is not None:
                echo("sim: broker %s:%d not reachable (%s); retrying every %g s" % (host, port, why, RETRY))
                said = "down"
            elif any(link.failures > 1 for link in links) or now - started > 3 * RETRY:
                echo("sim: broker %s:%d answers, but the boards get no MQTT session (TLS? see --tls-ca); "
                     "retrying every %g s" % (host, port, RETRY))
                said = "down"
        await asyncio.sleep(0.1)
