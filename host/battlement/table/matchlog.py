"""The bridge's Match: its input log is one the cycle collector need not walk.

Every full collection walks each item of every tracked list, dicts included, even untracked ones, and a
tuple holding a dict stays tracked. With a long game's inputs in one list, the bridge's soak games of a
million inputs made each full collection take 100-230 ms (7% of the bridge's CPU after three minutes,
and growing). So every CHUNK inputs are sealed into one JSON text, as the journal keeps them: a text is
not walked, and it takes about a fifth of the memory of its dicts.
"""

from __future__ import annotations

import json

from shared_rules import engine


class ByInput:
    """What is made from an input alone (its journal text, its Home Assistant event), made once per distinct
    input: a table's sensed inputs are the same few over and over (b5 lifted, put back, lifted...)."""

    KEPT = 4096  # distinct inputs remembered (then forgotten at once: a game has a few hundred)

    def __init__(self, make):
        self.make = make
        self._made = {}

    def __call__(self, inp):
        # Each field with its value's type: True == 1, but their JSON differs. A list or a dict among the
        # values is no key (TypeError): made each time.
        try:
            key = tuple([(k, v.__class__, v) for k, v in inp.items()])
            return self._made[key]
        except KeyError:
            if len(self._made) >= self.KEPT:
                self._made.clear()
            made = self._made[key] = self.make(inp)
            return made
        except TypeError:
            return self.make(inp)


class InputLog:
    """A match's inputs in order: a list to its readers (len, iteration, indexing, slices, ==).
    Reading a sealed chunk decodes it; the chunk read last is kept decoded."""

    CHUNK = 512

    def __init__(self, inputs=()):
        self._sealed = []  # JSON texts of CHUNK inputs each, oldest first
        self._tail = []  # the newest, fewer than CHUNK
        self._open = (-1, None)  # (index, inputs) of the sealed chunk read last
        for inp in inputs:
            self.append(inp)

    def append(self, inp):
        tail = self._tail
        tail.append(inp)
        if len(tail) >= self.CHUNK:
            self._sealed.append(json.dumps(tail))
            self._open = (len(self._sealed) - 1, tail)  # readers of the newest (the HA feed) find it here
            self._tail = []

    def _chunk(self, c):
        if c == len(self._sealed):
            return self._tail
        if self._open[0] != c:
            self._open = (c, json.loads(self._sealed[c]))
        return self._open[1]

    def __len__(self):
        return len(self._sealed) * self.CHUNK + len(self._tail)

    def __bool__(self):
        return bool(self._sealed or self._tail)

    def __iter__(self):
        for c in range(len(self._sealed) + 1):
            yield from self._chunk(c)

    def __getitem__(self, i):
        sealed = len(self._sealed) * self.CHUNK
        if type(i) is slice and i.step is None and i.stop is None and i.start is not None and i.start >= sealed:
            return self._tail[i.start - sealed:]  # the newest few (the HA feed after every input): no chunk decoded
        n = sealed + len(self._tail)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                return list(self)[i]
            out = []
            while start < stop:  # chunk by chunk: a reader of the newest few decodes nothing older
                c, k = divmod(start, self.CHUNK)
                part = self._chunk(c)
                take = min(stop - start, len(part) - k)
                out.extend(part[k:k + take])
                start += take
            return out
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("input %d of %d" % (i, n))
        c, k = divmod(i, self.CHUNK)
        return self._chunk(c)[k]

    def __eq__(self, other):
        if isinstance(other, InputLog):
            other = list(other)
        return isinstance(other, list) and len(other) == len(self) and list(self) == other

    def __repr__(self):
        return "InputLog(%r)" % (list(self),)


class Match(engine.Match):
    """A match whose inputs live in an InputLog (the rules' Match is left as a board runs it: its heap
    tests have about a kilobyte to spare)."""

    def __init__(self, game, options=None, seed=0, keep_log=True):
        super().__init__(game, options, seed, keep_log)
        self.inputs = InputLog()
        self._flat = getattr(game, "FLAT_STATE", False) and keep_log

    def apply(self, inp):
        """The rules' Match.apply, on a shallow copy of the state for a game whose apply() only ever replaces
        the state's values (FLAT_STATE): for a board game of a few pieces the deep copy was a fifth of the
        rules' time an input. Kept here, not in the engine: a board's heap has no room for more of it."""
        if not self._flat or type(inp) is not dict or "t" not in inp or self.state["over"]:
            return super().apply(inp)  # its checks and words
        work = dict(self.state)
        fx = self.game.apply(work, inp)
        self.state = work
        self.inputs.append(inp)
        for e in fx:
            if e["t"] == "say" and e.get("to") is None:
                self.announcements.append(e["text"])
        return fx

    def replay_from(self, inputs):
        super().replay_from(inputs)
        self.inputs = InputLog(self.inputs)
