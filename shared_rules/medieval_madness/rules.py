"""Medieval Madness: a roll-and-move economy game; the bridge is the banker.

Rules follow the rulebook; where it is silent the choice is written in
docs/rules/medieval-madness.md (which also lists every input and cue).

Runs under CPython and MicroPython: plain data only, no dict-order dependence.
The board is a data file (shared_rules/medieval_madness/data/medieval_madness_board.json), loaded
once per board and cached by shared_rules/medieval_madness/board.py, never copied into the game state.
"""

from shared_rules.engine import Illegal, cue, prompt, rand_below, say, seed_rng
from shared_rules.medieval_madness.board import load_board
from shared_rules.medieval_madness.castle import (
    COTTAGE_PRICE,
    COTTAGES,
    CROWN_GOLD,
    DUNGEON_EXITS,
    HIRE_PRICE,
    JOUST_STAKE,
    KING,
    PASS_PRICE,
    PLOT_FINE,
    PRINCE,
    REPAIRS_PER_COTTAGE,
    START_GOLD,
    START_TREASURY,
    TAX,
    WAGES,
    _board,
    _cross,
    _gain,
    _move_to,
    _pay,
    _pl,
    _pos_name,
    _space,
    _take_treasury,
    _titles,
    _to_dungeon,
    _walk,
    _wall_of,
    _who,
    title_name,
)

NAME = "medieval-madness"
TITLE = "Medieval Madness"
OPTIONS = {
    "players": {"default": 4, "choices": [2, 3, 4], "help": "number of players (2 to 4); player 1 starts"},
    "girls": {
        "default": "",
        "choices": None,
        "help": "player numbers who take girls' titles (Maid, Lady, Duchess, Princess, Queen), e.g. '24'",
    },
    "board": {
        "default": "standard",
        "choices": None,
        "help": "'standard' or the path of a board file in the format of the standard board",
    },
}
SENSED = ("pawn",)
# Random playouts stop here. Random players are poor economists: in 900 measured
# games the longest took 8505 inputs (three players must beat both rivals to win).
MAX_STEPS = 10000


# ---------------------------------------------------------------- set-up


def setup(options, seed):
    n = options["players"]
    girls = options["girls"]
    if not isinstance(girls, str):
        raise Illegal("option girls=%r must be text listing player numbers, e.g. '24'" % (girls,))
    for c in girls:
        if c not in "1234"[:n]:
            raise Illegal("option girls=%r: %r is not a player number (1 to %d)" % (girls, c, n))
    load_board(options["board"])  # refuse a bad board before the game starts
    players = []
    for i in range(n):
        pid = "p%d" % (i + 1)
        players.append(
            {
                "id": pid,
                "gold": START_GOLD,
                "title": 0,
                "girl": str(i + 1) in girls,
                "at": -1,  # -1: the castle entrance, else a space number
                "dungeon": False,
                "cottages": 0,
                "champion": False,
                "pass": False,
                "skip": 0,
            }
        )
    state = {
        "game": NAME,
        "options": options,
        "rng": 0,
        "over": False,
        "winner": None,
        "players": players,
        "turn": "p1",
        "treasury": START_TREASURY,
        "bank_paid": START_GOLD * n,
        "cottages_left": COTTAGES,
        "ask": {"who": "p1", "what": "roll"},
        "again": False,
        "contest": None,
        "dice": None,
        "turns": 1,
    }
    state["rng"] = seed_rng(seed)
    return state


def awaiting(state):
    if state["over"] or state["ask"] is None:
        return []
    return [state["ask"]["who"]]


# ---------------------------------------------------------------- legal inputs


def _yes_no(t, who):
    return [{"t": t, "by": who, "yes": False}, {"t": t, "by": who, "yes": True}]


def _others(state, pid):
    return [p["id"] for p in state["players"] if p["id"] != pid]


def legal(state):
    if state["over"]:
        return []
    ask = state["ask"]
    who = ask["who"]
    what = ask["what"]
    if what == "roll":
        out = [{"t": "roll", "by": who}]
        p = _pl(state, who)
        if p["dungeon"] and p["pass"]:
            out.append({"t": "use-pass", "by": who, "yes": True})
        return out
    if what == "die":
        return [{"t": "roll", "by": who}]
    if what == "route":
        return [{"t": "route", "by": who, "wall": "inner"}, {"t": "route", "by": who, "wall": "outer"}]
    if what == "challenge":
        return [{"t": "challenge", "by": who, "player": q} for q in _others(state, who)]
    if what == "tournament":
        out = [{"t": "tournament", "by": who, "player": None}]
        return out + [{"t": "tournament", "by": who, "player": q} for q in _others(state, who)]
    if what in ("use-pass", "buy-pass", "hire", "sell-cottage", "pay-fine", "trial", "champion"):
        return _yes_no(what, who)
    raise Illegal("unknown question %r" % what)  # not reachable with a well-formed state


def _moved(state, p, fx, how):
    """Finish a move: announce where the pawn stopped and follow the space."""
    if how == "asked":
        _ask_prompt(state, fx)
        return
    if how == "bankrupt":
        return
    board = _board(state)
    say(fx, "%s moves to %s." % (_who(p["id"]), _pos_name(board, p)))
    cue(fx, "move", player=p["id"], space=p["at"])
    _land(state, p, fx)


# ---------------------------------------------------------------- spaces


def _land(state, p, fx):
    board = _board(state)
    sp = _space(board, p["at"])
    kind = sp["kind"]
    me = _who(p["id"])
    if kind == "collect":
        _gain(state, p, sp["amount"], fx, "")
    elif kind == "pay":
        _pay(state, p, sp["amount"], fx, "")
    elif kind == "royal-stipend":
        _gain(state, p, sp["amount"], fx, " from the Royal Stipend")
    elif kind == "lose-turn":
        p["skip"] += 1
        say(fx, "%s will lose the next turn." % me)
    elif kind == "move-ahead":
        say(fx, "%s moves ahead %d spaces." % (me, sp["steps"]))
        _moved(state, p, fx, _walk(state, p, sp["steps"], fx, False))
    elif kind == "dungeon":
        p["dungeon"] = True
        say(fx, "%s is in the dungeon." % me)
        cue(fx, "dungeon", player=p["id"], space=p["at"])
    elif kind == "inherit-cottage":
        if state["cottages_left"] > 0:
            state["cottages_left"] -= 1
            p["cottages"] += 1
            say(fx, "%s inherits a cottage." % me)
            cue(fx, "cottage", player=p["id"], cottages=p["cottages"])
        else:
            say(fx, "No cottages are left to inherit.")
        state["again"] = True
    elif kind == "joust":
        state["contest"] = {"kind": "joust", "by": p["id"], "space": p["at"], "rivals": [], "wins": 0}
        _ask(state, p["id"], "challenge", fx)
    elif kind == "kings-tournament":
        state["contest"] = {"kind": "tournament", "by": p["id"], "space": p["at"], "rivals": [], "wins": 0}
        _ask(state, p["id"], "tournament", fx)
    elif kind == "cottage-repairs":
        if p["cottages"]:
            _pay(state, p, REPAIRS_PER_COTTAGE * p["cottages"], fx, " for repairs to %d cottages" % p["cottages"])
        else:
            say(fx, "%s owns no cottage to repair." % me)
    elif kind == "hire-champion":
        if p["champion"]:
            _pay(state, p, WAGES[p["title"]], fx, " in wages to the champion")
        elif HIRE_PRICE[p["title"]] < p["gold"]:
            _ask(state, p["id"], "hire", fx)
        else:
            say(fx, "%s cannot afford a champion." % me)
    elif kind == "buy-dungeon-pass":
        if p["pass"]:
            say(fx, "%s already holds a dungeon pass." % me)
        elif PASS_PRICE[p["title"]] < p["gold"]:
            _ask(state, p["id"], "buy-pass", fx)
        else:
            say(fx, "%s cannot afford a dungeon pass." % me)
    elif kind == "sell-cottage":
        if p["cottages"]:
            _ask(state, p["id"], "sell-cottage", fx)
        else:
            say(fx, "%s has no cottage to sell." % me)
    elif kind == "kings-favor":
        if p["pass"]:
            say(fx, "%s already holds a dungeon pass." % me)
        else:
            p["pass"] = True
            say(fx, "%s wins the King's favor and a free dungeon pass." % me)
            cue(fx, "pass", player=p["id"])
    elif kind == "collect-taxes":
        _taxes(state, p, fx)
    elif kind == "caught-plotting":
        if p["gold"] > PLOT_FINE:
            _ask(state, p["id"], "pay-fine", fx)
        else:
            say(fx, "%s is caught plotting and goes to the dungeon." % me)
            _to_dungeon(state, p, fx)
    elif kind == "trial-by-combat":
        if p["title"] == PRINCE and p["gold"] >= CROWN_GOLD:
            _ask(state, p["id"], "trial", fx)
        else:
            say(fx, "%s takes another turn." % me)
            state["again"] = True
    # drawbridge: standing on it does nothing; the fee is paid when crossing.


def _taxes(state, p, fx):
    got = False
    for q in state["players"]:
        if q["id"] != p["id"] and 0 < q["title"] < p["title"] and TAX[q["title"]]:
            got = True
            _pay(state, q, TAX[q["title"]], fx, " in taxes", p["id"])
    if not got:
        say(fx, "%s has nobody of lower title to tax." % _who(p["id"]))


# ---------------------------------------------------------------- questions

ASKS = {
    "roll": "roll the dice",
    "die": "roll one die",
    "route": "stay on this wall or cross the drawbridge",
    "challenge": "choose a player to joust",
    "tournament": "invite a player to the King's Tournament, or decline",
    "use-pass": "use your dungeon pass to leave, or stay",
    "buy-pass": "buy a dungeon pass",
    "hire": "hire a champion",
    "sell-cottage": "sell a cottage for 1500 gold nobles",
    "pay-fine": "pay a 1000 gold noble fine, or go to the dungeon",
    "trial": "challenge everyone to a Trial by Combat for the crown",
    "champion": "play your champion card",
}


def _ask(state, who, what, fx):
    state["ask"] = {"who": who, "what": what}
    _ask_prompt(state, fx)


def _ask_prompt(state, fx):
    ask = state["ask"]
    prompt(fx, ask["who"], "%s, %s." % (_who(ask["who"]), ASKS[ask["what"]]), legal(state))


def _next_turn(state, fx):
    """Pass the dice on (or give the same player another turn)."""
    state["contest"] = None
    pid = state["turn"]
    if state["again"] and not _pl(state, pid)["dungeon"]:
        state["again"] = False
        say(fx, "%s takes another turn." % _who(pid))
    else:
        state["again"] = False
        n = len(state["players"])
        i = int(pid[1:]) - 1
        while True:
            i = (i + 1) % n
            q = state["players"][i]
            if q["skip"] > 0:
                q["skip"] -= 1
                say(fx, "%s loses this turn." % _who(q["id"]))
                continue
            break
        pid = q["id"]
        state["turns"] += 1
    state["turn"] = pid
    state["ask"] = {"who": pid, "what": "roll"}
    cue(fx, "turn", player=pid)
    p = _pl(state, pid)
    if p["dungeon"]:
        say(fx, "%s, you are in the dungeon: roll 3, 5, 7 or 9 to get out." % _who(pid))
    _ask_prompt(state, fx)


# ---------------------------------------------------------------- contests


def _contest_next(state, fx):
    """Ask the next question of the joust, tournament or trial, or settle a round."""
    c = state["contest"]
    by = _pl(state, c["by"])
    rival = _pl(state, c["rivals"][c["round"]])
    for p in (by, rival):
        if p["id"] not in c["champ"]:
            if p["champion"]:
                _ask(state, p["id"], "champion", fx)
                return
            c["champ"][p["id"]] = False
            _send(state, c, p, fx)
    for p in (by, rival):
        if p["id"] not in c["die"]:
            _ask(state, p["id"], "die", fx)
            return
    _settle(state, c, by, rival, fx)


def _send(state, c, p, fx):
    """The invited player's pawn goes to the contest space unless the champion goes instead."""
    if c["kind"] == "trial" or p["id"] == c["by"] or c["champ"][p["id"]]:
        return
    if p["dungeon"]:
        say(fx, "%s competes from the dungeon." % _who(p["id"]))
        return
    _move_to(state, p, c["space"], fx)


def _score(c, p):
    return c["die"][p["id"]] + (1 if c["champ"][p["id"]] else 0)


def _settle(state, c, by, rival, fx):
    a = _score(c, by)
    b = _score(c, rival)
    if a > b or (a == b and c["kind"] == "joust"):
        win, lose = by, rival
    elif b > a:
        win, lose = rival, by
    else:
        win = lose = None
    if win is None:
        say(fx, "A tie, %d against %d: nobody wins." % (a, b))
        cue(fx, "contest.tie", kind=c["kind"])
    else:
        score = "%d against %d" % ((a, b) if win is by else (b, a))
        if c["kind"] == "trial":
            say(fx, "%s beats %s, %s." % (_who(win["id"]), _who(lose["id"]), score))
        else:
            tie = " on a tie" if a == b else ""
            say(fx, "%s wins the %s%s, %s." % (_who(win["id"]), c["kind"], tie, score))
        cue(fx, "contest.win", kind=c["kind"], player=win["id"], loser=lose["id"])
        if c["champ"][lose["id"]]:
            lose["champion"] = False
            say(fx, "%s loses the champion." % _who(lose["id"]))
            cue(fx, "champion.lost", player=lose["id"])
    if c["kind"] == "joust":
        _pay(state, lose, JOUST_STAKE, fx, "", win["id"])
        _next_turn(state, fx)
    elif c["kind"] == "tournament":
        if win is not None:
            _take_treasury(state, win, state["treasury"] // 2, fx, ", half of it, for winning the tournament")
        _next_turn(state, fx)
    else:
        if win is by:
            c["wins"] += 1
        c["round"] += 1
        if c["round"] < len(c["rivals"]):
            c["champ"] = {}
            c["die"] = {}
            _contest_next(state, fx)
            return
        others = len(c["rivals"])
        need = 2 if others == 3 else others
        if c["wins"] >= need:
            _crown(state, by, fx)
        else:
            say(fx, "%s beat %d of %d and stays a %s." % (_who(by["id"]), c["wins"], others, title_name(by)))
            cue(fx, "trial.lost", player=by["id"])
            _next_turn(state, fx)


def _crown(state, p, fx):
    p["title"] = KING
    _take_treasury(state, p, state["treasury"], fx, ", all of it")
    say(fx, "Long live %s %s! %s wins the crown and the game." % (title_name(p), _who(p["id"]), _who(p["id"])))
    cue(fx, "crown", player=p["id"], title=title_name(p))
    state["over"] = True
    state["winner"] = p["id"]
    state["ask"] = None
    state["contest"] = None


def _start_contest(state, c, rivals, fx):
    c["rivals"] = rivals
    c["round"] = 0
    c["champ"] = {}
    c["die"] = {}
    cue(fx, c["kind"], player=c["by"], rivals=rivals, space=c["space"])
    _contest_next(state, fx)


# ---------------------------------------------------------------- apply


def _dice(state, inp, n):
    d = inp.get("dice")
    if d is None:
        return [rand_below(state, 6) + 1 for _ in range(n)]
    if not isinstance(d, list) or len(d) != n:
        raise Illegal("'dice' must list %d die value%s, got %r" % (n, "" if n == 1 else "s", d))
    for v in d:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1 or v > 6:
            raise Illegal("a die shows 1 to 6, got %r" % (v,))
    return list(d)


def _yes(inp):
    v = inp.get("yes")
    if v is not True and v is not False:
        raise Illegal("%r needs 'yes': true or false" % inp["t"])
    return v


def _pawn(state, inp, fx):
    """A pawn sensed on a space: confirm it or say where it belongs. Changes nothing.

    Without "player" (a plain presence sensor cannot tell pawns apart) it only
    checks that some pawn belongs there.
    """
    pid = inp.get("player")
    ids = [p["id"] for p in state["players"]]
    if pid is not None and pid not in ids:
        raise Illegal("pawn: no player %r in this game (%s)" % (pid, ", ".join(ids)))
    board = _board(state)
    sid = inp.get("space")
    if not isinstance(sid, int) or isinstance(sid, bool) or sid < 0 or sid >= len(board["spaces"]):
        raise Illegal("pawn: no space %r on this board (0 to %d)" % (sid, len(board["spaces"]) - 1))
    if pid is None:
        owners = [p["id"] for p in state["players"] if p["at"] == sid]
        if owners:
            cue(fx, "pawn.ok", player=owners[0], space=sid)
        else:
            say(fx, "No pawn belongs on space %d, %s." % (sid, _space(board, sid)["name"]))
            cue(fx, "pawn.misplaced", player=None, space=sid, want=None)
        return fx
    p = _pl(state, pid)
    if p["at"] == sid:
        cue(fx, "pawn.ok", player=pid, space=sid)
    else:
        want = "the castle entrance" if p["at"] < 0 else "space %d, %s" % (p["at"], _space(board, p["at"])["name"])
        say(fx, "%s, your pawn belongs on %s." % (_who(pid), want), pid)
        cue(fx, "pawn.misplaced", player=pid, space=sid, want=p["at"])
    return fx


def _trade(state, inp, fx):
    """Players may sell cottages to each other at any moment for a price they agree."""
    seller = inp.get("by")
    buyer = inp.get("to")
    ids = [p["id"] for p in state["players"]]
    if seller not in ids or buyer not in ids or seller == buyer:
        raise Illegal("trade: 'by' (seller) and 'to' (buyer) must be two players of %s, got %r and %r"
                      % (", ".join(ids), seller, buyer))
    price = inp.get("price")
    if not isinstance(price, int) or isinstance(price, bool) or price < 0:
        raise Illegal("trade: 'price' must be a whole number of gold nobles, got %r" % (price,))
    s = _pl(state, seller)
    b = _pl(state, buyer)
    if s["cottages"] < 1:
        raise Illegal("trade: %s owns no cottage to sell" % _who(seller))
    if price >= b["gold"]:
        raise Illegal("trade: %s has %d gold nobles, not enough to pay %d and keep some"
                      % (_who(buyer), b["gold"], price))
    s["cottages"] -= 1
    b["cottages"] += 1
    b["gold"] -= price
    s["gold"] += price
    say(fx, "%s sells a cottage to %s for %d gold nobles." % (_who(seller), _who(buyer), price))
    cue(fx, "cottage", player=buyer, cottages=b["cottages"])
    _titles(state, s, fx)
    return fx


def apply(state, inp):
    fx = []
    t = inp.get("t")
    if t == "pawn":
        return _pawn(state, inp, fx)
    if t == "trade":
        if state["over"]:
            raise Illegal("the game is over")
        return _trade(state, inp, fx)
    if state["over"]:
        raise Illegal("the game is over")
    ask = state["ask"]
    who = ask["who"]
    what = ask["what"]
    if inp.get("by") != who:
        raise Illegal("waiting for %s to %s; this input is from %r" % (_who(who), ASKS[what], inp.get("by")))
    p = _pl(state, who)
    expect = "roll" if what == "die" else what
    if t == "use-pass" and what == "roll" and p["dungeon"] and p["pass"]:
        expect = "use-pass"
    if t != expect:
        raise Illegal("%s must %s (input %r), not send %r" % (_who(who), ASKS[what], expect, t))
    handler = _HANDLERS[what]
    handler(state, p, ask, inp, fx)
    # A question answered without a new one (or a win) ends the turn.
    if not state["over"] and state["ask"] is None:
        _next_turn(state, fx)
    return fx


def _on_roll(state, p, ask, inp, fx):
    who = p["id"]
    if inp["t"] == "use-pass":
        if _yes(inp) is not True:
            raise Illegal("use-pass before rolling must be yes; just roll to stay and try")
        _leave_dungeon(state, p, fx, True)
        _ask_prompt(state, fx)
        return
    d = _dice(state, inp, 2)
    state["dice"] = d
    total = d[0] + d[1]
    state["ask"] = None
    say(fx, "%s rolls %d and %d." % (_who(who), d[0], d[1]))
    cue(fx, "dice", player=who, dice=d)
    if p["dungeon"]:
        if total in DUNGEON_EXITS:
            _leave_dungeon(state, p, fx, False)
        elif p["pass"]:
            state["ask"] = {"who": who, "what": "use-pass", "steps": total}
            _ask_prompt(state, fx)
            return
        else:
            say(fx, "%s stays in the dungeon." % _who(who))
            return
    _moved(state, p, fx, _walk(state, p, total, fx, True))


def _on_use_pass(state, p, ask, inp, fx):
    use = _yes(inp)
    state["ask"] = None
    if use:
        _leave_dungeon(state, p, fx, True)
        _moved(state, p, fx, _walk(state, p, ask["steps"], fx, True))
    else:
        say(fx, "%s keeps the pass and stays in the dungeon." % _who(p["id"]))


def _on_route(state, p, ask, inp, fx):
    wall = inp.get("wall")
    if wall not in ("inner", "outer"):
        raise Illegal("route needs 'wall': 'inner' or 'outer', got %r" % (wall,))
    state["ask"] = None
    board = _board(state)
    if wall != _wall_of(board, p) and not _cross(state, p, fx, board):
        return
    _moved(state, p, fx, _walk(state, p, ask["steps"], fx, True, True))


def _on_pick(state, p, ask, inp, fx):
    who = p["id"]
    q = inp.get("player")
    if q is None and ask["what"] == "tournament":
        state["ask"] = None
        say(fx, "%s declines the King's Tournament." % _who(who))
        return
    if q not in _others(state, who):
        raise Illegal(
            "%s: 'player' must be another player (%s), got %r" % (inp["t"], ", ".join(_others(state, who)), q)
        )
    c = state["contest"]
    say(fx, "%s calls %s to the %s." % (_who(who), _who(q), c["kind"]))
    _start_contest(state, c, [q], fx)


def _on_champion(state, p, ask, inp, fx):
    use = _yes(inp)
    c = state["contest"]
    c["champ"][p["id"]] = use
    if use:
        say(fx, "%s plays the champion card." % _who(p["id"]))
        cue(fx, "champion", player=p["id"])
    _send(state, c, p, fx)
    _contest_next(state, fx)


def _on_die(state, p, ask, inp, fx):
    d = _dice(state, inp, 1)
    state["contest"]["die"][p["id"]] = d[0]
    say(fx, "%s rolls %d." % (_who(p["id"]), d[0]))
    cue(fx, "dice", player=p["id"], dice=d)
    _contest_next(state, fx)


def _on_trial(state, p, ask, inp, fx):
    who = p["id"]
    if not _yes(inp):
        state["ask"] = None
        say(fx, "%s does not challenge for the crown." % _who(who))
        return
    say(fx, "%s demands a Trial by Combat for the crown." % _who(who))
    c = {"kind": "trial", "by": who, "space": p["at"], "rivals": [], "wins": 0}
    state["contest"] = c
    n = len(state["players"])
    i = int(who[1:]) - 1
    _start_contest(state, c, [state["players"][(i + k) % n]["id"] for k in range(1, n)], fx)


def _on_buy(state, p, ask, inp, fx):
    """The yes/no purchases and sales that end the turn."""
    what = ask["what"]
    yes = _yes(inp)
    state["ask"] = None
    who = p["id"]
    if what == "pay-fine":
        if yes:
            _pay(state, p, PLOT_FINE, fx, " to escape the dungeon")
        else:
            say(fx, "%s goes to the dungeon." % _who(who))
            _to_dungeon(state, p, fx)
    elif not yes:
        say(fx, "%s declines." % _who(who))
    elif what == "buy-pass":
        if _pay(state, p, PASS_PRICE[p["title"]], fx, " for a dungeon pass"):
            p["pass"] = True
            cue(fx, "pass", player=who)
    elif what == "hire":
        if _pay(state, p, HIRE_PRICE[p["title"]], fx, " to hire a champion"):
            p["champion"] = True
            cue(fx, "champion.hired", player=who)
    else:  # sell-cottage
        p["cottages"] -= 1
        state["cottages_left"] += 1
        _gain(state, p, COTTAGE_PRICE, fx, " for a cottage")


_HANDLERS = {
    "roll": _on_roll,
    "use-pass": _on_use_pass,
    "route": _on_route,
    "challenge": _on_pick,
    "tournament": _on_pick,
    "champion": _on_champion,
    "die": _on_die,
    "trial": _on_trial,
    "buy-pass": _on_buy,
    "hire": _on_buy,
    "sell-cottage": _on_buy,
    "pay-fine": _on_buy,
}


def _leave_dungeon(state, p, fx, with_pass):
    p["dungeon"] = False
    if with_pass:
        p["pass"] = False
        say(fx, "%s uses the dungeon pass and leaves the dungeon." % _who(p["id"]))
        cue(fx, "pass.used", player=p["id"])
    else:
        say(fx, "%s gets out of the dungeon." % _who(p["id"]))
    cue(fx, "dungeon.out", player=p["id"])


# ---------------------------------------------------------------- view


def view(state, viewer=None):
    """Everything in this game is public; viewer changes nothing."""
    board = _board(state)
    players = []
    for p in state["players"]:
        players.append(
            {
                "id": p["id"],
                "name": _who(p["id"]),
                "gold": p["gold"],
                "title": title_name(p),
                "rank": p["title"],
                "space": p["at"],
                "space_name": _pos_name(board, p),
                "wall": _wall_of(board, p) if p["at"] >= 0 else "entrance",
                "dungeon": p["dungeon"],
                "cottages": p["cottages"],
                "champion": p["champion"],
                "pass": p["pass"],
                "lose_turns": p["skip"],
            }
        )
    ask = state["ask"]
    c = state["contest"]
    return {
        "board": board["name"],
        "players": players,
        "treasury": state["treasury"],
        "bank_paid": state["bank_paid"],
        "cottages_left": state["cottages_left"],
        "turn": state["turn"],
        "turns": state["turns"],
        "dice": state["dice"],
        "question": None if ask is None else {"who": ask["who"], "what": ask["what"], "text": ASKS[ask["what"]]},
        "contest": None
        if c is None or "round" not in c
        else {"kind": c["kind"], "by": c["by"], "rivals": c["rivals"], "round": c["round"], "wins": c["wins"]},
    }


def board_view(options=None):
    """The board's spaces (number, wall, kind, name, amount/steps) for pages and sensor maps."""
    b = load_board((options or {}).get("board", "standard"))
    return [dict(s) for s in b["spaces"]]
