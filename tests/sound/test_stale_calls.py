"""Speech that keeps up with the table, with real espeak-ng writing WAV files: a turn call still waiting when
its turn has passed is never played, an undo is said, and the calls of an undone step are not; each call
dropped so is counted (sound.stale) where the host page shows the sound counters."""

import threading

import pytest
from battlement.sound.speaker import Sound
from battlement.table.journal import Journal
from battlement.table.maps import for_game
from battlement.table.session import Session

RED_TURN = "Red, your turn: throw at Blue's kingdom."
# long enough that espeak-ng is still at it while the test plays on: what the table says next waits
LONG = " ".join(["The towers of the red kingdom stand tall against the blue sky."] * 20)


@pytest.fixture
def table(tmp_path):
    """A Medieval Pong session speaking into WAV files, both kingdoms placed, Red's not yet ready;
    .started lists what began to play, in order."""
    sound = Sound("file", str(tmp_path / "wav"))
    started = []
    sound.started = lambda what, _t: started.append(what)
    s = Session(for_game("medieval-pong"), Journal(str(tmp_path / "j.sqlite")), sound)
    blue = {}
    for side in ("blue", "red"):
        while True:
            mine = [i for i in s.match.legal() if i.get("by") == side]
            ready = [i for i in mine if i["t"] == "ready"]
            if side == "red" and ready:
                break
            step = ready[0] if ready else mine[0]
            if step["t"] == "place" and side == "blue":
                blue[step["character"]] = step["tower"]
            s.apply(step, "test")
            if ready:
                break
    assert sound.wait_idle(60)
    started.clear()
    s.blue = blue
    s.started = started
    s.red_ready = next(i for i in s.match.legal() if i.get("by") == "red" and i["t"] == "ready")
    yield s
    sound.close()


def quiet_hit(s):
    """Red's ball in Blue's Seer tower: a hit whose step calls no new turn (Blue decides first)."""
    return {"t": "ball", "side": "blue", "tower": s.blue["seer"]}


def test_a_turn_call_waiting_when_the_turn_passes_is_never_played(table):
    s = table
    s.apply(s.red_ready, "test")  # "Red's kingdom is ready.", "Let the battle begin!", then Red's turn call
    s.apply(quiet_hit(s), "sensor tower")  # Red throws while the turn call still waits
    assert s.sound.wait_idle(60)
    assert "Blue's tower %s held the Seer." % s.blue["seer"] in s.started
    assert RED_TURN not in s.started, s.started
    assert s.sound.counters["stale"] == 1
    assert s.for_host()["counters"]["sound.stale"] == 1


def test_an_undo_is_said_and_the_calls_of_the_undone_step_are_not(table):
    s = table
    s.apply(s.red_ready, "test")
    assert s.sound.wait_idle(60)
    s.started.clear()
    playing = threading.Event()
    s.sound.started = lambda what, _t: (s.started.append(what), playing.set())
    s.sound.say(LONG)
    assert playing.wait(20)  # espeak-ng is busy with it: the hit's calls wait behind it
    s.apply(quiet_hit(s), "sensor tower")
    assert s.undo()["ok"]
    assert s.sound.wait_idle(60)
    undid = "Undid: the ball in tower %s of Blue." % s.blue["seer"]
    assert s.started == [LONG, undid], s.started  # no "held the Seer", no tones of the hit: the undo, said
    assert s.sound.counters["stale"] == 3  # the hit's call and its two tones
    assert s.notices[-1]["text"] == undid
