"""Updates over the air, the host's side (`battlement update`; docs/protocol.md "Updates").

For each board: ask what it runs (`ota info`), build the firmware set for its CPU, send a manifest
signed with the board's key (its table, id and boot, every file's name, size and SHA-256), then the
files it does not already hold, in chunks, a few at a time; then `ota swap`. The board restarts into
the new set on trial, and its first hello (signed, with the new version) is answered with an evack,
which confirms it. A board whose new firmware crashes or says nothing goes back to the old one by
itself; its next hello says so.

The messages go on the board's `down` topic (`ota ...`: never a frame), the answers come signed on
`battlement/<table>/<board>/ota`. The hellos are read through a MqttTransport that acknowledges nothing:
the bridge on the same broker takes and acknowledges the boards' events as always.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import json
import pathlib
import tempfile
import time
from collections.abc import Callable

from battlement.boards import firmware as fwbuild
from battlement.link import wire
from battlement.link.messages import EvAck, Hello, to_frame
from battlement.link.transport import MqttTransport
from battlement.link.transport.mqtt import ROOT, topic

CHUNK = 1024  # bytes of a file per message (the board reads a message whole: at most 4 KB)
WINDOW = 8  # chunks sent ahead of the board's answers
MARCH = {"rp2": "armv6m", "esp32": "xtensawin"}  # the board's sys.platform -> mpy-cross -march
ANSWER_S = 10.0  # an answer to one message
DRAIN_S = 15.0  # the board's outbox empties (the bridge acknowledges its events) before it takes an update
BOOT_S = 60.0  # the swap to the new firmware's hello
TRIAL_S = 60.0  # the new firmware's trial on the board: confirmed within it, or the old one comes back
MANIFEST = "ota manifest %s %s "  # what a manifest's MAC covers before its JSON: the board's table and id
REPLY = "ota reply %s %s "  # ... and an answer's (another prefix: an answer is never taken for a manifest)


@dataclasses.dataclass(frozen=True)
class FirmwareSet:
    """A built firmware set: its version and its files (every module but main.py, which no update changes)."""

    version: str
    files: tuple[tuple[str, bytes], ...]

    @classmethod
    def build(cls, march: str | None = None, ver: str | None = None) -> FirmwareSet:
        """This checkout's firmware, compiled for march (None: bytecode only), as flash installs it."""
        with tempfile.TemporaryDirectory(prefix="battlement-update-") as d:
            return cls.from_folder(fwbuild.stage(pathlib.Path(d) / "set", compiled=True, march=march, ver=ver),
                                   ver or fwbuild.version())

    @classmethod
    def from_folder(cls, folder: pathlib.Path, version: str) -> FirmwareSet:
        return cls(version, tuple(sorted((p.name, p.read_bytes()) for p in folder.iterdir()
                                         if p.is_file() and p.name != "main.py")))

    def size(self) -> int:
        return sum(len(b) for _, b in self.files)

    def manifest(self, table: str, board: str, boot: int, trial_ms: int) -> bytes:
        return json.dumps({"table": table, "board": board, "boot": boot, "version": self.version,
                           "trial_ms": trial_ms,
                           "files": [[n, len(b), hashlib.sha256(b).hexdigest()] for n, b in self.files]},
                          separators=(",", ":")).encode()


def mac(key: bytes, prefix: str, table: str, board: str, body: bytes) -> bytes:
    return wire.hmac_sha256(key, (prefix % (table, board)).encode() + body).hex().encode()


def chunk_message(index: int, offset: int, data: bytes) -> bytes:
    return b"ota chunk %d %d %s\n" % (index, offset, hashlib.sha256(data).hexdigest()[:16].encode()) + data


@dataclasses.dataclass
class Outcome:
    """How one board's update ended: ok (updated, or already up to date), in words, and what it runs now."""

    table: str
    board: str
    ok: bool
    words: str
    version: str | None = None


class _Restarted(Exception):
    def __init__(self, hello: Hello):
        self.hello = hello


class Updater:
    """Updates boards on one broker. keys: (table, board) -> key (an update is always signed)."""

    def __init__(self, transport: MqttTransport, keys: dict[tuple[str, str], bytes], trial_s: float = TRIAL_S,
                 answer_s: float = ANSWER_S, boot_s: float = BOOT_S, drain_s: float = DRAIN_S,
                 chunk: int = CHUNK, window: int = WINDOW):
        self.t = transport
        self.t.acknowledges = False  # the bridge acknowledges the boards' events, never an updater beside it
        self.keys = keys
        self.trial_s, self.answer_s, self.boot_s, self.drain_s = trial_s, answer_s, boot_s, drain_s
        self.chunk, self.window = chunk, window
        self.counters = {"unsigned-answers": 0}
        self._queues: dict[tuple[str, str], asyncio.Queue] = {}
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        for table in sorted({t for t, _ in self.keys}):
            self.t.sign(table, {b: k for (t, b), k in self.keys.items() if t == table})
        self.t.subscribe_extra("%s/%s/+/ota" % (ROOT, self.t.table or "+"), self._answer)
        await self.t.start()
        self._task = asyncio.create_task(self._hellos())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.t.stop()

    def online(self) -> list[tuple[str, str]]:
        """The boards whose status says online, as (table, board)."""
        return sorted(k for k, up in self.t.online.items() if up)

    # --- what comes in -------------------------------------------------------------------------

    def _q(self, table: str, board: str) -> asyncio.Queue:
        return self._queues.setdefault((table, board), asyncio.Queue())

    def _answer(self, name: str, payload: bytes) -> None:
        parts = name.split("/")
        key = self.keys.get((parts[1], parts[2])) if len(parts) == 4 else None
        sig, _, body = payload.partition(b" ")
        if key is None or not hmac.compare_digest(sig, mac(key, REPLY, parts[1], parts[2], body)):
            self.counters["unsigned-answers"] += 1  # a stranger's, or a board we have no key of: not believed
            return
        try:
            d = json.loads(body)
        except ValueError:
            self.counters["unsigned-answers"] += 1
            return
        self._q(parts[1], parts[2]).put_nowait(("answer", d))

    async def _hellos(self) -> None:
        while True:
            m = await self.t.get()
            if isinstance(m, Hello) and m.table is not None:
                self._q(m.table, m.board).put_nowait(("hello", m))

    async def _next(self, q: asyncio.Queue, boot: int, states: tuple[str, ...], timeout: float) -> dict:
        """The next answer in one of states; _Restarted if the board says hello from another boot first."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError
            kind, m = await asyncio.wait_for(q.get(), left)
            if kind == "hello":
                if m.boot != boot:
                    raise _Restarted(m)
            elif m.get("boot") == boot and m.get("state") in states:
                return m

    def _send(self, table: str, board: str, payload: bytes) -> None:
        self.t.publish_raw(topic(table, board, "down"), payload, qos=1)

    async def _ask(self, table: str, board: str, payload: bytes, boot: int, states: tuple[str, ...]) -> dict:
        self._send(table, board, payload)
        return await self._next(self._q(table, board), boot, states, self.answer_s)

    async def info(self, table: str, board: str) -> dict:
        """What the board runs (its `ota info` answer); TimeoutError if it does not answer."""
        q = self._q(table, board)
        while not q.empty():  # an answer still on its way from before (a boot that has since ended) is stale
            q.get_nowait()
        self._send(table, board, b"ota info")
        end = time.monotonic() + self.answer_s
        while True:
            kind, m = await asyncio.wait_for(q.get(), max(0.01, end - time.monotonic()))
            if kind == "answer" and m.get("state") == "info":
                return m

    def _evack(self, table: str, board: str, boot: int) -> None:
        """The host's evack for the new boot (seq 0: nothing to let go of), signed: it confirms the trial."""
        self.t._out(table, table, board, to_frame(EvAck(board, boot, 0, table), 0), boot)

    # --- one board -------------------------------------------------------------------------------

    async def update(self, table: str, board: str, build: Callable[[str], FirmwareSet],
                     progress: Callable[[int, int], None] | None = None) -> Outcome:
        """Update one board to build(its platform); never raises for what the board does or says."""
        def out(ok: bool, words: str, version: str | None = None) -> Outcome:
            return Outcome(table, board, ok, words, version)

        if (table, board) not in self.keys:
            return out(False, "no key: an update is signed with the board's key (battlement flash --table %s)"
                       % table)
        q = self._q(table, board)
        try:
            info = await self.info(table, board)
        except TimeoutError:
            return out(False, "no answer to update messages within %g s: its firmware is older than updates "
                       "(flash it once by cable), or the broker's ACL keeps it from publishing on .../ota "
                       "(run broker-config again)" % self.answer_s)
        if info["trial"]:  # an earlier update stopped after its swap: that firmware runs and answers
            got = await self._confirm(table, board, info["boot"], info["version"])
            if got is not None:
                return out(False, got, info["version"])
            info = await self.info(table, board)
        fw = build(info["platform"])
        old, boot = info["version"], info["boot"]
        if old == fw.version:
            return out(True, "already runs %s" % old, old)
        t0 = time.monotonic()
        swapped = False
        try:
            words = await self._stage(table, board, fw, boot, progress)
            if words is not None:
                return out(False, words, old)
            r = await self._retry(table, board, b"ota swap", boot, ("swapping",))
            if r["state"] != "swapping":
                return out(False, "refused to swap: %s (%s)" % (r["detail"], r["why"]), old)
            swapped = True
            hello = await self._hello_after(q, boot)
        except TimeoutError:
            self._send(table, board, b"ota abort")  # if it hears again, what it staged goes
            return out(False, "stopped answering (within %g s): it runs %s unless it restarts into the new "
                       "firmware, which then goes back by itself unless confirmed" % (self.answer_s, old), old)
        except _Restarted as e:  # power lost half way, or right after the swap: what came back says which
            hello = e.hello
            if hello.firmware != fw.version and not swapped:
                return out(False, "restarted during the update (boot %x -> %x): nothing was swapped in, it runs %s"
                           % (boot, hello.boot, hello.firmware), hello.firmware)
        if hello is None:
            return out(False, "did not say hello within %g s of the swap: if it comes back on %s unconfirmed, it "
                       "goes back to %s by itself" % (self.boot_s, fw.version, old), None)
        return await self._judge(table, board, hello, fw.version, old, t0)

    async def _stage(self, table: str, board: str, fw: FirmwareSet, boot: int,
                     progress: Callable[[int, int], None] | None) -> str | None:
        """Manifest and files; None once the board holds the whole new set, else why not, in words."""
        key = self.keys[(table, board)]
        body = fw.manifest(table, board, boot, int(self.trial_s * 1000))
        r = await self._retry(table, board, b"ota manifest " + mac(key, MANIFEST, table, board, body) + b" " + body,
                              boot, ("ready", "staged"))
        if r["state"] == "refused":
            return "refused the update: %s (%s)" % (r["detail"], r["why"])
        chunks = [(i, off, fw.files[i][1][off:off + self.chunk]) for i in r["need"]
                  for off in range(0, len(fw.files[i][1]), self.chunk)]
        ends, total = [], 0
        for c in chunks:
            total += len(c[2])
            ends.append(total)
        if progress is not None and total:
            progress(0, total)
        q, k, acked, stalls = self._q(table, board), 0, 0, 0
        while r["state"] != "staged":
            while k < len(chunks) and k - self._first(ends, acked) < self.window:
                self._send(table, board, chunk_message(*chunks[k]))
                k += 1
            try:
                r = await self._next(q, boot, ("got", "staged", "refused"), self.answer_s)
            except TimeoutError:
                stalls += 1
                if stalls > 3:
                    raise
                k = self._first(ends, acked)  # again from what the board holds
                continue
            if r["state"] == "refused":
                return "refused the update: %s (%s)" % (r["detail"], r["why"])
            if r.get("done", 0) > acked:
                acked = r["done"]
                stalls = 0
                if progress is not None:
                    progress(acked, total)
        return None

    @staticmethod
    def _first(ends: list[int], acked: int) -> int:
        """The first chunk the board does not hold yet."""
        return next((i for i, e in enumerate(ends) if e > acked), len(ends))

    async def _retry(self, table: str, board: str, payload: bytes, boot: int, states: tuple[str, ...]) -> dict:
        """Ask; while the answer is "outbox" (events the bridge has not acknowledged yet), ask again."""
        end = time.monotonic() + self.drain_s
        while True:
            r = await self._ask(table, board, payload, boot, states + ("refused",))
            if r["state"] != "refused" or r["why"] != "outbox" or time.monotonic() > end:
                if r["state"] == "refused" and r["why"] == "outbox":
                    r = dict(r, detail=r["detail"] + " after %g s: is the bridge running?" % self.drain_s)
                return r
            await asyncio.sleep(0.3)

    async def _hello_after(self, q: asyncio.Queue, boot: int) -> Hello | None:
        end = time.monotonic() + self.boot_s
        while (left := end - time.monotonic()) > 0:
            try:
                kind, m = await asyncio.wait_for(q.get(), left)
            except TimeoutError:
                break
            if kind == "hello" and m.boot != boot:
                return m
        return None

    async def _confirm(self, table: str, board: str, boot: int, version: str) -> str | None:
        """Evack the firmware on trial (after its hello) until it is confirmed; None, or why not in words."""
        q = self._q(table, board)
        end = time.monotonic() + self.trial_s + self.answer_s
        while (left := end - time.monotonic()) > 0:
            self._evack(table, board, boot)
            self._send(table, board, b"ota info")  # after the evack (one topic, in order): trial or not
            try:
                r = await self._next(q, boot, ("confirmed", "info"), min(left, 2.0))
            except TimeoutError:
                continue
            except _Restarted as e:
                if e.hello.firmware != version:
                    return "restarted on trial (boot %x -> %x) and is back on %s" % (boot, e.hello.boot,
                                                                                       e.hello.firmware)
                boot = e.hello.boot  # back on it (on trial again, or confirmed just before): go on
                continue
            if r["state"] == "confirmed" or not r["trial"]:
                return None if r["version"] == version else "runs %s" % r["version"]
        return "did not confirm %s within %g s" % (version, self.trial_s)

    async def _judge(self, table: str, board: str, hello: Hello, new: str, old: str, t0: float) -> Outcome:
        """The board came back: on the new firmware (confirm it) or on the old one (a rollback)."""
        if hello.firmware == new:
            why = await self._confirm(table, board, hello.boot, new)
            if why is None:
                return Outcome(table, board, True, "updated %s -> %s in %.1f s" % (old, new, time.monotonic() - t0),
                               new)
            return Outcome(table, board, False, "ROLLED BACK: %s said hello but %s; it runs %s again" % (
                new, why, old), old)
        if hello.firmware == old:
            return Outcome(table, board, False, "ROLLED BACK: %s never said hello (it crashed at start or could not "
                           "reach the broker); it runs %s again" % (new, old), old)
        return Outcome(table, board, False, "came back with firmware %s, neither %s nor %s" % (hello.firmware, old, new),
                       hello.firmware)
