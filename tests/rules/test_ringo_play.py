"""Ringo: random playouts of every variant, the same games read from the sensors, replay and undo, the example.

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

import json

from rtest import Match, Rng, check_replay, dumps, load, random_playouts, scale

ringo = load("ringo")
ROOT = ringo.__file__.rsplit("/", 3)[0]
A = "attackers"
D = "defenders"

VARIANTS = [
    {},
    {"attackers": 5},
    {"attackers": 6},
    {"enter_from_neutral": False},
    {"defenders_may_pass": True},
    {"neutral_limit": "one"},
    {"quiet_draw": 50},
    {"attackers": 5, "enter_from_neutral": False, "defenders_may_pass": True, "neutral_limit": "one"},
]


def invariants(m, inp, fx):
    """What must hold after every input of every game."""
    st = m.state
    board = st["board"]
    start = m.options["attackers"]
    assert board.count("A") + st["castle"] <= start and board.count("D") <= 4
    nz = ringo.count_neutral(board)
    assert nz <= ringo.neutral_limit(m.options, board.count("D")), "Neutral Zone over its limit: " + board
    assert 0 <= st["castle"] <= 2 and (st["castle"] < 2 or st["winner"] == A)
    limit = m.options["quiet_draw"]
    assert st["over"] or not limit or st["quiet"] < limit
    assert st["over"] == (m.awaiting() == [])
    if st["turns"] % 16 == 0 or st["over"]:
        # Everything is public in Ringo: no side sees more than the table.
        pub = m.view(None)
        for side in (A, D):
            v = m.view(side)
            v["log"] = pub["log"]
            assert dumps(v) == dumps(pub)
        assert "rng" not in pub
    if st["over"]:
        assert st["winner"] in (A, D, None)
        assert m.legal() == []


def test_random_playouts_of_every_variant_finish_with_one_winner_or_a_draw():
    for i in range(len(VARIANTS)):
        opts = VARIANTS[i]
        games = scale(200 if i == 0 else 60)
        won = random_playouts(ringo, opts, games=games, seed=11 + i, max_steps=ringo.MAX_STEPS, each=invariants)
        assert "step-cap" not in won, (opts, won)
        assert sum(won.values()) == games
        assert set(won) <= {A, D, "null"}, won
        assert won.get(A, 0) > 0, (opts, won)


def test_same_seed_same_games():
    one = random_playouts(ringo, {}, games=5, seed=3)
    two = random_playouts(ringo, {}, games=5, seed=3)
    assert one == two


def test_replay_of_the_log_equals_the_live_game_and_undo_restores():
    for i in range(len(VARIANTS)):
        m = Match(ringo, VARIANTS[i], 40 + i)
        rng = Rng(i)
        while not m.over:
            m.apply(rng.choice(m.legal()))
        check_replay(m)
        restored = Match.restore(ringo, json.loads(json.dumps(m.to_data())))
        assert dumps(restored.state) == dumps(m.state)


# ---------------------------------------------------------------- the same games, read from the sensors


def sensor_events(m, inp, rng):
    """The cell changes a player makes on the table for a move input, in a random valid order.

    Sometimes a piece is first lifted and put back, or set down on a wrong cell and then corrected.
    """
    st = m.state
    frm, to = ringo.INDEX[inp["from"]], ringo.INDEX[inp["to"]]
    for mv in ringo.gen_moves(st["board"], st["castle"], st["turn"], m.options):
        if ringo.unpack(mv)[:2] == (frm, to):
            break
    off, extra, dc = ringo._expect(mv)
    steps = [("cell", ringo.NAMES[c], False) for c in off]
    steps += [("cell", ringo.NAMES[c], True) for c in extra]
    if dc > 0:
        steps.append(("cell", "castle", True))
    if dc < 0:
        steps.append(("cell", "castle", False))
    # The engine accepts the changes of one move in any order.
    rng_order = list(range(len(steps)))
    for k in range(len(rng_order) - 1, 0, -1):
        j = rng.below(k + 1)
        rng_order[k], rng_order[j] = rng_order[j], rng_order[k]
    out = []
    r = rng.below(10)
    if r == 0:
        out += [{"t": "cell", "cell": inp["from"], "occupied": False}, {"t": "cell", "cell": inp["from"], "occupied": True}]
    elif r == 1:
        dests = {x["to"] for x in m.legal() if x["t"] == "move" and x["from"] == inp["from"]}
        empty = [ringo.NAMES[c] for c in range(1, ringo.NCELLS) if st["board"][c] == "." and ringo.NAMES[c] not in dests]
        if empty:
            wrong = rng.choice(empty)
            out += [
                {"t": "cell", "cell": inp["from"], "occupied": False},
                {"t": "cell", "cell": wrong, "occupied": True},
                {"t": "cell", "cell": wrong, "occupied": False},
                {"t": "cell", "cell": inp["from"], "occupied": True},
            ]
    for k in rng_order:
        _, name, occ = steps[k]
        out.append({"t": "cell", "cell": name, "occupied": occ})
    return out


def test_random_games_played_on_the_sensors_reach_the_same_positions():
    for g in range(scale(30)):
        opts = VARIANTS[g % len(VARIANTS)]
        typed = Match(ringo, opts, g)
        sensed = Match(ringo, opts, g)
        rng = Rng(100 + g)
        while not typed.over:
            inp = rng.choice(typed.legal())
            if inp["t"] == "move":
                events = sensor_events(sensed, inp, rng)
                for e in events[:-1]:
                    sensed.apply(e)
                    assert sensed.state["turn"] == typed.state["turn"], "a move was made before its last sensor change"
                sensed.apply(events[-1])
            else:
                sensed.apply(inp)
            typed.apply(inp)
            assert sensed.state["hand"] is None
            assert sensed.state["board"] == typed.state["board"] and sensed.state["castle"] == typed.state["castle"]
        assert sensed.over and sensed.state["winner"] == typed.state["winner"]
        # The sensed game also spoke each wrong placement; otherwise the two tell the same story.
        told = [a for a in sensed.announcements if not a.startswith("That is not a legal move")]
        assert told == typed.announcements


def test_a_random_player_fumbling_with_the_pieces_still_finishes_the_game():
    # Now and then a piece of the side to play is lifted; from then on the random
    # player picks among what legal() offers: the sensor changes that put it back
    # or carry a move on. Every offered change must be accepted and the game end.
    for g in range(scale(12)):
        m = Match(ringo, VARIANTS[g % len(VARIANTS)], g)
        rng = Rng(500 + g)
        steps = 0
        while not m.over and steps < 4000:
            if m.state["hand"] is None and rng.below(3) == 0:
                moves = [i for i in m.legal() if i["t"] == "move"]
                if moves:
                    m.apply({"t": "cell", "cell": rng.choice(moves)["from"], "occupied": False})
            else:
                m.apply(rng.choice(m.legal()))
            steps += 1
        assert m.over, "game %d did not finish in %d sensor changes" % (g, steps)
        check_replay(m)


# ---------------------------------------------------------------- the example


def test_the_example_script_plays_to_the_attackers_win():
    with open(ROOT + "/docs/examples/ringo.jsonl") as f:
        lines = [ln for ln in f.read().split("\n") if ln.strip() and not ln.startswith("#")]
    head = json.loads(lines[0])
    m = Match(ringo, head["options"], head["seed"])
    for ln in lines[1:]:
        m.apply(json.loads(ln))
    v = m.view()
    assert v["over"] and v["winner"] == A and v["castle"] == 2
    assert v["log"][-1] == "Two attackers hold the castle. The attackers win!"
    check_replay(m)
