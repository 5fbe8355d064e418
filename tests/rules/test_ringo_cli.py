# rules-test: cpython-only
"""Ringo through the `battlement` command: games, replay of the example, an illegal line, playouts."""

import json

from support.cli import ROOT, battlement

EXAMPLE = ROOT / "docs" / "examples" / "ringo.jsonl"


def test_games_lists_ringo_with_its_variants():
    code, out, err = battlement("games", "--json")
    assert code == 0, err
    ringo = next(g for g in json.loads(out) if g["name"] == "ringo")
    assert ringo["title"] == "Ringo" and ringo["sensed"] == ["cell"]
    assert ringo["options"]["attackers"]["choices"] == [5, 6, 7]
    assert set(ringo["options"]) == {"attackers", "enter_from_neutral", "defenders_may_pass", "neutral_limit", "quiet_draw"}
    assert ringo["options"]["quiet_draw"]["default"] == 0 and "not in the rulebook" in ringo["options"]["quiet_draw"]["help"]


def test_replay_of_the_example_ends_with_two_attackers_in_the_castle():
    code, out, err = battlement("replay", "ringo", str(EXAMPLE), "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["over"] and view["winner"] == "attackers" and view["awaiting"] == []
    assert view["castle"] == 2
    assert view["log"][-1] == "Two attackers hold the castle. The attackers win!"
    assert "The defender on n2 captures the attacker on a2 and lands on b2." in view["log"]


def test_replay_stops_at_an_illegal_move_naming_the_line_and_the_cells(tmp_path):
    script = tmp_path / "game.jsonl"
    script.write_text(
        '{"options": {"attackers": 6}, "seed": 1}\n'
        '{"t": "move", "by": "attackers", "from": "a5", "to": "a4"}\n'
        '{"t": "move", "by": "defenders", "from": "c1", "to": "castle"}\n'
    )
    code, out, err = battlement("replay", "ringo", str(script))
    assert code == 2
    assert "%s:3:" % script in err and "defenders may not enter the castle" in err
    assert "Traceback" not in err + out


def test_playout_under_both_interpreters_with_a_variant():
    args = ("playout", "ringo", "--option", "defenders_may_pass=true", "--option", "attackers=6",
            "--games", "40", "--seed", "5", "--json")
    code, out, err = battlement(*args)
    assert code == 0, err
    r = json.loads(out)
    assert r["game"] == "ringo" and r["games"] == 40 and r["finished"] == 40
    assert r["options"]["attackers"] == 6 and r["options"]["defenders_may_pass"] is True
    assert sum(r["winners"].values()) == 40 and set(r["winners"]) <= {"attackers", "defenders", "draw"}
    code, out, err = battlement(*args, "--interpreter", "micropython")
    assert code == 0, err
    mp = json.loads(out)
    # The same rules on a board: the same games, the same winners.
    assert mp["interpreter"] == "micropython"
    assert mp["winners"] == r["winners"] and mp["steps"] == r["steps"]


def test_a_bad_option_value_is_one_clear_line():
    code, _out, err = battlement("playout", "ringo", "--option", "attackers=9", "--games", "1")
    assert code == 2
    assert "attackers=9" in err and "5, 6, 7" in err and "Traceback" not in err
