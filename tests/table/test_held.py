"""A sensor change a timing rule holds (Medieval Pong's fire-at-will tie window) is in the journal, on
its own row, from the moment it is held: released, it settles that row (held -> input n) and is never
written under another event; a restart rebuilds it and plays it once; nothing forgets it (undo, pause,
a new game); and the turn's timeout keeps counting across a restart (docs/rules/engine.md, "The table
adapter": what an adapter may keep in memory). Through a Session and a real SQLite journal."""

import json
import time

from battlement.table import maps as tables
from battlement.table.journal import Journal
from battlement.table.session import Session

from shared_rules.medieval_pong.table import TIE_WINDOW
from table.test_adapters import ball, fire_at_will, pong


def rows(s):
    """The journal's event rows of the kingdoms' beams: (board, boot, seq, outcome), oldest first."""
    return s.journal.db.execute("SELECT board, boot, seq, outcome FROM events WHERE board LIKE '%-kingdom' "
                                "ORDER BY id").fetchall()


def inputs(s, since):
    """(n, input, source, status) of the game's inputs after number `since`."""
    return [(n, json.loads(i), src, st) for n, i, src, st in s.journal.db.execute(
        "SELECT n, input, source, status FROM inputs WHERE game_id=? AND n>? ORDER BY n", (s.game_id, since))]


def outcome(s, board, seq):
    found = [r[3] for r in rows(s) if r[0] == board and r[2] == seq]
    assert len(found) == 1, "event %s/%d journalled %d times: %s" % (board, seq, len(found), rows(s))
    return found[0]


def last_seq(s, board):
    return max(r[2] for r in rows(s) if r[0] == board)


def restart(s, path, **kw):
    """The bridge stopped (killed: nothing but the journal survives) and started again on the same file."""
    s.journal.close()
    return Session(tables.for_game("medieval-pong"), Journal(path), **kw)


def test_a_released_ball_settles_its_own_row_never_the_next_events(tmp_path):
    s = pong(tmp_path)
    fire_at_will(s)
    n0 = len(s.match.inputs)
    ball(s, "blue", "B1", at=20.0)  # held for the tie window
    first = last_seq(s, "blue-kingdom")
    assert outcome(s, "blue-kingdom", first) == "held"
    # the same kingdom, later: two balls in arrival order (the second is refused: Blue must place its roof)
    ball(s, "blue", "B2", at=20.0 + TIE_WINDOW + 0.05)
    second = last_seq(s, "blue-kingdom")
    played = inputs(s, n0)
    assert [(i, st) for _n, i, _src, st in played] == [({"t": "ball", "side": "blue", "tower": "B1"}, "pending"),
                                                        ({"t": "ball", "side": "blue", "tower": "B2"}, "illegal")]
    (n1, _, src1, _), _ = played
    assert outcome(s, "blue-kingdom", first) == "input %d" % n1  # its own row, held -> applied
    assert outcome(s, "blue-kingdom", second).startswith("illegal: a ball is not expected now")  # only its own
    assert "blue.B1" in src1, src1


def test_a_ball_released_when_its_window_is_over_settles_its_row(tmp_path):
    s = pong(tmp_path)
    fire_at_will(s)
    n0 = len(s.match.inputs)
    ball(s, "red", "B2", at=20.0)
    seq = last_seq(s, "red-kingdom")
    s.apply_due(20.0 + TIE_WINDOW)
    ((n, inp, _src, status),) = inputs(s, n0)
    assert inp == {"t": "ball", "side": "red", "tower": "B2"} and status == "pending"
    assert outcome(s, "red-kingdom", seq) == "input %d" % n


def test_a_tie_settles_both_balls_rows_as_its_input(tmp_path):
    s = pong(tmp_path)
    fire_at_will(s)
    n0 = len(s.match.inputs)
    ball(s, "red", "B2", at=20.0)
    ball(s, "blue", "B1", at=20.0001)
    ((n, inp, _src, _st),) = inputs(s, n0)
    assert inp == {"t": "tie", "side": "red", "tower": "B2"}
    assert outcome(s, "red-kingdom", last_seq(s, "red-kingdom")) == "input %d" % n
    assert outcome(s, "blue-kingdom", last_seq(s, "blue-kingdom")) == "input %d" % n


def test_a_held_ball_survives_a_restart_and_is_played_once(tmp_path):
    path = str(tmp_path / "j.sqlite")
    s = pong(tmp_path)
    fire_at_will(s)
    n0 = len(s.match.inputs)
    ball(s, "red", "B2", at=time.monotonic())  # held; the bridge dies inside the window
    seq = last_seq(s, "red-kingdom")
    s = restart(s, path)
    deadline = time.monotonic() + 10
    while not inputs(s, n0) and time.monotonic() < deadline:
        s.apply_due()  # the bridge's tick
    ((n, inp, _src, _st),) = inputs(s, n0)
    assert inp == {"t": "ball", "side": "red", "tower": "B2"}
    assert s.match.view(None)["sides"]["red"]["towers"]["B2"].get("was") == "blacksmith"
    assert outcome(s, "red-kingdom", seq) == "input %d" % n
    s = restart(s, path)  # and once more: nothing held, nothing played twice
    s.apply_due(time.monotonic() + 10)
    assert len(inputs(s, n0)) == 1 and s.match.view(None)["step"]["k"] != "fire"


def test_a_ball_held_when_the_window_ended_while_stopped_is_played_at_start(tmp_path):
    path = str(tmp_path / "j.sqlite")
    s = pong(tmp_path)
    fire_at_will(s)
    ball(s, "blue", "B1", at=time.monotonic())
    s.journal.db.execute("UPDATE events SET at = at - 5 WHERE outcome = 'held'")  # the bridge was down 5 s
    s = restart(s, path)
    assert s.match.inputs[-1] == {"t": "ball", "side": "blue", "tower": "B1"}  # at once, no tick needed
    assert s.journal.db.execute("SELECT COUNT(*) FROM events WHERE outcome='held'").fetchone() == (0,)


def test_undo_pause_and_a_new_game_play_the_held_ball_first(tmp_path):
    s = pong(tmp_path)
    fire_at_will(s)
    n0 = len(s.match.inputs)
    ball(s, "blue", "B1", at=20.0)
    assert s.undo()["ok"]  # the held ball was the last thing to happen: it is what undo takes back
    assert [(i, st) for _n, i, _src, st in inputs(s, n0)] == [({"t": "ball", "side": "blue", "tower": "B1"}, "undone")]
    assert s.match.view(None)["step"]["k"] == "fire"
    ball(s, "blue", "B1", at=30.0)
    s.pause(True)  # sensed before the pause: played
    assert s.match.inputs[-1] == {"t": "ball", "side": "blue", "tower": "B1"}
    s.pause(False)
    assert s.undo()["ok"] and s.match.view(None)["step"]["k"] == "fire"
    ball(s, "red", "B2", at=40.0)
    old = s.game_id
    s.new_game(None, {"first": "red"}, seed=2)
    got = s.journal.db.execute("SELECT input FROM inputs WHERE game_id=? ORDER BY n DESC LIMIT 1", (old,)).fetchone()
    assert got == ('{"side": "red", "t": "ball", "tower": "B2"}',)
    assert s.journal.db.execute("SELECT COUNT(*) FROM events WHERE outcome='held'").fetchone() == (0,)


def test_rows_left_held_by_an_older_journal_are_never_played(tmp_path):
    """A journal written before held rows were settled: its 'held' rows were played (under a later
    event) or dropped then. Opening it must not play them again."""
    path = str(tmp_path / "j.sqlite")
    s = pong(tmp_path)
    fire_at_will(s)
    ball(s, "blue", "B1", at=20.0)
    s.apply_due(30.0)
    played = list(s.match.inputs)
    s.journal.db.execute("UPDATE events SET outcome='held' WHERE outcome LIKE 'input %' AND board='blue-kingdom'")
    s.journal.db.execute("PRAGMA user_version=2")
    s = restart(s, path)
    assert s.match.inputs == played
    assert s.journal.db.execute("SELECT COUNT(*) FROM events WHERE outcome='held'").fetchone() == (0,)


def test_the_throw_timeout_keeps_counting_across_a_restart(tmp_path):
    path = str(tmp_path / "j.sqlite")
    s = pong(tmp_path)
    assert s.apply(s.timeout_input(), "throw timeout")["ok"]
    s = restart(s, path, throw_timeout=3.0)
    assert not s.timed_out()  # the last input was just now
    s.journal.db.execute("UPDATE inputs SET at = at - 3.5")  # it was 3.5 s ago: the bridge was down meanwhile
    s = restart(s, path, throw_timeout=3.0)
    assert s.timed_out()  # not a fresh 3 s from the start (a bridge restarted faster than that never timed out)
