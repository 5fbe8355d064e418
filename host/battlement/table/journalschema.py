"""The journal's schema: its tables, its version, the migrations of older journals, and the INSERTs.

The schema's version is PRAGMA user_version; an older journal is migrated when it is opened
(MIGRATIONS), in one transaction with its new version. The multi-row INSERTs a batch is written with
are built here from the tables' columns. Kept apart from journal.py, which writes and reads the games:
what the file looks like changes seldom and on its own (a new VERSION, one more step in MIGRATIONS).
"""

from __future__ import annotations

import json
import logging
import sqlite3

from battlement.errors import UserError
from battlement.table.tokens import new_code, weak

log = logging.getLogger("battlement.journal")

ROWS_PER_INSERT = 256  # rows of a batch written by one multi-row INSERT (well under SQLite's 32766 variables; a power of 2)
EVENT_COLS = "tbl, board, boot, seq, sensor, kind, value, object, outcome, at"
INPUT_COLS = "game_id, n, source, input, status, reason, at"
VERSION = 5  # the schema this code writes (PRAGMA user_version)

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    tbl TEXT NOT NULL,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    seed INTEGER NOT NULL,
    codes TEXT NOT NULL,          -- private-page code per side
    started REAL NOT NULL,
    finished REAL,
    winner TEXT,
    summary TEXT
);
-- A game's inputs, filed under their game (what replays and the host page read). Its key spreads a batch
-- of many tables' inputs over as many pages as games; a batch writes to inputs_recent instead, which
-- has no key (every row at its end), and Journal.file() moves the rows here in key order when the
-- table is quiet, or once FILE_AT wait. Read both as the view `inputs`.
CREATE TABLE IF NOT EXISTS inputs_filed (
    game_id INTEGER NOT NULL,
    n INTEGER NOT NULL,
    source TEXT NOT NULL,         -- sensor object, page, side page, timeout
    input TEXT NOT NULL,
    status TEXT NOT NULL,         -- pending (journalled: applied, or to apply on replay), illegal, undone
    reason TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (game_id, n)
);
CREATE TABLE IF NOT EXISTS inputs_recent (
    game_id INTEGER NOT NULL,
    n INTEGER NOT NULL,
    source TEXT NOT NULL,
    input TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    at REAL NOT NULL
);
-- Every input, filed or not: what every reader reads, and writes (the triggers) when it is not the journal.
CREATE VIEW IF NOT EXISTS inputs AS
    SELECT game_id, n, source, input, status, reason, at FROM inputs_filed
    UNION ALL SELECT game_id, n, source, input, status, reason, at FROM inputs_recent;
CREATE TRIGGER IF NOT EXISTS inputs_insert INSTEAD OF INSERT ON inputs BEGIN
    INSERT INTO inputs_recent (game_id, n, source, input, status, reason, at)
    VALUES (NEW.game_id, NEW.n, NEW.source, NEW.input, NEW.status, NEW.reason, NEW.at);
END;
CREATE TRIGGER IF NOT EXISTS inputs_update INSTEAD OF UPDATE ON inputs BEGIN
    UPDATE inputs_filed SET game_id=NEW.game_id, n=NEW.n, source=NEW.source, input=NEW.input,
        status=NEW.status, reason=NEW.reason, at=NEW.at WHERE game_id=OLD.game_id AND n=OLD.n;
    UPDATE inputs_recent SET game_id=NEW.game_id, n=NEW.n, source=NEW.source, input=NEW.input,
        status=NEW.status, reason=NEW.reason, at=NEW.at WHERE game_id=OLD.game_id AND n=OLD.n;
END;
CREATE TRIGGER IF NOT EXISTS inputs_delete INSTEAD OF DELETE ON inputs BEGIN
    DELETE FROM inputs_filed WHERE game_id=OLD.game_id AND n=OLD.n;
    DELETE FROM inputs_recent WHERE game_id=OLD.game_id AND n=OLD.n;
END;
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    tbl TEXT NOT NULL,
    board TEXT NOT NULL,
    boot INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    sensor TEXT NOT NULL,
    kind TEXT NOT NULL,
    value INTEGER NOT NULL,
    object TEXT,                  -- the game object, NULL if the sensor is not on the map
    outcome TEXT,                 -- input n, ignored, unmapped, illegal: reason
    at REAL NOT NULL
);
-- the host page's open questions about breaks a board could not time (few rows: found at start without a scan)
CREATE INDEX IF NOT EXISTS events_asked ON events (tbl) WHERE outcome = 'asked';
-- events a timing rule holds still (a few at most): played by the next bridge at start
CREATE INDEX IF NOT EXISTS events_held ON events (tbl) WHERE outcome = 'held';
-- every board heard (journalboards.py): the highest boot is what makes replays of older boots refused
CREATE TABLE IF NOT EXISTS boards (
    tbl TEXT NOT NULL,
    board TEXT NOT NULL,
    boot INTEGER NOT NULL,        -- the highest boot counter heard (protocol 3)
    firmware TEXT NOT NULL,       -- as its last hello said
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    PRIMARY KEY (tbl, board)
);
CREATE TABLE IF NOT EXISTS progress (
    tbl TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (tbl, key)
);
"""


def _strong_codes(db: sqlite3.Connection) -> None:
    """v0 -> v1: side codes were 6 characters (about 30 bits); unfinished games get 72-bit ones."""
    for gid, codes in db.execute("SELECT id, codes FROM games WHERE finished IS NULL").fetchall():
        old = json.loads(codes)
        new = {side: (new_code() if weak(code) else code) for side, code in old.items()}
        if new != old:
            db.execute("UPDATE games SET codes=? WHERE id=?", (json.dumps(new, sort_keys=True), gid))


def _blind_answers(db: sqlite3.Connection) -> None:
    """v1 -> v2: answers to blind questions are journalled from now on; one asked before may have been
    answered "no" without a trace, and a restart must not ask it again."""
    db.execute("UPDATE events SET outcome='asked (an answer was not journalled then)' WHERE outcome='asked' "
               "AND kind='blind'")


def _held_settled(db: sqlite3.Connection) -> None:
    """v2 -> v3: a held event's input was written under a later event (or the held ball was lost when the
    bridge stopped), its own row left "held". Held rows are played at start from now on: the old ones
    never are (their balls were played then, or lost then)."""
    db.execute("UPDATE events SET outcome='held (before schema 3: played under a later event, or lost)' "
               "WHERE outcome='held'")


def _boards(db: sqlite3.Connection) -> None:
    """v3 -> v4: the boards table (SCHEMA creates it) starts empty: the boots of protocol 2 were random
    numbers, never a counter, so nothing journalled before says which boot is newer."""


def _inputs_filed(db: sqlite3.Connection) -> None:
    """v4 -> v5, before SCHEMA: the inputs table is inputs_filed now, and `inputs` the view of it and
    inputs_recent (which SCHEMA then creates)."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='inputs'").fetchone():
        db.execute("ALTER TABLE inputs RENAME TO inputs_filed")


# version -> step that brings a journal of version-1 to it (in one transaction with the new user_version):
# BEFORE_SCHEMA's run before SCHEMA creates what is missing, MIGRATIONS' after
BEFORE_SCHEMA = {5: _inputs_filed}
MIGRATIONS = {1: _strong_codes, 2: _blind_answers, 3: _held_settled, 4: _boards}


def statements(script: str) -> list[str]:
    """A script's statements one by one (a trigger's body holds semicolons of its own)."""
    out, buf = [], ""
    for part in script.split(";"):
        buf += part + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n;"):
                out.append(buf.strip())
            buf = ""
    return out


def migrate(db: sqlite3.Connection, path: str) -> None:
    """Bring the journal to this schema (VERSION): create what is missing, then migrate an older one."""
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version > VERSION:
        raise UserError("journal %s was written by a newer Battlement (schema %d; this one knows up to %d): "
                        "upgrade, or give --journal another file" % (path, version, VERSION))
    fresh = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name='games'").fetchone()[0] == 0
    steps = [] if fresh else list(range(version + 1, VERSION + 1))
    db.execute("BEGIN IMMEDIATE")
    try:
        for v in steps:
            if v in BEFORE_SCHEMA:
                BEFORE_SCHEMA[v](db)
        for statement in statements(SCHEMA):  # one by one: executescript would commit first
            db.execute(statement)
        for v in steps:
            if v in MIGRATIONS:
                MIGRATIONS[v](db)
            log.info("journal %s migrated to schema %d", path, v)
        db.execute("PRAGMA user_version=%d" % VERSION)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def chunks(n: int) -> list[int]:
    """n rows as INSERTs of power-of-two sizes up to ROWS_PER_INSERT (71 = 64 + 4 + 2 + 1). A statement
    of every size n would fill sqlite3's cache of prepared statements (128) under overload, where
    batch sizes vary, and preparing a statement of 256 rows costs more than inserting them."""
    out = [ROWS_PER_INSERT] * (n // ROWS_PER_INSERT)
    n %= ROWS_PER_INSERT
    size = ROWS_PER_INSERT
    while n:
        while size > n:
            size >>= 1
        out.append(size)
        n -= size
    return out


_SQL: dict[tuple, str] = {}


def one_row(cols: str) -> str:
    """One row's placeholders for these columns: "(?,?,?)"."""
    return "(%s)" % ",".join("?" * (cols.count(",") + 1))


def insert_sql(name: str, cols: str, one: str, rows: int) -> str:
    key = (name, rows)
    sql = _SQL.get(key)
    if sql is None:
        sql = _SQL[key] = "INSERT INTO %s (%s) VALUES %s" % (name, cols, ",".join([one] * rows))
    return sql

