"""What a table's lights keep (what a cue lit, what a put-back restores) is never shown stale: the boards
are sent what working it out afresh would send them, whatever changed in between."""

import random

from battlement.link.messages import Event
from battlement.table.effects import Effects
from battlement.table.journal import Journal
from battlement.table.maps import for_game
from battlement.table.session import Session


def _fresh(effects: Effects, sent: list) -> Effects:
    """An Effects that has kept nothing, its LEDs told what `effects`' were."""
    fresh = Effects(effects.tmap, effects.adapter, sent.append)
    fresh.lit = dict(effects.lit)
    return fresh


def test_a_cue_changed_in_any_field_lights_what_it_now_names():
    tmap = for_game("ringo")
    sent: list = []
    fx = Effects(tmap, Session(tmap, Journal(":memory:")).adapter, sent.append)
    to = ["b4"]
    cues = [
        {"t": "cue", "cue": "piece.lifted", "side": "attackers", "cell": "b5", "to": to},
        {"t": "cue", "cue": "piece.lifted", "side": "attackers", "cell": "b5", "to": to},  # the same: kept
        {"t": "cue", "cue": "piece.lifted", "side": "defenders", "cell": "b5", "to": to},  # another colour
        {"t": "cue", "cue": "piece.lifted", "side": "defenders", "cell": "c5", "to": ["c4", "d5"]},
        {"t": "cue", "cue": "piece.lifted", "side": "attackers", "cell": "b5", "to": to},
    ]
    for i, cue in enumerate(cues):
        want: list = []
        _fresh(fx, want).cue(cue)
        sent.clear()
        fx.cue(cue)
        assert sent == want, "cue %d" % i
    to.append("b3")  # the list the last cue named, changed in place (rules may reuse one)
    want = []
    _fresh(fx, want).cue(cues[-1])
    sent.clear()
    fx.cue(cues[-1])
    b3 = tmap.objects["b3"]
    assert sent == want and [(led.board, led.target) for led in sent] == [(b3.led_board, b3.led)]
    fx.lit.clear()  # and a field of another type than text is worked out each time (True == 1)
    for cell in ("b5", 1, True):
        want = []
        _fresh(fx, want).cue({"t": "cue", "cue": "piece.lifted", "side": "attackers", "cell": cell, "to": []})
        sent.clear()
        fx.cue({"t": "cue", "cue": "piece.lifted", "side": "attackers", "cell": cell, "to": []})
        assert sent == want


def test_a_put_back_restores_what_the_last_drawing_shows():
    """The same LED lifted and put back under two drawings: it goes back to the newer drawing's light."""
    tmap = for_game("ringo")
    sent: list = []
    fx = Effects(tmap, Session(tmap, Journal(":memory:")).adapter, sent.append)
    lifted = {"t": "cue", "cue": "piece.lifted", "side": "attackers", "cell": "b5", "to": []}
    for side in ("attackers", "defenders"):
        fx.relight({"cells": {"b5": side}, "castle": 0})
        fx.cue(lifted)
        sent.clear()
        fx.restore()
        assert [(led.pattern, led.rgb) for led in sent] == [("solid", fx.adapter.COLOURS[side])]


def test_random_play_sends_the_boards_what_a_table_that_keeps_nothing_sends():
    """Lifts, put-backs and moves of both sides: the LED commands of a session are those of one that forgets
    what its lights kept before every event (what a cue lit, what a put-back restores, for which drawing)."""
    tmap = for_game("ringo")
    rng = random.Random(11)
    sent: dict[str, list] = {"kept": [], "fresh": []}
    tables = {k: Session(tmap, Journal(":memory:"), send=sent[k].append) for k in sent}
    seq = 0

    def sense(obj: str, value: int) -> None:
        nonlocal seq
        seq += 1
        for k, s in tables.items():
            if k == "fresh":
                s.effects._cues.clear()
                s.effects._restore = None
            o = tmap.objects[obj]
            s.sensed(Event(tmap.table, o.board, 1, seq, o.sensor, "presence", value, 0, 0))
        assert sent["kept"] == sent["fresh"], "after event %d" % seq

    moves = 0
    for _ in range(400):
        s = tables["kept"]
        if s.match.over:
            break
        legal = [m for m in s.match.legal() if m.get("t") == "move"]
        own = sorted({m["from"] for m in legal})
        if own and rng.random() < 0.7:  # a piece lifted and put back, once or twice
            cell = rng.choice(own)
            for _ in range(rng.randrange(1, 3)):
                sense(cell, 0)
                sense(cell, 1)
        elif legal:
            for obj, value in s.adapter.to_sensors(s.match.state, rng.choice(legal)):
                sense(obj, value)
            moves += 1
    assert moves > 20 and sent["kept"]
    assert tables["kept"].match.view(None) == tables["fresh"].match.view(None)


def test_looking_at_the_lighting_leaves_a_warning_to_be_put_back():
    """A page may ask what the view lights at any moment (lighting()): a warning lit before it is still put
    back by the cue that ends warnings, even where that cue names other spaces."""
    tmap = for_game("medieval-madness")
    sent: list = []
    s = Session(tmap, Journal(":memory:"))
    fx = Effects(tmap, s.adapter, sent.append)
    view = s.match.view(None)
    fx.relight(view)
    warned = next(n for n in sorted(tmap.objects) if tmap.objects[n].led is not None)
    number = int(warned.split(".")[1])
    fx.cue({"t": "cue", "cue": "pawn.misplaced", "space": number})
    assert [(led.board, led.target, led.pattern) for led in sent][-1:] == [
        (tmap.objects[warned].led_board, tmap.objects[warned].led, "blink")]
    fx.lighting(view)  # a page's look: nothing changes
    sent.clear()
    fx.cue({"t": "cue", "cue": "pawn.ok", "space": number + 1})
    back = [led for led in sent if (led.board, led.target) == (tmap.objects[warned].led_board, tmap.objects[warned].led)]
    assert back and back[-1].pattern != "blink", "the warning stayed lit: %s" % sent
