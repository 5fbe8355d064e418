"""A drawing sheet for the wiring diagrams: schemdraw underneath, plus the extent of everything drawn.

Coordinates are schemdraw units (36 pt), x to the right and y DOWN, as a page is read. Every call grows
the sheet's extent by what it draws, text included: text is sized for DejaVu Sans (Debian's "sans") with
room to spare, so a layout that keeps extents apart keeps the rendered labels apart, and `frame()` makes
the drawing's viewBox hold every label (schemdraw's own estimate is narrower than the real font).
A sheet without a drawing only measures: a panel is measured first, then drawn where it fits.
"""

from __future__ import annotations

import contextlib
import math
from typing import Literal

FS = 10  # labels, pin names
SIG, SELECT, DATA = "#1f5fa8", "#777777", "#b03020"  # wire colours: a mux's SIG, its select lines, pixel data
WIDE = 1.3  # schemdraw estimates Arial; DejaVu Sans runs up to 1.27 times wider


def text_width(s: str, size: float = FS) -> float:
    from schemdraw.backends.svgtext import string_width

    return string_width(s, fontsize=size) * WIDE / 36


def text_height(size: float = FS) -> float:
    return size * 1.2 / 36


class Sheet:
    def __init__(self, drawing=None):
        self.d = drawing
        self.dx = self.dy = 0.0  # where a panel's own (0, 0) is on the sheet
        self.ext = [math.inf, math.inf, -math.inf, -math.inf]
        self._el = None
        if drawing is not None:
            import schemdraw.elements as elm

            self._el = elm.Element()  # text, lines and boxes (added by finish()); symbols are schemdraw's own

    def grow(self, x0: float, y0: float, x1: float, y1: float) -> None:
        e = self.ext
        self.ext = [min(e[0], x0), min(e[1], y0), max(e[2], x1), max(e[3], y1)]

    def width(self) -> float:
        return self.ext[2] - self.ext[0]

    def bottom(self) -> float:
        return self.ext[3]

    @contextlib.contextmanager
    def origin(self, x: float, y: float):
        """Draw a panel with its own (0, 0) at (x, y) of the sheet."""
        old = self.dx, self.dy
        self.dx, self.dy = old[0] + x, old[1] + y
        try:
            yield self
        finally:
            self.dx, self.dy = old

    # --- primitives (panel coordinates) ------------------------------------------

    def text(self, x: float, y: float, s: str, size: float = FS, anchor: str = "start", color: str = "black") -> float:
        """One line of text, vertically centred on y; returns its width."""
        x, y = x + self.dx, y + self.dy
        w, h = text_width(s, size), text_height(size)
        left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
        self.grow(left, y - h / 2, left + w, y + h / 2)
        if self._el is not None:
            from schemdraw.segments import SegmentText

            align: Literal["left", "center", "right"] = "left" if anchor == "start" else \
                "center" if anchor == "middle" else "right"
            self._el.segments.append(SegmentText((x, -y), s, align=(align, "center"), fontsize=size, color=color))
        return w

    def line(self, *pts: tuple[float, float], color: str = "black", dashed: bool = False, lw: float = 1.5) -> None:
        pts = tuple((x + self.dx, y + self.dy) for x, y in pts)
        for x, y in pts:
            self.grow(x - 0.05, y - 0.05, x + 0.05, y + 0.05)
        if self._el is not None:
            from schemdraw.segments import Segment

            self._el.segments.append(Segment([(x, -y) for x, y in pts], color=color, lw=lw, ls="--" if dashed else "-"))

    def rect(self, x0: float, y0: float, x1: float, y1: float, dashed: bool = False, color: str = "black") -> None:
        self.line((x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0), color=color, dashed=dashed,
                  lw=1.0 if dashed else 1.5)

    def dot(self, x: float, y: float, hollow: bool = False) -> None:
        """A junction (filled) or a lead's free end, to be soldered (hollow)."""
        x, y = x + self.dx, y + self.dy
        self.grow(x - 0.1, y - 0.1, x + 0.1, y + 0.1)
        if self._el is not None:
            from schemdraw.segments import SegmentCircle

            self._el.segments.append(SegmentCircle((x, -y), 0.08, fill="white" if hollow else "black", lw=1.5))

    def supply(self, x: float, y: float, label: str) -> None:
        """A supply flag on a lead that ends at (x, y) from below: a bar, the rail's name above it."""
        self.line((x, y), (x, y - 0.3))
        self.line((x - 0.25, y - 0.3), (x + 0.25, y - 0.3), lw=2.0)
        self.text(x, y - 0.55, label, anchor="middle")

    def ground(self, x: float, y: float) -> None:
        """The ground symbol hanging below (x, y): every one of them is the same GND."""
        import schemdraw.elements as elm

        x, y = x + self.dx, y + self.dy
        self.grow(x - 0.3, y, x + 0.3, y + 0.7)
        if self.d is not None:
            self.d.add(elm.Ground().at((x, -y)).theta(0))

    def part(self, kind: str, a: tuple[float, float], b: tuple[float, float]) -> None:
        """A two-lead part from a to b: resistor, led (a: anode), switch or capacitor (a: +)."""
        import schemdraw.elements as elm

        a, b = (a[0] + self.dx, a[1] + self.dy), (b[0] + self.dx, b[1] + self.dy)
        side = 0.6 if kind == "led" else 0.35  # an LED's light arrows stand out to one side
        self.grow(min(a[0], b[0]) - 0.35, min(a[1], b[1]) - 0.2, max(a[0], b[0]) + side, max(a[1], b[1]) + 0.2)
        if self.d is not None:
            made = elm.Capacitor(polar=True) if kind == "capacitor" else \
                {"resistor": elm.Resistor, "led": elm.LED, "switch": elm.Switch}[kind]()
            self.d.add(made.at((a[0], -a[1])).to((b[0], -b[1])))

    def finish(self, margin: float = 0.3) -> str:
        """The SVG text, framed by a thin border round everything drawn: its viewBox holds every label."""
        x0, y0, x1, y1 = self.ext
        self.rect(x0 - margin - self.dx, y0 - margin - self.dy, x1 + margin - self.dx, y1 + margin - self.dy,
                  color="#bbbbbb")
        self.d.add(self._el.at((0, 0)).theta(0))
        data = self.d.get_imagedata("svg")
        return data.decode() if isinstance(data, bytes) else data
