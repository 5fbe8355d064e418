"""Each board's firmware, as its hello says it, in Home Assistant (its device's sw_version) and on /metrics
(battlement_board_info{table, board, firmware} 1), on a real Mosquitto with a scripted board: unknown
before its hello, following it when it comes back with another one, and kept across a bridge restart
(the journal's record of the board) before any board says hello again."""

import asyncio

from battlement.bridge import Bridge
from battlement.link import wire
from battlement.link.messages import Hello, up_frame
from prometheus_client.parser import text_string_to_metric_families
from support.aio import running, until
from support.board import MqttBoard

from ops.test_hass import HomeAssistant, ringo_table, versions


def firmware_info(b, table):
    """board -> the firmware label of its battlement_board_info sample (value 1) on the bridge's /metrics."""
    out = {}
    for fam in text_string_to_metric_families(b.metrics.scrape().decode()):
        if fam.name == "battlement_board_info":
            for s in fam.samples:
                if s.labels["table"] == table:
                    assert s.value == 1
                    out[s.labels["board"]] = s.labels["firmware"]
    return out


def test_home_assistant_and_metrics_carry_each_boards_firmware_across_a_restart(mosquitto_fresh, tmp_path):
    broker = mosquitto_fresh
    tid = "fw-%d" % broker.port
    tmap = ringo_table(tid)
    journal = str(tmp_path / "j.sqlite")
    ring5 = "homeassistant/binary_sensor/battlement-%s/ring-5-online/config" % tid
    ring4 = "homeassistant/binary_sensor/battlement-%s/ring-4-online/config" % tid
    ha = HomeAssistant(broker)

    async def first_run():
        async with running(Bridge([tmap], journal, mqtt=broker.url)) as b:
            await until(lambda: {ring5, ring4} <= set(ha.configs()), what="discovery")
            assert versions(ha.configs())[ring5] is None  # never heard: no version said
            assert firmware_info(b, tid) == {board: "" for board in tmap.boards}
            board = MqttBoard(broker.port, tid, board="ring-5", boot=1, sensors=tmap.sensors_of("ring-5")).start()
            try:
                await until(lambda: versions(ha.configs())[ring5] == "test-1.0", what="ring-5's firmware in HA")
                assert firmware_info(b, tid) == dict({x: "" for x in tmap.boards}, **{"ring-5": "test-1.0"})
                # updated: the board comes back on its next boot with another firmware
                board.reboot(2)
                board.publish(up_frame(Hello(None, "ring-5", 2, "0.2.0", wire.VERSION, "tower", board.sensors, None,
                                             0, board.msgid)))
                await until(lambda: versions(ha.configs())[ring5] == "0.2.0", what="the new firmware in HA")
                assert firmware_info(b, tid)["ring-5"] == "0.2.0"
                assert versions(ha.configs())[ring4] is None  # the other boards' devices are left as they were
            finally:
                board.stop()

    async def second_run():
        ha.clear()
        async with running(Bridge([tmap], journal, mqtt=broker.url)) as b:
            await until(lambda: {ring5, ring4} <= set(ha.configs()), what="discovery after the restart")
            assert not b.watch.hellos  # no board has said hello to this bridge: the journal remembers
            assert versions(ha.configs())[ring5] == "0.2.0" and versions(ha.configs())[ring4] is None
            assert firmware_info(b, tid)["ring-5"] == "0.2.0"
            r5 = next(f for f in b.board_health()["fleet"] if f["board"] == "ring-5")
            assert (r5["firmware"], r5["boot"]) == ("0.2.0", 2) and r5["last_seen"]

    try:
        asyncio.run(first_run())
        asyncio.run(second_run())
    finally:
        ha.close()
