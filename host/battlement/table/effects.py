"""Effects: the rules' abstract cues -> LED commands to the right board and pixel.

Two layers, both declared by the game's table adapter:
- the lighting of the table derived from the public view, sent in full on a new game, a resume
  or an undo so the table never shows a taken-back move;
- short cue lights on the objects a cue names (hit flash, legal destinations, a warning).
Only the public view and cues are used here, so no LED ever gives a secret away.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from battlement.link.messages import Led
from battlement.table.adapter import OFF, WHITE, TableAdapter
from battlement.table.maps import TableMap

__all__ = ["LED_FRAME", "LED_FRAME_BEHIND", "OFF", "Effects", "LedFrames"]

# The firmware draws its LEDs once every 40 ms (firmware/app.py): a board is sent at most one round of
# changes a frame. The first change after a quiet frame goes at once (a move lights without delay); what
# follows within the frame waits for its end, the last command per LED kept. Under overload every
# batch moved some light, and building and signing a command a batch for each board cost a tenth of
# the bridge's work; at most one round a frame is all the board could have shown anyway.
LED_FRAME = 0.04
# While the intake is held back (flow control: events already wait a quarter of a second or more), a
# board's lights change at most five times a second: they show the game as late as its events anyway,
# and the commands of the 40 ms frames were still a tenth of the bridge's work an event at 2x capacity.
LED_FRAME_BEHIND = 0.2
LEDS_KEPT = 4096  # commands kept made (Effects.led), then forgotten at once: a table uses a few dozen


class Effects:
    """A table's lights: what each LED was last told (`lit`), what cues light, and the public view's drawing.
    send(led) takes every command that changes an LED."""

    def __init__(self, tmap: TableMap, adapter: TableAdapter, send: Callable[[Led], object] | None = None):
        self.tmap = tmap
        self.adapter = adapter
        self._send = send or (lambda led: None)
        self.counters: dict[str, int] = {}
        self.lit: dict[tuple[str, str], tuple[str, int, int]] = {}  # what each LED was last told
        # What the last relight drew (object -> state; None: none yet), whether the next must compare every
        # LED (a board rebooted), and the LEDs told something else since: a relight then only looks at
        # objects whose state changed or that a cue touched, not at every LED on the table after every input.
        self._drawn: dict[str, tuple[str, int, int]] | None = None
        self._compare_all = True
        self._touched: set[tuple[str, str]] = set()
        self._with_leds: list | None = None
        self._shared: list[str] | None = None
        self._by_led: dict[tuple, list[str]] | None = None
        self._led_key: dict[str, tuple[str, str]] | None = None  # object with an LED -> (board, led)
        self._warned: set[str] = set()  # objects a warning cue lit since the last relight
        self._leds: dict[tuple, Led | None] = {}  # (object, light) -> its command (led())
        self._restore: tuple | None = None  # (drawing, LEDs touched since, what restore() sends them)
        self._cues: dict[str, tuple[dict, tuple]] = {}  # cue name -> its last cue, what that lit (cue())

    def _led(self, obj: str, pattern: str, rgb: int, period: int) -> Led | None:
        return self.led(obj, (pattern, rgb if pattern != "off" else 0, period))

    def led(self, obj: str, light: tuple[str, int, int]) -> Led | None:
        """The command that gives obj's LED this light (pattern, rgb, period); None if obj has no LED. Made
        once and shared (an Led cannot change): a table lights the same few over and over."""
        try:
            return self._leds[obj, light]
        except KeyError:
            pass
        if len(self._leds) >= LEDS_KEPT:
            self._leds.clear()
        o = self.tmap.objects.get(obj)
        led = None if o is None or o.led is None or o.led_board is None else Led(
            o.led_board, o.led, light[0], light[1], light[2], self.tmap.table)
        self._leds[obj, light] = led
        return led

    def send(self, led: Led) -> None:
        """Send an LED command unless the LED already shows exactly that (a relight sends only changes)."""
        key, now = (led.board, led.target), (led.pattern, led.rgb, led.period_ms)
        if self.lit.get(key) == now:
            return
        self.lit[key] = now
        self._touched.add(key)
        self._send(led)

    def cue(self, cue: dict) -> None:
        """Light what a cue names (each LED sent unless it shows that already)."""
        name = cue.get("cue", "")
        if name in self.adapter.CLEAR_WARNINGS:
            for led in self._clear(cue):
                self.send(led)
            return
        if name not in self.adapter.CUE_LIGHTS:
            return
        # A table's cues are the same few over and over (b5 lifted lights b5 and where it may go): what
        # each name's last one lit is kept, if its values were all text (== then means the same cue).
        last = self._cues.get(name)
        if last is not None and last[0] == cue:
            made = last[1]
        else:
            made = self._cue_lights(cue)
            if all(v.__class__ is str or v.__class__ is list and all(x.__class__ is str for x in v)
                   for v in cue.values()):
                self._cues[name] = ({k: list(v) if v.__class__ is list else v for k, v in cue.items()}, made)
        lit, touched, send = self.lit, self._touched, self._send
        for key, now, led in made[0]:
            if lit.get(key) != now:
                lit[key] = now
                touched.add(key)
                send(led)
        if made[1]:
            self._warned.update(made[1])

    def _cue_lights(self, cue: dict) -> tuple:
        """(((board, led), light, command) for each LED the cue lights, in order; the objects it warns on)."""
        leds, names = [], []
        for obj, light in self._lights_of(cue):
            names.append(obj)
            led = self.led(obj, light)
            if led:
                leds.append(((led.board, led.target), (led.pattern, led.rgb, led.period_ms), led))
        return tuple(leds), tuple(names) if cue.get("cue", "") in self.adapter.WARNINGS else ()

    def _lights_of(self, cue: dict) -> list[tuple[str, tuple[str, int, int]]]:
        """(object, light) for each object the cue's lights name, in order (with or without an LED)."""
        out = []
        for field, pattern, colour, period in self.adapter.CUE_LIGHTS[cue.get("cue", "")]:
            rgb = self.adapter.COLOURS.get(cue.get(colour, ""), WHITE) if isinstance(colour, str) else colour
            light = (pattern, rgb if pattern != "off" else 0, period)
            for obj in self.adapter.cue_objects(cue, cue.get(field), self.tmap.objects):
                out.append((obj, light))
        return out

    def _clear(self, cue: dict) -> list[Led]:
        """The warning is over: the objects it named and any earlier warning go back to the view's
        lights (such a cue changes nothing in the game, so the last relight still holds)."""
        names = set(self._warned)
        for field in sorted(cue):
            if field != "cue":
                names.update(n for n in self.adapter.cue_objects(cue, cue[field], self.tmap.objects) if n in self.tmap.objects)
        self._warned.clear()
        out, drawn = [], self._drawn or {}
        for name in sorted(names):
            pattern, rgb, period = drawn.get(name, OFF)
            led = self._led(name, pattern, rgb, period)
            if led:
                out.append(led)
        return out

    def relight(self, view: dict) -> None:
        """Bring every LED to what the public view says; only the ones that differ are sent."""
        want = self.lit_names(view)
        drawn = None if self._compare_all else self._drawn
        self._drawn, self._compare_all, self._warned = want, False, set()  # every warning is put back too
        self._draw(want, drawn)

    def restore(self) -> None:
        """The table is as the last relight drew it: the LEDs cues lit since go back."""
        drawn = self._drawn
        if drawn is None or self._compare_all:
            return
        if self.shared_leds:
            self._draw(drawn, drawn)
            return
        # Only the touched LEDs can differ from the drawing, each lit by one object. A piece lifted and put
        # back touches the same LEDs each time: what they go back to is kept for that drawing and those LEDs.
        touched, memo = self._touched, self._restore
        if memo is None or memo[0] is not drawn or memo[1] != touched:
            by_led, keys = self.names_by_led, self.led_keys
            names = sorted([n for key in touched for n in by_led.get(key, ())])
            memo = self._restore = (drawn, frozenset(touched), [
                (keys[n], drawn.get(n, OFF), self.led(n, drawn.get(n, OFF))) for n in names if n in keys])
        lit, send = self.lit, self._send
        for key, state, led in memo[2]:
            if led is not None and lit.get(key) != state:
                lit[key] = state
                send(led)
        touched.clear()

    def forget_board(self, board: str) -> None:
        """A board (re)booted: its LEDs show nothing we sent; the next relight compares every LED."""
        for key in [k for k in self.lit if k[0] == board]:
            del self.lit[key]
        self._compare_all = True

    def _draw(self, want: dict, drawn: dict | None) -> None:
        """Send what `want` lights, looking only at objects that may differ from `drawn` (None: all)."""
        if drawn is None:
            names = sorted(self.led_keys)
        else:
            # An LED no cue touched since the last relight still shows what that relight drew, so an
            # object whose state is unchanged needs no look (unless its LED is shared with another).
            look = set(self.shared_leds)
            if want is not drawn and want != drawn:  # usually equal: one comparison in C
                look.update(n for n in want.keys() | drawn.keys() if want.get(n) != drawn.get(n))
            by_led = self.names_by_led
            for touched in self._touched:
                look.update(by_led.get(touched, ()))
            names = sorted(look)
        self._show(names, want)

    def _show(self, names: list[str], want: dict) -> None:
        """Send what `want` lights for each of names (in that order) whose LED shows something else."""
        keys, lit, send = self.led_keys, self.lit, self._send
        for name in names:
            key = keys.get(name)
            state = want.get(name, OFF)
            if key is not None and lit.get(key) != state:
                led = self.led(name, state)
                if led is not None:  # (it has an LED: always)
                    lit[key] = state
                    send(led)
        self._touched.clear()

    def lighting(self, view: dict) -> list:
        """[(object, (pattern, rgb, period))] for every object with an LED, from the public view
        (objects the view does not light go dark)."""
        lit = self.lit_names(view)
        return [(o, lit.get(name, OFF)) for name, o in self._lit_objects]

    def lit_names(self, view: dict) -> dict[str, tuple[str, int, int]]:
        """{object name: (pattern, rgb, period)} of what the public view lights; a name not there is dark.
        (May name objects without an LED: lighting() and the session look only at those with one.)"""
        return self.adapter.lighting(view, self.tmap.objects)

    @property
    def led_keys(self) -> dict[str, tuple[str, str]]:
        """Object with an LED -> (board, led)."""
        if self._led_key is None:
            self._led_key = {name: (o.led_board, o.led) for name, o in self._lit_objects if o.led_board is not None}
        return self._led_key

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


class LedFrames:
    """At most one round of LED commands a board a frame (LED_FRAME, or LED_FRAME_BEHIND as the bridge
    sets `frame`): the first change after a quiet frame goes at once, what follows within the frame at
    its end, the last command per LED kept, in the order those last commands were made (targets
    overlap: "all" and a pixel of it). deliver(led) sends one command, True if it went; lit(since) is
    told when a held round with board events behind it has left (the event -> LED latency)."""

    def __init__(self, deliver: Callable[[Led], bool], lit: Callable[[float], object] | None = None):
        self.deliver = deliver
        self.lit = lit
        self.frame = LED_FRAME
        self._at: dict[tuple, float] = {}  # (table, board) -> when its last round went
        self._due: dict[tuple, dict[str, Led]] = {}  # (table, board) -> target -> command for the frame's end
        self._since: dict[tuple, float] = {}  # (table, board) -> when the oldest batch held there was taken
        self._batch: dict[tuple, dict[str, Led]] | None = None  # the open batch's commands (hold() to release())

    def send(self, led: Led, since: float | None = None) -> None:
        """Now, or at the end of the board's frame if it was sent a round this frame. since: when the
        batch of board events that made it was taken."""
        self._go({(led.table, led.board): {led.target: led}}, since)

    def hold(self) -> None:
        """A batch begins: its commands (put()) wait for its commit (release())."""
        self._batch = {}

    def put(self, led: Led) -> None:
        """A command as it is made: kept with the open batch's, else sent (send())."""
        batch = self._batch
        if batch is None:
            self.send(led)
            return
        key = (led.table, led.board)
        held = batch.get(key)
        if held is None:
            batch[key] = {led.target: led}
        else:
            held.pop(led.target, None)  # only the last command for each LED matters, in the order of those
            held[led.target] = led

    def release(self, since: float | None = None) -> None:
        """The batch is committed: its commands go as send() would take them one by one, the last for each LED
        alone (a piece lifted and put back within one burst sends nothing), in the order of those last commands
        (targets overlap: "all" and a pixel of it). Looked at per board, not per command: a batch of 100 tables
        holds a few hundred. since: when the batch was taken, if board events made its commands."""
        batch, self._batch = self._batch, None
        if batch:
            self._go(batch, since)

    def _go(self, batch: dict[tuple, dict[str, Led]], since: float | None) -> None:
        now = time.monotonic()
        loop: asyncio.AbstractEventLoop | None = None
        asked = False
        for key, leds in batch.items():
            due = self._due.get(key)
            if due is None:
                wait = self._at.get(key, -self.frame) + self.frame - now
                if wait <= 0:  # the board's first round this frame: its first command now, the rest at its end
                    self._at[key] = now
                    first = next(iter(leds))
                    self.deliver(leds.pop(first))
                    if not leds:
                        continue
                    wait = self.frame
                if not asked:  # once a batch
                    asked = True
                    try:
                        loop = asyncio.get_running_loop()
                    except RuntimeError:
                        pass
                if loop is None:  # driven by hand, with no loop to wait on: now
                    for led in leds.values():
                        self.deliver(led)
                    continue
                due = self._due[key] = {}
                loop.call_later(wait, self._round, key)
            if since is not None:
                self._since.setdefault(key, since)
            for target, led in leds.items():
                due.pop(target, None)
                due[target] = led

    def _round(self, key: tuple) -> None:
        due = self._due.pop(key, None)
        since = self._since.pop(key, None)
        if due:
            self._at[key] = time.monotonic()
            went = [self.deliver(led) for led in due.values()]
            if self.lit and since is not None and any(went):
                self.lit(since)

    def flush(self) -> None:
        """Every held round now (the bridge stopping)."""
        for key in list(self._due):
            self._round(key)

    def forget(self, table: str) -> None:
        """Drop the held rounds of a table (its game switched: the new game draws its own)."""
        for key in [k for k in self._due if k[0] == table]:
            del self._due[key]
            self._since.pop(key, None)
