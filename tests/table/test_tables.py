"""Table maps: the shipped ones load; a wrong one is refused at start with a line naming the file and entry."""

import subprocess

import pytest
from battlement.errors import UserError
from battlement.table import maps as tables
from battlement.table.adapter import adapter_for
from support.bridgeproc import BATTLEMENT, ROOT
from support.procs import free_port

import shared_rules

GOOD = """
game = "ringo"
[boards.ring]
profile = "x"
[objects]
"""


def ringo_map(extra_objects="", drop=()):
    lines = [GOOD]
    from shared_rules.ringo import rules as ringo

    for i, name in enumerate(ringo.NAMES):
        if name not in drop:
            lines.append('%s = { sensor = "ring/s%d", led = "ring/p%d" }' % (name, i, i))
    return "\n".join(lines) + "\n" + extra_objects


@pytest.mark.parametrize("name", ["ringo", "battleground", "medieval-pong", "medieval-pong-2sets"])
def test_shipped_maps_load(name):
    tm = tables.load(str(ROOT / "hardware" / "tables" / (name + ".toml")))
    assert all(tm.objects[o].led for o in tables.required_objects(tm.game, tm.options))
    assert len(tm.by_sensor) == len(tm.objects)


def test_two_set_pong_map_has_eighteen_towers_per_side():
    tm = tables.load(str(ROOT / "hardware" / "tables" / "medieval-pong-2sets.toml"))
    assert tm.options == {"sets": 2, "unlocked": "all"}  # the full roster: every padlock open
    assert len([o for o in tm.objects if o.startswith("red.") and o.count(".") == 1]) == 18
    assert tm.objects["red.F1.tilt"].sensor == "tilt-f1"  # each tower's fall switch too
    assert tm.objects["red.F1.roof"].sensor == "roof-f1"  # ... and its roof switch


def test_a_complete_map_parses():
    tm = tables.parse(ringo_map(), "t.toml")
    assert tm.game == "ringo" and tm.table == "t"  # the table id defaults to the file name
    b5 = tm.objects["b5"]
    assert tm.by_sensor[(b5.board, b5.sensor)] == "b5" and b5.led_board == "ring"


@pytest.mark.parametrize("text, words", [
    ('game = "chess"\n', ["chess", "not a known game"]),
    ("game = [", ["not valid TOML"]),
    ('game = "ringo"\n', ["[boards"]),
    (ringo_map('zz9 = { sensor = "ring/zz" }\n'), ["objects.zz9", "no game object 'zz9'"]),
    (ringo_map(drop=("b5",)), ["b5", "have no sensor"]),
    (ringo_map().replace('b5 = { sensor = "ring/', 'b5 = { sensor = "tower/'), ["objects.b5", "'tower'", "not in [boards]"]),
    (ringo_map().replace('sensor = "ring/s13"', 'sensor = "ring/s12"'), ["already mapped", "ring/s12"]),
    (ringo_map().replace('sensor = "ring/s13"', 'sensor = "ring-s13"'), ["board/id"]),
])
def test_wrong_maps_are_refused_naming_what_and_where(text, words):
    with pytest.raises(UserError) as e:
        tables.parse(text, "mine.toml")
    msg = str(e.value)
    assert msg.startswith("mine.toml")
    for w in words:
        assert w in msg, msg


def test_run_with_a_wrong_map_prints_one_line_and_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(ringo_map(drop=("castle",)))
    r = subprocess.run([BATTLEMENT, "run", "--table", str(bad), "--simulate", "--journal", str(tmp_path / "j.sqlite")],
                       check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert "bad.toml" in r.stderr and "castle" in r.stderr


def test_run_without_boards_says_how_to_give_them(tmp_path):
    r = subprocess.run([BATTLEMENT, "run", "--game", "ringo", "--journal", str(tmp_path / "j.sqlite"),
                        "--port", str(free_port())], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--simulate" in r.stderr and "Traceback" not in r.stderr


def test_a_pong_roof_switch_opening_is_a_tilt_input():
    from battlement.link.messages import Event
    from battlement.table.router import Router

    from shared_rules.engine import Match

    rules = shared_rules.load("medieval-pong")
    r = Router(tables.for_game("medieval-pong"), adapter_for(rules, fresh=True))
    state = Match(rules, {}, 1).state  # placing the characters: the rules say what a tilt means now
    tip = Event(None, "red-kingdom", 1, 1, "roof-b2", "tilt", 0, 0, 0)
    assert r.place(tip, state, 0.0)[:2] == ("red.B2.roof", [{"t": "tilt", "side": "red", "tower": "B2"}])
    ball = Event(None, "blue-kingdom", 1, 2, "tower-c3", "beam", 1, 0, 9000)
    assert r.place(ball, state, 0.0)[:2] == ("blue.C3", [{"t": "ball", "side": "blue", "tower": "C3"}])
    flat = Event(None, "red-kingdom", 1, 3, "tilt-b2", "tilt", 1, 0, 0)  # the fall switch: lying down
    assert r.place(flat, state, 0.0)[1] is None and r.counters == {"fall-switch": 1}


def test_a_table_built_for_another_game_is_refused(tmp_path):
    r = subprocess.run([BATTLEMENT, "run", "--game", "ringo", "--table", "hardware/tables/plingpong.toml",
                        "--simulate", "--journal", str(tmp_path / "j.sqlite")],
                       check=False, capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--game ringo but hardware/tables/plingpong.toml is a plingpong table" in r.stderr
