"""Battleground: a scenario test for every rulebook clause (see docs/rules/battleground.md)."""

from rtest import Illegal, cues, dumps, load, play, prompts, raises, says

BG = load("battleground")
SMALL = {"warriors": 2, "power_disks": 1}


def confirm(side, check):
    return {"t": "confirm", "by": side, "check": check}


def ready(power=(), balcony=None):
    """The set-up of both armies: power disks under `power`, `balcony` = {side: figure}."""
    script = []
    for side in ("orcs", "knights"):
        for p in power:
            if p.startswith(side + "."):
                script.append({"t": "power", "by": side, "piece": p})
        script.append(confirm(side, "power"))
        b = (balcony or {}).get(side)
        if b:
            script.append({"t": "balcony", "by": side, "piece": b})
        else:
            script.append(confirm(side, "balcony"))
        for check in ("camp", "manned", "placement"):
            script.append(confirm(side, check))
    return script


def shot(side, weapon, crew, falls=()):
    """Fire `weapon`, the tilt switches report `falls`, the shooter says the shot is over."""
    s = [{"t": "fire", "by": side, "weapon": side + "." + weapon, "crew": side + "." + crew}]
    for p in falls:
        s.append({"t": "fell", "piece": p})
    s.append({"t": "over", "by": side})
    return s


def end(side):
    return {"t": "end", "by": side}


def up(m, piece):
    return piece not in m.state["down"]


# ---------------------------------------------------------------- set-up


def test_setup_asks_each_army_to_confirm_its_checks_orcs_first_then_orcs_attack():
    m = play(BG, [])
    assert m.awaiting() == ["orcs"]
    assert m.view()["setup"] == {"side": "orcs", "check": "power"}
    m.apply({"t": "power", "by": "orcs", "piece": "orcs.warrior2"})
    fx = m.apply(confirm("orcs", "power"))
    assert "balcony" in prompts(fx)[0]["ask"]
    m.apply({"t": "balcony", "by": "orcs", "piece": "orcs.warrior1"})
    fx = m.apply(confirm("orcs", "camp"))
    ask = prompts(fx)[0]["ask"]
    assert "5 centimetres" in ask and "Orc cannon" in ask and "Orc crossbow" in ask
    fx = m.apply(confirm("orcs", "manned"))
    assert "behind a weapon or building" in prompts(fx)[0]["ask"] and "hero" in prompts(fx)[0]["ask"]
    fx = m.apply(confirm("orcs", "placement"))
    assert m.awaiting() == ["knights"]
    assert "The Orcs are ready. Knights, set up your army." in says(fx)
    for inp in ready()[5:]:  # the Knights' part
        fx = m.apply(inp)
    assert "Both armies are ready. Orcs always attack first." in says(fx)
    assert m.view()["turn"] == "orcs" and m.view()["actions_left"] == 2
    assert m.state["power"] == {"orcs.warrior2": 1}
    assert m.state["balcony"] == {"orcs": "orcs.warrior1", "knights": None}


def test_setup_steps_come_in_order_and_only_from_the_army_setting_up():
    m = play(BG, [])
    e = raises(Illegal, m.apply, confirm("orcs", "manned"))
    assert "'power'" in str(e) and "'manned'" in str(e)
    e = raises(Illegal, m.apply, confirm("knights", "power"))
    assert "Knights" in str(e) and "Orcs" in str(e)
    e = raises(Illegal, m.apply, {"t": "fire", "by": "orcs", "weapon": "orcs.cannon", "crew": "orcs.hero"})
    assert "setting up" in str(e)
    e = raises(Illegal, m.apply, {"t": "power", "by": "orcs", "piece": "knights.hero"})
    assert "knights.hero" in str(e)


def test_power_disks_are_limited_to_the_option_and_may_stack_under_one_figure():
    m = play(BG, [{"t": "power", "by": "orcs", "piece": "orcs.hero"}] * 2, options={"power_disks": 2})
    assert m.state["power"] == {"orcs.hero": 2}
    assert [i["t"] for i in m.legal()] == ["confirm"]
    e = raises(Illegal, m.apply, {"t": "power", "by": "orcs", "piece": "orcs.warrior1"})
    assert "no power disks left" in str(e)


def test_tilt_reports_while_the_armies_are_placed_count_for_nothing():
    m = play(BG, [{"t": "fell", "piece": "orcs.warrior1"}, {"t": "fell", "piece": "knights.gate"}])
    assert m.state["down"] == [] and m.state["restand"] == []


# ---------------------------------------------------------------- turns and actions


def test_a_turn_is_two_actions_then_the_other_army_plays():
    m = play(BG, ready(), options=SMALL)
    fx = m.apply({"t": "move", "by": "orcs", "piece": "orcs.warrior1", "to": "field"})
    assert "actions" in cues(fx) and m.view()["actions_left"] == 1
    fx = m.apply({"t": "move", "by": "orcs", "piece": "orcs.hero", "to": "field"})
    assert "Orc hero moves up to 30 centimetres." in says(fx)
    assert m.awaiting() == ["knights"] and m.view()["actions_left"] == 2
    assert "Knights, your turn: two actions." in says(fx)
    e = raises(Illegal, m.apply, end("orcs"))
    assert "not the Orcs' move" in str(e)


def test_moving_a_weapon_costs_an_action_but_the_castle_only_turns_to_aim_for_free():
    m = play(BG, ready(), options=SMALL)
    fx = m.apply({"t": "move", "by": "orcs", "piece": "orcs.cannon"})
    assert "The Orc cannon moves up to 15 centimetres, staying in its own camp." in says(fx)
    assert m.view()["actions_left"] == 1
    e = raises(Illegal, m.apply, {"t": "move", "by": "orcs", "piece": "orcs.castle-catapult"})
    assert "aim" in str(e)
    e = raises(Illegal, m.apply, {"t": "move", "by": "orcs", "piece": "knights.cannon"})
    assert "knights.cannon" in str(e)


def test_firing_needs_a_standing_figure_of_your_own_declared_as_crew():
    m = play(BG, ready() + shot("orcs", "cannon", "hero", ["knights.warrior1"]) + [end("orcs")], options=SMALL)
    cannon = {"t": "fire", "by": "knights", "weapon": "knights.cannon", "crew": "orcs.warrior2"}
    e = raises(Illegal, m.apply, cannon)
    assert "crew" in str(e) and "5 centimetres" in str(e) and "orcs.warrior2" in str(e)
    cannon["crew"] = "knights.warrior1"
    assert "Knight warrior 1 is out of the game" in str(raises(Illegal, m.apply, cannon))
    # Without a crew the player is asked who stands within 5 cm: only standing figures are offered.
    fx = m.apply({"t": "fire", "by": "knights", "weapon": "knights.cannon"})
    assert "Who stands within 5 centimetres of the Knight cannon" in prompts(fx)[0]["ask"]
    assert [c["piece"] for c in prompts(fx)[0]["choices"]] == ["knights.warrior2", "knights.hero"]
    assert m.view()["actions_left"] == 2 and m.view()["shot"] is None
    e = raises(Illegal, m.apply, end("knights"))
    assert "first say who fires the Knight cannon" in str(e)
    e = raises(Illegal, m.apply, {"t": "crew", "by": "knights", "piece": "knights.warrior1"})
    assert "out of the game" in str(e)
    fx = m.apply({"t": "crew", "by": "knights", "piece": "knights.warrior2"})
    assert "shot.open" in cues(fx) and "Knights fire the cannon." in says(fx)
    assert m.view()["actions_left"] == 1 and m.view()["shot"]["crew"] == "knights.warrior2"


def test_a_lone_figure_by_the_weapon_fires_without_being_asked():
    m = play(BG, ready(balcony={"orcs": "orcs.warrior1"}), options={"warriors": 1})
    fx = m.apply({"t": "fire", "by": "orcs", "weapon": "orcs.castle-catapult"})
    assert m.view()["shot"]["crew"] == "orcs.warrior1" and prompts(fx) == []


def test_no_weapon_fires_twice_in_one_turn():
    m = play(BG, ready() + shot("orcs", "crossbow", "warrior1"), options=SMALL)
    e = raises(Illegal, m.apply, shot("orcs", "crossbow", "warrior2")[0])
    assert "Orc crossbow has already fired this turn" in str(e)
    m.apply(shot("orcs", "catapult", "warrior2")[0])  # another weapon is fine
    assert [f["weapon"] for f in m.legal() if f["t"] == "fire"] == []


def test_a_round_is_one_action_however_many_disks_the_weapon_throws():
    m = play(BG, ready(), options={"armory": "on"})
    fx = m.apply(shot("orcs", "triple-catapult", "warrior1")[0])
    assert "Orcs fire the triple catapult: 3 disks." in says(fx)
    assert [e["disks"] for e in fx if e["t"] == "cue"] == [3]
    assert m.view()["actions_left"] == 1
    m.apply({"t": "over", "by": "orcs"})
    fx = m.apply(shot("orcs", "gatling-gun", "warrior2")[0])
    assert "Orcs fire the gatling gun: 2 disks." in says(fx)
    assert m.view()["actions_left"] == 0 and m.awaiting() == ["orcs"]  # the shot is still open


def test_the_player_may_end_the_turn_early():
    m = play(BG, ready() + [end("orcs")], options=SMALL)
    assert m.awaiting() == ["knights"] and m.view()["actions_left"] == 2


# ---------------------------------------------------------------- shots and knock-downs


def test_a_shot_collects_falls_until_it_is_over_and_a_bump_that_stands_back_does_not_count():
    m = play(BG, ready() + shot("orcs", "cannon", "warrior1")[:1], options=SMALL)
    m.apply({"t": "fell", "piece": "knights.warrior1"})
    m.apply({"t": "fell", "piece": "knights.warrior2"})
    m.apply({"t": "stood", "piece": "knights.warrior2"})  # it wobbled and stood
    assert m.view()["shot"]["falls"] == ["knights.warrior1"]
    assert up(m, "knights.warrior1")  # nothing is judged before the shot is over
    e = raises(Illegal, m.apply, {"t": "move", "by": "orcs", "piece": "orcs.hero"})
    assert "say the shot is over" in str(e)
    fx = m.apply({"t": "over", "by": "orcs"})
    assert not up(m, "knights.warrior1") and up(m, "knights.warrior2")
    assert "Knight warrior 1 is knocked out: remove it from the battleground." in says(fx)
    assert "figure.out" in cues(fx)


def test_an_empty_shot_says_nothing_fell():
    m = play(BG, ready() + shot("orcs", "cannon", "warrior1"), options=SMALL)
    assert "Nothing fell." in says(m.effects[-1])
    assert m.view()["actions_left"] == 1


def test_a_power_disk_revives_a_knocked_figure_anywhere_in_its_camp_and_no_action_is_lost():
    script = ready(power=["knights.warrior1"]) + shot("orcs", "cannon", "warrior1", ["knights.warrior1"])
    m = play(BG, script, options=SMALL)
    fx = m.effects[-1]
    assert up(m, "knights.warrior1") and m.state["power"] == {}
    assert "figure.revived" in cues(fx)
    assert "power disk" in says(fx)[-1] and "anywhere in its camp" in says(fx)[-1]
    assert m.view()["stand_up"] == ["knights.warrior1"]
    # Nobody mans the Knights' balcony: they say where it stands (the ground here), for free.
    m.apply({"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "field"})
    assert m.view()["actions_left"] == 1
    fx = m.apply({"t": "stood", "piece": "knights.warrior1"})
    assert m.view()["stand_up"] == [] and "stood" in cues(fx)
    # Knocked again, it has no disk left: out.
    m.apply(end("orcs"))
    m.apply(end("knights"))
    for inp in shot("orcs", "cannon", "warrior1", ["knights.warrior1"]):
        m.apply(inp)
    assert not up(m, "knights.warrior1")
    assert m.view()["armies"]["knights"]["actions_lost_next_turn"] == 0


def test_the_hero_falling_early_is_stood_up_and_its_army_loses_an_action_next_turn():
    m = play(BG, ready() + shot("orcs", "cannon", "warrior1", ["knights.hero"]), options=SMALL)
    fx = m.effects[-1]
    assert up(m, "knights.hero") and "hero.early" in cues(fx)
    assert "stand it back up" in says(fx)[-2]
    assert m.view()["stand_up"] == ["knights.hero"]
    fx = m.apply(end("orcs"))
    assert m.view()["actions_left"] == 1
    assert "Knights, your turn, with one action: your hero fell early." in says(fx)
    m.apply({"t": "move", "by": "knights", "piece": "knights.hero"})
    assert m.awaiting() == ["orcs"]


def test_two_early_hero_falls_cost_both_actions_and_the_turn_passes():
    script = ready() + shot("orcs", "cannon", "warrior1", ["knights.hero"])
    script += shot("orcs", "catapult", "warrior1", ["knights.hero"])
    m = play(BG, script, options=SMALL)
    assert "The Knights lose both actions to their hero's falls and pass." in says(m.effects[-1])
    assert m.view()["turn"] == "orcs" and m.view()["actions_left"] == 2


def test_the_hero_falls_last_and_that_wins_the_battle_even_in_the_same_shot_as_the_last_warrior():
    m = play(BG, ready(), options={"warriors": 1, "power_disks": 0})
    for inp in shot("orcs", "cannon", "warrior1", ["knights.hero", "knights.warrior1"]):
        fx = m.apply(inp)
    assert m.over and m.state["winner"] == "orcs" and m.awaiting() == [] and m.legal() == []
    assert says(fx)[-2:] == ["The Knight hero falls, the last of its army.", "The Orcs win the battle!"]
    assert "win" in cues(fx)
    assert "the game is over" in str(raises(Illegal, m.apply, end("knights")))


def test_a_hero_with_a_power_disk_survives_its_final_fall_once():
    script = ready(power=["knights.hero"]) + shot("orcs", "cannon", "warrior1", ["knights.warrior1"])
    script += shot("orcs", "catapult", "warrior1", ["knights.hero"])
    m = play(BG, script, options={"warriors": 1, "power_disks": 1})
    assert not m.over and up(m, "knights.hero") and m.state["power"] == {}
    assert [t for t in says(m.effects[-1]) if t.startswith("The Knight hero is knocked over but has a power disk")]
    assert m.view()["armies"]["knights"]["actions_lost_next_turn"] == 0  # a final fall, not an early one


def test_when_both_heroes_fall_for_good_in_one_shot_the_shooter_wins():
    script = ready() + shot("orcs", "cannon", "warrior1", ["knights.warrior1"]) + [end("orcs")]
    script += shot("knights", "cannon", "hero", ["orcs.warrior1"]) + [end("knights")]
    script += shot("orcs", "cannon", "hero", ["orcs.hero", "knights.hero"])
    m = play(BG, script, options={"warriors": 1, "power_disks": 0})
    assert m.over and m.state["winner"] == "orcs"


def test_bricks_knocked_over_are_removed_and_change_nothing_else():
    m = play(BG, ready() + shot("orcs", "cannon", "warrior1", ["knights.brick1", "knights.brick3"]), options=SMALL)
    assert "2 Knight bricks are knocked down: remove them." in says(m.effects[-1])
    assert m.view()["armies"]["knights"]["bricks_up"] == ["knights.brick2", "knights.brick4"]
    assert cues(m.effects[-1]).count("brick.removed") == 2


def test_a_piece_knocked_outside_a_shot_is_stood_back_up_not_lost():
    m = play(BG, ready() + [{"t": "fell", "piece": "knights.warrior2"}], options=SMALL)
    assert "Knight warrior 2 fell outside a shot: stand it back up." in says(m.effects[-1])
    assert up(m, "knights.warrior2") and m.view()["stand_up"] == ["knights.warrior2"]
    assert {"t": "stood", "piece": "knights.warrior2"} in m.legal()
    m.apply({"t": "stood", "piece": "knights.warrior2"})
    assert m.view()["stand_up"] == []


def test_reports_about_unknown_pieces_and_inputs_are_refused_naming_them():
    m = play(BG, ready(), options=SMALL)
    e = raises(Illegal, m.apply, {"t": "fell", "piece": "orcs.warrior3"})
    assert "orcs.warrior3" in str(e)
    e = raises(Illegal, m.apply, {"t": "fell", "piece": "dragons.hero"})
    assert "dragons.hero" in str(e)
    e = raises(Illegal, m.apply, {"t": "charge", "by": "orcs"})
    assert "'charge'" in str(e)
    e = raises(Illegal, m.apply, {"t": "end"})
    assert "'by'" in str(e)
    e = raises(Illegal, m.apply, {"t": "fire", "by": "orcs", "weapon": "orcs.bazooka", "crew": "orcs.hero"})
    assert "orcs.bazooka" in str(e) and "orcs.cannon" in str(e)


def test_a_tilt_from_a_removed_piece_changes_nothing():
    m = play(BG, ready() + shot("orcs", "cannon", "warrior1", ["knights.warrior1"]), options=SMALL)
    before = dumps(m.state)
    m.apply({"t": "stood", "piece": "knights.warrior1"})
    m.apply({"t": "fell", "piece": "knights.warrior1"})
    assert dumps(m.state) == before


# ---------------------------------------------------------------- flags


def test_knocking_down_all_enemy_flags_revives_a_warrior_and_the_enemy_restands_them_and_misses_a_turn():
    script = ready() + [end("orcs")]
    script += shot("knights", "cannon", "hero", ["orcs.warrior1"]) + [end("knights")]
    script += shot("orcs", "cannon", "hero", ["knights.flag1", "knights.flag2"])
    m = play(BG, script, options=SMALL)
    assert "Knight flag 2 is down: remove it." in says(m.effects[-1])
    for inp in shot("orcs", "catapult", "hero", ["knights.flag3"]):
        fx = m.apply(inp)
    assert "flags.captured" in cues(fx) and "flags.restand" in cues(fx)
    assert "All the Knight flags are down!" in says(fx)[-2]
    assert m.awaiting() == ["orcs"]
    revives = [i for i in m.legal() if i["t"] == "revive"]
    assert revives == [{"t": "revive", "by": "orcs", "piece": "orcs.warrior1"}]
    assert prompts(fx)[0]["choices"] == revives
    assert m.view()["armies"]["knights"]["flags_up"] == ["knights.flag1", "knights.flag2", "knights.flag3"]
    assert m.view()["stand_up"] == ["knights.flag1", "knights.flag2", "knights.flag3"]
    e = raises(Illegal, m.apply, end("orcs"))
    assert "bring back to life" in str(e)
    fx = m.apply(revives[0])
    assert up(m, "orcs.warrior1") and "Orc warrior 1 comes back to life: stand it anywhere in its camp." in says(fx)
    fx = m.apply({"t": "place", "by": "orcs", "piece": "orcs.warrior1", "to": "field"})
    # The Orcs' turn ends; the Knights miss theirs; the Orcs play again.
    assert "The Knights miss their turn." in says(fx) and "turn.missed" in cues(fx)
    assert m.view()["turn"] == "orcs" and m.view()["actions_left"] == 2


def test_all_flags_down_with_no_warrior_out_revives_nobody_but_the_turn_is_still_missed():
    script = ready() + shot("orcs", "cannon", "hero", ["knights.flag1", "knights.flag2"])
    script += shot("orcs", "catapult", "hero", ["knights.flag3"])
    m = play(BG, script, options=SMALL)
    assert "The Orcs have no warrior out to bring back." in says(m.effects[-1])
    assert m.view()["turn"] == "orcs" and m.view()["turn_number"] == 2


def test_three_flags_in_one_action_offers_an_extra_turn_on_top_of_the_missed_turn():
    m = play(BG, ready() + shot("orcs", "triple-catapult", "hero", ["knights.flag1", "knights.flag2", "knights.flag3"]),
             options={"armory": "on"})
    fx = m.effects[-1]
    assert "Three Knight flags in one shot!" in says(fx)[-1]
    assert prompts(fx)[0]["choices"] == [
        {"t": "reward", "by": "orcs", "choice": "revive"},
        {"t": "reward", "by": "orcs", "choice": "extra"},
    ]
    m.apply({"t": "reward", "by": "orcs", "choice": "extra"})
    assert m.view()["actions_left"] == 1 and m.view()["armies"]["orcs"]["extra_turns"] == 1
    turns = []
    for _ in range(3):
        m.apply(end(m.view()["turn"]))
        turns.append(m.view()["turn"])
    # the extra turn, then the turn the Knights miss, then the Knights at last
    assert turns == ["orcs", "orcs", "knights"]


def test_three_flags_in_one_action_can_bring_two_warriors_back_instead():
    script = ready() + [end("orcs")]
    script += shot("knights", "cannon", "hero", ["orcs.warrior1", "orcs.warrior3"]) + [end("knights")]
    script += shot("orcs", "triple-catapult", "hero", ["knights.flag1", "knights.flag2", "knights.flag3"])
    script += [{"t": "reward", "by": "orcs", "choice": "revive"}]
    m = play(BG, script, options={"armory": "on"})
    assert [i["piece"] for i in m.legal() if i["t"] == "revive"] == ["orcs.warrior1", "orcs.warrior3"]
    m.apply({"t": "revive", "by": "orcs", "piece": "orcs.warrior3"})
    # Where the first stands is asked before the second revive; it takes the empty balcony.
    m.apply({"t": "place", "by": "orcs", "piece": "orcs.warrior3", "to": "balcony"})
    e = raises(Illegal, m.apply, {"t": "revive", "by": "orcs", "piece": "orcs.warrior3"})
    assert "still standing" in str(e)
    fx = m.apply({"t": "revive", "by": "orcs", "piece": "orcs.warrior1"})
    assert not prompts(fx) or "balcony" not in prompts(fx)[-1]["ask"]  # the balcony is taken: not asked
    assert up(m, "orcs.warrior1") and up(m, "orcs.warrior3") and m.state["balcony"]["orcs"] == "orcs.warrior3"
    assert m.view()["pending"] == [] and m.view()["actions_left"] == 1


def test_with_more_flags_three_in_one_action_is_a_bonus_without_a_capture():
    script = ready() + shot("orcs", "triple-catapult", "hero", ["knights.flag1", "knights.flag2", "knights.flag4"])
    m = play(BG, script, options={"armory": "on", "flags": 4})
    assert "flags.captured" not in cues(m.effects[-1])
    m.apply({"t": "reward", "by": "orcs", "choice": "extra"})
    m.apply(end("orcs"))
    m.apply(end("orcs"))
    assert m.view()["turn"] == "knights"  # no missed turn: a Knight flag still stands


def test_own_flags_knocked_over_reward_nobody():
    m = play(BG, ready() + shot("orcs", "cannon", "hero", ["orcs.flag1", "orcs.flag2", "orcs.flag3"]), options=SMALL)
    assert m.view()["armies"]["orcs"]["flags_up"] == []
    assert m.view()["pending"] == [] and m.view()["armies"]["knights"]["turns_to_miss"] == 0


# ---------------------------------------------------------------- castle gate and balcony


def test_only_the_balcony_figure_works_the_castle_catapult_and_it_stays_there():
    m = play(BG, ready(balcony={"orcs": "orcs.warrior2"}), options=SMALL)
    castle = {"t": "fire", "by": "orcs", "weapon": "orcs.castle-catapult", "crew": "orcs.warrior1"}
    assert "only the figure on the castle balcony, Orc warrior 2" in str(raises(Illegal, m.apply, castle))
    e = raises(Illegal, m.apply, {"t": "fire", "by": "orcs", "weapon": "orcs.cannon", "crew": "orcs.warrior2"})
    assert "up on the castle balcony" in str(e)
    castle["crew"] = "orcs.warrior2"
    m.apply(castle)


def test_without_a_balcony_figure_the_castle_catapult_is_idle_until_one_climbs_up():
    m = play(BG, ready(), options=SMALL)
    castle = {"t": "fire", "by": "orcs", "weapon": "orcs.castle-catapult", "crew": None}
    assert "nobody is on the Orc castle balcony" in str(raises(Illegal, m.apply, castle))
    fx = m.apply({"t": "move", "by": "orcs", "piece": "orcs.hero", "to": "balcony"})
    assert "Orc hero climbs to the castle balcony." in says(fx)
    castle["crew"] = "orcs.hero"
    m.apply(castle)


def test_another_figure_takes_over_the_balcony_while_the_gate_stands():
    m = play(BG, ready(balcony={"orcs": "orcs.warrior1"}), options=SMALL)
    e = raises(Illegal, m.apply, {"t": "move", "by": "orcs", "piece": "orcs.warrior2", "to": "balcony"})
    assert "Orc warrior 1 already mans the castle balcony" in str(e)
    m.apply({"t": "move", "by": "orcs", "piece": "orcs.warrior1", "to": "field"})
    m.apply({"t": "move", "by": "orcs", "piece": "orcs.warrior2", "to": "balcony"})
    assert m.state["balcony"]["orcs"] == "orcs.warrior2"


def test_the_gate_knocked_down_silences_the_castle_catapult_and_knocks_the_balcony_figure_over():
    script = ready(balcony={"knights": "knights.warrior1"}) + shot("orcs", "cannon", "hero", ["knights.gate"])
    m = play(BG, script, options=SMALL)
    fx = m.effects[-1]
    assert "gate.down" in cues(fx)
    assert "The Knight castle gate is down: its castle catapult is silenced." in says(fx)
    assert not up(m, "knights.warrior1") and m.state["balcony"]["knights"] is None
    m.apply(end("orcs"))
    castle = {"t": "fire", "by": "knights", "weapon": "knights.castle-catapult", "crew": "knights.warrior2"}
    e = raises(Illegal, m.apply, castle)
    assert "Knight castle gate is down, so the castle catapult cannot be used" in str(e)
    e = raises(Illegal, m.apply, {"t": "move", "by": "knights", "piece": "knights.warrior2", "to": "balcony"})
    assert "gate is down" in str(e)
    assert not [i for i in m.legal() if i.get("to") == "balcony" or i.get("weapon") == "knights.castle-catapult"]
    assert m.view()["armies"]["knights"]["gate"] == "down"
    assert m.view()["down"] == ["knights.gate", "knights.warrior1"]


def test_a_balcony_figure_with_a_power_disk_is_revived_on_the_ground_when_the_gate_falls():
    script = ready(power=["knights.warrior1"], balcony={"knights": "knights.warrior1"})
    script += shot("orcs", "cannon", "hero", ["knights.gate"])
    m = play(BG, script, options=SMALL)
    assert up(m, "knights.warrior1") and m.state["balcony"]["knights"] is None and m.state["power"] == {}


def test_a_revived_balcony_figure_may_stand_on_the_balcony_again_and_work_the_castle_catapult():
    # The FAQ: "stand the figure back up anywhere in its owner's camp"; the balcony is in the camp.
    script = ready(power=["knights.warrior1"], balcony={"knights": "knights.warrior1"})
    script += shot("orcs", "cannon", "hero", ["knights.warrior1"])
    m = play(BG, script, options=SMALL)
    fx = m.effects[-1]
    assert up(m, "knights.warrior1") and m.state["power"] == {}
    assert m.awaiting() == ["knights"]
    ask = prompts(fx)[-1]
    assert ask["to"] == "knights" and "castle balcony" in ask["ask"]
    wheres = [c["to"] for c in m.legal() if c["t"] == "place"]
    assert sorted(wheres) == ["balcony", "field"]
    fx = m.apply({"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "balcony"})
    assert "Knight warrior 1 stands on the castle balcony again." in says(fx)
    assert m.state["balcony"]["knights"] == "knights.warrior1"
    assert m.awaiting() == ["orcs"] and m.view()["actions_left"] == 1  # no action lost by either side
    m.apply({"t": "stood", "piece": "knights.warrior1"})
    m.apply(end("orcs"))
    m.apply({"t": "fire", "by": "knights", "weapon": "knights.castle-catapult", "crew": "knights.warrior1"})
    assert m.state["shot"]["crew"] == "knights.warrior1"


def test_a_revived_balcony_figure_stood_on_the_ground_leaves_the_balcony_free():
    script = ready(power=["knights.warrior1"], balcony={"knights": "knights.warrior1"})
    script += shot("orcs", "cannon", "hero", ["knights.warrior1"])
    script.append({"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "field"})
    m = play(BG, script, options=SMALL)
    assert "Knight warrior 1 stands on the ground in its camp." in says(m.effects[-1])
    assert m.state["balcony"]["knights"] is None and m.view()["actions_left"] == 1
    e = raises(Illegal, m.apply, {"t": "end", "by": "knights"})
    assert "not the Knights' move" in str(e)


def test_the_place_of_a_revived_figure_is_asked_first_and_only_where_the_balcony_is_free():
    script = ready(power=["knights.warrior1"], balcony={"knights": "knights.warrior1"})
    script += shot("orcs", "cannon", "hero", ["knights.warrior1"])
    m = play(BG, script, options=SMALL)
    e = raises(Illegal, m.apply, {"t": "end", "by": "knights"})
    assert "first say where Knight warrior 1 stands again" in str(e)
    e = raises(Illegal, m.apply, {"t": "place", "by": "knights", "piece": "knights.warrior1", "to": "moon"})
    assert "on the 'balcony' or the 'field', not 'moon'" in str(e)
    # Another figure on the balcony: a revived ground figure is not asked.
    script = ready(power=["knights.warrior2"], balcony={"knights": "knights.warrior1"})
    script += shot("orcs", "cannon", "hero", ["knights.warrior2"])
    m = play(BG, script, options=SMALL)
    assert m.awaiting() == ["orcs"] and not [c for c in m.legal() if c["t"] == "place"]


def test_a_hero_on_the_balcony_when_the_gate_falls_is_an_early_fall_and_comes_down():
    script = ready(balcony={"knights": "knights.hero"}) + shot("orcs", "cannon", "hero", ["knights.gate"])
    m = play(BG, script, options=SMALL)
    assert up(m, "knights.hero") and m.state["balcony"]["knights"] is None
    assert m.view()["armies"]["knights"]["actions_lost_next_turn"] == 1


def test_nobody_leaves_the_tower_once_the_gate_is_down():
    # The Knights' own shot brings their gate down while their hero stays on the balcony... it cannot:
    # the gate knocks the balcony figure over. So test the Orcs' hero climbing, then the Orc gate falling.
    script = ready(balcony={"orcs": "orcs.hero"}) + [end("orcs")]
    script += shot("knights", "cannon", "hero", ["orcs.gate"])
    m = play(BG, script, options=SMALL)
    assert m.state["balcony"]["orcs"] is None
    m.apply(end("knights"))
    e = raises(Illegal, m.apply, {"t": "move", "by": "orcs", "piece": "orcs.hero", "to": "balcony"})
    assert "gate is down" in str(e)


# ---------------------------------------------------------------- Armory Pack


def test_armory_weapons_join_both_armies_only_when_chosen():
    plain = play(BG, ready())
    assert plain.view()["armies"]["orcs"]["weapons"] == [
        "orcs.catapult", "orcs.cannon", "orcs.crossbow", "orcs.castle-catapult",
    ]
    armed = play(BG, ready(), options={"armory": "on"})
    assert armed.view()["armies"]["knights"]["weapons"][4:] == [
        "knights.twin-crossbow", "knights.trebuchet", "knights.gatling-gun",
        "knights.triple-catapult", "knights.battering-ram",
    ]
    e = raises(Illegal, plain.apply, {"t": "fire", "by": "orcs", "weapon": "orcs.trebuchet", "crew": "orcs.hero"})
    assert "orcs.trebuchet" in str(e)


def test_the_battering_ram_takes_two_actions_twice_a_game_and_returns_home_after_the_turn():
    m = play(BG, ready(), options={"armory": "on"})
    fx = m.apply(shot("orcs", "battering-ram", "warrior1")[0])
    assert "Orcs charge with the battering ram." in says(fx) and m.view()["actions_left"] == 0
    m.apply({"t": "fell", "piece": "knights.gate"})
    fx = m.apply({"t": "over", "by": "orcs"})
    assert "gate.down" in cues(fx) and "ram.return" in cues(fx)
    assert "Return the Orc battering ram to its own camp." in says(fx)
    assert m.view()["turn"] == "knights"
    m.apply(end("knights"))
    m.apply({"t": "move", "by": "orcs", "piece": "orcs.hero"})
    e = raises(Illegal, m.apply, shot("orcs", "battering-ram", "warrior1")[0])
    assert "takes two actions and only one is left" in str(e)
    m.apply(end("orcs"))
    m.apply(end("knights"))
    for inp in shot("orcs", "battering-ram", "warrior1"):
        m.apply(inp)
    m.apply(end("knights"))
    assert m.view()["armies"]["orcs"]["ram_uses"] == 0
    e = raises(Illegal, m.apply, shot("orcs", "battering-ram", "warrior1")[0])
    assert "used twice this game" in str(e)


# ---------------------------------------------------------------- views


def test_everything_is_in_plain_sight_so_every_viewer_sees_the_same_view():
    m = play(BG, ready(power=["orcs.hero"]) + shot("orcs", "cannon", "hero", ["knights.warrior1"]), options=SMALL)
    public = dumps(m.view())
    assert dumps(BG.view(m.state, "orcs")) == dumps(BG.view(m.state, "knights")) == dumps(BG.view(m.state, None))
    assert '"orcs.hero":{"power":1,"up":true}' in public
    assert m.view()["log"][-1] == "Orcs, one more action."


def test_pieces_are_read_aloud_the_way_players_name_them():
    assert BG.spoken("orcs.warrior3") == "Orc warrior 3"
    assert BG.spoken("knights.gate") == "Knight castle gate"
    assert BG.spoken("knights.twin-crossbow") == "Knight twin crossbow"
    assert BG.spoken("orcs.hero") == "Orc hero"
