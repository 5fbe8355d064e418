"""A table's session: sensed events and page decisions -> journal -> rules -> LEDs, sound, pages.

One Session per table. Everything runs on the bridge's event loop (no locks).
The order for every input is: write it to the journal, apply it, settle it
(ok / illegal with the reason), then send effects. A refused input leaves the
game untouched, is counted, and its reason goes to the page.

Session plays the inputs here; what is asked or shown beside them is in mixins it inherits:
the host page's questions about blind breaks (blind.py), the progress between games and a new
game's options (options.py), what each page may see (views.py), what a timing rule holds, kept in
the journal (held.py), and the games set aside, any one of which can be taken up again (setaside.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import Callable

import shared_rules
from battlement.errors import UserError
from battlement.link.messages import Event, Led
from battlement.link.wire import BLIND
from battlement.table.adapter import adapter_for
from battlement.table.blind import KEEP_BLIND, BlindQuestions
from battlement.table.calls import Moments, Silence, Speaker, ranks
from battlement.table.effects import Effects
from battlement.table.held import HeldInputs
from battlement.table.journal import Journal
from battlement.table.maps import TableMap
from battlement.table.matchlog import Match
from battlement.table.options import GameOptions
from battlement.table.router import Router
from battlement.table.setaside import SetAside
from battlement.table.tokens import new_code
from battlement.table.views import Views, sides_of
from shared_rules.engine import Illegal

log = logging.getLogger("battlement.table")
KEEP_NOTES = 30  # recent notices and private messages kept for a page that connects late
# Refused moves reach the log at most once a second a table, with how many it left out: under overload
# the events the broker dropped made dozens of refusals a second a table, each a log line (20,000 in
# four minutes of the soak). The page's notices, the counters and the journal keep every one.
REFUSED_LOG_EVERY = 1.0


class Session(BlindQuestions, GameOptions, HeldInputs, SetAside, Views):
    def __init__(self, tmap: TableMap, journal: Journal, sound: Speaker | None = None,
                 send: Callable[[Led], None] | None = None, throw_timeout: float = 0.0):
        self.tmap = tmap
        self.table = tmap.table
        self.journal = journal
        self.sound: Speaker = sound or Silence()
        self.moments = Moments()  # what each step's calls speak of: stale once passed or undone (calls.py)
        self._send = send or (lambda led: None)
        # The game's table adapter, this table's own: it holds what a timing rule is waiting on.
        self.adapter = adapter_for(shared_rules.load(tmap.game), fresh=True)
        self.router = Router(tmap, self.adapter)
        self.effects = Effects(tmap, self.adapter, self._send)  # the lights, and what each LED was last told
        self.between: dict | None = None  # after a game: what the players are asked (progress)
        self._wake: asyncio.TimerHandle | None = None  # the timer that hands out an input a timing rule held
        self._held: list[tuple[str, int, int, str]] = []  # what it holds, by journal row (held.py)
        self.listeners: list[Callable[[Session, list], None]] = []
        self.counters: dict[str, int] = {"events": 0, "inputs": 0, "illegal": 0, "undo": 0}
        self.notices: list[dict] = []  # public: what happened, what was refused
        self.private: dict[str, list[str]] = {}  # side -> private announcements
        self.prompts: list[dict] = []  # prompts of the last input
        # Balls a board could not see (it looked away for a moment): asked on the host page only, until
        # answered (rebuilt from the journal on a restart). A question's id names its event, so it
        # stays the same across restarts and a page open meanwhile answers the right one.
        self.blind: list[dict] = []
        self._blind_events: dict[str, Event] = {}
        self.paused = False
        self.paused_sensed: dict | None = None  # while paused: {"count": changes not played, "object": the last}
        self.throw_timeout = throw_timeout
        self.last_input_at = time.monotonic()
        self.match: Match
        self.game_id = 0
        self.codes: dict[str, str] = {}
        # Notices are numbered (a scoreboard that speaks says each once); the same game gives the same
        # numbers, so what a page receives depends on the game alone. A restart numbers from 0 again.
        self._note_id = 0
        self._refused_log = (0, -1e9)  # (refusals left out of the log since the last logged, when that was)
        self._n = 0  # the input being applied: the notices it makes carry its number (undo marks them)
        self.previous: dict | None = None  # the game a new one set aside, which can be taken up again
        self.venue: dict | None = None  # the venue's match its game plays, sides named (venue/tablelink.py)
        self._sources: dict[str | None, str] = {}  # object -> "sensor <object>" (_source)
        if not self.resume():
            self.new_game(tmap.game, tmap.options)
        self._resume_clock()

    # --- lifecycle -------------------------------------------------------------------

    def resume(self) -> bool:
        """Rebuild the table's unfinished game from the journal; False if there is none."""
        g = self.journal.open_game(self.table)
        if g is None:
            return False
        try:
            mod = shared_rules.load(g["game"])
        except KeyError:
            mod = None
        if mod is None or g["game"] != self.tmap.game:  # this table is built for another game now
            self.journal.finish(g["id"], None, "abandoned after %d inputs (the table plays %s)" % (
                len(g["inputs"]), self.tmap.game))
            self.journal.drop_held(self.table, "not played: its game was set aside")
            return False
        self.match = Match(mod, g["options"], g["seed"])
        self.game_id, self.codes = g["id"], g["codes"]
        for n, _source, inp, _status in g["inputs"]:
            try:
                self.match.apply(inp)
            except Illegal as e:  # written, then the bridge stopped before it could say it was refused
                self.journal.refuse(self.game_id, n, e.reason)
        self._note("Resumed the game of %s after %d inputs." % (self.match.game.TITLE, len(self.match.inputs)))
        self._rebuild_held()
        self.previous = self.journal.previous_game(self.table, self.game_id)
        for board, boot, seq, sensor, ms, obj in self.journal.open_questions(self.table, self.game_id, KEEP_BLIND):
            self._question(Event(self.table, board, boot, seq, sensor, BLIND, ms, 0, 0), obj)
        self._relight()
        return True

    def resume_previous(self, prev: dict | None = None) -> dict:
        """Take up again the game the last new game set aside; the one in progress is set aside in turn
        (so a second "resume" goes back to it). Nothing is lost either way: both stay in the journal."""
        prev = prev or self.journal.previous_game(self.table, self.game_id)
        if prev is None:
            return {"ok": False, "message": "there is no earlier game on this table to take up again"}
        if prev["game"] != self.tmap.game:
            return {"ok": False, "message": "the previous game is %s; this table is playing %s now: switch the "
                    "game to %s first" % (prev["game"], self.tmap.game, prev["game"])}
        self._set_aside()
        self.journal.reopen(prev["id"])
        self.notices, self.private, self.prompts, self.between = [], {}, [], None
        self._drop_blind("another game was taken up")  # a question about another game's break means nothing now
        if not self.resume():
            return {"ok": False, "message": "the previous game could not be replayed"}
        self._changed()
        return {"ok": True, "message": ""}

    def _set_aside(self) -> None:
        """The game in progress, if unfinished, is left "abandoned": resumable from the host page. What a
        timing rule holds is played in it first: it was sensed in that game."""
        if self.game_id:
            self._release_held()
        if self.game_id and not self.match.over:
            self.journal.finish(self.game_id, None, "abandoned after %d inputs" % len(self.match.inputs))

    def new_game(self, game: str | None = None, options: dict | None = None, seed: int | None = None) -> None:
        game = game or self.tmap.game
        if game != self.tmap.game:
            raise UserError("table %s is built for %s (%s), not %s" % (self.table, self.tmap.game, self.tmap.path, game))
        mod = shared_rules.load(game)
        opts = dict(self.tmap.options)
        opts.update(self._progress_options(options or {}))
        opts.update(options or {})
        try:
            match = Match(mod, opts, seed if seed is not None else random.SystemRandom().randrange(1 << 30))
        except Illegal as e:
            raise UserError("new %s game: %s" % (game, e.reason))
        # Options that need objects this table has no sensor for (2 sets of towers on a 1-set table) would
        # leave balls unseen and rings unlit: refused, naming the map, before the game in progress ends.
        missing = self._unsensed(game, match.options)
        if missing:
            # name the options that ask for the missing objects: those whose table value would need fewer
            culprits = ["%s=%s" % (k, match.options[k]) for k in sorted(match.options)
                        if match.options[k] != self._table_default(mod, k)
                        and len(self._unsensed(game, dict(match.options, **{k: self._table_default(mod, k)}))) < len(missing)]
            raise UserError("new %s game: %s needs %d object(s) table %s has no sensor for (%s%s); its map %s "
                            "is built for %s" % (
                                game, " ".join(culprits) or "this set-up", len(missing), self.table,
                                ", ".join(missing[:4]), ", ..." if len(missing) > 4 else "", shown_path(self.tmap.path),
                                self.tmap.title))
        self._set_aside()
        self.match = match
        self.codes = {s: new_code() for s in sides_of(match)}
        self.game_id = self.journal.new_game(self.table, game, match.options, match.seed, self.codes)
        self.notices, self.private, self.prompts, self.between = [], {}, [], None
        self._drop_blind("a new game began")  # a question about another game's break means nothing now
        self.previous = self.journal.previous_game(self.table, self.game_id)
        self.adapter.reset()
        self._note("New game of %s." % mod.TITLE)
        self._relight()
        self._changed()

    def switch(self, tmap: TableMap) -> None:
        """The table plays another game from now on (a simulated table, whose boards are made for the
        game): the game's own adapter, router and lights. The game in progress is set aside."""
        self._set_aside()
        self.tmap = tmap
        self.adapter = adapter_for(shared_rules.load(tmap.game), fresh=True)
        self.router = Router(tmap, self.adapter)
        self.effects = Effects(tmap, self.adapter, self._send)
        self.game_id = 0  # set aside above: the next new game or resume opens its own

    # --- inputs ----------------------------------------------------------------------

    def sensed(self, ev: Event, at: float | None = None, source: str | None = None) -> dict:
        """A sensor event from a board: journal it, map it, apply what it means (at: when it arrived;
        source: who says so, when not the sensor itself)."""
        self.counters["events"] += 1
        at = time.monotonic() if at is None else at
        if self._held or self.adapter.timed and self.adapter.holding():  # nothing held, nothing due (most games)
            self.apply_due(at)
        if self.paused:
            self._release_held()  # sensed before the pause: played (what pausing held, reset() drops below)
        obj, inputs, note = self.router.place(ev, self.match.state, at)
        if ev.kind == BLIND and obj is not None and not self.paused:
            return self._ask_blind(ev, obj, note)
        if inputs is None:
            self.journal.write_event(self.table, ev, obj, "unmapped: " + note if obj is None else "ignored")
            if obj is None:
                self._note(note, kind="warning")
                self._changed()
            return {"ok": False, "message": note}
        if self.paused:  # players are resetting the table: what the sensors see now is not play
            self.counters["paused"] = self.counters.get("paused", 0) + 1
            self.journal.write_event(self.table, ev, obj, "paused")
            self.adapter.reset()
            self._paused_note(obj or "?")
            return {"ok": False, "message": "the game is paused"}
        if not inputs:  # held by a timing rule: journalled on its own row now, applied when its window is over
            return self._hold(ev, obj or "?")
        source = source or self._sources.get(obj) or self._source(obj)
        if len(inputs) == 1 and not self._held:  # the everyday change: nothing held before (as _play plays it)
            return self.apply(inputs[0], source, (self.table, ev, obj))
        return self._play(inputs, (self.table, ev, obj), source)

    def _source(self, obj: str | None) -> str:
        """Who says a sensed input happened, in the journal's words: made once per object."""
        text = self._sources[obj] = "sensor %s" % obj
        return text

    def _paused_note(self, obj: str) -> None:
        """Said, not silently dropped: one notice per pause that counts what was not played (a table
        being reset makes many changes), and for the host page the last object sensed."""
        self.paused_sensed = {"count": self.paused_sensed["count"] + 1 if self.paused_sensed else 1, "object": obj}
        n = self.paused_sensed["count"]
        text = ("The game is paused: %d sensor change%s not played. Resume to play on."
                % (n, " was" if n == 1 else "s were"))
        if self.notices and self.notices[-1].get("kind") == "paused":
            self.notices[-1]["text"] = text
        else:
            self._note(text, kind="paused")
        self._changed()

    def pause(self, paused: bool) -> None:
        if paused:
            self._release_held()  # sensed while play went on
        self.paused = paused
        self.paused_sensed = None
        self._note("Game paused: sensors are not played until it resumes." if paused else "Game resumed.")
        self._changed()

    def apply(self, inp: dict, source: str = "page", event=None, held=()) -> dict:
        """Journal, then apply one input. Returns {"ok", "message", "n"}; never raises for bad input.
        held: the journal rows of the held changes it stands for (held.py), settled with it."""
        if not isinstance(inp, dict) or not isinstance(inp.get("t"), str):
            self.counters["illegal"] += 1
            return {"ok": False, "message": "an input is an object with a 't' field, got %r" % (inp,), "n": 0}
        if self.between is not None and self.match.over:
            return self._answer_between(inp, source)
        private = self.adapter.PRIVATE
        if inp["t"] in private and source.startswith("host page"):
            self.counters["illegal"] += 1
            self._note("Refused (%s): only a side's own page makes that decision." % source, kind="illegal")
            self._changed()
            return {"ok": False, "message": "only the deciding side's own page makes that decision", "n": 0}
        n = self.journal.write_input(self.game_id, source, inp, event, held)
        self._n = n
        try:
            return self._applied(inp, source, n)
        finally:
            self._n = 0

    def _applied(self, inp: dict, source: str, n: int) -> dict:
        try:
            fx = self.match.apply(inp)
        except Illegal as e:
            self.journal.refuse(self.game_id, n, e.reason)
            self.counters["illegal"] += 1
            if source.startswith("side "):  # a refused secret decision may name the secret: tell that side only
                side = source[5:]
                self.counters["private-illegal"] = self.counters.get("private-illegal", 0) + 1  # not on /metrics
                self.private.setdefault(side, []).append("Refused: %s" % e.reason)
                del self.private[side][:-KEEP_NOTES]
            else:
                self._note("Refused (%s): %s" % (source, e.reason), kind="illegal")
            self._changed()
            return {"ok": False, "message": e.reason, "n": n}
        self.counters["inputs"] += 1
        if source.startswith("side "):  # a side's own decision: /metrics leaves it out (docs/bridge.md)
            self.counters["private-inputs"] = self.counters.get("private-inputs", 0) + 1
        self.last_input_at = time.monotonic()
        self._effects(fx)
        if self.match.over:
            self._finish()
        self._changed(fx)
        return {"ok": True, "message": "", "n": n}

    def undo(self) -> dict:
        """Take back the last physical move: its inputs back to the last moment no move was under way
        (a piece lifted and put down: one undo). They stay in the journal, marked undone, and the
        notices they made stay in the log, marked undone."""
        self._release_held()  # a ball still in its window is the last thing that happened: undone first
        undone: list[tuple[int, dict]] = []
        while self.match.inputs:
            last = self.journal.undo_last(self.game_id)
            if last is None:
                break
            self.match.undo()
            undone.append(last)
            if not self.adapter.in_move(self.match.state):
                break
        if not undone:
            return {"ok": False, "message": "nothing to undo"}
        self.adapter.reset()
        self.prompts = []  # they asked about the input now taken back; the pages fall back to the view
        self.counters["undo"] += 1
        ns = {n for n, _inp in undone}
        self.moments.undo(ns)  # what those steps said and is still waiting is no longer true: not said
        if len(undone) > 1:  # the journal says which inputs one undo took back together
            together = "undone as one move: inputs %s" % ", ".join(str(n) for n in sorted(ns))
            for n in ns:
                self.journal.settle(self.game_id, n, "undone", together)
        said = []
        for note in self.notices:
            if note.get("n") in ns:
                note["undone"] = True
                if note["kind"] == "say":
                    said.append(note["text"])
        first = undone[-1][1]
        if len(undone) > 1:  # one move of several sensor changes: the words the game said for it
            words = "Undid: %s" % said[0] if said else "Undid one move (%d sensor changes)." % len(undone)
        else:
            # worded by the game for each viewer: a side's secret decision is told in full to that side only
            words = self.adapter.undo_notice(first, None)
        self._note(words)
        self.sound.say(words)  # the table hears it too
        if len(undone) == 1:
            by = first.get("by")
            if isinstance(by, str) and by in self.codes:
                self.private.setdefault(by, []).append(self.adapter.undo_notice(first, by))
                del self.private[by][:-KEEP_NOTES]
        self._relight()
        self._changed()
        return {"ok": True, "message": "", "undone": len(undone)}

    def sensor_for(self, inp: dict) -> list[tuple[str, str, int]]:
        """[(board, sensor, value)] simulated boards must report to play an input by hand; [] if none."""
        out = []
        for obj, value in self.adapter.to_sensors(self.match.state, inp):
            if obj not in self.tmap.objects:
                return []
            o = self.tmap.objects[obj]
            out.append((o.board, o.sensor, value))
        return out

    def timed_out(self) -> bool:
        """Is the per-turn timeout over?"""
        if not self.throw_timeout or self.paused or self.match.over or self._held:
            return False  # (a change held is something sensed: the throw is not over)
        return time.monotonic() - self.last_input_at >= self.throw_timeout

    def timeout_input(self) -> dict | None:
        """The input the game says a turn's timeout stands for now (a miss, a shot that is over)."""
        if self.match.over:
            return None
        return self.adapter.timeout_input(self.match.state, self.match.legal())

    # --- effects ---------------------------------------------------------------------

    @property
    def lit(self) -> dict[tuple[str, str], tuple[str, int, int]]:
        """What each LED was last told: (board, led) -> (pattern, rgb, period)."""
        return self.effects.lit

    def forget_board(self, board: str) -> None:
        """A board (re)booted: its LEDs show nothing we sent; light it all again."""
        self.effects.forget_board(board)
        self._relight()

    def _effects(self, fx: list) -> None:
        self.prompts = []
        rank = ranks(fx)  # the winner's call first, a stale turn call replaced by the newest
        moment = self.moments.step(self._n)  # the calls still waiting of the step before: their turn has passed
        relight = restore = False
        for i, e in enumerate(fx):
            t = e["t"]
            if t == "cue":
                cue = e["cue"]
                self.sound.cue(cue, rank[i], moment)
                self.effects.cue(e)
                relight = relight or cue in self.adapter.RELIGHT
                restore = restore or cue in self.adapter.RESTORE
            elif t == "say":
                if e.get("to") is None:
                    self.sound.say(e["text"], rank[i], moment)
                    self._note(e["text"], kind="say")
                else:
                    self.private.setdefault(e["to"], []).append(e["text"])
                    del self.private[e["to"]][:-KEEP_NOTES]
            elif t == "prompt":
                self.prompts.append({"to": e.get("to"), "ask": e.get("ask"), "choices": e.get("choices")})
        if relight:
            self._relight()
        elif restore:
            self.effects.restore()

    def _relight(self) -> None:
        """Bring every LED to what the public view says; only the ones that differ are sent."""
        self.effects.relight(self.match.view(None))

    def _finish(self) -> None:
        winner = self.match.state["winner"]
        summary = "%s: %s after %d inputs" % (
            self.match.game.TITLE, ("%s won" % winner) if winner else "draw", len(self.match.inputs))
        self.journal.finish(self.game_id, winner, summary)
        self._note(summary + ".")
        self.between = self.adapter.progress_question(self.match.state, self.journal.get_progress(self.table))

    def _note(self, text: str, kind: str = "info") -> None:
        if kind == "illegal":
            left, at = self._refused_log
            now = time.monotonic()
            if now - at < REFUSED_LOG_EVERY:
                self._refused_log = (left + 1, at)
            else:
                self._refused_log = (0, now)
                log.warning("%s: %s%s", self.table, text,
                            " (and %d more refused since the last such line)" % left if left else "")
        else:
            log.log(logging.INFO if kind in ("info", "say") else logging.WARNING, "%s: %s", self.table, text)
        self._note_id += 1
        note = {"kind": kind, "text": text, "id": self._note_id}  # id: a scoreboard speaks each once
        if self._n:
            note["n"] = self._n  # the input that made it (undo marks it undone)
        self.notices.append(note)
        del self.notices[:-KEEP_NOTES]

    def tell(self, text: str, kind: str = "info") -> None:
        """A notice from beside the game (a board being updated): on every page, not an input of the game."""
        self._note(text, kind)
        self._changed()

    def _changed(self, fx: list | None = None) -> None:
        for fn in list(self.listeners):
            fn(self, fx or [])

    # the host page's own action names, kept for pages that still send them
    miss_input = timeout_input


def shown_path(path: str) -> str:
    """A file as the person who started the bridge names it: relative to where they are, when it is below."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
