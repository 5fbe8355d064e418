"""The journal's record of every board heard: its table, id, highest boot, firmware, first and last seen.

A board's boot is a counter it raises in flash at every boot (protocol 3, docs/protocol.md "Boot counter"),
and the host refuses the frames of a signing board from any boot below the highest it has heard. This
record is what makes that hold across restarts: it is written with the hello's batch (the commit that
makes that boot's first events durable), and a bridge starting hands it to its transports
(Transport.recall). Boots only go up here, whatever order hellos come in. last_seen follows the board's
beats, written at most once a minute (a beat every 5 s per board would be a write each).

A mixin of Journal (journal.py): it uses nothing but self.db, so board_records also runs on a read-only
connection (`battlement boards` reads beside a running bridge).
"""

from __future__ import annotations

import sqlite3
import time

BEAT_EVERY = 60.0  # seconds: last_seen from beats is written at most this often per board
KEYS = ("table", "board", "boot", "firmware", "first_seen", "last_seen")


class BoardRecords:
    db: sqlite3.Connection
    _beat_written: dict[tuple[str, str], float]  # (table, board) -> when its last_seen was last written

    def board_hello(self, table: str, board: str, boot: int, firmware: str) -> None:
        """A board's hello was taken: its boot (kept if higher), its firmware, when it was seen."""
        now = time.time()
        self.db.execute(
            "INSERT INTO boards (tbl, board, boot, firmware, first_seen, last_seen) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT(tbl, board) DO UPDATE SET boot=max(boot, excluded.boot), firmware=excluded.firmware, "
            "last_seen=excluded.last_seen", (table, board, boot, firmware, now, now))
        self._beat_written[(table, board)] = time.monotonic()

    def board_beat(self, table: str, board: str) -> None:
        """A board's beat: its last_seen, written at most every BEAT_EVERY (a board never heard is not added)."""
        now = time.monotonic()
        if now - self._beat_written.get((table, board), -BEAT_EVERY) >= BEAT_EVERY:
            self._beat_written[(table, board)] = now
            self.db.execute("UPDATE boards SET last_seen=? WHERE tbl=? AND board=?", (time.time(), table, board))

    def board_records(self) -> list[dict]:
        """Every board heard: {table, board, boot (the highest), firmware, first_seen, last_seen (unix s)}."""
        rows = self.db.execute("SELECT tbl, board, boot, firmware, first_seen, last_seen FROM boards "
                               "ORDER BY tbl, board").fetchall()
        return [dict(zip(KEYS, r)) for r in rows]
