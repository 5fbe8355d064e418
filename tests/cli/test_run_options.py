"""`battlement run --option KEY=VALUE`: the options `battlement games` lists, for the game the bridge starts.
A wrong key or value is one line naming it and what is valid; on a resumed journal the game in progress keeps
its own options and the bridge says the new ones wait for the next new game."""

from support.bridgeproc import Ws
from support.cli import battlement

from cli.test_small_things import one_error_line


def host_state(b):
    ws = Ws(b.url, role="host", code=b.host_code)
    try:
        return ws.state()
    finally:
        ws.close()


def attackers(state):
    return sum(1 for v in state["view"]["cells"].values() if v == "attackers")


def test_run_plays_its_first_game_with_the_options_given(bridge_process):
    b = bridge_process("--simulate", "--game", "ringo", "--option", "attackers=5",
                       "--option", "defenders_may_pass=true")
    s = host_state(b)
    assert s["options"]["attackers"] == 5 and s["options"]["defenders_may_pass"] is True
    assert attackers(s) == 5  # five pieces on the board, not the rules' seven
    assert "options:    attackers=5 defenders_may_pass=true" in b.output()


def test_a_wrong_option_is_one_line_naming_it_and_what_is_valid(tmp_path):
    def run(*option):
        return battlement("run", "--simulate", "--game", "ringo", "--journal", str(tmp_path / "j.sqlite"),
                          "--port", "0", "--log-file", "-", *option)

    code, _out, err = run("--option", "attack=5")
    assert code == 2
    line = one_error_line(err)
    assert "'attack'" in line and "attackers" in line and "neutral_limit" in line  # the key, and the known ones

    code, _out, err = run("--option", "attackers=9")
    assert code == 2
    line = one_error_line(err)
    assert "attackers=9" in line and "5, 6, 7" in line

    code, _out, err = run("--option", "attackers")
    assert code == 2
    assert "KEY=VALUE" in one_error_line(err)


def test_on_a_resumed_journal_the_options_wait_for_the_next_new_game(bridge_process, tmp_path):
    journal = str(tmp_path / "kept.sqlite")
    first = bridge_process("--simulate", "--game", "ringo", journal=journal)
    assert attackers(host_state(first)) == 7
    first.stop()

    b = bridge_process("--simulate", "--game", "ringo", "--option", "attackers=5", journal=journal)
    assert ("options:    table ringo resumed its game, which keeps attackers=7; attackers=5 applies from "
            "the next new game") in b.output()
    assert attackers(host_state(b)) == 7
    ws = Ws(b.url, role="host", code=b.host_code)
    try:
        assert ws.act(action="new", options={})["ok"]  # a new game with the table's options
        s = ws.state(lambda m: attackers(m) != 7)
    finally:
        ws.close()
    assert attackers(s) == 5 and s["options"]["attackers"] == 5
