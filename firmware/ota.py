"""Updates over the air (docs/protocol.md, "Updates"): a signed manifest, then the files over MQTT.

Imported only when the host starts an update (or an updated set is confirmed), so a board that is
never updated never loads it. The host writes `ota ...` messages on the board's `down` topic
(firmware/mqttlink.py routes them here); every answer goes out signed on `.../ota`.

The board's filesystem holds firmware sets: "." (the files beside main.py, as `battlement flash` put
them) and the folders s1 and s2. The pointer file `fwset` says which one main.py starts:

    <set>                   start it
    <set> <new> <ms>        an update swapped <new> in: main.py starts it once, on trial for <ms>
    <set> -<new> <ms>       ... written by main.py before it starts <new>: the next boot starts <set>

An update stages every file into the set that is not running (a file the running set holds with the
same SHA-256 is copied, not sent), checks each chunk's and each file's SHA-256, and swaps by writing
the pointer file whole (a temporary file renamed over it: either the old or the new one is there,
whenever the power goes). The new set confirms itself (confirm(), called by app.py once its hello
brought an evack) by writing `<new>`; if it crashes or no evack comes within the trial, the board
resets and main.py starts the old set: a rollback needs no write at all.
"""

import json
import os
import sys
from binascii import hexlify
from hashlib import sha256

import wire

POINTER = "fwset"
SETS = ("s1", "s2")
MAX_FILES = 32
TRIAL_MS = (2000, 600000)  # the trial a manifest may ask for
_NAME = b"abcdefghijklmnopqrstuvwxyz0123456789_."
_HEXDIGITS = b"0123456789abcdef"
REPLIES = 8  # answers waiting for the link at most (a stranger's `ota info` flood is not kept)


def _join(d, name):
    return d + "/" + name if d else name


def pointer():
    """The pointer file's words: [set, (new or -new), ms]; ["."] when there is none (as flashed)."""
    try:
        with open(POINTER) as f:
            w = f.read().split()
    except OSError:
        return ["."]
    return w or ["."]


def set_pointer(text):
    """Write the pointer file whole: a crash leaves the old one or the new one, never a torn one."""
    with open(POINTER + ".tmp", "w") as f:
        f.write(text)
    os.rename(POINTER + ".tmp", POINTER)


def digest(path, size):
    """Hex SHA-256 of a file, or None if it is not size bytes long (or not there)."""
    try:
        if os.stat(path)[6] != size:
            return None
        h = sha256()
        buf = bytearray(512)
        with open(path, "rb") as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                h.update(memoryview(buf)[:n])
        return hexlify(h.digest())
    except OSError:
        return None


def _same(a, b):
    """Constant-time comparison (a MAC): no early exit at the first wrong digit."""
    if len(a) != len(b):
        return False
    d = 0
    for i in range(len(a)):
        d |= a[i] ^ b[i]
    return d == 0


def _hex(s, n):
    return len(s) == n and all(c in _HEXDIGITS for c in s)


def _running():
    """The folder of the running set's modules ("" on a board's root as flashed)."""
    return (sys.modules["app"].__file__ or "").rpartition("/")[0]


def _app_module():
    return sys.modules["app"]


def confirm(app, link):
    """The set on trial reached a hello and an evack: make it the one main.py starts, and say so."""
    w = pointer()
    try:
        if len(w) > 1 and w[1][:1] == "-":
            set_pointer(w[1][1:])
    except OSError as e:  # not saved: the trial runs out and the previous set starts again
        print("update: could not confirm the new firmware: %r" % (e,), file=sys.stderr)
        return
    _app_module().TRIAL = 0
    if link is not None and hasattr(link, "updater"):
        link.updater().reply("confirmed")


class Ota:
    """One board's side of an update; made by the MQTT link at the first `ota` message."""

    def __init__(self, app, table, link):
        self.app = app
        self.table = table
        self.link = link
        self.m = None  # the manifest being staged (dict), None: no update under way
        self.dir = None  # the set it is staged into
        self.need = []  # indices of the files still to come, in the order they come
        self.f = None  # the file being written, and its SHA-256 so far
        self.h = sha256()
        self.at = 0  # bytes of that file written
        self.done = 0  # bytes of every file received in this update
        self.staged = False

    # --- answers ---------------------------------------------------------------------------

    def reply(self, state, **kw):
        app = self.app
        w = pointer()
        d = {"board": app.board, "boot": app.boot, "state": state, "version": _app_module().FIRMWARE,
             "platform": sys.platform, "set": w[0], "trial": bool(_app_module().TRIAL),
             "failed": w[1][1:] if len(w) > 1 and w[1][:1] == "-" else "", "outbox": len(app.outbox)}
        d.update(kw)
        body = json.dumps(d).encode()
        mac = b"-"
        if app.key:
            mac = hexlify(wire.hmac_sha256(app.key, ("ota reply %s %s " % (self.table, app.board)).encode() + body))
        q = self.link.replies
        if len(q) >= REPLIES:
            q.pop(0)
        q.append(mac + b" " + body)
        app.wake.set()

    def refuse(self, why, detail):
        self.reply("refused", why=why, detail=detail)

    # --- messages --------------------------------------------------------------------------

    def on_message(self, payload):
        """One `ota ...` message from the host; never raises (a failure refuses the update)."""
        word, _, rest = payload[4:].partition(b" ")
        try:
            if word == b"info":
                self.reply("info", staged=self.staged)
            elif word == b"manifest":
                self._manifest(rest)
            elif word == b"chunk":
                self._chunk(rest)
            elif word == b"swap":
                self._swap()
            elif word == b"abort":
                self._drop()
                self.reply("aborted")
            else:
                self.refuse("unknown", "no update message %s" % word[:20])
        except OSError as e:  # the flash is full or failing: this update stops, the running set is untouched
            self._drop()
            self.refuse("flash", "writing the new firmware failed: %r" % (e,))
        except MemoryError:
            self._drop()
            self.refuse("memory", "no heap for the update message")
        except (ValueError, TypeError, KeyError, IndexError) as e:
            self._drop()
            self.refuse("bad-message", "%s message does not parse: %r" % (word[:20], e))

    def _drop(self):
        if self.f is not None:
            self.f.close()
        self.f = self.m = None
        self.staged = False

    def _manifest(self, rest):
        app = self.app
        if not app.key:
            return self.refuse("no-key", "this board has no key, so it takes no update (flash it with --table)")
        mac, _, body = rest.partition(b" ")
        m = json.loads(body)
        if m["table"] != self.table or m["board"] != app.board:
            return self.refuse("other-board", "the manifest is for %s/%s, this is %s/%s"
                               % (m["table"], m["board"], self.table, app.board))
        want = hexlify(wire.hmac_sha256(app.key, ("ota manifest %s %s " % (self.table, app.board)).encode() + body))
        if not _same(mac, want):
            return self.refuse("mac", "the manifest is not signed with this board's key")
        if m["boot"] != app.boot:  # an earlier boot's manifest played again
            return self.refuse("boot", "the manifest is for boot %x, this is boot %x" % (m["boot"], app.boot))
        if _app_module().TRIAL:
            return self.refuse("trial", "this firmware is itself on trial: confirm it first")
        files = m["files"]
        trial = m["trial_ms"]
        if not 0 < len(files) <= MAX_FILES or not TRIAL_MS[0] <= trial <= TRIAL_MS[1]:
            return self.refuse("bad-manifest", "%d files, trial %d ms" % (len(files), trial))
        total = 0
        for name, size, dig in files:
            b = name.encode()
            if not 0 < len(b) <= 32 or b[0] == 46 or not all(c in _NAME for c in b) or name == "main.py":
                return self.refuse("bad-manifest", "file name %r" % name[:40])
            if not 0 <= size <= 1 << 20 or not _hex(dig.encode(), 64):
                return self.refuse("bad-manifest", "size or SHA-256 of %s" % name)
            total += size
        if len(app.outbox):  # every event must reach the host before the board restarts
            return self.refuse("outbox", "%d events not yet acknowledged" % len(app.outbox))
        self._drop()
        w = pointer()
        if len(w) > 1:  # a trial that never started (its pointer could not be written), or a failed one:
            set_pointer(w[0])  # from here the pointer names only the running set, never the one staged
        self.dir = SETS[1] if w[0] == SETS[0] else SETS[0]
        try:
            os.mkdir(self.dir)
        except OSError:  # there already: an earlier set, or an update that stopped half way
            for f in os.listdir(self.dir):
                os.remove(_join(self.dir, f))
        try:
            st = os.statvfs("/")
            if st[0] * st[4] < total + 8192:
                return self.refuse("space", "%d bytes free, the new firmware takes %d" % (st[0] * st[4], total))
        except (OSError, AttributeError):
            pass
        src = _running()
        self.need = []
        for i, (name, size, dig) in enumerate(files):
            if not self._copy(_join(src, name), _join(self.dir, name), size, dig.encode()):
                self.need.append(i)
        self.m = m
        self.at = self.done = 0
        self.staged = not self.need
        self.reply("staged" if self.staged else "ready", need=self.need)

    def _copy(self, src, dst, size, dig):
        """A file the running set holds as the new set wants it is copied, not sent (empty ones are made)."""
        if size and digest(src, size) != dig:
            return False
        buf = bytearray(512)
        with open(dst, "wb") as out:
            if size:
                with open(src, "rb") as f:
                    while True:
                        n = f.readinto(buf)
                        if not n:
                            break
                        out.write(memoryview(buf)[:n])
        return True

    def _chunk(self, rest):
        head, _, data = rest.partition(b"\n")
        i, off, h = head.split(b" ")
        i = int(i)
        off = int(off)
        if self.m is None or self.staged:
            return self.refuse("no-update", "a chunk with no update under way (the board restarted?)")
        if not self.need or i != self.need[0] or off != self.at:
            return self.reply("got", file=self.need[0] if self.need else -1, at=self.at, done=self.done)
        name, size, dig = self.m["files"][i]
        if hexlify(sha256(data).digest()[:8]) != h:
            self._drop()
            return self.refuse("chunk-hash", "the chunk at %d of %s does not match its SHA-256" % (off, name))
        if off + len(data) > size:
            self._drop()
            return self.refuse("size", "%s is longer than its %d bytes" % (name, size))
        if self.f is None:
            self.f = open(_join(self.dir, name), "wb")  # noqa: SIM115 - open across chunks, closed at its end
            self.h = sha256()
        self.f.write(data)
        self.h.update(data)
        self.at += len(data)
        self.done += len(data)
        if self.at == size:
            self.f.close()
            self.f = None
            if hexlify(self.h.digest()) != dig.encode():
                self._drop()
                return self.refuse("file-hash", "%s does not match the SHA-256 its manifest gives" % name)
            self.need.pop(0)
            self.at = 0
            if not self.need:
                self.staged = True
                return self.reply("staged", done=self.done)
        self.reply("got", file=i, at=self.at, done=self.done)

    def _swap(self):
        m = self.m
        if m is None or not self.staged:
            return self.refuse("incomplete", "nothing staged to swap in")
        if len(self.app.outbox):
            return self.refuse("outbox", "%d events not yet acknowledged" % len(self.app.outbox))
        for name, size, dig in m["files"]:  # read back: what the flash holds is what starts
            if digest(_join(self.dir, name), size) != dig.encode():
                self._drop()
                return self.refuse("file-hash", "%s as staged does not match its SHA-256" % name)
        set_pointer("%s %s %d" % (pointer()[0], self.dir, m["trial_ms"]))
        self._drop()
        self.reply("swapping", to=m["version"])
        import asyncio

        asyncio.create_task(self._reset())

    async def _reset(self):
        import asyncio
        import time

        import machine

        t = time.ticks_ms()
        while self.link.replies and time.ticks_diff(time.ticks_ms(), t) < 2000:
            await asyncio.sleep_ms(20)  # the answer goes out first
        await asyncio.sleep_ms(100)
        print("update: swapped in; restarting", file=sys.stderr)
        machine.reset()
