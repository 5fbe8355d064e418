"""Between games: the table's progress (padlocks) and a new game's options.

After a game the players are asked which padlock to tick; their answer is the table's progress,
kept in the journal from game to game. An option no one chooses takes the table map's value, else
what that progress gives, else the rules' default; options that need objects the table has no
sensor for are refused by Session.new_game. Kept apart from session.py because only a game's end,
a new game and the host's new-game form come here, never a move. Session inherits GameOptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from battlement.table.adapter import TableAdapter
from battlement.table.calls import Speaker
from battlement.table.journal import Journal
from battlement.table.maps import TableMap, required_objects
from battlement.table.matchlog import Match
from shared_rules.engine import Illegal


class GameOptions:
    """The options of the table's next game and the progress that gives them (a mixin of Session)."""

    # the session's, set by Session.__init__
    table: str
    tmap: TableMap
    journal: Journal
    adapter: TableAdapter
    sound: Speaker
    match: Match
    counters: dict[str, int]
    between: dict | None

    if TYPE_CHECKING:  # Session's own
        def _note(self, text: str, kind: str = "info") -> None: ...
        def _changed(self, fx: list | None = None) -> None: ...

    def _unsensed(self, game: str, options: dict) -> list[str]:
        """The objects a game with these options needs that the table map gives no sensor ([]: a map with none
        senses nothing, everything is entered on the page)."""
        if not self.tmap.objects:
            return []
        return [o for o in required_objects(game, options) if o not in self.tmap.objects]

    def _progress_options(self, chosen: dict) -> dict:
        """The options the table's progress gives a new game (what padlocks unlocked), less those chosen."""
        got = self.adapter.progress_options(self.journal.get_progress(self.table), self.tmap.options)
        return {k: v for k, v in got.items() if k not in chosen}

    def _table_default(self, mod, key: str):
        """An option's value when no one chooses it: the table map's, else what the table's progress
        gives (padlocks), else the rules' default."""
        if key in self.tmap.options:
            return self.tmap.options[key]
        return self._progress_options({}).get(key, mod.OPTIONS[key]["default"])

    def option_specs(self) -> list[dict]:
        """The game's options for the host's new-game form, in the rules' order: help, choices, the table's
        default and the value to preselect (this game's; after a game, what the table's progress now gives)."""
        mod = self.match.game
        value = dict(self.match.options)
        if self.match.over:
            value.update(self._progress_options({}))
        return [{"key": k, "help": spec.get("help", ""), "default": self._table_default(mod, k),
                 "choices": None if spec.get("choices") is None else list(spec["choices"]), "value": value.get(k)}
                for k, spec in mod.OPTIONS.items()]

    def _answer_between(self, inp: dict, source: str) -> dict:
        """The players' answer to the question between games (which padlock to tick)."""
        between = self.between or {}
        if inp not in between.get("choices", []):
            self.counters["illegal"] += 1
            return {"ok": False, "message": "the game is over: %s" % between.get("ask", "start a new game"), "n": 0}
        try:
            progress, said = self.adapter.progress_answer(self.match.state, self.journal.get_progress(self.table), inp)
        except (Illegal, ValueError) as e:
            self.counters["illegal"] += 1
            return {"ok": False, "message": str(getattr(e, "reason", e)), "n": 0}
        for key in sorted(progress):
            self.journal.set_progress(self.table, key, progress[key])
        self.between = None
        self._note(said, kind="say")
        self.sound.say(said)
        self._changed()
        return {"ok": True, "message": "", "n": 0}
