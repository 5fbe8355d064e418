"""The table adapter contract: what the host needs to know of a game, declared beside its rules.

Each game folder holds table.py with `class Table(TableAdapter)` (docs/rules/engine.md, "The table
adapter"). The host core (router, session, effects, web) asks only this object; it names no game.
A method left as here is the plain behaviour: every sensor change of an object is one input, no
timeout input, no lights, nothing hidden. A game with secrets says per viewer what may be seen.

Viewers: None is the public (the scoreboard, /api/*, and the host page, which stands in view of
the players); a side id is that side's own page. The host's controls add only what a game marks
as public here: they never carry a secret.
"""

from __future__ import annotations

import importlib
from typing import ClassVar

OFF = ("off", 0, 0)
WHITE, GREEN, AMBER, RED, GOLD = 0xFFFFFF, 0x00FF40, 0xFFA000, 0xFF0000, 0xFFD000

# What an LED shows: (pattern, rgb, period_ms).
Light = tuple[str, int, int]


class Ignore:
    """A sensor change that means nothing in the game: not applied, not shown, counted under `counter`."""

    def __init__(self, counter: str):
        self.counter = counter


class TableAdapter:
    # Cues after which the whole table's lighting is redrawn from the public view.
    RELIGHT: frozenset = frozenset()
    # Cues that say the table is back as the rules last had it: LEDs lit by cues since the last
    # redraw go back to what it drew.
    RESTORE: frozenset = frozenset()
    # cue -> [(field, pattern, colour, period_ms)]; colour is an rgb or the name of a cue field whose
    # value COLOURS maps (e.g. "side"); a field names one object or a list of them.
    CUE_LIGHTS: ClassVar[dict] = {}
    # Cues whose lights warn until a cue of CLEAR_WARNINGS puts them back as the view lit them.
    WARNINGS: frozenset = frozenset()
    CLEAR_WARNINGS: frozenset = frozenset()
    COLOURS: ClassVar[dict] = {}
    # Input types only a side's own page may decide: offering them anywhere else would show a secret.
    PRIVATE: tuple = ()
    # The input type a turn's timeout stands for (a miss, a shot that is over); None: none.
    TIMEOUT: str | None = None
    # The board script of the page (beside table.py); served as /games/<game>.js.
    PAGE = "page.js"

    def __init__(self, rules):
        self.rules = rules
        # A game without a timing rule of its own never holds a change: the session need not ask at every one.
        cls = type(self)
        self.timed = cls.holding is not TableAdapter.holding or cls.deadline is not TableAdapter.deadline

    # --- the objects on the table ---------------------------------------------------------

    def objects(self, options: dict | None) -> dict[str, str] | None:
        """Every object a table for this game may sense -> its sensor kind; None: any name goes."""
        return None

    def required(self, options: dict | None) -> list[str]:
        """The objects a table must map for a game with these options."""
        return sorted(self.objects(options) or {})

    # --- sensing --------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget what a timing rule holds: before the session rebuilds it from the journal at start,
        and for a change sensed while the game is paused. (An undo, a pause or a new game first has
        the session play what is held: nothing held is ever forgotten unplayed.)"""

    def in_move(self, state: dict) -> bool:
        """Is a physical move under way (a piece lifted, not yet put down)? One undo takes the game back
        to the last moment no move was under way, so a move of several sensor changes is one undo."""
        return False

    def sense(self, state: dict, obj: str, kind: str, value: int, at: float) -> list | Ignore:
        """A sensor change of obj at host time `at` (seconds) -> [inputs to apply now], or Ignore.
        A game with a timing rule may hold it ([]) and hand it out later, from here or from due().
        Held changes are handed out oldest first, one input each, before the change being sensed's
        own; the last input handed out stands for every held change left (a tie: both balls)."""
        return Ignore("ignored")

    def holding(self) -> int:
        """How many sensor changes a timing rule holds now (what is only in memory: the session keeps
        each on its own journal row, and rebuilds them at start by sensing them again)."""
        return 0 if self.deadline() is None else 1

    def deadline(self) -> float | None:
        """When due() has something to hand out (host time), None if nothing is held."""
        return None

    def due(self, state: dict, now: float) -> list[dict]:
        """Held inputs whose window has passed (now = inf: everything held)."""
        return []

    def to_sensors(self, state: dict, inp: dict) -> list[tuple[str, int]]:
        """The sensor changes a hand makes for an input [(object, value)]; [] if it is not sensed."""
        return []

    def timeout_input(self, state: dict, legal: list[dict]) -> dict | None:
        """The input a turn's timeout stands for now: the legal one of type TIMEOUT, None if none."""
        for inp in legal:
            if inp.get("t") == self.TIMEOUT:
                return inp
        return None

    # --- lights ---------------------------------------------------------------------------

    def lighting(self, view: dict, objects) -> dict[str, Light]:
        """{object: light} of what the public view lights; an object not there is dark."""
        return {}

    def cue_objects(self, cue: dict, name, objects) -> list[str]:
        """The objects a cue field's value names (a name, a list of names)."""
        if isinstance(name, str):
            return [name]
        if isinstance(name, list):
            return [n for n in name if isinstance(n, str)]
        return []

    # --- progress between games -------------------------------------------------------------

    def progress_options(self, progress: dict, table_options: dict) -> dict:
        """Options a new game takes from the table's progress (e.g. what padlocks unlocked)."""
        return {}

    def progress_question(self, state: dict, progress: dict) -> dict | None:
        """After a game: {"ask": words, "choices": [inputs]} the players answer, None if nothing."""
        return None

    def progress_answer(self, state: dict, progress: dict, inp: dict) -> tuple[dict, str]:
        """(the progress after this answer, a public sentence saying what changed)."""
        raise ValueError("this game asks nothing between games")

    # --- a finished game's numbers, for a venue's tournament ----------------------------------

    def result(self, view: dict, options: dict) -> dict:
        """{"score": {side: n}, "tiebreak": {side: n}, "facts": {side: {fact, in words: n}}} of a finished
        game, from its public view alone (they travel over the broker and onto the venue's TV): score is
        what each side scored (a round robin's point difference), tiebreak the game's own (higher is
        better), facts what the rules counted. Plain: nothing counted."""
        return {"score": {}, "tiebreak": {}, "facts": {}}

    # --- what each viewer may see ----------------------------------------------------------

    def host_decisions(self, state: dict, legal: list[dict]) -> list[dict]:
        """The decision buttons the host page may show (in view of every player)."""
        return [i for i in legal if i.get("t") not in self.PRIVATE]

    def describe(self, inp: dict, viewer) -> str:
        """An input as this viewer may read it (undo notices, the host's buttons, history)."""
        if inp.get("t") in self.PRIVATE and inp.get("by") != viewer:
            return "a decision of %s" % inp.get("by", "a player")
        return " ".join([str(inp.get("t", "?"))] + ["%s" % inp[k] for k in sorted(inp) if k not in ("t",)])

    def private_notes(self, view: dict, side: str, notes: list[str]) -> list[str]:
        """A side's "only for you" list from its own view and the private announcements made to it.
        A game whose announcements state where a secret is (which a later move changes) words those
        from the view instead, so the list never says what is no longer true."""
        return list(notes)

    def undo_notice(self, inp: dict, viewer) -> str:
        return "Undid: %s." % self.describe(inp, viewer)

    def prompt_for(self, prompt: dict, viewer) -> dict | None:
        """A prompt as this viewer may see it (None: not shown). The rules address a prompt to a side
        or to everyone; the host (viewer "host") reads every question in words, never its choices
        (they can name where a secret is)."""
        to = prompt.get("to")
        if viewer == "host":
            return {"to": to, "ask": prompt.get("ask")}
        if to is None or to == viewer:
            return prompt
        return None


def adapter_for(rules, fresh: bool = False) -> TableAdapter:
    """The table adapter beside a rules module (<package>.rules -> <package>.table). One is kept per
    game for what never changes (its objects); fresh=True: a new one, for a session's timing rules."""
    cached = getattr(rules, "_table_adapter", None)
    if cached is not None and not fresh:
        return cached
    pkg = rules.__name__.rsplit(".", 1)[0]
    try:
        mod = importlib.import_module(pkg + ".table")
    except ModuleNotFoundError as e:
        if e.name != pkg + ".table":
            raise
        table = TableAdapter(rules)
    else:
        table = mod.Table(rules)
    if not fresh:
        rules._table_adapter = table
    return table


def page_script(rules) -> str | None:
    """The file of the game's page board script, None if the game has none."""
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(rules.__file__)), adapter_for(rules).PAGE)
    return path if os.path.exists(path) else None


def colour(adapter: TableAdapter, name, default: int = WHITE) -> int:
    return adapter.COLOURS.get(name, default) if isinstance(name, str) else default
