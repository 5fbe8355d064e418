"""The rules contract itself (shared_rules/engine.py), with a toy game: take 1 or 2 stones, last stone wins."""

from rtest import Illegal, Match, Rng, check_replay, clone, dumps, engine, raises, random_playouts, says


class Nim:
    NAME = "nim"
    TITLE = "Toy Nim"
    OPTIONS = {"stones": {"default": 7, "choices": [5, 7, 9], "help": "stones on the table"}}  # noqa: RUF012
    SENSED = ()

    @staticmethod
    def setup(options, seed):
        return {"game": "nim", "options": options, "rng": engine.seed_rng(seed), "over": False,
                "winner": None, "stones": options["stones"], "turn": "red"}

    @staticmethod
    def awaiting(state):
        return [] if state["over"] else [state["turn"]]

    @staticmethod
    def legal(state):
        if state["over"]:
            return []
        return [{"t": "take", "by": state["turn"], "n": n} for n in (1, 2) if n <= state["stones"]]

    @staticmethod
    def apply(state, inp):
        if inp.get("by") != state["turn"]:
            raise Illegal("it is %s's turn, not %s's" % (state["turn"], inp.get("by")))
        n = inp.get("n")
        if n not in (1, 2) or n > state["stones"]:
            raise Illegal("cannot take %r stones" % (n,))
        fx = []
        state["stones"] -= n
        engine.say(fx, "%s takes %d" % (state["turn"], n))
        if state["stones"] == 0:
            state["over"] = True
            state["winner"] = state["turn"]
            engine.cue(fx, "game.won", side=state["turn"])
        else:
            state["turn"] = "blue" if state["turn"] == "red" else "red"
            engine.cue(fx, "turn", side=state["turn"])
        return fx

    @staticmethod
    def view(state, viewer):
        return {"stones": state["stones"], "turn": state["turn"]}


def test_dumps_is_canonical_json():
    assert dumps({"b": [1, None, True], "a": "x\"y\n\u00e9"}) == '{"a":"x\\"y\\n\\u00e9","b":[1,null,true]}'
    assert dumps({"z": 1, "a": 2, "m": 3}) == '{"a":2,"m":3,"z":1}'
    assert raises(TypeError, dumps, {"a": object()})


def test_clone_is_deep():
    a = {"x": [1, {"y": 2}], "t": (1, 2)}
    b = clone(a)
    b["x"][1]["y"] = 3
    assert a["x"][1]["y"] == 2
    assert b["t"] == [1, 2]


def test_seeded_generator_gives_the_same_numbers_on_both_interpreters():
    # These exact numbers are checked under CPython and MicroPython alike.
    st = {"rng": engine.seed_rng(42)}
    got = [engine.rand_below(st, 1000) for _ in range(6)]
    assert got == [191, 807, 910, 999, 581, 33], got
    items = list(range(8))
    engine.shuffle(st, items)
    assert sorted(items) == list(range(8))
    r1, r2 = Rng(5), Rng(5)
    assert [r1.below(100) for _ in range(20)] == [r2.below(100) for _ in range(20)]
    assert raises(ValueError, engine.rand_below, st, 0)


def test_options_are_completed_and_checked():
    assert engine.complete_options(Nim, None) == {"stones": 7}
    assert engine.complete_options(Nim, {"stones": 9}) == {"stones": 9}
    e = raises(Illegal, engine.complete_options, Nim, {"stone": 9})
    assert "unknown option 'stone'" in str(e) and "stones" in str(e)
    e = raises(Illegal, engine.complete_options, Nim, {"stones": 4})
    assert "stones=4" in str(e)


def test_illegal_input_leaves_the_state_unchanged():
    m = Match(Nim, {"stones": 5}, seed=3)
    before = dumps(m.state)
    e = raises(Illegal, m.apply, {"t": "take", "by": "blue", "n": 1})
    assert "red's turn" in str(e)
    raises(Illegal, m.apply, {"t": "take", "by": "red", "n": 3})
    raises(Illegal, m.apply, "take")
    assert dumps(m.state) == before and m.inputs == []


def test_match_logs_announcements_undoes_and_replays():
    m = Match(Nim, {"stones": 5}, seed=3)
    m.apply({"t": "take", "by": "red", "n": 2})
    m.apply({"t": "take", "by": "blue", "n": 1})
    assert m.view()["log"] == ["red takes 2", "blue takes 1"]
    assert m.undo() == {"t": "take", "by": "blue", "n": 1}
    assert m.state["stones"] == 3 and m.view()["log"] == ["red takes 2"]
    m.apply({"t": "take", "by": "blue", "n": 2})
    fx = m.apply({"t": "take", "by": "red", "n": 1})
    assert m.over and m.view()["winner"] == "red" and m.awaiting() == []
    assert says(fx) == ["red takes 1"]
    raises(Illegal, m.apply, {"t": "take", "by": "blue", "n": 1})
    check_replay(m)
    data = m.to_data()
    assert data["inputs"][0] == {"t": "take", "by": "red", "n": 2}
    assert dumps(Match.restore(Nim, data).state) == dumps(m.state)


def test_random_playouts_always_end_with_a_winner():
    wins = random_playouts(Nim, {"stones": 9}, games=50, seed=2)
    assert sum(wins.values()) == 50 and "step-cap" not in wins
    assert sorted(wins) == ["blue", "red"] or len(wins) == 1
    m, steps, finished = engine.playout(Nim, {"stones": 9}, 11, 100)
    m2, steps2, _ = engine.playout(Nim, {"stones": 9}, 11, 100)
    assert finished and steps == steps2 and dumps(m.state) == dumps(m2.state)
