"""The outbox: events the host has not acknowledged yet, kept as numbers in arrays made at boot.

An event is held as what it says (its sensor, kind, value, time, width), 12 bytes, not as its frame
(about 150 bytes of heap with its tuple): so noting an event allocates nothing, a full outbox takes
no more heap than an empty one, and no event is lost because the heap was short when it happened.
Its frame is made when the link sends it (App.take), and made again, the same bytes, for a resend.
Sequence numbers run without gaps, so only the oldest's is kept.
"""

from array import array

BLIND = 1  # kind codes beside 0 (the sensor's own kind)
BLOCKED = 2


class Outbox:
    def __init__(self, n):
        self.n = n
        self.tw = array("i", bytes(8 * n))  # per slot: t_us, width_us
        self.sv = array("H", bytes(4 * n))  # per slot: sensor index << 2 | kind code, value
        self.head = 0  # slot of the oldest
        self.count = 0
        self.first = 0  # seq of the oldest

    def __len__(self):
        return self.count

    def push(self, seq, sensor, kind, value, t, width):
        """Note event seq (the next after the newest). True if the oldest had to go to make room."""
        full = self.count == self.n
        if full:
            self.head = (self.head + 1) % self.n
            self.first += 1
            self.count -= 1
        if not self.count:
            self.first = seq
        k = (self.head + self.count) % self.n
        self.tw[2 * k] = t
        self.tw[2 * k + 1] = width
        self.sv[2 * k] = sensor << 2 | kind
        self.sv[2 * k + 1] = value
        self.count += 1
        return full

    def trim(self, seq):
        """Forget every event up to seq (the host's cumulative evack)."""
        k = min(self.count, seq - self.first + 1)
        if k > 0:
            self.head = (self.head + k) % self.n
            self.first += k
            self.count -= k

    def slot(self, i):
        """The slot of the i-th oldest event (0: the oldest)."""
        return (self.head + i) % self.n
