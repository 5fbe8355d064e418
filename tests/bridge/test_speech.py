"""Speech a table can live with: one queue, never two voices at once, the winner's call first, failures said
in words and never counted as said. espeak-ng and play are logging stand-ins (tests/support/speech.py)."""

import itertools
import logging
import os
import random
import time

import pytest
from battlement.journal import Journal
from battlement.session import Session
from battlement.sound import NORMAL, TURN, WINNER, Sound, ranks
from battlement.tables import for_game
from support import speech


@pytest.fixture
def standins(tmp_path, monkeypatch):
    def use(programs=("espeak-ng", "play", "sox"), **extra):
        env = speech.environ(tmp_path, tmp_path / "speech.log", programs, **extra)
        for k in ("PATH", "STANDIN_LOG", *extra):
            monkeypatch.setenv(k, env[k])
        return tmp_path / "speech.log"
    return use


def spoken(log):
    """(text, start, end) of each announcement, from the espeak-ng stand-in's log, in the order they started."""
    return sorted(((r["text"], r["start"], r["end"]) for r in speech.records(log) if r["prog"] == "espeak-ng"),
                  key=lambda r: r[1])


def items(log):
    """Every sound played (speech or tone) as (start, end) over all the processes it took."""
    return sorted((r["start"], r["end"]) for r in speech.records(log) if r["prog"] == "play")


def test_a_burst_of_announcements_is_spoken_in_order_one_at_a_time(standins, tmp_path):
    log = standins()
    sound = Sound("speaker")
    s = Session(for_game("medieval-pong"), Journal(str(tmp_path / "j.sqlite")), sound)
    said = []
    s.listeners.append(lambda _s, fx: said.extend(e["text"] for e in fx if e["t"] == "say" and e.get("to") is None))
    # both kingdoms ready: "Red's kingdom is ready.", "Let the battle begin!", "Red, your turn..." at once
    for side in ("blue", "red"):  # each kingdom set up at once; the second "ready" says three things
        while True:
            mine = [i for i in s.match.legal() if i.get("by") == side]
            ready = [i for i in mine if i["t"] == "ready"]
            s.apply(ready[0] if ready else mine[0], "test")
            if ready:
                break
    t_asked = time.time()
    assert sound.wait_idle(20)
    words = spoken(log)
    assert len(words) >= 3, words
    assert [w[0] for w in words] == said  # every one, in the order the game said them
    played = items(log)
    for (_, end), (start, _) in itertools.pairwise(played):
        assert start >= end, "two sounds at once: %s" % played  # never two voices over each other
    assert sound.counters["said"] == len(said) and sound.counters["failed"] == 0
    assert words[0][1] - t_asked < 1.0


def test_the_winner_is_not_stuck_behind_turn_calls(standins):
    log = standins(STANDIN_SECONDS=0.3)
    sound = Sound("speaker")
    sound.say("Red hits tower B2.", NORMAL)
    time.sleep(0.1)  # it is playing now: the rest waits
    sound.say("Blue, your turn.", TURN)
    sound.say("Blue's tower A1 held the King.", NORMAL)
    sound.say("Red, your turn.", TURN)
    sound.say("Red won!", WINNER)
    assert sound.wait_idle(20)
    assert [w[0] for w in spoken(log)] == ["Red hits tower B2.", "Red won!", "Blue's tower A1 held the King."]
    assert sound.counters["replaced"] == 2 and sound.counters["said"] == 3


def test_a_newer_turn_call_replaces_one_still_waiting(standins):
    log = standins(STANDIN_SECONDS=0.3)
    sound = Sound("speaker")
    sound.say("Ball in A1.")
    time.sleep(0.1)
    sound.say("Blue, your turn.", TURN)
    sound.say("Red, your turn.", TURN)
    assert sound.wait_idle(20)
    assert [w[0] for w in spoken(log)] == ["Ball in A1.", "Red, your turn."]


def test_the_rules_step_that_ends_a_game_ranks_first_and_turn_calls_last(tmp_path):
    s = Session(for_game("medieval-pong"), Journal(str(tmp_path / "j.sqlite")), Sound("null"))
    steps = []
    s.listeners.append(lambda _s, fx: steps.append(list(fx)))
    rng = random.Random(3)
    while s.match.legal() and len(steps) < 5000:
        s.apply(rng.choice(s.match.legal()), "test")
    last = next(fx for fx in reversed(steps) if any(e["t"] == "say" for e in fx))
    assert any(e["t"] == "cue" and e["cue"] in ("game.over", "game.won") for e in last)
    assert set(ranks(last)) == {WINNER}
    turns = [fx for fx in steps if any(e["t"] == "cue" and e["cue"] == "turn" for e in fx)]
    fx = turns[0]
    r = ranks(fx)
    said = [(e["text"], r[i]) for i, e in enumerate(fx) if e["t"] == "say"]
    assert "your turn" in said[-1][0]
    assert said[-1][1] == TURN and all(p == NORMAL for _, p in said[:-1])


def test_no_sound_device_is_said_in_words_logged_and_not_counted_as_said(standins, caplog):
    standins(STANDIN_NODEVICE=1)
    changes = []
    sound = Sound("speaker")
    sound.on_change = lambda: changes.append(sound.status()["problem"])
    with caplog.at_level(logging.ERROR, logger="battlement.sound"):
        sound.say("Let the battle begin!")
        assert sound.wait_idle(20)
    assert sound.counters["said"] == 0 and sound.counters["failed"] == 1
    assert "no sound device" in sound.status()["problem"]
    assert changes and "no sound device" in changes[-1]
    assert any("no sound device" in r.getMessage() for r in caplog.records)


def test_espeak_ng_missing_is_said_at_once(standins, caplog):
    standins(programs=("play", "sox"))
    with caplog.at_level(logging.ERROR, logger="battlement.sound"):
        sound = Sound("speaker")
    assert "espeak-ng is not installed" in sound.status()["problem"]
    sound.say("Red won!")
    assert sound.counters["said"] == 0 and sound.counters["failed"] >= 1
    assert any("espeak-ng is not installed" in r.getMessage() for r in caplog.records)


def test_muted_says_nothing_and_counts_it(standins):
    log = standins()
    sound = Sound("speaker")
    sound.set(muted=True)
    sound.say("Red won!")
    sound.cue("ball.in")
    assert sound.wait_idle(5)
    assert spoken(log) == [] and sound.counters["muted"] == 2 and sound.counters["said"] == 0
    sound.set(muted=False, volume=40)
    sound.say("Blue, your turn.")
    assert sound.wait_idle(20)
    plays = [r for r in speech.records(log) if r["prog"] == "play"]
    assert plays and plays[-1]["args"][-2:] == ["vol", "0.40"]  # the host's volume reaches the player


def test_auto_is_silent_where_nothing_can_play(standins):
    standins(STANDIN_NODEVICE=1)
    assert Sound("auto").mode == "null"
    os.environ.pop("STANDIN_NODEVICE")
    assert Sound("auto").mode == "speaker"
