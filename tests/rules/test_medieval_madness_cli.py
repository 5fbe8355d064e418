# rules-test: cpython-only
"""Medieval Madness through the `battlement` command: replay, playout, a board file of your own."""

import json

from support.cli import ROOT, battlement

EXAMPLE = ROOT / "docs" / "examples" / "medieval-madness.jsonl"
BOARD = ROOT / "shared_rules" / "medieval_madness" / "data" / "medieval_madness_board.json"


def test_replay_of_the_example_crowns_player_1():
    code, out, err = battlement("replay", "medieval-madness", str(EXAMPLE), "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["over"] and view["winner"] == "p1" and view["awaiting"] == []
    assert view["log"][-1] == "Long live King Player 1! Player 1 wins the crown and the game."
    assert view["players"][0]["title"] == "King"


def test_replay_stops_at_an_illegal_line_naming_it(tmp_path):
    script = tmp_path / "game.jsonl"
    lines = [
        json.dumps({"options": {"players": 2}, "seed": 1}),
        json.dumps({"t": "roll", "by": "p1", "dice": [3, 3]}),
        json.dumps({"t": "roll", "by": "p2", "dice": [2, 4]}),
        json.dumps({"t": "hire", "by": "p2", "yes": True}),  # nobody is on Hire a Champion, and it is p1's turn
    ]
    script.write_text("\n".join(lines) + "\n")
    code, out, err = battlement("replay", "medieval-madness", str(script))
    assert code == 2
    assert "%s:4:" % script in err and "waiting for Player 1 to roll the dice" in err
    assert "Traceback" not in err + out


def test_playout_reports_finished_games_and_winners():
    code, out, err = battlement(
        "playout", "medieval-madness", "--option", "players=2", "--games", "20", "--seed", "3", "--json"
    )
    assert code == 0, err
    r = json.loads(out)
    assert r["game"] == "medieval-madness" and r["games"] == 20
    assert r["finished"] + r["winners"].get("step-cap", 0) == 20
    assert sum(v for k, v in r["winners"].items() if k in ("p1", "p2")) == r["finished"]
    again = json.loads(battlement(
        "playout", "medieval-madness", "--option", "players=2", "--games", "20", "--seed", "3", "--json"
    )[1])
    assert again["winners"] == r["winners"] and again["steps"] == r["steps"]


def test_an_owners_board_file_is_played_and_a_broken_one_is_named(tmp_path):
    data = json.loads(BOARD.read_text())
    data["outer"][5] = {"kind": "collect", "amount": 700, "name": "Dragon Hoard"}
    mine = tmp_path / "myboard.json"
    mine.write_text(json.dumps(data))
    script = tmp_path / "game.jsonl"
    script.write_text(
        json.dumps({"options": {"players": 2, "board": str(mine)}}) + "\n"
        + json.dumps({"t": "roll", "by": "p1", "dice": [3, 3]}) + "\n"
    )
    code, out, err = battlement("replay", "medieval-madness", str(script), "--json")
    assert code == 0, err
    p1 = json.loads(out)["players"][0]
    assert p1["space_name"] == "Dragon Hoard" and p1["gold"] == 900

    data["inner"][3]["amount"] = "lots"
    mine.write_text(json.dumps(data))
    code, out, err = battlement("replay", "medieval-madness", str(script))
    assert code == 2
    assert "inner wall space 3 (space number 31)" in err and "'amount'" in err
    assert "Traceback" not in err + out


def test_micropython_plays_the_same_games_as_cpython():
    # Same seeds, same winners and step counts: nothing depends on dict order or the interpreter.
    results = []
    for interp in ("cpython", "micropython"):
        code, out, err = battlement(
            "playout", "medieval-madness", "--games", "8", "--seed", "11", "--interpreter", interp, "--json"
        )
        assert code == 0, err
        results.append(json.loads(out))
    assert results[0]["winners"] == results[1]["winners"]
    assert results[0]["steps"] == results[1]["steps"]
