"""Medieval Pong padlocks: the alternative characters are unlocked one padlock per finished game
(docs/rules/medieval-pong.md, ambiguity 20).

Only the bridge ticks padlocks, between games, so medieval_pong imports this module in unlocks()
and a board refereeing a game never loads it. Runs under CPython and MicroPython; pure, no I/O.
"""

from shared_rules.engine import Illegal
from shared_rules.medieval_pong.core import ALTERNATIVE, title

# Padlocks printed on each alternative token (the rulebook does not give the numbers; see the doc).
PADLOCKS = {"archer": 2, "catapult": 3, "guard": 2, "hunter": 3, "ninja": 1, "two-sword-knight": 1}


def unlocks(state, progress, pick=None):
    """See medieval_pong.unlocks."""
    if not state["over"]:
        raise Illegal("padlocks are ticked after a finished game")
    ticks = {}
    old = (progress or {}).get("ticks") or {}
    for c in sorted(old):
        if c in PADLOCKS:
            ticks[c] = min(int(old[c]), PADLOCKS[c])
    locked = [c for c in sorted(PADLOCKS) if ticks.get(c, 0) < PADLOCKS[c]]
    if pick is None and locked:
        best = None
        for c in locked:
            left = PADLOCKS[c] - ticks.get(c, 0)
            if best is None or left < best[0]:
                best = (left, c)
        pick = best[1]
    if pick is not None:
        if pick not in PADLOCKS:
            raise Illegal("%r has no padlock (alternative characters: %s)" % (pick, ", ".join(ALTERNATIVE)))
        if pick not in locked:
            raise Illegal("the %s is already unlocked" % title(pick))
        ticks[pick] = ticks.get(pick, 0) + 1
    return {"ticks": ticks, "unlocked": [c for c in sorted(PADLOCKS) if ticks.get(c, 0) >= PADLOCKS[c]]}
