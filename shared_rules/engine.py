"""The rules-engine contract shared by every game (see docs/rules/engine.md).

Pure and deterministic, no I/O; runs under CPython 3.11+ and MicroPython 1.2x.

A game is a module with:
    NAME      "medieval-pong"
    TITLE     "Medieval Pong"
    OPTIONS   {key: {"default": v, "choices": [...] or None, "help": "..."}}
    SENSED    tuple of input types that come from sensors ("ball", "tilt", ...)
    setup(options, seed) -> state          plain data; options already completed
    awaiting(state) -> [actor, ...]         who must act next ([] when over)
    legal(state) -> [input, ...]            finite, deterministic order
    apply(state, inp) -> [effect, ...]      mutates state; raises Illegal
    view(state, viewer) -> dict             viewer None = public, else a side/player

State is a dict of plain data (dict, list, str, int, bool, None) holding at least
"game", "options", "rng", "over" and "winner". An input is a dict with "t" (its
type) and, for decisions, "by" (the actor). An effect is a dict with "t" in
"say", "cue", "prompt" (see say/cue/prompt below).
"""

# ---------------------------------------------------------------- errors


class Illegal(Exception):
    """An input the rules refuse; str(e) says why. The state is left unchanged."""

    def __init__(self, reason):
        super().__init__(reason)  # MicroPython has no Exception.__init__ to call directly
        self.reason = reason


# ---------------------------------------------------------------- plain data


_SEQUENCES = (list, tuple)  # named once: a tuple of types written in a call is built anew on every call


def clone(obj):
    """Deep copy of plain data (MicroPython has no copy module). Leaves are shared, not visited.

    dict()/list() copy a container in one allocation of the right size, and only the nested
    containers are replaced: a comprehension grows each copy step by step, leaving a small
    board's heap in fragments. Plain data holds no subclasses, so `type(v) is` decides what
    to copy: cheaper than isinstance against a tuple of types, on both interpreters."""
    t = type(obj)
    if t is dict:
        out = dict(obj)
        for k, v in obj.items():
            t = type(v)
            if t is dict or t is list or t is tuple:
                out[k] = clone(v)
        return out
    if t is list or t is tuple:
        out = list(obj)
        for i in range(len(out)):
            t = type(out[i])
            if t is dict or t is list or t is tuple:
                out[i] = clone(out[i])
        return out
    return obj


_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


_ESCAPED = {}  # type: dict  # the same few keys and names are escaped over and over; bounded for small boards


def _plain(s):
    """True if s is printable ASCII with no quote or backslash, so JSON needs no escapes.

    Looks at the bytes, not the characters: MicroPython interns every one-character string a
    loop over a str yields, and a new qstr can make a board allocate a whole qstr pool."""
    try:
        b = s.encode()
    except UnicodeError:  # a lone surrogate (CPython)
        return False
    if len(b) != len(s):
        return False
    for o in b:
        if o < 32 or o > 126 or o == 34 or o == 92:
            return False
    return True


def _esc(s):
    done = _ESCAPED.get(s)
    if done is not None:
        return done
    if _plain(s):
        done = '"' + s + '"'
    else:
        out = []
        for c in s:
            o = ord(c)
            if c in _SHORT:
                out.append(_SHORT[c])
            elif o < 32 or 126 < o < 0x10000:
                out.append("\\u%04x" % o)
            elif o >= 0x10000:  # JSON spells astral characters as a surrogate pair
                o -= 0x10000
                out.append("\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)))
            else:
                out.append(c)
        done = '"' + "".join(out) + '"'
    if len(s) <= 24 and len(_ESCAPED) < 256:
        _ESCAPED[s] = done
    return done


def dumps(obj):
    """Canonical JSON: sorted keys, no spaces, ASCII. Identical on both interpreters."""
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, str):
        return _esc(obj)
    if isinstance(obj, int):
        return "%d" % obj
    if isinstance(obj, float):
        return repr(obj)
    if isinstance(obj, dict):
        return "{" + ",".join(_esc(str(k)) + ":" + dumps(obj[k]) for k in sorted(obj)) + "}"
    if isinstance(obj, _SEQUENCES):
        return "[" + ",".join(dumps(v) for v in obj) + "]"
    raise TypeError("not plain data: %r" % (obj,))


# ---------------------------------------------------------------- seeded randomness

_MASK = 0xFFFFFFFF


def _next(x):
    # xorshift32: tiny, fast, same numbers on both interpreters.
    x ^= (x << 13) & _MASK
    x ^= x >> 17
    x ^= (x << 5) & _MASK
    return x & _MASK


def seed_rng(seed):
    x = (int(seed) * 2654435761 + 0x9E3779B9) & _MASK
    return x or 0x6D2B79F5


def rand_below(state, n):
    """A number in [0, n) from the generator kept in state["rng"]."""
    if n <= 0:
        raise ValueError("rand_below(0)")
    x = _next(state["rng"])
    state["rng"] = x
    return x % n


def shuffle(state, items):
    """Fisher-Yates in place with the state's generator."""
    for i in range(len(items) - 1, 0, -1):
        j = rand_below(state, i + 1)
        items[i], items[j] = items[j], items[i]
    return items


class Rng:
    """A generator outside any game state (e.g. the random player's choices)."""

    def __init__(self, seed):
        self.rng = seed_rng(seed)

    def below(self, n):
        self.rng = _next(self.rng)
        return self.rng % n

    def choice(self, items):
        return items[self.below(len(items))]


# ---------------------------------------------------------------- effects


def say(fx, text, to=None):
    """An announcement; to=None is public, else only that side/player hears it."""
    fx.append({"t": "say", "text": text, "to": to})


def cue(fx, name, **kw):
    """An abstract light/sound cue, e.g. cue(fx, "tower.destroyed", side="red", tower="B2")."""
    e = {"t": "cue", "cue": name}
    for k, v in kw.items():
        e[k] = v
    fx.append(e)


def prompt(fx, to, ask, choices=None):
    """Ask an actor for a decision; choices are the allowed answers (inputs) if finite."""
    fx.append({"t": "prompt", "to": to, "ask": ask, "choices": choices})


# ---------------------------------------------------------------- options


def complete_options(game, options):
    """Fill defaults and check every option against the game's OPTIONS."""
    out = {}
    given = options or {}
    for key in given:
        if key not in game.OPTIONS:
            raise Illegal("unknown option %r for %s (known: %s)" % (key, game.NAME, ", ".join(sorted(game.OPTIONS))))
    for key in sorted(game.OPTIONS):
        spec = game.OPTIONS[key]
        val = given[key] if key in given else spec["default"]
        choices = spec.get("choices")
        if choices is not None and val not in choices:
            raise Illegal("option %s=%r is not one of %s" % (key, val, choices))
        out[key] = val
    return out


# ---------------------------------------------------------------- a match


class Match:
    """One game in progress: the rules, the initial (options, seed) and the input log.

    replay(log) reaches the identical state; undo() replays all but the last input.
    """

    def __init__(self, game, options=None, seed=0, keep_log=True):
        self.game = game
        self.options = complete_options(game, options)
        self.seed = seed
        self.keep_log = keep_log
        self.inputs = []
        self.announcements = []  # public announcements, in order
        self.state = game.setup(self.options, seed)

    def awaiting(self):
        return self.game.awaiting(self.state)

    def legal(self):
        return self.game.legal(self.state)

    @property
    def over(self):
        return bool(self.state["over"])

    def apply(self, inp):
        """Apply one input; returns its effects. Raises Illegal with the state unchanged."""
        if not isinstance(inp, dict) or "t" not in inp:
            raise Illegal("an input is an object with a 't' field, got %r" % (inp,))
        if self.state["over"]:
            raise Illegal("the game is over")
        work = clone(self.state)
        fx = self.game.apply(work, inp)
        self.state = work
        if self.keep_log:
            self.inputs.append(inp)
            for e in fx:
                if e["t"] == "say" and e.get("to") is None:
                    self.announcements.append(e["text"])
        return fx

    def undo(self):
        """Take back the last input; returns it (None if there was none)."""
        if not self.inputs:
            return None
        last = self.inputs[-1]
        self.replay_from(self.inputs[:-1])
        return last

    def replay_from(self, inputs):
        self.state = self.game.setup(self.options, self.seed)
        self.inputs = []
        self.announcements = []
        for inp in inputs:
            self.apply(inp)

    def view(self, viewer=None):
        v = self.game.view(self.state, viewer)
        v["game"] = self.game.NAME
        v["over"] = bool(self.state["over"])
        v["winner"] = self.state["winner"]
        v["awaiting"] = self.awaiting()
        if viewer is None:
            v["log"] = list(self.announcements)
        return v

    def to_data(self):
        return {"game": self.game.NAME, "options": self.options, "seed": self.seed, "inputs": self.inputs}

    @staticmethod
    def restore(game, data):
        """The Match that to_data() described, rebuilt by replaying its inputs."""
        m = Match(game, data.get("options"), data.get("seed", 0))
        for inp in data.get("inputs", ()):
            m.apply(inp)
        return m


# A random playout stops after this many inputs unless the game sets MAX_STEPS.
DEFAULT_MAX_STEPS = 5000


def max_steps(game):
    """The step cap for random playouts of game (its MAX_STEPS, else DEFAULT_MAX_STEPS)."""
    return getattr(game, "MAX_STEPS", DEFAULT_MAX_STEPS)


def playout(game, options, seed, max_steps):
    """Play one game choosing uniformly among legal inputs. Returns (match, steps, finished)."""
    m = Match(game, options, seed, keep_log=False)
    rng = Rng(seed + 1)
    steps = 0
    state = m.state
    while not state["over"] and steps < max_steps:
        choices = game.legal(state)
        if not choices:
            raise RuntimeError("%s: no legal input but the game is not over" % game.NAME)
        # Inputs come from legal(), so no defensive clone: an Illegal here is a bug and is raised.
        game.apply(state, rng.choice(choices))
        steps += 1
    return m, steps, bool(m.state["over"])
