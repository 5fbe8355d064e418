"""The journal: every sensed event and every input is in SQLite before it is applied.

So a bridge killed at any moment restarts into the identical game: the unfinished
game of each table is rebuilt by replaying its inputs (undone and refused ones
skipped). Finished games stay as history with a one-line summary. What a table keeps
between games (a game's progress, e.g. padlocks ticked) lives in `progress`.

WAL mode with synchronous=NORMAL: a commit is in the OS before we go on, which
survives a killed process without an fsync per ball; the WAL is checkpointed (and
fsynced) by a background thread when the table has been quiet for a moment (at
the latest every 30 s), so the fsync does not land in the middle of a throw. Under a stream
that never pauses, a checkpoint beside the writer never copies all of the WAL, and SQLite starts
the WAL over only after one that did: the bridge then checkpoints every 2 s and, when writes went on
meanwhile, once more with its writes held (see Bridge._checkpoints), which copies only what came
during the first.
A sensed event and the input it means are one commit; an input is recorded as
"pending" and stays so once applied: replaying it gives the same result, and a
refused one is marked "illegal" with its reason. An event a timing rule holds (the tie
window) is on its own row, "held", until the input it becomes settles that row ("input n")
in the input's own commit; a bridge that stops first leaves it held for the next to play.

A batch's inputs are filed under their game later (journalfiling.py); readers read the view `inputs`.
One journal, one bridge: opening takes an exclusive lock on the file itself, the files are created 0600,
and a damaged file is refused in one line, never written (journallock.py). The schema's version is
PRAGMA user_version; an older journal is migrated when it is opened (journalschema.py, which also
builds the batch's multi-row INSERTs).
A row SQLite cannot store (an integer of 2^63 or more) is stored with that number as
text rather than stopping the batch it is in: the journal keeps what came.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from itertools import chain

# JournalInUse and VERSION are not used here: they are imported from here, as before the split (noqa).
from battlement.table.journalboards import BoardRecords
from battlement.table.journalfiling import Filing
from battlement.table.journallock import (
    JournalInUse,  # noqa: F401  (what Journal() raises when another bridge has the file)
    check_file,
    create_private,
    drop_lock,
    take_lock,
    unreadable,
)
from battlement.table.journalschema import (
    EVENT_COLS,
    INPUT_COLS,
    VERSION,  # noqa: F401  (the schema this code writes)
    chunks,
    insert_sql,
    migrate,
    one_row,
)
from battlement.table.matchlog import ByInput

log = logging.getLogger("battlement.journal")

CHECKPOINT_EVERY = 2.0  # seconds between looks at the WAL
CHECKPOINT_IDLE = 0.5  # checkpoint once the table has been quiet this long...
CHECKPOINT_LATEST = 30.0  # ...or at the latest after this long, busy or not...
WAL_BUSY = 16 << 20  # ...or whenever the WAL file is larger than this: a stream that never pauses
WAL_HOLD = 1000  # pages (SQLite's own autocheckpoint): a WAL this long that a checkpoint could not finish
# Pages of 1 KiB, not SQLite's 4 KiB: a batch of many tables' events writes one inputs page per game (the
# table's key is (game_id, n)), and the WAL takes each dirty page whole at commit. Measured (make bench,
# "journal"): a batch of 75 events spread over 20 games cost 46 us an event with 4 KiB pages (2.0 KB of
# WAL), against 30 us in runs of two games; with 1 KiB pages 33 us (0.8 KB) against 28 us. Set on a new
# journal only: an existing one keeps its pages (SQLite changes them only by rewriting the file).
PAGE_SIZE = 1024
_INPUT_JSON = json.JSONEncoder(sort_keys=True)  # one encoder, not one built per json.dumps(sort_keys=True) call
SQLITE_INT = (-(1 << 63), (1 << 63) - 1)  # what an SQLite INTEGER holds


class Journal(BoardRecords, Filing):
    IDLE = CHECKPOINT_IDLE  # quiet enough to file the inputs (Filing.file_due)

    def __init__(self, path: str, checkpoint_thread: bool = True):
        """checkpoint_thread: checkpoint from a thread of its own (False: the owner calls checkpoint())."""
        self.path = path
        self._lock_fd: int | None = None
        if path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._lock_fd = take_lock(path)
        db: sqlite3.Connection | None = None
        try:
            if self._lock_fd is not None:
                create_private(path)
                check_file(path)  # before anything writes it: a damaged file is refused and left as it was
            self.db = db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA page_size=%d" % PAGE_SIZE)  # before the first table: a new file only
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA wal_autocheckpoint=0")  # the checkpointer does it
            # a WAL started over is cut back to this: its size then tells how much it holds again
            self.db.execute("PRAGMA journal_size_limit=%d" % WAL_BUSY)
            migrate(self.db, self.path)
        except BaseException as e:
            if db is not None:
                db.close()
            self._unlock()
            if isinstance(e, sqlite3.DatabaseError):  # what the check could not see: one line all the same
                raise unreadable(path, e) from None
            raise
        self.errors = 0  # rows that needed storing another way (_flush), or filing (file)
        self._beat_written: dict[tuple[str, str], float] = {}  # BoardRecords': boards' last_seen, when written
        self._next_n: dict[int, int] = {}
        self.in_batch = False
        # Rows of the open batch, inserted at commit by a few multi-row INSERTs: each statement
        # releases and retakes the GIL (which the MQTT thread is waiting for), so two per event cost more
        # than the insert itself. Nothing is lost: the commit is what makes a batch durable either way.
        self._events: list[list] = []
        self._inputs: list[list] = []
        self._last_input: tuple | None = None  # (game_id, n, its event's batch row or id) of the last input
        self._text = ByInput(_INPUT_JSON.encode)  # an input's JSON, as the inputs table keeps it
        self.last_write = 0.0  # monotonic time of the last journalled input or event
        self._stop = threading.Event()
        self._checkpointer = None
        self._ckpt_db: sqlite3.Connection | None = None
        self._ckpt_lock = threading.Lock()  # a checkpoint in a worker thread and close() never overlap
        self._ckpt_done = time.monotonic()
        self.commits = 0
        self.wal_frames = 0  # the WAL's length at the last checkpoint, in pages...
        self.wal_unfinished = False  # ...and whether it left some of it (writes went on meanwhile)
        self.checkpoints = {"checkpoints": 0, "checkpoints-held": 0, "checkpoint-held-ms": 0}
        self.file_all()  # what the last run left unfiled, before any reader looks
        if path != ":memory:" and checkpoint_thread:
            self._checkpointer = threading.Thread(target=self._checkpoint_loop, name="journal-checkpoint", daemon=True)
            self._checkpointer.start()

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            drop_lock(self._lock_fd)
            self._lock_fd = None

    def begin(self) -> None:
        """Start a batch: the bridge journals a burst of events, then commits once before any effect leaves."""
        if not self.in_batch:
            self.db.execute("BEGIN")
            self.in_batch = True

    def commit(self) -> None:
        if self.in_batch:
            if self._inputs:
                self.last_write = time.monotonic()  # the batch's inputs (once a batch, not once an input)
            self._flush()
            self.in_batch = False
            self.db.execute("COMMIT")
            self.commits += 1

    def rollback(self) -> None:
        """Give up the open batch (its commit failed): the next batch starts clean."""
        self._events.clear()
        self._inputs.clear()
        self._next_n.clear()  # numbers taken by the lost rows are free again
        self.in_batch = False
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self.recent = self.unfiled()

    def _flush(self) -> None:
        """Write the batch's buffered rows (before anything reads or updates them, and at commit)."""
        self.recent += len(self._inputs)
        for name, cols, rows in (("events", EVENT_COLS, self._events), (self.UNFILED, INPUT_COLS, self._inputs)):
            if not rows:
                continue
            one = one_row(cols)
            i = 0
            for size in chunks(len(rows)):
                chunk = rows[i:i + size]
                i += size
                try:
                    self.db.execute(insert_sql(name, cols, one, size), list(chain.from_iterable(chunk)))
                except (OverflowError, sqlite3.Error):  # one row SQLite refuses: find it, keep the others
                    for row in chunk:
                        self._insert_one(name, cols, one, row)
            rows.clear()

    def _insert_one(self, name: str, cols: str, one: str, row: list) -> None:
        sql = insert_sql(name, cols, one, 1)
        try:
            self.db.execute(sql, row)
            return
        except OverflowError:  # a number of 2^63 or more: kept as its digits (a blob: as text it would be rounded)
            lo, hi = SQLITE_INT
            fixed = [str(v).encode() if isinstance(v, int) and not lo <= v <= hi else v for v in row]
            self.errors += 1
            log.warning("journal: %s row with a number out of SQLite's range stored as its digits: %r", name, row)
        except sqlite3.Error as e:  # a statement error leaves the rest of the batch as it was
            self.errors += 1
            log.error("journal: %s row refused by SQLite (%s), not kept: %r", name, e, row)
            return
        self.db.execute(sql, fixed)

    def checkpoint(self, now_anyway: bool = False) -> bool:
        """One look at the WAL (from any one thread at a time): checkpoint it if the table is quiet, it
        has waited CHECKPOINT_LATEST, or the WAL is over WAL_BUSY (now_anyway: at once). True if it did;
        wal_unfinished then says whether it left some of the WAL."""
        now = time.monotonic()
        if (not now_anyway and now - self.last_write < CHECKPOINT_IDLE
                and now - self._ckpt_done < CHECKPOINT_LATEST and self._wal_size() <= WAL_BUSY):
            return False  # a throw is under way: do not compete with it for the disk
        with self._ckpt_lock:
            if self._stop.is_set():
                return False
            commits = self.commits
            if self._ckpt_db is None:
                self._ckpt_db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                _busy, frames, copied = self._ckpt_db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error:
                return False  # busy now: the next round will do it
        # what it reports is of the WAL as it began: a commit during it left more
        self.wal_frames, self.wal_unfinished = frames, frames != copied or self.commits != commits
        self.checkpoints["checkpoints"] += 1
        self._ckpt_done = now
        return True

    def _wal_size(self) -> int:
        try:
            return os.path.getsize(self.path + "-wal")
        except OSError:
            return 0

    def _checkpoint_loop(self) -> None:
        while not self._stop.wait(CHECKPOINT_EVERY):
            try:
                self.checkpoint()
            except Exception:
                log.exception("journal checkpoint failed; trying again in %.0f s", CHECKPOINT_EVERY)

    def close(self) -> None:
        self._stop.set()
        if self._checkpointer:
            self._checkpointer.join(5)
        with self._ckpt_lock:
            if self._ckpt_db is not None:
                self._ckpt_db.close()
                self._ckpt_db = None
        self.db.close()
        self._unlock()

    # --- games ---------------------------------------------------------------------

    def new_game(self, table: str, game: str, options: dict, seed: int, codes: dict) -> int:
        cur = self.db.execute(
            "INSERT INTO games (tbl, game, options, seed, codes, started) VALUES (?,?,?,?,?,?)",
            (table, game, json.dumps(options, sort_keys=True), seed, json.dumps(codes, sort_keys=True), time.time()),
        )
        return int(cur.lastrowid or 0)

    def open_game(self, table: str) -> dict | None:
        """The table's unfinished game (the latest), with its replayable inputs, or None."""
        self._flush()
        row = self.db.execute(
            "SELECT id, game, options, seed, codes FROM games WHERE tbl=? AND finished IS NULL ORDER BY id DESC LIMIT 1",
            (table,),
        ).fetchone()
        if row is None:
            return None
        gid, game, options, seed, codes = row
        inputs = [
            (n, source, json.loads(inp), status)
            for n, source, inp, status in self.db.execute(
                "SELECT n, source, input, status FROM inputs WHERE game_id=? AND status IN ('ok', 'pending') ORDER BY n",
                (gid,),
            )
        ]
        return {"id": gid, "game": game, "options": json.loads(options), "seed": seed,
                "codes": json.loads(codes), "inputs": inputs}

    def previous_game(self, table: str, current: int) -> dict | None:
        """The table's latest game left unfinished for a new one ("abandoned"), other than `current`:
        the one the "resume-previous" action takes up again (id, game, summary, started), or None."""
        self._flush()
        row = self.db.execute(
            "SELECT id, game, summary, started FROM games WHERE tbl=? AND id<>? AND winner IS NULL "
            "AND summary LIKE 'abandoned%' ORDER BY finished DESC, id DESC LIMIT 1", (table, current)).fetchone()
        return None if row is None else dict(zip(("id", "game", "summary", "started"), row))

    def set_aside(self, table: str | None = None) -> list[dict]:
        """Every game left unfinished for another ("abandoned"), the latest set aside first: what "Resume this
        game" and `battlement run --resume ID` take up again (last: when its newest input came; inputs: played)."""
        self._flush()
        rows = self.db.execute(
            "SELECT id, tbl, game, summary, started, (SELECT MAX(at) FROM inputs WHERE game_id=games.id), "
            "(SELECT COUNT(*) FROM inputs WHERE game_id=games.id AND status IN ('ok', 'pending')) FROM games "
            "WHERE (? IS NULL OR tbl=?) AND winner IS NULL AND summary LIKE 'abandoned%' "
            "ORDER BY finished DESC, id DESC", (table, table))
        keys = ("id", "table", "game", "summary", "started", "last", "inputs")
        return [dict(zip(keys, r)) for r in rows]

    def reopen(self, game_id: int) -> None:
        """An abandoned game is unfinished again: open_game() (and so the next start) replays it."""
        self.db.execute("UPDATE games SET finished=NULL, winner=NULL, summary=NULL WHERE id=?", (game_id,))

    def finish(self, game_id: int, winner: str | None, summary: str) -> None:
        self.db.execute(
            "UPDATE games SET finished=?, winner=?, summary=? WHERE id=? AND finished IS NULL",
            (time.time(), winner, summary, game_id),
        )

    def history(self, table: str | None = None, limit: int = 20) -> list[dict]:
        self._flush()
        q = "SELECT id, tbl, game, started, finished, winner, summary FROM games WHERE finished IS NOT NULL"
        args: tuple = ()
        if table:
            q += " AND tbl=?"
            args = (table,)
        q += " ORDER BY id DESC LIMIT %d" % int(limit)
        keys = ("id", "table", "game", "started", "finished", "winner", "summary")
        return [dict(zip(keys, r)) for r in self.db.execute(q, args)]

    # --- inputs --------------------------------------------------------------------

    def _n(self, game_id: int) -> int:
        if game_id not in self._next_n:
            (n,) = self.db.execute("SELECT COALESCE(MAX(n), 0) FROM inputs WHERE game_id=?", (game_id,)).fetchone()
            self._next_n[game_id] = int(n)
        self._next_n[game_id] += 1
        return self._next_n[game_id]

    def write_input(self, game_id: int, source: str, inp: dict, event=None, held=()) -> int:
        """Record an input (and the sensed event it came from) as pending, in one commit, before it is
        applied; returns its number in the game. held: the events a timing rule held that it stands for,
        (table, board, boot, seq) each: their own rows say "input n" from the same commit."""
        n = self._n(game_id)
        now = time.time()
        own = (event is not None or bool(held)) and not self.in_batch  # the events and their input: one commit
        if own:
            self.begin()
        ref = None
        if event is not None:
            table, ev, obj = event
            ref = self._insert_event(table, ev, obj, "input %d" % n, now)
        for key in held:
            row = self.settle_held(key, "input %d" % n)
            ref = row if ref is None else ref
        self._last_input = (game_id, n, ref)
        row = [game_id, n, source, self._text(inp), "pending", None, now]
        if self.in_batch:
            self._inputs.append(row)  # last_write: at the commit
        else:
            self.last_write = time.monotonic()
            self.db.execute(insert_sql(self.UNFILED, INPUT_COLS, one_row(INPUT_COLS), 1), row)
            self.recent += 1
        if own:
            self.commit()
        return n

    def refuse(self, game_id: int, n: int, reason: str) -> None:
        """The rules refused input n: it is skipped on replay, and its event says why."""
        outcome = "illegal: " + reason
        last = self._last_input
        ref = last[2] if last is not None and last[:2] == (game_id, n) else None
        # The event of the input just written: its row still in the batch, or its table's newest. (An UPDATE by
        # outcome scanned every event ever journalled, once per refused input: under overload, with
        # inputs refused for the events lost, it took most of the bridge's time; and it marked the
        # same-numbered input's event of every other table and game too.)
        pending = isinstance(ref, list) and bool(self._events) and self._events[-1] is ref
        if pending and isinstance(ref, list):
            ref[8] = outcome  # written with the batch
        self.settle(game_id, n, "illegal", reason)
        if ref is not None and not pending:  # already written: the newest row of its table so numbered
            self.db.execute("UPDATE events SET outcome=? WHERE id=(SELECT id FROM events WHERE tbl=? AND outcome=? "
                            "ORDER BY id DESC LIMIT 1)", (outcome, ref[0], "input %d" % n))
        elif not pending:  # not the input just written (a replay): its event by its outcome
            self.db.execute("UPDATE events SET outcome=? WHERE outcome=?", (outcome, "input %d" % n))

    def settle(self, game_id: int, n: int, status: str, reason: str | None = None) -> None:
        rows = self._inputs
        if rows and rows[-1][0] == game_id and rows[-1][1] == n:
            # the input just written, still in the batch: written settled. (A flush and an UPDATE cut the
            # batch's multi-row INSERTs into pieces at every refused input: under overload, with inputs
            # refused for the events lost, the journal's cost an event doubled.)
            rows[-1][4], rows[-1][5] = status, reason
            return
        self._flush()
        for name in ("inputs_recent", "inputs_filed"):  # (the view's trigger would look in both)
            if self.db.execute("UPDATE %s SET status=?, reason=? WHERE game_id=? AND n=?" % name,
                               (status, reason, game_id, n)).rowcount:
                return

    def undo_last(self, game_id: int) -> tuple[int, dict] | None:
        """Mark the last applied input undone; returns (its number, it) (None if there is none).
        It stays in the journal, as undone, and is skipped on replay."""
        self._flush()
        row = self.db.execute(
            "SELECT n, input FROM inputs WHERE game_id=? AND status IN ('ok', 'pending') ORDER BY n DESC LIMIT 1",
            (game_id,),
        ).fetchone()
        if row is None:
            return None
        self.settle(game_id, row[0], "undone")
        return row[0], json.loads(row[1])

    def counts(self, game_id: int) -> dict[str, int]:
        self._flush()
        return dict(self.db.execute("SELECT status, COUNT(*) FROM inputs WHERE game_id=? GROUP BY status", (game_id,)))

    # --- sensed events -----------------------------------------------------------------

    def _insert_event(self, table: str, ev, obj: str | None, outcome: str | None, now: float) -> list:
        """Returns the row (waiting in the batch, or written)."""
        row = [table, ev.board, ev.boot, ev.seq, ev.sensor, ev.kind, ev.value, obj, outcome, now]
        if self.in_batch:
            self._events.append(row)
        else:
            self.db.execute(insert_sql("events", EVENT_COLS, one_row(EVENT_COLS), 1), row)
        return row

    def write_event(self, table: str, ev, obj: str | None, outcome: str | None = None) -> None:
        """A sensed event that became no input (unmapped, ignored, paused), or none yet ("held")."""
        self.last_write = time.monotonic()
        self._insert_event(table, ev, obj, outcome, time.time())

    def settle_held(self, key: tuple, outcome: str) -> list:
        """A held event's own row (key: table, board, boot, seq) says what became of it: "input n", or
        why it was not played. Returns the row while it waits in the batch, else [table] (refuse() needs it)."""
        table, board, boot, seq = key
        for row in reversed(self._events):
            if row[8] == "held" and row[:4] == [table, board, boot, seq]:
                row[8] = outcome
                return row
        self.db.execute("UPDATE events SET outcome=? WHERE tbl=? AND outcome='held' AND board=? AND boot=? AND seq=?",
                        (outcome, table, board, boot, seq))
        return [table]

    def held_events(self, table: str) -> list[tuple]:
        """The table's events a timing rule holds still, oldest first: (board, boot, seq, kind, value,
        object, at): what a bridge that stopped inside the window left for the next one to play."""
        self._flush()
        return self.db.execute("SELECT board, boot, seq, kind, value, object, at FROM events WHERE tbl=? AND "
                               "outcome='held' ORDER BY id", (table,)).fetchall()

    def drop_held(self, table: str, outcome: str) -> None:
        """Every event the table holds still is settled, not played (its game was set aside)."""
        self._flush()
        self.db.execute("UPDATE events SET outcome=? WHERE tbl=? AND outcome='held'", (outcome, table))

    def last_input_time(self, game_id: int) -> float:
        """When the game's newest input was journalled (its start if none; wall clock): a turn's
        timeout counts from there across a restart."""
        self._flush()
        (at,) = self.db.execute("SELECT COALESCE((SELECT MAX(at) FROM inputs WHERE game_id=?), "
                                "(SELECT started FROM games WHERE id=?), 0)", (game_id, game_id)).fetchone()
        return float(at)

    def recent_events(self, rows: int = 50_000) -> dict[tuple[str, str, int], set[int]]:
        """(table, board, boot) -> seqs journalled, over the last `rows` events: what a restarted
        bridge must not apply again when a board resends what it never saw acknowledged."""
        self._flush()
        out: dict[tuple[str, str, int], set[int]] = {}
        for tbl, board, boot, seq in self.db.execute(
                "SELECT tbl, board, boot, seq FROM events WHERE id > (SELECT COALESCE(MAX(id), 0) FROM events) - ?",
                (rows,)):
            out.setdefault((tbl, board, boot), set()).add(seq)
        return out

    def open_questions(self, table: str, game_id: int, keep: int) -> list[tuple]:
        """The last `keep` blind breaks asked on the host page since game `game_id` began and not
        answered, oldest first: (board, boot, seq, sensor, value, object). A "yes" is answered by the
        ball's own event (same board, boot and seq), journalled in one commit with its input: a crash
        before the question is marked answered still asks nothing twice."""
        self._flush()
        asked = self.db.execute(
            "SELECT id, board, boot, seq, sensor, value, object FROM events WHERE tbl=? AND outcome = 'asked' "
            "AND kind='blind' AND at >= (SELECT started FROM games WHERE id=?) ORDER BY id DESC LIMIT ?",
            (table, game_id, keep)).fetchall()[::-1]
        if not asked:
            return []
        # one pass over what came after the oldest of them (not one per question)
        seqs = sorted({row[3] for row in asked})
        balls = set(self.db.execute(
            "SELECT board, boot, seq FROM events WHERE id > ? AND tbl=? AND kind<>'blind' AND seq IN (%s)"
            % ",".join("?" * len(seqs)), (asked[0][0], table, *seqs)))
        return [row[1:] for row in asked if row[1:4] not in balls]

    def close_question(self, table: str, board: str, boot: int, seq: int, outcome: str) -> None:
        """A blind break's question is settled (answered, or given up): it is not asked again."""
        self._flush()
        self.db.execute("UPDATE events SET outcome=? WHERE tbl=? AND board=? AND boot=? AND seq=? AND kind='blind' "
                        "AND outcome='asked'", (outcome, table, board, boot, seq))

    # --- progress (padlocks) ----------------------------------------------------------

    def get_progress(self, table: str) -> dict:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM progress WHERE tbl=?", (table,))}

    def set_progress(self, table: str, key: str, value) -> None:
        self.db.execute(
            "INSERT INTO progress (tbl, key, value) VALUES (?,?,?) ON CONFLICT(tbl, key) DO UPDATE SET value=excluded.value",
            (table, key, json.dumps(value, sort_keys=True)),
        )
