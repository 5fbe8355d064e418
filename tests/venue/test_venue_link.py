"""The venue link between a hub and real bridge processes (`battlement run --venue`) over a real
Mosquitto: a match start sets a game up with its sides named, the game played by simulated boards
through the rules ends in one result at the hub, and resent or duplicated messages count once."""

import sqlite3
import time

from battlement.venue.hubjournal import HubJournal
from battlement.venue.players import VenueState
from support.venue import SIDES, HubThread, Tap, make_key, play_ringo_to_end, venue_tables, wait


def venue_bridge(bridge_process, mosquitto, tmp_path, venue, n=1, prefix="vl"):
    keys, key = make_key(tmp_path, venue)
    files = venue_tables(tmp_path, n, "%s%d" % (prefix, mosquitto.port))
    args = []
    for _tid, f in files:
        args += ["--table", f]
    bridge = bridge_process(*args, "--simulate", "--mqtt", mosquitto.url, "--venue", venue, "--keys-dir", keys)
    return bridge, [tid for tid, _ in files], key


def health(bridge):
    return bridge.get("/api/health?code=" + bridge.host_code)


def results_journalled(path):
    db = sqlite3.connect(path, timeout=10)
    try:
        return db.execute("SELECT match, body FROM log WHERE kind='result'").fetchall()
    finally:
        db.close()


def test_a_match_start_plays_a_game_with_its_sides_named_and_its_result_reaches_the_hub_once(
        bridge_process, mosquitto, tmp_path):
    bridge, (table,), key = venue_bridge(bridge_process, mosquitto, tmp_path, "bar-1")
    before = bridge.state()
    assert "venue: " in bridge.output() and before["venue"] is None
    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, "bar-1", key)
    try:
        hub.call(hub.hub.start_match, "R1-M1", table, "ringo", {}, SIDES)
        ready = hub.wait_for("ready", match="R1-M1")
        st = bridge.get("/api/state?table=" + table)
        # a new game, its sides named on the table's own pages
        assert st["venue"]["match"] == "R1-M1" and st["venue"]["names"] == {"attackers": "Knights", "defenders": "Orcs"}
        assert st["venue"]["title"] == "Knights against Orcs"
        assert ready["game_id"] == st["venue"]["game_id"] and st["view"]["turns"] == 0

        # the start sent again (a hub that never heard "ready") starts no second game
        hub.call(hub.hub._send_start, "R1-M1")
        wait(lambda: len(hub.of("ready", match="R1-M1")) == 2, "ready said again")
        assert {r["game_id"] for r in hub.of("ready")} == {ready["game_id"]}
        assert health(bridge)["counters"]["venue-starts"] == 1 and health(bridge)["counters"]["venue-starts-again"] == 1

        last = play_ringo_to_end(bridge, table)
        winner = last["view"]["winner"]
        result = hub.wait_for("result", match="R1-M1")
        assert result["winner"] == winner and result["sides"] == SIDES
        facts = result["facts"]
        assert set(facts) == {"attackers", "defenders"} and facts["attackers"]["in the castle"] == last["view"]["castle"]
        assert facts["defenders"]["pieces left"] == last["view"]["defenders"]
        wait(lambda: hub.call(lambda: hub.hub.table_states()[table]["state"]) == "idle", "the table idle once acked")
        assert health(bridge)["counters"]["venue-acks"] == 1

        # the start sent once more: the bridge answers with the result, the hub acknowledges it and keeps one
        hub.call(hub.hub._send_start, "R1-M1")
        wait(lambda: hub.hub.counters["results-again"] >= 1, "the result sent again")
        assert hub.hub.counters["results"] == 1 and len(hub.of("result")) == 1
        assert [m for m, _ in results_journalled(tmp_path / "hub.sqlite")] == ["R1-M1"]
        assert health(bridge)["counters"]["venue-starts"] == 1  # still the one game
        record = hub.call(hub.hub.state.record, "Ann")
        assert record["games"][0]["match"] == "R1-M1" and record["wins"] == (winner == "attackers")
    finally:
        hub.stop()


def test_a_bridge_killed_after_the_game_ended_sends_its_result_after_restart_and_the_hub_takes_it_once(
        bridge_process, mosquitto, tmp_path):
    bridge, (table,), key = venue_bridge(bridge_process, mosquitto, tmp_path, "bar-2", prefix="vk")
    journal = tmp_path / "hub.sqlite"
    tap = Tap(mosquitto, "battlement-venue/bar-2/+/up")
    hub = HubThread(journal, mosquitto.url, "bar-2", key)
    try:
        hub.call(hub.hub.start_match, "R1-M1", table, "ringo", {}, SIDES)
        game_id = hub.wait_for("ready", match="R1-M1")["game_id"]
        ready = next(p for _t, p in tap.heard if b'"t":"ready"' in p)
    finally:
        hub.stop()  # no hub: the result the rules give is acknowledged by nobody

    last = play_ringo_to_end(bridge, table)
    wait(lambda: health(bridge)["counters"]["venue-results-sent"] >= 2, "the result sent, then sent again")
    assert health(bridge)["counters"]["venue-acks"] == 0
    bridge.kill9()

    hub = HubThread(journal, mosquitto.url, "bar-2", key)
    try:
        tap.publish(tap.heard[0][0], ready)  # played back to the new hub: it kept what it had taken
        wait(lambda: hub.hub.counters["refused-replayed"] == 1, "the replay refused")
        bridge.start()  # the same journal: the result waits there, unacknowledged
        result = hub.wait_for("result", match="R1-M1")
        assert result["winner"] == last["view"]["winner"]
        wait(lambda: health(bridge)["counters"]["venue-acks"] == 1, "the ack at the bridge")
        # a marker: the table's status after the ack says idle, so anything sent before it has arrived
        wait(lambda: hub.call(lambda: hub.hub.table_states().get(table, {}).get("state")) == "idle", "idle")
        assert len(hub.of("result")) == 1 and hub.hub.counters["results"] == 1
        assert [m for m, _ in results_journalled(journal)] == ["R1-M1"]

        # once acknowledged, a restart sends it no more
        bridge.kill9()
        bridge.start()
        wait(lambda: hub.call(lambda: hub.hub.counters["status"]) > 0 and health(bridge)["counters"]["venue-acks"] == 0,
             "the restarted bridge")
        seen = hub.hub.counters["status"]
        wait(lambda: hub.hub.counters["status"] > seen + 1, "two statuses from the restarted bridge")
        assert health(bridge)["counters"]["venue-results-sent"] == 0
        assert hub.hub.counters["results"] == 1 and len(hub.of("result")) == 1
    finally:
        hub.stop()
        tap.close()
    kept = HubJournal(str(journal))
    state = VenueState.fold(kept.entries())
    kept.close()
    assert state.final("R1-M1")["winner"] == last["view"]["winner"]
    assert state.matches["R1-M1"]["ready"]["game_id"] == game_id


def test_unsigned_forged_replayed_and_misplaced_messages_are_refused_and_counted_both_ways(
        bridge_process, mosquitto, tmp_path):
    import json

    from battlement.venue import protocol

    bridge, (table, other), key = venue_bridge(bridge_process, mosquitto, tmp_path, "bar-3", n=2, prefix="vf")
    tap = Tap(mosquitto, "battlement-venue/bar-3/#")
    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, "bar-3", key)
    try:
        hub.call(hub.hub.start_match, "R1-M1", table, "ringo", {}, SIDES)
        game_id = hub.wait_for("ready", match="R1-M1")["game_id"]
        down, up = protocol.down_topic("bar-3", table), protocol.up_topic("bar-3", table)
        start = next(p for t, p in tap.heard if t == down)
        ready = next(p for t, p in tap.heard if t == up and b'"t":"ready"' in p)
        x = protocol.start("X-1", table, "ringo", {}, SIDES)
        tap.publish(down, json.dumps(dict(x, v=1, n=time.time_ns() // 1000, **{"from": "hub"})).encode())  # unsigned
        tap.publish(down, protocol.Sender(b"k" * 32, "hub").seal(down, x))  # another key
        tap.publish(down, start)  # the hub's own start, played back
        tap.publish(protocol.down_topic("bar-3", other), start.replace(table.encode(), other.encode()))  # moved
        tap.publish(down, protocol.Sender(key, table).seal(down, x))  # the right key, a table's voice
        # a marker: the hub's next start, on the other table, comes after all of them
        hub.call(hub.hub.start_match, "R1-M2", other, "ringo", {}, SIDES)
        hub.wait_for("ready", match="R1-M2")
        c = health(bridge)["counters"]
        assert (c["venue-refused-unsigned"], c["venue-refused-forged"], c["venue-refused-replayed"],
                c["venue-refused-sender"]) == (1, 2, 1, 1)
        assert c["venue-starts"] == 2 and c["venue-starts-again"] == 0
        st = bridge.get("/api/state?table=" + table)
        assert st["venue"]["match"] == "R1-M1" and st["venue"]["game_id"] == game_id
        assert "refused (forged)" in " ".join(health(bridge)["notes"])

        # towards the hub: a result nobody signed, one under another key, the table's "ready" played back
        r = protocol.result("R1-M1", table, "ringo", game_id, SIDES, "attackers", {}, "Ringo: attackers won")
        tap.publish(up, json.dumps(dict(r, v=1, n=time.time_ns() // 1000, **{"from": table})).encode())
        tap.publish(up, protocol.Sender(b"k" * 32, table).seal(up, r))
        tap.publish(up, ready)
        wait(lambda: (hub.hub.counters["refused-unsigned"], hub.hub.counters["refused-forged"],
                      hub.hub.counters["refused-replayed"]) == (1, 1, 1), "the hub's refusals counted")
        assert hub.hub.counters["results"] == 0 and hub.of("result") == []
        assert hub.call(hub.hub.state.final, "R1-M1") is None
    finally:
        hub.stop()
        tap.close()


def test_a_paused_table_holds_its_match_and_a_table_that_drops_out_keeps_it_until_it_is_back(
        bridge_process, mosquitto, tmp_path, monkeypatch):
    from battlement.venue import hub as venuehub
    from support.bridgeproc import Ws

    monkeypatch.setattr(venuehub, "DROPPED_AFTER", 2.0)
    bridge, (table,), key = venue_bridge(bridge_process, mosquitto, tmp_path, "bar-4", prefix="vd")
    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, "bar-4", key)

    def table_state():
        return hub.call(lambda: hub.hub.table_states().get(table, {}).get("state"))
    try:
        hub.call(hub.hub.start_match, "R1-M1", table, "ringo", {}, SIDES)
        game_id = hub.wait_for("ready", match="R1-M1")["game_id"]
        wait(lambda: table_state() == "playing", "the table playing")
        host = Ws(bridge.url, role="host", table=table, code=bridge.host_code)
        try:
            assert host.act(action="pause", paused=True)["ok"]
            wait(lambda: table_state() == "held", "the paused table's match held")
            assert host.act(action="pause", paused=False)["ok"]
            wait(lambda: table_state() == "playing", "playing again")
        finally:
            host.close()

        bridge.kill9()
        dropped = hub.wait_for("dropped", table=table)
        assert dropped["match"] == "R1-M1" and table_state() == "dropped"
        assert any("went silent: match R1-M1 is held" in n for n in hub.hub.notes)

        bridge.start()
        wait(lambda: table_state() == "playing", "the table back, playing its match")
        assert bridge.get("/api/state?table=" + table)["venue"]["game_id"] == game_id
        assert hub.hub.counters["starts-sent"] == 1  # it was ready: nothing to start again
        last = play_ringo_to_end(bridge, table)
        assert hub.wait_for("result", match="R1-M1")["winner"] == last["view"]["winner"]
    finally:
        hub.stop()


def test_a_bridge_without_the_broker_or_without_the_venue_key_is_refused_in_one_line(mosquitto, tmp_path):
    from support.bridgeproc import run_refused

    rc, _out, err = run_refused(tmp_path / "j.sqlite", "--venue", "bar-5")
    assert rc == 2 and "--venue bar-5 needs --mqtt" in err and err.strip().count("\n") == 0
    keys = tmp_path / "keys"
    rc, _out, err = run_refused(tmp_path / "j.sqlite", "--mqtt", mosquitto.url, "--venue", "bar-5",
                                "--keys-dir", str(keys))
    assert rc == 2 and "no venue key for venue bar-5 at %s" % (keys / "bar-5.venue-key.toml") in err
    assert "Traceback" not in err and err.strip().count("\n") == 0


def test_a_game_that_ended_off_the_batch_just_before_a_kill_still_has_its_result_sent(
        bridge_process, mosquitto, tmp_path):
    """The last input from the host page is journalled and ends the game in commits of its own: a bridge
    killed before the venue link wrote the result leaves the match "playing" in the journal. The next
    bridge replays the finished game from the journal and sends its result."""
    import asyncio

    from battlement.bridge import Bridge
    from battlement.table import maps
    from battlement.venue import protocol, tablelink

    from shared_rules.engine import clone

    keys, key = make_key(tmp_path, "bar-6")
    (table, f), = venue_tables(tmp_path, 1, "vw%d" % mosquitto.port)
    journal = str(tmp_path / "journal.sqlite")

    async def almost():
        b = Bridge([maps.load(f)], journal, mqtt=mosquitto.url, keys_dir=keys, hass_prefix=None)
        await b.start()
        try:
            link = tablelink.attach(b, "bar-6", key)
            link._start(table, protocol.start("R1-M1", table, "ringo", {}, SIDES))
            s = b.sessions[table]
            while True:
                inp = s.match.legal()[0]
                after = clone(s.match.state)
                s.match.game.apply(after, inp)
                if after["over"]:  # the last move: the bridge dies before the link hears of it
                    s.listeners.remove(link._changed)
                    assert s.apply(inp, "host page")["ok"] and s.match.over
                    return s.match.state["winner"]
                assert s.apply(inp, "host page")["ok"]
        finally:
            await b.stop()
    winner = asyncio.run(almost())

    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, "bar-6", key)
    try:
        hub.call(hub.hub.add, "assign", {"match": "R1-M1", "table": table, "game": "ringo", "options": {},
                                         "sides": SIDES, "seed": None, "tournament": None}, "R1-M1")
        bridge_process("--table", f, "--mqtt", mosquitto.url, "--venue", "bar-6", "--keys-dir", keys, journal=journal)
        assert hub.wait_for("result", match="R1-M1")["winner"] == winner
        assert hub.hub.counters["results"] == 1
    finally:
        hub.stop()
