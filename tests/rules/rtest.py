"""Helpers for rules tests that run unchanged under CPython (pytest) and MicroPython.

A rules test module (tests/rules/test_<game>*.py) holds plain `def test_...():`
functions using `assert` and these helpers only; no pytest import at module level.
pytest collects them as usual; tests/rules/test_micropython.py runs the same
modules under the real `micropython` through run_module() below.
See tests/rules/README.md.
"""

import sys

from shared_rules import engine, load
from shared_rules.engine import Illegal, Match, Rng, clone, dumps

ON_MICROPYTHON = sys.implementation.name == "micropython"

__all__ = [
    "ON_MICROPYTHON",
    "Illegal",
    "Match",
    "Rng",
    "check_replay",
    "clone",
    "cues",
    "dumps",
    "engine",
    "load",
    "play",
    "prompts",
    "raises",
    "random_playouts",
    "says",
    "scale",
]


def scale(n, micropython=None):
    """A repeat count: n under CPython, `micropython` (default n // 4, at least 1) under MicroPython.

    MicroPython runs the same tests a few times slower; soaks keep their shape with fewer rounds.
    """
    if not ON_MICROPYTHON:
        return n
    if micropython is not None:
        return micropython
    return max(1, n // 4)


def raises(exc, fn, *args, **kw):
    """Call fn(*args, **kw) and return the exception of type exc it must raise."""
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError("%s did not raise %s" % (getattr(fn, "__name__", fn), exc.__name__))


def play(game, script, options=None, seed=0):
    """A Match of game (a name or module) after applying every input in script.

    The Match keeps its log; m.effects holds the effects of each applied input, in order.
    """
    if isinstance(game, str):
        game = load(game)
    m = Match(game, options, seed)
    m.effects = []
    for inp in script:
        m.effects.append(m.apply(inp))
    return m


def _flat(fx):
    out = []
    for e in fx:
        if isinstance(e, list):
            out.extend(_flat(e))
        else:
            out.append(e)
    return out


def says(fx, to="any"):
    """The texts of the say effects in fx (a list of effects, or of lists of effects).

    to="any" keeps every announcement; None only public ones; a side only that side's.
    """
    return [e["text"] for e in _flat(fx) if e["t"] == "say" and (to == "any" or e.get("to") == to)]


def cues(fx):
    """The cue names in fx, in order."""
    return [e["cue"] for e in _flat(fx) if e["t"] == "cue"]


def prompts(fx):
    """The prompt effects in fx, in order."""
    return [e for e in _flat(fx) if e["t"] == "prompt"]


def random_playouts(game, options=None, games=20, seed=1, max_steps=5000, each=None, keep_log=False):
    """Play `games` random games (uniform among legal inputs); returns {winner: count}.

    each(match, inp, effects), if given, is called after every applied input and
    may assert anything about the state reached. A game that hits max_steps
    counts under the winner key "step-cap".
    """
    if isinstance(game, str):
        game = load(game)
    winners = {}
    for g in range(games):
        m = Match(game, options, seed + g, keep_log=keep_log)
        rng = Rng(seed * 7919 + g)
        steps = 0
        while not m.state["over"] and steps < max_steps:
            choices = game.legal(m.state)
            assert choices, "%s: nothing legal but the game is not over (seed %d)" % (game.NAME, seed + g)
            inp = rng.choice(choices)
            if each is None and not keep_log:
                game.apply(m.state, inp)  # from legal(): no defensive clone needed
                steps += 1
                continue
            fx = m.apply(inp)
            if each is not None:
                each(m, inp, fx)
            steps += 1
        key = m.state["winner"] if m.state["over"] else "step-cap"
        key = dumps(key) if not isinstance(key, str) else key
        winners[key] = winners.get(key, 0) + 1
    return winners


def check_replay(m):
    """Replaying m's input log from its setup reaches the identical state; undo restores."""
    live = dumps(m.state)
    other = Match(m.game, m.options, m.seed)
    for inp in m.inputs:
        other.apply(inp)
    assert dumps(other.state) == live, "replay of %d inputs differs from the live state" % len(m.inputs)
    if m.inputs:
        before = Match(m.game, m.options, m.seed)
        for inp in m.inputs[:-1]:
            before.apply(inp)
        last = other.undo()
        assert last == m.inputs[-1]
        assert dumps(other.state) == dumps(before.state), "undo did not restore the previous state"


# ---------------------------------------------------------------- the MicroPython runner


def _print_exc(e):
    if ON_MICROPYTHON:
        sys.print_exception(e)
    else:
        import traceback

        traceback.print_exception(type(e), e, e.__traceback__)


def run_module(modname, only=None):
    """Run every test_* function of a module; print one PASS/FAIL line each; return failures.

    Used under MicroPython: `micropython -c "import rtest; rtest.main('test_ringo')"`.
    """
    mod = __import__(modname)
    names = sorted(n for n in dir(mod) if n.startswith("test_") and callable(getattr(mod, n)))
    failed = 0
    for n in names:
        if only and n not in only:
            continue
        try:
            getattr(mod, n)()
        except Exception as e:  # noqa: BLE001 - report every failure, keep going
            failed += 1
            print("FAIL %s.%s: %s: %s" % (modname, n, type(e).__name__, e))
            _print_exc(e)
            print("END-FAIL")
            continue
        print("PASS %s.%s" % (modname, n))
    return failed


def main(modname, only=None):
    failed = run_module(modname, only)
    print("DONE %s failed=%d" % (modname, failed))
    sys.exit(1 if failed else 0)
