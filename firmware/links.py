"""Link to the host over USB serial (stdin/stdout); MQTT over Wi-Fi is mqttlink.py.

Both links write the frames App.take() hands them and pass every received line
to App.on_line(); the status pixel shows the link state. The MQTT link lives in
its own module so a serial board never loads it (heap matters on a Pico W).
Improv Wi-Fi packets on the serial link, or an MQTT board's USB console, are
answered by firmware/improv.py, loaded only when one comes (listen()).
"""

import asyncio
import select
import sys
import time

import hal
import micropython

HELD_MS = 5  # while the host reads nothing, look again this often
SLOW_MS = 100  # a write that took this long waited inside the port: the host is not reading
HELD_MAX_MS = 500  # the longest pause between such writes
IMPROV = b"IMPROV"  # starts an Improv packet (provisioning), never a frame


class Lines:
    """The host's stream as lines, with an Improv packet's header read byte by byte (binary: its b"\\n" bytes
    end no line; serve() reads the rest by its length), and what was read past a bad packet put back in front.
    A read of n bytes would wait, the whole board held, until all n have come: one at a time, then readline().

    On the board's console the port's Ctrl-C is off (an Improv packet's type byte is 3, and the port would
    take it for one), so a Ctrl-C starting a line is looked for here: mpremote's "\\r\\x03" stops the firmware
    as before."""

    def __init__(self, stream):
        self.r = asyncio.StreamReader(stream)
        self.back = b""

    async def line(self):
        b = self.back
        if b:
            i = b.find(b"\n") + 1
            if i:
                self.back = b[i:]
                return b[:i]
            self.back = b""
            return b + await self.r.readline()
        c = await self.r.read(1)
        if c == b"\x03":  # starting a line, never a frame: mpremote ("\r\x03") or a person taking the board over
            micropython.kbd_intr(3)
            raise KeyboardInterrupt
        while c and len(c) < 6 and IMPROV.startswith(c):
            more = await self.r.read(1)  # "IMPROV" whole, or as much of it as the line has
            if not more:
                break
            c += more
        if c and c != IMPROV and c[-1:] not in (b"\n", b"\r"):
            c += await self.r.readline()
        return c

    async def byte(self):
        b = self.back
        if not b:
            return await self.r.read(1)
        self.back = b[1:]
        return b[:1]


async def listen(rx, tx, app, on_line=None, console=False):
    """Read the host's stream: frames to on_line; Improv packets (provisioning: firmware/improv.py) answered
    on tx. A frame never starts with "IMPROV", and an Improv client starts each packet on a line of its own.
    console: rx is the port's console (sys.stdin), whose Ctrl-C Lines takes over."""
    if console:
        micropython.kbd_intr(-1)
    lines = Lines(rx)
    while True:
        line = await lines.line()
        if not line:
            await asyncio.sleep_ms(50)  # closed or nothing: wait, the host may come back
            continue
        if line.startswith(IMPROV):
            import improv  # only now: a board never provisioned never loads it

            lines.back = await improv.serve(app, lines, line, tx) + lines.back
        elif on_line is not None and line.strip():
            on_line(line)


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

    async def run(self):
        if self.path:
            f = open(self.path, "r+b")  # noqa: ASYNC230, SIM115 - once at start, open for the board's life
            rx = tx = f
        else:
            # The port's Ctrl-C goes off (Improv packets carry byte 3): listen() looks for it, and mpremote,
            # which needs it to reflash the board, gets it as before.
            rx = sys.stdin.buffer
            tx = sys.stdout.buffer
        self._state("waiting")
        app = self.app
        asyncio.create_task(listen(rx, tx, app, app.on_line, console=not self.path))
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
