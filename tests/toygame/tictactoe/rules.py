"""Tic-tac-toe with a curse: the toy game that proves the seam (tests/web/test_toy_game.py).

Nine cells a1..c3, a presence sensor under each. Before play, each side hides a curse in one cell,
in secret (its own page). A piece the other side puts on a cursed cell burns: it stays as a stone
nobody owns, the curse is shown, and the turn passes. Three in a row wins; a full board is a draw.
Pure rules on the engine contract (docs/rules/engine.md), like the five games.
"""

from shared_rules.engine import Illegal, cue, prompt, say

NAME = "tic-tac-toe"
TITLE = "Tic-tac-toe with a curse"
SIDES = ("o", "x")
SENSED = ("cell",)
OPTIONS = {"first": {"default": "x", "choices": ["x", "o"], "help": "the side that puts the first piece"}}
CELLS = ("a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3")
LINES = (("a1", "a2", "a3"), ("b1", "b2", "b3"), ("c1", "c2", "c3"), ("a1", "b1", "c1"), ("a2", "b2", "c2"),
         ("a3", "b3", "c3"), ("a1", "b2", "c3"), ("a3", "b2", "c1"))


def other(side):
    return "o" if side == "x" else "x"


def setup(options, seed):
    return {"game": NAME, "options": options, "rng": seed, "over": False, "winner": None, "phase": "curse",
            "cells": {}, "curse": {"o": None, "x": None}, "shown": [], "turn": options["first"]}


def awaiting(state):
    if state["over"]:
        return []
    if state["phase"] == "curse":
        return [s for s in SIDES if state["curse"][s] is None]
    return [state["turn"]]


def legal(state):
    if state["over"]:
        return []
    if state["phase"] == "curse":
        return [{"t": "curse", "by": s, "cell": c} for s in awaiting(state) for c in CELLS]
    return [{"t": "cell", "cell": c, "occupied": True} for c in CELLS if c not in state["cells"]]


def apply(state, inp):
    if state["over"]:
        raise Illegal("the game is over")
    fx = []
    t = inp.get("t")
    if t == "curse":
        s = inp.get("by")
        if state["phase"] != "curse" or s not in SIDES or state["curse"][s] is not None:
            raise Illegal("%s cannot hide a curse now" % s)
        if inp.get("cell") not in CELLS:
            raise Illegal("no cell %r (cells a1..c3)" % inp.get("cell"))
        state["curse"][s] = inp["cell"]
        say(fx, "Your curse is on %s." % inp["cell"], to=s)
        say(fx, "%s has hidden its curse." % s.upper())
        if not awaiting(state):
            state["phase"] = "play"
            say(fx, "%s, put your first piece." % state["turn"].upper())
            cue(fx, "turn", side=state["turn"])
        return fx
    if t != "cell":
        raise Illegal("tic-tac-toe takes curse and cell inputs, not %r" % t)
    c = inp.get("cell")
    if state["phase"] != "play":
        raise Illegal("hide both curses first")
    if c not in CELLS or c in state["cells"] or not inp.get("occupied"):
        raise Illegal("cell %s is not a free cell" % c)
    s = state["turn"]
    if state["curse"][other(s)] == c:
        state["cells"][c] = "stone"
        state["shown"].append(c)
        say(fx, "Cell %s was cursed by %s! %s's piece burns to stone." % (c, other(s).upper(), s.upper()))
        cue(fx, "cursed", cell=c)
    else:
        state["cells"][c] = s
        cue(fx, "piece", cell=c, side=s)
        for line in LINES:
            if all(state["cells"].get(x) == s for x in line):
                state["over"], state["winner"] = True, s
                say(fx, "Three in a row: %s wins!" % s.upper())
                return fx
    if len(state["cells"]) == len(CELLS):
        state["over"] = True
        say(fx, "The board is full: a draw.")
        return fx
    state["turn"] = other(s)
    cue(fx, "turn", side=state["turn"])
    prompt(fx, state["turn"], "%s, put a piece on a free cell." % state["turn"].upper())
    return fx


def view(state, viewer):
    out = {"phase": state["phase"], "cells": dict(state["cells"]), "turn": state["turn"],
           "cursed": list(state["shown"]), "curses_hidden": [s for s in SIDES if state["curse"][s] is not None]}
    if viewer in SIDES:
        out["my_curse"] = state["curse"][viewer]
    return out
