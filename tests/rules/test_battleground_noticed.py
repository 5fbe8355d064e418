"""Battleground: what the armies hear, see lit and are asked, exactly (flags captured, figures
out and revived, the set-up's questions, refusals). Written from the mutation run's survivors
(tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Illegal, cues, dumps, play, prompts, raises, says
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


def confirm(side, check):
    return {"t": "confirm", "by": side, "check": check}


def fire(side, weapon, crew=None):
    inp = {"t": "fire", "by": side, "weapon": side + "." + weapon}
    if crew:
        inp["crew"] = side + "." + crew
    return inp


def move(side, piece, to=None):
    inp = {"t": "move", "by": side, "piece": side + "." + piece}
    if to:
        inp["to"] = to
    return inp


ARMORY = {"armory": "on"}
ONE = {"warriors": 1, "power_disks": 0}
RAM = fire("orcs", "battering-ram", "warrior1")
WON = ready() + shot("orcs", "cannon", "warrior1", ["knights.hero", "knights.warrior1"])
GATE_DOWN = ready(balcony={"knights": "knights.warrior1"}) + shot("orcs", "cannon", "hero", ["knights.gate"])
OUT = ready() + shot("orcs", "cannon", "hero", ["knights.warrior1"]) + [end("orcs")]
FLAGS = ready() + [end("orcs")] + shot("knights", "cannon", "hero", ["orcs.warrior1"]) + [end("knights")]
FLAGS += shot("orcs", "cannon", "hero", ["knights.flag1", "knights.flag2"]) + shot("orcs", "catapult", "hero",
                                                                                 ["knights.flag3"])
THREE = ready() + shot("orcs", "triple-catapult", "hero", ["knights.flag1", "knights.flag2", "knights.flag3"])
PLACE = ready(power=["knights.warrior1"], balcony={"knights": "knights.warrior1"})
PLACE += shot("orcs", "cannon", "hero", ["knights.warrior1"])
NO_CREW = ready(balcony={"orcs": "orcs.hero"}) + [end("orcs")] + shot("knights", "cannon", "hero", ["orcs.warrior1"])
NO_CREW += [end("knights")]

# (the game so far, its options, the refused input, the words the players get)
REFUSALS = [
    ([], SMALL, {"t": "power", "by": "green", "piece": "orcs.hero"}, "power needs 'by': orcs or knights, got 'green'"),
    ([], SMALL, {"t": "power", "by": "knights", "piece": "knights.hero"},
     "it is not the Knights' move: waiting for the Orcs"),
    ([], SMALL, {"t": "power", "by": "orcs", "piece": "knights.hero"},
     "'knights.hero' is not one of the Orcs' warriors or hero (like orcs.warrior1, orcs.hero)"),
    ([{"t": "power", "by": "orcs", "piece": "orcs.hero"}], SMALL, {"t": "power", "by": "orcs", "piece": "orcs.hero"},
     "the Orcs have no power disks left to place"),
    ([confirm("orcs", "power")], SMALL, {"t": "power", "by": "orcs", "piece": "orcs.hero"},
     "power disks are placed first, at the start of the set-up"),
    ([], SMALL, {"t": "balcony", "by": "orcs", "piece": "orcs.hero"},
     "the balcony figure is chosen after the power disks are placed"),
    ([], SMALL, end("orcs"),
     "the Orcs are still setting up: Orcs: place up to 1 power disks under your warriors or hero, then confirm."),
    ([], SMALL, confirm("orcs", "camp"), "the set-up step to confirm is 'power', not 'camp'"),
    (ready(), SMALL, fire("orcs", "trebuchet"),
     ("'orcs.trebuchet' is not one of the Orcs' weapons (orcs.catapult, orcs.cannon, orcs.crossbow, "
     "orcs.castle-catapult)")),
    (ready(), SMALL, fire("orcs", "castle-catapult"), "nobody is on the Orc castle balcony to work the castle catapult"),
    (ready() + shot("orcs", "cannon", "warrior1"), SMALL, fire("orcs", "cannon", "warrior1"),
     "Orc cannon has already fired this turn"),
    (ready() + [fire("orcs", "cannon", "warrior1")], SMALL, end("orcs"),
     "Orc cannon's shot is still open: say the shot is over first"),
    (ready() + [fire("orcs", "cannon")], SMALL, end("orcs"),
     "first say who fires the Orc cannon: {'t': 'crew', 'piece': ...}"),
    (ready(), SMALL, {"t": "reward", "by": "orcs", "choice": "extra"},
     "reward is not an action; the Orcs may fire, move or end their turn"),
    (ready(), SMALL, {"t": "fire", "by": "orcs", "weapon": "orcs.cannon", "crew": "knights.hero"},
     "firing needs one of your warriors or the hero within 5 centimetres as 'crew', got 'knights.hero'"),
    (ready(balcony={"orcs": "orcs.warrior1"}), SMALL, fire("orcs", "cannon", "warrior1"),
     "Orc warrior 1 is up on the castle balcony, not beside the Orc cannon"),
    (ready(balcony={"orcs": "orcs.warrior1"}), SMALL, fire("orcs", "castle-catapult", "warrior2"),
     "only the figure on the castle balcony, Orc warrior 1, works the castle catapult"),
    (ready(), SMALL, move("orcs", "hero", "moon"), "a move goes 'to' field or balcony, not 'moon'"),
    (ready(), SMALL, move("orcs", "castle-catapult"), "the castle stays put: it only turns to aim, which is free"),
    (ready(), SMALL, move("orcs", "dragon"), "'orcs.dragon' is not one of the Orcs' figures or weapons"),
    (ready(), SMALL, {"t": "fell", "piece": "orcs.dragon"},
     ("unknown piece 'orcs.dragon' in a fell report (tilt pieces are like orcs.warrior1, orcs.hero, orcs.flag1, "
     "orcs.brick1, orcs.gate)")),
    (ready(balcony={"orcs": "orcs.warrior1"}), SMALL, move("orcs", "warrior2", "balcony"),
     "Orc warrior 1 already mans the castle balcony"),
    (WON, ONE, end("knights"), "the game is over"),
    (ready() + [RAM, {"t": "over", "by": "orcs"}, end("knights"), move("orcs", "hero")], ARMORY, RAM,
     "the Orc battering ram takes two actions and only one is left"),
    (ready() + [RAM, {"t": "over", "by": "orcs"}, end("knights")] * 2, ARMORY, RAM,
     "the Orc battering ram has been used twice this game"),
    (GATE_DOWN + [end("orcs")], SMALL, fire("knights", "castle-catapult", "warrior2"),
     "the Knight castle gate is down, so the castle catapult cannot be used"),
    (GATE_DOWN + [end("orcs")], SMALL, move("knights", "warrior2", "balcony"),
     "the Knight castle gate is down: nobody can climb to the balcony"),
    (OUT, SMALL, fire("knights", "cannon", "warrior1"), "Knight warrior 1 is out of the game and cannot fire"),
    (OUT, SMALL, move("knights", "warrior1"), "Knight warrior 1 is out of the game and cannot move"),
    (NO_CREW, ONE, fire("orcs", "cannon"), "none of the Orcs' figures stands by the Orc cannon to fire it"),
    (FLAGS, SMALL, end("orcs"), "first choose a warrior to bring back to life: {'t': 'revive', 'piece': ...}"),
    (FLAGS, SMALL, {"t": "revive", "by": "orcs", "piece": "orcs.hero"},
     "'orcs.hero' is not one of the Orcs' warriors (the hero never leaves the field early)"),
    (FLAGS, SMALL, {"t": "revive", "by": "orcs", "piece": "orcs.warrior2"},
     "Orc warrior 2 is still standing; bring back a warrior that is out"),
    (THREE, ARMORY, end("orcs"), "first choose the three-flag reward: {'t': 'reward', 'choice': 'revive' or 'extra'}"),
    (PLACE, SMALL, end("knights"),
     "first say where Knight warrior 1 stands again: {'t': 'place', 'to': 'balcony' or 'field'}"),
    (PLACE, SMALL, {"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "moon"},
     "a revived figure stands on the 'balcony' or the 'field', not 'moon'"),
    ([], SMALL, {"t": "fly", "by": "orcs"},
     ("unknown input type 'fly' for battleground (known: fell, stood, power, balcony, confirm, fire, crew, over, "
     "move, end, reward, revive, place)")),
]


def test_every_refusal_tells_the_army_what_was_wrong_in_words():
    for script, options, bad, words in REFUSALS:
        m = play(BG, script, options=options)
        e = raises(Illegal, m.apply, bad)
        assert str(e) == words, (bad, str(e))


def test_a_piece_knocked_outside_a_shot_is_lit_to_stand_back_up():
    m = play(BG, ready(), options=SMALL)
    fx = m.apply({"t": "fell", "piece": "knights.flag1"})
    assert fx == [{"t": "cue", "cue": "stand", "side": "knights", "piece": "knights.flag1"},
                  {"t": "say", "text": "Knight flag 1 fell outside a shot: stand it back up.", "to": None}]
    fx = m.apply({"t": "stood", "piece": "knights.flag1"})
    assert fx == [{"t": "cue", "cue": "stood", "side": "knights", "piece": "knights.flag1"}]


def test_three_flags_bring_two_warriors_back_even_with_three_out():
    # "Knocking down 3 enemy flags in 1 ACTION allows you to bring 2 warriors back to life"
    script = ready() + [end("orcs")]
    script += shot("knights", "cannon", "hero", ["orcs.warrior1", "orcs.warrior2", "orcs.warrior3"]) + [end("knights")]
    script += shot("orcs", "triple-catapult", "hero", ["knights.flag1", "knights.flag2", "knights.flag3"])
    m = play(BG, script, options=ARMORY)
    fx = m.apply({"t": "reward", "by": "orcs", "choice": "revive"})
    assert says(fx) == ["Orcs, choose two warriors to bring back to life."]
    m.apply({"t": "revive", "by": "orcs", "piece": "orcs.warrior1"})
    m.apply({"t": "place", "by": "orcs", "piece": "orcs.warrior1", "to": "field"})
    m.apply({"t": "revive", "by": "orcs", "piece": "orcs.warrior2"})
    m.apply({"t": "place", "by": "orcs", "piece": "orcs.warrior2", "to": "field"})
    assert m.view()["pending"] == [] and "orcs.warrior3" in m.view()["down"]
    assert not [i for i in m.legal() if i["t"] == "revive"]


def test_the_balcony_choice_at_set_up_is_announced():
    m = play(BG, [confirm("orcs", "power")], options=SMALL)
    fx = m.apply({"t": "balcony", "by": "orcs", "piece": "orcs.warrior2"})
    assert says(fx) == ["Orc warrior 2 mans the castle balcony."]


def test_where_a_revived_figure_may_stand_is_offered_naming_it():
    m = play(BG, PLACE, options=SMALL)
    assert [i for i in m.legal() if i["t"] == "place"] == [
        {"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "balcony"},
        {"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "field"},
    ]


def test_a_board_naming_the_armies_afresh_plays_the_same_battle_as_the_host_keeping_them():
    # A board makes the armies' names each time (no room to keep them); the host keeps them made.
    script = ready(power=["knights.warrior1"]) + shot("orcs", "cannon", "warrior1", ["knights.warrior1"])
    keep = BG._KEEP_NAMES
    try:
        views = []
        for mode in (True, False):
            BG._KEEP_NAMES = mode
            m = play(BG, script + [{"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "field"}],
                     options=ARMORY)
            views.append(dumps(m.view()) + dumps(m.legal()))
    finally:
        BG._KEEP_NAMES = keep
    assert views[0] == views[1]


def test_during_a_shot_only_standing_pieces_not_yet_reported_may_be_reported_fallen():
    script = OUT + [fire("knights", "cannon", "warrior2"), {"t": "fell", "piece": "orcs.flag1"}]
    m = play(BG, script, options=SMALL)
    fell = sorted(i["piece"] for i in m.legal() if i["t"] == "fell")
    standing = []
    for s in ("knights", "orcs"):
        for p in ("brick1", "brick2", "brick3", "brick4", "flag1", "flag2", "flag3", "gate", "hero",
                  "warrior1", "warrior2"):
            standing.append(s + "." + p)
    standing.remove("knights.warrior1")  # out since the first shot
    standing.remove("orcs.flag1")  # reported in this one: it may be reported stood again
    assert fell == sorted(standing)
    assert [i for i in m.legal() if i["t"] != "fell"] == [{"t": "stood", "piece": "orcs.flag1"},
                                                         {"t": "over", "by": "knights"}]


def test_the_battering_ram_is_sent_home_at_the_end_of_its_charge_only():
    m = play(BG, ready() + [RAM, {"t": "fell", "piece": "knights.gate"}], options=ARMORY)
    fx = m.apply({"t": "over", "by": "orcs"})
    assert says(fx).count("Return the Orc battering ram to its own camp.") == 1
    fx = m.apply(end("knights"))  # the next turn's end: the ram is home already
    assert "ram.return" not in cues(fx) and says(fx) == ["The Knights end their turn.", "Orcs, your turn: two actions."]


def test_a_hero_falling_before_its_warriors_is_told_to_stand_up_and_what_it_costs():
    m = play(BG, ready() + shot("orcs", "cannon", "warrior1", ["knights.hero"]), options=SMALL)
    assert ("The Knight hero fell while warriors still stand: stand it back up. The Knights lose an action next "
            "turn." in says(m.effects[-1]))


def test_a_hero_saved_by_its_power_disk_is_lit_as_revived_by_power():
    script = ready(power=["knights.hero"]) + shot("orcs", "cannon", "warrior1", ["knights.warrior1"])
    m = play(BG, script, options={"warriors": 1, "power_disks": 1})
    for inp in shot("orcs", "catapult", "warrior1", ["knights.hero"]):
        fx = m.apply(inp)
    assert cue_of(fx, "figure.revived") == {"t": "cue", "cue": "figure.revived", "side": "knights",
                                           "piece": "knights.hero", "why": "power"}


def test_once_the_battle_begins_no_army_is_shown_power_disks_to_place():
    m = play(BG, ready(), options=SMALL)
    armies = m.view()["armies"]
    assert armies["orcs"]["power_disks_to_place"] == 0 and armies["knights"]["power_disks_to_place"] == 0
