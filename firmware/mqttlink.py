"""Link to the host over MQTT on Wi-Fi (firmware/mqttlite.py is the MQTT client it drives)."""

import asyncio
import random
import socket
import sys
import time


class MqttLink:
    """MQTT over Wi-Fi; every failure (Wi-Fi, broker, TLS, a stall, a garbled packet) ends in a
    reconnect after a jittered, doubling delay, never a reset: the outbox survives and is resent."""

    def __init__(self, app):
        self.app = app
        cfg = app.cfg.get("mqtt") or {}
        self.cfg = cfg
        table = cfg.get("table", "table")
        self.base = "battlement/%s/%s/" % (table, app.board)
        # Stable across boots: a new boot takes over the old session at once, so the old session's
        # will ('offline') is published before our 'online', never after it.
        self.client_id = "battlement/%s/%s" % (table, app.board)
        self.keepalive = cfg.get("keepalive", 30)
        self.state = None
        self.wlan = None
        self.addr = None  # the broker's address, looked up once (getaddrinfo blocks)
        self.delay = BACKOFF_MIN
        self.dead = False
        self.failure = None  # why the last session ended, for the log
        self.table = table
        self.ota = None  # the update's side (firmware/ota.py), made at the first `ota` message
        self.replies = []  # its answers waiting to go out on .../ota

    def heard(self):
        pass

    def _state(self, state):
        if state != self.state:
            self.state = state
            self.app.strip.show_link(state, time.ticks_ms())

    async def _wifi(self):
        try:
            import network
        except ImportError:
            return  # unix port: the host's network is already up
        wifi = self.app.cfg.get("wifi") or {}
        if self.wlan is None:
            self.wlan = network.WLAN(network.STA_IF)
            self.wlan.active(True)
        if self.wlan.isconnected():
            return
        try:
            self.wlan.disconnect()  # a half-joined station does not join again until told to let go
        except OSError:
            pass
        self.wlan.connect(wifi.get("ssid", ""), wifi.get("password", ""))
        for _ in range(150):
            if self.wlan.isconnected():
                if self.cfg.get("tls"):
                    _set_clock(self.cfg.get("ntp"))
                return
            await asyncio.sleep_ms(100)
        raise OSError("wifi: no connection to %s" % wifi.get("ssid", ""))

    async def _reader(self, c):
        try:
            while True:
                await c.wait_msg()
        except Exception as e:  # noqa: BLE001 - connection lost or garbled: the session starts over
            self.failure = e
            self.dead = True
            self.app.wake.set()

    def _on_message(self, topic, payload):
        if topic == self.base + "down":
            if payload.startswith(b"ota "):  # an update's message: never a frame (no frame type is "ota")
                self.updater().on_message(payload)
            else:
                self.app.on_line(payload)

    def updater(self):
        if self.ota is None:
            import ota  # only now: a board never updated never loads it

            self.ota = ota.Ota(self.app, self.table, self)
        return self.ota

    def _client(self):
        from mqttlite import MQTTClient

        cfg = self.cfg
        ka = self.keepalive
        c = MQTTClient(
            self.client_id,
            cfg.get("host", "127.0.0.1"),
            cfg.get("port", 1883),
            cfg.get("user") or None,
            cfg.get("password") or None,
            ka,
            ca=cfg.get("ca") if cfg.get("tls") else None,
            response_ms=min(10000, ka * 500),  # a PUBACK or PINGRESP later than this: the link is dead
        )
        # Signed now, for this boot and session (with a key): the host takes no other offline for this board.
        c.set_last_will(self.base + "status", self.app.status("offline", self.app.reconnects), retain=True, qos=1)
        c.on_message = self._on_message
        return c

    async def _session(self):
        app = self.app
        if self.addr is None:
            self.addr = socket.getaddrinfo(self.cfg.get("host", "127.0.0.1"), self.cfg.get("port", 1883))[0][-1]
        c = self._client()
        task = None
        try:
            await c.connect(self.addr)
            self.dead = False
            task = asyncio.create_task(self._reader(c))
            await c.subscribe(self.base + "down", 1)
            await c.publish(self.base + "status", app.status("online", app.reconnects), retain=True, qos=1)
            # The broker answered (SUBACK, PUBACK): whatever ends this session, the next try comes quickly.
            self.delay = BACKOFF_MIN
            self._state("linked")
            app.hello()
            app.rewind()
            ka = self.keepalive * 1000
            pinged = time.ticks_ms()
            while not self.dead:
                try:
                    await asyncio.wait_for_ms(app.wake.wait(), 500)
                except asyncio.TimeoutError:  # noqa: UP041 - MicroPython has no builtin TimeoutError
                    pass
                now = time.ticks_ms()
                if self.dead:
                    break
                # A half-open connection (Wi-Fi gone without a FIN) only shows as silence.
                if c.overdue(now) or time.ticks_diff(now, c.last_rx) > ka:
                    self.failure = "no answer from the broker"
                    break
                if self.wlan is not None and not self.wlan.isconnected():
                    self.failure = "wifi lost"
                    break
                if time.ticks_diff(now, pinged) >= ka // 4:
                    pinged = now
                    await c.ping()  # the PINGRESP refreshes last_rx
                if app.wake.is_set():
                    app.wake.clear()
                    # Every frame at QoS 1, as docs/protocol.md says: a missing PUBACK shows a dead link.
                    # take() hands the frames over one by one: no list as long as the outbox.
                    await c.publish_all(self.base + "up", (frame for frame, _ in app.take()), qos=1)
                    while self.replies:  # an update's answers; one that fails to go goes in the next session
                        await c.publish(self.base + "ota", self.replies[0], qos=1)
                        self.replies.pop(0)
        finally:
            if task is not None:
                task.cancel()  # the old reader must not read (or PUBACK) on the next session's behalf
            c.close()

    def _console(self):
        """The USB console: Improv packets (provisioning, firmware/improv.py) are answered there, nothing else
        is read. On the unix port only a path given in the config stands in (its stdin is not a console)."""
        path = (self.app.cfg.get("console") or {}).get("path")
        if path:
            rx = tx = open(path, "r+b")  # noqa: SIM115 - once at start, open for the board's life
        elif sys.platform != "linux":
            rx, tx = sys.stdin.buffer, sys.stdout.buffer
        else:
            return
        from links import listen

        asyncio.create_task(listen(rx, tx, self.app, console=not path))

    async def run(self):
        self._state("waiting")
        self._console()
        while True:
            try:
                await self._wifi()
                await self._session()
            except Exception as e:  # noqa: BLE001 - whatever failed, the board reconnects and keeps its outbox
                self.failure = e
            if not isinstance(self.failure, (OSError, str)):
                # Not a network failure: worth seeing on the console, but still no reset.
                print("mqtt: session ended by %r" % (self.failure,), file=sys.stderr)
            else:
                print("mqtt: session ended: %s" % (self.failure,), file=sys.stderr)  # what a console shows
            self.failure = None
            # Everything sent but not acknowledged goes again after the reconnect.
            self.app.reconnects += 1
            self._state("lost")
            self.app.sent = self.app.acked
            if self.delay >= BACKOFF_MAX:
                self.addr = None  # look the broker up again: a name may point elsewhere now
            # Jitter: boards that lost the same broker do not all come back in the same instant.
            await asyncio.sleep_ms(self.delay // 2 + random.getrandbits(16) % (self.delay // 2 + 1))
            self.delay = min(self.delay * 2, BACKOFF_MAX)


BACKOFF_MIN = 250  # ms before the first retry, doubling per failure
BACKOFF_MAX = 8000  # ms: the longest wait between attempts (a broker back up is found within this)


def _set_clock(host):
    """TLS checks certificate dates: set the clock once Wi-Fi is up (best effort; NTP may be unreachable)."""
    try:
        import ntptime

        if host:
            ntptime.host = host
        ntptime.settime()
    except Exception:  # noqa: BLE001, S110 - no NTP: mbedtls then judges dates by the unset clock
        pass
