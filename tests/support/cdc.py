"""A serial line that behaves like a board's USB CDC port, not like a pty: `CdcLink`.

A pty pair never loses a byte: a board writing to a host that reads nothing just blocks (or its poll
says the port is full) until the host reads again. A real board's USB port cuts instead. What this
models, from MicroPython's sources (micropython/micropython):

* rp2 and ESP32-S3 native USB (`shared/tinyusb/mp_usbd_cdc.c`, `mp_usbd_cdc_tx_strn`): the board's
  bytes go into TinyUSB's TX FIFO (`CFG_TUD_CDC_TX_BUFSIZE`, 256 bytes at full speed,
  `shared/tinyusb/tusb_config.h`), which the host empties in 64-byte bulk packets. A write puts in
  what fits and waits for room; once nothing has gone in for `MICROPY_HW_USB_CDC_TX_TIMEOUT`
  (500 ms, `ports/rp2/mphalport.h`, `ports/esp32/usb.h`) it returns and the rest of the write is
  dropped (since v1.27; v1.24-1.26 waited up to 500 ms for each 64-byte packet to fit whole, then
  put in what fitted: `packet=64`). The board is stuck in that write meanwhile.
* poll on rp2 (`mp_usbd_cdc_poll_interfaces`): the port is writable while the FIFO has one free
  byte, so a frame starts when a few bytes fit and is then cut. On ESP32 `mp_hal_stdio_poll`
  (`ports/esp32/mphalport.c`) says writable always, so a write into a full FIFO waits inside the
  port, the VM held, and is dropped after the timeout: that is the board model's
  (`tests/firmware/fakes/machine.py`, `Console`, models `esp32-usb` and `esp32-jtag`), this line
  only shows it the room there is.
* ESP32-S3 USB-Serial/JTAG (`ports/esp32/usb_serial_jtag.c`, `usb_serial_jtag_tx_strn`): a
  64-byte hardware FIFO and 200 ms waiting for room: `port="esp32-s3-jtag"` (after such a timeout
  the port drops at once what finds no room: the board model's too).
* the host (Linux cdc-acm under the tty layer) keeps reading the endpoint while the program above
  it reads nothing, until the tty's buffer is full (`N_TTY_BUF_SIZE`, 4096 bytes, then the tty
  throttles the driver): only then does the FIFO fill. A stalled bridge therefore loses a frame
  only once about 4 KB wait for it.

How: the relay owns two pty pairs. `.b` is the board's end: the firmware opens it, the relay reads
every byte the board writes at once and treats each line as one write (the firmware writes one
frame per write). While the modelled port would block the board (the FIFO full, or a write
waiting), the relay stops the board's tty output with XOFF (IXON on the board's end), so the
firmware's poll sees a full port and a write blocks, as on the board. `.a` is the host's end: the
relay passes the FIFO on in 64-byte packets while fewer than `host_buffer` bytes are unread there
(TIOCINQ). What the host writes goes to the board unchanged. Not modelled: the host closing the
port (DTR low), where a real board's FIFO keeps or clears data.

`.counters`: `cut` writes whose tail was dropped after part of them went out (each leaves a
partial line that the next frame completes: one crc or syntax rejection at the host),
`bytes-dropped`, `forwarded` bytes. `.full`: the FIFO is full now. A stall does not always cut a
frame: when the last write fills the FIFO exactly, rp2's poll holds the next one whole.
"""

import fcntl
import os
import pathlib
import select
import struct
import tempfile
import termios
import threading
import time
import tty

XOFF, XON = b"\x13", b"\x11"
PACKET = 64  # CFG_TUD_CDC_EP_BUFSIZE at full speed: what one bulk IN transfer carries
TICK = 0.002  # s: how often the relay looks at the host's side while it waits


def _unread(fd):
    return struct.unpack("i", fcntl.ioctl(fd, termios.TIOCINQ, b"\0\0\0\0"))[0]


def _pty(path, flow):
    master, slave = os.openpty()
    tty.setraw(slave)
    attrs = termios.tcgetattr(slave)
    if flow:  # XOFF/XON from the relay stop and restart what the board writes; other bytes do not
        attrs[0] = (attrs[0] | termios.IXON) & ~termios.IXANY
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    os.set_blocking(master, False)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(os.ttyname(slave), path)
    return master, slave


# The ports' USB serial as MicroPython 1.27+ drives it (above), and the board model that goes with each
# (FirmwareProcess model=); a keyword given to CdcLink overrides.
PORTS = {
    "rp2": {"fifo": 256, "timeout": 0.5, "packet": 1, "model": "rp2"},
    "esp32-s3-usb": {"fifo": 256, "timeout": 0.5, "packet": 1, "model": "esp32-usb"},
    "esp32-s3-jtag": {"fifo": 64, "timeout": 0.2, "packet": 1, "model": "esp32-jtag"},
}


class CdcLink:
    """`.b` for the board (FirmwareProcess port=), `.a` for the host (the bridge's --serial).

    port: a PORTS entry; fifo (bytes), timeout (s), packet (1, or 64 for v1.24-1.26) override it.
    host_buffer: bytes the host's tty holds unread before the FIFO fills (4096 less a packet, so
    that TIOCINQ sees every byte of it). .model: the board model for FirmwareProcess.
    """

    def __init__(self, workdir=None, port="rp2", host_buffer=4032, **override):
        spec = dict(PORTS[port], **override)
        fifo, timeout, packet, self.model = spec["fifo"], spec["timeout"], spec["packet"], spec["model"]
        self.dir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="battlement-cdc-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.a = str(self.dir / "tty-host")
        self.b = str(self.dir / "tty-board")
        self.fifo_size, self.timeout, self.packet, self.host_buffer = fifo, timeout, packet, host_buffer
        self.counters = {"cut": 0, "bytes-dropped": 0, "forwarded": 0}
        self.full = False  # the FIFO is full now: the host has stopped taking the board's bytes
        self._halt = threading.Event()
        self._thread = None

    def start(self):
        self._bm, self._bs = _pty(self.b, flow=True)
        self._hm, self._hs = _pty(self.a, flow=False)
        self._thread = threading.Thread(target=self._run, name="cdc-relay", daemon=True)
        self._thread.start()
        return self

    def close(self):
        self._halt.set()
        if self._thread is not None:
            self._thread.join(5)
        for fd in (self._bm, self._bs, self._hm, self._hs):
            os.close(fd)
        for p in (self.a, self.b):
            if os.path.lexists(p):
                os.unlink(p)

    def _run(self):
        fifo = bytearray()  # the board's TX FIFO
        writes = bytearray()  # what the board wrote that is not in the FIFO yet: the write in progress first
        current = 0  # bytes of `writes` left of the write in progress
        since = 0.0  # when the write in progress last put a byte in, or began
        stopped = False  # XOFF in force on the board's tty
        while not self._halt.is_set():
            # Idle (nothing held), only the two ends can wake it; else the host's reading is watched.
            readable, _, _ = select.select([self._bm, self._hm], [], [], TICK if writes or fifo else 0.1)
            if self._bm in readable:
                writes += self._read(self._bm)
            if self._hm in readable:  # the host's commands: to the board as they come
                self._write_all(self._bm, self._read(self._hm))
            now = time.monotonic()
            while writes:
                room = self.fifo_size - len(fifo)
                if not current:
                    if not room:
                        # Written in the moment before the XOFF landed: the board would have polled a full
                        # port and kept it, so it starts when a byte fits.
                        break
                    end = writes.find(b"\n")
                    current, since = (end + 1 if end >= 0 else len(writes)), now
                chunk = min(current, self.packet)
                timed_out = now - since >= self.timeout
                if room >= chunk or (timed_out and room):
                    # 1.27+ and JTAG (packet 1): what fits goes in; 1.24-1.26: a 64-byte packet once it
                    # fits whole, or after its wait what fits of it
                    n = min(current, room) if self.packet == 1 else min(chunk, room)
                    fifo += writes[:n]
                    del writes[:n]
                    current -= n
                    since = now
                    continue
                if not timed_out:
                    break
                self.counters["cut"] += 1  # part of it went out: a write starts only when a byte fits
                self.counters["bytes-dropped"] += current
                del writes[:current]
                current = 0
            # The host takes 64-byte packets while its tty buffer has room.
            free = self.host_buffer - _unread(self._hs)
            while fifo and free >= min(PACKET, len(fifo)):
                n = os.write(self._hm, bytes(fifo[:PACKET]))
                del fifo[:n]
                free -= n
                self.counters["forwarded"] += n
            # No room for the board: the FIFO is full, or it is inside a write that waits.
            self.full = len(fifo) >= self.fifo_size
            busy = bool(writes) or self.full
            if busy != stopped:
                self._write_all(self._bm, XOFF if busy else XON)
                stopped = busy

    @staticmethod
    def _read(fd):
        try:
            return os.read(fd, 65536)
        except (BlockingIOError, OSError):
            return b""

    def _write_all(self, fd, data):
        while data and not self._halt.is_set():
            try:
                n = os.write(fd, data)
            except BlockingIOError:
                time.sleep(TICK)
                continue
            data = data[n:]
