"""`battlement run --list-games` and `--resume ID`: any game set aside in the journal can be taken up again at
start, by the id the host page shows too; the game in progress is set aside in its turn. An id that names no
game set aside is one line listing the games there are, exit status 2."""

import re

from support.bridgeproc import Ws
from support.cli import battlement

from cli.test_small_things import one_error_line


def host(b):
    ws = Ws(b.url, role="host", code=b.host_code)
    try:
        return ws.state()
    finally:
        ws.close()


def play(b, n):
    """n legal Ringo moves from the host page (the first decision each time)."""
    ws = Ws(b.url, role="host", code=b.host_code)
    try:
        st = ws.state()
        for _ in range(n):
            done = st["counters"]["inputs"]
            move = next(d for d in st["decisions"] if d["t"] == "move")
            assert ws.act(action="input", input=move)["ok"]
            st = ws.state(lambda m, done=done: m["counters"]["inputs"] > done)  # a reply is followed by a state
    finally:
        ws.close()


def new_game(b, game=None):
    ws = Ws(b.url, role="host", code=b.host_code)
    try:
        assert ws.act(action="new", game=game, options={})["ok"]
    finally:
        ws.close()


def listed(journal):
    code, out, err = battlement("run", "--list-games", "--journal", journal)
    assert code == 0, err
    return out


def test_run_resume_takes_up_a_game_set_aside_two_new_games_ago(bridge_process, tmp_path):
    journal = str(tmp_path / "j.sqlite")
    b = bridge_process("--simulate", "--game", "ringo", journal=journal)
    play(b, 6)
    first = host(b)
    new_game(b)
    new_game(b)  # two "New game" presses: the six-input game is no longer "the previous game"
    playing = host(b)
    b.stop()

    out = listed(journal)
    row = next(ln for ln in out.splitlines() if re.match(r"\s*%d\s" % first["game_id"], ln))
    assert "Ringo" in row and "6 inputs" in row and "table ringo" in row
    assert "--resume" in out  # it says how to take one up

    again = bridge_process("--simulate", "--game", "ringo", "--resume", str(first["game_id"]), journal=journal)
    now = host(again)
    assert now["game_id"] == first["game_id"] and now["view"] == first["view"] and now["codes"] == first["codes"]
    assert "resumed:    game %d" % first["game_id"] in again.output()
    # the game that was in progress is set aside, not lost
    assert playing["game_id"] in [g["id"] for g in now["set_aside"]]


def test_run_resume_switches_a_simulated_table_back_to_the_games_own_game(bridge_process, tmp_path):
    journal = str(tmp_path / "j.sqlite")
    b = bridge_process("--simulate", "--game", "ringo", journal=journal)
    play(b, 2)
    ringo = host(b)
    new_game(b, "plingpong")  # the simulated table switches game
    b.stop()
    again = bridge_process("--simulate", "--game", "ringo", "--resume", str(ringo["game_id"]), journal=journal)
    now = host(again)
    assert now["game"] == "ringo" and now["view"] == ringo["view"]
    assert next(g["game"] for g in now["set_aside"]) == "plingpong"


def test_an_unknown_id_is_one_line_listing_the_games_there_are(bridge_process, tmp_path):
    journal = str(tmp_path / "j.sqlite")
    b = bridge_process("--simulate", "--game", "ringo", journal=journal)
    play(b, 2)
    aside = host(b)["game_id"]
    new_game(b)
    b.stop()
    code, _out, err = battlement("run", "--simulate", "--game", "ringo", "--journal", journal, "--port", "0",
                                 "--log-file", "-", "--resume", "999")
    assert code == 2
    line = one_error_line(err)
    assert "no game 999 set aside" in line and "%d (Ringo" % aside in line and "2 inputs" in line

    code, _out, err = battlement("run", "--list-games", "--journal", str(tmp_path / "none.sqlite"))
    assert code == 2 and "no journal" in one_error_line(err)
