"""`battlement broker-config --venue ID` on a real Mosquitto that drops to its own user, as Debian's service
starts it: the hub's login may send match starts and hear results and status on the venue's topics only;
each bridge's login may hear the starts of its own tables and speak for them alone; no board and not Home
Assistant may touch a venue topic. A real bridge and the hub play a match through it, while a board's login
and another table's bridge login (which holds the venue key too) try to forge a start and a result: the
broker drops them, and what a login may send without the venue key the MAC refuses."""

import pathlib

import pytest
from battlement import cli
from battlement.ops.broker import BRIDGE_USER, HASS_USER, HUB_USER, write
from battlement.venue import protocol
from support.overload import table_files
from support.procs import free_port
from support.venue import SIDES, HubThread, make_key, play_ringo_to_end

from ops import test_broker_config as plain

# the folder a venue's broker runs from, the broker on it, paho clients of its logins (closed before it stops)
venue, broker_in, clients = plain.venue, plain.broker_in, plain.clients
VENUE = "bar-9"


def vt(table, leaf, v=VENUE):
    return "%s/%s/%s/%s" % (protocol.ROOT, v, table, leaf)


def test_the_hub_starts_and_hears_every_table_and_each_bridge_login_speaks_only_for_its_own(tmp_path, venue,
                                                                                           broker_in, clients):
    (a, fa), (b, fb) = table_files(tmp_path, 2, prefix="hall")
    port = free_port()
    d = venue / "mq"
    users = write([fa, fb], str(d), port, "127.0.0.1", bridges=["east=%s" % b], venue=VENUE)
    east_user = BRIDGE_USER + "-east"
    assert HUB_USER in users and east_user in users
    broker_in(d, port)
    hub, west, east = (clients(port, u, users[u]) for u in (HUB_USER, BRIDGE_USER, east_user))
    board = clients(port, "%s.ring-5" % a, users["%s.ring-5" % a])
    ha = clients(port, HASS_USER, users[HASS_USER])
    assert all(c.ok() for c in (hub, west, east, board, ha))
    hub.subscribe(vt("+", "up"), "battlement/+/+/up")
    west.subscribe(vt(a, "down"), vt(b, "down"))
    east.subscribe(vt(a, "down"), vt(b, "down"))
    board.subscribe("%s/#" % protocol.ROOT, "battlement/%s/ring-5/down" % a)
    ha.subscribe("%s/#" % protocol.ROOT, "battlement/+/game")

    hub.send(vt(a, "down"), b"start on a")
    hub.send(vt(b, "down"), b"start on b")
    west.send(vt(a, "up"), b"result of a")
    east.send(vt(b, "up"), b"result of b")
    # all refused by the broker:
    hub.send(vt(a, "up"), b"the hub as table a")
    hub.send(vt(a, "down", "bar-10"), b"the hub in another venue")
    hub.send("battlement/%s/ring-5/down" % a, b"the hub commanding a board")
    board.send("battlement/%s/ring-5/up" % a, b"an event the hub must not hear")
    west.send(vt(b, "up"), b"west as table b")
    west.send(vt(b, "down"), b"west starting a match on b")
    west.send(vt(a, "down"), b"west starting a match itself")
    east.send(vt(a, "up"), b"east as table a")
    east.send(vt(a, "down"), b"east starting a match on a")
    for who in (board, ha):
        who.send(vt(a, "down"), b"a start from nowhere")
        who.send(vt(a, "up"), b"a result from nowhere")
    plain.settle((hub, vt(a, "down"), west), (hub, vt(b, "down"), east), (west, vt(a, "up"), hub),
                 (east, vt(b, "up"), hub), (west, "battlement/%s/ring-5/down" % a, board),
                 (west, "battlement/%s/game" % a, ha))
    assert sorted(hub.got) == [(vt(a, "up"), b"result of a"), (vt(b, "up"), b"result of b")]
    assert west.got == [(vt(a, "down"), b"start on a")]
    assert east.got == [(vt(b, "down"), b"start on b")]
    assert board.got == [] and ha.got == []


def test_a_hub_and_a_bridge_play_through_it_and_no_board_or_other_bridge_forges_a_start_or_a_result(
        tmp_path, venue, broker_in, clients, bridge_process):
    (a, fa), (b, fb) = table_files(tmp_path, 2, prefix="vacl%d" % free_port())
    port = free_port()
    d = venue / "mq"
    users = write([fa, fb], str(d), port, "127.0.0.1", bridges=["east=%s" % b], venue=VENUE)
    (d / "conf.d" / "note.conf").write_text("# what a venue adds beside broker-config's files is read too\n")
    broker_in(d, port)
    keys, key = make_key(tmp_path, VENUE)

    def url(user):
        return "mqtt://%s:%s@127.0.0.1:%d" % (user, users[user], port)

    bridge = bridge_process("--table", fa, "--mqtt", url(BRIDGE_USER), "--venue", VENUE, "--keys-dir", keys)
    hub = HubThread(tmp_path / "hub.sqlite", url(HUB_USER), VENUE, key)
    east_user = BRIDGE_USER + "-east"
    east = clients(port, east_user, users[east_user])  # table b's bridge login, and the venue key it holds
    board = clients(port, "%s.ring-5" % a, users["%s.ring-5" % a])  # a board of table a: no venue key
    assert east.ok() and board.ok()

    def counters():
        return bridge.get("/api/health?code=" + bridge.host_code)["counters"]
    try:
        # a start for table a, signed with the venue key as the hub's, from b's bridge login; one from a board
        x = protocol.start("X-1", a, "ringo", {}, SIDES)
        east.send(vt(a, "down"), protocol.Sender(key, protocol.HUB).seal(vt(a, "down"), x))
        board.send(vt(a, "down"), protocol.Sender(b"k" * 32, protocol.HUB).seal(vt(a, "down"), x))
        hub.call(hub.hub.start_match, "M1", a, "ringo", {}, SIDES)  # after both, on the same topic
        ready = hub.wait_for("ready", match="M1")
        c = counters()
        assert (c["venue-starts"], c["venue-refusals-sent"]) == (1, 0)
        assert not [r for r in protocol.REASONS if c["venue-refused-" + r]], c
        assert bridge.get("/api/state?table=" + a)["venue"]["game_id"] == ready["game_id"]

        # a result for M1, signed as table a's, from b's bridge login; one from a board
        r = protocol.result("M1", a, "ringo", ready["game_id"], SIDES, "defenders", {}, "Ringo: defenders won")
        east.send(vt(a, "up"), protocol.Sender(key, a).seal(vt(a, "up"), r))
        board.send(vt(a, "up"), protocol.Sender(b"k" * 32, a).seal(vt(a, "up"), r))
        # b's login may speak on b's topic: a stolen password without the venue key is refused by the MAC
        wrong = protocol.result("M1", b, "ringo", 1, SIDES, "defenders", {}, "Ringo: defenders won")
        east.send(vt(b, "up"), protocol.Sender(b"k" * 32, b).seal(vt(b, "up"), wrong))
        plain.wait(lambda: hub.hub.counters["refused-forged"] == 1, "the wrong MAC refused", timeout=30)
        assert hub.hub.counters["results"] == 0 and hub.of("result") == []
        assert not [r for r in protocol.REASONS if r != "forged" and hub.hub.counters["refused-" + r]]

        last = play_ringo_to_end(bridge, a)
        result = hub.wait_for("result", match="M1")
        assert result["winner"] == last["view"]["winner"]
        plain.wait(lambda: counters()["venue-acks"] == 1, "the ack at the bridge", timeout=30)
        assert hub.hub.counters["results"] == 1 and len(hub.of("result")) == 1
        assert hub.hub.counters["refused-forged"] == 1
    finally:
        hub.stop()


def test_a_venue_keeps_every_password_and_says_which_bridge_carries_which_table(tmp_path, capsys):
    (a, fa), (b, fb) = table_files(tmp_path, 2, prefix="hall")
    out = str(tmp_path / "mq")
    first = write([fa, fb], out, 1883, venue=VENUE)
    assert cli.main(["broker-config", "--table", fa, "--table", fb, "--out", out, "--venue", VENUE,
                     "--bridge-login", "east=%s" % b]) == 0
    said = capsys.readouterr().out
    assert "the venue's hub" in said and "logs in as %s" % HUB_USER in said
    assert "%s: %s" % (BRIDGE_USER, a) in said and "%s-east: %s" % (BRIDGE_USER, b) in said
    conf = (pathlib.Path(out) / "mosquitto.conf").read_text()
    assert conf.endswith("include_dir %s\n" % (pathlib.Path(out) / "conf.d").resolve())  # a league's bridge goes there
    acl = (pathlib.Path(out) / "acl").read_text()
    assert "user %s\ntopic write %s\ntopic read %s\n" % (HUB_USER, vt("+", "down"), vt("+", "up")) in acl
    assert "user %s-east\ntopic read %s\ntopic write %s\n" % (BRIDGE_USER, vt(b, "down"), vt(b, "up")) in acl
    # a run without the venue writes no venue topic, keeps the hub's password, and calls it no stray login
    assert cli.main(["broker-config", "--table", fa, "--table", fb, "--out", out]) == 0
    said = capsys.readouterr().out
    assert "gone" not in said and protocol.ROOT not in (pathlib.Path(out) / "acl").read_text()
    assert "include_dir" not in (pathlib.Path(out) / "mosquitto.conf").read_text()
    assert write([fa, fb], out, 1883, venue=VENUE)[HUB_USER] == first[HUB_USER]


@pytest.mark.parametrize("logins, venue_id, message", [
    (["east={1},hall-9"], VENUE, "east={1},hall-9: hall-9 is not one of the tables named by --table ({0}, {1})"),
    (["east={1}", "west={1}"], VENUE, ("table {1} is given to battlement-bridge-east and to battlement-bridge-west; "
                                       "one bridge serves a table")),
    (["east={1}"], None, "east={1}: the tables a bridge serves go into a venue's ACL: give --venue ID too"),
    ([], "Bar 9", "venue id 'Bar 9' is not allowed"),
])
def test_a_venue_whose_tables_do_not_add_up_is_one_clear_line(tmp_path, capsys, logins, venue_id, message):
    (a, fa), (b, fb) = table_files(tmp_path, 2, prefix="hall")
    args = ["broker-config", "--table", fa, "--table", fb, "--out", str(tmp_path / "mq")]
    args += [x for lg in logins for x in ("--bridge-login", lg.format(a, b))]
    args += ["--venue", venue_id] if venue_id else []
    assert cli.main(args) == 2
    _out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message.format(a, b) in err
    assert not (tmp_path / "mq").exists()  # nothing written
