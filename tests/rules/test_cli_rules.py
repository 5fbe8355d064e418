# rules-test: cpython-only (drives the command line)
"""battlement games / playout / replay, as a user runs them."""

import json
import pathlib

import pytest
from battlement import cli

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "docs" / "examples"


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_games_lists_every_option_of_medieval_pong(capsys):
    code, out, _ = run(capsys, "games", "--json")
    assert code == 0
    games = {g["name"]: g for g in json.loads(out)}
    pong = games["medieval-pong"]
    assert pong["title"] == "Medieval Pong" and pong["sensed"] == ["ball", "tie", "tilt"]
    assert "full-set" in pong["options"]["team"]["choices"] and pong["options"]["sets"]["choices"] == [1, 2]
    code, out, _ = run(capsys, "games")
    assert "medieval-pong - Medieval Pong" in out and "--option tactical=false" in out


def test_playout_is_reproducible_and_identical_under_micropython(capsys):
    args = ("playout", "medieval-pong", "--games", "30", "--seed", "4", "--option", "tactical=true", "--json")
    code, out, _ = run(capsys, *args)
    first = json.loads(out)
    assert code == 0 and first["games"] == 30 and first["finished"] == 30
    assert sum(first["winners"].values()) == 30 and set(first["winners"]) <= {"red", "blue"}
    assert first["options"]["tactical"] is True and first["steps"] > 30 * 20 and first["seconds"] >= 0
    _, again, _ = run(capsys, *args)
    assert {k: v for k, v in json.loads(again).items() if k != "seconds"} == {
        k: v for k, v in first.items() if k != "seconds"}
    code, out, _ = run(capsys, *args, "--interpreter", "micropython")
    mp = json.loads(out)
    assert code == 0 and mp["interpreter"] == "micropython"
    assert (mp["winners"], mp["steps"]) == (first["winners"], first["steps"])


def test_playout_human_output(capsys):
    code, out, _ = run(capsys, "playout", "medieval-pong", "--games", "5", "--option", "sets=2")
    assert code == 0 and out.startswith("medieval-pong: 5 games, 5 finished")


@pytest.mark.parametrize("argv, message", [
    (("playout", "pong"), "unknown game 'pong' (known: "),
    (("playout", "medieval-pong", "--option", "colour=red"), "unknown option 'colour' for medieval-pong"),
    (("playout", "medieval-pong", "--option", "sets=3"), "option sets=3 is not one of 1, 2"),
    (("playout", "medieval-pong", "--option", "tactical"), "expected KEY=VALUE"),
    (("playout", "medieval-pong", "--option", "unlocked=wizard"), "'wizard' is not an alternative character"),
    (("playout", "medieval-pong", "--games", "0"), "--games must be at least 1"),
])
def test_playout_mistakes_are_one_clear_line(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_replay_the_documented_examples_to_their_winner(capsys):
    code, out, _ = run(capsys, "replay", "medieval-pong", str(EXAMPLES / "medieval-pong.jsonl"), "--json")
    view = json.loads(out)
    assert code == 0 and view["over"] and view["winner"] == "red" and view["awaiting"] == []
    assert view["log"][-1] == "Red captures Blue's crown in tower B1. Red wins!"
    # The Seer's answer went to Red only; the public log does not carry it.
    assert not [line for line in view["log"] if "The Seer says" in line]
    assert "character" not in view["sides"]["red"]["towers"]["A1"]
    code, out, _ = run(capsys, "replay", "medieval-pong", str(EXAMPLES / "medieval-pong.jsonl"), "--json",
                       "--viewer", "red")
    mine = json.loads(out)
    assert mine["sides"]["red"]["towers"]["A1"] == {"status": "up", "character": "princess", "crown": True}
    assert "character" not in mine["sides"]["blue"]["towers"]["A1"] and mine["log"] == view["log"]
    code, out, _ = run(capsys, "replay", "medieval-pong", str(EXAMPLES / "medieval-pong-2sets.jsonl"))
    assert code == 0 and "1 of 2" in out and out.strip().endswith("Game over: winner red.")


def test_replay_mistakes_name_the_file_and_line(capsys, tmp_path):
    script = tmp_path / "game.jsonl"
    lines = (EXAMPLES / "medieval-pong.jsonl").read_text().splitlines()
    first_ball = next(i for i, line in enumerate(lines) if '"ball"' in line)
    bad = lines[:first_ball] + ['{"t": "ball", "side": "blue", "tower": "Z9"}']
    script.write_text("\n".join(bad) + "\n")
    code, _, err = run(capsys, "replay", "medieval-pong", str(script))
    assert code == 2 and "%s:%d: illegal input" % (script, first_ball + 1) in err and "no tower 'Z9'" in err
    script.write_text('{"options": {}}\n{"t": "place", oops}\n')
    code, _, err = run(capsys, "replay", "medieval-pong", str(script))
    assert code == 2 and "%s:2: not valid JSON" % script in err
    script.write_text('{"options": {"sets": 5}}\n')
    code, _, err = run(capsys, "replay", "medieval-pong", str(script))
    assert code == 2 and "sets=5" in err
    script.write_text("\n".join(lines + ['{"t": "miss", "by": "blue"}']) + "\n")
    code, _, err = run(capsys, "replay", "medieval-pong", str(script))
    assert code == 2 and ":%d: the game is already over (won by red)" % (len(lines) + 1) in err
    code, _, err = run(capsys, "replay", "medieval-pong", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "cannot read script" in err and "Traceback" not in err
