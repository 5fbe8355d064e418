"""Battlement rules: pure, deterministic game engines (CPython and MicroPython).

GAMES maps a game's name to its module; load(name) imports it on demand so a
board that referees one game loads only that game.
"""

GAMES = {
    "medieval-pong": "shared_rules.medieval_pong",
    "plingpong": "shared_rules.plingpong",
    "battleground": "shared_rules.battleground",
    "ringo": "shared_rules.ringo",
    "medieval-madness": "shared_rules.medieval_madness",
}


def load(name):
    """The rules module of a game; raises KeyError naming the known games."""
    if name not in GAMES:
        raise KeyError("unknown game %r (known: %s)" % (name, ", ".join(sorted(GAMES))))
    modname = GAMES[name]
    mod = __import__(modname)
    return getattr(mod, modname.split(".")[1])
