# rules-test: cpython-only (reads and writes its recorded transcripts with pathlib; the rules under
# MicroPython are held to the same inputs by test_micropython.py)
"""Every game, as the players live it, recorded: a change to what any game says, cues, prompts, shows a
viewer or refuses fails a test, whatever the tests written by hand look at.

For each game, one seeded random game per choice of each option (the others at their defaults): at every
step the legal input taken, everything it made (what is said to whom, the cues the table lights and sounds,
the prompts), the public view and each side's own view, and the answer to an input taken from earlier in
the game tried on a copy (often refused: the reason a player is given is recorded too). The transcript is
kept as a running SHA-256, 8 hex digits a step, in transcripts.json; a change shows the first step that
differs, its input and what the rules make of it now.

A deliberate change of the rules' words or behaviour is recorded again with
    .venv/bin/python tests/rules/test_transcripts.py --write
and the diff of transcripts.json is reviewed with it.
"""

import hashlib
import json
import pathlib
import sys

from rtest import Illegal, Match, Rng, clone, dumps, load

from shared_rules import GAMES

RECORDED = pathlib.Path(__file__).with_name("transcripts.json")
STEPS = 300  # a game's first steps: the short games to their end, the long ones well into play
LONG = {"medieval-madness": 900}  # a game of many rounds: its trials, champions and bankruptcies come late
SEEDS = (11, 12)  # two games a variant: two draws of the random sides, cups and boards


def variants(game):
    """(name, options): the defaults, then each option's every other choice alone."""
    out = [("default", {})]
    for key in sorted(game.OPTIONS):
        choices = game.OPTIONS[key].get("choices")
        for c in choices or ():
            if c != game.OPTIONS[key]["default"]:
                out.append(("%s=%s" % (key, dumps(c)), {key: c}))
    return out


def transcript(game, options, seed, steps=STEPS):
    """[(step hash, input, what it made)] of one seeded random game; a game that refuses these options: []."""
    try:
        m = Match(game, options, seed)
    except Illegal:
        return []  # an option that needs another (plingpong's removed colour wants 3 players)
    rng = Rng(seed * 7919 + 1)
    h = hashlib.sha256()
    out, taken, viewers = [], [], set()
    for _ in range(steps):
        if m.over:
            break
        legal = game.legal(m.state)
        inp = rng.choice(legal)
        fx = m.apply(inp)
        taken.append(inp)
        for v in (m.awaiting() or ()):
            viewers.add(v)
        for e in fx:
            if e.get("to") is not None:
                viewers.add(e["to"])
        probe = taken[rng.below(len(taken))] if len(taken) > 1 else inp
        try:
            tried = game.apply(clone(m.state), clone(probe))
        except Illegal as e:
            tried = "refused: %s" % e
        views = [m.view(None)] + [m.view(v) for v in sorted(viewers, key=dumps)]
        made = dumps([inp, fx, probe, tried, views])
        h.update(made.encode())
        out.append((h.hexdigest()[:8], inp, fx))
    return out


def record(name):
    game = load(name)
    return {"%s seed %d" % (v, seed): [s for s, _i, _f in transcript(game, opts, seed, LONG.get(name, STEPS))]
            for v, opts in variants(game) for seed in SEEDS}


def check(name):
    recorded = json.loads(RECORDED.read_text())[name]
    game = load(name)
    for v, opts in [("%s seed %d" % (v, seed), opts) for v, opts in variants(game) for seed in SEEDS]:
        now = transcript(game, opts, int(v.rpartition(" ")[2]), LONG.get(name, STEPS))
        was = recorded.get(v)
        assert was is not None, "%s %s: no transcript recorded (record them: %s --write)" % (name, v, __file__)
        steps = [s for s, _i, _f in now]
        if steps == was:
            continue
        k = next((i for i, (a, b) in enumerate(zip(steps, was)) if a != b), min(len(steps), len(was)))
        if k < len(now):
            _s, inp, fx = now[k]
            raise AssertionError("%s %s changed at step %d of %d: input %s now makes %s" % (
                name, v, k + 1, len(was), dumps(inp), dumps(fx)[:600]))
        raise AssertionError("%s %s now ends after %d steps, recorded %d" % (name, v, len(steps), len(was)))


def test_medieval_pong_plays_as_recorded():
    check("medieval-pong")


def test_plingpong_plays_as_recorded():
    check("plingpong")


def test_battleground_plays_as_recorded():
    check("battleground")


def test_ringo_plays_as_recorded():
    check("ringo")


def test_medieval_madness_plays_as_recorded():
    check("medieval-madness")


def test_every_game_has_its_test():
    tested = {n[5:-len("_plays_as_recorded")].replace("_", "-") for n in globals() if n.endswith("_plays_as_recorded")}
    assert tested == set(GAMES)


if __name__ == "__main__" and "--write" in sys.argv:
    RECORDED.write_text(json.dumps({n: record(n) for n in sorted(GAMES)}, indent=0, sort_keys=True) + "\n")
    print("recorded %s" % RECORDED)
