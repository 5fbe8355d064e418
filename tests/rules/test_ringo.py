"""Ringo: one scenario per rulebook clause (docs/rules/ringo.md maps each clause to its test).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Illegal, Match, Rng, cues, dumps, load, play, prompts, raises, says, scale

ringo = load("ringo")
A = "attackers"
D = "defenders"


def at(attackers, defenders, castle=0, turn=A, options=None):
    """A match set to a position: pieces on the named cells, `turn` to play."""
    m = Match(ringo, options, 0)
    m.state["board"] = ringo.board_from(attackers, defenders)
    m.state["castle"] = castle
    m.state["turn"] = turn
    return m


def mv(by, frm, to):
    return {"t": "move", "by": by, "from": frm, "to": to}


def cell(name, occupied):
    return {"t": "cell", "cell": name, "occupied": occupied}


def first_cue(fx):
    for e in fx:
        if e["t"] == "cue":
            return e
    return None


def targets(m, frm):
    """Where the piece on frm may go now, sorted."""
    return sorted(i["to"] for i in m.legal() if i["t"] == "move" and i["from"] == frm)


# ---------------------------------------------------------------- the board and set-up


def test_board_has_41_cells_named_by_slice_and_ring_with_the_neutral_zone_as_slice_n():
    assert len(ringo.NAMES) == 41 and ringo.NAMES[0] == "castle"
    assert ringo.NAMES[1] == "n1" and ringo.NAMES[2] == "a1" and ringo.NAMES[40] == "g5"
    assert sorted(ringo.NAMES[c] for c in ringo.NEUTRAL) == ["n1", "n2", "n3", "n4", "n5"]
    assert len(set(ringo.NAMES)) == 41


def test_setup_puts_7_attackers_on_the_outer_ring_and_4_defenders_on_ring_1_leaving_the_neutral_zone_empty():
    m = Match(ringo, None, 3)
    v = m.view()
    assert sorted(c for c in v["cells"] if v["cells"][c] == A) == ["a5", "b5", "c5", "d5", "e5", "f5", "g5"]
    assert sorted(c for c in v["cells"] if v["cells"][c] == D) == ["a1", "c1", "e1", "g1"]
    assert "n5" not in v["cells"] and "n1" not in v["cells"]
    assert v["castle"] == 0 and v["awaiting"] == [A] and v["attackers"] == 7 and v["defenders"] == 4


def test_five_or_six_attackers_variant_leaves_symmetric_gaps():
    six = Match(ringo, {"attackers": 6}, 0).view()["cells"]
    assert sorted(c for c in six if six[c] == A) == ["a5", "b5", "c5", "e5", "f5", "g5"]
    five = Match(ringo, {"attackers": 5}, 0).view()["cells"]
    assert sorted(c for c in five if five[c] == A) == ["a5", "c5", "d5", "e5", "g5"]
    e = raises(Illegal, Match, ringo, {"attackers": 4}, 0)
    assert "attackers" in str(e)


def test_attackers_move_first_then_sides_alternate_one_piece_each():
    e = raises(Illegal, play, "ringo", [mv(D, "c1", "c2")])
    assert "attackers' turn" in str(e)
    m = play("ringo", [mv(A, "a5", "a4"), mv(D, "c1", "c2")])
    assert m.awaiting() == [A]
    assert says(m.effects[0]) == ["The attacker moves from a5 to a4."]
    assert cues(m.effects[0]) == ["move", "turn"]
    e = raises(Illegal, m.apply, mv(D, "c2", "c3"))
    assert "attackers' turn" in str(e)


# ---------------------------------------------------------------- moving


def test_attackers_step_forward_or_sideways_but_never_back():
    m = at(["c3", "e5"], ["g1"])
    assert targets(m, "c3") == ["b3", "c2", "d3"]
    e = raises(Illegal, m.apply, mv(A, "c3", "c4"))
    assert "c3 to c4" in str(e) and "backwards" in str(e)
    e = raises(Illegal, m.apply, mv(A, "c3", "c1"))
    assert "a jump must go over an opposing piece, and c2 holds none" in str(e)
    e = raises(Illegal, m.apply, mv(A, "c3", "f2"))
    assert "one cell" in str(e)


def test_defenders_step_forward_back_or_sideways_but_never_into_the_castle():
    m = at(["a5", "e5"], ["c2", "c1"], turn=D)
    assert targets(m, "c2") == ["b2", "c3", "d2"]
    assert targets(m, "c1") == ["b1", "d1"]
    e = raises(Illegal, m.apply, mv(D, "c1", "castle"))
    assert "may not enter the castle" in str(e)


def test_pieces_cannot_share_a_cell():
    m = at(["c3", "d3"], ["c2"])
    e = raises(Illegal, m.apply, mv(A, "c3", "d3"))
    assert "d3 is not empty" in str(e)
    e = raises(Illegal, m.apply, mv(A, "e5", "e4"))
    assert "e5 holds nothing" in str(e)
    e = raises(Illegal, m.apply, mv(A, "c2", "c1"))
    assert "c2 holds a defender" in str(e)


def test_sideways_wraps_round_the_ring_through_the_neutral_zone():
    m = at(["g3", "c5"], ["a1"])
    assert targets(m, "g3") == ["f3", "g2", "n3"]
    m.apply(mv(A, "g3", "n3"))
    m.apply(mv(D, "a1", "n1"))
    assert targets(m, "n3") == ["a3", "g3", "n2"]


def test_a_piece_in_the_castle_stays_there():
    m = at(["c3", "e5"], ["g1"], castle=1)
    e = raises(Illegal, m.apply, mv(A, "castle", "c1"))
    assert "stays there" in str(e)


# ---------------------------------------------------------------- capturing


def test_attackers_capture_from_the_front_and_sides_but_not_from_behind():
    m = at(["c3", "g5"], ["c2", "b3", "d3", "c4"])
    assert targets(m, "c3") == ["a3", "c1", "e3"]  # over b3, c2, d3; never back over c4
    fx = m.apply(mv(A, "c3", "e3"))
    assert says(fx)[0] == "The attacker on c3 captures the defender on d3 and lands on e3."
    assert "capture" in cues(fx)
    v = m.view()
    assert "d3" not in v["cells"] and v["cells"]["e3"] == A and v["defenders"] == 3


def test_defenders_capture_from_the_front_sides_and_behind():
    m = at(["c2", "b3", "d3", "c4"], ["c3"], turn=D)
    assert targets(m, "c3") == ["a3", "c1", "c5", "e3"]
    m.apply(mv(D, "c3", "c5"))
    assert "c4" not in m.view()["cells"] and m.view()["attackers"] == 3


def test_a_capture_must_land_on_an_empty_cell():
    m = at(["c3", "g5"], ["c2", "c1"])
    assert "c1" not in targets(m, "c3")
    e = raises(Illegal, m.apply, mv(A, "c3", "c1"))
    assert "c1 is not empty" in str(e)


def test_captures_are_optional_and_never_chain():
    m = at(["c3", "g5"], ["c2", "b1"])
    assert "b3" in targets(m, "c3") and "c1" in targets(m, "c3")  # may step instead of capturing
    m.apply(mv(A, "c3", "c1"))  # captures c2; from c1 it could jump b1 to a1 but the turn is over
    assert m.awaiting() == [D]
    assert m.view()["cells"]["b1"] == D


def test_pieces_in_the_neutral_zone_cannot_be_captured_but_can_be_jumped():
    m = at(["a3", "e5"], ["n3", "c1"])
    fx = m.apply(mv(A, "a3", "g3"))
    assert says(fx)[0] == "The attacker on a3 jumps over n3 in the Neutral Zone to g3."
    v = m.view()
    assert v["cells"]["n3"] == D and v["defenders"] == 2 and "capture" not in cues(fx)
    m = at(["n2", "e5", "c5"], ["a2"], turn=D)
    m.apply(mv(D, "a2", "g2"))
    assert m.view()["cells"]["n2"] == A and m.view()["attackers"] == 3


def test_a_sideways_capture_may_start_in_or_land_in_the_neutral_zone():
    m = at(["n3", "e5"], ["a3", "c1", "e1"])
    m.apply(mv(A, "n3", "b3"))
    assert "a3" not in m.view()["cells"]
    m = at(["b3", "e5"], ["a3", "c1", "e1"])
    m.apply(mv(A, "b3", "n3"))
    assert m.view()["cells"]["n3"] == A and "a3" not in m.view()["cells"]


def test_no_more_attackers_in_the_neutral_zone_than_defenders_left():
    m = at(["n5", "n4", "a3"], ["c1", "e1"])
    assert "n3" not in targets(m, "a3")
    e = raises(Illegal, m.apply, mv(A, "a3", "n3"))
    assert "Neutral Zone" in str(e) and "limit 2" in str(e)
    assert m.view()["neutral"] == {"attackers": 2, "limit": 2}
    # moving on inside the zone keeps the count
    m = at(["n5", "n3", "a3"], ["c1", "e1"])
    assert "n4" in targets(m, "n5")
    # a capture that leaves too few defenders for the attackers already in the zone is refused
    m = at(["n5", "n4", "b3"], ["a3", "c1", "e1"])
    assert "n3" not in targets(m, "b3")
    e = raises(Illegal, m.apply, mv(A, "b3", "n3"))
    assert "limit 2" in str(e)


def test_variant_only_one_attacker_in_the_neutral_zone():
    m = at(["n5", "a4"], ["c1", "e1", "g1"], options={"neutral_limit": "one"})
    assert "n4" not in targets(m, "a4")
    m = at(["n5", "a4"], ["c1", "e1", "g1"])
    assert "n4" in targets(m, "a4")


# ---------------------------------------------------------------- the castle


def test_attackers_enter_the_castle_from_ring_1_and_two_inside_win():
    m = at(["c1", "b1", "g5"], ["e3"])
    fx = m.apply(mv(A, "c1", "castle"))
    assert says(fx) == ["An attacker enters the castle from c1."]
    assert "castle.entered" in cues(fx) and m.view()["castle"] == 1
    m.apply(mv(D, "e3", "e4"))
    fx = m.apply(mv(A, "b1", "castle"))
    assert m.over and m.state["winner"] == A and m.awaiting() == []
    assert says(fx)[-1] == "Two attackers hold the castle. The attackers win!"
    assert "game.over" in cues(fx)


def test_an_attacker_on_ring_2_may_capture_into_the_castle():
    m = at(["c2", "g5"], ["c1", "e3"])
    m.apply(mv(A, "c2", "castle"))
    assert m.view()["castle"] == 1 and "c1" not in m.view()["cells"]


def test_a_defender_on_ring_2_may_not_capture_into_the_castle():
    m = at(["c1", "g5", "a5"], ["c2"], turn=D)
    assert "castle" not in targets(m, "c2")
    e = raises(Illegal, m.apply, mv(D, "c2", "castle"))
    assert "may not enter the castle" in str(e)


def test_a_defender_jumps_over_the_castle_to_capture_the_attacker_in_it():
    m = at(["a5", "b5"], ["c1"], castle=1, turn=D)
    assert "g1" in targets(m, "c1")  # straight across: c is opposite g
    fx = m.apply(mv(D, "c1", "g1"))
    assert says(fx)[0] == "The defender on c1 captures the attacker in the castle and lands on g1."
    assert m.view()["castle"] == 0
    m = at(["a5", "b5", "g1"], ["c1"], castle=1, turn=D)
    assert "g1" not in targets(m, "c1")
    m = at(["a5", "b5"], ["c1"], castle=0, turn=D)
    e = raises(Illegal, m.apply, mv(D, "c1", "g1"))
    assert "castle holds no attacker" in str(e)


def test_variant_attackers_may_not_enter_the_castle_from_the_neutral_zone():
    m = at(["n1", "n2", "g5"], ["a1", "c3"], options={"enter_from_neutral": False})
    assert "castle" not in targets(m, "n1")
    e = raises(Illegal, m.apply, mv(A, "n1", "castle"))
    assert "from the Neutral Zone" in str(e)
    m = at(["n1", "g5"], ["a1", "c3"])
    assert "castle" in targets(m, "n1")
    # nor by jumping the defender on n1 (who cannot be captured there) from n2
    m = at(["n2", "g5"], ["n1", "c3"])
    assert "castle" in targets(m, "n2")
    m.apply(mv(A, "n2", "castle"))
    assert m.view()["castle"] == 1 and m.view()["cells"]["n1"] == D
    m = at(["n2", "g5"], ["n1", "c3"], options={"enter_from_neutral": False})
    assert "castle" not in targets(m, "n2")


# ---------------------------------------------------------------- winning and ending


def test_defenders_win_when_the_attackers_are_down_to_one():
    m = at(["c3", "e5"], ["c4"], turn=D)
    fx = m.apply(mv(D, "c4", "c2"))
    assert m.over and m.state["winner"] == D
    assert says(fx)[-1] == "Only one attacker is left. The defenders win!"


def test_a_side_that_cannot_move_loses():
    # the only defender on c1 is boxed in: b1, d1, c2 held and every landing cell filled
    m = at(["a1", "b1", "d1", "e1", "c2", "c3", "g5"], ["c1"])
    fx = m.apply(mv(A, "g5", "g4"))
    assert m.over and m.state["winner"] == A
    assert says(fx)[-1] == "The defenders cannot move. The attackers win!"


def test_variant_defenders_may_pass_a_turn_and_then_are_never_stuck():
    e = raises(Illegal, play, "ringo", [mv(A, "a5", "a4"), {"t": "pass", "by": D}])
    assert "may not pass" in str(e)
    m = play("ringo", [mv(A, "a5", "a4"), {"t": "pass", "by": D}], options={"defenders_may_pass": True})
    assert m.awaiting() == [A] and says(m.effects[1]) == ["The defenders pass."]
    assert {"t": "pass", "by": D} not in m.legal()
    m = at(["a1", "b1", "d1", "e1", "c2", "c3", "g5"], ["c1"], options={"defenders_may_pass": True})
    m.apply(mv(A, "g5", "g4"))
    assert not m.over and m.legal() == [{"t": "pass", "by": D}]


def shuffle(m, rounds):
    """Attackers a5<->b5 and defenders e1<->e2, back and forth: no capture, no attacker forward."""
    for i in range(rounds):
        for step in (mv(A, "a5", "b5"), mv(D, "e1", "e2")) if i % 2 == 0 else (mv(A, "b5", "a5"), mv(D, "e2", "e1")):
            if m.over:
                return
            m.apply(step)


def test_the_rulebook_has_no_draw_so_by_default_shuffling_goes_on():
    assert ringo.OPTIONS["quiet_draw"]["default"] == 0
    m = at(["a5", "c5"], ["e1", "g1"])
    shuffle(m, 60)  # 120 turns without progress
    assert not m.over and m.state["turns"] == 120 and m.awaiting() == [A]


def test_the_quiet_draw_house_rule_ends_a_game_after_its_turns_without_progress():
    m = at(["a5", "c5"], ["e1", "g1"], options={"quiet_draw": 50})
    shuffle(m, 25)
    assert m.over and m.state["winner"] is None and m.state["turns"] == 50
    assert m.announcements[-1] == "50 turns in a row without a capture or an attacker moving forward: the game is a draw."
    m = at(["a5", "c5"], ["e1", "g1"], options={"quiet_draw": 50})
    m.state["quiet"] = 48
    m.apply(mv(A, "a5", "a4"))  # advancing starts the count again
    assert m.state["quiet"] == 0
    m = at(["a5", "c5"], ["e1", "g1"], options={"quiet_draw": 10})
    shuffle(m, 25)
    assert m.over and m.state["turns"] == 10


def test_the_quiet_draw_option_must_be_a_whole_number_of_turns():
    for bad in (-1, True, "50", 2.5):
        e = raises(Illegal, Match, ringo, {"quiet_draw": bad}, 0)
        assert "quiet_draw" in str(e) and "whole number" in str(e)


# ---------------------------------------------------------------- bad input


def test_bad_inputs_are_refused_naming_what_is_wrong_and_leave_the_state_unchanged():
    m = Match(ringo, None, 0)
    before = m.view()
    assert "not a cell" in str(raises(Illegal, m.apply, mv(A, "z9", "a4")))
    assert "slice letter n or a-g" in str(raises(Illegal, m.apply, mv(A, "a5", "a6")))
    assert "by must be" in str(raises(Illegal, m.apply, {"t": "move", "by": "red", "from": "a5", "to": "a4"}))
    assert "unknown input type" in str(raises(Illegal, m.apply, {"t": "roll"}))
    assert "occupied must be true or false" in str(raises(Illegal, m.apply, {"t": "cell", "cell": "a5"}))
    assert m.view() == before and m.inputs == []


def test_no_input_changes_a_state_it_was_applied_to_accepted_or_refused():
    # What lets a match copy Ringo's state shallowly before each input (FLAT_STATE): a refused sensor
    # change or move leaves the game as it was, and an accepted one never reaches back into the state
    # an undo replays from.
    assert ringo.FLAT_STATE
    rng = Rng(5)
    names = ringo.NAMES
    for game in range(scale(20, 4)):
        m = Match(ringo, {"attackers": 5 + game % 3}, game)
        for _ in range(scale(200, 40)):
            if m.over:
                break
            legal = m.legal()
            r = rng.below(4)
            if r == 0 and legal:
                inp = rng.choice(legal)
            elif r == 1:
                inp = mv(rng.choice([A, D]), rng.choice(names), rng.choice(names))
            else:
                inp = cell(rng.choice(names), rng.below(2) == 1)
            old = m.state
            before = dumps(old)
            try:
                ringo.apply(dict(old), inp)  # as the bridge's Match applies it (FLAT_STATE)
            except Illegal:
                pass
            assert dumps(old) == before, inp
            try:
                m.apply(inp)
            except Illegal:
                pass


def test_a_piece_lifted_again_in_the_same_position_lights_the_same_cells():
    # The cells a lifted piece may go to are kept per position (CPython): the second lift of a piece, of
    # this table or another, gets what the first worked out, in every position random games reach.
    rng = Rng(9)
    for game in range(scale(6, 2)):
        m = Match(ringo, {"attackers": 5 + game % 3}, game)
        for _ in range(scale(60, 15)):
            if m.over:
                break
            pieces = [c for c in ringo.NAMES if c != "castle" and m.view()["cells"].get(c) == m.state["turn"]]
            for c in pieces:
                again = ringo.apply(dict(m.state), cell(c, False))  # what earlier positions left kept
                kept = dict(ringo._LIFTED)
                ringo._LIFTED.clear()
                first = ringo.apply(dict(m.state), cell(c, False))  # worked out afresh
                ringo._LIFTED.update(kept)
                assert again == first, (c, first, again)
            m.apply(rng.choice(m.legal()))


# ---------------------------------------------------------------- reading the sensors


def test_a_piece_lifted_and_put_back_changes_nothing():
    m = Match(ringo, None, 0)
    fx = m.apply(cell("a5", False))
    lifted = first_cue(fx)
    assert lifted["cue"] == "piece.lifted" and lifted["cell"] == "a5" and lifted["to"] == ["a4", "n5"]
    assert m.view()["hand"] == {"off": ["a5"], "extra": [], "castle": 0}
    assert m.awaiting() == [A]
    e = raises(Illegal, m.apply, mv(A, "b5", "b4"))
    assert "lifted from a5" in str(e)
    fx = m.apply(cell("a5", True))
    assert cues(fx) == ["board.restored"] and m.view()["hand"] is None and m.awaiting() == [A]
    assert m.view()["cells"]["a5"] == A


def test_a_move_read_from_the_sensors():
    m = play("ringo", [cell("a5", False), cell("a4", True)])
    assert m.awaiting() == [D] and m.view()["cells"]["a4"] == A and "a5" not in m.view()["cells"]
    assert m.announcements == ["The attacker moves from a5 to a4."]


def test_a_capture_read_from_the_sensors_in_either_order():
    m = at(["c3", "g5"], ["c2", "e1"])
    m.apply(cell("c3", False))
    fx = m.apply(cell("c1", True))
    assert first_cue(fx) == {"t": "cue", "cue": "capture.remove", "side": A, "cells": ["c2"]}
    assert m.awaiting() == [A]
    fx = m.apply(cell("c2", False))
    assert "capture" in cues(fx) and m.awaiting() == [D] and m.view()["defenders"] == 1
    m = at(["c3", "g5"], ["c2", "e1"])
    fx = m.apply(cell("c2", False))  # the captured defender taken off first: light the capturer and its landing
    assert first_cue(fx) == {"t": "cue", "cue": "move.pending", "side": A, "lift": ["c3"], "place": ["c1"]}
    for inp in (cell("c3", False), cell("c1", True)):
        m.apply(inp)
    assert m.awaiting() == [D] and "c2" not in m.view()["cells"] and m.view()["cells"]["c1"] == A


def test_an_illegal_placement_is_prompted_naming_the_cells_until_put_right():
    m = Match(ringo, None, 0)
    m.apply(cell("a5", False))
    fx = m.apply(cell("a3", True))
    text = "That is not a legal move for the attackers: take the piece off a3, then put the piece back on a5."
    assert says(fx) == [text]
    p = prompts(fx)[0]
    assert p["to"] == A and p["ask"] == text
    bad = first_cue(fx)
    assert bad["cue"] == "move.illegal" and bad["refill"] == ["a5"] and bad["clear"] == ["a3"]
    assert sorted((i["cell"], i["occupied"]) for i in m.legal()) == [("a3", False), ("a5", True)]
    m.apply(cell("a3", False))
    m.apply(cell("a4", True))
    assert m.awaiting() == [D] and m.view()["cells"]["a4"] == A


def test_a_piece_of_the_side_not_playing_lifted_is_asked_back():
    m = Match(ringo, None, 0)
    fx = m.apply(cell("c1", False))
    assert says(fx) == ["That is not a legal move for the attackers: put the piece back on c1."]


def test_the_castle_sensor_counts_pieces_in_and_out():
    m = at(["c1", "g5", "a5"], ["e3"])
    m.apply(cell("c1", False))
    m.apply(cell("castle", True))
    assert m.view()["castle"] == 1 and m.awaiting() == [D]
    m = at(["a5", "b5"], ["c1"], castle=1, turn=D)
    m.apply(cell("c1", False))
    fx = m.apply(cell("g1", True))
    assert first_cue(fx) == {"t": "cue", "cue": "capture.remove", "side": D, "cells": ["castle"]}
    m.apply(cell("castle", False))
    assert m.view()["castle"] == 0 and m.view()["cells"]["g1"] == D and m.awaiting() == [A]
    e = raises(Illegal, m.apply, cell("castle", False))
    assert "castle is empty" in str(e)


def test_a_sensor_repeating_itself_is_refused():
    m = Match(ringo, None, 0)
    e = raises(Illegal, m.apply, cell("a5", True))
    assert str(e) == "cell a5 reports occupied but it is already occupied"
    e = raises(Illegal, m.apply, cell("a4", False))
    assert str(e) == "cell a4 reports empty but it is already empty"


# ---------------------------------------------------------------- perft


def test_perft_from_the_start_counts_9_108_1260_13860_moves():
    opts = Match(ringo, None, 0).options
    assert [ringo.perft(opts, d) for d in (1, 2, 3, 4)] == [9, 108, 1260, 13860]


def test_perft_of_the_variants():
    m = Match(ringo, {"defenders_may_pass": True}, 0)
    assert [ringo.perft(m.options, d) for d in (1, 2, 3)] == [9, 117, 1365]
    m = Match(ringo, {"attackers": 5}, 0)
    assert [ringo.perft(m.options, d) for d in (1, 2, 3)] == [11, 132, 1452]
