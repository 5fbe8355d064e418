"""One journal, one bridge; its schema version and migration; files only its owner can read."""

import json
import os
import sqlite3
import stat
import subprocess

import pytest
from battlement.errors import UserError
from battlement.table.journal import VERSION, Journal, JournalInUse
from battlement.table.maps import for_game
from battlement.table.session import Session
from support.bridgeproc import BATTLEMENT, ROOT

# The schema as it was before journals carried a version (user_version 0): what `battlement run` wrote.
SCHEMA_V0 = """
CREATE TABLE games (id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, game TEXT NOT NULL, options TEXT NOT NULL,
    seed INTEGER NOT NULL, codes TEXT NOT NULL, started REAL NOT NULL, finished REAL, winner TEXT, summary TEXT);
CREATE TABLE inputs (game_id INTEGER NOT NULL, n INTEGER NOT NULL, source TEXT NOT NULL, input TEXT NOT NULL,
    status TEXT NOT NULL, reason TEXT, at REAL NOT NULL, PRIMARY KEY (game_id, n));
CREATE TABLE events (id INTEGER PRIMARY KEY, tbl TEXT NOT NULL, board TEXT NOT NULL, boot INTEGER NOT NULL,
    seq INTEGER NOT NULL, sensor TEXT NOT NULL, kind TEXT NOT NULL, value INTEGER NOT NULL, object TEXT,
    outcome TEXT, at REAL NOT NULL);
CREATE TABLE progress (tbl TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tbl, key));
"""


def test_a_second_journal_on_the_same_file_is_refused_naming_the_file_and_the_pid(tmp_path):
    path = str(tmp_path / "j.sqlite")
    first = Journal(path)
    with pytest.raises(JournalInUse) as e:
        Journal(path)
    assert str(e.value) == ("journal %s is in use by another bridge (pid %d); stop that one, or give this one "
                            "its own --journal" % (path, os.getpid()))
    first.close()
    Journal(path).close()  # free again once the first is closed


def test_a_second_bridge_on_the_same_journal_gets_one_line_and_exits(bridge_process, tmp_path):
    journal = str(tmp_path / "shared.sqlite")
    first = bridge_process("--simulate", "--game", "ringo", journal=journal)
    second = subprocess.run([BATTLEMENT, "run", "--simulate", "--game", "ringo", "--port", "1", "--journal", journal],
                            check=False, cwd=str(ROOT), capture_output=True, text=True, timeout=30)
    assert second.returncode != 0
    assert second.stdout == ""
    assert second.stderr == ("battlement run: error: journal %s is in use by another bridge (pid %d); stop that "
                             "one, or give this one its own --journal\n" % (journal, first.proc.pid))
    assert first.state()["game"] == "ringo"  # the first one plays on


def test_journal_and_its_wal_are_only_for_their_owner(tmp_path):
    old = os.umask(0o022)
    try:
        j = Journal(str(tmp_path / "j.sqlite"))
        j.new_game("t", "ringo", {}, 1, {"attackers": "x"})
        for name in ("j.sqlite", "j.sqlite-wal"):  # the lock is the journal's own, no file of its own
            assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600, name
        j.close()
    finally:
        os.umask(old)


def test_a_new_journal_has_small_pages_so_a_batch_of_many_tables_writes_little(tmp_path):
    """PAGE_SIZE (1 KiB): a batch of events of 20 tables that have played a while dirties an inputs page
    per game, and the WAL takes each dirty page whole at commit: 0.8 KB an event with 1 KiB pages,
    1.8 KB with 4 KiB (and the journal's time an event half as much again as in runs; bench_journal)."""
    from battlement.link.messages import Event
    from battlement.table.journal import PAGE_SIZE

    path = str(tmp_path / "j.sqlite")
    j = Journal(path, checkpoint_thread=False)
    assert j.db.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 1024
    ids = [j.new_game("t%d" % g, "ringo", {}, 1, {}) for g in range(20)]
    seq = 0

    def batch(games):
        nonlocal seq
        j.begin()
        for e in range(80):
            g = games[e * len(games) // 80]
            seq += 1
            ev = Event("t%d" % g, "ring-5", 5, seq, "b", "presence", e % 2, 1000, 0)
            j.write_input(ids[g], "b5", {"t": "cell", "cell": "b5", "occupied": bool(e % 2)}, ("t%d" % g, ev, "b5"))
        j.commit()

    for k in range(400):  # each game's inputs on pages of their own: tables that have played a while
        batch([k % 20])
    j.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for _ in range(20):
        batch(list(range(20)))
    per_event = os.path.getsize(path + "-wal") / (20 * 80)
    j.close()
    assert per_event < 1200, "the WAL grew by %.0f bytes an event" % per_event


def test_a_journal_of_todays_schema_is_migrated_on_open_and_its_game_resumes(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V0)
    codes = {"attackers": "k7m2xq", "defenders": "p4hx9t"}
    db.execute("INSERT INTO games (tbl, game, options, seed, codes, started) VALUES "
               "('ringo', 'ringo', '{}', 7, ?, 0)", (json.dumps(codes),))
    db.execute("INSERT INTO games (tbl, game, options, seed, codes, started, finished, summary) VALUES "
               "('ringo', 'ringo', '{}', 8, ?, 0, 1, 'old game')", (json.dumps(codes),))
    moves = [{"t": "cell", "cell": "c5", "occupied": False}, {"t": "cell", "cell": "c4", "occupied": True}]
    for n, inp in enumerate(moves, 1):
        db.execute("INSERT INTO inputs VALUES (1, ?, 'sensor', ?, 'pending', NULL, 0)", (n, json.dumps(inp)))
    db.commit()
    db.close()
    os.chmod(path, 0o644)

    j = Journal(str(path))
    assert j.db.execute("PRAGMA user_version").fetchone()[0] == VERSION
    assert j.db.execute("PRAGMA page_size").fetchone()[0] == 4096  # it keeps the pages it was made with
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    s = Session(for_game("ringo"), j)
    assert s.match.view()["cells"]["c4"] == "attackers" and len(s.match.inputs) == 2  # the game goes on
    assert sorted(s.codes) == sorted(codes) and all(len(c) >= 12 for c in s.codes.values())  # 72-bit codes now
    finished = json.loads(j.db.execute("SELECT codes FROM games WHERE id=2").fetchone()[0])
    assert finished == codes  # history is left as it was
    j.close()
    j = Journal(str(path))  # opening again migrates nothing more
    assert j.open_game("ringo")["codes"] == s.codes
    j.close()


def test_a_journal_from_a_newer_battlement_is_refused_in_words(tmp_path):
    path = tmp_path / "new.sqlite"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=%d" % (VERSION + 1))
    db.close()
    with pytest.raises(UserError, match="written by a newer Battlement .schema %d; this one knows up to %d."
                       % (VERSION + 1, VERSION)):
        Journal(str(path))
    Journal(str(tmp_path / "other.sqlite")).close()


def test_a_refused_input_marks_its_own_event_only(tmp_path):
    """An input the rules refuse marks the event it came from "illegal: why" -- not the event of the
    same-numbered input of another table (it did, by matching "input n" over every event ever kept)."""
    from battlement.link.messages import Event

    j = Journal(str(tmp_path / "j.sqlite"))
    a, b = j.new_game("hall-a", "ringo", {}, 1, {}), j.new_game("hall-b", "ringo", {}, 1, {})
    ev = Event(None, "ring-5", 7, 1, "b", "presence", 1, 0, 0)
    for batched in (False, True):
        if batched:
            j.begin()
        na = j.write_input(a, "sensor b5", {"t": "lift"}, ("hall-a", ev, "b5"))
        nb = j.write_input(b, "sensor b5", {"t": "lift"}, ("hall-b", ev, "b5"))
        assert na == nb
        j.refuse(b, nb, "cell b5 is empty")
        if batched:
            j.commit()
        rows = dict(j.db.execute("SELECT tbl, outcome FROM events WHERE outcome LIKE ? OR outcome LIKE ?",
                                 ("input %d" % na, "illegal%")).fetchall()[-2:])
        assert rows == {"hall-a": "input %d" % na, "hall-b": "illegal: cell b5 is empty"}, (batched, rows)
        j.db.execute("UPDATE events SET outcome='done'")
    j.close()


def test_a_refused_input_is_kept_illegal_with_its_reason_batched_or_not(tmp_path):
    from battlement.link.messages import Event

    j = Journal(str(tmp_path / "j.sqlite"))
    g = j.new_game("hall-a", "ringo", {}, 1, {})
    for seq, batched in ((1, False), (2, True)):
        if batched:
            j.begin()
        n = j.write_input(g, "sensor b5", {"t": "lift"}, ("hall-a", Event(None, "ring-5", 7, seq, "b", "presence",
                                                                            1, 0, 0), "b5"))
        j.refuse(g, n, "cell b5 is empty")
        if batched:
            j.commit()
        row = j.db.execute("SELECT status, reason FROM inputs WHERE game_id=? AND n=?", (g, n)).fetchone()
        assert row == ("illegal", "cell b5 is empty"), (batched, row)
    j.close()


def test_batches_of_every_size_share_a_few_prepared_inserts(tmp_path):
    """Under overload the bridge's batches come in every size. A multi-row INSERT of each size was a
    statement of its own: more than sqlite3's cache of 128 prepared statements keeps, and preparing
    one cost five times what inserting its rows does (3.2 against 0.6 us a row)."""
    from battlement.link.messages import Event

    j = Journal(str(tmp_path / "j.sqlite"))
    g = j.new_game("hall-a", "ringo", {}, 1, {})
    shapes = set()
    j.db.set_trace_callback(lambda sql: shapes.add((sql.split()[2], sql.count("),(") + 1))
                            if sql.startswith("INSERT") else None)
    seq = 0
    for size in range(1, 301):
        j.begin()
        for _ in range(size):
            seq += 1
            j.write_input(g, "sensor b5", {"t": "lift", "k": seq},
                          ("hall-a", Event(None, "ring-5", 7, seq, "b", "presence", 1, 0, 0), "b5"))
        j.commit()
    j.db.set_trace_callback(None)
    assert len(shapes) <= 20, sorted(shapes)  # 9 sizes (256, 128, ... 1) for each of the two tables
    kept = [json.loads(i)["k"] for (i,) in j.db.execute("SELECT input FROM inputs WHERE game_id=? ORDER BY n", (g,))]
    assert kept == list(range(1, seq + 1))
    assert j.db.execute("SELECT COUNT(*), MIN(seq), MAX(seq) FROM events").fetchone() == (seq, 1, seq)
    j.close()
