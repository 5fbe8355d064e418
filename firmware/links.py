"""Link to the host over USB serial (stdin/stdout); MQTT over Wi-Fi is mqttlink.py.

Both links write the frames App.take() hands them and pass every received line
to App.on_line(); the status pixel shows the link state. The MQTT link lives in
its own module so a serial board never loads it (heap matters on a Pico W).
"""

import asyncio
import select
import sys
import time

import hal

HELD_MS = 5  # while the host reads nothing, look again this often
SLOW_MS = 100  # a write that took this long waited inside the port: the host is not reading
HELD_MAX_MS = 500  # the longest pause between such writes


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
        # A host that stops reading (its flow control, or a stalled program) fills the USB FIFO, and then
        # a write waits (rp2 and ESP32-S3 TinyUSB: until 500 ms pass without room, then cuts the frame): a
        # frame goes out only while the port takes bytes; the rest waits in the outbox, and the sensing
        # task keeps the loop. The ESP32 port's console polls writable even when full, so there each write
        # waits inside the port (500 ms native USB, 200 ms USB-Serial/JTAG) with the whole board held:
        # after a write that slow the rest of the batch waits, and the sensing task (which feeds the
        # watchdog) gets its turns between such writes, spaced out to HELD_MAX_MS while they stay slow.
        room = select.poll()
        room.register(tx, select.POLLOUT)
        held = HELD_MS
        while True:
            await app.wake.wait()
            app.wake.clear()
            for frame, is_event in app.take():  # lazy: what it has not handed over stays unsent
                if not room.poll(0):
                    app.untake([(frame, is_event)])
                    await asyncio.sleep_ms(HELD_MS)
                    app.wake.set()
                    break
                t = time.ticks_ms()
                w0 = hal.ticks_us()
                tx.write(frame)
                app.wrote(w0, hal.ticks_us())  # the board's own time, or a pause that held the pin handlers
                if time.ticks_diff(time.ticks_ms(), t) >= SLOW_MS:
                    await asyncio.sleep_ms(held)
                    held = min(2 * held, HELD_MAX_MS)
                    app.wake.set()
                    break
                held = HELD_MS
