"""A league across venues: a Mosquitto bridge (a `connection` in a venue broker's mosquitto.conf) joins the
venue's broker A, where a real `battlement run --venue` serves its table with simulated boards, to the
league's broker B, where the hub runs. Only that table's venue topics cross. A match start crosses from
the hub to the table, the game is played through the rules, and its result crosses back and is counted
once. With broker A restarted in the middle of a game (the link between the brokers and the bridge's own
connection cut), the game goes on and its result still reaches the hub exactly once; restarted between a
result and its ack, the result crosses again and is counted once (docs/venue.md, "Across venues")."""

import threading

from battlement.venue import protocol
from support.procs import Broker, free_port
from support.venue import SIDES, HubThread, Tap, make_key, play_ringo, play_ringo_to_end, venue_tables, wait

VENUE = "league-8"
LINK = "venue-a"  # the bridge connection's client id at the league's broker


def venue_broker(d, port, league_port, tables):
    """Broker A, a venue's: its bridge connection to the league's broker B (the venue dials out) carries the
    venue topics of its own tables, the tables' up topics out and the hub's down topics in, at QoS 1, as
    docs/venue.md sets one up. Its session at B is kept (cleansession false): what B holds for the link
    waits out a cut there."""
    d.mkdir()
    conf = d / "mosquitto.conf"
    lines = ["listener %d 127.0.0.1" % port, "allow_anonymous true", "persistence false", "set_tcp_nodelay true",
             "connection league", "address 127.0.0.1:%d" % league_port, "remote_clientid %s" % LINK,
             "cleansession false", "restart_timeout 1", "bridge_protocol_version mqttv311"]
    for t in tables:
        lines += ["topic %s out 1" % protocol.up_topic(VENUE, t), "topic %s in 1" % protocol.down_topic(VENUE, t)]
    conf.write_text("\n".join(lines) + "\n")
    return Broker(d, port, conf=conf)


def test_a_match_crosses_a_broker_bridge_and_its_result_comes_back_once_even_when_the_link_is_cut(
        bridge_process, tmp_path):
    ((table, f),) = venue_tables(tmp_path, 1, "lv%d" % free_port())
    league = Broker(tmp_path / "league").start()
    here = venue_broker(tmp_path / "venue", free_port(), league.port, [table])
    links = Tap(league, "$SYS/broker/connection/%s/state" % LINK)  # "1" each time the link comes up
    crossed = Tap(league, protocol.up_filter(VENUE))  # the table's messages as they reach the league
    hub = None
    try:
        here.start()
        wait(lambda: any(p == b"1" for _t, p in links.heard), "the link up", 20)
        keys, key = make_key(tmp_path, VENUE)
        bridge = bridge_process("--table", f, "--simulate", "--mqtt", here.url, "--venue", VENUE, "--keys-dir", keys)
        hub = HubThread(tmp_path / "hub.sqlite", league.url, VENUE, key)

        def sent():
            return bridge.get("/api/health?code=" + bridge.host_code)["counters"]

        def results(match):
            return [p for _t, p in crossed.heard if b'"t":"result"' in p and b'"match":"%s"' % match.encode() in p]

        hub.call(hub.hub.start_match, "R1-M1", table, "ringo", {}, SIDES)
        assert hub.wait_for("ready", match="R1-M1")["table"] == table
        last = play_ringo_to_end(bridge, table)
        assert hub.wait_for("result", match="R1-M1")["winner"] == last["view"]["winner"]
        wait(lambda: sent()["venue-acks"] == 1, "the ack crossed back")
        # every copy the table sent crossed once (the link adds none), and the hub took one
        assert len(results("R1-M1")) == sent()["venue-results-sent"] >= 1
        assert hub.hub.counters["results"] == 1

        hub.call(hub.hub.start_match, "R1-M2", table, "ringo", {}, SIDES)
        hub.wait_for("ready", match="R1-M2")
        mid = play_ringo(bridge, table, 6)
        assert not mid["view"]["over"] and mid["counters"]["inputs"] > 0
        ups = sum(p == b"1" for _t, p in links.heard)
        here.restart()  # the link, the bridge's connection and its boards' go down; none of them for long
        wait(lambda: sum(p == b"1" for _t, p in links.heard) > ups, "the link back up", 30)
        last = play_ringo_to_end(bridge, table)
        assert last["counters"]["inputs"] > mid["counters"]["inputs"]
        assert hub.wait_for("result", match="R1-M2")["winner"] == last["view"]["winner"]
        wait(lambda: sent()["venue-acks"] == 2, "the second ack crossed back", 30)
        # a marker: the table's status after the ack says idle, so whatever it sent before has crossed
        wait(lambda: hub.call(lambda: hub.hub.table_states()[table]["state"]) == "idle", "the table idle")
        assert len(hub.of("result", match="R1-M2")) == 1 and len(hub.of("result")) == 2
        assert hub.hub.counters["results"] == 2 and len(results("R1-M2")) >= 1

        # The link cut between a result and its ack: the hub, held, has the result waiting when broker A
        # restarts; the table sends it again once it is back; the hub takes the first copy, acks both.
        hub.call(hub.hub.start_match, "R1-M3", table, "ringo", {}, SIDES)
        hub.wait_for("ready", match="R1-M3")
        held = threading.Event()
        hub._loop.call_soon_threadsafe(held.wait, 60)  # the hub's loop stops until released
        try:
            last = play_ringo_to_end(bridge, table)
            wait(lambda: results("R1-M3"), "the result at the league's broker")
            copies = sent()["venue-results-sent"]
            ups = sum(p == b"1" for _t, p in links.heard)
            here.restart()
            wait(lambda: sum(p == b"1" for _t, p in links.heard) > ups, "the link back up", 30)
            wait(lambda: sent()["venue-results-sent"] > copies and len(results("R1-M3")) >= 2,
                 "the result sent again across the restored link", 30)
        finally:
            held.set()
        wait(lambda: sent()["venue-acks"] == 3, "the third ack crossed back", 30)
        assert hub.wait_for("result", match="R1-M3")["winner"] == last["view"]["winner"]
        assert len(hub.of("result", match="R1-M3")) == 1 and hub.hub.counters["results"] == 3
        assert hub.hub.counters["results-again"] >= 1  # a copy came twice: acknowledged, not counted
        kept = hub.call(lambda: [m for m in ("R1-M1", "R1-M2", "R1-M3") if hub.hub.state.final(m)])
        assert kept == ["R1-M1", "R1-M2", "R1-M3"]
    finally:
        if hub is not None:
            hub.stop()
        crossed.close()
        links.close()
        here.close()
        league.close()
