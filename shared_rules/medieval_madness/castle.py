"""Medieval Madness: the castle itself, shared by the rules in medieval_madness.py.

The rulebook's numbers, names and titles; the bank and the Royal Treasury
(every payment and bankruptcy); pawns walking the walls and the drawbridge.
A separate module so a board running the rules from source compiles two
smaller files (MicroPython's compiler peak grows with the file).
Runs under CPython and MicroPython.
"""

from shared_rules.engine import cue, say
from shared_rules.medieval_madness.board import load_board

START_GOLD = 200
START_TREASURY = 500
COTTAGES = 8
DRAWBRIDGE_FEE = 100
JOUST_STAKE = 100
COTTAGE_PRICE = 1500
REPAIRS_PER_COTTAGE = 50
PLOT_FINE = 1000
CROWN_GOLD = 6000
BANKRUPT_GOLD = 200
DUNGEON_EXITS = (3, 5, 7, 9)

# Titles: index = rank. Wealth needed for ranks 1..4; rank 5 only by Trial by Combat.
TITLE_GOLD = (0, 1000, 2000, 3000, 4000)
BOY_TITLES = ("", "Squire", "Lord", "Duke", "Prince", "King")
GIRL_TITLES = ("", "Maid", "Lady", "Duchess", "Princess", "Queen")
DUKE = 3
PRINCE = 4
KING = 5
# By rank; untitled players pay the lowest listed price (the rulebook lists none for them).
PASS_PRICE = (50, 50, 100, 150, 200, 200)
HIRE_PRICE = (100, 100, 150, 200, 300, 300)
WAGES = (50, 50, 100, 150, 200, 200)
TAX = (0, 50, 100, 150, 0, 0)  # what a player of that rank pays to a higher-ranked collector

# ---------------------------------------------------------------- the board (shared_rules/medieval_madness/board.py)


def _board(state):
    return load_board(state["options"]["board"])


# ---------------------------------------------------------------- words


def _pl(state, pid):
    return state["players"][int(pid[1:]) - 1]


def title_name(player, rank=None):
    r = player["title"] if rank is None else rank
    return (GIRL_TITLES if player["girl"] else BOY_TITLES)[r]


def _who(pid):
    return "Player " + pid[1:]


def _space(board, sid):
    return board["spaces"][sid]


def _pos_name(board, p):
    if p["at"] < 0:
        return "the castle entrance"
    return _space(board, p["at"])["name"]

# ---------------------------------------------------------------- money


def _titles(state, p, fx):
    before = p["title"]
    while p["title"] < PRINCE and p["gold"] >= TITLE_GOLD[p["title"] + 1]:
        p["title"] += 1
    if p["title"] > before:
        say(fx, "%s becomes a %s." % (_who(p["id"]), title_name(p)))
        cue(fx, "title", player=p["id"], title=title_name(p), rank=p["title"])


def _gain(state, p, amount, fx, why):
    """Gold from the bank (never runs out)."""
    p["gold"] += amount
    state["bank_paid"] += amount
    say(fx, "%s collects %d gold nobles%s." % (_who(p["id"]), amount, why))
    cue(fx, "gold.collect", player=p["id"], amount=amount)
    _titles(state, p, fx)


def _take_treasury(state, p, amount, fx, why):
    state["treasury"] -= amount
    p["gold"] += amount
    say(fx, "%s takes %d gold nobles from the Royal Treasury%s." % (_who(p["id"]), amount, why))
    cue(fx, "gold.collect", player=p["id"], amount=amount, source="treasury")
    _titles(state, p, fx)


def _pay(state, p, amount, fx, why, to=None):
    """Pay the treasury (to=None) or a player. False if it bankrupted the payer.

    A payer who cannot pay in full, or is left with nothing, has run out of money.
    """
    paid = min(p["gold"], amount)
    p["gold"] -= paid
    if to is None:
        state["treasury"] += paid
        where = "to the Royal Treasury"
    else:
        q = _pl(state, to)
        q["gold"] += paid
        where = "to " + _who(to)
    say(fx, "%s pays %d gold nobles %s%s." % (_who(p["id"]), paid, where, why))
    cue(fx, "gold.pay", player=p["id"], amount=paid, to=to or "treasury")
    if to is not None:
        _titles(state, _pl(state, to), fx)
    if p["gold"] <= 0:
        _bankrupt(state, p, fx)
        return False
    return True


def _bankrupt(state, p, fx):
    state["cottages_left"] += p["cottages"]
    p["cottages"] = 0
    p["title"] = 0
    p["champion"] = False
    p["pass"] = False
    say(fx, "%s is bankrupt, loses every card and goes to the dungeon." % _who(p["id"]))
    cue(fx, "bankrupt", player=p["id"])
    _to_dungeon(state, p, fx)
    p["gold"] = BANKRUPT_GOLD
    state["bank_paid"] += BANKRUPT_GOLD
    say(fx, "The bank gives %s %d gold nobles." % (_who(p["id"]), BANKRUPT_GOLD))


def _to_dungeon(state, p, fx):
    board = _board(state)
    p["at"] = board["dungeon"]
    p["dungeon"] = True
    cue(fx, "dungeon", player=p["id"], space=board["dungeon"])


# ---------------------------------------------------------------- movement


def _wall_of(board, p):
    return "outer" if p["at"] < 0 else _space(board, p["at"])["wall"]


def _step(board, sid, wall):
    """The next space clockwise along a wall (-1, the entrance, leads onto space 0)."""
    ids = board["walls"][wall]
    if sid < 0:
        return ids[0]
    k = sid - ids[0] + 1
    return ids[k % len(ids)]


def _cross(state, p, fx, board):
    """Take the drawbridge to the other wall; False if the fee bankrupted the player."""
    here = _space(board, p["at"])["wall"]
    other = "inner" if here == "outer" else "outer"
    p["at"] = board["bridge_" + other]
    say(fx, "%s crosses the drawbridge to the %s wall." % (_who(p["id"]), other))
    cue(fx, "drawbridge", player=p["id"], wall=other, space=p["at"])
    return _pay(state, p, DRAWBRIDGE_FEE, fx, " to cross the drawbridge")


def _walk(state, p, steps, fx, may_cross, decided=False):
    """Move a pawn clockwise. Returns "landed", "asked" (route question) or "bankrupt".

    At the drawbridge (passing it or starting on it) a Duke or higher may cross;
    a lower title on the inner wall must cross back, landing on it included. decided: the route question
    for the bridge the pawn stands on has been answered.
    """
    board = _board(state)
    while steps > 0:
        if p["at"] >= 0 and not decided and _space(board, p["at"])["kind"] == "drawbridge":
            wall = _space(board, p["at"])["wall"]
            if wall == "inner" and p["title"] < DUKE:
                if not _cross(state, p, fx, board):
                    return "bankrupt"
            elif may_cross and p["title"] >= DUKE:
                state["ask"] = {"who": p["id"], "what": "route", "steps": steps}
                return "asked"
        decided = False
        p["at"] = _step(board, p["at"], _wall_of(board, p))
        steps -= 1
        sp = _space(board, p["at"])
        if steps > 0 and sp["kind"] == "royal-stipend":
            _gain(state, p, sp["amount"], fx, " passing the Royal Stipend")
    # Landing on the inner bridge is reaching it too: a lower title goes back out now, and pays.
    sp = _space(board, p["at"]) if p["at"] >= 0 else None
    inside = sp is not None and sp["kind"] == "drawbridge" and sp["wall"] == "inner"
    if inside and p["title"] < DUKE and not _cross(state, p, fx, board):
        return "bankrupt"
    return "landed"


def _move_to(state, p, target, fx):
    """A pawn called to a contest: around its wall (collecting stipends) or straight across."""
    board = _board(state)
    if p["at"] == target:
        return
    if p["at"] >= 0 and _space(board, p["at"])["wall"] == _space(board, target)["wall"]:
        while p["at"] != target:
            p["at"] = _step(board, p["at"], _space(board, target)["wall"])
            sp = _space(board, p["at"])
            if p["at"] != target and sp["kind"] == "royal-stipend":
                _gain(state, p, sp["amount"], fx, " passing the Royal Stipend")
    else:
        p["at"] = target
    say(fx, "%s moves to %s." % (_who(p["id"]), _space(board, target)["name"]))
    cue(fx, "move", player=p["id"], space=target)
