"""Ringo: a castle siege on a round board of 41 cells (see docs/rules/ringo.md).

The board is the castle plus 5 rings of 8 slices. A cell is named by its slice
letter and ring number: slices n, a, b, c, d, e, f, g clockwise (n is the
Neutral Zone), ring 1 next to the castle, ring 5 the outer ring: "n1", "c4",
"g5"; the castle is "castle". Internally a cell is an index: castle 0, then
1 + 8 * (ring - 1) + slice, so the board fits in a 41-character string
("A" attacker, "D" defender, "." empty; index 0 is unused, the castle holds a
count) and legal-move generation walks precomputed neighbour tables.

Inputs:
    {"t": "move", "by": side, "from": "b5", "to": "b4"}   a step, capture or jump (decision)
    {"t": "pass", "by": "defenders"}                       only with defenders_may_pass
    {"t": "cell", "cell": "b5", "occupied": false}         a presence sensor changed (sensed)
"""

import sys

from shared_rules.engine import Illegal, cue, prompt, say, seed_rng

NAME = "ringo"
TITLE = "Ringo"
OPTIONS = {
    "attackers": {"default": 7, "choices": [5, 6, 7], "help": "attackers at the start (variant: 5 or 6)"},
    "enter_from_neutral": {
        "default": True, "choices": [True, False],
        "help": "may attackers enter the castle from the Neutral Zone (variant: false)",
    },
    "defenders_may_pass": {
        "default": False, "choices": [True, False], "help": "may the defenders pass a turn (variant: true)",
    },
    "neutral_limit": {
        "default": "defenders", "choices": ["defenders", "one"],
        "help": "most attackers in the Neutral Zone: as many as defenders left, or one (variant)",
    },
    "quiet_draw": {
        "default": 0, "choices": None,
        "help": "house rule, not in the rulebook: a draw after this many turns in a row with no capture "
        "and no attacker moving forward (0: never, as the rulebook; 50 ends shuffling games)",
    },
}
SENSED = ("cell",)
# apply() only ever replaces state's values (the board is a string, the hand a new dict): a shallow copy of
# the state before an input keeps it whole if the input is refused (docs/rules/engine.md, "Illegal input")
FLAT_STATE = True
MAX_STEPS = 3000

ATT = "attackers"
DEF = "defenders"
SIDES = (ATT, DEF)
PIECE = {ATT: "A", DEF: "D"}
OTHER = {ATT: DEF, DEF: ATT}
NOUN = {ATT: "attacker", DEF: "defender"}
TITLE_OF = {ATT: "The attackers", DEF: "The defenders"}

SLICES = "nabcdefg"  # clockwise; slice 0 (n) is the Neutral Zone
RINGS = 5
CASTLE = 0
NCELLS = 1 + 8 * RINGS


def _idx(ring, sl):
    return 1 + 8 * (ring - 1) + sl


def _ring(i):
    return (i - 1) // 8 + 1


def _slice(i):
    return (i - 1) % 8


NAMES = ["castle"] + [SLICES[(i - 1) % 8] + str((i - 1) // 8 + 1) for i in range(1, NCELLS)]
INDEX = {}
for _i in range(NCELLS):
    INDEX[NAMES[_i]] = _i
NEUTRAL = tuple(_idx(r, 0) for r in range(1, RINGS + 1))
IS_NEUTRAL = bytes([1 if i in NEUTRAL else 0 for i in range(NCELLS)])


def _step(i, d):
    """The cell next to i in direction d (0 front, 1 back, 2 anticlockwise, 3 clockwise); -1 off the board."""
    r, s = _ring(i), _slice(i)
    if d == 0:
        return CASTLE if r == 1 else _idx(r - 1, s)
    if d == 1:
        return -1 if r == RINGS else _idx(r + 1, s)
    if d == 2:
        return _idx(r, (s + 7) % 8)
    return _idx(r, (s + 1) % 8)


def _jump(i, d):
    """(jumped cell, landing cell) for a jump from i in direction d, or None.

    Front from ring 1 jumps the castle to the opposite cell of ring 1; front from
    ring 2 jumps a ring-1 cell into the castle.
    """
    mid = _step(i, d)
    if mid < 0:
        return None
    if mid == CASTLE:
        return (CASTLE, _idx(1, (_slice(i) + 4) % 8))
    land = _step(mid, d)
    if land < 0:
        return None
    return (mid, land)


# A move is one small int: from + (to << 6) + ((captured + 1) << 12), so
# generating moves allocates nothing but the list, and the tables below are
# plain ints (small on a board). unpack(mv) gives (from, to, captured).
def pack(frm, to, cap=-1):
    return frm + (to << 6) + ((cap + 1) << 12)


def unpack(mv):
    """(from, to, captured) cell indexes of a packed move; captured is -1 for none."""
    return mv & 63, (mv >> 6) & 63, (mv >> 12) - 1


# pack(from, to) -> the cell a jump from `from` to `to` passes over (the castle for a jump across it):
# every jump there is, whoever may make it. Built before the neighbour tables, while
# a board's heap is still in one piece: growing a dict this size needs 2 KB in one block.
JUMPED = {}
for _i in range(1, NCELLS):
    for _d in (0, 1, 2, 3):
        _j = _jump(_i, _d)
        if _j is not None:
            JUMPED[_i + (_j[1] << 6)] = _j[0]


# Neighbour tables, built once: for each cell, one int per direction a side may
# step in, in direction order: t + (land << 6) + (pack(cell, t) << 12), where t is
# the cell stepped to (and the cell jumped over, if it holds an enemy) and land
# the landing cell of that jump, or NO_JUMP. Move generation then looks at each
# neighbour once: empty, a step; an enemy, maybe a jump.
# Attackers: front, anticlockwise, clockwise (never back), never jumping the castle.
# Defenders: all four, never into the castle (their jump over it is OVER_CASTLE).
NO_JUMP = 63


def _dirs(i, dirs, castle_ok, into_castle):
    out = []
    for d in dirs:
        t = _step(i, d)
        if t < 0 or (t == CASTLE and not castle_ok):
            continue
        j = _jump(i, d)
        land = NO_JUMP
        if j is not None and j[0] != CASTLE and (j[1] != CASTLE or into_castle):
            land = j[1]
        out.append(t + (land << 6) + (pack(i, t) << 12))
    return tuple(out)


_FRONT_SIDES = (0, 2, 3)
_ALL = (0, 1, 2, 3)
def _table(fn, dirs, *flags):
    """[()] + one tuple per cell of fn(cell, dirs, *flags).

    The per-cell tuples are cut from one flat tuple so they lie side by side in
    memory with no garbage between them: on a board, scattered small tuples
    left the heap so broken up that loading the rules needed 97 KB instead of 66 KB.
    """
    flat = []
    ends = [0]
    for i in range(1, NCELLS):
        flat.extend(fn(i, dirs, *flags))
        ends.append(len(flat))
    flat = tuple(flat)
    return [()] + [flat[ends[i - 1]:ends[i]] for i in range(1, NCELLS)]


A_DIRS = _table(_dirs, _FRONT_SIDES, True, True)
# The variant where attackers may not enter the castle from the Neutral Zone: only slice n differs.
A_DIRS_NZ = list(A_DIRS)
for _c in NEUTRAL:
    A_DIRS_NZ[_c] = _dirs(_c, _FRONT_SIDES, False, False)
D_DIRS = _table(_dirs, _ALL, False, False)
# A defender on ring 1 may jump the castle to the opposite ring-1 cell, taking the attacker in it.
OVER_CASTLE = [0] + [pack(i, _idx(1, (_slice(i) + 4) % 8), CASTLE) for i in range(1, 9)]


def start_board(n_attackers):
    """The set-up: attackers on ring 5 but not the Neutral Zone, defenders on a1, c1, e1, g1.

    With 6 or 5 attackers the gaps are placed symmetrically: 6 leaves d5 empty, 5 leaves b5 and f5.
    """
    b = ["."] * NCELLS  # b[0], the castle, stays "." (its count is kept apart)
    skip = {7: "", 6: "d", 5: "bf"}[n_attackers]
    for s in range(1, 8):
        if SLICES[s] not in skip:
            b[_idx(RINGS, s)] = "A"
    for s in (1, 3, 5, 7):
        b[_idx(1, s)] = "D"
    return "".join(b)


def board_from(attackers=(), defenders=()):
    """A board string with attackers and defenders on the named cells (for tests, docs, puzzles)."""
    b = ["."] * NCELLS
    for names, piece in ((attackers, "A"), (defenders, "D")):
        for name in names:
            if name not in INDEX or name == "castle":
                raise Illegal("%r is not a cell a piece can stand on" % (name,))
            b[INDEX[name]] = piece
    return "".join(b)


def perft(options, depth, board=None, castle=0, side=ATT):
    """How many move sequences of exactly `depth` moves there are from a position (the start by default).

    A finished game ends a sequence early (it counts for nothing); a defenders' pass counts as a move.
    """
    if board is None:
        board = start_board(options["attackers"])
    if depth == 0:
        return 1
    if result(board, castle, side, options) is not None:
        return 0
    moves = gen_moves(board, castle, side, options)
    if depth == 1:
        return len(moves) + (1 if side == DEF and options["defenders_may_pass"] else 0)
    n = 0
    for mv in moves:
        nb, nc = do_move(board, castle, mv)
        n += perft(options, depth - 1, nb, nc, OTHER[side])
    if side == DEF and options["defenders_may_pass"]:
        n += perft(options, depth - 1, board, castle, ATT)
    return n


def setup(options, seed):
    n = options["attackers"]
    q = options["quiet_draw"]
    if not isinstance(q, int) or isinstance(q, bool) or q < 0:
        raise Illegal("option quiet_draw=%r must be a whole number of turns, 0 or more (0: no such draw)" % (q,))
    if n not in (5, 6, 7):
        raise Illegal("option attackers=%r must be 5, 6 or 7" % (n,))
    return {
        "game": NAME,
        "options": options,
        "rng": seed_rng(seed),
        "over": False,
        "winner": None,
        "board": start_board(n),
        "castle": 0,
        "turn": ATT,
        "turns": 0,
        "quiet": 0,
        "last": None,
        "hand": None,
    }


def awaiting(state):
    return [] if state["over"] else [state["turn"]]


# ---------------------------------------------------------------- move generation


def neutral_limit(opts, defenders):
    """How many attackers the Neutral Zone may hold with this many defenders left."""
    if opts["neutral_limit"] == "one":
        return 1 if defenders > 0 else 0
    return defenders


# The last position asked about: legal(), apply() and the end-of-turn check all
# ask for the same position in a row, so one remembered answer saves two thirds.
# (key, moves) is replaced as one object, so matches played in threads never
# see one position's key with another's moves.
_last_gen = [(None, None)]


def gen_moves(board, castle, side, opts):
    """Every legal move of side, packed (unpack(mv) gives (from, to, captured); captured -1 for none).

    A jump over a piece in the Neutral Zone is a move that captures nothing (captured -1).
    The list returned may be shared: do not change it.
    """
    key = (board, castle, side, opts["enter_from_neutral"], opts["neutral_limit"])
    last = _last_gen[0]
    if last[0] == key:
        return last[1]
    out = _gen(board, castle, side, opts)
    _last_gen[0] = (key, out)
    return out


def _gen(board, castle, side, opts):
    # One look per neighbour (see A_DIRS): an empty one is a step, an enemy one a
    # possible jump. A piece's jumps are listed after its steps, so they wait in
    # `later`, which exists only for a piece that has one.
    out = []
    append = out.append
    find = board.find
    neutral = IS_NEUTRAL
    if side == ATT:
        # board[0] (the castle) is always ".": attackers may always step into it.
        nz = (board[1] == "A") + (board[9] == "A") + (board[17] == "A") + (board[25] == "A") + (board[33] == "A")
        # Below the Neutral Zone's limit any step may enter it; at the limit only moves inside it may.
        free = nz < neutral_limit(opts, board.count("D"))
        dirs = A_DIRS if opts["enter_from_neutral"] else A_DIRS_NZ
        i = find("A", 1)
        while i > 0:
            later = None
            for e in dirs[i]:
                t = e & 63
                c = board[t]
                if c == ".":
                    if free or neutral[t] <= neutral[i]:
                        append(e >> 12)
                elif c == "D":
                    land = (e >> 6) & 63
                    if land == NO_JUMP or board[land] != ".":
                        continue
                    if neutral[t]:  # jumping a defender in the Neutral Zone captures nothing
                        if not (free or neutral[land] <= neutral[i]):
                            continue
                        mv = i + (land << 6)
                    elif nz - neutral[i] + neutral[land] <= neutral_limit(opts, board.count("D") - 1):
                        mv = i + (land << 6) + ((t + 1) << 12)
                    else:
                        continue
                    later = [mv] if later is None else later + [mv]
            if later is not None:
                out.extend(later)
            i = find("A", i + 1)
    else:
        i = find("D", 1)
        while i > 0:
            later = None
            if castle > 0 and i < 9:  # ring 1, beside a castle holding an attacker
                mv = OVER_CASTLE[i]
                if board[(mv >> 6) & 63] == ".":
                    later = [mv]
            for e in D_DIRS[i]:
                t = e & 63
                c = board[t]
                if c == ".":
                    append(e >> 12)
                elif c == "A":
                    land = (e >> 6) & 63
                    if land == NO_JUMP or board[land] != ".":
                        continue
                    # jumping an attacker in the Neutral Zone captures nothing
                    mv = i + (land << 6) if neutral[t] else i + (land << 6) + ((t + 1) << 12)
                    later = [mv] if later is None else later + [mv]
            if later is not None:
                out.extend(later)
            i = find("D", i + 1)
    return out


def _is_step(side, frm, to):
    """Is to next to frm in a direction side may step?"""
    k = pack(frm, to)
    for e in (A_DIRS if side == ATT else D_DIRS)[frm]:
        if e >> 12 == k:
            return True
    return False


RING = [0] + [_ring(i) for i in range(1, NCELLS)]


def _jumped_cell(frm, to):
    """The cell a jump from frm to to passes over, or -1 if to is not a jump away."""
    return JUMPED.get(frm + (to << 6), -1)


def do_move(board, castle, mv):
    """(board, castle) after the packed move mv; no checks."""
    frm, to, cap = mv & 63, (mv >> 6) & 63, (mv >> 12) - 1
    # Edited as bytes and decoded once: a third of the time of slicing and joining (half with a capture).
    b = bytearray(board, "ascii")
    if to == CASTLE:
        castle += 1
    else:
        b[to] = b[frm]
    b[frm] = 46  # "."
    if cap == CASTLE:
        castle -= 1
    elif cap > 0:
        b[cap] = 46
    return b.decode(), castle


def result(board, castle, side_to_move, opts, quiet=0):
    """The winner if the game is over in this position: a side, "draw", or None while playing."""
    if castle >= 2:
        return ATT
    if board.count("A") + castle <= 1:
        return DEF
    if quiet and quiet >= opts["quiet_draw"] > 0:
        return "draw"
    if not gen_moves(board, castle, side_to_move, opts):
        if side_to_move == DEF and opts["defenders_may_pass"]:
            return None
        return OTHER[side_to_move]
    return None


# ---------------------------------------------------------------- inputs


# On CPython, one shared input dict per (side, packed move), built on first use:
# legal() hands out these same objects, so callers must not change them. A
# board (MicroPython) builds fresh ones instead: RAM is scarcer than time there.
# (A from/to pair always packs to the same move, capture included: see _find_move.)
_INPUTS = {ATT: {}, DEF: {}}  # type: dict
_SHARE_INPUTS = sys.implementation.name != "micropython"


def move_input(side, mv):
    """The move input for the packed move mv."""
    tab = _INPUTS[side]
    inp = tab.get(mv)
    if inp is None:
        inp = {"t": "move", "by": side, "from": NAMES[mv & 63], "to": NAMES[(mv >> 6) & 63]}
        if _SHARE_INPUTS:
            tab[mv] = inp
    return inp


def legal(state):
    if state["over"]:
        return []
    side = state["turn"]
    if state["hand"] is not None:
        return _sensed_choices(state)
    tab = _INPUTS[side]
    moves = gen_moves(state["board"], state["castle"], side, state["options"])
    out = None
    if _SHARE_INPUTS:
        try:
            out = list(map(tab.__getitem__, moves))
        except KeyError:  # a move not seen before
            pass
    if out is None:
        out = [move_input(side, mv) for mv in moves]
    if side == DEF and state["options"]["defenders_may_pass"]:
        out.append({"t": "pass", "by": DEF})
    return out


def _cell(inp, key):
    name = inp.get(key)
    if not isinstance(name, str) or name not in INDEX:
        raise Illegal(
            "%s: %r is not a cell (cells are a slice letter n or a-g and a ring 1-5, e.g. b4; or castle)"
            % (key, name)
        )
    return INDEX[name]


def apply(state, inp):
    # Checks ordered so a well-formed move (what legal() lists) meets as few as possible.
    t = inp.get("t")
    if t != "move" and t != "pass":
        if t == "cell":
            return _on_cell(state, inp)
        raise Illegal("unknown input type %r (Ringo takes move, pass and cell)" % (t,))
    side = state["turn"]
    by = inp.get("by")
    if by != side:
        if by not in SIDES:
            raise Illegal("%s: by must be attackers or defenders, got %r" % (t, by))
        raise Illegal("it is the %s' turn, not the %s'" % (side, by))
    if state["hand"] is not None:
        raise Illegal("pieces are off their cells (%s); finish or undo that on the board first" % _hand_text(state))
    if t == "pass":
        if side != DEF or not state["options"]["defenders_may_pass"]:
            raise Illegal("the %s may not pass (only the defenders, with the defenders_may_pass variant)" % side)
        fx = []
        say(fx, "The defenders pass.")
        cue(fx, "pass", side=DEF)
        state["last"] = "pass"
        _end_turn(state, fx, progress=False)
        return fx
    # Cell names are looked up directly; anything else gets _cell's checks and words.
    try:
        frm, to = INDEX[inp["from"]], INDEX[inp["to"]]
    except (KeyError, TypeError):  # missing, not a cell, or a list or an object where a cell name belongs
        frm, to = _cell(inp, "from"), _cell(inp, "to")
    return play_move(state, _find_move(state, side, frm, to))


def _find_move(state, side, frm, to):
    """The packed move from frm to to if side may play it now; else Illegal saying why."""
    board = state["board"]
    # The move as gen_moves lists it: a jump names what it captures, nothing in the Neutral Zone.
    mv = frm + (to << 6)
    mid = JUMPED.get(mv, -1)
    if mid >= 0 and not IS_NEUTRAL[mid]:
        mv += (mid + 1) << 12
    if mv in gen_moves(board, state["castle"], side, state["options"]):
        return mv  # listed moves start on one of side's pieces, never in the castle
    if frm == CASTLE:
        raise Illegal("a piece in the castle stays there; it cannot move")
    if board[frm] != PIECE[side]:
        what = {"A": "an attacker", "D": "a defender", ".": "nothing"}[board[frm]]
        raise Illegal("%s holds %s, not one of the %s' pieces" % (NAMES[frm], what, side))
    raise Illegal("the %s cannot go from %s to %s: %s" % (NOUN[side], NAMES[frm], NAMES[to], _why_not(state, side, frm, to)))


def _why_not(state, side, frm, to):
    """The rule a refused move breaks, in words."""
    board = state["board"]
    opts = state["options"]
    rf, rt = _ring(frm), (0 if to == CASTLE else _ring(to))
    if frm == to:
        return "a move goes to another cell"
    if to == CASTLE and side == DEF:
        return "defenders may not enter the castle"
    if to != CASTLE and board[to] != ".":
        return "%s is not empty" % NAMES[to]
    mid = _jumped_cell(frm, to)
    step = _is_step(side, frm, to)
    if not step and mid < 0:
        if side == ATT and to != CASTLE and rt > rf:
            return "attackers never move backwards"
        return "a piece moves one cell forward, back or sideways, or jumps one piece"
    if side == ATT and rt > rf:
        return "attackers never move or capture backwards"
    if to == CASTLE and IS_NEUTRAL[frm] and not opts["enter_from_neutral"]:
        return "attackers may not enter the castle from the Neutral Zone in this variant"
    if mid >= 0 and not step:
        if mid == CASTLE:
            return "the castle holds no attacker to capture"
        if board[mid] != PIECE[OTHER[side]]:
            return "a jump must go over an opposing piece, and %s holds none" % NAMES[mid]
    if side == ATT:
        return "more attackers in the Neutral Zone than defenders left is not allowed (limit %d)" % neutral_limit(
            opts, board.count("D") - (1 if mid > 0 and not IS_NEUTRAL[mid] else 0))
    return "not a legal move"


# On CPython the effects of each (side, packed move) are kept once made, as the
# inputs are (see _INPUTS), and handed out as copies (quicker than making them);
# a board makes them again each time.
_SAID = {ATT: {}, DEF: {}}  # type: dict


def _words(side, mv):
    """(announcement, "from-to", from name, to name, progress?) for side playing the packed move mv.

    Progress (which restarts the count towards a quiet draw) is a capture or an attacker moving in.
    """
    frm, to, cap = mv & 63, (mv >> 6) & 63, (mv >> 12) - 1
    noun, f, t = NOUN[side], NAMES[frm], NAMES[to]
    if cap >= 0:
        where = "in the castle" if cap == CASTLE else "on " + NAMES[cap]
        text = "The %s on %s captures the %s %s and lands on %s." % (noun, f, NOUN[OTHER[side]], where, t)
    elif to == CASTLE:
        text = "An attacker enters the castle from %s." % f
    else:
        mid = JUMPED.get(mv, -1)
        if mid > 0:
            text = "The %s on %s jumps over %s in the Neutral Zone to %s." % (noun, f, NAMES[mid], t)
        else:
            text = "The %s moves from %s to %s." % (noun, f, t)
    return text, f + "-" + t, f, t, cap >= 0 or (side == ATT and RING[to] < RING[frm])  # RING[castle] is 0


def play_move(state, mv):
    """Apply a legal move (from gen_moves) to state; the effects."""
    side = state["turn"]
    state["board"], state["castle"] = do_move(state["board"], state["castle"], mv)
    said = _SAID[side].get(mv)
    if said is not None:
        say_, cue_, last, progress = said
        fx = [say_.copy(), cue_.copy()]
        if "count" in cue_:
            fx[1]["count"] = state["castle"]
    else:
        text, last, f, t, progress = _words(side, mv)
        cap = (mv >> 12) - 1
        # Effects are built as plain dicts here (what say/cue make).
        if cap >= 0:
            cue_ = {"t": "cue", "cue": "capture", "side": side, "from": f, "to": t, "cell": NAMES[cap]}
        elif t == "castle":
            cue_ = {"t": "cue", "cue": "castle.entered", "side": ATT, "from": f, "count": state["castle"]}
        else:
            cue_ = {"t": "cue", "cue": "move", "side": side, "from": f, "to": t}
        fx = [{"t": "say", "to": None, "text": text}, cue_]
        if _SHARE_INPUTS:
            _SAID[side][mv] = (fx[0].copy(), cue_.copy(), last, progress)
    state["last"] = last
    _end_turn(state, fx, progress)
    return fx


# The cue that passes the turn, copied for each move.
_TURN = {ATT: {"t": "cue", "cue": "turn", "side": ATT}, DEF: {"t": "cue", "cue": "turn", "side": DEF}}


def _end_turn(state, fx, progress):
    state["turns"] += 1
    quiet = 0 if progress else state["quiet"] + 1
    state["quiet"] = quiet
    nxt = OTHER[state["turn"]]
    state["turn"] = nxt
    board, castle = state["board"], state["castle"]
    win = result(board, castle, nxt, state["options"], quiet)
    if win is None:
        fx.append(_TURN[nxt].copy())  # copying a made dict is quicker than making one
        return
    state["over"] = True
    if win == "draw":
        say(
            fx, "%d turns in a row without a capture or an attacker moving forward: the game is a draw."
            % state["options"]["quiet_draw"]
        )
        cue(fx, "game.over", winner=None, why="quiet")
        return
    state["winner"] = win
    if castle >= 2:
        why, text = "castle", "Two attackers hold the castle. The attackers win!"
    elif win == DEF and board.count("A") + castle <= 1:
        why, text = "attackers", "Only one attacker is left. The defenders win!"
    else:
        why = "blocked"
        text = "The %s cannot move. %s win!" % (nxt, TITLE_OF[win])
    say(fx, text)
    cue(fx, "game.over", winner=win, why=why)


# ---------------------------------------------------------------- reading the board's sensors
#
# state["hand"] records how the pieces on the table differ from the board
# after the last move: "off" cells that should hold a piece but are empty,
# "extra" cells that should be empty but hold one, "castle" the difference in
# the castle's count. When that difference is exactly a legal move of the side
# to play, the move is made. While it could still become one (a piece lifted,
# a capture half done) the engine waits. Anything else is prompted to be put right.


def _hand_text(state):
    h = state["hand"]
    parts = []
    if h["off"]:
        parts.append("lifted from " + ", ".join(NAMES[c] for c in h["off"]))
    if h["extra"]:
        parts.append("put on " + ", ".join(NAMES[c] for c in h["extra"]))
    if h["castle"] > 0:
        parts.append("put into the castle")
    elif h["castle"] < 0:
        parts.append("taken out of the castle")
    return "; ".join(parts)


def _expect(mv):
    """(off, extra, castle change) that a move leaves on the table."""
    frm, to, cap = unpack(mv)
    off = [frm]
    if cap > 0:
        off.append(cap)
    extra = [to] if to != CASTLE else []
    dc = (1 if to == CASTLE else 0) - (1 if cap == CASTLE else 0)
    return sorted(off), extra, dc


def _within(h, mv):
    """Is the table's difference h part of the way through move mv? (exact, partial)"""
    off, extra, dc = _expect(mv)
    for c in h["off"]:
        if c not in off:
            return False, False
    for c in h["extra"]:
        if c not in extra:
            return False, False
    if h["castle"] not in (0, dc):
        return False, False
    return (h["off"] == off and h["extra"] == extra and h["castle"] == dc), True


# On CPython, where one lifted piece of the side to play may go is kept per position and cell (tables lift
# the same pieces over and over, as _SAID keeps a move's words); a board works it out each time.
_LIFTED = {}  # type: dict
LIFTED_KEPT = 4096  # positions kept, then forgotten at once


def _on_cell(state, inp):
    c = _cell(inp, "cell")
    occ = inp.get("occupied")
    if occ is not True and occ is not False:
        raise Illegal("cell %s: occupied must be true or false, got %r" % (NAMES[c], occ))
    h = state["hand"] or {"off": [], "extra": [], "castle": 0}
    h = {"off": list(h["off"]), "extra": list(h["extra"]), "castle": h["castle"]}
    if c == CASTLE:
        if not occ and state["castle"] + h["castle"] <= 0:
            raise Illegal("the castle sensor says a piece left the castle, but the castle is empty")
        h["castle"] += 1 if occ else -1
    else:
        logical = state["board"][c] != "."
        now = (logical and c not in h["off"]) or (not logical and c in h["extra"])
        if now == occ:
            raise Illegal("cell %s reports %s but it is already %s" % (
                NAMES[c], "occupied" if occ else "empty", "occupied" if occ else "empty"))
        lst = h["off"] if logical else h["extra"]
        if c in lst:
            lst.remove(c)
        else:
            lst.append(c)
            lst.sort()
    fx = []
    if not h["off"] and not h["extra"] and h["castle"] == 0:
        state["hand"] = None
        cue(fx, "board.restored")
        return fx
    state["hand"] = h
    side = state["turn"]
    lifted = None
    if _SHARE_INPUTS and len(h["off"]) == 1 and not h["extra"] and h["castle"] == 0:
        opts = state["options"]  # gen_moves' key and the cell: all that what one lifted piece lights depends on
        lifted = (state["board"], state["castle"], side, opts["enter_from_neutral"], opts["neutral_limit"], h["off"][0])
        dests = _LIFTED.get(lifted)
        if dests is not None:
            cue(fx, "piece.lifted", side=side, cell=NAMES[lifted[5]], to=list(dests))
            return fx
    moves = gen_moves(state["board"], state["castle"], side, state["options"])
    if h["off"]:
        # A move can only account for a lifted cell it moves from or captures on: look at those alone
        # (a lifted piece usually has two or three moves of the side's ten or more).
        first, touching = h["off"][0], []
        for mv in moves:
            if mv & 63 == first or (mv >> 12) - 1 == first:
                touching.append(mv)
        moves = touching
    partial = []
    for mv in moves:
        exact, part = _within(h, mv)
        if exact:
            state["hand"] = None
            return play_move(state, mv)
        if part:
            partial.append(mv)
    if partial:
        frm = h["off"][0] if len(h["off"]) == 1 else -1
        if frm > 0 and not h["extra"] and h["castle"] == 0 and state["board"][frm] == PIECE[side]:
            dests = sorted({NAMES[(mv >> 6) & 63] for mv in partial if mv & 63 == frm})
            if lifted is not None:
                if len(_LIFTED) >= LIFTED_KEPT:
                    _LIFTED.clear()
                _LIFTED[lifted] = tuple(dests)
            cue(fx, "piece.lifted", side=side, cell=NAMES[frm], to=dests)
            return fx
        # Part of the way through a move: light what is still to lift and where a piece may go.
        lift, place = set(), set()
        for mv in partial:
            off, extra, dc = _expect(mv)
            lift.update(NAMES[x] for x in off if x not in h["off"])
            place.update(NAMES[x] for x in extra if x not in h["extra"])
            if dc > 0 and h["castle"] == 0:
                place.add("castle")
            if dc < 0 and h["castle"] == 0:
                lift.add("castle")
        enemy = PIECE[OTHER[side]]
        if lift and not place and all(c == "castle" or state["board"][INDEX[c]] == enemy for c in lift):
            cue(fx, "capture.remove", side=side, cells=sorted(lift))
        else:
            cue(fx, "move.pending", side=side, lift=sorted(lift), place=sorted(place))
        return fx
    refill = [NAMES[x] for x in h["off"]]
    clear = [NAMES[x] for x in h["extra"]]
    if h["castle"] < 0:
        refill.append("castle")
    if h["castle"] > 0:
        clear.append("castle")
    what = []
    if clear:
        what.append("take the piece off " + " and ".join(clear))
    if refill:
        what.append("put the piece back on " + " and ".join(refill))
    text = "That is not a legal move for the %s: %s." % (side, ", then ".join(what))
    say(fx, text)
    cue(fx, "move.illegal", side=side, refill=refill, clear=clear)
    prompt(fx, side, text)
    return fx


def _sensed_choices(state):
    """With pieces off their cells: the sensor changes that put them back or carry a move on."""
    h = state["hand"]
    out = []
    for c in h["off"]:
        out.append({"t": "cell", "cell": NAMES[c], "occupied": True})
    for c in h["extra"]:
        out.append({"t": "cell", "cell": NAMES[c], "occupied": False})
    if h["castle"] != 0:
        out.append({"t": "cell", "cell": "castle", "occupied": h["castle"] < 0})
    seen = set()
    for mv in gen_moves(state["board"], state["castle"], state["turn"], state["options"]):
        if not _within(h, mv)[1]:
            continue
        off, extra, dc = _expect(mv)
        for c in off:
            if c not in h["off"] and ("off", c) not in seen:
                seen.add(("off", c))
                out.append({"t": "cell", "cell": NAMES[c], "occupied": False})
        for c in extra:
            if c not in h["extra"] and ("extra", c) not in seen:
                seen.add(("extra", c))
                out.append({"t": "cell", "cell": NAMES[c], "occupied": True})
        if dc and h["castle"] == 0 and "castle" not in seen:
            seen.add("castle")
            out.append({"t": "cell", "cell": "castle", "occupied": dc > 0})
    return out


# ---------------------------------------------------------------- views


def count_neutral(board):
    n = 0
    for c in NEUTRAL:
        if board[c] == "A":
            n += 1
    return n


def view(state, viewer=None):
    """Everything in Ringo is public; viewer changes nothing."""
    board = state["board"]
    cells = {}
    for i in range(1, NCELLS):
        if board[i] == "A":
            cells[NAMES[i]] = ATT
        elif board[i] == "D":
            cells[NAMES[i]] = DEF
    h = state["hand"]
    return {
        "cells": cells,
        "castle": state["castle"],
        "turn": state["turn"],
        "turns": state["turns"],
        "quiet": state["quiet"],
        "attackers": board.count("A") + state["castle"],
        "defenders": board.count("D"),
        "neutral": {"attackers": count_neutral(board), "limit": neutral_limit(state["options"], board.count("D"))},
        "last": state["last"],
        "hand": None if h is None else {
            "off": [NAMES[c] for c in h["off"]], "extra": [NAMES[c] for c in h["extra"]], "castle": h["castle"],
        },
        "picture": picture(board, state["castle"]),
    }


def picture(board, castle=0):
    """The board as text: one line per ring, outer ring first, slices n a b c d e f g."""
    lines = ["     n a b c d e f g"]
    for r in range(RINGS, 0, -1):
        first = _idx(r, 0)  # a ring's eight cells are consecutive: one slice, no per-cell call
        lines.append("  %d  %s" % (r, " ".join(board[first:first + 8])))
    lines.append("  castle %d" % castle)
    return lines
