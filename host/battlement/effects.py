"""Effects: the rules' abstract cues -> LED commands to the right board and pixel.

Two layers:
- the lighting of the table derived from the public view (which Ringo cells hold
  whose piece, which Battleground pieces are down, which Medieval Pong towers are
  destroyed), sent in full on a new game, a resume or an undo so the table never
  shows a taken-back move;
- short cue lights on the objects a cue names (hit flash, legal destinations,
  illegal-move warning, exposed crown, a Medieval Madness pawn on the wrong space).
Only the public view and cues are used here, so no LED ever gives a secret away.
"""

from __future__ import annotations

from battlement.messages import Led
from battlement.tables import TableMap, space_object

SIDE_RGB = {
    "red": 0xFF0000, "blue": 0x0040FF,
    "attackers": 0xFF5000, "defenders": 0x0060FF,
    "orcs": 0x20C000, "knights": 0xC0C0FF,
    "green": 0x00C000, "yellow": 0xFFC000, "black": 0x8000FF,
    # Medieval Madness pawns (the rulebook gives them no colours): Player 1 red, 2 blue, 3 green, 4 yellow
    "p1": 0xFF0000, "p2": 0x0040FF, "p3": 0x00C000, "p4": 0xFFC000,
}
WHITE, GREEN, AMBER, RED, GOLD = 0xFFFFFF, 0x00FF40, 0xFFA000, 0xFF0000, 0xFFD000
OFF = ("off", 0, 0)

# cue name -> [(field, pattern, colour or "side"/"colour", period_ms)]; a field names one object or a list.
# Cues that change the board (see session.RELIGHT) redraw the table after these, so e.g. a fallen
# Battleground figure simply goes dark.
CUE_LIGHTS: dict[str, list[tuple[str, str, int | str, int]]] = {
    "move": [("from", "off", 0, 0), ("to", "solid", "side", 0)],
    "capture": [("from", "off", 0, 0), ("cell", "off", 0, 0), ("to", "solid", "side", 0)],
    "castle.entered": [("from", "off", 0, 0), ("castle", "blink", "side", 400)],
    "piece.lifted": [("cell", "blink", "side", 400), ("to", "pulse", GREEN, 1000)],
    "move.illegal": [("refill", "blink", RED, 250), ("clear", "blink", RED, 250)],
    "capture.remove": [("cells", "blink", AMBER, 400)],
    "ball.in": [("tower", "blink", WHITE, 200)],  # hit flash until the next turn's relight
    "tower.destroyed": [("tower", "off", 0, 0)],
    "crown.exposed": [("tower", "blink", GOLD, 500)],
    "stand": [("piece", "pulse", AMBER, 800)],  # "stand this piece back up"
    "cup.add": [("cup", "pulse", "colour", 800)],  # "add a cup here", in the cup's colour
    # a pawn on a space where it does not belong: warn there, and show where it belongs when the
    # sensor knows whose pawn it is (pawn.ok puts both back as the view shows them, see for_cue)
    "pawn.misplaced": [("space", "blink", RED, 250), ("want", "pulse", "player", 800)],
}


def _names(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, int) and not isinstance(value, bool):
        return [space_object(value)]  # Medieval Madness cues name a space by its number
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


class Effects:
    def __init__(self, tmap: TableMap):
        self.tmap = tmap
        self.counters: dict[str, int] = {}
        self._with_leds: list | None = None
        self._shared: list[str] | None = None
        self._by_led: dict[tuple, list[str]] | None = None
        self._view_lit: dict[str, tuple[str, int, int]] = {}  # what the last relight drew
        self._warned: set[str] = set()  # objects a pawn.misplaced cue lit since then

    def _led(self, obj: str, pattern: str, rgb: int, period: int) -> Led | None:
        o = self.tmap.objects.get(obj)
        if o is None or o.led is None or o.led_board is None:
            return None
        return Led(o.led_board, o.led, pattern, rgb if pattern != "off" else 0, period, self.tmap.table)

    def _object(self, cue: dict, field: str, name: str) -> str:
        # Medieval Pong cues name a tower within a side: tower="B2", side="red" -> object red.B2
        if name not in self.tmap.objects and "side" in cue and "%s.%s" % (cue["side"], name) in self.tmap.objects:
            return "%s.%s" % (cue["side"], name)
        return name

    def for_cue(self, cue: dict) -> list[Led]:
        if cue.get("cue") == "pawn.ok":
            return self._pawn_ok(cue)
        rules = CUE_LIGHTS.get(cue.get("cue", ""))
        out: list[Led] = []
        if rules is None:
            return out
        for field, pattern, colour, period in rules:
            rgb = SIDE_RGB.get(cue.get(colour, ""), WHITE) if isinstance(colour, str) else colour
            for name in _names(cue.get(field)):
                led = self._led(self._object(cue, field, name), pattern, rgb, period)
                if led:
                    out.append(led)
        if cue.get("cue") == "pawn.misplaced":
            self._warned.update(_names(cue.get("space")) + _names(cue.get("want")))
        return out

    def _pawn_ok(self, cue: dict) -> list[Led]:
        """A pawn is where it belongs: that space and any earlier warning go back to the view's lights
        (a pawn check changes nothing in the game, so the last relight still holds)."""
        names = sorted(self._warned.union(_names(cue.get("space"))))
        self._warned.clear()
        out = []
        for name in names:
            pattern, rgb, period = self._view_lit.get(name, OFF)
            led = self._led(name, pattern, rgb, period)
            if led:
                out.append(led)
        return out

    def lighting(self, game: str, view: dict) -> list:
        """[(object, (pattern, rgb, period))] for every object with an LED, from the public view
        (objects the view does not light go dark)."""
        lit = self.lit_names(game, view)
        return [(o, lit.get(name, OFF)) for name, o in self._lit_objects]

    def lit_names(self, game: str, view: dict) -> dict[str, tuple[str, int, int]]:
        """{object name: (pattern, rgb, period)} of what the public view lights; a name not there is dark.
        (May name objects without an LED: lighting() and the session look only at those with one.)"""
        lit: dict[str, tuple[str, int, int]] = {}
        if game == "ringo":
            for cell, side in (view.get("cells") or {}).items():
                lit[cell] = ("solid", SIDE_RGB.get(side, WHITE), 0)
            if view.get("castle"):
                lit["castle"] = ("solid", SIDE_RGB["attackers"], 0)
        elif game == "battleground":
            down = set(view.get("down") or [])
            for name in self.tmap.objects:
                if name not in down:
                    lit[name] = ("solid", SIDE_RGB.get(name.split(".")[0], WHITE), 0)
        elif game == "plingpong":
            # every space that holds a cup shows the cup's colour; the Black Cup is always lit
            for row in (view.get("trays") or {}).values():
                for space in row:
                    if space.get("height"):
                        lit[space["cup"]] = ("solid", SIDE_RGB.get(space.get("colour"), WHITE), 0)
            lit["black"] = ("solid", SIDE_RGB["black"], 0)
        elif game == "medieval-pong":
            # a standing tower glows in its side's colour; a destroyed one goes dark, or warns
            # in gold while the crown it held lies exposed
            for side, sv in (view.get("sides") or {}).items():
                for t, tv in (sv.get("towers") or {}).items():
                    if tv.get("was") is not None or tv.get("status") == "box":
                        if tv.get("crown"):
                            lit["%s.%s" % (side, t)] = ("blink", GOLD, 500)
                    else:
                        lit["%s.%s" % (side, t)] = ("solid", SIDE_RGB.get(side, WHITE), 0)
        elif game == "medieval-madness":
            # every pawn's space glows in its player's colour; the space of the player whose turn it
            # is pulses, and wins when pawns share a space (the castle entrance, -1, has no LED)
            turn = view.get("turn")
            players = sorted(view.get("players") or (), key=lambda p: (p.get("id") != turn, p.get("id")))
            for p in players:
                name = space_object(p.get("space", -1))
                if p.get("space", -1) >= 0 and name not in lit:
                    rgb = SIDE_RGB.get(p.get("id"), WHITE)
                    lit[name] = ("pulse", rgb, 1000) if p.get("id") == turn else ("solid", rgb, 0)
        self._view_lit, self._warned = lit, set()  # a relight puts every warning back as well
        return lit

    @property
    def names_by_led(self) -> dict[tuple, list[str]]:
        """(board, led) -> the objects lit by that LED (usually one)."""
        if self._by_led is None:
            self._by_led = {}
            for name, o in self._lit_objects:
                self._by_led.setdefault((o.led_board, o.led), []).append(name)
        return self._by_led

    @property
    def shared_leds(self) -> list[str]:
        """Objects whose LED another object lights too: the session always compares those."""
        if self._shared is None:
            self._shared = sorted(n for names in self.names_by_led.values() if len(names) > 1 for n in names)
        return self._shared

    @property
    def _lit_objects(self):
        if self._with_leds is None:
            self._with_leds = [(n, self.tmap.objects[n]) for n in sorted(self.tmap.objects)
                               if self.tmap.objects[n].led is not None]
        return self._with_leds
