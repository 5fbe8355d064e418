"""The journal's lock is on the journal itself: a second `battlement run` reaching the same file by another
name (a symlink, a hard link) or after a stray lock file was deleted is refused in one line, and the
bridge that has it plays and journals on."""

import contextlib
import os
import sqlite3

import pytest
from support.bridgeproc import Ws, run_refused


def inputs(journal):
    db = sqlite3.connect("file:%s?mode=ro" % journal, uri=True, timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM inputs").fetchone()[0]
    finally:
        db.close()


def another_way_in(how, journal, tmp_path):
    """The path a second bridge is given to the first one's journal."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    if how == "symlink":
        (other / "journal.sqlite").symlink_to(journal)
    elif how == "hard link":
        os.link(journal, other / "journal.sqlite")
    else:  # the same name, with the lock file older bridges kept beside it deleted
        with contextlib.suppress(FileNotFoundError):
            os.remove(journal + ".lock")
        return journal
    return str(other / "journal.sqlite")


@pytest.mark.parametrize("how", ["symlink", "hard link", "lock file deleted"])
def test_a_second_bridge_reaching_the_journal_another_way_is_refused_and_the_first_plays_on(
        bridge_process, tmp_path, how):
    journal = str(tmp_path / "journal.sqlite")
    first = bridge_process("--simulate", "--game", "ringo", journal=journal)
    path = another_way_in(how, journal, tmp_path)

    status, out, err = run_refused(path, "--game", "ringo")

    assert (status, out) == (2, "")
    assert err == ("battlement run: error: journal %s is in use by another bridge (pid %d); stop that one, or give "
                   "this one its own --journal\n" % (path, first.proc.pid))
    ws = Ws(first.url, role="host", code=first.host_code)
    try:
        s = ws.state()
        before = inputs(journal)
        assert ws.act(action="sense", input=s["sensed"][0])["ok"]
        ws.state(lambda m: m["view"]["turns"] > s["view"]["turns"])
    finally:
        ws.close()
    assert inputs(journal) > before  # the first bridge still journals its moves
