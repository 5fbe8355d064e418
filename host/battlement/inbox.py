"""Exactly-once event intake shared by both transports: dedupe by (board, boot, seq), find gaps.

A board numbers its events 1, 2, 3... afresh at every boot (new boot id) and
keeps each one in an outbox until the host acknowledges it (cumulative `evack`),
resending after a reconnect. So the host sees duplicates (resends of events it
already has) and, on a lossy link, gaps that a later resend may fill.

Per (link key, board) the inbox keeps the current boot, the highest seq seen and
the seqs still missing below it. The first event of a boot sets the baseline: a
board resends from its oldest unacknowledged event, so anything earlier was
acknowledged before (by an earlier run of the host) and is not a gap.
A missing seq that has not arrived GAP_WINDOW events later is given up as lost,
so the cumulative acknowledgement can move on.
"""

from __future__ import annotations

NEW = "new"  # first time seen: apply it
LATE = "late"  # filled an earlier gap: apply it
DUP = "dup"  # already applied: drop it (counted as stale-seq)

GAP_WINDOW = 256
PAST_BOOTS = 4  # earlier boots remembered per board


class _Track:
    __slots__ = ("base", "boot", "high", "missing", "since")

    def __init__(self, boot: int):
        self.boot = boot
        self.base = -1  # every seq <= base has arrived (or was given up); -1: no event yet
        self.high = -1
        self.missing: set[int] = set()
        self.since = 0  # when this boot last became current (for forgetting the oldest)


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
        self._clock = 0

    def _count(self, reason: str, n: int = 1) -> None:
        self.counters[reason] = self.counters.get(reason, 0) + n

    def boot(self, key) -> int | None:
        t = self._tracks.get(key)
        return t.boot if t else None

    def hello(self, key, boot: int) -> bool:
        """Record a board's boot id; a new boot resets its sequence. Returns True if the boot is new."""
        t = self._tracks.get(key)
        if t is not None and t.boot == boot:
            return False
        # Keep a few earlier boots: a late hello of an earlier boot (frames reordered on the
        # way) must find that boot's record again, or its events would be applied twice.
        past = self._past.setdefault(key, {})
        if t is not None:
            past[t.boot] = t
            while len(past) > PAST_BOOTS:
                del past[min(past, key=lambda b: past[b].since)]
        again = past.pop(boot, None)
        self._clock += 1
        self._tracks[key] = again or _Track(boot)
        self._tracks[key].since = self._clock
        return again is None

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
                t.missing.update(range(lo, seq))
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
            expired = [s for s in t.missing if s <= floor]
            if expired:
                t.missing.difference_update(expired)
                self._count("lost", len(expired))
        t.base = (min(t.missing) - 1) if t.missing else t.high
        return verdict, gap

    def acked(self, key) -> tuple[int, int] | None:
        """(boot, seq) to acknowledge cumulatively for board `key`, or None before its first event."""
        t = self._tracks.get(key)
        if t is None or t.base < 0:
            return None
        return t.boot, t.base

    def missing(self, key) -> list[int]:
        t = self._tracks.get(key)
        return sorted(t.missing) if t else []
