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
            self.app.on_line(payload)

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
        c.set_last_will(self.base + "status", b"offline", retain=True, qos=1)
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
            await c.publish(self.base + "status", b"online", retain=True, qos=1)
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
        finally:
            if task is not None:
                task.cancel()  # the old reader must not read (or PUBACK) on the next session's behalf
            c.close()

    async def run(self):
        self._state("waiting")
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
