"""PlingPong: bounce balls into the other players' cups, avoid the Black Cup (see docs/rules/plingpong.md).

The table is four trays of 6 spaces around the Black Cup, one tray per colour,
clockwise from the top left: green, red, yellow, blue. A space is named
"<tray>.<n>" with n = 1..6 counted from the lowest space (1, next to the Black
Cup) to the highest (6, the owner's corner); the Black Cup is "black". Each
space holds a cup (of its tray's colour, or any colour after a Random
Re-Rack), a stack of cups (High Stack) or nothing.

Players are "p1".."pN". A side owns cups and wins: a player, except in the
8-player game where the sides are the colour teams "green", "red", "yellow",
"blue". Seat order (who is "on the left") is the clockwise order of the trays.

Inputs:
    {"t": "ball", "cup": "red.3"}        a beam at a cup's mouth saw a ball (sensed; "black" too)
    {"t": "miss", "by": "p2"}            the shot missed every cup (decision: no sensor sees a miss)
    {"t": "void", "by": "p1"}            the last shot did not bounce in its zone: it does not count
    {"t": "score", "by": "p1"}           all balls of the round (or shoot-off) are in: count the cups
    {"t": "middle", "by": "p3"}          3 players: p3 lost rock, paper, scissors and takes the middle colour
"""

from shared_rules.engine import Illegal, cue, prompt, say, seed_rng, shuffle

NAME = "plingpong"
TITLE = "PlingPong"
SENSED = ("ball",)
MAX_STEPS = 2000  # the longest of 7,000 random games took 373 inputs

TRAYS = ("green", "red", "yellow", "blue")  # clockwise from the top left
SPACES = 6
BLACK = "black"
CUPS_PER_COLOUR = 6

OPTIONS = {
    "players": {
        "default": 4, "choices": [2, 3, 4, 8],
        "help": "2 (two colours each, 4 balls, 2 a turn), 3 (one colour removed), 4, or 8 (four teams of 2, one ball each)",
    },
    "variant": {
        "default": "standard", "choices": ["standard", "speed", "high-stack"],
        "help": "standard scoring; speed (race to clear your own colour, cups go as each shot lands); "
        "high-stack (removed cups are stacked on your others, a stack goes as one)",
    },
    "rerack": {
        "default": False, "choices": [False, True],
        "help": "Random Re-Rack: the cups of all colours are racked in a random pattern the table lights",
    },
    "removed": {
        "default": "blue", "choices": list(TRAYS),
        "help": "3 players: the colour taken off the table (the colour opposite it is the middle one)",
    },
}

# balls a round: (turns, balls per turn) for each player count
TURNS = {2: (2, 2), 3: (2, 1), 4: (2, 1), 8: (1, 1)}


# ---------------------------------------------------------------- names


def _pos(tray, i):
    return "%s.%d" % (tray, i + 1)


def _parse_cup(state, name):
    """(tray, index) of a space name, or (BLACK, -1); Illegal naming the spaces if unknown."""
    if name == BLACK:
        return BLACK, -1
    if isinstance(name, str) and "." in name:
        tray, _, n = name.partition(".")
        if tray in state["trays"] and n.isdigit() and 1 <= int(n) <= SPACES:
            return tray, int(n) - 1
    raise Illegal("there is no cup %r on this table: cups are named black, or TRAY.1 to TRAY.6 with TRAY one of %s"
                  % (name, ", ".join(state["trays"])))


def pname(p):
    return "Player " + p[1:]


def sname(side):
    return pname(side) if side[0] == "p" else "Team " + side[0].upper() + side[1:]


def _and(words):
    """'a', 'a and b', 'a, b and c': a list as spoken."""
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _colours_text(cols):
    return _and(cols)


def who(state, p):
    """A player as spoken: 'Player 2 (red)'."""
    side = state["side"].get(p)
    if side is None:
        return pname(p)
    if side[0] != "p":
        return "%s (%s team)" % (pname(p), side)
    return "%s (%s)" % (pname(p), _colours_text(state["colours"][side]))


def side_text(state, side):
    if side[0] != "p":
        return sname(side)
    return "%s (%s)" % (pname(side), _colours_text(state["colours"][side]))


def space_text(tray, i):
    return "%s space %d" % (tray, i + 1)


def cup_text(state, tray, i):
    colour = state["cups"][tray][i]
    if colour == tray or colour is None:
        return "%s cup %d" % (tray, i + 1)
    return "the %s cup on %s space %d" % (colour, tray, i + 1)


# ---------------------------------------------------------------- set-up


def table(options=None):
    """Every cup a beam watches, in LED order: the trays in play clockwise, spaces 1..6 each, then the Black Cup.

    For the bridge's sensor map and LED strip; [{"cup": "green.1", "tray": "green", "space": 1}, ...].
    """
    opts = options or {}
    trays = [t for t in TRAYS if opts.get("players", 4) != 3 or t != opts.get("removed", "blue")]
    out = [{"cup": _pos(t, i), "tray": t, "space": i + 1} for t in trays for i in range(SPACES)]
    out.append({"cup": BLACK, "tray": None, "space": None})
    return out


def setup(options, seed):
    n = options["players"]
    trays = list(TRAYS)
    if n == 3:
        trays.remove(options["removed"])
    state = {
        "game": NAME, "options": options, "rng": seed_rng(seed), "over": False, "winner": None,
        "trays": trays, "players": ["p%d" % (i + 1) for i in range(n)],
        "seats": [],  # players in clockwise seat order (after seating)
        "side": {}, "colours": {},  # player -> side; side -> its colours (and trays)
        "cups": {}, "height": {},
        "phase": "shootoff", "order": [], "shot": 0, "shots": [], "contenders": [],
        "starter": None, "round": 0,
    }
    pool = []
    for t in trays:
        state["cups"][t] = [t] * SPACES
        state["height"][t] = [1] * SPACES
        pool.extend([t] * SPACES)
    if options["rerack"]:
        shuffle(state, pool)
        for k, t in enumerate(trays):
            state["cups"][t] = pool[k * SPACES:(k + 1) * SPACES]
    if n == 3:
        state["phase"] = "middle"
        return state
    if n == 2:
        _own(state, "p1", "p1", ["green", "red"])
        _own(state, "p2", "p2", ["yellow", "blue"])
        state["seats"] = ["p1", "p2"]
    elif n == 4:
        for i, t in enumerate(TRAYS):
            _own(state, "p%d" % (i + 1), "p%d" % (i + 1), [t])
        state["seats"] = list(state["players"])
    else:  # 8: two players a colour, seated so the teams alternate round the table
        for i in range(8):
            t = TRAYS[i % 4]
            _own(state, "p%d" % (i + 1), t, [t])
        state["seats"] = list(state["players"])
    _start_shootoff(state, list(state["seats"]), None)
    return state


def _own(state, player, side, colours):
    state["side"][player] = side
    state["colours"][side] = colours


def _start_shootoff(state, contenders, fx):
    state["phase"] = "shootoff"
    state["contenders"] = contenders
    state["order"] = list(contenders)
    state["shot"] = 0
    state["shots"] = []
    if fx is not None:
        cue(fx, "shootoff", players=list(contenders))
        _cue_shot(state, fx)


# ---------------------------------------------------------------- who acts, what is legal


def awaiting(state):
    if state["over"]:
        return []
    ph = state["phase"]
    if ph == "middle":
        return list(state["players"])
    if ph == "score":
        return [state["order"][0]]
    return [state["order"][state["shot"]]]


def _void_by(state):
    """The player whose last shot may still be voided, or None."""
    if state["phase"] == "middle" or not state["shots"]:
        return None
    last = state["shots"][-1]
    if last["cup"] is None or last["void"]:
        return None
    return last["by"]


def legal(state):
    if state["over"]:
        return []
    ph = state["phase"]
    if ph == "middle":
        return [{"t": "middle", "by": p} for p in state["players"]]
    out = []
    if ph == "score":
        out.append({"t": "score", "by": state["order"][0]})
    else:
        shooter = state["order"][state["shot"]]
        for t in state["trays"]:
            cups = state["cups"][t]
            for i in range(SPACES):
                if cups[i] is not None:
                    out.append({"t": "ball", "cup": _pos(t, i)})
        out.append({"t": "ball", "cup": BLACK})
        out.append({"t": "miss", "by": shooter})
    v = _void_by(state)
    if v is not None:
        out.append({"t": "void", "by": v})
    return out


# ---------------------------------------------------------------- apply


def apply(state, inp):
    t = inp.get("t")
    fx = []
    if state["over"]:
        raise Illegal("the game is over")
    if t == "ball":
        _on_ball(state, inp.get("cup"), fx)
        return fx
    if t not in ("miss", "void", "score", "middle"):
        raise Illegal("unknown input type %r for PlingPong (ball, miss, void, score, middle)" % (t,))
    p = inp.get("by")
    if p not in state["players"]:
        raise Illegal("%s needs 'by', one of the players %s; got %r" % (t, ", ".join(state["players"]), p))
    if t == "void":
        _on_void(state, p, fx)
        return fx
    ph = state["phase"]
    if t == "middle":
        if ph != "middle":
            raise Illegal("the colours are already chosen; rock, paper, scissors is only played before the shoot-off")
        _on_middle(state, p, fx)
        return fx
    if ph == "middle":
        raise Illegal("first play rock, paper, scissors: the loser takes the middle colour, %s" % _middle(state))
    want = awaiting(state)[0]
    if t == "score":
        if ph != "score":
            raise Illegal("the %s is not over: waiting for %s to shoot" % (_pass_name(state), who(state, want)))
        if p != want:
            raise Illegal("%s counts the cups, not %s" % (who(state, want), who(state, p)))
        if ph == "score" and state["contenders"]:
            _judge_shootoff(state, fx)
        else:
            _score_round(state, fx)
        return fx
    # miss
    if ph == "score":
        raise Illegal("every ball of the %s is in: waiting for %s to score it" % (_pass_name(state), who(state, want)))
    if p != want:
        raise Illegal("it is %s's shot, not %s's" % (who(state, want), who(state, p)))
    state["shots"].append({"by": p, "cup": None, "void": False})
    say(fx, "%s misses." % pname(p))
    cue(fx, "miss", player=p)
    _next_shot(state, fx)
    return fx


def _pass_name(state):
    return "shoot-off" if state["contenders"] else "round"


def _middle(state):
    return TRAYS[(TRAYS.index(state["options"]["removed"]) + 2) % 4]


def _on_middle(state, loser, fx):
    removed = TRAYS.index(state["options"]["removed"])
    ends = [TRAYS[(removed + 1) % 4], TRAYS[(removed + 3) % 4]]
    middle = _middle(state)
    others = [p for p in state["players"] if p != loser]
    _own(state, others[0], others[0], [ends[0]])
    _own(state, loser, loser, [middle])
    _own(state, others[1], others[1], [ends[1]])
    state["seats"] = [others[0], loser, others[1]]
    say(fx, "%s lost rock, paper, scissors and takes the middle colour, %s. %s plays %s, %s plays %s."
        % (pname(loser), middle, pname(others[0]), ends[0], pname(others[1]), ends[1]))
    cue(fx, "middle", player=loser, colour=middle)
    _start_shootoff(state, list(state["seats"]), fx)


def _cue_shot(state, fx):
    p = state["order"][state["shot"]]
    mine = [k for k in range(state["shot"] + 1) if state["order"][k] == p]
    total = len([q for q in state["order"] if q == p])
    side = state["side"][p]
    cue(fx, "shot", player=p, side=side, colours=list(state["colours"][side]), ball=len(mine), of=total)


def _on_ball(state, name, fx):
    ph = state["phase"]
    if ph == "middle":
        raise Illegal("a ball in %s before rock, paper, scissors: nobody is shooting yet" % (name,))
    if ph == "score":
        raise Illegal("a ball in %s after the last shot of the %s: take it out, then score"
                      % (name, _pass_name(state)))
    tray, i = _parse_cup(state, name)
    if tray != BLACK:
        name = _pos(tray, i)  # "red.03" and "red.3" are one cup
    if tray != BLACK and state["cups"][tray][i] is None:
        raise Illegal("there is no cup on %s (it was removed), so no ball can land there" % name)
    p = state["order"][state["shot"]]
    shot = {"by": p, "cup": name, "void": False}
    count = 1 + len([s for s in state["shots"] if s["cup"] == name and not s["void"]])
    what = "the Black Cup" if tray == BLACK else cup_text(state, tray, i)
    colour = BLACK if tray == BLACK else state["cups"][tray][i]
    cue(fx, "ball", cup=name, colour=colour, player=p, count=count)
    if state["contenders"]:
        made = colour in state["colours"][state["side"][p]]
        shot["own"] = made
        say(fx, "%s %s." % (pname(p), "makes it into their own colour" if made else "lands in " + what))
    elif state["options"]["variant"] == "speed" and tray != BLACK:
        # Speed Round: the cup comes off as the shot lands.
        shot["colour"] = colour
        shot["height"] = state["height"][tray][i]
        state["cups"][tray][i] = None
        state["height"][tray][i] = 0
        say(fx, "%s hits %s. It comes off." % (pname(p), what))
        cue(fx, "cup.removed", cup=name, colour=colour, height=shot["height"], why="speed")
        state["shots"] = [shot]
        owner = _owner(state, colour)
        if not _has_cups(state, owner):
            _win(state, owner, "%s has cleared every cup of their colour first." % side_text(state, owner), fx)
            return
        _next_shot(state, fx)
        return
    elif state["options"]["variant"] == "speed":
        say(fx, "%s lands in the Black Cup, which does nothing in a speed round." % pname(p))
    else:
        say(fx, "%s lands in %s: %d ball%s there this round." % (pname(p), what, count, "" if count == 1 else "s"))
    state["shots"].append(shot)
    _next_shot(state, fx)


def _on_void(state, p, fx):
    v = _void_by(state)
    if v is None:
        raise Illegal("there is no shot to void: only the last shot, if it landed in a cup, can be voided")
    shot = state["shots"][-1]
    shot["void"] = True
    name = shot["cup"]
    tray, i = _parse_cup(state, name)
    say(fx, "%s's shot into %s did not bounce in their zone and does not count. Take the ball out."
        % (pname(shot["by"]), "the Black Cup" if tray == BLACK else cup_text(state, tray, i)))
    cue(fx, "void", cup=name, player=shot["by"])
    if "colour" in shot:  # speed round: the cup goes back
        state["cups"][tray][i] = shot["colour"]
        state["height"][tray][i] = shot["height"]
        cue(fx, "cup.add", cup=name, colour=shot["colour"], side=_owner(state, shot["colour"]))


def _next_shot(state, fx):
    state["shot"] += 1
    if state["shot"] < len(state["order"]):
        _cue_shot(state, fx)
        return
    if state["options"]["variant"] == "speed" and not state["contenders"]:
        _next_round(state, fx)
        return
    state["phase"] = "score"
    first = state["order"][0]
    prompt(fx, first, "%s: every ball of the %s is in; say score to count the cups (or void the last shot first)"
           % (who(state, first), _pass_name(state)), [{"t": "score", "by": first}])


# ---------------------------------------------------------------- the shoot-off


def _judge_shootoff(state, fx):
    made = [s["by"] for s in state["shots"] if s.get("own") and not s["void"]]
    if len(made) == 1:
        p = made[0]
        state["contenders"] = []
        state["starter"] = p
        say(fx, "%s wins the shoot-off and starts the first round." % who(state, p))
        cue(fx, "starter", player=p)
        _start_round(state, p, fx)
        return
    if made:
        say(fx, "%s made it: shoot again." % _and([pname(p) for p in made]))
        _start_shootoff(state, made, fx)
    else:
        say(fx, "Nobody made it: shoot again.")
        _start_shootoff(state, list(state["contenders"]), fx)


# ---------------------------------------------------------------- rounds


def _has_cups(state, side):
    cols = state["colours"][side]
    for t in state["trays"]:
        for c in state["cups"][t]:
            if c is not None and c in cols:
                return True
    return False


def _owner(state, colour):
    for side in sorted(state["colours"]):
        if colour in state["colours"][side]:
            return side
    return None


def _sides(state):
    return sorted(state["colours"])


def _start_round(state, starter, fx):
    state["phase"] = "round"
    state["round"] += 1
    state["starter"] = starter
    seats = state["seats"]
    k = seats.index(starter)
    ring = [seats[(k + j) % len(seats)] for j in range(len(seats))]
    ring = [p for p in ring if _has_cups(state, state["side"][p])]
    turns, per_turn = TURNS[state["options"]["players"]]
    order = []
    for _ in range(turns):
        for p in ring:
            order.extend([p] * per_turn)
    state["order"] = order
    state["shot"] = 0
    # A speed round's last shot may still be voided after the next round begins.
    state["shots"] = state["shots"][-1:] if state["options"]["variant"] == "speed" else []
    say(fx, "Round %d. %s starts; %d balls." % (state["round"], who(state, starter), len(order)))
    cue(fx, "round", round=state["round"], starter=starter)
    _cue_rack(state, fx)
    _cue_shot(state, fx)


def _cue_rack(state, fx):
    cups = []
    for t in state["trays"]:
        for i in range(SPACES):
            c = state["cups"][t][i]
            if c is not None:
                cups.append([_pos(t, i), c, state["height"][t][i]])
    cue(fx, "rack", cups=cups)


def _next_round(state, fx):
    """The player on the left of the last starter begins, or the next one on from there who still has cups."""
    seats = state["seats"]
    k = seats.index(state["starter"])
    for j in range(1, len(seats) + 1):
        p = seats[(k + j) % len(seats)]
        if _has_cups(state, state["side"][p]):
            _start_round(state, p, fx)
            return


def _counts(state):
    counts = {}
    for s in state["shots"]:
        if s["cup"] is not None and not s["void"]:
            counts[s["cup"]] = counts.get(s["cup"], 0) + 1
    return counts


def _score_round(state, fx):
    counts = _counts(state)
    before = [s for s in _sides(state) if _has_cups(state, s)]
    stack = state["options"]["variant"] == "high-stack"
    removed = []  # (tray, index, colour) of single cups to restack (High Stack)
    for t in state["trays"]:
        for i in range(SPACES):
            n = counts.get(_pos(t, i), 0)
            if n % 2 == 1:
                colour, h = state["cups"][t][i], state["height"][t][i]
                what = cup_text(state, t, i)
                state["cups"][t][i] = None
                state["height"][t][i] = 0
                say(fx, "%s has %d ball%s: %s off." % (
                    what[0].upper() + what[1:], n, "" if n == 1 else "s",
                    "the whole stack of %d comes" % h if h > 1 else "it comes"))
                cue(fx, "cup.removed", cup=_pos(t, i), colour=colour, height=h, why="odd")
                if stack and h == 1:
                    removed.append((t, i, colour))
    for t, i, colour in removed:
        _restack(state, t, i, colour, fx)
    _black(state, counts.get(BLACK, 0), fx)
    after = [s for s in _sides(state) if _has_cups(state, s)]
    for s in before:
        if s not in after:
            say(fx, "%s has no cups left: they do not shoot, but stay in the game." % side_text(state, s))
            cue(fx, "out", side=s)
    for s in after:
        if s not in before:
            say(fx, "%s is back in the game." % side_text(state, s))
            cue(fx, "back", side=s)
    if len(after) == 1:
        _win(state, after[0], "%s is the last with cups on the board." % side_text(state, after[0]), fx)
        return
    if not after:
        state["over"] = True
        state["phase"] = "over"
        say(fx, "The last cups all came off at once: nobody is left with cups. The game is a draw.")
        cue(fx, "draw")
        return
    _next_round(state, fx)


def _restack(state, tray, i, colour, fx):
    """High Stack: a removed cup goes onto the owner's lowest stack still on the board."""
    side = _owner(state, colour)
    best = None
    for t, j in _side_spaces(state, side):
        h = state["height"][t][j]
        if best is None or h < best[0]:
            best = (h, t, j)
    if best is None:
        return
    _, t, j = best
    state["height"][t][j] += 1
    say(fx, "Stack it on %s: %d high." % (cup_text(state, t, j), state["height"][t][j]))
    cue(fx, "cup.stacked", cup=_pos(tray, i), onto=_pos(t, j), height=state["height"][t][j])


def _side_spaces(state, side):
    """The spaces holding a side's cups, lowest first (space number, then tray order)."""
    cols = state["colours"][side]
    out = []
    for i in range(SPACES):
        for t in state["trays"]:
            c = state["cups"][t][i]
            if c is not None and c in cols:
                out.append((t, i))
    return out


def _black(state, n, fx):
    if n == 0:
        return
    if n % 2 == 0:
        say(fx, "The Black Cup has %d balls, an even number: its effect is cancelled." % n)
        cue(fx, "black", balls=n, result="even", losers=[])
        return
    losers = []
    for s in state["shots"]:
        if s["cup"] == BLACK and not s["void"]:
            side = state["side"][s["by"]]
            if side not in losers:
                losers.append(side)
    losers.sort()
    say(fx, "The Black Cup has %d ball%s, an odd number! %s made it and lose%s a lowest cup; everyone else adds a cup."
        % (n, "" if n == 1 else "s", _and([sname(s) for s in losers]), "s" if len(losers) == 1 else ""))
    cue(fx, "black", balls=n, result="odd", losers=losers)
    for side in losers:
        spaces = _side_spaces(state, side)
        if spaces:  # a side with no cups has none to lose
            t, i = spaces[0]
            colour = state["cups"][t][i]
            state["height"][t][i] -= 1
            if state["height"][t][i] == 0:
                state["cups"][t][i] = None
            say(fx, "%s loses a cup from %s." % (sname(side), space_text(t, i)))
            cue(fx, "cup.removed", cup=_pos(t, i), colour=colour, height=1, why="black")
    for side in _sides(state):
        if side not in losers:
            _add_cup(state, side, fx)


def _on_board(state, colour):
    n = 0
    for t in state["trays"]:
        for i in range(SPACES):
            if state["cups"][t][i] == colour:
                n += state["height"][t][i]
    return n


def _add_cup(state, side, fx):
    """Add one cup of the side's colour on the lowest empty space of its own tray(s)."""
    cols = state["colours"][side]
    for i in range(SPACES):
        for t in state["trays"]:
            if t in cols and state["cups"][t][i] is None and _on_board(state, t) < CUPS_PER_COLOUR:
                state["cups"][t][i] = t
                state["height"][t][i] = 1
                say(fx, "%s adds a cup on %s." % (sname(side), space_text(t, i)))
                cue(fx, "cup.add", cup=_pos(t, i), colour=t, side=side)
                return
    say(fx, "%s has no room for another cup." % sname(side))


def _win(state, side, why, fx):
    state["over"] = True
    state["winner"] = side
    state["phase"] = "over"
    say(fx, "%s %s wins!" % (why, sname(side)))
    cue(fx, "win", side=side)


# ---------------------------------------------------------------- views


def view(state, viewer=None):
    """Everything on a PlingPong table is in plain sight: every viewer gets the same view."""
    counts = _counts(state) if not state["contenders"] else {}
    trays = {}
    for t in state["trays"]:
        row = []
        for i in range(SPACES):
            row.append({"cup": _pos(t, i), "colour": state["cups"][t][i], "height": state["height"][t][i],
                        "balls": counts.get(_pos(t, i), 0)})
        trays[t] = row
    sides = {}
    for s in _sides(state):
        sides[s] = {"colours": list(state["colours"][s]), "cups": len(_side_spaces(state, s)),
                    "players": [p for p in state["players"] if state["side"][p] == s]}
    shooter = None
    if state["phase"] in ("shootoff", "round"):
        shooter = state["order"][state["shot"]]
    return {
        "phase": state["phase"], "round": state["round"], "starter": state["starter"],
        "seats": list(state["seats"]), "sides": sides, "trays": trays, "black": counts.get(BLACK, 0),
        "shooter": shooter, "order": list(state["order"]), "shot": state["shot"],
        "shootoff": list(state["contenders"]),
        "shots": [{"by": s["by"], "cup": s["cup"], "void": s["void"]} for s in state["shots"]],
    }
