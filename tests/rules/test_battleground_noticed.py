"""Battleground: what the armies hear, see lit and are asked, exactly (flags captured, figures
out and revived, the set-up's questions, refusals). Written from the mutation run's survivors
(tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Illegal, play, prompts, raises, says
from test_battleground import BG, SMALL, end, ready, shot


def cue_of(fx, name):
    out = [e for e in fx if e["t"] == "cue" and e["cue"] == name]
    assert len(out) == 1, (name, fx)
    return out[0]


def test_all_enemy_flags_down_is_lit_for_both_armies_and_the_shooter_is_asked_whom_to_revive():
    script = ready() + [end("orcs")]
    script += shot("knights", "cannon", "hero", ["orcs.warrior1"]) + [end("knights")]
    script += shot("orcs", "cannon", "hero", ["knights.flag1", "knights.flag2"])
    m = play(BG, script, options=SMALL)
    for inp in shot("orcs", "catapult", "hero", ["knights.flag3"]):
        fx = m.apply(inp)
    assert cue_of(fx, "flags.captured") == {"t": "cue", "cue": "flags.captured", "side": "knights", "by": "orcs"}
    assert ("All the Knight flags are down! The Knights stand their flags back up and miss their next turn."
            in says(fx))
    assert prompts(fx)[0] == {"t": "prompt", "to": "orcs", "ask": "Which warrior comes back to life?",
                              "choices": [{"t": "revive", "by": "orcs", "piece": "orcs.warrior1"}]}


def test_a_figure_revived_by_its_power_disk_is_lit_in_its_army():
    script = ready(power=["knights.warrior1"]) + shot("orcs", "cannon", "warrior1", ["knights.warrior1"])
    m = play(BG, script, options=SMALL)
    assert cue_of(m.effects[-1], "figure.revived") == {"t": "cue", "cue": "figure.revived", "side": "knights",
                                                       "piece": "knights.warrior1", "why": "power"}


def test_the_last_hero_falling_is_lit_as_out():
    m = play(BG, ready(), options={"warriors": 1, "power_disks": 0})
    for inp in shot("orcs", "cannon", "warrior1", ["knights.hero", "knights.warrior1"]):
        fx = m.apply(inp)
    outs = [e for e in fx if e["t"] == "cue" and e["cue"] == "figure.out"]
    assert outs == [{"t": "cue", "cue": "figure.out", "side": "knights", "piece": "knights.warrior1"},
                    {"t": "cue", "cue": "figure.out", "side": "knights", "piece": "knights.hero"}]


def test_the_balcony_step_of_the_set_up_asks_the_army_setting_up_which_figure_mans_it():
    m = play(BG, [{"t": "confirm", "by": "orcs", "check": "power"}], options=SMALL)
    p = prompts(m.effects[-1])[0]
    assert p["to"] == "orcs"
    assert p["ask"] == ("Orcs: choose the figure on the castle balcony, who works the castle catapult, "
                        "or confirm an empty balcony.")
    assert p["choices"] == [
        {"t": "balcony", "by": "orcs", "piece": "orcs.warrior1"},
        {"t": "balcony", "by": "orcs", "piece": "orcs.warrior2"},
        {"t": "balcony", "by": "orcs", "piece": "orcs.hero"},
        {"t": "confirm", "by": "orcs", "check": "balcony"},
    ]


def test_every_move_on_offer_says_where_the_piece_goes():
    m = play(BG, ready(), options=SMALL)
    moves = [i for i in m.legal() if i["t"] == "move"]
    assert moves and all(sorted(i) == ["by", "piece", "t", "to"] for i in moves), moves
    assert {"t": "move", "by": "orcs", "piece": "orcs.hero", "to": "field"} in moves
    assert {"t": "move", "by": "orcs", "piece": "orcs.hero", "to": "balcony"} in moves


def test_climbing_to_the_balcony_again_is_refused_naming_the_figure():
    m = play(BG, ready(balcony={"orcs": "orcs.warrior1"}), options=SMALL)
    e = raises(Illegal, m.apply, {"t": "move", "by": "orcs", "piece": "orcs.warrior1", "to": "balcony"})
    assert str(e) == "Orc warrior 1 is already on the castle balcony"
