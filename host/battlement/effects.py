"""Effects: the rules' abstract cues -> LED commands to the right board and pixel.

Two layers, both declared by the game's table adapter:
- the lighting of the table derived from the public view, sent in full on a new game, a resume
  or an undo so the table never shows a taken-back move;
- short cue lights on the objects a cue names (hit flash, legal destinations, a warning).
Only the public view and cues are used here, so no LED ever gives a secret away.
"""

from __future__ import annotations

from battlement.adapter import OFF, WHITE, TableAdapter
from battlement.messages import Led
from battlement.tables import TableMap

__all__ = ["OFF", "Effects"]


class Effects:
    def __init__(self, tmap: TableMap, adapter: TableAdapter):
        self.tmap = tmap
        self.adapter = adapter
        self.counters: dict[str, int] = {}
        self._with_leds: list | None = None
        self._shared: list[str] | None = None
        self._by_led: dict[tuple, list[str]] | None = None
        self._view_lit: dict[str, tuple[str, int, int]] = {}  # what the last relight drew
        self._warned: set[str] = set()  # objects a warning cue lit since then

    def _led(self, obj: str, pattern: str, rgb: int, period: int) -> Led | None:
        o = self.tmap.objects.get(obj)
        if o is None or o.led is None or o.led_board is None:
            return None
        return Led(o.led_board, o.led, pattern, rgb if pattern != "off" else 0, period, self.tmap.table)

    def for_cue(self, cue: dict) -> list[Led]:
        name = cue.get("cue", "")
        if name in self.adapter.CLEAR_WARNINGS:
            return self._clear(cue)
        rules = self.adapter.CUE_LIGHTS.get(name)
        out: list[Led] = []
        if rules is None:
            return out
        lit: list[str] = []
        for field, pattern, colour, period in rules:
            rgb = self.adapter.COLOURS.get(cue.get(colour, ""), WHITE) if isinstance(colour, str) else colour
            for obj in self.adapter.cue_objects(cue, cue.get(field), self.tmap.objects):
                lit.append(obj)
                led = self._led(obj, pattern, rgb, period)
                if led:
                    out.append(led)
        if name in self.adapter.WARNINGS:
            self._warned.update(lit)
        return out

    def _clear(self, cue: dict) -> list[Led]:
        """The warning is over: the objects it named and any earlier warning go back to the view's
        lights (such a cue changes nothing in the game, so the last relight still holds)."""
        names = set(self._warned)
        for field in sorted(cue):
            if field != "cue":
                names.update(n for n in self.adapter.cue_objects(cue, cue[field], self.tmap.objects) if n in self.tmap.objects)
        self._warned.clear()
        out = []
        for name in sorted(names):
            pattern, rgb, period = self._view_lit.get(name, OFF)
            led = self._led(name, pattern, rgb, period)
            if led:
                out.append(led)
        return out

    def lighting(self, view: dict) -> list:
        """[(object, (pattern, rgb, period))] for every object with an LED, from the public view
        (objects the view does not light go dark)."""
        lit = self.lit_names(view)
        return [(o, lit.get(name, OFF)) for name, o in self._lit_objects]

    def lit_names(self, view: dict) -> dict[str, tuple[str, int, int]]:
        """{object name: (pattern, rgb, period)} of what the public view lights; a name not there is dark.
        (May name objects without an LED: lighting() and the session look only at those with one.)"""
        lit = self.adapter.lighting(view, self.tmap.objects)
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
