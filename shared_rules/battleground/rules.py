"""Battleground: Crossbows & Catapults -- two armies flick disks at each other's
warriors, flags and castle gate (see docs/rules/battleground.md).

Tilt switches on every warrior, hero, flag, brick and castle gate report
"fell"/"stood"; everything else (firing, moving, set-up checks, rewards) is a
decision. A fire action opens a shot window that collects the falls until the
shooter (or the bridge's timeout) says the shot is over; only then are the
falls judged, so the hero is always judged after the warriors of the same shot.

Pure and deterministic; runs under CPython and MicroPython.
"""

import sys

from shared_rules.engine import Illegal, clone, cue, prompt, say

NAME = "battleground"
TITLE = "Battleground: Crossbows & Catapults"

SIDES = ("orcs", "knights")
OPTIONS = {
    "warriors": {
        "default": 6,
        "choices": [1, 2, 3, 4, 5, 6, 7, 8],
        "help": "warriors per army, besides the hero",
    },
    "flags": {"default": 3, "choices": [3, 4, 5], "help": "flags per army"},
    "bricks": {
        "default": 4,
        "choices": [0, 2, 4, 6, 8],
        "help": "loose castle bricks per army (fitted with tilt switches)",
    },
    "power_disks": {
        "default": 2,
        "choices": [0, 1, 2, 3, 4],
        "help": "power disks each army may place under its figures at set-up",
    },
    "armory": {
        "default": "off",
        "choices": ["off", "on"],
        "help": "add the Armory Pack weapons to both armies",
    },
}
SENSED = ("fell", "stood")
# A random playout that reaches this many inputs is stopped and counted unfinished.
MAX_STEPS = 4000

# weapon -> disks per round. The castle catapult needs the balcony figure and a standing gate.
BASE_WEAPONS = (("catapult", 1), ("cannon", 1), ("crossbow", 1), ("castle-catapult", 1))
ARMORY_WEAPONS = (
    ("twin-crossbow", 2),
    ("trebuchet", 2),
    ("gatling-gun", 2),
    ("triple-catapult", 3),
    ("battering-ram", 0),
)
RAM = "battering-ram"
CASTLE = ".castle-catapult"  # the end of a castle catapult's name
RAM_USES = 2  # per game, 2 actions each
ACTIONS = 2
# Set-up steps each army confirms, in order (Orcs first, then Knights).
CHECKS = ("power", "balcony", "camp", "manned", "placement")

ARMY = {"orcs": "Orc", "knights": "Knight"}
SIDE_NAME = {"orcs": "Orcs", "knights": "Knights"}


def other(side):
    return "knights" if side == "orcs" else "orcs"


# ---------------------------------------------------------------- pieces and names


# The names of a table's pieces. The host keeps them, built once per army size (a tuple each,
# so no caller can change them): listing a shot's tilts is then almost twice as fast. A board
# makes them afresh on each call: the 40 to 60 names kept for good cost its heap more (2-4 KB
# in the measured smallest heaps) than the few made and dropped while an input is applied.
_KEEP_NAMES = sys.implementation.name != "micropython"
_LAST = [None]  # (army size, armies) of the last state asked about
_KEPT = {}  # type: dict  # army size -> armies, a few of them (the host may run tables of several sizes)
_WARRIORS, _FIGURES, _FLAGS, _BRICKS, _TILTS, _WEAPONS = 0, 1, 2, 3, 4, 5


def _numbered(side, kind, n):
    out = []
    for i in range(1, n + 1):
        out.append("%s.%s%d" % (side, kind, i))
    return out


def _names(o, side, what):
    """A new list of the names of one army (what: _WARRIORS ... _WEAPONS) for options o."""
    if what == _WARRIORS:
        return _numbered(side, "warrior", o["warriors"])
    if what == _FLAGS:
        return _numbered(side, "flag", o["flags"])
    if what == _BRICKS:
        return _numbered(side, "brick", o["bricks"])
    if what == _WEAPONS:
        out = []
        for w, _ in BASE_WEAPONS + (ARMORY_WEAPONS if o["armory"] == "on" else ()):
            out.append(side + "." + w)
        return out
    out = _names(o, side, _WARRIORS)
    out.append(side + ".hero")
    if what == _TILTS:
        out.extend(_names(o, side, _FLAGS))
        out.extend(_names(o, side, _BRICKS))
        out.append(side + ".gate")
    return out


def _army(state, side, what):
    """The names of one army (what: _WARRIORS ... _WEAPONS) for this state's army size."""
    o = state["options"]
    if not _KEEP_NAMES:
        return _names(o, side, what)
    last = _LAST[0]
    if last is not None:
        k = last[0]
        if k[0] == o["warriors"] and k[1] == o["flags"] and k[2] == o["bricks"] and k[3] == o["armory"]:
            return last[1][side][what]
    k = (o["warriors"], o["flags"], o["bricks"], o["armory"])
    armies = _KEPT.get(k)
    if armies is None:
        if len(_KEPT) >= 4:
            _KEPT.clear()
        armies = {}
        for s in SIDES:
            army = []
            for what_ in range(6):
                army.append(tuple(_names(o, s, what_)))
            armies[s] = army
        _KEPT[k] = armies
    _LAST[0] = (k, armies)
    return armies[side][what]


def warriors(state, side):
    return _army(state, side, _WARRIORS)


def figures(state, side):
    """Warriors then the hero: the pieces that can crew a weapon, move and hold power disks."""
    return _army(state, side, _FIGURES)


def flags(state, side):
    return _army(state, side, _FLAGS)


def bricks(state, side):
    return _army(state, side, _BRICKS)


def tilt_pieces(state, side):
    """Every piece of an army with a tilt switch, in a fixed order."""
    return _army(state, side, _TILTS)


def weapons(state, side):
    return _army(state, side, _WEAPONS)


_ALL_WEAPONS = BASE_WEAPONS + ARMORY_WEAPONS


def disks_of(weapon):
    kind = weapon.split(".", 1)[1]
    for w, n in _ALL_WEAPONS:
        if w == kind:
            return n
    return 0


def side_of(piece):
    return piece.split(".", 1)[0]


def kind_of(piece):
    """'warrior', 'hero', 'flag', 'brick', 'gate' or the weapon's name."""
    k = piece.split(".", 1)[1]
    for prefix in ("warrior", "flag", "brick"):
        if k.startswith(prefix) and k[len(prefix) :].isdigit():
            return prefix
    return k


def spoken(piece):
    """How the bridge reads a piece aloud: 'Orc warrior 3', 'Knight castle gate'."""
    side = side_of(piece)
    k = piece.split(".", 1)[1]
    army = ARMY.get(side, side)
    for prefix in ("warrior", "flag", "brick"):
        if k.startswith(prefix) and k[len(prefix) :].isdigit():
            return "%s %s %s" % (army, prefix, k[len(prefix) :])
    if k == "gate":
        return army + " castle gate"
    return "%s %s" % (army, k.replace("-", " "))


# ---------------------------------------------------------------- set-up


def setup(options, seed):
    from shared_rules.engine import seed_rng

    state = {
        "game": NAME,
        "options": options,
        "rng": seed_rng(seed),
        "over": False,
        "winner": None,
        "phase": "setup",
        "setup": {"side": "orcs", "step": 0},
        "turn": "orcs",
        "turns": 0,
        "actions": 0,
        "used": [],  # weapons fired this turn
        "aim": None,  # the weapon chosen to fire while its crew is still to be declared
        "shot": None,  # {"weapon", "crew", "falls"} while a shot is open
        "pending": [],  # to decide: {"kind": "bonus"|"revive", "by": side} or {"kind": "place", "by", "piece"}
        "down": [],  # tilt pieces out of play (a gate here is down); the rest stand
        "power": {},  # figure -> power disks under it (only figures that have some)
        "balcony": {},  # side -> figure on the castle balcony or None
        "disks_left": {},  # power disks still to place at set-up
        "rams": {},  # battering-ram uses left
        "penalty": {},  # actions lost on the side's next turn (early hero falls)
        "skip": {},  # turns the side must miss (its flags were all knocked down)
        "extra": {},  # extra turns won (three flags in one action)
        "restand": [],  # pieces the players must stand back up
        "ram_out": [],  # rams in the enemy camp, returned at the end of the turn
    }
    for side in SIDES:
        state["balcony"][side] = None
        state["disks_left"][side] = options["power_disks"]
        state["rams"][side] = RAM_USES if options["armory"] == "on" else 0
        state["penalty"][side] = 0
        state["skip"][side] = 0
        state["extra"][side] = 0
    return state


def _setup_prompt(state, fx):
    side = state["setup"]["side"]
    check = CHECKS[state["setup"]["step"]]
    cue(fx, "setup.step", side=side, check=check)
    prompt(fx, side, _check_text(state, side, check), legal(state))


def _check_text(state, side, check):
    army = SIDE_NAME[side]
    if check == "power":
        return "%s: place up to %d power disks under your warriors or hero, then confirm." % (
            army,
            state["disks_left"][side],
        )
    if check == "balcony":
        return (
            "%s: choose the figure on the castle balcony, who works the castle catapult, or confirm an empty balcony."
            % army
        )
    if check == "camp":
        return (
            "%s: confirm your castle, bricks, weapons and army stand within 40 centimetres of your end, "
            "with no weapon in front of the castle gate." % army
        )
    if check == "manned":
        names = []
        for w in weapons(state, side):
            if not w.endswith(CASTLE):
                names.append(spoken(w))
        return (
            "%s: confirm every weapon has a warrior or the hero within 5 centimetres, to its front or side: %s."
            % (
                army,
                ", ".join(names),
            )
        )
    return (
        "%s: confirm no warrior, hero or flag stands behind a weapon or building, "
        "and the hero stands where you want it in your camp." % army
    )


# ---------------------------------------------------------------- who acts, what is legal


def awaiting(state):
    if state["over"]:
        return []
    if state["phase"] == "setup":
        return [state["setup"]["side"]]
    if state["pending"]:
        return [state["pending"][0]["by"]]
    return [state["turn"]]


def _standing(state, piece):
    return piece not in state["down"]


def _knock(state, piece):
    if piece not in state["down"]:
        state["down"].append(piece)
    if piece in state["restand"]:
        state["restand"].remove(piece)


def _known(state, p):
    """Is p the name of a tilt piece on this table?"""
    if not isinstance(p, str) or "." not in p or side_of(p) not in SIDES:
        return False
    k = kind_of(p)
    if k in ("hero", "gate"):
        return True
    if k not in ("warrior", "flag", "brick"):
        return False
    n = int(p.split(".", 1)[1][len(k) :])
    return 1 <= n <= state["options"][k + "s"]


def _power(state, f):
    return state["power"].get(f, 0)


def _use_power(state, f):
    n = state["power"][f] - 1
    if n:
        state["power"][f] = n
    else:
        del state["power"][f]


def _room(n, first=()):
    """A list of the items of `first` with room for n more, in one piece of the heap.

    A list that grows by appending doubles its room each time it is full, and the step from 32
    to 64 items asks a board's heap for 512 bytes in one piece just when the heap is fullest and
    most fragmented (judging a shot, listing every piece that may fall). MicroPython keeps the
    room when the list is emptied; CPython frees it, which does no harm there."""
    out = [None] * (len(first) + n)
    del out[:]
    out.extend(first)
    return out


def _pick(state, pieces, up):
    """The pieces still standing (up=True) or out of play (up=False), in their order.

    One loop for every such question: each comprehension would be a function object of its own
    in a board's heap."""
    down = state["down"]
    out = []
    for p in pieces:
        if (p not in down) == up:
            out.append(p)
    return out


def _out_warriors(state, side):
    return _pick(state, warriors(state, side), False)


def legal(state):
    if state["over"]:
        return []
    if state["phase"] == "setup":
        return _legal_setup(state)
    side = state["turn"]
    if state["shot"] is not None:
        # The longest list of a game: every standing piece may fall. Counted first, to be made
        # in one piece (see _room).
        falls = state["shot"]["falls"]
        down = state["down"]
        n = len(falls) + 1
        for s in SIDES:
            for p in tilt_pieces(state, s):
                if p not in down and p not in falls:
                    n += 1
        out = _room(n)
        for s in SIDES:
            for p in tilt_pieces(state, s):
                if p not in down and p not in falls:
                    out.append({"t": "fell", "piece": p})
        for p in falls:
            out.append({"t": "stood", "piece": p})
        out.append({"t": "over", "by": side})
        return out
    if state["pending"]:
        task = state["pending"][0]
        by = task["by"]
        if task["kind"] == "bonus":
            out = _stood_first(state, 2)
            out.append({"t": "reward", "by": by, "choice": "revive"})
            out.append({"t": "reward", "by": by, "choice": "extra"})
            return out
        if task["kind"] == "place":
            out = _stood_first(state, 2)
            out.append({"t": "place", "by": by, "piece": task["piece"], "to": "balcony"})
            out.append({"t": "place", "by": by, "piece": task["piece"], "to": "field"})
            return out
        outs = _out_warriors(state, by)
        out = _stood_first(state, len(outs))
        for w in outs:
            out.append({"t": "revive", "by": by, "piece": w})
        return out
    if state["aim"] is not None:
        crews = _crews(state, side, state["aim"])
        out = _stood_first(state, len(crews))
        for c in crews:
            out.append({"t": "crew", "by": side, "piece": c})
        return out
    # At most: fire or move each weapon, move each figure to the field or the balcony, end.
    out = _stood_first(state, 2 * len(weapons(state, side)) + 2 * len(figures(state, side)) + 1)
    for w in weapons(state, side):
        if _fire_problem(state, side, w) is None and _crews(state, side, w):
            out.append({"t": "fire", "by": side, "weapon": w})
    gate_up = _standing(state, side + ".gate")
    for f in figures(state, side):
        if not _standing(state, f):
            continue
        out.append({"t": "move", "by": side, "piece": f, "to": "field"})
        if gate_up and state["balcony"][side] is None:
            out.append({"t": "move", "by": side, "piece": f, "to": "balcony"})
    for w in weapons(state, side):
        if not w.endswith(CASTLE):
            out.append({"t": "move", "by": side, "piece": w, "to": "field"})
    out.append({"t": "end", "by": side})
    return out


def _stood_first(state, room):
    """The pieces waiting to be stood up, as `stood` inputs, with room for `room` more inputs."""
    restand = state["restand"]
    out = _room(len(restand) + room)
    for p in restand:
        out.append({"t": "stood", "piece": p})
    return out


def _choices(state):
    """The decisions on offer, without the tilt reports."""
    out = []
    for c in legal(state):
        if c["t"] not in SENSED:
            out.append(c)
    return out


def _legal_setup(state):
    side = state["setup"]["side"]
    check = CHECKS[state["setup"]["step"]]
    out = []
    if check == "power" and state["disks_left"][side] > 0:
        for f in figures(state, side):
            out.append({"t": "power", "by": side, "piece": f})
    if check == "balcony":
        for f in figures(state, side):
            out.append({"t": "balcony", "by": side, "piece": f})
    out.append({"t": "confirm", "by": side, "check": check})
    return out


# ---------------------------------------------------------------- applying inputs


def _refused(key, *args):
    """The Illegal to raise, its reason in words: battleground.reasons.reason(key, args).

    The words are loaded on the first refusal, so a board refereeing a game of listed inputs
    never holds them in its heap."""
    from shared_rules.battleground.reasons import reason

    return Illegal(reason(key, args))


def apply(state, inp):
    t = inp.get("t")
    fx = []
    if state["over"]:
        raise _refused("over")
    if t in SENSED:
        _sensed(state, inp, fx)
        return fx
    if t not in ("power", "balcony", "confirm", "fire", "crew", "over", "move", "end", "reward", "revive", "place"):
        raise Illegal(
            "unknown input type %r for %s (known: fell, stood, power, balcony, confirm, fire, crew, over, move, end, reward, revive, place)"
            % (t, NAME)
        )
    by = inp.get("by")
    who = awaiting(state)
    if by not in SIDES:
        raise _refused("by", t, by)
    if by not in who:
        raise _refused("turn", SIDE_NAME[by], SIDE_NAME[who[0]])
    if state["phase"] == "setup":
        _apply_setup(state, inp, fx)
    elif state["shot"] is not None:
        if t != "over":
            raise _refused("shot-open", spoken(state["shot"]["weapon"]))
        # Judging a shot says about two things per fallen piece, often over 32 in all.
        fx = _room(2 * len(state["shot"]["falls"]) + 12)
        _resolve_shot(state, fx)
    elif state["pending"]:
        _apply_reward(state, inp, fx)
    elif state["aim"] is not None:
        w = state["aim"]
        if t != "crew":
            raise _refused("crew-first", spoken(w))
        _check_crew(state, inp["by"], w, inp.get("piece"))
        _open_shot(state, inp["by"], w, inp["piece"], fx)
    else:
        _apply_action(state, inp, fx)
    return fx


def _own_figure(state, inp):
    """The warrior or hero named in inp["piece"], which must belong to the army sending it."""
    p = inp.get("piece")
    side = inp["by"]
    if p not in figures(state, side):
        raise _refused("own-figure", p, SIDE_NAME[side], side, side)
    return p


def _apply_setup(state, inp, fx):
    t = inp["t"]
    side = inp["by"]
    check = CHECKS[state["setup"]["step"]]
    if t == "power":
        if check != "power":
            raise _refused("power-first")
        p = _own_figure(state, inp)
        if state["disks_left"][side] <= 0:
            raise _refused("no-disks", SIDE_NAME[side])
        state["disks_left"][side] -= 1
        state["power"][p] = _power(state, p) + 1
        cue(fx, "power", side=side, piece=p, disks=state["power"][p])
        say(fx, "A power disk goes under %s." % spoken(p))
        return
    if t == "balcony":
        if check != "balcony":
            raise _refused("balcony-after")
        p = _own_figure(state, inp)
        state["balcony"][side] = p
        say(fx, "%s mans the castle balcony." % spoken(p))
        _next_setup_step(state, fx)
        return
    if t != "confirm":
        raise _refused("setting-up", SIDE_NAME[side], _check_text(state, side, check))
    if inp.get("check") != check:
        raise _refused("confirm", check, inp.get("check"))
    _next_setup_step(state, fx)


def _next_setup_step(state, fx):
    st = state["setup"]
    st["step"] += 1
    if st["step"] < len(CHECKS):
        _setup_prompt(state, fx)
        return
    if st["side"] == "orcs":
        st["side"] = "knights"
        st["step"] = 0
        say(fx, "The Orcs are ready. Knights, set up your army.")
        _setup_prompt(state, fx)
        return
    state["phase"] = "play"
    say(fx, "Both armies are ready. Orcs always attack first.")
    _start_turn(state, "orcs", fx)


def _start_turn(state, side, fx):
    """Begin the next turn that has actions, starting with `side`'s."""
    while True:
        state["turns"] += 1
        state["turn"] = side
        state["used"] = []
        lost = state["penalty"][side]
        state["penalty"][side] = 0
        state["actions"] = ACTIONS - lost if lost < ACTIONS else 0
        if state["actions"] > 0:
            cue(fx, "turn", side=side, actions=state["actions"])
            if lost:
                say(fx, "%s, your turn, with one action: your hero fell early." % SIDE_NAME[side])
            else:
                say(fx, "%s, your turn: two actions." % SIDE_NAME[side])
            return
        say(fx, "The %s lose both actions to their hero's falls and pass." % SIDE_NAME[side])
        side = _following(state, side, fx)


def _following(state, side, fx):
    """Whose turn comes after `side`'s: extra turns first, then skip missed turns."""
    if state["extra"][side] > 0:
        state["extra"][side] -= 1
        say(fx, "The %s take their extra turn." % SIDE_NAME[side])
        return side
    nxt = other(side)
    while state["skip"][nxt] > 0:
        state["skip"][nxt] -= 1
        cue(fx, "turn.missed", side=nxt)
        say(fx, "The %s miss their turn." % SIDE_NAME[nxt])
        nxt = other(nxt)
    return nxt


def _end_turn(state, fx):
    side = state["turn"]
    for ram in state["ram_out"]:
        cue(fx, "ram.return", side=side_of(ram), piece=ram)
        say(fx, "Return the %s to its own camp." % spoken(ram))
    state["ram_out"] = []
    _start_turn(state, _following(state, side, fx), fx)


def _after_action(state, fx):
    """Once an action (and its rewards) is done: announce what is left or pass the turn."""
    if state["over"] or state["pending"] or state["shot"] is not None:
        return
    side = state["turn"]
    if state["actions"] > 0:
        cue(fx, "actions", side=side, left=state["actions"])
        say(fx, "%s, one more action." % SIDE_NAME[side])
    else:
        _end_turn(state, fx)


def _fire_problem(state, side, weapon):
    """Why `side` cannot fire `weapon` now, as a key of battleground/reasons.py (None if it can).

    A key, not words: legal() asks this of every weapon on every call."""
    if weapon in state["used"]:
        return "fired"
    if weapon.endswith("." + RAM):
        if state["rams"][side] <= 0:
            return "ram-used"
        if state["actions"] < 2:
            return "ram-actions"
    if weapon.endswith(CASTLE):
        if not _standing(state, side + ".gate"):
            return "gate-down"
        if state["balcony"][side] is None:
            return "no-balcony"
    return None


def _apply_action(state, inp, fx):
    t = inp["t"]
    side = inp["by"]
    if t == "end":
        say(fx, "The %s end their turn." % SIDE_NAME[side])
        state["actions"] = 0
        _end_turn(state, fx)
        return
    if t == "fire":
        w = inp.get("weapon")
        if w not in weapons(state, side):
            raise _refused("weapon", w, SIDE_NAME[side], ", ".join(weapons(state, side)))
        problem = _fire_problem(state, side, w)
        if problem:
            # The castle's own reasons name the army, the others the weapon.
            raise _refused(problem, ARMY[side] if problem in ("gate-down", "no-balcony") else spoken(w))
        crews = _crews(state, side, w)
        if "crew" in inp:
            _check_crew(state, side, w, inp["crew"])
            _open_shot(state, side, w, inp["crew"], fx)
        elif len(crews) == 1:
            _open_shot(state, side, w, crews[0], fx)
        elif not crews:
            raise _refused("no-crew", SIDE_NAME[side], spoken(w))
        else:
            # Distances are not sensed: the player declares who stands within 5 cm.
            state["aim"] = w
            prompt(
                fx, side, "Who stands within 5 centimetres of the %s to fire it?" % spoken(w), _choices(state)
            )
        return
    if t == "move":
        _apply_move(state, inp, fx)
        return
    raise _refused("not-action", t, SIDE_NAME[side])


def _crews(state, side, weapon):
    """The figures that may fire `weapon`: the balcony figure works the castle catapult, the others the rest."""
    b = state["balcony"][side]
    if weapon.endswith(CASTLE):
        return [b] if b is not None else []
    out = _pick(state, figures(state, side), True)
    if b in out:
        out.remove(b)
    return out


def _check_crew(state, side, w, crew):
    if w.endswith(CASTLE):
        if crew != state["balcony"][side]:
            raise _refused("castle-crew", spoken(state["balcony"][side]))
        return
    if crew not in figures(state, side):
        raise _refused("crew", crew)
    if not _standing(state, crew):
        raise _refused("crew-out", spoken(crew))
    if state["balcony"][side] == crew:
        raise _refused("crew-balcony", spoken(crew), spoken(w))


def _open_shot(state, side, w, crew, fx):
    """Spend the action(s) and open the window that collects what falls."""
    state["aim"] = None
    cost = 2 if w.endswith("." + RAM) else 1
    state["actions"] -= cost
    state["used"].append(w)
    if cost == 2:
        state["rams"][side] -= 1
        state["ram_out"].append(w)
    state["shot"] = {"weapon": w, "crew": crew, "falls": []}
    n = disks_of(w)
    cue(fx, "shot.open", side=side, weapon=w, crew=crew, disks=n)
    name = w.split(".", 1)[1].replace("-", " ")
    if cost == 2:
        say(fx, "%s charge with the battering ram." % SIDE_NAME[side])
    elif n == 1:
        say(fx, "%s fire the %s." % (SIDE_NAME[side], name))
    else:
        say(fx, "%s fire the %s: %d disks." % (SIDE_NAME[side], name, n))


def _apply_move(state, inp, fx):
    side = inp["by"]
    p = inp.get("piece")
    to = inp.get("to", "field")
    if to not in ("field", "balcony"):
        raise _refused("to", to)
    if p in figures(state, side):
        if not _standing(state, p):
            raise _refused("move-out", spoken(p))
        gate_up = _standing(state, side + ".gate")
        on_balcony = state["balcony"][side] == p
        if to == "balcony":
            if on_balcony:
                raise _refused("on-balcony", spoken(p))
            if not gate_up:
                raise _refused("no-climb", ARMY[side])
            if state["balcony"][side] is not None:
                raise _refused("balcony-taken", spoken(state["balcony"][side]))
            state["balcony"][side] = p
            say(fx, "%s climbs to the castle balcony." % spoken(p))
        elif on_balcony:
            if not gate_up:
                raise _refused("no-leave", ARMY[side])
            state["balcony"][side] = None
            say(fx, "%s comes down from the castle balcony." % spoken(p))
        else:
            far = "30" if p.endswith(".hero") else "15"
            say(fx, "%s moves up to %s centimetres." % (spoken(p), far))
    elif p in weapons(state, side):
        if p.endswith(CASTLE) or to != "field":
            raise _refused("castle-moves")
        say(fx, "The %s moves up to 15 centimetres, staying in its own camp." % spoken(p))
    else:
        raise _refused("move-what", p, SIDE_NAME[side])
    state["actions"] -= 1
    _after_action(state, fx)


# ---------------------------------------------------------------- sensed falls


def _sensed(state, inp, fx):
    p = inp.get("piece")
    if not _known(state, p):
        raise _refused("piece", p, inp["t"])
    if state["phase"] == "setup":
        return  # pieces topple while the armies are placed; nothing counts yet
    shot = state["shot"]
    if inp["t"] == "fell":
        if not _standing(state, p):
            return  # already out (or the gate already down): the tilt of a removed piece
        if shot is not None:
            if p not in shot["falls"]:
                shot["falls"].append(p)
            return
        # Only shots knock pieces over; a piece tipped by hand goes back up.
        if p not in state["restand"]:
            state["restand"].append(p)
        cue(fx, "stand", side=side_of(p), piece=p)
        say(fx, "%s fell outside a shot: stand it back up." % spoken(p))
        return
    # stood
    if shot is not None and p in shot["falls"]:
        shot["falls"].remove(p)  # bumped but not knocked over
        return
    if p in state["restand"]:
        state["restand"].remove(p)
        cue(fx, "stood", side=side_of(p), piece=p)


def _remove_from_balcony(state, f):
    s = side_of(f)
    if state["balcony"][s] == f:
        state["balcony"][s] = None


def _revive(state, f, fx, why, first=False):
    """Stand a figure back up anywhere in its camp: the ground, or the balcony while the gate stands
    and nobody else mans it (then its owner is asked where; first: ask before the other decisions)."""
    if f in state["down"]:
        state["down"].remove(f)
    _remove_from_balcony(state, f)
    if f not in state["restand"]:
        state["restand"].append(f)
    cue(fx, "figure.revived", side=side_of(f), piece=f, why=why)
    s = side_of(f)
    if _standing(state, s + ".gate") and state["balcony"][s] is None:
        state["pending"].insert(0 if first else len(state["pending"]), {"kind": "place", "by": s, "piece": f})


def _ask_places(state, fx):
    """Ask where the next revived figure stands; drop the questions the balcony no longer leaves open."""
    pending = state["pending"]
    while pending and pending[0]["kind"] == "place":
        task = pending[0]
        s = task["by"]
        if _standing(state, s + ".gate") and state["balcony"][s] is None:
            prompt(fx, s, "Where does %s stand again: on the castle balcony or the ground?" % spoken(task["piece"]),
                   _choices(state))
            return
        pending.pop(0)


def _resolve_shot(state, fx):
    shot = state["shot"]
    state["shot"] = None
    shooter = state["turn"]
    falls = shot["falls"]
    # Everything that fell may go out of play (and a balcony figure per fallen gate).
    state["down"] = _room(len(falls) + 2, state["down"])
    cue(fx, "shot.over", side=shooter, weapon=shot["weapon"], falls=len(falls))
    if not falls:
        say(fx, "Nothing fell.")
    gate_fell = []
    for s in SIDES:
        g = s + ".gate"
        if g in falls:
            _knock(state, g)
            gate_fell.append(s)
            cue(fx, "gate.down", side=s)
            say(fx, "The %s castle gate is down: its castle catapult is silenced." % ARMY[s])
            b = state["balcony"][s]
            if b is not None and b not in falls:
                falls.append(b)  # the gate slamming knocks the balcony figure over
    flags_down = {}
    for s in SIDES:
        n = 0
        for b in bricks(state, s):
            if b in falls:
                _knock(state, b)
                cue(fx, "brick.removed", side=s, piece=b)
                n += 1
        if n == 1:
            say(fx, "A %s brick is knocked down: remove it." % ARMY[s])
        elif n:
            say(fx, "%d %s bricks are knocked down: remove them." % (n, ARMY[s]))
        n = 0
        for f in flags(state, s):
            if f in falls:
                _knock(state, f)
                cue(fx, "flag.down", side=s, piece=f)
                say(fx, "%s is down: remove it." % spoken(f))
                n += 1
        flags_down[s] = n
    heroes_out = []
    for s in SIDES:
        if _judge_figures(state, s, falls, s in gate_fell, fx):
            heroes_out.append(s)
    if heroes_out:
        # Both heroes in one shot: the shooter knocked the enemy's down, so the shooter wins.
        winner = shooter if other(shooter) in heroes_out else other(shooter)
        state["over"] = True
        state["winner"] = winner
        state["pending"] = []
        cue(fx, "win", side=winner)
        say(fx, "The %s win the battle!" % SIDE_NAME[winner])
        return
    # Flags: only the enemy's flags reward the shooter.
    enemy = other(shooter)
    n = flags_down[enemy]
    captured = n > 0 and not _pick(state, flags(state, enemy), True)
    if captured:
        cue(fx, "flags.captured", side=enemy, by=shooter)
        say(
            fx,
            "All the %s flags are down! The %s stand their flags back up and miss their next turn."
            % (ARMY[enemy], SIDE_NAME[enemy]),
        )
        for f in flags(state, enemy):
            if f in state["down"]:
                state["down"].remove(f)
            if f not in state["restand"]:
                state["restand"].append(f)
        cue(fx, "flags.restand", side=enemy)
        state["skip"][enemy] += 1
    if n >= 3:
        state["pending"].append({"kind": "bonus", "by": shooter})
        say(
            fx,
            "Three %s flags in one shot! %s, choose: bring two warriors back, or take an extra turn."
            % (ARMY[enemy], SIDE_NAME[shooter]),
        )
        prompt(fx, shooter, "Three flags in one shot: two warriors back, or an extra turn?", _choices(state))
    elif captured:
        _queue_revives(state, shooter, 1, fx)
    _ask_places(state, fx)
    _after_action(state, fx)


def _judge_figures(state, s, falls, gate_fell, fx):
    """Warriors first, then the hero: the hero falls for good only once every warrior is out.

    Returns True when the side's hero is out for good (the battle is lost)."""
    for w in warriors(state, s):
        if w not in falls:
            continue
        if _power(state, w):
            _use_power(state, w)
            _revive(state, w, fx, "power")
            say(
                fx,
                "%s is knocked over but has a power disk: remove the disk and stand it up anywhere in its camp."
                % spoken(w),
            )
        else:
            _knock(state, w)
            _remove_from_balcony(state, w)
            cue(fx, "figure.out", side=s, piece=w)
            say(fx, "%s is knocked out: remove it from the battleground." % spoken(w))
    hero = s + ".hero"
    if hero not in falls:
        return False
    if _pick(state, warriors(state, s), True):
        # Too early: the hero stands again where it was (off the balcony if the gate fell).
        if gate_fell:
            _remove_from_balcony(state, hero)
        if hero not in state["restand"]:
            state["restand"].append(hero)
        state["penalty"][s] += 1
        cue(fx, "hero.early", side=s)
        say(
            fx,
            "The %s hero fell while warriors still stand: stand it back up. The %s lose an action next turn."
            % (ARMY[s], SIDE_NAME[s]),
        )
        return False
    if _power(state, hero):
        _use_power(state, hero)
        _revive(state, hero, fx, "power")
        say(
            fx,
            "The %s hero is knocked over but has a power disk: remove the disk and stand it up anywhere in its camp."
            % ARMY[s],
        )
        return False
    _knock(state, hero)
    _remove_from_balcony(state, hero)
    cue(fx, "figure.out", side=s, piece=hero)
    say(fx, "The %s hero falls, the last of its army." % ARMY[s])
    return True


def _queue_revives(state, side, n, fx):
    out = _out_warriors(state, side)
    if not out:
        say(fx, "The %s have no warrior out to bring back." % SIDE_NAME[side])
        return
    n = min(len(out), n)
    for _ in range(n):
        state["pending"].append({"kind": "revive", "by": side})
    say(
        fx,
        "%s, choose %s to bring back to life." % (SIDE_NAME[side], "a warrior" if n == 1 else "two warriors"),
    )
    prompt(fx, side, "Which warrior comes back to life?", _choices(state))


def _apply_reward(state, inp, fx):
    task = state["pending"][0]
    side = task["by"]
    if task["kind"] == "place":
        p = task["piece"]
        if inp["t"] != "place" or inp.get("piece", p) != p:
            raise _refused("place-first", spoken(p))
        to = inp.get("to")
        if to not in ("balcony", "field"):
            raise _refused("place-to", to)
        state["pending"].pop(0)
        if to == "balcony":
            state["balcony"][side] = p
            say(fx, "%s stands on the castle balcony again." % spoken(p))
        else:
            say(fx, "%s stands on the ground in its camp." % spoken(p))
        _ask_places(state, fx)
        _after_action(state, fx)
        return
    if task["kind"] == "bonus":
        if inp["t"] != "reward" or inp.get("choice") not in ("revive", "extra"):
            raise _refused("reward")
        state["pending"].pop(0)
        if inp["choice"] == "extra":
            state["extra"][side] += 1
            cue(fx, "extra.turn", side=side)
            say(fx, "The %s will take an extra turn." % SIDE_NAME[side])
        else:
            _queue_revives(state, side, 2, fx)
        _after_action(state, fx)
        return
    if inp["t"] != "revive":
        raise _refused("revive-first")
    p = inp.get("piece")
    if p not in warriors(state, side):
        raise _refused("revive-who", p, SIDE_NAME[side])
    if _standing(state, p):
        raise _refused("revive-up", spoken(p))
    state["pending"].pop(0)
    _revive(state, p, fx, "flags", True)
    say(fx, "%s comes back to life: stand it anywhere in its camp." % spoken(p))
    _ask_places(state, fx)
    _after_action(state, fx)


# ---------------------------------------------------------------- views


def view(state, viewer=None):
    """Everything on a Battleground table is in plain sight, so every viewer sees the same."""
    armies = {}
    for s in SIDES:
        figs = {}
        for f in figures(state, s):
            figs[f] = {"up": _standing(state, f), "power": _power(state, f)}
        armies[s] = {
            "figures": figs,
            "warriors_left": len(_pick(state, warriors(state, s), True)),
            "flags_up": _pick(state, flags(state, s), True),
            "bricks_up": _pick(state, bricks(state, s), True),
            "gate": "up" if _standing(state, s + ".gate") else "down",
            "balcony": state["balcony"][s],
            "weapons": list(weapons(state, s)),
            "ram_uses": state["rams"][s],
            "power_disks_to_place": state["disks_left"][s] if state["phase"] == "setup" else 0,
            "actions_lost_next_turn": state["penalty"][s],
            "turns_to_miss": state["skip"][s],
            "extra_turns": state["extra"][s],
        }
    v = {
        "phase": state["phase"],
        "armies": armies,
        "turn": state["turn"] if state["phase"] == "play" else None,
        "turn_number": state["turns"],
        "actions_left": state["actions"],
        "fired_this_turn": list(state["used"]),
        "aiming": state["aim"],
        "shot": None,
        "pending": clone(state["pending"]),
        "stand_up": list(state["restand"]),
        "down": sorted(state["down"]),  # every tilt piece out of play: its LED goes dark
    }
    if state["shot"] is not None:
        v["shot"] = {
            "weapon": state["shot"]["weapon"],
            "crew": state["shot"]["crew"],
            "falls": list(state["shot"]["falls"]),
        }
    if state["phase"] == "setup":
        v["setup"] = {"side": state["setup"]["side"], "check": CHECKS[state["setup"]["step"]]}
    return v
