"""The hub's journal: a venue's night as an append-only log, from which its state is rebuilt (players.py).

Every entry is something said once (a player, a team, a tournament's set-up, a match put on a table, a
table's "ready", a result, a correction), kept as JSON in the order it came; nothing is updated or
deleted. A hub killed at any moment opens the file again and folds the same entries into the identical
state. A match's result is one row (a unique index on its match id): a bridge that resends a result it
never saw acknowledged finds it there, and append() says it was had already instead of adding it twice.
Beside the log, `counters` holds what the venue messages' counters need across a restart: the highest
counter taken from each sender, and the floor of the hub's own (protocol.py).

The file is kept with the table journal's care (table/journal.py, journallock.py): one hub a file (an
exclusive flock, released however the process ends), created 0600, a damaged file refused in one line
and left as it was, WAL, its schema's version in PRAGMA user_version. Unlike the table journal it runs
with synchronous=FULL: the hub acknowledges a result only once it is committed here, and the bridge
then stops sending it, so a commit must outlast a power cut, not only a killed process. It costs a
few fsyncs a match.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

from battlement.errors import UserError
from battlement.table.journallock import (
    JournalInUse,
    check_file,
    create_private,
    drop_lock,
    take_lock,
    unreadable,
)

VERSION = 1  # the schema this code writes (PRAGMA user_version)
KINDS = ("player", "team", "tournament", "assign", "ready", "result", "correct")
SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,           -- one of KINDS
    match TEXT,                   -- the match an entry is about (assign, ready, result, correct)
    body TEXT NOT NULL,           -- the entry, JSON
    at REAL NOT NULL
);
-- a match's result is taken once: a resend finds it here
CREATE UNIQUE INDEX IF NOT EXISTS one_result ON log (match) WHERE kind = 'result';
CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,        -- seen:<sender>@<table>: the highest counter taken. sent:<sender>: a floor
    n INTEGER NOT NULL
);
"""
_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class HubJournal:
    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            self._lock_fd: int | None = take_lock(path)
        except JournalInUse as e:  # its words name a bridge: this file is a hub's
            raise UserError(str(e).replace("another bridge", "another hub").replace("this one", "this hub")) from None
        db: sqlite3.Connection | None = None
        try:
            create_private(path)
            check_file(path)  # before anything writes it: a damaged file is refused and left as it was
            self.db = db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            _migrate(db, path)
        except BaseException as e:
            if db is not None:
                db.close()
            self._unlock()
            if isinstance(e, sqlite3.DatabaseError):
                raise unreadable(path, e) from None
            raise

    def append(self, kind: str, body: dict, match: str | None = None) -> int | None:
        """Journal one entry (committed when this returns); its id, or None for a result whose match
        has one already (the body is then not kept)."""
        if kind not in KINDS:
            raise ValueError("unknown hub journal entry %r" % kind)
        try:
            cur = self.db.execute("INSERT INTO log (kind, match, body, at) VALUES (?,?,?,?)",
                                  (kind, match, _JSON.encode(body), time.time()))
        except sqlite3.IntegrityError:
            return None
        return int(cur.lastrowid or 0)

    def result_of(self, match: str) -> dict | None:
        """The result journalled for a match, if any."""
        row = self.db.execute("SELECT body FROM log WHERE kind='result' AND match=?", (match,)).fetchone()
        return None if row is None else json.loads(row[0])

    def entries(self, after: int = 0) -> list[tuple[int, str, dict]]:
        """(id, kind, body) of every entry after id `after`, in the order they were journalled."""
        return [(i, k, json.loads(b)) for i, k, b in
                self.db.execute("SELECT id, kind, body FROM log WHERE id > ? ORDER BY id", (after,))]

    def counters(self, prefix: str) -> dict[str, int]:
        """name (without the prefix) -> n of the counters whose names start with prefix ("seen:", "sent:")."""
        return {name[len(prefix):]: n for name, n in
                self.db.execute("SELECT name, n FROM counters WHERE substr(name, 1, ?) = ?", (len(prefix), prefix))}

    def set_counters(self, values: dict[str, int]) -> None:
        """Raise these counters (name -> n; a counter never goes down), in one commit."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT INTO counters (name, n) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET "
                                "n=excluded.n WHERE excluded.n > counters.n", sorted(values.items()))

    def close(self) -> None:
        self.db.close()
        self._unlock()

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            drop_lock(self._lock_fd)
            self._lock_fd = None


def _migrate(db: sqlite3.Connection, path: str) -> None:
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version > VERSION:
        raise UserError("hub journal %s was written by a newer Battlement (schema %d; this one knows up to %d): "
                        "upgrade, or give the hub another journal" % (path, version, VERSION))
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("PRAGMA user_version=%d" % VERSION)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
