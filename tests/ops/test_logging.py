"""The bridge logs with Python `logging`: the terminal keeps printing after start-up (each table's story,
the bridge's own notes), a rotating file beside the journal keeps the same, at the level the user chose."""

import pathlib
import shutil

from support.bridgeproc import Ws

WRONG_TURN = {"t": "move", "by": "defenders", "from": "a1", "to": "a2"}
ILLEGAL = [{"t": "cell", "cell": "b5", "occupied": False}, {"t": "cell", "cell": "b3", "occupied": True}]


def play_refused_move(b):
    ws = Ws(b.url, role="host", code=b.host_code)
    for inp in ILLEGAL:  # said aloud: "That is not a legal move..."
        ws.act(action="sense", input=inp)
    ws.act(action="input", input=WRONG_TURN)  # refused: a warning
    ws.act(action="pause", paused=True)
    ws.close()


def wait_for(fn, timeout=10):
    import time

    deadline = time.monotonic() + timeout
    while not fn():
        assert time.monotonic() < deadline, "never logged"
        time.sleep(0.05)


def test_terminal_and_file_beside_the_journal_tell_what_happened(bridge_process, tmp_path):
    b = bridge_process("--simulate", "--game", "ringo")
    play_refused_move(b)
    # every line waited for: the terminal's output reaches its file in pieces, whatever order they were logged in
    wait_for(lambda: all(w in b.output() for w in ("Game paused", "not a legal move", "Refused (host page)")))
    out = b.output()
    said = next(ln for ln in out.splitlines() if "not a legal move" in ln)
    assert "INFO" in said and "ringo:" in said  # level, and which table
    refused = next(ln for ln in out.splitlines() if "Refused (host page)" in ln)
    assert "WARNING" in refused and "attackers' turn" in refused
    assert "INFO" in next(ln for ln in out.splitlines() if "Game paused" in ln)
    logfile = pathlib.Path(b.journal).parent / "battlement.log"
    wait_for(lambda: logfile.exists() and all(w in logfile.read_text() for w in ("Game paused", "not a legal move")))


def test_the_level_and_the_file_are_the_users_choice(bridge_process, tmp_path):
    chosen = tmp_path / "logs" / "table.log"
    b = bridge_process("--simulate", "--game", "ringo", "--log-level", "warning", "--log-file", str(chosen))
    play_refused_move(b)
    wait_for(lambda: chosen.exists() and "Refused (host page)" in chosen.read_text())
    assert "Refused (host page)" in b.output()
    for text in (b.output(), chosen.read_text()):  # info is below warning
        assert "Game paused" not in text and "not a legal move" not in text
    assert not (pathlib.Path(b.journal).parent / "battlement.log").exists()


def test_a_bridge_note_reaches_the_terminal(bridge_process, tmp_path):
    b = bridge_process("--simulate", "--game", "ringo", "--sound", "file", "--sound-dir", str(tmp_path / "s"))
    ws = Ws(b.url, role="host", code=b.host_code)
    reply = ws.act(action="sound", volume=500)
    assert not reply["ok"] and "0 to 200" in reply["message"]
    ws.close()
    shutil.rmtree(tmp_path / "s")  # the sound folder is gone: espeak-ng cannot write, and it is said
    play_refused_move(b)
    wait_for(lambda: "ERROR   battlement.sound" in b.output())
    err = next(ln for ln in b.output().splitlines() if "ERROR   battlement.sound" in ln)
    # the refusal's tone (sox exits 1) or its words (espeak-ng exits 0 but writes no file), whichever came first
    assert "battlement.sound" in err and ("could not write" in err or "sox failed" in err)
