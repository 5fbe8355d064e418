"""Medieval Madness: random playouts, replay and undo, the board file and its checks, the example script."""

import json

from rtest import Illegal, Match, Rng, check_replay, clone, dumps, load, raises, random_playouts, scale

from shared_rules.medieval_madness import board as mm_board

MM = load("medieval-madness")
ROOT = mm_board._here() + "/../.."


def standard_data():
    with open(mm_board.board_path("standard")) as f:
        return json.loads(f.read())


def books_balance(m, inp, fx):
    """Nothing is lost: every noble is with a player or in the treasury, or came from the bank."""
    s = m.state
    held = 0
    cottages = s["cottages_left"]
    for p in s["players"]:
        assert p["gold"] >= 0
        held += p["gold"]
        cottages += p["cottages"]
        if p["dungeon"]:
            assert p["at"] == mm_board.load_board("standard")["dungeon"]
    assert held + s["treasury"] == MM.START_TREASURY + s["bank_paid"], "gold appeared or vanished after %r" % inp
    assert cottages == MM.COTTAGES
    assert s["treasury"] >= 0


def test_random_playouts_finish_with_one_winner_and_the_books_balance():
    for n in (2, 3, 4):
        games = scale(120, 20)
        winners = random_playouts(MM, {"players": n}, games=games, seed=100 * n, max_steps=MM.MAX_STEPS,
                                  each=books_balance)
        assert sum(winners.values()) == games
        finished = games - winners.get("step-cap", 0)
        # Random players are poor economists; most games still crown someone within the cap.
        assert finished >= games * 8 // 10, winners
        for key in winners:
            assert key == "step-cap" or key in ["p%d" % (i + 1) for i in range(n)], winners


def test_a_won_game_has_exactly_one_king_and_nobody_to_wait_for():
    def check(m, inp, fx):
        if m.over:
            kings = [p["id"] for p in m.state["players"] if p["title"] == MM.KING]
            assert kings == [m.state["winner"]]
            assert m.awaiting() == [] and MM.legal(m.state) == []
            assert m.state["treasury"] == 0

    random_playouts(MM, {"players": 3}, games=scale(20, 5), seed=7, max_steps=MM.MAX_STEPS, each=check)


def test_replay_of_the_log_equals_the_live_game_and_undo_restores():
    for n in (2, 4):
        for seed in range(scale(3, 1)):
            m = Match(MM, {"players": n}, seed)
            rng = Rng(seed + 99)
            steps = 0
            while not m.over and steps < MM.MAX_STEPS:
                m.apply(rng.choice(MM.legal(m.state)))
                steps += 1
            check_replay(m)


def test_illegal_input_from_a_random_game_leaves_the_state_unchanged():
    m = Match(MM, {"players": 3}, 4)
    rng = Rng(103)
    for _ in range(200):
        legal = MM.legal(m.state)
        who = m.awaiting()[0]
        other = "p1" if who != "p1" else "p2"
        before = clone(m.state)
        bad = dict(legal[0])
        bad["by"] = other
        raises(Illegal, m.apply, bad)
        assert m.state == before
        m.apply(rng.choice(legal))
        if m.over:
            break


def test_girls_take_girls_titles():
    m = Match(MM, {"players": 2, "girls": "12"}, 1)
    m.state["players"][0]["gold"] = 4500
    fx = []
    MM._titles(m.state, m.state["players"][0], fx)
    assert m.view()["players"][0]["title"] == "Princess"
    MM._crown(m.state, m.state["players"][0], fx)
    assert m.view()["players"][0]["title"] == "Queen"


# ---------------------------------------------------------------- the board file


def test_standard_board_has_both_walls_with_the_required_spaces():
    b = mm_board.load_board("standard")
    kinds = [s["kind"] for s in b["spaces"]]
    for k in mm_board.KINDS:
        assert k in kinds, "the standard board has no %s space" % k
    assert b["spaces"][b["dungeon"]]["wall"] == "outer"
    assert b["spaces"][b["bridge_outer"]]["kind"] == "drawbridge"
    assert b["spaces"][b["bridge_inner"]]["wall"] == "inner"
    spaces = MM.board_view()
    assert [s["id"] for s in spaces] == list(range(len(spaces)))


def test_a_board_file_given_by_path_is_used():
    m = Match(MM, {"players": 2, "board": mm_board.board_path("standard")}, 3)
    m.apply({"t": "roll", "by": "p1", "dice": [3, 3]})
    assert m.view()["players"][0]["space_name"] == "Found a Purse"


def test_a_missing_board_file_is_named():
    e = raises(Illegal, Match, MM, {"players": 2, "board": "no/such/board.json"}, 1)
    assert "no/such/board.json" in str(e)


def bad_board(change):
    data = standard_data()
    change(data)
    return str(raises(Illegal, mm_board.parse_board, data, "myboard"))


def test_board_errors_name_the_space_and_field():
    def amount(d):
        d["outer"][5]["amount"] = -3

    msg = bad_board(amount)
    assert "outer wall space 5" in msg and "'amount'" in msg and "-3" in msg

    def kind(d):
        d["inner"][2]["kind"] = "jousting"

    msg = bad_board(kind)
    assert "inner wall space 2 (space number 30)" in msg and "'kind'" in msg and "jousting" in msg

    def typo(d):
        d["outer"][0]["ammount"] = 100

    msg = bad_board(typo)
    assert "outer wall space 0" in msg and "'ammount'" in msg

    def steps(d):
        d["inner"][14]["steps"] = 40

    assert "'steps'" in bad_board(steps)


def test_board_errors_for_missing_or_doubled_special_spaces():
    def no_dungeon(d):
        d["outer"][20] = {"kind": "collect", "amount": 10}

    assert "exactly 1 dungeon" in bad_board(no_dungeon)

    def two_bridges(d):
        d["inner"][1] = {"kind": "drawbridge"}

    assert "exactly 1 drawbridge" in bad_board(two_bridges)

    def no_trial(d):
        d["inner"][8] = {"kind": "joust"}

    assert "trial-by-combat" in bad_board(no_trial)

    def short(d):
        d["inner"] = d["inner"][:3]

    assert "'inner'" in bad_board(short)


# ---------------------------------------------------------------- the example script


def test_the_example_script_plays_to_a_crowned_winner():
    with open(ROOT + "/docs/examples/medieval-madness.jsonl") as f:
        lines = [ln for ln in f.read().split("\n") if ln.strip()]
    head = json.loads(lines[0])
    m = Match(MM, head["options"], head["seed"])
    for ln in lines[1:]:
        m.apply(json.loads(ln))
    v = m.view()
    assert v["over"] and v["winner"] == "p1"
    assert v["log"][-1] == "Long live King Player 1! Player 1 wins the crown and the game."


# ---------------------------------------------------------------- garbage in


GARBAGE_VALUES = [None, True, False, 0, -1, 7, 99, "p1", "p2", "p5", "", "inner", [], [1], [1, 2], [0, 7], ["a", "b"],
                  {}, {"x": 1}]
GARBAGE_TYPES = ["roll", "route", "challenge", "tournament", "trial", "champion", "use-pass", "buy-pass", "hire",
                 "sell-cottage", "pay-fine", "trade", "pawn", "bogus", None, 5]
GARBAGE_FIELDS = ["by", "dice", "wall", "player", "yes", "to", "price", "space"]


def test_garbage_inputs_are_refused_with_a_reason_or_accepted_never_crash():
    r = Rng(2024)
    for game in range(scale(12, 3)):
        m = Match(MM, {"players": 2 + game % 3}, game)
        for _ in range(150):
            if m.over:
                break
            inp = {"t": r.choice(GARBAGE_TYPES)}
            for f in GARBAGE_FIELDS:
                if r.below(2):
                    inp[f] = r.choice(GARBAGE_VALUES)
            if r.below(2):
                inp["by"] = m.awaiting()[0]
            before = dumps(m.state)
            try:
                m.apply(inp)
            except Illegal as e:
                assert str(e), "an empty reason for %r" % (inp,)
                assert dumps(m.state) == before
            if not m.over:
                m.apply(r.choice(MM.legal(m.state)))
