"""A batch's inputs are written to inputs_recent (no key) and filed under their game later
(journalfiling.py). Wherever a row is, every reader finds it once, with its status; a journal killed
at any moment, filing or writing, keeps every committed input once; a stream that never pauses keeps
inputs_recent short; an older journal's inputs are all there after its migration."""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import urllib.request

from battlement.table import journalfiling
from battlement.table.journal import Journal
from support.bridgeproc import ROOT

GAMES = 4


def rows(j):
    return sorted(j.db.execute("SELECT game_id, n, source, input, status, reason FROM inputs").fetchall())


def test_every_reader_finds_each_input_once_filed_or_not(tmp_path):
    """Random batches over several games, with refusals, undos and filing steps of random sizes in
    between: the view, a game's replay, its last input and its counts always say what a model says."""
    rng = random.Random(7)
    j = Journal(str(tmp_path / "j.sqlite"), checkpoint_thread=False)
    games = [j.new_game("t%d" % i, "ringo", {}, i, {}) for i in range(GAMES)]
    model = {}  # (game, n) -> [source, input text, status, reason]
    try:
        for step in range(300):
            j.begin()
            for _ in range(rng.randint(1, 30)):
                g = rng.choice(games)
                inp = {"cell": rng.choice("abc") + str(rng.randint(1, 9)), "k": step}
                n = j.write_input(g, "sensor", inp)
                model[(g, n)] = ["sensor", json.dumps(inp, sort_keys=True), "pending", None]
                if rng.random() < 0.1:
                    j.refuse(g, n, "not your turn")
                    model[(g, n)][2:] = ["illegal", "not your turn"]
            j.commit()
            if rng.random() < 0.2:  # the host's undo: the row may be filed already, or not
                if rng.random() < 0.5:
                    j.file_all()
                g = rng.choice(games)
                live = [n for (gg, n), r in model.items() if gg == g and r[2] in ("ok", "pending")]
                got = j.undo_last(g)
                assert (got[0] if got else None) == (max(live) if live else None)
                if live:
                    model[(g, max(live))][2] = "undone"
            if rng.random() < 0.5:
                j.file(rng.randint(1, 60))
            if step % 25 == 0:
                assert rows(j) == sorted((g, n, *r) for (g, n), r in model.items())
                for g in games:
                    replay = [(n, json.dumps(i, sort_keys=True)) for n, _s, i, _st in j.open_game("t%d" % games.index(g))["inputs"]]
                    assert replay == sorted((n, r[1]) for (gg, n), r in model.items()
                                            if gg == g and r[2] in ("ok", "pending"))
                    counts = {}
                    for (gg, _n), r in model.items():
                        if gg == g:
                            counts[r[2]] = counts.get(r[2], 0) + 1
                    assert j.counts(g) == counts
        assert j.recent == j.unfiled() > 0  # some were still unfiled: both tables were read
        j.file_all()
        assert j.unfiled() == 0 and rows(j) == sorted((g, n, *r) for (g, n), r in model.items())
        assert j.errors == 0
    finally:
        j.close()


def test_a_stream_that_never_pauses_keeps_the_unfiled_inputs_short(tmp_path, monkeypatch):
    """The bridge files a step after each commit once FILE_AT wait (Bridge._pump): with no quiet moment
    at all, inputs_recent never holds more than FILE_AT and a batch, and nothing is lost on the way."""
    monkeypatch.setattr(journalfiling, "FILE_AT", 500)
    monkeypatch.setattr(journalfiling, "FILE_STEP", 200)
    j = Journal(str(tmp_path / "j.sqlite"), checkpoint_thread=False)
    games = [j.new_game("t%d" % i, "ringo", {}, i, {}) for i in range(GAMES)]
    most = written = 0
    try:
        for step in range(400):
            j.begin()
            for k in range(50):
                j.write_input(games[k % GAMES], "sensor", {"k": step})
                written += 1
            j.commit()
            most = max(most, j.unfiled())
            j.file_due()  # as the pump does after its commit
        assert 500 <= most < 500 + 50 and j.recent == j.unfiled()
        assert j.db.execute("SELECT COUNT(*) FROM inputs").fetchone()[0] == written
        assert j.file_due() == 0 and j.file_due(quiet=True) == 0 < j.unfiled()  # written just now: not quiet
        j.last_write -= j.IDLE  # a quiet moment between throws
        while j.file_due(quiet=True):
            pass
        assert j.unfiled() == 0 and j.db.execute("SELECT COUNT(*) FROM inputs_filed").fetchone()[0] == written
    finally:
        j.close()


CHILD = r"""
import random, sys
sys.path.insert(0, sys.argv[2])
from battlement.table.journal import Journal
rng = random.Random(int(sys.argv[3]))
j = Journal(sys.argv[1], checkpoint_thread=False)
games = [r[0] for r in j.db.execute("SELECT id FROM games ORDER BY id")]
if not games:
    games = [j.new_game("t%d" % i, "ringo", {}, i, {}) for i in range(4)]
print("open", flush=True)
while True:
    j.begin()
    for _ in range(rng.randint(1, 80)):
        j.write_input(rng.choice(games), "sensor", {"cell": "b5"})
    j.commit()
    print("committed", j.db.execute("SELECT COUNT(*) FROM inputs").fetchone()[0], flush=True)
    j.file(rng.randint(1, 400))
"""


def test_a_journal_killed_at_any_moment_while_writing_and_filing_keeps_every_committed_input_once(tmp_path):
    """kill -9 at random points, 30 times, of a process that writes batches and files them in steps of
    random sizes: at each restart every input it had committed is there, once, numbered without a gap."""
    path = str(tmp_path / "j.sqlite")
    rng = random.Random(11)
    committed = 0
    for run in range(30):
        p = subprocess.Popen([sys.executable, "-c", CHILD, path, os.path.join(ROOT, "host"), str(run)],
                             stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "open"  # reopened: what the last one left is filed now
            for _ in range(rng.randint(1, 25)):
                committed = int(p.stdout.readline().split()[1])
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait(10)
        db = sqlite3.connect(path)
        try:
            keys = db.execute("SELECT game_id, n FROM inputs ORDER BY game_id, n").fetchall()
            assert len(keys) >= committed, "committed inputs lost"
            assert len(set(keys)) == len(keys), "an input in both tables"
            by_game = {}
            for g, n in keys:
                by_game.setdefault(g, []).append(n)
            assert all(ns == list(range(1, len(ns) + 1)) for ns in by_game.values()), "numbers with a gap"
            committed = len(keys)  # what this run committed after its last line counts from now on too
        finally:
            db.close()
    j = Journal(path, checkpoint_thread=False)
    try:
        assert j.unfiled() == 0 and j.db.execute("SELECT COUNT(*) FROM inputs_filed").fetchone()[0] == committed
    finally:
        j.close()


def test_an_older_journals_inputs_are_all_there_after_migration_and_filed(tmp_path):
    """A journal of schema 4 (its inputs in one keyed table) opened by this one: the table is inputs_filed
    now, read through the view as before, and new inputs number on from the old ones."""
    path = str(tmp_path / "j.sqlite")
    j = Journal(path, checkpoint_thread=False)
    g = j.new_game("t0", "ringo", {}, 1, {})
    for k in range(5):
        j.write_input(g, "sensor", {"k": k})
    j.close()
    db = sqlite3.connect(path, isolation_level=None)  # back to schema 4: one keyed table named inputs
    db.executescript("""
        DROP TRIGGER inputs_insert; DROP TRIGGER inputs_update; DROP TRIGGER inputs_delete; DROP VIEW inputs;
        INSERT INTO inputs_filed SELECT * FROM inputs_recent; DROP TABLE inputs_recent;
        ALTER TABLE inputs_filed RENAME TO inputs; PRAGMA user_version=4;
    """)
    db.close()
    j = Journal(path, checkpoint_thread=False)
    try:
        assert [i["k"] for _n, _s, i, _st in j.open_game("t0")["inputs"]] == [0, 1, 2, 3, 4]
        assert j.write_input(g, "sensor", {"k": 5}) == 6
        kinds = dict(j.db.execute("SELECT name, type FROM sqlite_master WHERE name LIKE 'inputs%'"))
        assert kinds["inputs"] == "view" and kinds["inputs_filed"] == kinds["inputs_recent"] == "table"
    finally:
        j.close()


def test_a_running_bridge_files_a_games_inputs_once_the_table_is_quiet(bridge_process, tmp_path):
    """On `battlement run`: moves played from the host page are journalled unfiled, and once the table has
    been quiet a moment they are all filed under their game (Bridge._checkpoints), none lost."""
    from support.venue import play_ringo, venue_tables, wait

    (table, path), = venue_tables(tmp_path, 1, "file")
    b = bridge_process("--table", path, "--simulate")
    st = play_ringo(b, table, 6)
    played = st["counters"]["inputs"]
    assert played >= 12

    def counts():
        db = sqlite3.connect(b.journal, timeout=10)
        try:
            return [db.execute("SELECT COUNT(*) FROM %s" % t).fetchone()[0] for t in ("inputs", "inputs_recent")]
        finally:
            db.close()
    wait(lambda: counts() == [played, 0], "every input filed once the table is quiet", timeout=30)
    # and the operator sees it: nothing unfiled on the health page and /metrics
    assert b.get("/api/health?code=" + b.host_code)["counters"]["journal.unfiled"] == 0
    with urllib.request.urlopen(b.url + "/metrics", timeout=10) as r:
        assert "battlement_journal_unfiled 0.0" in r.read().decode().splitlines()
