"""`battlement venue`: the hub started as a host starts it, and the host's commands to it (teams, a
tournament, the standings), each mistake one line naming what was wrong."""

import os

from support.cli import battlement
from support.hubproc import HubProcess
from support.procs import free_port


def one_line(err):
    return "Traceback" not in err and err.strip().count("\n") == 0


def test_the_help_takes_a_host_from_an_empty_venue_to_a_tournament():
    rc, out, _ = battlement("venue", "--help")
    assert rc == 0
    for said in ("battlement venue --mqtt", "copy that file to every bridge", "team Knights Orcs",
                 "tournament --title", "--pool", "standings", "Table 3: Knights against Orcs"):
        assert said in out, said


def test_a_hub_without_its_venue_or_broker_and_an_action_without_a_hub_are_one_line_each(tmp_path):
    rc, _, err = battlement("venue", "--mqtt", "mqtt://127.0.0.1:1", "--journal", str(tmp_path / "h.sqlite"))
    assert rc == 2 and "--venue ID names the venue" in err and one_line(err)
    rc, _, err = battlement("venue", "--venue", "bar-9", "--journal", str(tmp_path / "h.sqlite"))
    assert rc == 2 and "--mqtt URL: the hub reaches the venue's bridges" in err and one_line(err)
    url = "http://127.0.0.1:%d" % free_port()
    rc, _, err = battlement("venue", "--venue", "bar-9", "--host-code", "a-code-long-enough", "--url", url,
                            "team", "Knights")
    assert rc == 2 and "no venue hub answers at %s" % url in err and one_line(err)


def test_the_host_sets_a_tournament_up_from_the_command_line_and_reads_its_standings(mosquitto, tmp_path):
    keys = tmp_path / "keys"
    hub = HubProcess(tmp_path, mosquitto.url, "bar-cli", keys).start()
    try:
        assert "made now: copy it to every bridge" in hub.output()
        assert oct(os.stat(keys / "bar-cli.venue-key.toml").st_mode & 0o777) == "0o600"
        ask = ("venue", "--venue", "bar-cli", "--keys-dir", str(keys), "--url", hub.url)
        rc, out, err = battlement(*ask, "team", "Knights", "Orcs")
        assert rc == 0 and out.strip() == "team Knights, Orcs added", err
        rc, out, err = battlement(*ask, "player", "Ann", "--team", "Knights")
        assert rc == 0 and out.strip() == "player Ann added to Knights", err
        rc, _, err = battlement(*ask, "tournament", "--game", "ringo", "--format", "round_robin", "--team", "Knights")
        assert rc == 2 and "a tournament needs at least 2 teams, not 1" in err and one_line(err)
        rc, _, err = battlement(*ask, "tournament", "--game", "chess", "--format", "round_robin", "--team", "Knights",
                                "--team", "Orcs")
        assert rc == 2 and "unknown game 'chess'" in err and one_line(err)
        rc, out, err = battlement(*ask, "tournament", "--title", "Ringo Ladder", "--game", "ringo", "--format",
                                  "round_robin", "--team", "Knights", "--team", "Orcs", "--team", "Elves", "--seed", "3")
        assert rc == 0 and out.strip() == "tournament ringo-ladder set up: 1 match ready", err
        rc, out, err = battlement(*ask, "standings")
        assert rc == 0, err
        lines = out.splitlines()
        assert lines[0] == "Ringo Ladder (round robin, ringo): 0 played"
        assert [line.split()[1] for line in lines[2:]] == ["Knights", "Orcs", "Elves"]
        # a blind draw: one player of each pool a team, the drawn teams and players kept by the venue
        rc, out, err = battlement(*ask, "tournament", "--title", "Blind", "--game", "ringo", "--format",
                                  "single_elimination", "--pool", "Ann, Bo, Cy, Di", "--pool", "Ed, Flo, Gus, Hal")
        assert rc == 0 and out.strip() == "tournament blind set up: 2 matches ready", err
        drawn = hub.get("/api/venue?t=blind")["tournament"]["teams"]
        assert len(drawn) == 4 and all(len(t["players"]) == 2 and t["name"] == " & ".join(t["players"]) for t in drawn)
        assert sorted(p for t in drawn for p in t["players"]) == ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"]
        assert all(t["players"][0] in ("Ann", "Bo", "Cy", "Di") for t in drawn)  # the first pool's player first
        # a wrong code is refused, and costs the asker one of its tries
        rc, _, err = battlement(*ask[:-2], "--host-code", "not-the-code-at-all", "--url", hub.url, "team", "Elves")
        assert rc == 2 and "the host code is needed" in err and one_line(err)

        # a second hub on the same journal stops at once
        rc, _, err = battlement("venue", "--mqtt", mosquitto.url, "--venue", "bar-cli", "--keys-dir", str(keys),
                                "--port", str(free_port()), "--journal", hub.journal, "--log-file", "-")
        assert rc == 2 and "another hub" in err and one_line(err)
    finally:
        hub.stop()
