"""Speech a table can live with: one queue, never two voices at once, the winner's call first, failures said
in words and never counted as said. espeak-ng and play are logging stand-ins (tests/support/speech.py)."""

import itertools
import logging
import os
import random
import time

import pytest
from battlement.sound.speaker import Sound
from battlement.table.calls import NORMAL, TURN, WINNER, ranks
from battlement.table.journal import Journal
from battlement.table.maps import for_game
from battlement.table.session import Session
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


def heard(log):
    """What each `play` of an announcement heard, in the order they started."""
    return [r["heard"] for r in sorted(speech.records(log), key=lambda r: r["start"])
            if r["prog"] == "play" and r.get("heard") is not None]


def test_a_repeated_announcement_plays_from_the_cache_in_order_at_the_volume_asked(standins):
    log = standins(STANDIN_SECONDS=0.05)
    sound = Sound("speaker")
    for text in ("Red, your turn.", "Blue's kingdom is ready.", "Red, your turn."):
        sound.say(text)
    assert sound.wait_idle(20)
    sound.set(volume=40)
    sound.say("Red, your turn.")
    sound.say("Ball in A1.")
    assert sound.wait_idle(20)
    # espeak-ng ran once per different text; every announcement was still played, in order
    assert [w[0] for w in spoken(log)] == ["Red, your turn.", "Blue's kingdom is ready.", "Ball in A1."]
    assert heard(log) == ["Red, your turn.", "Blue's kingdom is ready.", "Red, your turn.", "Red, your turn.",
                          "Ball in A1."]
    plays = [r for r in sorted(speech.records(log), key=lambda r: r["start"]) if r["prog"] == "play"]
    assert plays[3]["args"][-2:] == ["vol", "0.40"]  # a cached phrase takes the volume set since it was made
    assert sound.counters["said"] == 5 and sound.counters["failed"] == 0
    assert sound.cache.hits == 2 and sound.cache.misses == 3
    sound.close()


def test_the_synthesis_cache_is_bounded(standins):
    log = standins(STANDIN_SECONDS=0.01)
    sound = Sound("speaker", cache_entries=3)
    for i in range(6):
        sound.say("Ball in tower %d." % i)
    assert sound.wait_idle(30)
    assert len(sound.cache) == 3 and len(os.listdir(sound.cache.folder)) == 3
    sound.say("Ball in tower 0.")  # the oldest went: made again
    sound.say("Ball in tower 5.")  # the newest stayed
    assert sound.wait_idle(20)
    assert [w[0] for w in spoken(log)].count("Ball in tower 0.") == 2
    assert [w[0] for w in spoken(log)].count("Ball in tower 5.") == 1
    small = Sound("speaker", cache_bytes=200)  # a byte budget holds too: each file here is ~60 bytes
    for i in range(6):
        small.say("Red hits tower %d." % i)
    assert small.wait_idle(30)
    assert 0 < small.cache.size <= 200 and len(small.cache) < 6
    folder = small.cache.folder
    small.close()
    assert not os.path.exists(folder)  # the Sound cleans up its own cache


@pytest.mark.parametrize("damage", ["truncated", "garbage", "missing", "swapped"])
def test_a_damaged_cache_file_is_made_again_and_nothing_wrong_is_said(standins, damage):
    log = standins(STANDIN_SECONDS=0.02)
    sound = Sound("speaker")
    sound.say("Blue's kingdom is ready.")
    sound.say("Red, your turn.")
    assert sound.wait_idle(20)
    path = sound.cache.path(sound.key("Red, your turn."))
    if damage == "truncated":
        with open(path, "r+b") as f:
            f.truncate(30)
    elif damage == "garbage":
        with open(path, "wb") as f:
            f.write(b"not a wav at all, just noise" * 4)
    elif damage == "swapped":  # another phrase's sound in its place must never be played for this one
        with open(sound.cache.path(sound.key("Blue's kingdom is ready.")), "rb") as f:
            other = f.read()
        with open(path, "wb") as f:
            f.write(other)
    else:
        os.remove(path)
    sound.say("Red, your turn.")
    assert sound.wait_idle(20)
    assert heard(log)[-1] == "Red, your turn."
    assert [w[0] for w in spoken(log)].count("Red, your turn.") == 2
    assert sound.counters["said"] == 3 and sound.counters["failed"] == 0 and sound.status()["problem"] == ""
    sound.say("Red, your turn.")  # made again, so cached again
    assert sound.wait_idle(20)
    assert [w[0] for w in spoken(log)].count("Red, your turn.") == 2 and heard(log)[-1] == "Red, your turn."
    sound.close()
