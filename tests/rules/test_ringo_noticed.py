"""Ringo: what the players read, see and are told, exactly (refusals, the end, the board picture,
the computer's choices). Written from the mutation run's survivors (tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Illegal, Match, Rng, cues, raises, says
from test_ringo import A, D, at, cell, first_cue, mv, ringo, targets

from shared_rules.ringo import opponent as opp


def test_a_refused_backwards_move_or_capture_blames_the_attackers_rule_only_for_an_attacker():
    # rulebook 5 and 8: attackers never move backwards, nor capture a defender from behind
    m = at(["c3", "g5"], ["c4", "a1"])
    e = raises(Illegal, m.apply, mv(A, "c3", "c5"))
    assert str(e) == "the attacker cannot go from c3 to c5: attackers never move or capture backwards"
    e = raises(Illegal, m.apply, mv(A, "c3", "c4"))
    assert str(e) == "the attacker cannot go from c3 to c4: c4 is not empty"
    # a sideways jump over nothing breaks the jumping rule, not the backwards one
    e = raises(Illegal, m.apply, mv(A, "c3", "e3"))
    assert str(e) == "the attacker cannot go from c3 to e3: a jump must go over an opposing piece, and d3 holds none"
    # defenders may go back (rulebook 6 and 9): their refused backwards jump names the empty cell
    m = at(["a5", "g5"], ["c3"], turn=D)
    e = raises(Illegal, m.apply, mv(D, "c3", "c5"))
    assert str(e) == "the defender cannot go from c3 to c5: a jump must go over an opposing piece, and c4 holds none"


def test_a_capture_into_the_neutral_zone_counts_the_defender_it_takes():
    # rulebook 13: one attacker in the zone, three defenders; taking a3 leaves two, and two may be there
    m = at(["n5", "b3", "g5"], ["a3", "c1", "e1"])
    assert "n3" in targets(m, "b3")
    fx = m.apply(mv(A, "b3", "n3"))
    assert says(fx)[0] == "The attacker on b3 captures the defender on a3 and lands on n3."
    assert m.view()["neutral"] == {"attackers": 2, "limit": 2}


def test_the_last_move_is_shown_as_from_and_to():
    m = at(["a5", "g5"], ["c1"])
    assert m.view()["last"] is None
    m.apply(mv(A, "a5", "a4"))
    assert m.view()["last"] == "a5-a4"
    m = at(["a5", "g5"], ["c1"], turn=D, options={"defenders_may_pass": True})
    m.apply({"t": "pass", "by": D})
    assert m.view()["last"] == "pass"


def test_a_side_that_cannot_move_ends_the_game_with_its_reason_and_winner_in_the_light():
    m = at(["a1", "b1", "d1", "e1", "c2", "c3", "g5"], ["c1"])
    fx = m.apply(mv(A, "g5", "g4"))
    over = [e for e in fx if e["t"] == "cue" and e["cue"] == "game.over"]
    assert over == [{"t": "cue", "cue": "game.over", "winner": A, "why": "blocked"}]
    m = at(["c1", "b1", "g5"], ["e3"], castle=1)
    fx = m.apply(mv(A, "c1", "castle"))
    assert fx[-1] == {"t": "cue", "cue": "game.over", "winner": A, "why": "castle"}
    m = at(["c3", "e5"], ["c4"], turn=D)
    fx = m.apply(mv(D, "c4", "c2"))
    assert fx[-1] == {"t": "cue", "cue": "game.over", "winner": D, "why": "attackers"}


def test_pieces_put_on_two_wrong_cells_are_both_named():
    m = at(["a5", "g5"], ["c1"])
    m.apply(cell("e3", True))
    fx = m.apply(cell("e2", True))
    text = "That is not a legal move for the attackers: take the piece off e2 and e3."
    assert says(fx) == [text]
    assert first_cue(fx) == {"t": "cue", "cue": "move.illegal", "side": A, "refill": [], "clear": ["e2", "e3"]}


def test_the_board_picture_shows_every_ring_outer_first_and_the_castle():
    m = at(["a5", "c3"], ["c1", "n1"], castle=1)
    assert m.view()["picture"] == [
        "     n a b c d e f g",
        "  5  . A . . . . . .",
        "  4  . . . . . . . .",
        "  3  . . . A . . . .",
        "  2  . . . . . . . .",
        "  1  D . . D . . . .",
        "  castle 1",
    ]


def test_a_losing_computer_attacker_takes_the_quiet_draw_rather_than_step_forward():
    # two attackers against four defenders, one quiet turn short of the house-rule draw:
    # any sideways step draws; a step forward restarts the count and loses on material
    m = at(["c5", "g5"], ["a1", "c1", "e1", "g1"], options={"quiet_draw": 10})
    m.state["quiet"] = 9
    move = opp.best_move(m.state, 1)
    assert move["to"][1:] == "5", move
    fx = m.apply(move)
    assert m.over and m.state["winner"] is None and "game.over" in cues(fx)


def test_asking_the_computer_for_a_move_after_the_game_is_over_says_why():
    m = at(["c3", "e5"], ["c4"], turn=D)
    m.apply(mv(D, "c4", "c2"))
    e = raises(ValueError, opp.best_move, m.state)
    assert str(e) == "the game is over; there is no move to suggest"


def opening():
    return Match(ringo, None, 0)


def lifted():
    m = Match(ringo, None, 0)
    m.apply(cell("a5", False))
    return m


# (the position, the refused input, the words the players get)
REFUSALS = [
    (opening, mv(A, "a5", "z9"),
     "to: 'z9' is not a cell (cells are a slice letter n or a-g and a ring 1-5, e.g. b4; or castle)"),
    (opening, {"t": "move", "by": A, "from": "a5"},
     "to: None is not a cell (cells are a slice letter n or a-g and a ring 1-5, e.g. b4; or castle)"),
    (opening, {"t": "jump", "by": A}, "unknown input type 'jump' (Ringo takes move, pass and cell)"),
    (opening, {"t": "move", "by": "orcs", "from": "a5", "to": "a4"},
     "move: by must be attackers or defenders, got 'orcs'"),
    (opening, mv(D, "c1", "c2"), "it is the attackers' turn, not the defenders'"),
    (opening, {"t": "pass", "by": A},
     "the attackers may not pass (only the defenders, with the defenders_may_pass variant)"),
    (opening, mv(A, "a5", "a5"), "the attacker cannot go from a5 to a5: a move goes to another cell"),
    (opening, mv(A, "a5", "a3"),
     "the attacker cannot go from a5 to a3: a jump must go over an opposing piece, and a4 holds none"),
    (opening, mv(A, "c1", "c2"), "c1 holds a defender, not one of the attackers' pieces"),
    (opening, mv(A, "a4", "a3"), "a4 holds nothing, not one of the attackers' pieces"),
    (opening, cell("a5", "yes"), "cell a5: occupied must be true or false, got 'yes'"),
    (opening, cell("castle", False), "the castle sensor says a piece left the castle, but the castle is empty"),
    (lifted, mv(A, "b5", "b4"), "pieces are off their cells (lifted from a5); finish or undo that on the board first"),
    (lambda: at(["c1", "g5", "a5"], ["e3"], castle=1), mv(A, "castle", "c1"),
     "a piece in the castle stays there; it cannot move"),
    (lambda: at(["b1", "g5", "a5"], ["c1"], turn=D), mv(D, "c1", "castle"),
     "the defender cannot go from c1 to castle: defenders may not enter the castle"),
    (lambda: at(["n1", "g5"], ["a1", "c3"], options={"enter_from_neutral": False}), mv(A, "n1", "castle"),
     ("the attacker cannot go from n1 to castle: attackers may not enter the castle from the Neutral Zone in this "
     "variant")),
    (lambda: at(["a5", "b5"], ["c1"], turn=D), mv(D, "c1", "g1"),
     "the defender cannot go from c1 to g1: the castle holds no attacker to capture"),
    (lambda: at(["n5", "n4", "a3"], ["c1", "e1"]), mv(A, "a3", "n3"),
     ("the attacker cannot go from a3 to n3: more attackers in the Neutral Zone than defenders left is not allowed "
     "(limit 2)")),
    (lambda: at(["c3", "g5"], ["c2", "a1"]), mv(A, "c3", "f2"),
     "the attacker cannot go from c3 to f2: a piece moves one cell forward, back or sideways, or jumps one piece"),
]


def test_every_refusal_tells_the_players_what_was_wrong_in_words():
    for position, bad, words in REFUSALS:
        m = position()
        e = raises(Illegal, m.apply, bad)
        assert str(e) == words, (bad, str(e))
    e = raises(Illegal, ringo.board_from, ["z1"])
    assert str(e) == "'z1' is not a cell a piece can stand on"
    e = raises(Illegal, Match, ringo, {"quiet_draw": -1}, 0)
    assert str(e) == "option quiet_draw=-1 must be a whole number of turns, 0 or more (0: no such draw)"


def test_with_the_neutral_zone_full_an_attacker_may_still_jump_a_defender_in_it():
    # rulebook 13 limits the attackers in the zone; jumping a piece in it (rule 11) adds none there
    m = at(["a3", "n5", "n2"], ["n3", "c1"])
    assert m.view()["neutral"] == {"attackers": 2, "limit": 2}
    assert targets(m, "a3") == ["a2", "b3", "g3"]
    assert says(m.apply(mv(A, "a3", "g3"))) == ["The attacker on a3 jumps over n3 in the Neutral Zone to g3."]
    m = at(["n5", "n1", "a5"], ["n4", "c1"])
    assert targets(m, "n5") == ["g5", "n3"]
    assert says(m.apply(mv(A, "n5", "n3"))) == ["The attacker on n5 jumps over n4 in the Neutral Zone to n3."]


def test_a_capture_the_neutral_zone_cannot_take_leaves_the_attackers_other_moves_on_offer():
    # taking a3 would leave one defender and two attackers in the zone; b3 may still step on or sideways
    m = at(["b3", "n5", "g5"], ["a3", "e1"])
    assert targets(m, "b3") == ["b2", "c3"]
    e = raises(Illegal, m.apply, mv(A, "b3", "n3"))
    assert str(e) == ("the attacker cannot go from b3 to n3: more attackers in the Neutral Zone than defenders left is "
                      "not allowed (limit 1)")


def test_the_computer_at_full_strength_answers_without_looking_at_every_reply():
    # captures and castle entries first let the search skip most replies: a board answers in time
    m = Match(ringo, None, 1, keep_log=False)
    rng = Rng(1)
    looked = []  # positions searched, after 10, 20 and 30 random moves
    for moves in range(1, 31):
        m.apply(rng.choice(m.legal()))
        if moves % 10 == 0:
            s = m.state
            looked.append(opp.choose(s["board"], s["castle"], s["turn"], s["options"], s["quiet"], 4)[2])
    assert sum(looked) <= 4000, looked
