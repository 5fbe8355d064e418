"""Medieval Pong: why an input is refused, in words (docs/rules/medieval-pong.md).

The reasons are only needed when an input is refused, so medieval_pong loads them then and a
game played through legal() inputs on a small board never holds their text. Runs under CPython
and MicroPython; pure, no I/O.
"""

from shared_rules.medieval_pong.core import ASKS, _covered, _towers, side_name

# Keyed by the input type refused where it has one reason, else by what went wrong.
REASONS = {
    "field": "input %r needs a %r field",
    "side": "%s must be red or blue, got %r",
    "tower": "there is no tower %r in %s's kingdom (%s..%s)",
    "input": "unknown input type %r for %s (known: %s)",
    "over": "the game is over",
    "not-now": "%s cannot act now: waiting for %s",
    "phase": "%s is not possible now (the game is in its %s phase)",
    "expect": "%s is not expected now: %s",
    "place": "%s has no %r left to place (left: %s)",
    "occupied": "tower %s of %s already holds a character",
    "ready": "%s still has to place: %s",
    "twice": "a ball is already in tower %s of %s in this throw",
    "no-entry": "a ball cannot enter tower %s of %s now: it is %s",
    "choose": "no ball of this throw is in tower %s of %s",
    "tie": "in a tie the ball that counts is the one in %s's kingdom (%s just lost its %s)",
    "tilt": "tower %s of %s is not a roof; only a roof tipping over changes the game",
    "swap": "%s must throw now: swapping instead of throwing needs the tactical variant, "
               "at the start of a normal turn",
    "ask": "the Seer knows no character %r (%s)",
    "roof": "tower %s of %s cannot take a tower on top: it is not standing free",
    "rebuild": "%s cannot rebuild tower %s with the %s: the tower must be on its rampart and the "
                  "character among its discarded ones",
    "destroy": "%s cannot destroy tower %s (choices: %s)",
}

# What each input does, for "... is not possible now" and "... is not expected now".
DOING = {
    "pick": "picking a character", "place": "placing a character", "ready": "declaring a kingdom ready",
    "ball": "a ball", "miss": "a miss", "choose": "choosing a tower", "tie": "a tie", "touch": "a Ninja touch",
    "tilt": "a tipped roof", "swap": "a swap", "ask": "a question to the Seer",
    "roof": "placing a tower on another", "stack": "placing a tower on another", "trap": "hiding the trap",
    "rebuild": "rebuilding a tower", "pass": "passing", "destroy": "destroying a tower",
}


def describe(h):
    """What the game is waiting for at step h."""
    k = h["k"]
    if k == "throw":
        return "waiting for %s to throw" % side_name(h["side"])
    if k == "fire":
        return "fire at will is on"
    return "waiting for %s to %s" % (side_name(h["by"]), ASKS[k])


def where(state, s, t):
    """Why a ball cannot be in tower t of side s."""
    x = _towers(state, s)[t]
    if x["st"] == "box":
        return "on the rampart"
    if x["st"] == "roof":
        return "a roof (upside down)"
    if x["st"] == "hand":
        return "out of the kingdom"
    return "covered by tower %s" % _covered(state, s, t)
