"""Exactly-once event intake shared by both transports: dedupe by (board, boot, seq), find gaps.

A board numbers its events 1, 2, 3... afresh at every boot (new boot id) and
keeps each one in an outbox until the host acknowledges it (cumulative `evack`),
resending after a reconnect. So the host sees duplicates (resends of events it
already has) and, on a lossy link, gaps that a later resend may fill.

Per (link key, board) the inbox keeps the current boot, the highest seq seen and
the seqs still missing below it. It learns where a boot stands before it accepts
anything as new: the board's hello carries `acked` (it needs nothing up to that
seq), and what an earlier run of the host journalled for that boot can be
handed over with seed(). So a host that restarts neither applies twice what it
journalled before nor mistakes the first event it happens to see for the
baseline and drops the older ones the board resends.
A missing seq that has not arrived GAP_WINDOW events later is given up as lost,
so the cumulative acknowledgement can move on. That is safe only beyond what a board's
outbox holds: with 256, a board of the tests' 1,024-event outbox whose frames a stalled
USB-Serial/JTAG port dropped lost events it still held. Nearer holes are let go by the
board's hello after a ping (the transport's _stuck).
"""

from __future__ import annotations

import heapq

NEW = "new"  # first time seen: apply it
LATE = "late"  # filled an earlier gap: apply it
DUP = "dup"  # already applied: drop it (counted as stale-seq)

GAP_WINDOW = 8192  # above any board's outbox (firmware: 128, the tests' 1024; protocol rule 5): only those are safe to give up
PAST_BOOTS = 4  # earlier boots remembered per board (a signing board's are refused before: transport/boots.py)


class _Track:
    __slots__ = ("base", "boot", "high", "low", "missing", "since")

    def __init__(self, boot: int):
        self.boot = boot
        self.base = -1  # every seq <= base has arrived (or was given up); -1: no event yet
        self.high = -1
        self.missing: set[int] = set()
        # The missing seqs again as a heap (lazily trimmed of those no longer missing): the lowest
        # in O(log n) per event, where min() over the set cost O(gap) on every event of a board
        # with a gap -- under overload, every board.
        self.low: list[int] = []
        self.since = 0  # when this boot last became current (for forgetting the oldest)

    def lowest(self) -> int | None:
        low, missing = self.low, self.missing
        while low and low[0] not in missing:
            heapq.heappop(low)
        return low[0] if low else None

    def rebase(self) -> None:
        lo = self.lowest()
        self.base = self.high if lo is None else lo - 1

    def set_missing(self, seqs) -> None:
        self.missing = set(seqs)
        self.low = sorted(self.missing)  # a sorted list is a heap


class Inbox:
    """Decides, for each incoming event, whether it is new, a late gap-filler, or a duplicate.

    Counters (added to the dict passed in): gap (seqs found missing), late (gaps
    filled afterwards), lost (missing seqs given up), stale-seq (duplicates).
    """

    def __init__(self, counters: dict[str, int] | None = None, gap_window: int = GAP_WINDOW):
        self.counters = counters if counters is not None else {}
        self.gap_window = gap_window
        self._tracks: dict[object, _Track] = {}
        self._past: dict[object, dict[int, _Track]] = {}
        self._seen: dict[object, dict[int, set[int]]] = {}  # key -> boot -> seqs an earlier run applied
        self._clock = 0

    def _count(self, reason: str, n: int = 1) -> None:
        self.counters[reason] = self.counters.get(reason, 0) + n

    def boot(self, key) -> int | None:
        t = self._tracks.get(key)
        return t.boot if t else None

    def seed(self, key, boot: int, seqs) -> None:
        """Seqs of (key, boot) applied before (by an earlier run of the host): never new again."""
        self._seen.setdefault(key, {})[boot] = set(seqs)

    def hello(self, key, boot: int, acked: int | None = None) -> bool:
        """Record a board's boot id and how far it stands; a new boot resets its sequence.

        acked: the board needs nothing up to this seq (from its hello); None: unknown, the first
        event of the boot becomes the baseline. Returns True if the boot is new.
        """
        t = self._tracks.get(key)
        new = False
        if t is None or t.boot != boot:
            # Keep a few earlier boots: a late hello of an earlier boot (frames reordered on the
            # way) must find that boot's record again, or its events would be applied twice.
            past = self._past.setdefault(key, {})
            if t is not None:
                past[t.boot] = t
                while len(past) > PAST_BOOTS:
                    del past[min(past, key=lambda b: past[b].since)]
            t = past.pop(boot, None)
            if t is None:
                new = True
                t = _Track(boot)
                seen = self._seen.get(key, {}).pop(boot, None)
                if seen:
                    t.base = t.high = max(seen)
                    t.set_missing(set(range(max(0, t.high - self.gap_window) + 1, t.high)) - seen)
                    t.rebase()
            self._clock += 1
            t.since = self._clock
            self._tracks[key] = t
        if acked is not None:
            self._advance(t, acked)
        return new

    def _advance(self, t: _Track, acked: int) -> None:
        """The board needs nothing up to acked: never lower what is known, never count a gap for it."""
        t.high = max(t.high, acked)
        if t.missing:
            t.set_missing(s for s in t.missing if s > acked)
        if acked > t.base:
            t.rebase()

    def offer(self, key, boot: int, seq: int) -> tuple[str, int]:
        """Classify event (boot, seq) from board `key`: returns (NEW|LATE|DUP, seqs newly found missing).

        The caller must have called hello(key, boot) first (events of an unknown
        boot are the transport's business: it holds them and asks for a hello).
        """
        t = self._tracks[key]
        if t.boot != boot:
            raise KeyError("boot %x is not the current boot of %r" % (boot, key))
        gap = 0
        if t.high < 0:  # first event of this boot: the baseline
            t.base = t.high = seq
            return NEW, 0
        if seq > t.high:
            gap = seq - t.high - 1
            if gap:
                self._count("gap", gap)
                lo = max(t.high + 1, seq - self.gap_window)
                if lo > t.high + 1:  # a jump wider than the window: the far part is lost at once
                    self._count("lost", lo - t.high - 1)
                if not t.missing:
                    t.low.clear()  # only stale entries left in it
                fresh = range(lo, seq)
                t.missing.update(fresh)
                if t.low:
                    for s in fresh:
                        heapq.heappush(t.low, s)
                else:
                    t.low.extend(fresh)  # ascending: already a heap
            t.high = seq
            verdict = NEW
        elif seq in t.missing:
            t.missing.discard(seq)
            self._count("late")
            verdict = LATE
        else:
            self._count("stale-seq")
            return DUP, 0
        if t.missing:
            floor = t.high - self.gap_window
            low, missing = t.low, t.missing
            expired = 0
            while low and low[0] <= floor:
                s = heapq.heappop(low)
                if s in missing:
                    missing.discard(s)
                    expired += 1
            if expired:
                self._count("lost", expired)
            t.rebase()
        else:
            t.base = t.high
        return verdict, gap

    def known(self, key, boot: int, seq: int) -> bool:
        """True if (boot, seq) of board `key` is one offer() would call DUP: for dropping resends
        before anything else is done with them."""
        t = self._tracks.get(key)
        return t is not None and t.boot == boot and 0 <= seq <= t.high and seq not in t.missing

    def gapped(self, key) -> bool:
        """True if board `key` has seqs missing (its cumulative acknowledgement waits below them)."""
        t = self._tracks.get(key)
        return bool(t and t.missing)

    def acked(self, key) -> tuple[int, int] | None:
        """(boot, seq) to acknowledge cumulatively for board `key`, or None before its first event."""
        t = self._tracks.get(key)
        if t is None or t.base < 0:
            return None
        return t.boot, t.base

    def missing(self, key) -> list[int]:
        t = self._tracks.get(key)
        return sorted(t.missing) if t else []
