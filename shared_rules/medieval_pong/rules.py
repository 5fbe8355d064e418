"""Medieval Pong: two kingdoms of towers, hidden characters and crowns (docs/rules/medieval-pong.md).

Towers are named by the sensor in them (A1..C3, or A1..F1 with 2 sets), so a
tower keeps its name when it is swapped, turned into a roof or stacked. Where a
tower physically stands is not tracked: a swap is done out of sight and the
engine only records that the side had the chance.

Runs under CPython and MicroPython; pure, no I/O.
"""

from shared_rules.engine import Illegal, cue, prompt, say, seed_rng
from shared_rules.medieval_pong.core import (
    ALTERNATIVE,
    ASKS,
    BASE,
    NOBLES,
    SIDES,
    _covered,
    _towers,
    _trap_targets,
    _with_status,
    other,
    roster,
    side_name,
    title,
)

NAME = "medieval-pong"
TITLE = "Medieval Pong"
SENSED = ("ball", "tie", "tilt")
MAX_STEPS = 3000

CHARACTERS = tuple(sorted(NOBLES + BASE + ALTERNATIVE))
TEAMS = ["base", "challenges-galore", "custom", "elite-marksmen", "full-set", "single-target",
         "ultimate-defense", "vanished-dragon"]

OPTIONS = {
    "team": {"default": "base", "choices": TEAMS,
             "help": "characters per side: base, a named scenario, custom (Princess+King+Dragon+6 picked), "
                     "or full-set (draft from the 12 others)"},
    "sets": {"default": 1, "choices": [1, 2],
             "help": "2 = two boxes: 18 towers in rows 5-4-3-3-2-1, two of each noble, 2 crowns to win"},
    "tactical": {"default": False, "choices": [False, True],
                 "help": "on its turn a side may swap two of its towers instead of throwing"},
    "extra_throw": {"default": "none", "choices": ["none", "blue", "red", "both"],
                    "help": "balance the levels: these sides get a second throw when the first misses"},
    "first": {"default": "red", "choices": ["red", "blue"], "help": "the side that throws first"},
    "unlocked": {"default": "all", "choices": None,
                 "help": "alternative characters that may be played: all, none, or a comma list "
                         "(e.g. ninja,archer); see unlocks()"},
}

TWO_BALLS = ("blacksmith", "two-sword-knight")
MODES = {
    "normal": "a normal throw",
    "dragon": "the Dragon's throw: if it misses, the Dragon destroys one of your own towers",
    "ghost": "the Ghost's throw: blow the ball off the hollow of your hand",
    "blacksmith": "the Blacksmith's throw: two balls in one hand",
    "two-sword-knight": "the Two-Sword Knight's throw: one ball in each hand, thrown together",
    "gunner": "the Gunner's throw: throw the ball from inside the Gunner's tower held in your hand",
    "blind-magician": "the Blind Magician's throw: eyes closed; a hit lets you rebuild a tower",
    "archer": "the Archer's throw: step back one pace; a hit makes your opponent destroy a second tower",
    "catapult": "the Catapult's throw: flick the ball from a tower on your rampart",
}
# Towers in each row A, B, C...: flat tuples of numbers (nested tuples of names cost a board 1 KB).
ROWS = {1: (3, 3, 3), 2: (5, 4, 3, 3, 2, 1)}


def tower_names(sets):
    out = []
    for row, n in enumerate(ROWS[sets]):
        for i in range(1, n + 1):
            out.append("%c%d" % (65 + row, i))  # %c, not chr(): chr() interns a new qstr on MicroPython
    return out


def parse_unlocked(text):
    """The alternative characters the option `unlocked` allows (sorted)."""
    if text == "all":
        return list(ALTERNATIVE)
    from shared_rules.medieval_pong import team as pong_team

    return pong_team.parse_unlocked(text)


def __getattr__(name):
    """SCENARIOS and PADLOCKS live with the team rules and the padlocks, loaded only when asked for."""
    if name == "SCENARIOS":
        from shared_rules.medieval_pong import team as pong_team

        return pong_team.SCENARIOS
    if name == "PADLOCKS":
        from shared_rules.medieval_pong import padlocks as pong_padlocks

        return pong_padlocks.PADLOCKS
    raise AttributeError(name)


# ---------------------------------------------------------------- setup


def setup(options, seed):
    sets = options["sets"]
    team = options["team"]
    unlocked = parse_unlocked(options["unlocked"])
    if team == "base" and (sets == 1 or len(unlocked) == len(ALTERNATIVE)):
        hand = roster(sets)
    else:  # a scenario, picks, a draft, or locked characters: the team rules say who gets what
        from shared_rules.medieval_pong import team as pong_team

        hand = pong_team.team_hand(team, sets, unlocked)
    names = tower_names(sets)
    state = {
        "game": NAME, "options": options, "rng": seed_rng(seed), "over": False, "winner": None,
        "phase": "team" if team in ("custom", "full-set") else "place",
        "target": 2 if sets == 2 else 1,
        "captured": {"blue": 0, "red": 0},
        "unlocked": unlocked,
        "pool": [],
        "draft": options["first"],
        "steps": [],
        "sides": {},
    }
    for s in SIDES:
        towers = {}
        for t in names:
            towers[t] = {"ch": None, "crown": False, "st": "up", "on": None, "known": False, "was": None}
        state["sides"][s] = {"towers": towers, "hand": list(hand), "ready": False, "discarded": [],
                             "bitten": False, "trap": None, "picked": 0}
    if team == "full-set":
        from shared_rules.medieval_pong import team as pong_team

        state["pool"] = pong_team.draft_pool(unlocked)
    return state


# ---------------------------------------------------------------- queries


def _cover_targets(state, s):
    """Standing towers with nothing on top: where a roof or a guard tower can go."""
    out = []
    for t in _with_status(state, s, "up"):
        if _covered(state, s, t) is None:
            out.append(t)
    return out


def enterable(state, s):
    """Towers of side s a ball can enter now: standing, uncovered, and guard towers on top."""
    return sorted(_cover_targets(state, s) + _with_status(state, s, "guard"))


def _destroy_choices(state, s):
    """What a side may destroy by its own choice (Dragon's rage, Archer, Ninja): never a Dragon nor a bare crown."""
    tw = _towers(state, s)
    out = []
    for t in sorted(tw):
        x = tw[t]
        cover = x["st"] in ("roof", "guard")
        if cover or (x["st"] == "up" and _covered(state, s, t) is None and x["ch"] not in (None, "dragon")):
            out.append(t)
    return out


def _bare_crowns(state, s):
    tw = _towers(state, s)
    out = []
    for t in _cover_targets(state, s):
        if tw[t]["crown"] and tw[t]["ch"] is None:
            out.append(t)
    return out


def _rebuild_options(state, s):
    """(towers on the rampart, discarded characters): a rebuild takes one of each. Not their product:
    9 x 9 pairs would be a board's biggest list just to ask whether there is one."""
    return _with_status(state, s, "box"), sorted(set(state["sides"][s]["discarded"]))


# ---------------------------------------------------------------- steps (what the game waits for)


def _turn(side, state, mode="normal", start=True, extra=None, gun=None):
    if extra is None:
        ex = state["options"]["extra_throw"]
        extra = 1 if (ex == side or ex == "both") and mode != "dragon" else 0
    return {"k": "throw", "side": side, "mode": mode, "balls": 2 if mode in TWO_BALLS else 1,
            "entered": [], "extra": extra, "start": start, "gun": gun, "tipped": False}


def _head(state):
    return state["steps"][0] if state["steps"] else None


def awaiting(state):
    if state["over"]:
        return []
    if state["phase"] == "team":
        from shared_rules.medieval_pong import team as pong_team

        return pong_team.team_awaiting(state)
    if state["phase"] == "place":
        out = []
        for s in SIDES:
            if not state["sides"][s]["ready"]:
                out.append(s)
        return out
    h = _head(state)
    if h["k"] == "fire":
        return list(SIDES)
    return [h["side"] if h["k"] == "throw" else h["by"]]


def _ball_inputs(state, exclude=()):
    out = []
    for s in SIDES:
        for t in enterable(state, s):
            if [s, t] not in exclude:
                out.append({"t": "ball", "side": s, "tower": t})
    return out


def _with_tilts(state, out):
    """out plus a tilt for every roof (one may tip at any moment of play), appended in place:
    `out + tilts` would copy a list of up to a hundred inputs on a small board."""
    for s in SIDES:
        for t in _with_status(state, s, "roof"):
            out.append({"t": "tilt", "side": s, "tower": t})
    return out


def legal(state):
    if state["over"]:
        return []
    if state["phase"] == "team":
        from shared_rules.medieval_pong import team as pong_team

        return pong_team.legal(state)
    if state["phase"] == "place":
        out = []
        for s in SIDES:
            side = state["sides"][s]
            if side["ready"]:
                continue
            if not side["hand"]:
                out.append({"t": "ready", "by": s})
                continue
            # apply() takes the characters in any order; listing only the next one (every tower for
            # it) still reaches every layout and keeps the list 9 long instead of 81 (small boards).
            c = side["hand"][0]
            for t in sorted(side["towers"]):
                if side["towers"][t]["ch"] is None:
                    out.append({"t": "place", "by": s, "tower": t, "character": c})
        return out
    h = _head(state)
    k = h["k"]
    if k == "throw":
        s = h["side"]
        out = _ball_inputs(state, h["entered"])
        out.append({"t": "miss", "by": s})
        if _may_swap(state, h):
            out.append({"t": "swap", "by": s})
        return _with_tilts(state, out)
    if k == "fire":
        origin = h["origin"]
        out = _ball_inputs(state)
        for t in enterable(state, other(origin)):
            out.append({"t": "tie", "side": other(origin), "tower": t})
        if h["kind"] == "ninja":
            out.append({"t": "touch", "by": origin})
        return _with_tilts(state, out)
    by = h["by"]
    out = []
    if k == "choose":
        for e in h["entered"]:
            out.append({"t": "choose", "by": by, "side": e[0], "tower": e[1]})
    elif k == "swap":
        out.append({"t": "swap", "by": by})
    elif k == "ask":
        for c in CHARACTERS:
            out.append({"t": "ask", "by": by, "character": c})
    elif k == "rebuild":
        box, chars = _rebuild_options(state, by)
        for t in box:
            for c in chars:
                out.append({"t": "rebuild", "by": by, "tower": t, "character": c})
        out.append({"t": "pass", "by": by})
    else:  # a tower to choose: roof, stack, trap or destroy
        if k == "destroy":
            towers = _bare_crowns(state, by) if h.get("forced") else _destroy_choices(state, by)
        else:
            towers = _trap_targets(state, by) if k == "trap" else _cover_targets(state, by)
        for t in towers:
            out.append({"t": k, "by": by, "tower": t})
    return _with_tilts(state, out)


def _may_swap(state, h):
    return state["options"]["tactical"] and h["start"] and h["mode"] == "normal" and not h["entered"]


# ---------------------------------------------------------------- apply


def _refused(key, *args):
    """The Illegal to raise, its reason in words (reasons.REASONS[key] % args), loaded only now."""
    from shared_rules.medieval_pong.reasons import REASONS

    return Illegal(REASONS[key] % args)


def _need(inp, key):
    if key not in inp:
        raise _refused("field", inp.get("t"), key)
    return inp[key]


def _side_arg(inp, key="side"):
    s = _need(inp, key)
    if s not in SIDES:
        raise _refused("side", key, s)
    return s


def _tower_arg(state, s, inp):
    t = _need(inp, "tower")
    if t not in state["sides"][s]["towers"]:
        names = sorted(state["sides"][s]["towers"])
        raise _refused("tower", t, s, names[0], names[-1])
    return t


def apply(state, inp):
    t = inp.get("t")
    if t not in HANDLERS:
        raise _refused("input", t, NAME, ", ".join(sorted(HANDLERS)))
    if state["over"]:
        raise _refused("over")
    if t not in SENSED:
        by = _side_arg(inp, "by")
        if by not in awaiting(state):
            raise _refused("not-now", by, " and ".join(awaiting(state)) or "nobody")
    fx = []
    HANDLERS[t](state, inp, fx)
    return fx


def _in_phase(state, phase, t):
    """Refuse an input of type t outside the game phase it belongs to."""
    if state["phase"] != phase:
        from shared_rules.medieval_pong.reasons import DOING

        raise _refused("phase", DOING[t], state["phase"])


def _expect(state, kinds, t):
    """The step awaited, if it is one of kinds; else refuse the input of type t."""
    _in_phase(state, "play", t)
    h = _head(state)
    if h["k"] not in kinds:
        from shared_rules.medieval_pong.reasons import DOING, describe

        raise _refused("expect", DOING[t], describe(h))
    return h


# ---- team and placement


def on_pick(state, inp, fx):
    _in_phase(state, "team", "pick")
    _need(inp, "character")
    from shared_rules.medieval_pong import team as pong_team

    pong_team.on_pick(state, inp, fx)


def on_place(state, inp, fx):
    _in_phase(state, "place", "place")
    s = inp["by"]
    side = state["sides"][s]
    t = _tower_arg(state, s, inp)
    c = _need(inp, "character")
    if c not in side["hand"]:
        raise _refused("place", s, c, ", ".join(side["hand"]) or "none")
    if side["towers"][t]["ch"] is not None:
        raise _refused("occupied", t, s)
    side["hand"].remove(c)
    tw = side["towers"][t]
    tw["ch"] = c
    tw["crown"] = c in ("princess", "king")  # a crown is hidden under each Princess and King
    say(fx, "The %s is in tower %s%s." % (title(c), t, " with a crown" if tw["crown"] else ""), to=s)


def on_ready(state, inp, fx):
    _in_phase(state, "place", "ready")
    s = inp["by"]
    side = state["sides"][s]
    if side["hand"]:
        raise _refused("ready", s, ", ".join(side["hand"]))
    side["ready"] = True
    say(fx, "%s's kingdom is ready." % side_name(s))
    cue(fx, "setup.ready", side=s)
    if all(state["sides"][x]["ready"] for x in SIDES):
        state["phase"] = "play"
        say(fx, "Let the battle begin!")
        first = state["options"]["first"]
        state["steps"] = [_turn(first, state)]
        _enter(state, fx)


# ---- throws


def on_ball(state, inp, fx):
    h = _expect(state, ("throw", "fire"), "ball")
    s = _side_arg(inp)
    t = _tower_arg(state, s, inp)
    _check_ball(state, fx, s, t)
    cue(fx, "ball.in", side=s, tower=t)
    if h["k"] == "fire":
        say(fx, "A ball is in %s's tower %s: fire at will is over." % (side_name(s), t))
        cue(fx, "fire.end")
        _set_steps(state, fx, _hit(state, fx, s, t, other(s)))
        return
    if [s, t] in h["entered"]:
        raise _refused("twice", t, s)
    h["entered"].append([s, t])
    if len(h["entered"]) < h["balls"]:
        say(fx, "First ball in %s's tower %s." % (side_name(s), t))
        return
    _end_throw(state, fx, h)


def _check_ball(state, fx, s, t):
    """A ball can be in a standing tower or a guard tower. The sensor is believed over the record:
    a ball in a covered tower means its cover moved (a roof slid off stays in play; a guard fell)."""
    x = _towers(state, s)[t]
    if x["st"] not in ("up", "guard"):
        from shared_rules.medieval_pong.reasons import where

        raise _refused("no-entry", t, s, where(state, s, t))
    cover = _covered(state, s, t)
    if cover is None:
        return
    if _towers(state, s)[cover]["st"] == "roof":
        _towers(state, s)[cover]["on"] = None
        say(fx, "The roof over %s's tower %s had slid off; it stays in play." % (side_name(s), t))
        cue(fx, "roof.slid", side=s, tower=cover, on=t)
    else:
        _to_box(state, s, cover)
        say(fx, "The Guard's tower %s had fallen off tower %s and goes to the rampart." % (cover, t))
        cue(fx, "tower.destroyed", side=s, tower=cover)


def on_miss(state, inp, fx):
    h = _expect(state, ("throw",), "miss")
    _end_throw(state, fx, h)


def _end_throw(state, fx, h):
    s = h["side"]
    if h["gun"]:
        _to_box(state, s, h["gun"])
    if len(h["entered"]) == 2:
        say(fx, "Both balls are in: %s chooses which tower is destroyed." % side_name(s))
        _set_steps(state, fx, [{"k": "choose", "by": s, "entered": h["entered"], "mode": h["mode"]}])
        return
    if h["entered"]:
        k, t = h["entered"][0]
        _resolve_hit(state, fx, s, h["mode"], k, t)
        return
    # No ball went in.
    cue(fx, "miss", side=s)
    if h["extra"] > 0:
        say(fx, "Missed. %s has an extra throw." % side_name(s))
        _set_steps(state, fx, [_turn(s, state, "normal", start=False, extra=h["extra"] - 1)])
    elif h["mode"] == "dragon" and not h["tipped"]:
        say(fx, "Missed! The Dragon is mad with rage: %s must destroy one of its own towers." % side_name(s))
        cue(fx, "dragon.rage", side=s)
        _set_steps(state, fx, [{"k": "destroy", "by": s, "why": "rage"}, _turn(other(s), state)])
    else:
        say(fx, "Missed.")
        _set_steps(state, fx, [_turn(other(s), state)])


def on_choose(state, inp, fx):
    h = _expect(state, ("choose",), "choose")
    k = _side_arg(inp)
    t = _tower_arg(state, k, inp)
    if [k, t] not in h["entered"]:
        raise _refused("choose", t, k)
    _resolve_hit(state, fx, h["by"], h["mode"], k, t)


def _resolve_hit(state, fx, thrower, mode, k, t):
    """A thrown ball counts in tower t of side k."""
    pre = []
    if k != thrower and mode == "blind-magician":
        say(fx, "The Blind Magician's throw succeeded: %s may rebuild a tower." % side_name(thrower))
        pre.append({"k": "rebuild", "by": thrower})
    if k != thrower and mode == "archer":
        say(fx, "The Archer's arrow hit: %s must also destroy a second tower, without its power."
            % side_name(k))
        pre.append({"k": "destroy", "by": k, "why": "archer"})
    post = _hit(state, fx, k, t, thrower)
    if state["over"]:
        return
    _set_steps(state, fx, pre + post)


def on_tie(state, inp, fx):
    h = _expect(state, ("fire",), "tie")
    s = _side_arg(inp)
    origin = h["origin"]
    if s != other(origin):
        raise _refused("tie", other(origin), origin, title(h["kind"]))
    t = _tower_arg(state, s, inp)
    _check_ball(state, fx, s, t)
    say(fx, "Two balls at once! %s, who just lost its %s, wins the fire at will: tower %s of %s counts."
        % (side_name(origin), title(h["kind"]), t, side_name(s)))
    cue(fx, "fire.end")
    cue(fx, "ball.in", side=s, tower=t)
    _set_steps(state, fx, _hit(state, fx, s, t, origin))


def on_touch(state, inp, fx):
    h = _expect(state, ("fire",), "touch")
    from shared_rules.medieval_pong import alt as pong_alt

    _set_steps(state, fx, pong_alt.on_touch(state, inp, fx, h))


def on_tilt(state, inp, fx):
    _in_phase(state, "play", "tilt")
    s = _side_arg(inp)
    t = _tower_arg(state, s, inp)
    x = _towers(state, s)[t]
    if x["st"] != "roof":
        raise _refused("tilt", t, s)
    below = x["on"]
    _to_box(state, s, t)
    say(fx, "%s's roof has tipped over: tower %s is open again." % (side_name(s), below))
    cue(fx, "roof.fell", side=s, tower=t, on=below)
    h = _head(state)
    if h["k"] == "throw" and s != h["side"]:
        h["tipped"] = True
    if h["k"] == "destroy" and not h.get("forced") and not _destroy_choices(state, h["by"]):
        _enter(state, fx)  # that roof was the last thing it could destroy: now only crowns are left


def on_swap(state, inp, fx):
    h = _expect(state, ("swap", "throw"), "swap")
    s = inp["by"]
    if h["k"] == "throw" and not _may_swap(state, h):
        raise _refused("swap", s)
    say(fx, "%s has swapped two towers, or not." % side_name(s))
    cue(fx, "swap", side=s)
    if h["k"] == "throw":
        _set_steps(state, fx, [_turn(other(s), state)])
    else:
        _next(state, fx)


def on_ask(state, inp, fx):
    _expect(state, ("ask",), "ask")
    s = inp["by"]
    c = _need(inp, "character")
    if c not in CHARACTERS:
        raise _refused("ask", c, ", ".join(CHARACTERS))
    o = other(s)
    tw = _towers(state, o)
    where = []
    for t in _with_status(state, o, "up"):
        if tw[t]["ch"] == c:
            where.append(t)
    if where:
        answer = "The Seer says: %s's %s is in tower %s." % (side_name(o), title(c), " and tower ".join(where))
    else:
        answer = "The Seer says: %s has no %s in its kingdom." % (side_name(o), title(c))
    say(fx, answer, to=s)
    say(fx, "%s's Seer has had an answer." % side_name(s))
    cue(fx, "seer.answered", side=s)
    _next(state, fx)


def on_cover(state, inp, fx):
    h = _expect(state, ("roof", "stack"), "roof")
    s = inp["by"]
    t = _tower_arg(state, s, inp)
    if t not in _cover_targets(state, s):
        raise _refused("roof", t, s)
    x = _towers(state, s)[h["tower"]]
    x["st"] = "roof" if h["k"] == "roof" else "guard"
    x["on"] = t
    if h["k"] == "roof":
        say(fx, "%s's Architect turns tower %s into a roof over tower %s." % (side_name(s), h["tower"], t))
        cue(fx, "roof.placed", side=s, tower=h["tower"], on=t)
    else:
        say(fx, "%s's Guard stacks tower %s on tower %s." % (side_name(s), h["tower"], t))
        cue(fx, "guard.stacked", side=s, tower=h["tower"], on=t)
    _next(state, fx)


def on_trap(state, inp, fx):
    _expect(state, ("trap",), "trap")
    t = _tower_arg(state, inp["by"], inp)
    from shared_rules.medieval_pong import alt as pong_alt

    pong_alt.on_trap(state, inp["by"], t, fx)
    _next(state, fx)


def on_rebuild(state, inp, fx):
    _expect(state, ("rebuild",), "rebuild")
    s = inp["by"]
    t = _tower_arg(state, s, inp)
    c = _need(inp, "character")
    box, chars = _rebuild_options(state, s)
    if t not in box or c not in chars:
        raise _refused("rebuild", s, t, title(c) if c in CHARACTERS else c)
    side = state["sides"][s]
    side["discarded"].remove(c)
    side["towers"][t] = {"ch": c, "crown": False, "st": "up", "on": None, "known": True, "was": None}
    say(fx, "%s rebuilds tower %s with its %s." % (side_name(s), t, title(c)))
    cue(fx, "tower.rebuilt", side=s, tower=t, character=c)
    _next(state, fx)


def on_pass(state, inp, fx):
    _expect(state, ("rebuild",), "pass")
    say(fx, "%s does not rebuild." % side_name(inp["by"]))
    _next(state, fx)


def on_destroy(state, inp, fx):
    h = _expect(state, ("destroy",), "destroy")
    s = inp["by"]
    t = _tower_arg(state, s, inp)
    choices = _bare_crowns(state, s) if h.get("forced") else _destroy_choices(state, s)
    if t not in choices:
        raise _refused("destroy", s, t, ", ".join(choices))
    x = _towers(state, s)[t]
    if h.get("forced"):
        _capture(state, fx, s, t)
        if state["over"]:
            return
        if h["why"] == "ninja":  # nothing queued after a touch: the touched side plays
            _set_steps(state, fx, [_turn(s, state)])
        else:
            _next(state, fx)
        return
    if x["st"] in ("roof", "guard"):
        say(fx, "%s removes tower %s from above tower %s." % (side_name(s), t, x["on"]))
        cue(fx, "tower.destroyed", side=s, tower=t)
        _to_box(state, s, t)
        if h["why"] == "ninja":
            _set_steps(state, fx, [_turn(s, state)])
        else:
            _next(state, fx)
        return
    if h["why"] == "ninja":
        _set_steps(state, fx, _hit(state, fx, s, t, None))
        return
    ch = _discard(state, fx, s, t)
    if ch not in ("princess", "king"):
        _to_box(state, s, t)
    _next(state, fx)


# ---------------------------------------------------------------- consequences


def _to_box(state, s, t):
    x = _towers(state, s)[t]
    x["st"] = "box"
    x["on"] = None
    x["known"] = True


def _discard(state, fx, s, t):
    """Discard the character of tower t (it is revealed); a crown under it is now exposed."""
    x = _towers(state, s)[t]
    ch = x["ch"]
    state["sides"][s]["discarded"].append(ch)
    x["ch"] = None
    x["was"] = ch
    x["known"] = True
    if state["sides"][s]["trap"] == t:
        from shared_rules.medieval_pong import alt as pong_alt

        pong_alt.lost(state, fx, s, t)
    say(fx, "%s's tower %s held the %s." % (side_name(s), t, title(ch)))
    cue(fx, "tower.destroyed", side=s, tower=t, character=ch)
    if x["crown"]:
        say(fx, "%s's crown in tower %s is exposed!" % (side_name(s), t))
        cue(fx, "crown.exposed", side=s, tower=t)
    return ch


def _capture(state, fx, s, t):
    """The crown in tower t of side s is captured by the other side."""
    x = _towers(state, s)[t]
    o = other(s)
    x["crown"] = False
    _to_box(state, s, t)
    state["captured"][o] += 1
    cue(fx, "crown.captured", side=s, tower=t, by=o)
    if state["captured"][o] >= state["target"]:
        state["over"] = True
        state["winner"] = o
        state["steps"] = []
        say(fx, "%s captures %s's crown in tower %s. %s wins!" % (side_name(o), side_name(s), t, side_name(o)))
        cue(fx, "game.won", side=o)
    else:
        say(fx, "%s captures %s's crown in tower %s: %d of %d." % (
            side_name(o), side_name(s), t, state["captured"][o], state["target"]))


def _hit(state, fx, k, t, thrower):
    """A ball entered tower t of side k (thrower None: destroyed by choice). Returns the steps that follow."""
    side = state["sides"][k]
    x = side["towers"][t]
    if thrower is not None and state["sides"][thrower]["bitten"]:
        from shared_rules.medieval_pong import alt as pong_alt

        pong_alt.heal(state, fx, thrower)
    autokill = thrower == k
    if autokill:
        say(fx, "Autokill! %s hit its own tower %s." % (side_name(k), t))
    if thrower is not None and side["trap"] == t:
        from shared_rules.medieval_pong import alt as pong_alt

        pong_alt.spring(state, fx, k, t, thrower)
    if x["st"] == "guard":
        say(fx, "The Guard's tower %s falls; tower %s below is safe." % (t, x["on"]))
        cue(fx, "tower.destroyed", side=k, tower=t)
        _to_box(state, k, t)
        return [_turn(k, state)]
    ch = x["ch"]
    if ch is None:  # a bare crown
        _capture(state, fx, k, t)
        return [] if state["over"] else [_turn(k, state)]
    if ch == "dragon":
        x["known"] = True
        say(fx, "%s's tower %s holds the Dragon, and it is immortal! %s gets a throw; "
            "if it misses, the Dragon destroys one of %s's own towers." % (side_name(k), t, side_name(k), side_name(k)))
        cue(fx, "dragon.awake", side=k, tower=t)
        return [_turn(k, state, "dragon")]
    _discard(state, fx, k, t)
    if ch in ("architect", "guard", "gunner"):
        x["st"] = "hand"  # used by the power before it goes to the rampart
    elif ch not in ("princess", "king") or not x["crown"]:  # a rebuilt noble's tower has no crown to hold it up
        _to_box(state, k, t)
    if autokill and ch == "archer":
        say(fx, "The Archer's power is ignored.")
        return [_turn(k, state)]
    return _power(state, fx, k, t, ch)


def _power(state, fx, k, t, ch):
    if ch in ("princess", "ninja"):
        return [{"k": "fire", "origin": k, "kind": ch}]
    if ch == "king":
        return [{"k": "swap", "by": k}, _turn(k, state)]
    if ch == "architect":
        return [{"k": "roof", "by": k, "tower": t}, _turn(k, state)]
    if ch == "guard":
        return [{"k": "stack", "by": k, "tower": t}, _turn(k, state)]
    if ch == "seer":
        return [{"k": "ask", "by": k}, _turn(k, state)]
    if ch == "hunter":
        return [{"k": "trap", "by": k}, _turn(k, state)]
    return [_turn(k, state, ch, gun=t if ch == "gunner" else None)]


def _set_steps(state, fx, steps):
    state["steps"] = steps
    if not state["over"]:
        _enter(state, fx)


def _next(state, fx):
    state["steps"].pop(0)
    _enter(state, fx)


def _enter(state, fx):
    """Announce the step now awaited; settle at once the ones with nothing to choose."""
    while state["steps"] and not state["over"]:
        h = state["steps"][0]
        k = h["k"]
        if k == "throw":
            _announce_throw(state, fx, h)
            return
        if k == "fire":
            say(fx, "FIRE AT WILL! %s's %s calls every side to throw at once, as fast as you like."
                % (side_name(h["origin"]), title(h["kind"])))
            if h["kind"] == "ninja":
                say(fx, "%s may bat balls back with the back of the hand; touching an opponent ends it."
                    % side_name(h["origin"]))
            cue(fx, "fire.start", side=h["origin"], kind=h["kind"])
            prompt(fx, None, "Fire at will: everyone throws; it stops when a ball enters a tower.")
            return
        by = h["by"]
        if k in ("roof", "stack") and not _cover_targets(state, by):
            say(fx, "No tower to put it on: tower %s goes to the rampart." % h["tower"])
            _to_box(state, by, h["tower"])
        elif k == "trap" and not _trap_targets(state, by):
            say(fx, "No tower left to hide the trap in.")
        elif k == "rebuild" and not all(_rebuild_options(state, by)):  # no tower or no character
            say(fx, "Nothing to rebuild.")
        elif k == "destroy" and not h.get("forced") and not _destroy_choices(state, by):
            say(fx, "%s has no other choice than to destroy one of its own crowns!" % side_name(by))
            if state["target"] - state["captured"][other(by)] <= 1 or not _bare_crowns(state, by):
                o = other(by)
                state["over"] = True
                state["winner"] = o
                state["steps"] = []
                say(fx, "%s wins!" % side_name(o))
                cue(fx, "game.won", side=o)
                return
            h["forced"] = True
            prompt(fx, by, "Choose which of your crowns is lost.", _bare_crowns(state, by))
            return
        else:
            # [:1], not [0]: MicroPython interns a one-character string, and a new qstr can cost a whole pool.
            prompt(fx, by, ASKS[k][:1].upper() + ASKS[k][1:] + ".", _choices_of(state, h))
            if k != "swap":
                cue(fx, "decide", side=by, what=k)
            else:
                say(fx, "%s may now swap two of its towers under the table." % side_name(by))
                cue(fx, "decide", side=by, what=k)
            return
        state["steps"].pop(0)


def _choices_of(state, h):
    by = h["by"]
    k = h["k"]
    if k in ("roof", "stack"):
        return _cover_targets(state, by)
    if k == "trap":
        return _trap_targets(state, by)
    if k == "destroy":
        return _destroy_choices(state, by)
    if k == "ask":
        return list(CHARACTERS)
    if k == "choose":
        out = []
        for e in h["entered"]:
            out.append(e[0] + ":" + e[1])
        return out
    return None


def _announce_throw(state, fx, h):
    s = h["side"]
    how = MODES[h["mode"]]
    if h["balls"] == 2 and h["entered"]:
        return
    if not h["start"]:
        text = "%s, your extra throw." % side_name(s)
    elif h["mode"] == "normal":
        text = "%s, your turn: throw at %s's kingdom." % (side_name(s), side_name(other(s)))
        if _may_swap(state, h):
            text += " Or swap two of your towers instead."
    else:
        text = "%s, your turn: %s." % (side_name(s), how)
    if state["sides"][s]["bitten"]:
        text += " Bitten by the trap: use your non-dominant hand."
    say(fx, text)
    cue(fx, "turn", side=s, mode=h["mode"], balls=h["balls"], bitten=state["sides"][s]["bitten"])
    prompt(fx, s, text, None)


HANDLERS = {
    "pick": on_pick, "place": on_place, "ready": on_ready, "ball": on_ball, "miss": on_miss,
    "choose": on_choose, "tie": on_tie, "touch": on_touch, "tilt": on_tilt, "swap": on_swap,
    "ask": on_ask, "roof": on_cover, "stack": on_cover, "trap": on_trap, "rebuild": on_rebuild,
    "pass": on_pass, "destroy": on_destroy,
}


# ---------------------------------------------------------------- views


def _tower_view(x, secret):
    v = {"status": x["st"]}
    if x["on"] is not None:
        v["on"] = x["on"]
    if x["was"] is not None:
        v["was"] = x["was"]
    if x["known"] or secret:
        v["character"] = x["ch"]
        v["crown"] = x["crown"]
    return v


def view(state, viewer):
    """Public view (viewer None) never holds an unrevealed character, crown or trap position."""
    sides = {}
    for s in SIDES:
        side = state["sides"][s]
        mine = viewer == s
        towers = {}
        for t in sorted(side["towers"]):
            towers[t] = _tower_view(side["towers"][t], mine)
        v = {"towers": towers, "discarded": sorted(side["discarded"]), "bitten": side["bitten"],
             "trap_hidden": side["trap"] is not None, "ready": side["ready"],
             "crowns_captured": state["captured"][s]}
        if state["options"]["team"] == "full-set" or state["phase"] != "team":
            v["picked"] = side["picked"]
        if mine:
            v["trap"] = side["trap"]
            v["to_place"] = list(side["hand"])
        sides[s] = v
    out = {"phase": state["phase"], "sides": sides, "crowns_to_win": state["target"], "pool": list(state["pool"])}
    h = _head(state)
    if h is not None:
        st = {"k": h["k"]}
        for key in ("side", "by", "mode", "balls", "origin", "kind", "why", "tower"):
            if key in h and h[key] is not None:
                st[key] = h[key]
        if h["k"] == "throw":
            st["entered"] = h["entered"]
        out["step"] = st
    return out


# ---------------------------------------------------------------- padlocks


def unlocks(state, progress, pick=None):
    """Tick one padlock after a finished game; returns the new progress (plain data the bridge stores).

    progress: {"ticks": {character: padlocks ticked}} (None or {} at first). pick: the alternative
    character whose padlock to tick; default the one closest to unlocking (ties by name).
    The result adds "unlocked": the characters with every padlock ticked, for the `unlocked` option.
    """
    from shared_rules.medieval_pong import padlocks as pong_padlocks

    return pong_padlocks.unlocks(state, progress, pick)
