"""PlingPong: random playouts of every variation, replay and undo, refused inputs, views, the example script."""

import json

from rtest import Illegal, Match, Rng, check_replay, clone, dumps, load, raises, random_playouts, scale

PP = load("plingpong")
OPTION_SETS = [
    {},
    {"players": 2},
    {"players": 3},
    {"players": 8},
    {"variant": "speed"},
    {"variant": "high-stack"},
    {"rerack": True},
    {"players": 3, "removed": "green", "variant": "high-stack", "rerack": True},
]
HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."  # MicroPython gives a bare name from the cwd
EXAMPLE = HERE + "/../../docs/examples/plingpong.jsonl"


def sides_with_cups(m):
    return [s for s in sorted(m.state["colours"]) if PP._has_cups(m.state, s)]


def table_is_sound(m, inp, fx):
    """What a player would notice if it broke: cups appearing from nowhere, a stuck game, a wrong winner."""
    s = m.state
    for colour in s["trays"]:
        on_board = 0
        for t in s["trays"]:
            for i in range(6):
                assert (s["cups"][t][i] is None) == (s["height"][t][i] == 0), "space %s.%d" % (t, i + 1)
                if s["cups"][t][i] == colour:
                    on_board += s["height"][t][i]
        assert on_board <= 6, "more than 6 %s cups on the table after %r" % (colour, inp)
    for e in fx:
        if e["t"] == "say":
            assert e["to"] is None and e["text"][-1] in ".!", e["text"]  # whole sentences, read aloud
    if m.over:
        assert m.awaiting() == [] and PP.legal(s) == []
        left = sides_with_cups(m)
        if s["winner"] is None:
            assert left == [], left
        elif s["options"]["variant"] == "speed":
            assert s["winner"] not in left  # cleared their own colour first
        else:
            assert left == [s["winner"]]
    else:
        assert m.awaiting() and PP.legal(s)
        if s["phase"] == "round" and s["shot"] == 0 and s["options"]["variant"] != "speed":
            for p in s["order"]:  # nobody without cups shoots
                assert PP._has_cups(s, s["side"][p]), "%s shoots without cups" % p


def test_random_playouts_of_every_variation_finish_with_one_winner_or_a_draw():
    for k, options in enumerate(OPTION_SETS):
        games = scale(150, 25)
        winners = random_playouts(PP, options, games=games, seed=10 + k, max_steps=PP.MAX_STEPS, each=table_is_sound)
        assert winners.get("step-cap", 0) == 0, (options, winners)
        n = options.get("players", 4)
        sides = ["green", "red", "yellow", "blue"] if n == 8 else ["p%d" % (i + 1) for i in range(n)]
        for key in winners:
            assert key in sides or key == "null", (options, winners)
        if options.get("variant") == "speed":
            assert "null" not in winners  # somebody always clears first


def test_replay_of_the_log_equals_the_live_game_and_undo_restores():
    for k, options in enumerate(OPTION_SETS):
        m = Match(PP, options, 100 + k)
        rng = Rng(k)
        steps = 0
        while not m.over and steps < PP.MAX_STEPS:
            m.apply(rng.choice(PP.legal(m.state)))
            steps += 1
            if steps == 37:
                check_replay(m)  # mid-game, in the middle of a round
        check_replay(m)
        again = Match.restore(PP, json.loads(json.dumps(m.to_data())))
        assert dumps(again.state) == dumps(m.state)


def test_same_seed_same_game():
    a = random_playouts(PP, {"rerack": True}, games=scale(10, 3), seed=3)
    b = random_playouts(PP, {"rerack": True}, games=scale(10, 3), seed=3)
    assert a == b


def test_refused_inputs_leave_the_game_unchanged():
    m = Match(PP, {"players": 4}, 2)
    rng = Rng(7)
    refused = 0
    while not m.over:
        before = clone(m.state)
        who = m.awaiting()[0]
        other = "p1" if who != "p1" else "p2"
        for bad in (
            {"t": "miss", "by": other},
            {"t": "score", "by": other},
            {"t": "ball", "cup": "purple.1"},
            {"t": "ball", "cup": 3},
            {"t": "shoot", "by": who},
            {"t": "void", "by": "p9"},
        ):
            if bad in PP.legal(m.state):
                continue
            e = raises(Illegal, m.apply, bad)
            assert str(e)
            refused += 1
            assert m.state == before, "refused %r changed the game" % bad
        m.apply(rng.choice(PP.legal(m.state)))
    assert refused > 100


def test_everything_is_in_plain_sight_every_viewer_sees_the_same_table():
    def same_for_all(m, inp, fx):
        public = dumps(m.view(None))
        for p in m.state["players"]:
            mine = m.view(p)
            mine["log"] = m.view(None)["log"]
            assert dumps(mine) == public

    random_playouts(PP, {"players": 3}, games=scale(6, 2), seed=5, max_steps=PP.MAX_STEPS, each=same_for_all,
                    keep_log=True)


def test_every_legal_input_is_accepted():
    m = Match(PP, {"players": 2, "variant": "high-stack"}, 4)
    rng = Rng(4)
    while not m.over:
        for inp in PP.legal(m.state):
            work = clone(m.state)
            PP.apply(work, inp)  # must not raise
        m.apply(rng.choice(PP.legal(m.state)))


def read_script(path):
    options, seed, inputs = {}, 0, []
    with open(path) as f:
        for line in f.read().split("\n"):
            line = line.strip()
            if not line or line[0] == "#":
                continue
            obj = json.loads(line)
            if "t" in obj:
                inputs.append(obj)
            else:
                options, seed = obj.get("options", {}), obj.get("seed", 0)
    return options, seed, inputs


def test_the_example_script_plays_to_the_end_and_player_1_wins():
    options, seed, inputs = read_script(EXAMPLE)
    m = Match(PP, options, seed)
    for inp in inputs:
        m.apply(inp)
    v = m.view()
    assert v["over"] and v["winner"] == "p1" and v["awaiting"] == []
    assert v["log"][-1] == "Player 1 (green and red) is the last with cups on the board. Player 1 wins!"
    assert "The Black Cup has 2 balls, an even number: its effect is cancelled." in v["log"]
    assert v["sides"]["p2"]["cups"] == 0
