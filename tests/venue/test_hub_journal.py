"""The hub's journal and the venue's state folded from it: a hub killed mid-night rebuilds exactly what it
had, a result resent is kept once, a second hub on the same file is refused in one line, and a player's
record is the sum of the games they played (corrections over the refereed results)."""

import os
import stat
import subprocess
import sys

import pytest
from battlement.errors import UserError
from battlement.venue import players
from battlement.venue.hubjournal import HubJournal
from battlement.venue.players import VenueState
from support.venue import night

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def expected(seed, entries):
    """The state of the first `entries` kept entries of night(seed), folded as they come (no journal)."""
    state, n, results = VenueState(), 0, set()
    for kind, body, match in night(seed):
        if n == entries:
            return state
        if kind == "result":
            if match in results:
                continue  # the journal keeps a match's result once
            results.add(match)
        n += 1
        state.apply(n, kind, body)
    return state


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_hub_killed_mid_night_rebuilds_the_identical_state_from_its_journal(tmp_path, seed):
    path = str(tmp_path / "hub.sqlite")
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, 'tests'); "
                             "from support.venue import write_night; write_night(%r, %d)" % (path, seed)],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        lines = 0
        while lines < 200 + 150 * seed:  # a different moment each time, mid-write
            assert proc.stdout.readline(), "the writer stopped"
            lines += 1
        with pytest.raises(UserError) as e:  # meanwhile a second hub is kept out, in one line
            HubJournal(path)
        assert "in use by another hub (pid %d)" % proc.pid in str(e.value) and "\n" not in str(e.value)
        proc.kill()
    finally:
        proc.kill()
        proc.wait(10)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    journal = HubJournal(path)
    try:
        entries = journal.entries()
        rebuilt = VenueState.fold(entries)
        assert [i for i, _, _ in entries] == list(range(1, len(entries) + 1))
        assert len(entries) >= lines  # every entry said committed is there
        assert rebuilt.to_dict() == expected(seed, len(entries)).to_dict()
        assert VenueState.fold(journal.entries()).to_dict() == rebuilt.to_dict()  # and again: the same
        # each match's result once, though every one was sent twice
        done = [m for m, v in rebuilt.matches.items() if v["result"] is not None]
        assert len(done) == sum(1 for _, k, _ in entries if k == "result") > 10
    finally:
        journal.close()


def test_a_result_resent_is_kept_once(tmp_path):
    journal = HubJournal(str(tmp_path / "hub.sqlite"))
    try:
        body = {"t": "result", "match": "R1-M1", "winner": "red"}
        first = journal.append("result", body, "R1-M1")
        assert first is not None and journal.append("result", dict(body, winner="blue"), "R1-M1") is None
        assert journal.result_of("R1-M1")["winner"] == "red"
    finally:
        journal.close()


def record_night():
    sides = {"attackers": {"team": "Knights"}, "defenders": {"players": ["Cy", "Di"]}}
    entries = [
        ("player", {"name": "Ann", "team": "Knights"}), ("player", {"name": "Bo", "team": "Knights"}),
        ("assign", {"match": "M1", "table": "t-1", "game": "ringo", "options": {}, "sides": sides, "seed": 1,
                    "tournament": None}),
        ("result", {"match": "M1", "sides": sides, "winner": "attackers", "score": {"attackers": 3, "defenders": 1},
                    "facts": {"attackers": {"captures": 3}, "defenders": {"captures": 1}}}),
        ("player", {"name": "Bo", "team": "Orcs"}),  # moves team after M1: keeps M1
        ("assign", {"match": "M2", "table": "t-2", "game": "ringo", "options": {}, "sides": sides, "seed": 2,
                    "tournament": None}),
        ("result", {"match": "M2", "sides": sides, "winner": "attackers", "score": {"attackers": 2, "defenders": 0},
                    "facts": {"attackers": {"captures": 2}, "defenders": {"captures": 4}}}),
        ("correct", {"match": "M2", "winner": "defenders", "score": None, "why": "a hand in the castle"}),
    ]
    return VenueState.fold((i + 1, k, b) for i, (k, b) in enumerate(entries))


def test_a_players_record_counts_the_games_they_played_with_the_hosts_corrections():
    state = record_night()
    ann, bo, cy = state.record("Ann"), state.record("Bo"), state.record("Cy")
    assert (ann["wins"], ann["losses"], ann["facts"]) == (1, 1, {"captures": 5})
    assert [g["match"] for g in bo["games"]] == ["M1"] and bo["wins"] == 1  # Orcs now: M2 was not theirs
    assert (cy["wins"], cy["losses"]) == (1, 1) and cy["games"][1]["corrected"] == "a hand in the castle"
    assert state.record("Knights")["wins"] == 1 and state.final("M2")["winner"] == "defenders"
    assert state.members("Knights") == ["Ann"] and state.members("Orcs") == ["Bo"]


@pytest.mark.parametrize("kind, body, words", [
    ("player", {"name": " Ann"}, "a player's name is 1-64 printable characters"),
    ("player", {"name": "Ann", "team": ""}, "player Ann: a team name is 1-64"),
    ("player", {"name": "Ann", "colour": "red"}, "a player entry has no field colour"),
    ("assign", {"match": "M 1", "table": "t-1", "game": "ringo", "options": {}, "sides": {}}, "match id 'M 1'"),
    ("assign", {"match": "M1", "table": "T1", "game": "ringo", "options": {}, "sides": {}}, "names table 'T1'"),
    ("assign", {"match": "M1", "table": "t-1", "game": "ringo", "options": {}, "sides": {"red": {"team": 3}}},
     "side red: a team name"),
    ("correct", {"match": "M1", "winner": "red", "why": " "}, "a correction of M1 says why"),
])
def test_an_entry_that_would_not_fold_is_refused_in_words(kind, body, words):
    with pytest.raises(UserError) as e:
        players.check(kind, body)
    assert words in str(e.value) and "\n" not in str(e.value)



def test_a_tournament_rebuilt_from_the_hub_journal_counts_the_refereed_results_and_the_hosts_corrections():
    from battlement.venue.formats import Result, Tournament

    t = Tournament("round_robin", ["Knights", "Orcs", "Elves", "Dwarves"])
    state, n = VenueState(), 0

    def add(kind, body):
        nonlocal n
        n += 1
        players.check(kind, body)
        state.apply(n, kind, body)
    add("tournament", dict(t.setup(), id="league"))
    while t.ready():
        m = t.ready()[0]
        mid = "league/" + m.id
        sides = {"attackers": {"team": m.teams[0]}, "defenders": {"team": m.teams[1]}}
        add("assign", {"match": mid, "table": "t-1", "game": "ringo", "options": {}, "sides": sides, "seed": 1,
                       "tournament": "league"})
        # the first-named team wins every match, 3 captures to 1; the Knights' first is corrected
        add("result", {"match": mid, "sides": sides, "winner": "attackers", "score": {"attackers": 3, "defenders": 1},
                       "tiebreak": {"attackers": 2, "defenders": 0}})
        t.record(Result.from_dict(state.bracket_results("league")[-1]))  # the bracket moves on as the hub's would
    first = next(r["match"] for r in state.bracket_results("league") if r["winner"] == "Knights")
    add("correct", {"match": "league/" + first, "winner": "defenders", "score": None, "why": "a hand in the castle"})
    rebuilt = Tournament.replay({k: v for k, v in state.tournaments["league"].items() if k != "id"},
                                state.bracket_results("league"))
    assert rebuilt.finished and len(rebuilt.results) == 7 and rebuilt.results[-1].correction
    wins = {s.team: s.wins for s in rebuilt.standings()}
    played = {s.team: s.wins for s in t.standings()}
    loser = rebuilt.match(first).teams[1]
    assert wins["Knights"] == played["Knights"] - 1 and wins[loser] == played[loser] + 1
