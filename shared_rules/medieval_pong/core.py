"""Medieval Pong, the words and tower queries the rules and their helpers share.

The helpers (team, alt, padlocks, reasons) import this module, never the rules; the rules
import the helpers only when a game needs them. Runs under CPython and MicroPython; pure, no I/O.
"""

SIDES = ("blue", "red")
NOBLES = ("princess", "king", "dragon")
BASE = ("architect", "blacksmith", "blind-magician", "ghost", "gunner", "seer")
ALTERNATIVE = ("archer", "catapult", "guard", "hunter", "ninja", "two-sword-knight")
# The names that are more than the capitalised token name (see title()).
TITLES = {"blind-magician": "Blind Magician", "two-sword-knight": "Two-Sword Knight"}


def roster(sets):
    """The base team: one of each base character, or with 2 sets two of each noble and one of every other."""
    return sorted(NOBLES + NOBLES + BASE + ALTERNATIVE) if sets == 2 else sorted(NOBLES + BASE)


def other(side):
    return "red" if side == "blue" else "blue"


def side_name(side):
    return "Red" if side == "red" else "Blue"


def title(ch):
    """A character as announced: "seer" -> "Seer". Computed, not tabled: a table of 15 names
    costs a board over a kilobyte of heap. [:1], not [0]: see _enter."""
    return TITLES.get(ch) or ch[:1].upper() + ch[1:]


def _towers(state, s):
    return state["sides"][s]["towers"]


def _covered(state, s, t):
    """The roof or guard tower sitting on tower t, or None."""
    tw = _towers(state, s)
    for name in sorted(tw):
        x = tw[name]
        if x["on"] == t and x["st"] in ("roof", "guard"):
            return name
    return None


# The tower queries loop rather than use comprehensions: each comprehension is one more
# function object, about 100 bytes of a board's heap.


def _with_status(state, s, st):
    """Towers of side s with status st ("up", "box", "roof", "guard", "hand"), by name."""
    tw = _towers(state, s)
    out = []
    for t in sorted(tw):
        if tw[t]["st"] == st:
            out.append(t)
    return out


def _trap_targets(state, s):
    return _with_status(state, s, "up")


ASKS = {
    "choose": "choose which tower its two balls destroy",
    "swap": "swap two of its towers (or not)",
    "ask": "ask the Seer about a character",
    "roof": "put the Architect's tower as a roof on another tower",
    "stack": "stack the Guard's tower on another tower",
    "trap": "hide the Hunter's trap in a tower",
    "rebuild": "rebuild a tower (or pass)",
    "destroy": "destroy one of its own towers",
}
