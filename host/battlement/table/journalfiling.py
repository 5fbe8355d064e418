"""Filing a journal's inputs: from inputs_recent, where a batch writes them at the end of a table without
a key, to inputs_filed, under their game's key, in key order (journalschema.py: the view `inputs` reads
both, so no reader knows where a row is).

A batch's inputs go to inputs_recent, which has no key. With the key by game, each batch's rows of 100
tables went to 100 pages: 2.6 us an input more of the bridge's loop (the batch's inputs of 100 games,
150 a commit: 2.4 us inserted and 1.5 committed with the key, 1.0 and 0.3 without). They are filed under
their game once the table is quiet (journal.CHECKPOINT_IDLE), or FILE_STEP at a time after a commit while
FILE_AT wait: a stream that never pauses pays about 2 us an input for the filing, about what the key cost
(bench_journal: 0.97 of it in all); a burst files afterwards, in the quiet.
A reader of inputs_recent scans it, so it stays short: at most FILE_AT and a batch.
"""

from __future__ import annotations

import logging
import sqlite3
import time

from battlement.table.journalschema import INPUT_COLS

log = logging.getLogger("battlement.journal")

FILE_AT = 20_000
FILE_STEP = 2_000  # about 3 ms of the loop


class Filing:
    """A mixin of Journal (journal.py): its db, in_batch, last_write, errors, and recent (how many rows
    inputs_recent holds, as this journal wrote them: a hint, never a reader's answer)."""

    db: sqlite3.Connection
    in_batch: bool
    last_write: float
    errors: int
    recent: int
    IDLE: float  # seconds without a write that make the table quiet (journal.CHECKPOINT_IDLE)
    UNFILED = "inputs_recent"  # where a batch writes its inputs (bench_journal's baseline: "inputs_filed")

    def unfiled(self) -> int:
        (n,) = self.db.execute("SELECT COUNT(*) FROM inputs_recent").fetchone()
        return n

    def file_all(self) -> None:
        """Everything unfiled (at open: a game's replay and the lists then find every input by its key)."""
        self.recent = self.unfiled()
        while self.file(FILE_AT):
            pass

    def file(self, limit: int | None = None) -> int:
        """File up to limit (FILE_STEP) of the oldest unfiled inputs under their game (inputs_recent to inputs_filed, in
        key order), in a commit of their own: a crash leaves each row in one table, never both or neither.
        Between batches only. Returns how many moved (0: none waited, or SQLite refused: said in the log)."""
        if self.in_batch or self.recent <= 0 or self.db.in_transaction:  # (never inside another's transaction)
            return 0
        limit = limit or FILE_STEP
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT rowid FROM inputs_recent ORDER BY rowid LIMIT 1 OFFSET ?", (limit - 1,)).fetchone()
            upto = " WHERE rowid <= %d" % row[0] if row is not None else ""
            # OR IGNORE: a number filed already (none is written twice) must not keep the rest unfiled for ever
            filed = db.execute("INSERT OR IGNORE INTO inputs_filed (%s) SELECT %s FROM inputs_recent%s ORDER BY "
                               "game_id, n" % (INPUT_COLS, INPUT_COLS, upto)).rowcount
            moved = db.execute("DELETE FROM inputs_recent" + upto).rowcount
            db.execute("COMMIT")
        except sqlite3.Error as e:
            if db.in_transaction:
                db.execute("ROLLBACK")
            log.error("journal: filing inputs failed (%s); they stay where every reader finds them", e)
            return 0
        if filed != moved:
            self.errors += moved - filed
            log.error("journal: %d input(s) had the number of one filed before: the first kept", moved - filed)
        self.recent = self.recent - moved if row is not None else 0
        return moved

    def file_due(self, quiet: bool = False) -> int:
        """One step of filing if it is due: FILE_AT inputs wait, or (quiet: a look between throws) the table
        has been quiet CHECKPOINT_IDLE. Returns how many moved."""
        if self.recent >= FILE_AT or quiet and self.recent > 0 and time.monotonic() - self.last_write >= self.IDLE:
            return self.file()
        return 0
