"""NeoPixel patterns run on the board, so a blinking tower needs one command, not a stream.

Each pixel holds (pattern, colour, period, start); render() computes the frame
and writes the strip only when a pixel changed. Targets: an index "5", a range
"0-8", "all" (every pixel but the status pixel), "status", or a group from the
board config.
"""

from array import array

import pixels

OFF, SOLID, BLINK, PULSE, CHASE = 0, 1, 2, 3, 4
PATTERNS = ("off", "solid", "blink", "pulse", "chase")
DEFAULT_PERIOD = (0, 0, 500, 1200, 800)

# Link state -> (pattern, colour, period) on the status pixel.
STATUS = {
    "waiting": (PULSE, 0x402000, 1500),  # amber breathing: no host heard yet
    "linked": (SOLID, 0x002000, 0),  # dim green: host link up
    "lost": (BLINK, 0x400000, 400),  # red blink: Wi-Fi or broker lost
}


def parse_range(text, n):
    """'5' -> range(5, 6), '0-8' -> range(0, 9); None when malformed or outside 0..n-1."""
    a, sep, b = text.partition("-")
    try:
        lo = int(a)
        hi = int(b) if sep else lo
    except ValueError:
        return None
    if lo < 0 or hi >= n or lo > hi:
        return None
    return range(lo, hi + 1)


class Strip:
    def __init__(self, pin, count, status=-1, groups=None):
        self.n = count
        self.status = status if 0 <= status < count else -1
        self.np = pixels.strip(pin, count)  # None without a driver: commands are still acknowledged
        self.pat = bytearray(count)
        self.rgb = array("i", bytes(4 * count))
        self.period = array("i", bytes(4 * count))
        self.start = array("i", bytes(4 * count))
        self.pos = bytearray(count)  # place in its chase
        self.span = bytearray(count)  # length of its chase
        self.shown = array("i", bytes(4 * count))  # no list first: at start one block of it may not be free
        for i in range(count):
            self.shown[i] = -1  # never shown: the first frame writes every pixel
        self.groups = {}
        for name in groups or {}:
            idx = groups[name]
            if isinstance(idx, str):
                idx = parse_range(idx, count) or ()
            elif not all(0 <= i < count for i in idx):
                idx = [i for i in idx if 0 <= i < count]
            # A range as it is (a few words), a list as 2 bytes a pixel, not 8 (64-bit: 16): at start the heap is at
            # its fullest, and a long list needs one block of it.
            self.groups[name] = idx if isinstance(idx, range) else array("H", idx)
        self.link = None
        self.dirty = True  # a command changed something since the last render
        self.moving = False  # some pixel blinks, pulses or chases: render every frame

    def target(self, name):
        """Pixel indexes for a target name, or None if the board has no such target."""
        if name == "all":
            return [i for i in range(self.n) if i != self.status]
        if name == "status":
            return [self.status] if self.status >= 0 else None
        if name in self.groups:
            return self.groups[name]
        if name and "0" <= name[0] <= "9":
            return parse_range(name, self.n)
        return None

    def set(self, idxs, pattern, rgb, period, now_ms):
        p = PATTERNS.index(pattern)
        period = period or DEFAULT_PERIOD[p]
        span = len(idxs)
        for k in range(span):
            i = idxs[k]
            self.pat[i] = p
            self.rgb[i] = rgb & 0xFFFFFF
            self.period[i] = period
            self.start[i] = now_ms
            self.pos[i] = k & 255
            self.span[i] = span & 255
        self.dirty = True
        self.moving = False
        for i in range(self.n):
            if self.pat[i] > SOLID:
                self.moving = True
                break

    def show_link(self, state, now_ms):
        if self.status >= 0 and state != self.link:
            self.link = state
            p, rgb, period = STATUS[state]
            self.set([self.status], PATTERNS[p], rgb, period, now_ms)

    def colour(self, i, now_ms):
        p = self.pat[i]
        rgb = self.rgb[i]
        if p == OFF:
            return 0
        if p == SOLID:
            return rgb
        period = self.period[i] or 1
        phase = ((now_ms - self.start[i]) & 0x3FFFFFFF) % period
        if p == BLINK:
            return rgb if phase < period // 2 else 0
        if p == PULSE:
            # Triangle wave 0..255..0 over the period, applied to each channel.
            half = period // 2 or 1
            lvl = phase * 255 // half if phase < half else (period - phase) * 255 // half
            return (
                (((rgb >> 16) & 255) * lvl // 255) << 16
                | (((rgb >> 8) & 255) * lvl // 255) << 8
                | (rgb & 255) * lvl // 255
            )
        # CHASE: one lit pixel walks along the commanded set once per period.
        span = self.span[i] or 1
        return rgb if phase * span // period == self.pos[i] else 0

    def render(self, now_ms):
        """Recompute every pixel; write the strip if anything changed. Returns True if written."""
        if not (self.dirty or self.moving):
            return False  # nothing animates and nothing changed: spare the CPU
        self.dirty = False
        changed = False
        for i in range(self.n):
            c = self.colour(i, now_ms)
            if c != self.shown[i]:
                self.shown[i] = c
                changed = True
                if self.np is not None:
                    self.np[i] = ((c >> 16) & 255, (c >> 8) & 255, c & 255)
        if changed and self.np is not None:
            self.np.write()
        return changed
