"""The bridge's match input log (host/battlement/table/matchlog.py): a list to every reader, and a long
game costs CPython's cycle collector nothing per input.

Every full collection walks each tracked container's items. A match's input log of plain dicts held in
one list made each collection walk every input ever applied: the bridge's soak games reached a million
inputs, and each collection took 100-230 ms. Counted, not timed: the items a full collection must visit for one match.
"""

import gc

import pytest
from battlement.table.matchlog import InputLog, Match

from shared_rules import engine, load

ringo = load("ringo")


def collector_visits(root):
    """Items the collector visits in the tracked containers reachable from root (root included)."""
    seen, todo, visits = set(), [root], 0
    while todo:
        o = todo.pop()
        if id(o) in seen or not gc.is_tracked(o):
            continue
        seen.add(id(o))
        refs = gc.get_referents(o)
        visits += len(refs)
        todo.extend(refs)
    return visits


def _long_match(n):
    m = Match(ringo, seed=1)
    for i in range(n):
        # an attacker lifted from b5 and put back, as the soak's tables do: legal forever
        m.apply({"t": "cell", "cell": "b5", "occupied": i % 2 == 1})
    gc.collect()  # the collector stops tracking what holds only plain data on its first pass
    return m


def test_a_long_games_log_is_not_walked_by_the_collector():
    short, long = _long_match(100), _long_match(20_000)
    assert len(long.inputs) == 20_000 and long.inputs[-1] == {"t": "cell", "cell": "b5", "occupied": True}
    base = collector_visits(short)
    # 20,000 inputs more may cost a few hundred visits (one a chunk), not one each
    assert collector_visits(long) < base + 1_000, (base, collector_visits(long))


def test_input_log_reads_as_the_list_it_was_given():
    # sealed chunks of 3 here, so every read crosses chunk edges: a list to every reader all the same
    log = InputLog()
    log.CHUNK = 3
    plain = []
    assert not log and len(log) == 0 and log == [] and log[:] == [] and log[-1:] == []
    for i in range(11):
        inp = {"t": "take", "by": ("red", "blue")[i % 2], "n": i}
        log.append(inp)
        plain.append(inp)
        assert len(log) == len(plain) and log == plain and list(log) == plain and log[-1] == plain[-1]
    assert log._sealed and log[0] == plain[0] and log[4] == plain[4] and log[-11] == plain[0]
    for a in (None, 0, 1, 2, 3, 5, 9, 10, 11, 40, -1, -4, -11, -40):
        for b in (None, 0, 2, 3, 4, 8, 11, 40, -1, -3, -40):
            assert log[a:b] == plain[a:b], (a, b)
    assert log[::2] == plain[::2] and log[1::3] == plain[1::3]
    with pytest.raises(IndexError):
        log[11]
    with pytest.raises(IndexError):
        log[-12]
    assert log != plain[:-1] and log != "not a list" and InputLog(plain) == log


def test_a_match_survives_the_sealed_chunks_of_its_log():
    m = Match(ringo, seed=1)
    m.inputs.CHUNK = 2
    lift = [{"t": "cell", "cell": "b5", "occupied": i % 2 == 1} for i in range(5)]
    for inp in lift:
        m.apply(inp)
    assert len(m.inputs) == 5 and m.to_data()["inputs"] == lift
    assert m.undo() == lift[-1] and m.inputs == lift[:-1]
    assert Match.restore(ringo, m.to_data()).state == m.state


def test_the_bridges_match_plays_as_the_rules_match_refusals_included():
    # Ringo's state is copied shallowly before each input here (FLAT_STATE), deeply by the rules' Match:
    # the same effects, refusals, views and undo, move for move, on sensor changes legal or not
    rng = engine.Rng(3)
    names = ringo.NAMES
    for seed in range(6):
        ours, theirs = Match(ringo, seed=seed), engine.Match(ringo, seed=seed)
        for step in range(300):
            if ours.over:
                break
            legal = ours.legal()
            r = rng.below(3)
            inp = rng.choice(legal) if r == 0 and legal else {"t": "cell", "cell": rng.choice(names),
                                                              "occupied": rng.below(2) == 1}
            got = []
            for m in (ours, theirs):
                try:
                    got.append(m.apply(inp))
                except engine.Illegal as e:
                    got.append("refused: %s" % e.reason)
            assert got[0] == got[1] and ours.view(None) == theirs.view(None), (seed, step, inp)
            if step % 50 == 49:
                assert ours.undo() == theirs.undo() and engine.dumps(ours.state) == engine.dumps(theirs.state)
        assert list(ours.inputs) == theirs.inputs and engine.dumps(ours.state) == engine.dumps(theirs.state)
