"""The referee's calls: how urgent each spoken effect of one rules step is, when a call is stale, and the
silent speaker.

A session says its calls through whatever speaker it is given (battlement.sound.speaker.Sound at a table);
the priorities are decided here, from the rules' effects alone:
    WINNER  the end of a game: goes before everything waiting, and turn calls waiting are dropped;
    NORMAL  hits, falls, refusals, in the order they happened;
    TURN    "Red, your turn": only the newest one matters, so a new one replaces one still waiting.
Each call also carries the Moment of the rules step that made it. A call still waiting when its moment is
over is stale, and the speaker drops it: a turn call once the next input is applied (the turn has passed:
Red has thrown), any call once undo takes its step back.
"""

from __future__ import annotations

from typing import Protocol

WINNER, NORMAL, TURN = 0, 1, 2
WINNER_CUES = frozenset(("game.over", "game.won", "win"))
TURN_CUES = frozenset(("turn",))


def ranks(fx: list) -> list[int]:
    """The priority of each effect of one rules step: a step that ends the game is the winner's call;
    an announcement followed at once by a turn cue is a turn call; everything else is normal."""
    if len(fx) == 1:  # most steps (a sensor change: one cue)
        e = fx[0]
        return [WINNER if e["t"] == "cue" and e["cue"] in WINNER_CUES else NORMAL]
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


class Moment:
    """The game state one rules step's calls speak of (written by the session, read by the player thread)."""

    __slots__ = ("passed", "undone")

    def __init__(self) -> None:
        self.passed = False  # the next input was applied
        self.undone = False  # undo took this step back

    def stale(self, priority: int) -> bool:
        return self.undone or (priority == TURN and self.passed)


class Moments:
    """A table's moments, the latest by the journal number of the input whose step made them (undo finds
    them). Only the recent ones are kept: a speaker holds a few calls waiting, never a game's worth."""

    KEEP = 64

    def __init__(self) -> None:
        self.now = Moment()
        self._by_input: dict[int, Moment] = {}

    def step(self, n: int) -> Moment:
        """Input n was applied: the moment before it has passed; its calls speak of a new one."""
        self.now.passed = True
        by = self._by_input
        by.pop(n, None)  # (a new game numbers from 1 again): the dict stays in the order of the steps
        self.now = by[n] = Moment()
        if len(by) > 2 * self.KEEP:  # the newest KEEP kept, now and then: deleting the oldest at every step
            self._by_input = dict(list(by.items())[-self.KEEP:])  # made each find the first key past the holes
        return self.now

    def undo(self, inputs) -> None:
        for n in inputs:
            m = self._by_input.pop(n, None)
            if m is not None:
                m.undone = True


class Speaker(Protocol):
    """What a session says its calls through (moment: see Moment; None: never stale)."""

    counters: dict[str, int]

    def say(self, text: str, priority: int = NORMAL, moment: Moment | None = None) -> None: ...

    def cue(self, name: str, priority: int = NORMAL, moment: Moment | None = None) -> None: ...


class Silence:
    """The speaker of a session given none (the rules alone, tests): it plays nothing and counts what it
    was asked to say, as the sound stage's "null" mode does."""

    def __init__(self) -> None:
        self.counters = {"silent": 0}

    def say(self, text: str, priority: int = NORMAL, moment: Moment | None = None) -> None:
        self.counters["silent"] += 1

    def cue(self, name: str, priority: int = NORMAL, moment: Moment | None = None) -> None:
        self.counters["silent"] += 1
