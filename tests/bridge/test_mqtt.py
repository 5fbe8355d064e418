"""MQTT and several tables: one bridge, one real Mosquitto, two Ringo tables each with its own session;
sensed events and LED commands travel as MQTT messages between the virtual boards and the bridge."""

import asyncio

import pytest
from battlement.bridge import Bridge
from battlement.errors import UserError
from battlement.table import maps as tables
from support.aio import until
from support.procs import Broker

from shared_rules.ringo.table import Table as RingoTable

ATT = RingoTable.COLOURS["attackers"]


def ringo_table(tid):
    path = tables.default_path("ringo")
    with open(path) as f:
        return tables.parse(f.read().replace('table = "ringo"', 'table = "%s"' % tid), path)


def test_two_tables_on_one_broker_play_separate_games(mosquitto, tmp_path):
    async def go():
        b = Bridge([ringo_table("mq-hall-1"), ringo_table("mq-hall-2")], str(tmp_path / "j.sqlite"),
                   mqtt=mosquitto.url, simulate=True)
        await b.start()
        try:
            one, two = b.sims["mq-hall-1"], b.sims["mq-hall-2"]
            for sim in (one, two):
                await until(lambda sim=sim: all(sim.led_of(o) for o in sim.tmap.objects), what="lights over MQTT")
            one.press("b5", 0)
            one.press("b4", 1)
            two.press("f5", 0)
            two.press("f4", 1)
            s1, s2 = b.sessions["mq-hall-1"], b.sessions["mq-hall-2"]
            await until(lambda: s1.match.view()["cells"].get("b4") and s2.match.view()["cells"].get("f4"),
                        what="a move on each table")
            assert "f4" not in s1.match.view()["cells"] and "b4" not in s2.match.view()["cells"]
            await until(lambda: one.led_of("b4") == ("solid", ATT, 0) and two.led_of("f4") == ("solid", ATT, 0),
                        what="each table lit by its own session")
            assert one.led_of("f4")[0] == "off" and two.led_of("b4")[0] == "off"
            assert b.counters["unknown-table"] == 0
        finally:
            await b.stop()
    asyncio.run(go())


def test_a_board_of_a_table_not_served_is_counted_not_fatal(mosquitto, tmp_path):
    async def go():
        from battlement.sim.simulator import Simulator

        b = Bridge([ringo_table("mq-hall-3")], str(tmp_path / "j.sqlite"), mqtt=mosquitto.url, simulate=True)
        await b.start()
        stranger = Simulator(ringo_table("mq-elsewhere"), mosquitto.url)
        stranger.start()
        try:
            # another bridge's table on a shared broker: counted on the link, named, never taken nor answered
            mq = b.transports[-1]
            await until(lambda: mq.counters.get("other-table", 0) > 0, what="the stranger counted")
            await until(lambda: any(u["table"] == "mq-elsewhere" for u in b.board_health()["unknown"]),
                        what="the stranger named")
            assert b.counters["unknown-table"] == 0 and not any("belongs to no table" in n for n in b.notes)
            sim = b.sims["mq-hall-3"]
            await until(lambda: all(sim.led_of(o) for o in sim.tmap.objects), what="own table lit")
            sim.press("c5", 0)
            sim.press("c4", 1)
            await until(lambda: b.sessions["mq-hall-3"].match.view()["cells"].get("c4"), what="play goes on")
        finally:
            stranger.close()
            await b.stop()
    asyncio.run(go())


def test_a_bridge_is_sent_only_its_own_tables_frames_and_still_names_a_strangers_board(tmp_path):
    """On a broker several bridges share (a venue's), a board's frames go only to the bridge serving its table:
    another table's play costs this bridge nothing. A board of a table no bridge here serves (a wrong table
    id) is still named, by its status."""
    from support.board import MqttBoard

    ringo = {s: "presence" for s in "nabcdefg"}
    broker = Broker(tmp_path / "broker").start()  # its own: what it sends this bridge is this test's alone

    async def go():
        b = Bridge([ringo_table("mq-own")], str(tmp_path / "j.sqlite"), mqtt=broker.url)
        await b.start()
        own = MqttBoard(broker.port, "mq-own", board="ring-5", boot=0xA1, sensors=ringo).start()
        theirs = MqttBoard(broker.port, "mq-theirs", board="ring-5", boot=0xB1, sensors=ringo).start()
        try:
            mq = b.transports[-1]
            await until(lambda: ("mq-own", "ring-5") in mq.boards, what="our board's hello")
            for k in range(300):  # the other table at play
                theirs.event(sensor="b", value=k % 2, width_us=0)
            # the marker, after all of them on the same connection: one event of our board
            theirs.client.publish(own.base + "up", own.event_frame(sensor="b", value=0, width_us=0), qos=1)
            await until(lambda: b.sessions["mq-own"].counters["events"] == 1, what="the marker played")
            assert mq.counters.get("other-table", 0) <= 2, mq.counters  # its status, not its 301 frames
            stranger = [u for u in b.board_health()["unknown"] if u["table"] == "mq-theirs"]
            assert [(u["board"], u["online"], u["elsewhere"]) for u in stranger] == [("ring-5", True, True)]
            assert "is on no table map this bridge serves" in stranger[0]["words"]
        finally:
            own.stop()
            theirs.stop()
            await b.stop()
    try:
        asyncio.run(go())
    finally:
        broker.close()


def test_a_table_over_tls_with_a_private_ca_plays_and_lights(tmp_path):
    """Boards and bridge both on a broker that speaks only TLS, its certificate signed by a CA of the hall's own."""
    broker = Broker(tmp_path / "tls", tls=True).start()

    async def go():
        b = Bridge([ringo_table("mq-tls")], str(tmp_path / "j.sqlite"), mqtt=broker.url, tls_ca=str(broker.ca),
                   simulate=True)
        await b.start()
        try:
            sim = b.sims["mq-tls"]
            await until(lambda: all(sim.led_of(o) for o in sim.tmap.objects), what="lights over TLS")
            sim.press("d5", 0)
            sim.press("d4", 1)
            await until(lambda: sim.led_of("d4") == ("solid", ATT, 0), what="the move lit over TLS")
            assert b.sessions["mq-tls"].match.view()["cells"].get("d4") == "attackers"
        finally:
            await b.stop()

    try:
        asyncio.run(go())
    finally:
        broker.close()


def test_a_missing_ca_file_is_one_clear_line(tmp_path):
    with pytest.raises(UserError, match="--tls-ca .*no such file"):
        Bridge([ringo_table("mq-tls")], str(tmp_path / "j.sqlite"), mqtt="mqtts://127.0.0.1:8883",
               tls_ca=str(tmp_path / "missing.pem"), simulate=True)
