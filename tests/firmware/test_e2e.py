"""End to end: the real firmware under MicroPython, a real link, the bridge's transports.

Serial: firmware -> pty -> SerialTransport decodes events; LED commands go back and
the simulated NeoPixel shows them. MQTT: a real Mosquitto, restarted mid-game,
and every event arrives exactly once.
"""

import asyncio

import pytest
from battlement.link.messages import Event, Hello, Led, Reply
from battlement.link.transport import MqttTransport, SerialTransport
from battlement.sim.firmware import FirmwareProcess
from support.aio import until

SENSORS = [
    {"id": "tower-a1", "kind": "beam", "two": True},
    {"id": "cup-1", "kind": "beam"},
    {"id": "tilt-a1", "kind": "tilt"},
]


def lit(px):
    """Which of pixels 2-4 show blue (the chase)."""
    return [i for i in (2, 3, 4) if px[i] == (0, 0, 255)]


SKIPPED = []  # events next_of passed over while it waited for something else: a duplicate would be one


async def next_of(t, kind, timeout=10):
    while True:
        m = await asyncio.wait_for(t.get(), timeout)
        if isinstance(m, kind):
            return m
        if isinstance(m, Event):
            SKIPPED.append(m)


async def events(t, n, timeout=15):
    out = []
    while len(out) < n:
        out.append(await next_of(t, Event, timeout))
    return out


@pytest.mark.parametrize("model", [None, "rp2", "esp32-gc"])
def test_serial_events_and_led_commands(pty_pair, model):
    # On the ideal board a 1 ms ball sits right on the threshold; where IRQs jitter, 2 ms.
    cup_ms = 1 if model is None else 2
    profile = "esp32-s3-devkitc-1" if model == "esp32-gc" else "pico-w"

    async def main():
        SKIPPED.clear()
        t = SerialTransport([pty_pair.a])
        await t.start()
        fw = FirmwareProcess(
            "pong-a", profile, SENSORS, port=pty_pair.b, leds=10, settings={"role": "pong-side"}, model=model
        )
        try:
            fw.start()
            hello = await next_of(t, Hello)
            assert hello.board == "pong-a" and hello.profile == "pong-side"
            assert hello.sensors == {"tower-a1": "beam", "cup-1": "beam", "tilt-a1": "tilt"}
            fw.drop_ball("tower-a1", width_ms=12)
            fw.drop_ball("tower-a1", width_ms=9, bounce=True)  # bounces out of the mouth: not in
            fw.pulse("cup-1", 200)  # glitch
            fw.drop_ball("cup-1", width_ms=cup_ms)
            fw.tilt("tilt-a1", fallen=True)
            got = await events(t, 3)
            assert sorted((e.sensor, e.value) for e in got) == [("cup-1", 1), ("tilt-a1", 1), ("tower-a1", 1)]
            widths = {e.sensor: e.width_us for e in got}
            assert 11800 <= widths["tower-a1"] < 12500 and 1000 * cup_ms - 200 <= widths["cup-1"] < 1000 * cup_ms + 500
            msgid = await t.send(Led("pong-a", "all", "solid", 0xFF0000, 0))
            reply = await next_of(t, Reply)
            assert reply.ok and reply.msgid == msgid
            px = fw.wait_pixels(lambda px: px[1:] == [(255, 0, 0)] * 9)
            assert px[0] == (0, 32, 0)  # status pixel: linked to the host
            chase = await t.send(Led("pong-a", "2-4", "chase", 0x0000FF, 300))
            assert (await next_of(t, Reply)).msgid == chase
            seen = set()
            for _ in range(3):
                px = fw.wait_pixels(lambda px: len(lit(px)) == 1 and lit(px)[0] not in seen)
                seen.add(lit(px)[0])
            assert seen == {2, 3, 4}
            bad = await t.send(Led("pong-a", "moat", "solid", 0xFF0000, 0))
            reply = await next_of(t, Reply)
            assert (reply.msgid, reply.ok, reply.reason) == (bad, False, "unknown-target")
            # Each event reached the consumer once and none is missing. A loaded machine may hold the host's
            # evack past the board's resend_ms: the board then sends again (counted as stale-seq), the
            # transport drops what it already has.
            assert t.counters.get("gap", 0) == 0 and [e for e in SKIPPED if e.board == "pong-a"] == []
        finally:
            fw.stop()
            await t.stop()
        assert "Traceback" not in fw.log()

    asyncio.run(main())


def test_mqtt_broker_restart_loses_and_duplicates_nothing(mosquitto_fresh):
    broker = mosquitto_fresh

    async def main():
        t = MqttTransport(broker.url, table="hall-7")
        await t.start()
        fw = FirmwareProcess(
            "plingpong-1",
            "esp32-s3-devkitc-1",
            [{"id": "cup-%d" % i, "kind": "beam"} for i in range(1, 4)],
            transport="mqtt",
            mqtt_url=broker.url,
            table="hall-7",
            leds=4,
        )
        try:
            fw.start()
            await next_of(t, Hello, 15)
            seen = []
            for i in range(30):
                fw.drop_ball("cup-%d" % (i % 3 + 1), width_ms=5 + i)
            seen += await events(t, 30)
            broker.stop()
            # Balls keep falling while the broker is away: the board keeps them in its outbox.
            for i in range(30, 60):
                fw.drop_ball("cup-%d" % (i % 3 + 1), width_ms=5 + i)
            fw.sync()
            # The status pixel blinks red while the broker is away.
            fw.wait_pixels(lambda px: px[0] == (0x40, 0, 0), timeout=10)
            broker.start()
            fw.wait_pixels(lambda px: px[0] == (0, 0x20, 0), timeout=15)
            seen += await events(t, 30, timeout=30)
            # Whatever the board resends after reconnecting is dropped by the host, not applied twice.
            await asyncio.sleep(1.5)
            while (m := t.get_nowait()) is not None:
                assert not isinstance(m, Event), "duplicate or extra event %r" % (m,)
            assert [e.seq for e in seen] == list(range(1, 61))
            assert [e.width_us // 1000 for e in seen] == [5 + i for i in range(60)]
            assert len({e.boot for e in seen}) == 1
            msgid = await t.send(Led("plingpong-1", "1", "blink", 0x00FF00, 200))
            reply = await next_of(t, Reply)
            assert reply.ok and reply.msgid == msgid
            fw.wait_pixels(lambda px: px[1] == (0, 255, 0))
            fw.wait_pixels(lambda px: px[1] == (0, 0, 0))
            assert t.online[("hall-7", "plingpong-1")] is True
            # The board dies without a goodbye: the broker publishes its last will.
            fw.proc.kill()
            await until(lambda: t.online[("hall-7", "plingpong-1")] is False, 30, "the board's will: offline")
        finally:
            fw.stop()
            await t.stop()
        assert "Traceback" not in fw.log()

    asyncio.run(main())


def test_simulator_rejects_unknown_sensor_names(pty_pair):
    from battlement.errors import UserError

    fw = FirmwareProcess("pong-b", "pico-w", {"cup-1": "beam"}, port=pty_pair.b)
    with pytest.raises(UserError, match="no sensor 'cup-2'"):
        fw.drop_ball("cup-2")
