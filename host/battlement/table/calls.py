"""The referee's calls: how urgent each spoken effect of one rules step is, and the silent speaker.

A session says its calls through whatever speaker it is given (battlement.sound.speaker.Sound at a table);
the priorities are decided here, from the rules' effects alone:
    WINNER  the end of a game: goes before everything waiting, and turn calls waiting are dropped;
    NORMAL  hits, falls, refusals, in the order they happened;
    TURN    "Red, your turn": only the newest one matters, so a new one replaces one still waiting.
"""

from __future__ import annotations

from typing import Protocol

WINNER, NORMAL, TURN = 0, 1, 2
WINNER_CUES = frozenset(("game.over", "game.won", "win"))
TURN_CUES = frozenset(("turn",))


def ranks(fx: list) -> list[int]:
    """The priority of each effect of one rules step: a step that ends the game is the winner's call;
    an announcement followed at once by a turn cue is a turn call; everything else is normal."""
    won = any(e["t"] == "cue" and e["cue"] in WINNER_CUES for e in fx)
    out = []
    for i, e in enumerate(fx):
        nxt = fx[i + 1] if i + 1 < len(fx) else None
        if won:
            out.append(WINNER)
        elif e["t"] == "say" and nxt is not None and nxt["t"] == "cue" and nxt["cue"] in TURN_CUES:
            out.append(TURN)
        else:
            out.append(NORMAL)
    return out


class Speaker(Protocol):
    """What a session says its calls through."""

    counters: dict[str, int]

    def say(self, text: str, priority: int = NORMAL) -> None: ...

    def cue(self, name: str, priority: int = NORMAL) -> None: ...


class Silence:
    """The speaker of a session given none (the rules alone, tests): it plays nothing and counts what it
    was asked to say, as the sound stage's "null" mode does."""

    def __init__(self) -> None:
        self.counters = {"silent": 0}

    def say(self, text: str, priority: int = NORMAL) -> None:
        self.counters["silent"] += 1

    def cue(self, name: str, priority: int = NORMAL) -> None:
        self.counters["silent"] += 1
