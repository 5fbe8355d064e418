# rules-test: cpython-only
"""PlingPong through the `battlement` command: the example replay, an illegal line, playouts on both interpreters."""

import json

from support.cli import ROOT, battlement

EXAMPLE = ROOT / "docs" / "examples" / "plingpong.jsonl"


def test_games_lists_plingpong_with_its_variations():
    code, out, err = battlement("games", "--json")
    assert code == 0, err
    pp = next(g for g in json.loads(out) if g["name"] == "plingpong")
    assert pp["title"] == "PlingPong" and pp["sensed"] == ["ball"]
    assert pp["options"]["players"]["choices"] == [2, 3, 4, 8]
    assert pp["options"]["variant"]["choices"] == ["standard", "speed", "high-stack"]


def test_replay_of_the_example_ends_with_player_1_the_last_with_cups():
    code, out, err = battlement("replay", "plingpong", str(EXAMPLE), "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["over"] and view["winner"] == "p1" and view["awaiting"] == []
    assert view["log"][-1] == "Player 1 (green and red) is the last with cups on the board. Player 1 wins!"
    code, out, err = battlement("replay", "plingpong", str(EXAMPLE))
    assert code == 0 and out.strip().endswith("Game over: winner p1.")


def test_replay_stops_at_an_illegal_line_naming_it(tmp_path):
    script = tmp_path / "game.jsonl"
    lines = EXAMPLE.read_text().splitlines()[:5]  # the shoot-off, then yellow 1 is hit
    lines.append(json.dumps({"t": "miss", "by": "p2"}))  # but it is Player 1's second ball
    script.write_text("\n".join(lines) + "\n")
    code, out, err = battlement("replay", "plingpong", str(script))
    assert code == 2
    assert "%s:6:" % script in err and "it is Player 1 (green and red)'s shot, not Player 2 (yellow and blue)'s" in err
    assert "Traceback" not in err + out


def test_playout_same_games_under_cpython_and_micropython():
    results = []
    for interp in ("cpython", "micropython"):
        code, out, err = battlement(
            "playout", "plingpong", "--option", "players=3", "--option", "variant=high-stack", "--option", "rerack=true",
            "--games", "15", "--seed", "4", "--interpreter", interp, "--json",
        )
        assert code == 0, err
        results.append(json.loads(out))
    a, b = results
    assert a["game"] == "plingpong" and a["games"] == 15 and a["finished"] == 15
    assert sum(a["winners"].values()) == 15 and set(a["winners"]) <= {"p1", "p2", "p3", "draw"}
    assert a["winners"] == b["winners"] and a["steps"] == b["steps"]


def test_a_bad_option_is_named():
    code, out, err = battlement("playout", "plingpong", "--option", "players=5", "--games", "1")
    assert code == 2 and "players=5" in err and "Traceback" not in err + out
