"""kill -9 of `battlement run` mid-game, restart on the same journal: the identical game, same codes."""

from support.bridgeproc import Ws


def play_sensed(ws, n):
    """Move the first piece the host page offers, n times: lift and put down on the simulated boards."""
    s = ws.state()
    for _ in range(n):
        turns = s["view"]["turns"]
        assert ws.act(action="sense", input=s["sensed"][0])["ok"]
        s = ws.state(lambda m, turns=turns: m["view"]["turns"] > turns)
    return s


def test_kill_9_mid_game_and_restart_resumes_the_identical_game(bridge_process, tmp_path):
    journal = str(tmp_path / "game.sqlite")
    b = bridge_process("--simulate", "--game", "ringo", journal=journal)
    ws = Ws(b.url, role="host", code=b.host_code)
    s = play_sensed(ws, 5)
    assert s["counters"]["inputs"] == 10  # each move: a cell emptied, a cell filled
    before = b.state()
    ws.close()
    b.kill9()

    b2 = bridge_process("--simulate", "--game", "ringo", journal=journal)
    after = b2.state()
    assert after["view"] == before["view"]
    assert "Resumed the game of Ringo after 10 inputs." in [n["text"] for n in after["notices"]]
    ws = Ws(b2.url, role="host", code=b2.host_code)
    s = play_sensed(ws, 1)  # and play goes on from there
    assert s["view"]["turns"] >= before["view"]["turns"]
    ws.close()
