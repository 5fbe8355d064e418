"""Medieval Madness board files: read, check and compile (see docs/rules/medieval-madness.md).

Kept apart from the rules so a board running the rules from source compiles two
smaller modules instead of one large one (MicroPython's compiler peak grows with
the file). Runs under CPython and MicroPython.
"""

import json

from shared_rules.engine import Illegal

KINDS = {
    # kind: (extra fields it needs, default name)
    "collect": (("amount",), "Collect"),
    "pay": (("amount",), "Pay"),
    "lose-turn": ((), "Lose a Turn"),
    "move-ahead": (("steps",), "Move Ahead"),
    "royal-stipend": (("amount",), "Royal Stipend"),
    "drawbridge": ((), "Drawbridge"),
    "dungeon": ((), "Dungeon"),
    "inherit-cottage": ((), "Inherit Cottage"),
    "joust": ((), "Joust"),
    "kings-tournament": ((), "King's Tournament"),
    "cottage-repairs": ((), "Cottage Repairs"),
    "hire-champion": ((), "Hire a Champion"),
    "buy-dungeon-pass": ((), "Buy a Dungeon Pass"),
    "trial-by-combat": ((), "Trial by Combat"),
    "sell-cottage": ((), "Sell Cottage"),
    "kings-favor": ((), "Win King's Favor"),
    "collect-taxes": ((), "Collect Taxes"),
    "caught-plotting": ((), "Caught Plotting King's Overthrow"),
}
# How many of a kind each wall must have (absent = any number).
WALL_COUNTS = {
    "outer": {"drawbridge": 1, "royal-stipend": 1, "dungeon": 1},
    "inner": {"drawbridge": 1, "royal-stipend": 1, "dungeon": 0},
}

_BOARDS = {}  # type: dict


def _here():
    f = __file__
    i = f.rfind("/")
    return f[:i] if i >= 0 else "."


def board_path(name):
    """The file a board option names: 'standard' is the board shipped with the game."""
    if name == "standard":
        return _here() + "/data/medieval_madness_board.json"
    return name


def parse_board(data, where="board"):
    """Check a board (decoded JSON) and compile it; raises Illegal naming the space and field."""
    if not isinstance(data, dict):
        raise Illegal("%s: expected an object with 'outer' and 'inner' lists" % where)
    for key in sorted(data):
        if key not in ("name", "about", "outer", "inner"):
            raise Illegal("%s: unknown field %r (known: about, inner, name, outer)" % (where, key))
    spaces = []
    walls = {}
    first = 0
    for wall in ("outer", "inner"):
        items = data.get(wall)
        if not isinstance(items, list) or len(items) < 4:
            raise Illegal("%s: '%s' must be a list of at least 4 spaces" % (where, wall))
        counts = {}
        ids = []
        for i in range(len(items)):
            sp = items[i]
            at = "%s: %s wall space %d (space number %d)" % (where, wall, i, first + i)
            if not isinstance(sp, dict):
                raise Illegal("%s: expected an object with a 'kind'" % at)
            kind = sp.get("kind")
            if kind not in KINDS:
                raise Illegal("%s: field 'kind' is %r, not one of %s" % (at, kind, ", ".join(sorted(KINDS))))
            needs, default_name = KINDS[kind]
            for key in sorted(sp):
                if key not in ("kind", "name") and key not in needs:
                    raise Illegal("%s: field %r does not belong on a %s space" % (at, key, kind))
            name = sp.get("name", default_name)
            if not isinstance(name, str) or not name:
                raise Illegal("%s: field 'name' must be a non-empty text" % at)
            out = {"id": first + i, "wall": wall, "kind": kind, "name": name}
            for key in needs:
                v = sp.get(key)
                if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                    raise Illegal("%s: field %r must be a positive whole number, got %r" % (at, key, v))
                if key == "steps" and v >= len(items):
                    raise Illegal("%s: field 'steps' must be less than the wall's %d spaces" % (at, len(items)))
                out[key] = v
            counts[kind] = counts.get(kind, 0) + 1
            spaces.append(out)
            ids.append(first + i)
        for kind in sorted(WALL_COUNTS[wall]):
            want = WALL_COUNTS[wall][kind]
            if counts.get(kind, 0) != want:
                raise Illegal(
                    "%s: the %s wall must have exactly %d %s space(s), found %d"
                    % (where, wall, want, kind, counts.get(kind, 0))
                )
        walls[wall] = ids
        first += len(items)
    if not any(s["kind"] == "trial-by-combat" for s in spaces):
        raise Illegal("%s: no trial-by-combat space, so nobody could ever win" % where)
    board = {"name": data.get("name", where), "spaces": spaces, "walls": walls}
    for s in spaces:
        if s["kind"] == "drawbridge":
            board["bridge_" + s["wall"]] = s["id"]
        elif s["kind"] == "dungeon":
            board["dungeon"] = s["id"]
    return board


def load_board(name):
    """The compiled board for a board option (cached): 'standard' or a file path."""
    b = _BOARDS.get(name)
    if b is None:
        path = board_path(name)
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            raise Illegal("board file %s cannot be read" % path)
        try:
            data = json.loads(text)
        except ValueError as e:
            raise Illegal("board file %s is not valid JSON: %s" % (path, e))
        b = parse_board(data, "board " + path)
        _BOARDS[name] = b
    return b
