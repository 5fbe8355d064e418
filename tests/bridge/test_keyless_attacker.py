"""A client on the broker that sees every byte (subscribed to battlement/#) but holds no key.

The board is the real firmware under MicroPython with a signing key, the host the MQTT transport
with the same key, the broker a real Mosquitto. The attacker forges and replays what it likes:
no event of its making is applied, the board keeps its outbox, it is not silenced, and its lights
do not change.
"""

import asyncio
import secrets
import threading
from binascii import crc32

import paho.mqtt.client as mqtt
from battlement.link import wire
from battlement.link.messages import Beat, Event, Hello, Led
from battlement.link.transport import MqttTransport
from battlement.sim.firmware import FirmwareProcess
from support.aio import until

TABLE, BOARD = "siege", "gate-1"
KEY = secrets.token_bytes(16)
RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)


def raw(typ, tokens, mac=None):
    """A well-formed frame with a right CRC, unsigned or with a MAC of the attacker's choosing."""
    body = " ".join([typ, *map(str, tokens)]).encode()
    if mac is not None:
        body += b" ~" + mac
    return body + b"*%08x\n" % (crc32(body) & 0xFFFFFFFF)


class Attacker:
    """A keyless client: records every message on battlement/# and publishes whatever it is told."""

    def __init__(self, port):
        self.seen: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="intruder")
        c.on_connect = lambda c, *a: (c.subscribe("battlement/#", qos=1), self.ready.set())
        c.on_message = self._got
        c.connect("127.0.0.1", port)
        c.loop_start()
        self.c = c

    def _got(self, c, userdata, msg):
        with self.lock:
            self.seen.append((msg.topic, msg.payload))

    def frames(self, leaf, typ):
        with self.lock:
            return [p for t, p in self.seen if t.endswith("/" + leaf) and p.startswith(typ.encode() + b" ")]

    def up(self, frame):
        self.c.publish("battlement/%s/%s/up" % (TABLE, BOARD), frame, qos=1).wait_for_publish(5)

    def down(self, frame):
        self.c.publish("battlement/%s/%s/down" % (TABLE, BOARD), frame, qos=1).wait_for_publish(5)

    def stop(self):
        self.c.disconnect()
        self.c.loop_stop()


def test_a_keyless_client_that_sees_every_byte_can_forge_nothing(mosquitto, tmp_path):
    async def main():
        t = MqttTransport(mosquitto.url, table=TABLE)
        t.sign(TABLE, {BOARD: KEY})
        t.acks_on_commit = True  # the test says when events are durable: until then the board keeps them
        await t.start()
        attacker = Attacker(mosquitto.port)
        assert await asyncio.to_thread(attacker.ready.wait, 5)
        fw = FirmwareProcess(BOARD, "pico-w", {"cup-1": "beam"}, transport="mqtt", mqtt_url=mosquitto.url,
                             table=TABLE, leds=6, settings={"key": KEY.hex(), "beat_ms": 500}).start()
        got: list = []

        def take():
            while (m := t.get_nowait()) is not None:
                got.append(m)
            return got

        def events():
            return [(e.boot, e.seq) for e in take() if isinstance(e, Event)]

        try:
            await until(lambda: any(isinstance(m, Hello) for m in take()), 15, "the board's signed hello")
            hello = next(m for m in got if isinstance(m, Hello))
            boot = hello.boot
            fw.drop_ball("cup-1")
            fw.drop_ball("cup-1")
            await until(lambda: events() == [(boot, 1), (boot, 2)], 10, "two genuine events")
            assert t.counters.get("mac", 0) == 0

            # 1. Its own ball as the board's next event: unsigned, or with a made-up MAC. Not applied;
            #    the board's real event 3 still is.
            forged = [BOARD, "%x" % boot, 3, "cup-1", "beam", 1, 5, 9000]
            attacker.up(raw("event", forged))
            attacker.up(raw("event", forged, secrets.token_hex(8).encode()))
            # 2. A new boot for the board, and a seq of 1,000,000 to make it look stale.
            attacker.up(raw("hello", [BOARD, "%x" % (boot + 1), "0.1.0", wire.VERSION, "x", "cup-1:beam", 0, 0]))
            attacker.up(raw("event", [BOARD, "%x" % boot, 1_000_000, "cup-1", "beam", 1, 5, 9000]))
            # 3. Replaying a genuine signed event it recorded.
            attacker.up(attacker.frames("up", "event")[0])
            await until(lambda: t.counters.get("mac", 0) >= 4, 10, "the forgeries refused")
            for _ in range(10):
                fw.drop_ball("cup-1")
            await until(lambda: len(events()) == 12, 15, "the board's next ten events")
            assert events() == [(boot, s) for s in range(1, 13)]  # none forged, none lost, none twice
            assert t.counters["mac"] == 4 and t.counters.get("stale-seq", 0) >= 1  # the replay: a duplicate

            # 4. A forged evack for everything the board holds: it keeps its outbox all the same.
            beats = lambda: [m for m in take() if isinstance(m, Beat)]
            await until(lambda: beats() and beats()[-1].outbox == 12, 10, "12 events in the outbox")
            attacker.down(raw("evack", [BOARD, "%x" % boot, 12]))
            attacker.down(raw("evack", [BOARD, "%x" % boot, 12], secrets.token_hex(8).encode()))
            n = len(beats())
            await until(lambda: len(beats()) >= n + 3, 10, "three more beats")
            assert beats()[-1].outbox == 12
            t.committed()  # the host's own, signed evack does empty it
            await until(lambda: beats()[-1].outbox == 0, 10, "the outbox emptied by the host")

            # 5. Lights: a forged led changes nothing; a genuine one does; replaying it later does not.
            attacker.down(raw("led", [BOARD, 900_000_000, "all", "solid", "ff0000", 0]))
            await t.send(Led(BOARD, "all", "solid", 0x00FF00, 0, TABLE))
            await asyncio.to_thread(fw.wait_pixels, lambda px: px[1:] == [GREEN] * 5)
            green = [p for p in attacker.frames("down", "led")][-1]
            await t.send(Led(BOARD, "all", "solid", 0x0000FF, 0, TABLE))
            await asyncio.to_thread(fw.wait_pixels, lambda px: px[1:] == [BLUE] * 5)
            attacker.down(green)  # signed by the host, same boot: but older than the last command
            attacker.down(raw("led", [BOARD, 999_999_999, "all", "solid", "ff0000", 0], b"0" * 16))
            # The marker: a genuine command for pixel 5 alone, sent once the broker had taken (and so passed
            # on) the attacker's; the board reads its commands in order, so when it shows, they were read.
            await t.send(Led(BOARD, "5", "solid", 0x102030, 0, TABLE))
            await asyncio.to_thread(fw.wait_pixels, lambda px: px[5] == (0x10, 0x20, 0x30))
            assert fw.pixels()[1:5] == [BLUE] * 4
        finally:
            attacker.stop()
            fw.stop()
            await t.stop()
        assert "Traceback" not in fw.log()

    asyncio.run(asyncio.wait_for(main(), 90))
