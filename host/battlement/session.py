"""A table's session: sensed events and page decisions -> journal -> rules -> LEDs, sound, pages.

One Session per table. Everything runs on the bridge's event loop (no locks).
The order for every input is: write it to the journal, apply it, settle it
(ok / illegal with the reason), then send effects. A refused input leaves the
game untouched, is counted, and its reason goes to the page.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable

import shared_rules
from battlement.effects import OFF, Effects
from battlement.errors import UserError
from battlement.journal import Journal
from battlement.messages import Event, Led
from battlement.router import Router, to_sensors
from battlement.sound import Sound
from battlement.tables import TableMap, required_objects
from battlement.tokens import new_code, same
from shared_rules.engine import Illegal, Match

KEEP_NOTES = 30
# Cues after which the whole table's lighting is redrawn from the public view.
RELIGHT = frozenset((
    "move", "capture", "castle.entered", "tower.destroyed", "tower.rebuilt", "crown.captured", "turn", "miss",
    "cup.removed", "cup.add", "rack", "round", "back", "figure.out", "figure.revived", "flag.down",
    "brick.removed", "gate.down", "stood", "shot.over", "flags.restand"))
# Cues that say the table is back as the rules last had it (a Ringo piece lifted and put back): only
# the LEDs cues lit since the last redraw go back to what it drew; the public view is not recomputed.
RESTORE = frozenset(("board.restored",))
# Decisions only a side's own page offers: making them on the shared host screen would show the secret.
PRIVATE_DECISIONS = {"medieval-pong": ("ask", "cover", "pick", "place", "ready", "rebuild", "swap", "trap")}  # recent notices and private messages kept for a page that connects late


def sides_of(match: Match) -> list[str]:
    """The sides or players who get a private page."""
    sides = getattr(match.game, "SIDES", None)
    if sides:
        return sorted(sides)
    players = match.state.get("players")
    if isinstance(players, list):
        return [p["id"] if isinstance(p, dict) else str(p) for p in players]
    return []


class Session:
    def __init__(self, tmap: TableMap, journal: Journal, sound: Sound | None = None,
                 send: Callable[[Led], None] | None = None, throw_timeout: float = 0.0):
        self.tmap = tmap
        self.table = tmap.table
        self.journal = journal
        self.sound = sound or Sound("null")
        self._send = send or (lambda led: None)
        self.lit: dict[tuple[str, str], tuple[str, int, int]] = {}  # what each LED was last told
        # What the last relight drew (object -> state; None: compare every LED next time) and the LEDs
        # told something else since: a relight then only looks at objects whose state changed or that a
        # cue touched, not at every LED on the table after every input.
        self._drawn: dict[str, tuple[str, int, int]] | None = None
        self._touched: set[tuple[str, str]] = set()
        self.router = Router(tmap)
        self.effects = Effects(tmap)
        self.listeners: list[Callable[[Session, list], None]] = []
        self.counters: dict[str, int] = {"events": 0, "inputs": 0, "illegal": 0, "undo": 0}
        self.notices: list[dict] = []  # public: what happened, what was refused
        self.private: dict[str, list[str]] = {}  # side -> private announcements
        self.prompts: list[dict] = []  # prompts of the last input
        self.paused = False
        self.throw_timeout = throw_timeout
        self.last_input_at = time.monotonic()
        self.match: Match
        self.game_id = 0
        self.codes: dict[str, str] = {}
        if not self.resume():
            self.new_game(tmap.game, tmap.options)

    # --- lifecycle -------------------------------------------------------------------

    def resume(self) -> bool:
        """Rebuild the table's unfinished game from the journal; False if there is none."""
        g = self.journal.open_game(self.table)
        if g is None:
            return False
        try:
            mod = shared_rules.load(g["game"])
        except KeyError:
            return False
        self.match = Match(mod, g["options"], g["seed"])
        self.game_id, self.codes = g["id"], g["codes"]
        for n, _source, inp, _status in g["inputs"]:
            try:
                self.match.apply(inp)
            except Illegal as e:  # written, then the bridge stopped before it could say it was refused
                self.journal.refuse(self.game_id, n, e.reason)
        self._note("Resumed the game of %s after %d inputs." % (self.match.game.TITLE, len(self.match.inputs)))
        self._relight()
        return True

    def new_game(self, game: str | None = None, options: dict | None = None, seed: int | None = None) -> None:
        game = game or self.tmap.game
        if game != self.tmap.game:
            raise UserError("table %s is built for %s (%s), not %s" % (self.table, self.tmap.game, self.tmap.path, game))
        mod = shared_rules.load(game)
        opts = dict(self.tmap.options)
        if "unlocked" not in (options or {}):
            opts.update(self._padlocks(game))
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
        if self.game_id and not self.match.over:
            self.journal.finish(self.game_id, None, "abandoned after %d inputs" % len(self.match.inputs))
        self.match = match
        self.codes = {s: new_code() for s in sides_of(match)}
        self.game_id = self.journal.new_game(self.table, game, match.options, match.seed, self.codes)
        self.notices, self.private, self.prompts = [], {}, []
        self._note("New game of %s." % mod.TITLE)
        self._relight()
        self._changed()

    def _unsensed(self, game: str, options: dict) -> list[str]:
        """The objects a game with these options needs that the table map gives no sensor ([]: a map with none
        senses nothing, everything is entered on the page)."""
        if not self.tmap.objects:
            return []
        return [o for o in required_objects(game, options) if o not in self.tmap.objects]

    def _padlocks(self, game: str) -> dict:
        """Medieval Pong: the alternative characters unlocked so far, as the `unlocked` option ({}: none won)."""
        if game != "medieval-pong":
            return {}
        prog = self.journal.get_progress(self.table).get("padlocks")
        return {} if prog is None else {"unlocked": ",".join(prog.get("unlocked", [])) or "none"}

    def _table_default(self, mod, key: str):
        """An option's value when no one chooses it: the table map's, else the rules' default."""
        return self.tmap.options.get(key, mod.OPTIONS[key]["default"])

    def option_specs(self) -> list[dict]:
        """The game's options for the host's new-game form, in the rules' order: help, choices, the table's
        default and the value to preselect (this game's; after a Pong game, what the padlocks now unlock)."""
        mod = self.match.game
        value = dict(self.match.options)
        if self.match.over:
            value.update(self._padlocks(mod.NAME))
        return [{"key": k, "help": spec.get("help", ""), "default": self._table_default(mod, k),
                 "choices": None if spec.get("choices") is None else list(spec["choices"]), "value": value.get(k)}
                for k, spec in mod.OPTIONS.items()]

    # --- inputs ----------------------------------------------------------------------

    def sensed(self, ev: Event) -> dict:
        """A sensor event from a board: journal it, map it, apply what it means."""
        self.counters["events"] += 1
        obj, inp, note = self.router.place(ev)
        if inp is None:
            self.journal.write_event(self.table, ev, obj, "unmapped: " + note if obj is None else "ignored")
            if obj is None:
                self._note(note, kind="warning")
                self._changed()
            return {"ok": False, "message": note}
        if self.paused:  # players are resetting the table: what the sensors see now is not play
            self.counters["paused"] = self.counters.get("paused", 0) + 1
            self.journal.write_event(self.table, ev, obj, "paused")
            return {"ok": False, "message": "the game is paused"}
        return self.apply(inp, source="sensor %s" % obj, event=(self.table, ev, obj))

    def apply(self, inp: dict, source: str = "page", event=None) -> dict:
        """Journal, then apply one input. Returns {"ok", "message", "n"}; never raises for bad input."""
        if not isinstance(inp, dict) or not isinstance(inp.get("t"), str):
            self.counters["illegal"] += 1
            return {"ok": False, "message": "an input is an object with a 't' field, got %r" % (inp,), "n": 0}
        n = self.journal.write_input(self.game_id, source, inp, event)
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
        last = self.journal.undo_last(self.game_id)
        if last is None or not self.match.inputs:
            return {"ok": False, "message": "nothing to undo"}
        self.match.undo()
        self.prompts = []  # they asked about the input now taken back; the pages fall back to the view
        self.counters["undo"] += 1
        self._note("Undid: %s." % describe(last))
        self._relight()
        self._changed()
        return {"ok": True, "message": ""}

    def sensor_for(self, inp: dict) -> list[tuple[str, str, int]]:
        """[(board, sensor, value)] simulated boards must report to play an input by hand; [] if none."""
        out = []
        for obj, value in to_sensors(self.tmap.game, self.match.state, inp):
            if obj not in self.tmap.objects:
                return []
            o = self.tmap.objects[obj]
            out.append((o.board, o.sensor, value))
        return out

    def timed_out(self) -> bool:
        """Is the per-turn throw timeout over with a miss being a legal input now?"""
        if not self.throw_timeout or self.paused or self.match.over:
            return False
        return time.monotonic() - self.last_input_at >= self.throw_timeout

    def miss_input(self) -> dict | None:
        for inp in self.match.legal():
            if inp.get("t") == "miss":
                return inp
        return None

    # --- effects ---------------------------------------------------------------------

    def send(self, led: Led) -> None:
        """Send an LED command unless the LED already shows exactly that (a relight sends only changes)."""
        key, now = (led.board, led.target), (led.pattern, led.rgb, led.period_ms)
        if self.lit.get(key) == now:
            return
        self.lit[key] = now
        self._touched.add(key)
        self._send(led)

    def forget_board(self, board: str) -> None:
        """A board (re)booted: its LEDs show nothing we sent; light it all again."""
        for key in [k for k in self.lit if k[0] == board]:
            del self.lit[key]
        self._drawn = None
        self._relight()

    def _effects(self, fx: list) -> None:
        self.prompts = []
        for e in fx:
            if e["t"] == "say":
                if e.get("to") is None:
                    self.sound.say(e["text"])
                    self._note(e["text"], kind="say")
                else:
                    self.private.setdefault(e["to"], []).append(e["text"])
                    del self.private[e["to"]][:-KEEP_NOTES]
            elif e["t"] == "cue":
                self.sound.cue(e["cue"])
                for led in self.effects.for_cue(e):
                    self.send(led)
            elif e["t"] == "prompt":
                self.prompts.append({"to": e.get("to"), "ask": e.get("ask"), "choices": e.get("choices")})
        cues = [e["cue"] for e in fx if e["t"] == "cue"]
        if any(c in RELIGHT for c in cues):
            self._relight()
        elif self._drawn is not None and any(c in RESTORE for c in cues):
            self._draw(self._drawn, self._drawn)

    def _relight(self) -> None:
        """Bring every LED to what the public view says; only the ones that differ are sent."""
        want = self.effects.lit_names(self.match.game.NAME, self.match.view(None))
        drawn, self._drawn = self._drawn, want
        self._draw(want, drawn)

    def _draw(self, want: dict, drawn: dict | None) -> None:
        """Send what `want` lights, looking only at objects that may differ from `drawn` (None: all)."""
        objects = self.tmap.objects
        if drawn is None:
            names = sorted(objects)
        else:
            # An LED no cue touched since the last relight still shows what that relight drew, so an
            # object whose state is unchanged needs no look (unless its LED is shared with another).
            look = set(self.effects.shared_leds)
            if want is not drawn and want != drawn:  # usually equal: one comparison in C
                look.update(n for n in want.keys() | drawn.keys() if want.get(n) != drawn.get(n))
            by_led = self.effects.names_by_led
            for key in self._touched:
                look.update(by_led.get(key, ()))
            names = sorted(look)
        for name in names:
            o = objects.get(name)
            if o is None or o.led is None or o.led_board is None:
                continue
            state = want.get(name, OFF)
            if self.lit.get((o.led_board, o.led)) != state:
                self.send(Led(o.led_board, o.led, state[0], state[1], state[2], self.table))
        self._touched.clear()

    def _finish(self) -> None:
        winner = self.match.state["winner"]
        summary = "%s: %s after %d inputs" % (
            self.match.game.TITLE, ("%s won" % winner) if winner else "draw", len(self.match.inputs))
        self.journal.finish(self.game_id, winner, summary)
        if self.match.game.NAME == "medieval-pong" and hasattr(self.match.game, "unlocks"):
            prog = self.journal.get_progress(self.table).get("padlocks")
            try:
                self.journal.set_progress(self.table, "padlocks", self.match.game.unlocks(self.match.state, prog))
            except Illegal as e:
                self._note("Padlocks: %s" % e.reason, kind="warning")
        self._note(summary + ".")

    def _note(self, text: str, kind: str = "info") -> None:
        self.notices.append({"kind": kind, "text": text})
        del self.notices[:-KEEP_NOTES]

    def _changed(self, fx: list | None = None) -> None:
        for fn in list(self.listeners):
            fn(self, fx or [])

    # --- what each page may see --------------------------------------------------------

    def public(self) -> dict:
        """The scoreboard: public view, public notices, prompts to everyone. Never a secret."""
        return {
            "table": self.table, "title": self.match.game.TITLE, "game": self.match.game.NAME,
            "view": self.match.view(None), "notices": self.notices, "paused": self.paused,
            "prompts": [p for p in self.prompts if p["to"] is None],
            "sides": sorted(self.codes),
        }

    def for_host(self) -> dict:
        legal = self.match.legal()
        sensed = set(getattr(self.match.game, "SENSED", ()))
        private = PRIVATE_DECISIONS.get(self.match.game.NAME, ())
        out = self.public()
        out.update({
            "codes": self.codes, "counters": self._all_counters(),
            "sensed": [i for i in legal if i.get("t") in sensed or self.sensor_for(i)][:200],
            "decisions": [i for i in legal if i.get("t") not in sensed and i.get("t") not in private][:200],
            "options": self.match.options, "option_specs": self.option_specs(),
            "history": self.journal.history(self.table, 5),
            "waiting": self.match.awaiting(),
            # every question in words, so the host sees what its decision buttons answer; no choices,
            # which in Medieval Pong can name the towers that hold a crown
            "prompts": [{"to": p["to"], "ask": p["ask"]} for p in self.prompts],
        })
        return out

    def for_side(self, side: str) -> dict:
        legal = self.match.legal()
        out = self.public()
        out.update({
            "side": side, "view": self.match.view(side), "private": self.private.get(side, []),
            "decisions": [i for i in legal if i.get("by") == side][:300],
            "prompts": [p for p in self.prompts if p["to"] in (None, side)],
        })
        return out

    def check_code(self, side: str, code: str | None) -> None:
        if side not in self.codes:
            raise UserError("table %s has no side %r (sides: %s)" % (self.table, side, ", ".join(sorted(self.codes))))
        if not same(code, self.codes[side]):
            raise UserError("the private page of %s needs its code, shown on the host page" % side)

    def _all_counters(self) -> dict:
        out = dict(self.counters)
        for k, v in self.router.counters.items():
            out["router." + k] = v
        for k, v in self.sound.counters.items():
            out["sound." + k] = v
        return out


def shown_path(path: str) -> str:
    """A file as the person who started the bridge names it: relative to where they are, when it is below."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def describe(inp: dict) -> str:
    """'ball side=red tower=B2': an input in a line a person can read."""
    return ("%s %s" % (inp.get("t", "?"), " ".join("%s=%s" % (k, inp[k]) for k in sorted(inp) if k != "t"))).strip()
