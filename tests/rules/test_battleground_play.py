"""Battleground: random playouts keep the table consistent, replay and undo, the example script."""

import json

from rtest import Illegal, Match, Rng, check_replay, clone, dumps, load, random_playouts, scale

BG = load("battleground")
OPTION_SETS = (
    {},
    {"armory": "on"},
    {"warriors": 1, "power_disks": 0, "bricks": 0},
    {"warriors": 8, "flags": 5, "power_disks": 4, "armory": "on"},
)
# From the rules module's own path: the tests may run from any directory, under either interpreter.
EXAMPLE = BG.__file__.rsplit("/", 3)[0] + "/docs/examples/battleground.jsonl"


def table_is_consistent(m, inp, fx):
    """What the LEDs and the page show always adds up, whatever the random players did."""
    s = m.state
    for side in BG.SIDES:
        b = s["balcony"][side]
        if b is not None:
            assert b not in s["down"], "balcony figure %s is out after %r" % (b, inp)
            assert side + ".gate" not in s["down"], "someone on the balcony behind a fallen gate after %r" % (inp,)
        if not s["over"]:
            assert side + ".hero" not in s["down"], "a hero is out but the game goes on after %r" % (inp,)
        for f in s["power"]:
            assert s["power"][f] > 0
        assert 0 <= s["rams"][side] <= BG.RAM_USES
    for p in s["restand"]:
        assert p not in s["down"], "%s must be stood up but is out" % p
    assert len(s["down"]) == len(set(s["down"]))
    if s["over"]:
        assert s["winner"] in BG.SIDES and BG.other(s["winner"]) + ".hero" in s["down"]
        assert s["pending"] == [] and BG.legal(s) == []
    elif s["phase"] == "play":
        assert s["shot"] is not None or s["pending"] or s["actions"] > 0
        assert m.awaiting() == [s["pending"][0]["by"] if s["pending"] else s["turn"]]


def same_view_for_everyone(m, inp, fx):
    view = dumps(BG.view(m.state, None))
    assert view == dumps(BG.view(m.state, "orcs")) == dumps(BG.view(m.state, "knights"))
    dumps(m.state)  # plain data throughout


def test_random_playouts_finish_with_exactly_one_winner_and_a_consistent_table():
    for n, options in enumerate(OPTION_SETS):
        games = scale(60, 10)
        winners = random_playouts(BG, options, games=games, seed=50 + n, max_steps=BG.MAX_STEPS, each=table_is_consistent)
        assert sorted(winners) in (["knights", "orcs"], ["orcs"], ["knights"]), winners
        assert sum(winners.values()) == games


def test_nothing_on_the_table_is_secret_so_every_viewer_sees_the_same_view():
    random_playouts(BG, {"armory": "on"}, games=scale(6, 2), seed=77, max_steps=BG.MAX_STEPS, each=same_view_for_everyone)


def test_random_playouts_reach_every_rule():
    """The random player is a fair stand-in for the table: every cue a rule emits turns up."""
    seen = {}

    def note(m, inp, fx):
        for e in fx:
            if e["t"] == "cue":
                seen[e["cue"]] = True

    random_playouts(BG, {"armory": "on", "power_disks": 4}, games=scale(40, 12), seed=3, max_steps=BG.MAX_STEPS, each=note)
    expected = [
        "actions", "brick.removed", "extra.turn", "figure.out", "figure.revived", "flag.down", "flags.captured",
        "flags.restand", "gate.down", "hero.early", "power", "ram.return", "setup.step", "shot.open", "shot.over",
        "stood", "turn", "turn.missed", "win",
    ]
    assert [c for c in expected if c not in seen] == []


def test_every_legal_input_is_accepted_and_refusals_leave_the_state_unchanged():
    for n, options in enumerate(OPTION_SETS):
        m = Match(BG, options, n)
        rng = Rng(n)
        steps = 0
        while not m.over and steps < scale(150, 25):
            choices = m.legal()
            for inp in choices:
                BG.apply(clone(m.state), inp)  # raises if a listed input is refused
            before = dumps(m.state)
            try:
                m.apply({"t": "fire", "by": m.awaiting()[0], "weapon": "nowhere.cannon", "crew": "nobody"})
            except Illegal:
                pass
            assert dumps(m.state) == before
            m.apply(rng.choice(choices))
            steps += 1


def test_replaying_the_log_gives_the_live_state_and_undo_restores():
    for n, options in enumerate(OPTION_SETS):
        m = Match(BG, options, 10 + n)
        rng = Rng(n)
        while not m.over:
            m.apply(rng.choice(m.legal()))
        check_replay(m)
        # and from the middle of a game
        half = Match(BG, options, 10 + n)
        for inp in m.inputs[: len(m.inputs) // 2]:
            half.apply(inp)
        check_replay(half)


def test_same_seed_same_game():
    a = random_playouts(BG, {"armory": "on"}, games=scale(8, 3), seed=9, max_steps=BG.MAX_STEPS)
    b = random_playouts(BG, {"armory": "on"}, games=scale(8, 3), seed=9, max_steps=BG.MAX_STEPS)
    assert a == b


def example_match():
    with open(EXAMPLE) as f:
        lines = [ln for ln in f.read().split("\n") if ln.strip() and not ln.startswith("#")]
    head = json.loads(lines[0])
    m = Match(BG, head["options"], head["seed"])
    for ln in lines[1:]:
        m.apply(json.loads(ln))
    return m


def test_the_example_script_plays_to_an_orc_victory():
    m = example_match()
    view = m.view()
    assert view["over"] and view["winner"] == "orcs" and view["awaiting"] == []
    assert view["log"][-2:] == ["The Knight hero falls, the last of its army.", "The Orcs win the battle!"]
    assert "The Orcs miss their turn." in view["log"]
    check_replay(m)


def test_garbled_inputs_are_refused_with_a_reason_never_a_crash():
    junk = [None, 7, "", "x", "orcs.warrior99", "orcs.warrior0", "orcs.", "knights.hero", "orcs.gate", [], {}, "balcony"]
    types = ["fell", "stood", "power", "balcony", "confirm", "fire", "crew", "over", "move", "end", "reward", "revive"]
    rng = Rng(11)
    for n, options in enumerate(OPTION_SETS[:2]):
        m = Match(BG, options, n)
        steps = 0
        while not m.over and steps < scale(120, 40):
            choices = m.legal()
            bad = dict(rng.choice(choices))
            field = rng.choice(["t", "by", "piece", "weapon", "crew", "to", "check", "choice"])
            if rng.below(3) == 0:
                bad.pop(field, None)
            else:
                bad[field] = rng.choice(junk + types)
            before = dumps(m.state)
            try:
                m.apply(bad)
            except Illegal as e:
                assert str(e), "an empty reason for %r" % (bad,)
                assert dumps(m.state) == before
            if not m.over:  # a garbled input may have been accepted (e.g. a harmless tilt)
                m.apply(rng.choice(m.legal()))
            steps += 1
