"""Medieval Pong, the moments only alternative characters bring: the Ninja's touch and the
Hunter's trap (hidden, sprung, lost, healed) (docs/rules/medieval-pong.md).

The rules (medieval_pong.rules) import this module the first time one of these happens, so a game with the
base characters on a small board never loads it. Runs under CPython and MicroPython; pure, no I/O.
"""

from shared_rules.engine import Illegal, cue, say
from shared_rules.medieval_pong.core import _trap_targets, other, side_name


def on_touch(state, inp, fx, h):
    """A returned ball touched the other side during the Ninja's fire at will h: the steps that follow."""
    by = inp["by"]
    if h["kind"] != "ninja" or by != h["origin"]:
        raise Illegal("only %s, whose Ninja was hit, may return balls during this fire at will" % h["origin"])
    o = other(by)
    say(fx, "A returned ball touched %s! %s must destroy one of its towers and apply its power."
        % (side_name(o), side_name(o)))
    cue(fx, "fire.end")
    cue(fx, "ninja.touch", side=o)
    return [{"k": "destroy", "by": o, "why": "ninja"}]


def on_trap(state, s, t, fx):
    """Side s hides the Hunter's trap in its tower t (the rules checked it is one of s's towers)."""
    if t not in _trap_targets(state, s):
        raise Illegal("the trap goes in a standing tower of %s; tower %s is not one" % (s, t))
    state["sides"][s]["trap"] = t
    say(fx, "Your trap is in tower %s." % t, to=s)
    say(fx, "%s has hidden the Hunter's trap in one of its towers." % side_name(s))
    cue(fx, "trap.set", side=s)


def heal(state, fx, thrower):
    """The bitten thrower entered a ball: dominant hand again."""
    state["sides"][thrower]["bitten"] = False
    say(fx, "%s's hand has healed: back to the dominant hand." % side_name(thrower))
    cue(fx, "hand.healed", side=thrower)


def spring(state, fx, k, t, thrower):
    """A thrown ball entered tower t of side k, where the trap is."""
    state["sides"][k]["trap"] = None
    if thrower == k:
        say(fx, "The Hunter's trap in it is ignored.")
    else:
        state["sides"][thrower]["bitten"] = True
        say(fx, "It was the Hunter's trap! %s is bitten and throws with its non-dominant hand "
            "until its next ball in a tower." % side_name(thrower))
        cue(fx, "trap.sprung", side=k, tower=t, bitten=thrower)


def lost(state, fx, s, t):
    """Tower t is destroyed with the trap in it."""
    state["sides"][s]["trap"] = None
    say(fx, "The trap in tower %s is lost with it." % t)
