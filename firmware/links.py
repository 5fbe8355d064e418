"""Links to the host: USB serial (stdin/stdout) or MQTT over Wi-Fi.

Both write the frames App.take() hands them and pass every received line to
App.on_line(); the status pixel shows the link state.
"""

import asyncio
import sys
import time


class SerialLink:
    """USB serial: frames on stdout, commands on stdin. On the unix port a tty path may stand in."""

    def __init__(self, app):
        self.app = app
        self.path = (app.cfg.get("serial") or {}).get("path")
        self.state = None

    def heard(self):
        self._state("linked")

    def _state(self, state):
        if state != self.state:
            self.state = state
            self.app.strip.show_link(state, time.ticks_ms())

    async def _rx(self, reader):
        while True:
            line = await reader.readline()
            if not line:
                await asyncio.sleep_ms(50)  # closed or nothing: wait, the host may come back
                continue
            if line.strip():
                self.app.on_line(line)

    async def run(self):
        if self.path:
            f = open(self.path, "r+b")  # noqa: ASYNC230, SIM115 - once at start, open for the board's life
            rx = tx = f
        else:
            # Ctrl-C stays enabled: frames never contain it, and mpremote needs it to reflash the board.
            rx = sys.stdin.buffer
            tx = sys.stdout.buffer
        self._state("waiting")
        asyncio.create_task(self._rx(asyncio.StreamReader(rx)))
        app = self.app
        tx.write(b"\n")  # ends whatever boot chatter came before, so the hello arrives clean
        app.hello()
        while True:
            await app.wake.wait()
            app.wake.clear()
            for frame, _ in app.take():
                tx.write(frame)


class MqttLink:
    """MQTT over Wi-Fi, reconnecting after Wi-Fi or broker loss; resends unacknowledged events."""

    def __init__(self, app):
        self.app = app
        cfg = app.cfg.get("mqtt") or {}
        self.cfg = cfg
        self.base = "battlement/%s/%s/" % (cfg.get("table", "table"), app.board)
        self.keepalive = cfg.get("keepalive", 30)
        self.state = None
        self.wlan = None

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
        self.wlan.connect(wifi.get("ssid", ""), wifi.get("password", ""))
        for _ in range(150):
            if self.wlan.isconnected():
                return
            await asyncio.sleep_ms(100)
        raise OSError("wifi: no connection to %s" % wifi.get("ssid", ""))

    async def _reader(self, c):
        try:
            while True:
                await c.wait_msg()
                self.last_rx = time.ticks_ms()
        except (OSError, EOFError, ValueError, IndexError):  # connection lost or garbled: start over
            self.dead = True
            self.app.wake.set()

    def _on_message(self, topic, payload):
        if topic == self.base + "down":
            self.app.on_line(payload)

    async def _session(self):
        from mqttlite import MQTTClient

        app = self.app
        cfg = self.cfg
        c = MQTTClient(
            "bm-%s-%x" % (app.board, app.boot),
            cfg.get("host", "127.0.0.1"),
            cfg.get("port", 1883),
            cfg.get("user") or None,
            cfg.get("password") or None,
            self.keepalive,
        )
        c.set_last_will(self.base + "status", b"offline", retain=True, qos=1)
        c.on_message = self._on_message
        try:
            await c.connect()
            self.delay = 250  # connected: the next outage starts with a quick retry
            self.dead = False
            self.last_rx = time.ticks_ms()
            task = asyncio.create_task(self._reader(c))
            await c.subscribe(self.base + "down", 1)
            await c.publish(self.base + "status", b"online", retain=True, qos=1)
            self._state("linked")
            app.hello()
            app.rewind()
            ka = self.keepalive * 1000
            pinged = time.ticks_ms()
            while not self.dead:
                try:
                    await asyncio.wait_for_ms(app.wake.wait(), 1000)
                except asyncio.TimeoutError:  # noqa: UP041 - MicroPython has no builtin TimeoutError
                    pass
                now = time.ticks_ms()
                # A half-open connection (Wi-Fi gone without a FIN) only shows as silence.
                if time.ticks_diff(now, self.last_rx) > ka * 3 // 2:
                    break
                if self.wlan is not None and not self.wlan.isconnected():
                    break
                if time.ticks_diff(now, pinged) >= ka // 2:
                    pinged = now
                    await c.ping()  # the PINGRESP refreshes last_rx
                if app.wake.is_set():
                    app.wake.clear()
                    for frame, is_event in app.take():
                        await c.publish(self.base + "up", frame, qos=1 if is_event else 0)
            task.cancel()
        finally:
            c.close()

    async def run(self):
        self.delay = 250
        self._state("waiting")
        while True:
            try:
                await self._wifi()
                await self._session()
            except (asyncio.TimeoutError, OSError, IndexError, ValueError):  # noqa: UP041 - as above
                pass
            # Everything sent but not acknowledged goes again after the reconnect.
            self.app.reconnects += 1
            self._state("lost")
            self.app.sent = self.app.acked
            await asyncio.sleep_ms(self.delay)
            self.delay = min(self.delay * 2, 4000)
