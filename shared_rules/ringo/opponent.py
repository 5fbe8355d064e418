"""A computer player for Ringo, either side: for one-player games and move hints.

    best_move(state, strength=2) -> input      the move (or pass) to play now

Alpha-beta search (negamax) looking `strength` moves ahead (1 to 4: 1 sees only
its own move, 2 also the reply, ...). Pure and deterministic: the same position
and strength always give the same move; the state is not changed. Runs under
CPython and MicroPython (see docs/rules/ringo.md, "Computer opponent").
"""

from shared_rules.ringo import rules as ringo
from shared_rules.ringo.rules import ATT, CASTLE, DEF, OTHER, do_move, gen_moves, result

STRENGTHS = (1, 2, 3, 4)
DEFAULT_STRENGTH = 2

WIN = 100000
# Worth of an attacker by ring (index 1 = ring 1, next to the castle): nearer is stronger.
ADVANCE = (0, 60, 30, 16, 6, 0)
ATTACKER = 100
DEFENDER = 130
IN_CASTLE = 500
_RING = [0] + [(i - 1) // 8 + 1 for i in range(1, ringo.NCELLS)]
_PASS = -1  # moves are packed ints (ringo.pack); a pass is -1


def evaluate(board, castle):
    """Score of a position for the attackers (the defenders' score is its negative)."""
    s = IN_CASTLE * castle + ATTACKER * castle - DEFENDER * board.count("D")
    i = board.find("A", 1)
    while i > 0:
        s += ATTACKER + ADVANCE[_RING[i]]
        i = board.find("A", i + 1)
    return s


def _progress(side, mv):
    # a capture (captured field set), or an attacker moving in (RING[castle] is 0)
    return mv >= 4096 or (side == ATT and _RING[(mv >> 6) & 63] < _RING[mv & 63])


def _ordered(moves):
    """Captures and castle entries first, so alpha-beta cuts early."""
    first = []
    rest = []
    for mv in moves:
        if mv >= 4096 or (mv >> 6) & 63 == CASTLE:
            first.append(mv)
        else:
            rest.append(mv)
    return first + rest


def _moves(board, castle, side, opts):
    moves = gen_moves(board, castle, side, opts)
    if side == DEF and opts["defenders_may_pass"]:
        return _ordered(moves) + [_PASS]
    return _ordered(moves)


def _after(board, castle, side, quiet, mv):
    """(board, castle, quiet turns) after side plays mv (or passes)."""
    if mv == _PASS:
        return board, castle, quiet + 1
    nb, nc = do_move(board, castle, mv)
    return nb, nc, 0 if _progress(side, mv) else quiet + 1


def _search(board, castle, side, opts, quiet, depth, alpha, beta, ply, counter):
    counter[0] += 1
    w = result(board, castle, side, opts, quiet)
    if w is not None:
        if w == "draw":
            return 0
        # Sooner wins score higher, later losses less badly.
        return WIN - ply if w == side else ply - WIN
    if depth == 0:
        e = evaluate(board, castle)
        return e if side == ATT else -e
    best = -WIN - 1
    for mv in _moves(board, castle, side, opts):
        nb, nc, q = _after(board, castle, side, quiet, mv)
        score = -_search(nb, nc, OTHER[side], opts, q, depth - 1, -beta, -alpha, ply + 1, counter)
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
    return best


def choose(board, castle, side, opts, quiet=0, strength=DEFAULT_STRENGTH, counter=None):
    """(move, score, nodes searched): the best packed move for side, -1 for a pass, None if none."""
    if counter is None:
        counter = [0]
    best_mv, best = None, -WIN - 2
    alpha, beta = -WIN - 1, WIN + 1
    for mv in _moves(board, castle, side, opts):
        nb, nc, q = _after(board, castle, side, quiet, mv)
        score = -_search(nb, nc, OTHER[side], opts, q, strength - 1, -beta, -alpha, 1, counter)
        if score > best:
            best_mv, best = mv, score
            alpha = max(alpha, score)
    return best_mv, best, counter[0]


def best_move(state, strength=DEFAULT_STRENGTH):
    """The input the computer plays for the side to move in state (a Ringo game state).

    strength is how many moves ahead it looks (1-4). The state is not changed.
    Raises ValueError for a finished game or a strength outside 1-4.
    """
    if strength not in STRENGTHS:
        raise ValueError("strength must be 1, 2, 3 or 4, got %r" % (strength,))
    if state["over"]:
        raise ValueError("the game is over; there is no move to suggest")
    side = state["turn"]
    mv, _score, _nodes = choose(state["board"], state["castle"], side, state["options"], state["quiet"], strength)
    if mv is None:
        raise ValueError("the %s have no legal move" % side)
    if mv == _PASS:
        return {"t": "pass", "by": DEF}
    frm, to, _cap = ringo.unpack(mv)
    return {"t": "move", "by": side, "from": ringo.NAMES[frm], "to": ringo.NAMES[to]}


__all__ = ["DEFAULT_STRENGTH", "STRENGTHS", "best_move", "choose", "evaluate"]
