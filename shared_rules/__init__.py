"""Battlement rules: pure, deterministic game engines (CPython and MicroPython).

Each game is a folder, shared_rules/<game>/: its rules in rules.py, the helper modules the rules
load when a game needs them, and (host only) table.py, its table adapter. GAMES maps a game's name
to its rules module; load(name) imports it on demand so a board that referees one game loads only
that game. A game folder's __init__.py stays empty: a board pays for every name in it.
"""

GAMES = {
    "medieval-pong": "shared_rules.medieval_pong.rules",
    "plingpong": "shared_rules.plingpong.rules",
    "battleground": "shared_rules.battleground.rules",
    "ringo": "shared_rules.ringo.rules",
    "medieval-madness": "shared_rules.medieval_madness.rules",
}


def load(name):
    """The rules module of a game; raises KeyError naming the known games."""
    if name not in GAMES:
        raise KeyError("unknown game %r (known: %s)" % (name, ", ".join(sorted(GAMES))))
    mod = __import__(GAMES[name])
    for part in GAMES[name].split(".")[1:]:
        mod = getattr(mod, part)
    return mod
