"""Announcements become real audio files (espeak-ng, sox); `battlement sim` drives a bridge over a pty."""

import subprocess

from battlement.errors import UserError
from battlement.sim.simulator import read_script
from battlement.sound.speaker import Sound
from battlement.table.journal import Journal
from battlement.table.maps import for_game
from battlement.table.session import Session
from support.bridgeproc import BATTLEMENT, ROOT, Ws


def seconds(path):
    """Length of an audio file, measured by sox."""
    return float(subprocess.run(["soxi", "-D", path], capture_output=True, text=True, check=True).stdout)


def test_spoken_announcements_and_cue_tones_are_written_as_wav(tmp_path):
    sound = Sound("file", str(tmp_path / "sound"), voice="en", volume=80)
    s = Session(for_game("ringo"), Journal(str(tmp_path / "j.sqlite")), sound)
    s.apply({"t": "cell", "cell": "b5", "occupied": False}, "test")
    s.apply({"t": "cell", "cell": "b3", "occupied": True}, "test")  # illegal: said aloud, warning tone
    sound.close()
    said = [f for f in sound.files if "say" in f]
    tones = [f for f in sound.files if "move-illegal" in f]
    assert said and tones
    assert seconds(said[-1]) > 1.0  # "That is not a legal move for the attackers: ..." takes a while to say
    assert 0.2 < seconds(tones[-1]) < 0.5


def test_null_sound_counts_as_silent_never_as_said(tmp_path):
    sound = Sound("null")
    s = Session(for_game("ringo"), Journal(str(tmp_path / "j.sqlite")), sound)
    s.apply({"t": "cell", "cell": "b5", "occupied": False}, "test")
    s.apply({"t": "cell", "cell": "b3", "occupied": True}, "test")
    assert sound.counters["silent"] >= 1 and sound.counters["said"] == 0 and sound.files == []


def test_a_bad_script_line_is_named(tmp_path):
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"at": 0, "object": "b5", "value": 0}\n# comment\n{"at": 1, "value": 1}\n')
    try:
        read_script(str(bad))
    except UserError as e:
        assert str(e).startswith("%s:3:" % bad) and '"object"' in str(e)
    else:
        raise AssertionError("the script was accepted")


def test_battlement_sim_plays_a_script_into_a_running_bridge(bridge_process, tmp_path):
    script = tmp_path / "move.jsonl"
    script.write_text('{"at": 0, "object": "b5", "value": 0}\n{"at": 0.2, "object": "b4", "value": 1}\n')
    sim = subprocess.Popen([BATTLEMENT, "sim", "--table", "hardware/tables/ringo.toml", "--script", str(script),
                            "--wait", "2", "--linger", "2"], stdout=subprocess.PIPE, text=True,
                           cwd=str(ROOT))
    try:
        ports = []
        while len(ports) < 6:
            line = sim.stdout.readline()
            assert line, "sim exited early"
            if "--serial" in line:
                ports.append(line.split()[1])
        args = ["--game", "ringo"]
        for p in ports:
            args += ["--serial", p]
        b = bridge_process(*args)
        ws = Ws(b.url, role="public")
        state = ws.state(lambda m: m["view"]["cells"].get("b4") == "attackers", timeout=20)
        assert state["view"]["awaiting"] == ["defenders"]
        ws.close()
        assert sim.wait(20) == 0
    finally:
        if sim.poll() is None:
            sim.terminate()
            sim.wait(10)
