"""The journal's record of every board heard (Journal.board_records): the highest boot survives a restart,
whatever order hellos come in, so a replay of an older boot stays refused; beats only move last_seen, and
at most once a minute; a journal of the schema before boards were recorded gains an empty record."""

import sqlite3
import time

from battlement.table import journalboards
from battlement.table.journal import VERSION, Journal


def test_each_boards_highest_boot_is_kept_across_reopening(tmp_path):
    path = str(tmp_path / "j.sqlite")
    j = Journal(path, checkpoint_thread=False)
    t0 = time.time()
    j.begin()
    j.board_hello("hall-1", "tower-1", 9, "0.1.0")
    j.board_hello("hall-1", "tower-1", 5, "0.1.1")  # an older boot's hello, late (an unsigned board's)
    j.board_hello("hall-2", "tower-1", 2, "0.1.0")  # the same id on another table is another board
    j.commit()
    j.close()
    j = Journal(path, checkpoint_thread=False)
    records = j.board_records()
    j.close()
    assert [(r["table"], r["board"], r["boot"], r["firmware"]) for r in records] == [
        ("hall-1", "tower-1", 9, "0.1.1"), ("hall-2", "tower-1", 2, "0.1.0")]
    assert all(t0 - 1 <= r["first_seen"] <= r["last_seen"] <= time.time() for r in records)


def test_beats_move_last_seen_at_most_once_a_minute(tmp_path, monkeypatch):
    j = Journal(str(tmp_path / "j.sqlite"), checkpoint_thread=False)
    try:
        j.board_hello("hall-1", "tower-1", 3, "0.1.0")
        seen = j.board_records()[0]["last_seen"]
        j.board_beat("hall-1", "tower-1")  # just after its hello: nothing written
        j.board_beat("hall-1", "ghost")  # never said hello: not added
        assert j.board_records()[0]["last_seen"] == seen and len(j.board_records()) == 1
        monkeypatch.setattr(journalboards.time, "monotonic", lambda: time.monotonic_ns() / 1e9 + 61)
        j.board_beat("hall-1", "tower-1")
        (r,) = j.board_records()
        assert r["last_seen"] > seen and r["boot"] == 3
    finally:
        j.close()


def test_a_journal_from_before_boards_were_recorded_gains_an_empty_record(tmp_path):
    path = str(tmp_path / "old.sqlite")
    Journal(path, checkpoint_thread=False).close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE boards")  # as schema 3 had it: no boards
    db.execute("PRAGMA user_version=3")
    db.commit()
    db.close()
    j = Journal(path, checkpoint_thread=False)
    try:
        assert j.db.execute("PRAGMA user_version").fetchone()[0] == VERSION == 5
        assert j.board_records() == []  # protocol 2's random boots said nothing of which is newer
    finally:
        j.close()
