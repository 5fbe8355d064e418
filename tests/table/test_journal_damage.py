"""A damaged journal (not a database, cut short, a torn page) stops `battlement run` with one line naming
the file, never a traceback, and its bytes are left as they were; `--new-journal` moves it aside and a new
game starts. A journal whose WAL was deleted after a kill -9 opens, and says what it lost."""

import glob
import hashlib
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys

import pytest
from battlement.link.messages import Event
from battlement.table.journal import Journal
from support.bridgeproc import ROOT, BridgeProcess, Ws, run_refused

SEED = 20240501  # the cuts and the garbage are the same every run


def sound_journal(path):
    """A journal that has played a while (a game, 3,000 sensed events), closed cleanly: no WAL beside it."""
    j = Journal(path, checkpoint_thread=False)
    gid = j.new_game("ringo", "ringo", {}, 1, {})
    j.begin()
    for seq in range(3000):
        ev = Event("ringo", "ring-5", 5, seq, "b5", "presence", seq % 2, 1000, 0)
        j.write_input(gid, "b5", {"t": "cell", "cell": "b5", "occupied": bool(seq % 2)}, ("ringo", ev, "b5"))
    j.commit()
    j.close()
    assert not os.path.exists(path + "-wal")


def text(path):
    with open(path, "w") as f:
        f.write("game,winner\nringo,attackers\n" * 40)


def cut(fraction):
    def damage(path):
        os.truncate(path, max(1, int(os.path.getsize(path) * fraction)))
    return damage


def torn_page(path):
    """A page in the middle of the file overwritten with garbage (a write the disk tore)."""
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    middle = os.path.getsize(path) // page // 2
    with open(path, "r+b") as f:
        f.seek(middle * page)
        f.write(random.Random(SEED).randbytes(page))


_rng = random.Random(SEED)
DAMAGE = {  # how the file is damaged, what the line says is wrong with it (a pattern)
    "a text file": (text, r"\(file is not a database\)"),
    "cut in the header": (lambda path: os.truncate(path, 60), r"\(cut short: 60 bytes, less than a database's header\)"),
    # SQLite finds the page either as it reads the tree or in its check of every page
    "torn page": (torn_page, r"\((database disk image is malformed|Page \d+: [^;]+)\)"),
    **{"cut at %.3f" % f: (cut(f), r"\(cut short: \d+ bytes of the \d+ its header gives\)")
       for f in sorted(_rng.random() for _ in range(4))},
}


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_journal_is_one_line_left_untouched_and_new_journal_moves_it_aside(tmp_path, damage):
    journal = str(tmp_path / "journal.sqlite")
    sound_journal(journal)
    damage_it, words = DAMAGE[damage]
    damage_it(journal)
    before = sha(journal)

    status, out, err = run_refused(journal, "--game", "ringo")

    assert (status, out) == (2, "")
    assert re.match("battlement run: error: journal %s is damaged %s; " % (re.escape(journal), words), err), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "run again with --new-journal" in err
    assert sha(journal) == before  # not written over
    assert sorted(os.listdir(tmp_path)) == ["battlement.log", "journal.sqlite"]  # nothing left beside it

    b = BridgeProcess(tmp_path, "--simulate", "--game", "ringo", "--new-journal", journal=journal).start()
    try:
        assert b.state()["game"] == "ringo"
        (moved,) = glob.glob(journal + ".damaged-*")
        assert sha(moved) == before
        assert "journal %s is damaged" % journal in b.output() and "kept as %s" % moved in b.output()
        assert "Traceback" not in b.output()
    finally:
        b.stop()
    db = sqlite3.connect(journal)
    try:
        assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        assert db.execute("SELECT game FROM games").fetchall() == [("ringo",)]  # a new game in a new journal
    finally:
        db.close()


# What the bridge before was writing when it was killed: committed, in the WAL, never checkpointed.
KILLED_WRITER = """
import os, signal, sys
from battlement.table.journal import Journal
j = Journal(sys.argv[1], checkpoint_thread=False)
gid = j.open_game("ringo")["id"]
for _ in range(3):
    j.write_input(gid, "lost with the WAL", {"t": "pass"})
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_journal_whose_wal_was_deleted_after_a_kill_9_opens_and_says_what_it_lost(tmp_path):
    journal = str(tmp_path / "journal.sqlite")
    b = BridgeProcess(tmp_path, "--simulate", "--game", "ringo", journal=journal).start()
    ws = Ws(b.url, role="host", code=b.host_code)
    s = ws.state()
    for _ in range(2):
        turns = s["view"]["turns"]
        assert ws.act(action="sense", input=s["sensed"][0])["ok"]
        s = ws.state(lambda m, turns=turns: m["view"]["turns"] > turns)
    ws.close()
    b.stop()  # a clean stop: the two moves are in the journal's file itself
    db = sqlite3.connect(journal)
    (kept,) = db.execute("SELECT COUNT(*) FROM inputs").fetchone()
    db.close()
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, journal], cwd=str(ROOT), check=False, timeout=60)
    assert killed.returncode == -signal.SIGKILL and os.path.getsize(journal + "-wal") > 0
    os.remove(journal + "-wal")

    b.start()
    try:
        out = b.output()
        assert "Traceback" not in out
        assert ("journal %s: its WAL (%s-wal) is missing, though the bridge before did not close the journal: "
                "what it wrote after the last checkpoint" % (journal, journal)) in out
        assert "Resumed the game of Ringo after %d inputs." % kept in out  # the moves before it, none lost since
        assert b.state()["view"]["turns"] == s["view"]["turns"]
    finally:
        b.stop()
