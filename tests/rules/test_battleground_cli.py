# rules-test: cpython-only
"""Battleground through the `battlement` command, and the rules doc kept honest against the code."""

import json
import re

from rtest import load
from support.cli import ROOT, battlement

EXAMPLE = ROOT / "docs" / "examples" / "battleground.jsonl"
DOC = ROOT / "docs" / "rules" / "battleground.md"
BG = load("battleground")


def test_replay_of_the_example_ends_in_an_orc_victory():
    code, out, err = battlement("replay", "battleground", str(EXAMPLE), "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["over"] and view["winner"] == "orcs" and view["awaiting"] == []
    assert view["log"][-1] == "The Orcs win the battle!"
    assert view["armies"]["knights"]["warriors_left"] == 0


def test_replay_stops_at_an_illegal_line_naming_it(tmp_path):
    script = tmp_path / "battle.jsonl"
    lines = [ln for ln in EXAMPLE.read_text().splitlines() if not ln.startswith("#")][:14]
    lines.append(json.dumps({"t": "fire", "by": "orcs", "weapon": "orcs.cannon", "crew": "knights.hero"}))
    script.write_text("\n".join(lines) + "\n")
    code, out, err = battlement("replay", "battleground", str(script))
    assert code == 2
    assert "%s:15:" % script in err and "knights.hero" in err
    assert "Traceback" not in err + out


def test_playout_gives_the_same_battles_under_cpython_and_micropython():
    args = ("playout", "battleground", "--option", "armory=on", "--games", "12", "--seed", "5", "--json")
    code, out, err = battlement(*args)
    assert code == 0, err
    here = json.loads(out)
    code, out, err = battlement(*args, "--interpreter", "micropython")
    assert code == 0, err
    board = json.loads(out)
    assert here["finished"] == board["finished"] == 12
    assert here["winners"] == board["winners"] and here["steps"] == board["steps"]


def test_games_lists_battleground_with_its_options():
    code, out, err = battlement("games", "--json")
    assert code == 0, err
    entry = [g for g in json.loads(out) if g["name"] == "battleground"]
    assert len(entry) == 1
    options = entry[0]["options"]
    assert sorted(options) == ["armory", "bricks", "flags", "power_disks", "warriors"]
    assert options["armory"]["choices"] == ["off", "on"] and options["warriors"]["default"] == 6


def test_every_cue_the_rules_emit_is_documented_and_every_cited_test_exists():
    doc = DOC.read_text()
    source = (ROOT / "shared_rules" / "battleground" / "rules.py").read_text()
    for name in sorted(set(re.findall(r'cue\(fx, "([a-z.]+)"', source))):
        assert "| `%s` |" % name in doc, "cue %s is not in docs/rules/battleground.md" % name
    tests = ""
    for p in sorted((ROOT / "tests" / "rules").glob("test_battleground*.py")):
        tests += p.read_text()
    cited = set(re.findall(r"`(test_[a-z0-9_]+)`", doc))
    assert cited, "the doc cites no tests"
    missing = [t for t in sorted(cited) if "def %s(" % t not in tests]
    assert missing == [], "docs/rules/battleground.md cites tests that do not exist"


def test_every_input_type_is_in_the_vocabulary_table():
    doc = DOC.read_text()
    source = (ROOT / "shared_rules" / "battleground" / "rules.py").read_text()
    known = re.search(r"known: ([a-z, ]+)\)", source).group(1).split(", ")
    for t in known:
        assert "| `%s` |" % t in doc, "input %s is not in the vocabulary table" % t
    assert set(BG.SENSED) <= set(known)
