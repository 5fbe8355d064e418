"""Medieval Pong at the table: towers with a beam and a tilt switch, the fire-at-will tie window,
padlocks between games, and what each viewer may see (docs/rules/medieval-pong.md, "At the table").

Host side only (CPython); a board never loads it.
"""

from __future__ import annotations

import re
from typing import ClassVar

from battlement.table.adapter import GOLD, WHITE, Ignore, TableAdapter

from shared_rules.medieval_pong.core import SIDES, side_name, title
from shared_rules.medieval_pong.switches import FALL, ROOF, switch_input, switch_of

# Two balls in different kingdoms less than this apart during a fire at will are a tie: the side
# that just lost its Princess wins it (rulebook). 0.25 s is closer than eyes can tell two balls apart.
TIE_WINDOW = 0.25
# The private announcements that say where a side's secret is (rules.on_place, alt's trap): the list
# words those from the side's current view instead (a tower falls, a swap moves a character).
WHERE = re.compile(r"^(The [^:']+ is in tower [A-Z]\d( with a crown)?|Your trap is in tower [A-Z]\d)\.$")
# the Seer's answer about the other kingdom: once every tower it names has fallen, the scoreboard
# shows what each held and the answer is no longer a secret, nor current
SEER = re.compile(r"^The Seer says: (Red|Blue)'s .+ is in tower ([A-Z]\d(?: and tower [A-Z]\d)*)\.$")
# a character's tower that is not simply standing: what became of it
STATUS_WORDS = {"roof": "now a roof", "guard": "stacked by the Guard", "hand": "in the Gunner's hand"}


class Table(TableAdapter):
    RELIGHT = frozenset(("tower.destroyed", "tower.rebuilt", "crown.captured", "turn", "miss"))
    TIMEOUT = "miss"  # a throw with no ball in before the timeout
    CUE_LIGHTS: ClassVar[dict] = {
        "ball.in": [("tower", "blink", WHITE, 200)],  # hit flash until the next turn's relight
        "tower.destroyed": [("tower", "off", 0, 0)],
        "crown.exposed": [("tower", "blink", GOLD, 500)],
    }
    COLOURS: ClassVar[dict] = {"red": 0xFF0000, "blue": 0x0040FF}
    # Each answers or reveals something about the deciding side's hidden towers: the choices of a
    # placement, a rebuild or a trap, the towers a Dragon may destroy (never its own), the Seer's question.
    PRIVATE = ("ask", "destroy", "pass", "pick", "place", "ready", "rebuild", "swap", "trap")

    def __init__(self, rules):
        super().__init__(rules)
        # (when, ball) waiting out the tie window: its event is journalled "held", and the session
        # rebuilds this at start by sensing that event again (engine.md, "The table adapter")
        self.held: tuple[float, dict] | None = None

    # --- objects ---------------------------------------------------------------------------

    def objects(self, options):
        names = self.rules.tower_names(2)
        out = {"%s.%s" % (s, t): "beam" for s in SIDES for t in names}
        # optional: the fall switch and the roof switch in each tower (docs/hardware.md, roof sensing)
        for switch in (FALL, ROOF):
            out.update({"%s.%s.%s" % (s, t, switch): "tilt" for s in SIDES for t in names})
        return out

    def required(self, options):
        sets = (options or {}).get("sets", 1)
        names = self.rules.tower_names(sets if sets in (1, 2) else 1)
        return sorted("%s.%s" % (s, t) for s in SIDES for t in names)

    # --- sensing ---------------------------------------------------------------------------

    def reset(self):
        self.held = None

    def sense(self, state, obj, kind, value, at):
        parts = obj.split(".")
        side, tower = parts[0], parts[1]
        towers = state["sides"].get(side, {}).get("towers", {})
        status = towers.get(tower, {}).get("st")
        if len(parts) == 3:
            # a tower's fall or roof switch: only a roof switch opening is a roof tipping over; a
            # tower laid on the rampart, knocked flat or set as a roof closes them and means nothing
            tilt = switch_input(obj, value == 1)
            if tilt is None:
                return Ignore("fall-switch" if parts[2] == FALL else "roof-set")
            if state["phase"] == "play" and status != "roof":
                return Ignore("tilt-not-a-roof")
            return self._flush(state) + [tilt]
        if value != 1:
            return Ignore("ignored")  # a completed ball pulse
        if state["phase"] == "play" and status == "hand":
            return Ignore("ball-in-hand")  # the ball dropped into the Gunner's tower held in hand
        ball = {"t": "ball", "side": side, "tower": tower}
        head = (state.get("steps") or [None])[0]
        if not head or head.get("k") != "fire" or state["over"]:
            return self._flush(state) + [ball]
        if self.held is None:
            self.held = (at, ball)
            return []
        when, first = self.held
        if at - when <= TIE_WINDOW and first["side"] != side:
            self.held = None
            counts = first if first["side"] != head["origin"] else ball
            return [{"t": "tie", "side": counts["side"], "tower": counts["tower"]}]
        return self._flush(state) + [ball]

    def _flush(self, state):
        held, self.held = self.held, None
        return [held[1]] if held else []

    def holding(self):
        return 0 if self.held is None else 1

    def deadline(self):
        return None if self.held is None else self.held[0] + TIE_WINDOW

    def due(self, state, now):
        if self.held is not None and now >= self.held[0] + TIE_WINDOW:
            return self._flush(state)
        return []

    def to_sensors(self, state, inp):
        t = inp.get("t")
        if t == "ball" and "tower" in inp:
            return [("%s.%s" % (inp["side"], inp["tower"]), 1)]
        if t == "tilt" and "tower" in inp:
            obj, opened = switch_of(inp)
            return [(obj, 1 - opened), (obj, opened)]  # a roof switch closes as the roof is set, opens as it tips
        return []

    # --- lights ----------------------------------------------------------------------------

    def lighting(self, view, objects):
        # a standing tower glows in its side's colour; a destroyed one goes dark, or warns in gold
        # while the crown it held lies exposed
        lit = {}
        for side, sv in (view.get("sides") or {}).items():
            for t, tv in (sv.get("towers") or {}).items():
                if tv.get("was") is not None or tv.get("status") == "box":
                    if tv.get("crown"):
                        lit["%s.%s" % (side, t)] = ("blink", GOLD, 500)
                else:
                    lit["%s.%s" % (side, t)] = ("solid", self.COLOURS.get(side, WHITE), 0)
        return lit

    def cue_objects(self, cue, name, objects):
        # cues name a tower within a side: tower="B2", side="red" -> object red.B2
        names = super().cue_objects(cue, name, objects)
        return ["%s.%s" % (cue["side"], n) if n not in objects and "side" in cue else n for n in names]

    # --- padlocks --------------------------------------------------------------------------

    def progress_options(self, progress, table_options):
        if "unlocked" in table_options:
            return {}  # the table's own choice (e.g. unlocked = "all", a house rule) holds
        unlocked = (progress.get("padlocks") or {}).get("unlocked") or []
        return {"unlocked": ",".join(unlocked) or "none"}

    def progress_question(self, state, progress):
        if "unlocked" in state["options"] and state["options"]["unlocked"] == "all":
            return None
        ticks = (progress.get("padlocks") or {}).get("ticks") or {}
        locked = [c for c in sorted(self.rules.PADLOCKS) if ticks.get(c, 0) < self.rules.PADLOCKS[c]]
        if not locked:
            return None
        return {"ask": "Tick a padlock: which character do you want to unlock?",
                "choices": [{"t": "padlock", "character": c} for c in locked]}

    def progress_answer(self, state, progress, inp):
        new = self.rules.unlocks(state, progress.get("padlocks"), inp.get("character"))
        c = inp.get("character")
        left = self.rules.PADLOCKS[c] - new["ticks"].get(c, 0)
        return {"padlocks": new}, ("The %s is unlocked for the next game." % title(c) if left <= 0 else
                                   "A padlock of the %s is ticked: %d to go." % (title(c), left))

    # --- what each viewer may see -----------------------------------------------------------

    def private_notes(self, view, side, notes):
        """Where each of the side's characters, crowns and its trap is now (from its own view), then
        what else it was told (the Seer's answers, refusals, undos), oldest first."""
        sv = (view.get("sides") or {}).get(side) or {}
        now = []
        for t, tv in sorted((sv.get("towers") or {}).items()):
            ch = tv.get("character")
            if not ch or tv.get("status") == "box":
                continue  # an empty or destroyed tower hides nothing any more
            how = STATUS_WORDS.get(tv.get("status"))
            now.append("The %s is in tower %s%s%s." % (title(ch), t, " with a crown" if tv.get("crown") else "",
                                                     " (%s)" % how if how else ""))
        if sv.get("trap"):
            now.append("Your trap is in tower %s." % sv["trap"])
        return now + [n for n in notes if not WHERE.match(n) and not self._seer_stale(view, n)]

    @staticmethod
    def _seer_stale(view, note):
        m = SEER.match(note)
        if not m:
            return False
        towers = ((view.get("sides") or {}).get(m.group(1).lower()) or {}).get("towers") or {}
        named = m.group(2).split(" and tower ")
        return all((towers.get(t) or {}).get("was") is not None or (towers.get(t) or {}).get("status") == "box" for t in named)

    def describe(self, inp, viewer):
        t, by = inp.get("t"), inp.get("by")
        if t in ("ball", "tie", "tilt") and "tower" in inp:
            what = {"ball": "the ball in", "tie": "the tie in", "tilt": "the roof tipping on"}[t]
            return "%s tower %s of %s" % (what, inp["tower"], side_name(inp["side"]))
        if t == "padlock":
            return "the padlock of the %s" % title(inp.get("character", "?"))
        who = side_name(by) if by in SIDES else "a player"
        if t in self.PRIVATE and by != viewer:
            return "a decision of %s" % who
        if t == "place":
            return "your %s in tower %s" % (title(inp["character"]), inp["tower"])
        if t == "pick":
            return "your pick of the %s" % title(inp.get("character", "?"))
        if t == "miss":
            return "%s's miss" % who
        return "%s's %s%s" % (who, t, (" of tower %s" % inp["tower"]) if "tower" in inp else "")

    def result(self, view, options):
        """Each side scores the other kingdom's towers it destroyed; its own towers still standing break a tie."""
        sides = view["sides"]
        other = {"red": "blue", "blue": "red"}
        facts = {s: {"towers destroyed": len(sides[other[s]]["discarded"]), "crowns captured": sides[s]["crowns_captured"],
                     "towers left": sum(1 for t in sides[s]["towers"].values() if t["status"] != "box")} for s in SIDES}
        return {"score": {s: f["towers destroyed"] for s, f in facts.items()},
                "tiebreak": {s: f["towers left"] for s, f in facts.items()}, "facts": facts}
