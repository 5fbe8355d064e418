"""Ringo's table adapter: a move given whole (from the host page, or the venue's players) becomes the
sensor changes a player's hands make, and those changes make exactly that move."""

from battlement.table.adapter import adapter_for

from shared_rules.engine import Match
from shared_rules.ringo import rules as ringo


def at(attackers, defenders, castle, turn):
    m = Match(ringo, None, 0)
    m.state["board"] = ringo.board_from(attackers, defenders)
    m.state["castle"] = castle
    m.state["turn"] = turn
    return m


def pressed(m, steps):
    """Feed the steps as the cells' sensors would; the inputs' effects."""
    fx = []
    for cell, occupied in steps:
        fx.extend(m.apply({"t": "cell", "cell": cell, "occupied": bool(occupied)}))
    return fx


def test_a_defenders_jump_across_the_castle_takes_the_attacker_out_of_it():
    m = at(["c3", "e5"], ["f1"], castle=1, turn="defenders")
    move = {"t": "move", "by": "defenders", "from": "f1", "to": "b1"}
    assert move in m.legal()
    steps = adapter_for(ringo).to_sensors(m.state, move)
    assert ("castle", 0) in steps  # the captured attacker is lifted out of the castle
    pressed(m, steps)
    assert m.state["hand"] is None and m.state["castle"] == 0  # the move was made, nothing left in hand
    assert m.state["turn"] == "attackers"


def test_every_legal_move_of_an_opening_presses_into_itself():
    m = Match(ringo, None, 0)
    for move in [x for x in m.legal() if x["t"] == "move"]:
        trial = Match(ringo, None, 0)
        pressed(trial, adapter_for(ringo).to_sensors(trial.state, move))
        assert trial.state["hand"] is None and trial.state["turn"] != m.state["turn"], move
