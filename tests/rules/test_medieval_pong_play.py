"""Medieval Pong under random play: every option set ends with one winner, replays exactly,
and never lets a hidden character, crown or trap reach the public view, the other side or a public announcement."""

from rtest import (
    ON_MICROPYTHON,
    Illegal,
    Match,
    check_replay,
    clone,
    dumps,
    engine,
    load,
    random_playouts,
    scale,
)

PONG = load("medieval-pong")

OPTION_SETS = [
    {},
    {"tactical": True},
    {"extra_throw": "both"},
    {"sets": 2},
    {"team": "custom"},
    {"team": "full-set", "first": "blue"},
    {"team": "ultimate-defense"},
    {"team": "challenges-galore"},
    {"team": "elite-marksmen"},
    {"team": "single-target", "tactical": True},
    {"team": "vanished-dragon", "extra_throw": "red"},
]


def test_random_playouts_of_every_option_set_end_with_exactly_one_winner():
    for i, opts in enumerate(OPTION_SETS):
        wins = random_playouts(PONG, opts, games=scale(200, 40), seed=100 + i)
        assert sorted(wins) in (["blue", "red"], ["blue"], ["red"]), (opts, wins)


def test_same_seed_same_games():
    a = engine.playout(PONG, {"team": "full-set"}, 5, 3000)[0]
    b = engine.playout(PONG, {"team": "full-set"}, 5, 3000)[0]
    assert dumps(a.state) == dumps(b.state)


def _hidden(state, s):
    tw = state["sides"][s]["towers"]
    return [t for t in sorted(tw) if tw[t]["st"] == "up" and not tw[t]["known"]]


def _reshuffled(state, s, among):
    """The same position with side s's secrets moved around the towers `among`."""
    other = clone(state)
    tw = other["sides"][s]["towers"]
    if len(among) > 1:
        contents = [(tw[t]["ch"], tw[t]["crown"]) for t in among]
        contents = contents[1:] + contents[:1]
        for t, (ch, crown) in zip(among, contents):
            tw[t]["ch"] = ch
            tw[t]["crown"] = crown
        side = other["sides"][s]
        if side["trap"] in among:
            side["trap"] = among[(among.index(side["trap"]) + 1) % len(among)]
    return other


def _seen_by(fx, viewer):
    """The effects a viewer (None = the public) gets: cues, and says/prompts to the public or to it."""
    return [e for e in fx if e["t"] == "cue" or e.get("to") is None or e.get("to") == viewer]


def secrets_kept(pre, inp, fx, post):
    """Moving side s's still-hidden secrets changes nothing the public or the other side can see."""
    for s in ("blue", "red"):
        o = "red" if s == "blue" else "blue"
        # Rotate what hides in towers that stay hidden and already hold something (placing into
        # an empty tower stays legal), leaving alone the tower the input names.
        tw = pre["sides"][s]["towers"]
        keep = [t for t in _hidden(pre, s) if t in _hidden(post, s) and t != inp.get("tower")
                and (tw[t]["ch"] is not None or tw[t]["crown"])]
        moved = _reshuffled(pre, s, keep)
        try:
            fx2 = PONG.apply(moved, inp)
        except Illegal:
            # Only the owner's own decision may depend on where its secrets are.
            assert inp.get("by") == s, (inp, s)
            continue
        # Plain-data equality (==) is what dumps() would compare, only faster.
        assert PONG.view(post, None) == PONG.view(moved, None), "public view leaks %s's secrets" % s
        assert _seen_by(fx, None) == _seen_by(fx2, None), "public effects leak %s's secrets" % s
        if inp["t"] != "ask":  # the Seer's answer to o is o's to know
            assert PONG.view(post, o) == PONG.view(moved, o), "%s's view leaks %s's secrets" % (o, s)
            assert _seen_by(fx, o) == _seen_by(fx2, o), "%s hears %s's secrets" % (o, s)


def test_hidden_information_never_reaches_the_public_or_the_other_side():
    checked = 0
    for i, opts in enumerate(OPTION_SETS):
        for g in range(scale(12, 3)):
            m = Match(PONG, opts, 300 + 10 * i + g, keep_log=False)
            rng = engine.Rng(g)
            while not m.over:
                inp = rng.choice(m.legal())
                pre = m.state
                fx = m.apply(inp)
                secrets_kept(pre, inp, fx, m.state)
                checked += 1
    assert checked > 1000 or checked > 100 and ON_MICROPYTHON


def test_replay_of_the_log_reaches_the_live_state_and_undo_restores():
    for i, opts in enumerate(OPTION_SETS):
        for g in range(scale(4, 1)):
            m, _steps, finished = engine.playout(PONG, opts, 500 + 10 * i + g, 3000)
            assert finished
            live = Match(PONG, opts, 500 + 10 * i + g)
            rng = engine.Rng(500 + 10 * i + g + 1)
            while not live.over:
                live.apply(rng.choice(live.legal()))
            assert dumps(live.state) == dumps(m.state)
            check_replay(live)
            restored = Match.restore(PONG, live.to_data())
            assert dumps(restored.state) == dumps(live.state)


def test_every_legal_input_is_accepted_and_the_public_log_reads_aloud():
    m = Match(PONG, {"team": "challenges-galore"}, 9)
    rng = engine.Rng(10)
    while not m.over:
        choices = m.legal()
        for inp in choices[:: max(1, len(choices) // 5)]:
            trial = Match(PONG, m.options, m.seed)
            trial.state = clone(m.state)
            trial.apply(inp)  # raises if legal() lists something apply refuses
        m.apply(rng.choice(choices))
    log = m.view(None)["log"]
    assert log[-1].endswith("wins!") and all(line[-1] in ".!" for line in log), log
