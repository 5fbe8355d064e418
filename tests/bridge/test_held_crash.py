"""The bridge (`battlement run --simulate`) killed -9, or stopped with SIGTERM, at random moments inside
the games' timing rules, and started again on the same journal: nothing thrown is lost or doubled,
and nothing stays held (docs/rules/engine.md, "The table adapter").

- Medieval Pong's tie window: a ball in a fire at will is held 0.25 s (two balls in that window are
  one tie). The bridge dies while it is held; the next one plays it, once, and its event's row says
  which input it became. Then undo takes it back, for the next throw into the same fire at will.
- The turn's timeout (Pong's miss, Battleground's shot that is over, judged on the falls collected):
  bridges that each live shorter than the timeout still call it, once per timeout of silence.

The balls go in through the host page's sensor buttons: the simulated board, over its pty, to the
bridge. A ball is thrown at the bridge only while one runs, and the kill waits until the journal holds
it (acknowledged): the simulated boards live in the bridge's process and die with it.
"""

import json
import random
import sqlite3
import time

import pytest
from battlement.table.journal import Journal
from battlement.table.maps import for_game
from battlement.table.session import Session
from support.bridgeproc import Ws
from table.test_adapters import BASE

from shared_rules.medieval_pong.table import TIE_WINDOW

RED_BALL = {"t": "ball", "side": "blue", "tower": "B1"}  # red's ball, into blue's Architect
BLUE_BALL = {"t": "ball", "side": "red", "tower": "B2"}  # blue's, into red's Blacksmith
WAIT = 30  # s: the most a loaded machine may take for what is awaited (polled, never slept)


def query(path, sql, args=()):
    db = sqlite3.connect(path, timeout=10)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def until(what, fn):
    deadline = time.monotonic() + WAIT
    while not fn():
        assert time.monotonic() < deadline, "waited %d s for %s" % (WAIT, what)
        time.sleep(0.005)


def held(path):
    return query(path, "SELECT COUNT(*) FROM events WHERE outcome='held'")[0][0]


def kingdom_events(path):
    return query(path, "SELECT board, boot, seq, outcome FROM events WHERE object LIKE 'red.%' "
                       "OR object LIKE 'blue.%' ORDER BY id")


def pong_journal(path, fire=True):
    """A Medieval Pong game set up (Red throws first), and with `fire` blue's Princess hit: a fire at will."""
    s = Session(for_game("medieval-pong"), Journal(path))
    s.new_game(None, {"first": "red"}, seed=1)
    for side in ("red", "blue"):
        for ch, tower in BASE[side].items():
            assert s.apply({"t": "place", "by": side, "tower": tower, "character": ch}, "side " + side)["ok"]
        assert s.apply({"t": "ready", "by": side}, "side " + side)["ok"]
    if fire:
        assert s.apply({"t": "ball", "side": "blue", "tower": "C1"}, "host page (sensor)")["ok"]
        assert s.match.view(None)["step"]["k"] == "fire"
    s.journal.close()


def kill(b, rng):
    """kill -9, or SIGTERM (a clean stop), at random; which one it was."""
    if rng.random() < 0.5:
        b.kill9()
        return "kill -9"
    b.stop()
    return "SIGTERM"


def tie_window_kills(bridge_process, journal, rng, kills):
    """Each round: one ball, or two (one per kingdom: a tie when they land within the window), thrown
    into the fire at will; the bridge dies at a random moment of the window after the first is
    journalled; a new one starts, plays what was held, and undo goes back to the fire at will."""
    pong_journal(journal)
    args = ("--simulate", "--game", "medieval-pong")
    b = bridge_process(*args, journal=journal)
    thrown, inside = 0, {"kill -9": 0, "SIGTERM": 0}
    for _ in range(kills):
        ws = Ws(b.url, role="host", code=b.host_code)
        before = len(kingdom_events(journal))
        balls = [RED_BALL, BLUE_BALL] if rng.random() < 0.3 else [rng.choice([RED_BALL, BLUE_BALL])]
        for ball in balls:
            assert ws.act(action="sense", input=ball)["ok"]
        thrown += len(balls)
        want = before + len(balls)
        until("the ball(s) journalled", lambda want=want: len(kingdom_events(journal)) >= want)
        time.sleep(rng.uniform(0.0, TIE_WINDOW))
        ws.close()
        how = kill(b, rng)
        inside[how] += held(journal) > 0  # the journal as the next bridge finds it: a ball still held
        b = bridge_process(*args, journal=journal)
        until("the held ball played", lambda: held(journal) == 0)
        ws = Ws(b.url, role="host", code=b.host_code)
        while b.state()["view"]["step"]["k"] != "fire":
            assert ws.act(action="undo")["ok"]
        ws.close()
    b.stop()
    return thrown, inside


def check_played_once(journal, thrown):
    """Every ball's event journalled once, each settled as the input it became; every input of a
    sensed ball made by exactly its own events (a tie by its two): nothing lost, doubled or held. (Two
    balls a loaded machine saw further apart than the window are two balls; the second may be refused,
    its event then saying why.)"""
    events = kingdom_events(journal)
    assert len(events) == thrown, "%d balls thrown, %d journalled" % (thrown, len(events))
    assert len({e[:3] for e in events}) == len(events), "an event journalled twice"
    assert held(journal) == 0, "rows still held: %s" % [e for e in events if e[3] == "held"]
    made, refused = {}, 0
    for e in events:
        assert e[3].startswith(("input ", "illegal: ")), e
        if e[3].startswith("illegal: "):
            refused += 1
        else:
            made.setdefault(int(e[3].split()[1]), []).append(e)
    (gid,) = query(journal, "SELECT id FROM games ORDER BY id DESC LIMIT 1")[0]
    sensed = {n: (json.loads(i), st) for n, i, st in query(
        journal, "SELECT n, input, status FROM inputs WHERE game_id=? AND source LIKE 'sensor%'", (gid,))}
    played = {n: inp for n, (inp, st) in sensed.items() if st != "illegal"}
    assert sorted(played) == sorted(made), "inputs of sensed balls %s, made by events %s" % (sorted(played), sorted(made))
    assert len(sensed) - len(played) == refused
    for n, inp in played.items():
        assert len(made[n]) == (2 if inp["t"] == "tie" else 1), (n, inp, made[n])


def test_killed_inside_the_tie_window_every_ball_is_played_once(bridge_process, tmp_path):
    journal = str(tmp_path / "j.sqlite")
    thrown, inside = tie_window_kills(bridge_process, journal, random.Random(5), 20)
    check_played_once(journal, thrown)
    assert sum(inside.values()) >= 5 and min(inside.values()) >= 1, "kills while a ball was held: %s" % inside


def bg_journal(path):
    """A Battleground game with a shot under way (its falls collected until it is over)."""
    s = Session(for_game("battleground"), Journal(path))
    pick = random.Random(3)
    for _ in range(400):
        if any(i["t"] == "over" for i in s.match.legal()):
            break
        choices = [i for i in s.match.legal() if i["t"] not in ("fell", "stood")] or s.match.legal()
        assert s.apply(pick.choice(choices))["ok"]
    fell = next(i for i in s.match.legal() if i["t"] == "fell")
    assert s.apply(fell, "sensor " + fell["piece"])["ok"]  # a piece fell in the shot: judged once it is over
    s.journal.close()


TIMEOUT = 2.0
# Each bridge lives this long after it says "ready": long enough for the tick that calls a timeout (every
# 0.5 s), too short for a timer counted from its own start to run out.
LIVES = (0.6, 1.4)


def timeout_kills(bridge_process, journal, game, rng, kills):
    """Bridges with --throw-timeout TIMEOUT, each killed at a random moment (LIVES) before its own timer
    counted from its start could run out. Returns when bridges were up ([(ready, gone)], wall clock)
    and when a Battleground shot judged was undone (it is open again: its timeout runs once more)."""
    args = ("--simulate", "--game", game, "--throw-timeout", str(TIMEOUT))
    ups, undos = [], []
    for i in range(kills + 1):
        n = len(timeouts(journal))
        b = bridge_process(*args, journal=journal)
        ready = time.time()
        if game == "battleground" and last_is_timeout(journal):
            ws = Ws(b.url, role="host", code=b.host_code)
            assert ws.act(action="undo")["ok"]
            undos.append(time.time())
            ws.close()
        if i == kills:
            break
        time.sleep(rng.uniform(*LIVES))
        ups.append((ready, time.time()))
        kill(b, rng)
    until("one more timeout", lambda: len(timeouts(journal)) > n)  # counted before the last start
    ups.append((ready, time.time()))
    b.stop()
    return ups, undos


def last_is_timeout(journal):
    rows = query(journal, "SELECT source FROM inputs WHERE status IN ('ok', 'pending') "
                          "ORDER BY game_id DESC, n DESC LIMIT 1")
    return bool(rows) and rows[0][0] == "throw timeout"


def timeouts(journal):
    """(wall time, wall time of the input before it) of each timeout the journal holds."""
    rows = query(journal, "SELECT source, at FROM inputs ORDER BY game_id, n")
    return [(at, rows[i - 1][1]) for i, (src, at) in enumerate(rows) if src == "throw timeout" and i]


def check_timeouts(journal, ups, undos):
    """Each timeout came after a timeout of silence (a restart never calls it twice), and none waited
    more than a tick (0.5 s, and a margin for a loaded machine) of a bridge being up while it was due:
    a bridge that starts its timer over never calls one while bridges keep dying sooner than that."""
    got = timeouts(journal)
    assert len(got) >= 3, "%d timeouts in all" % len(got)
    for at, before in got:
        assert at - before >= TIMEOUT - 0.02, (at, before)
        due = max([before + TIMEOUT] + [u for u in undos if before <= u < at])
        waited = sum(max(0.0, min(gone, at) - max(ready, due)) for ready, gone in ups)
        assert waited <= 2.0, "a timeout due for %.1f s of bridges up before it came: it was lost" % waited


@pytest.mark.parametrize("game", ["medieval-pong", "battleground"])
def test_killed_inside_the_turn_timeout_it_is_called_once_per_timeout(bridge_process, tmp_path, game):
    journal = str(tmp_path / "j.sqlite")
    pong_journal(journal, fire=False) if game == "medieval-pong" else bg_journal(journal)
    check_timeouts(journal, *timeout_kills(bridge_process, journal, game, random.Random(7), 8))


@pytest.mark.soak
def test_soak_killed_inside_the_timing_rules(bridge_process, tmp_path, soak_record):
    journal = str(tmp_path / "tie.sqlite")
    thrown, inside = tie_window_kills(bridge_process, journal, random.Random(50), 100)
    check_played_once(journal, thrown)
    soak_record("tie window: kill -9 / SIGTERM", tried=100, survived=100, lost=0, leaked=held(journal),
                note="%d balls; kills while one was held: %s" % (thrown, inside))
    for game in ("medieval-pong", "battleground"):
        journal = str(tmp_path / ("%s.sqlite" % game))
        pong_journal(journal, fire=False) if game == "medieval-pong" else bg_journal(journal)
        check_timeouts(journal, *timeout_kills(bridge_process, journal, game, random.Random(51), 40))
        soak_record("%s timeout: kills" % game, tried=40, survived=40, lost=0, leaked=0)
