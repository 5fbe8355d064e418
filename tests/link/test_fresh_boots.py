"""Fresh boots and bound frames (protocol 3), with the real firmware under MicroPython and a real Mosquitto.

The board raises a boot counter in flash at every boot and signs every frame over its table, its id and
that boot. So a stranger on the broker who recorded a signed hello and event can replay them after any
number of the board's reboots, on another table holding a copy of the keys, or on another board's topic:
each is refused and counted, and nothing of it is taken. A board's status is taken only as the board signed
it, for a boot no older than the last. A board of protocol 2 is told to reflash, in words.
"""

import asyncio
import secrets
import subprocess
from binascii import crc32, hexlify

from battlement.link import wire
from battlement.link.messages import Event, Hello
from battlement.link.transport import MqttTransport, SerialTransport
from battlement.sim import firmware as fwsim
from battlement.sim.firmware import FirmwareProcess
from support.aio import running, until
from support.sniffer import Sniffer

KEY = secrets.token_bytes(16)


def board(mosquitto, table, home, name="gate-1"):
    return FirmwareProcess(name, "pico-w", {"cup-1": "beam"}, transport="mqtt", mqtt_url=mosquitto.url, table=table,
                           settings={"key": KEY.hex(), "beat_ms": 500}, home=home)


class Heard:
    """What a transport delivered, taken as it comes."""

    def __init__(self, t):
        self.t, self.got = t, []

    def all(self):
        while (m := self.t.get_nowait()) is not None:
            self.got.append(m)
        return self.got

    def of(self, kind, table=None):
        return [m for m in self.all() if isinstance(m, kind) and (table is None or m.table == table)]

    async def hello(self, boot, table=None):
        await until(lambda: any(h.boot == boot for h in self.of(Hello, table)), 30, "the hello of boot %d" % boot)

    async def events(self, n, table=None):
        await until(lambda: len(self.of(Event, table)) >= n, 15, "%d event(s)" % n)
        return [(e.boot, e.seq) for e in self.of(Event, table)]


def boots_directly(home, n):
    """n boots of the board's counter, run under MicroPython on its flash without the rest of the firmware
    (the quick way through 50 reboots; the board itself boots for the ones that matter)."""
    code = "import bootcount\nfor _ in range(%d):\n    bootcount.advance(%r)\n" % (n, str(home))
    p = subprocess.run([fwsim.micropython_binary(), "-c", code], env=fwsim.micropython_env(home / "code"),
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_captured_hello_and_event_replayed_after_1_5_and_50_reboots_is_refused_and_counted(mosquitto, tmp_path):
    table = "fresh-%d" % mosquitto.port
    up = "battlement/%s/gate-1/up" % table

    async def main():
        t = MqttTransport(mosquitto.url, table=table)
        t.sign(table, {"gate-1": KEY})
        notes = []
        t.log = notes.append
        await t.start()
        heard = Heard(t)
        sniff = Sniffer(mosquitto.port)
        fw = board(mosquitto, table, tmp_path / "board")
        try:
            fw.start()
            await heard.hello(1)
            fw.drop_ball("cup-1")
            assert await heard.events(1) == [(1, 1)]
            hello, event = sniff.wait(up, b"hello ")[0], sniff.wait(up, b"event ")[0]  # recorded by the stranger
            refused = 0
            for reboots, quick in ((1, 0), (5, 3), (50, 44)):
                fw.stop()
                boots_directly(tmp_path / "board", quick)
                fw.start()  # the board itself: boot 1 + reboots
                boot = 1 + reboots
                await heard.hello(boot)
                taken, hellos = len(heard.of(Event)), len(heard.of(Hello))
                sniff.publish(up, hello)
                sniff.publish(up, event)
                refused += 2
                await until(lambda: t.counters.get("old-boot", 0) == refused, 10, "the replay refused")  # noqa: B023
                fw.drop_ball("cup-1")  # the marker: the board's own next event, taken after the replay was read
                assert (await heard.events(taken + 1))[taken:] == [(boot, 1)]  # nothing of the replay taken
                assert [h.boot for h in heard.of(Hello)[hellos:]] in ([], [boot])  # nor its hello
                assert any("gate-1: boot 1 is older than boot %d already seen: a replay" % boot in n for n in notes)
            assert t.counters.get("mac", 0) == 0  # genuine frames, refused for their boot alone
        finally:
            sniff.stop()
            fw.stop()
            await t.stop()
        assert "Traceback" not in fw.log()

    asyncio.run(asyncio.wait_for(main(), 180))


def test_a_frame_moved_to_another_table_or_board_is_refused(mosquitto, tmp_path):
    """Two tables from one copied map and keys file (the same key for gate-1 on both), and gate-2 holding the
    same key too: the board's frames are worth nothing on the other table or on another board's topic."""
    a, b = "home-%d" % mosquitto.port, "copy-%d" % mosquitto.port

    async def main():
        t = MqttTransport(mosquitto.url)
        t.sign(a, {"gate-1": KEY, "gate-2": KEY})
        t.sign(b, {"gate-1": KEY})
        await t.start()
        heard = Heard(t)
        sniff = Sniffer(mosquitto.port)
        fw = board(mosquitto, a, tmp_path / "board")
        try:
            fw.start()
            await heard.hello(1, a)
            fw.drop_ball("cup-1")
            assert await heard.events(1, a) == [(1, 1)]
            home = "battlement/%s/gate-1/up" % a
            hello, event = sniff.wait(home, b"hello ")[0], sniff.wait(home, b"event ")[0]
            for frame in (hello, event):
                sniff.publish("battlement/%s/gate-1/up" % b, frame)  # the copied table
                sniff.publish("battlement/%s/gate-2/up" % a, frame)  # another board's topic, as it is...
                body = frame[:frame.rindex(b"*")].replace(b" gate-1 ", b" gate-2 ", 1)
                sniff.publish("battlement/%s/gate-2/up" % a, body + b"*%08x" % crc32(body))  # ...and renamed
            await until(lambda: t.counters.get("mac", 0) == 4 and t.counters.get("board-mismatch", 0) == 2, 10,
                        "every moved frame refused")
            fw.drop_ball("cup-1")  # the marker
            assert await heard.events(2) == [(1, 1), (1, 2)]
            assert [(h.table, h.board) for h in heard.of(Hello)] == [(a, "gate-1")]
            assert (b, "gate-1") not in t.boards and (a, "gate-2") not in t.boards
        finally:
            sniff.stop()
            fw.stop()
            await t.stop()

    asyncio.run(asyncio.wait_for(main(), 90))


def test_a_forged_unsigned_or_old_status_is_refused_and_the_boards_own_is_taken(mosquitto, tmp_path):
    table = "status-%d" % mosquitto.port
    status = "battlement/%s/gate-1/status" % table
    key = (table, "gate-1")

    async def main():
        t = MqttTransport(mosquitto.url, table=table)
        t.sign(table, {"gate-1": KEY})
        notes = []
        t.log = notes.append
        await t.start()
        heard = Heard(t)
        sniff = Sniffer(mosquitto.port)
        fw = board(mosquitto, table, tmp_path / "board")
        try:
            fw.start()
            await heard.hello(1)
            await until(lambda: t.online.get(key) is True, 10, "the board online by its signed status")
            online1 = sniff.wait(status, b"status gate-1 1 0 online ~")[0]
            sniff.publish(status, b"offline", retain=True)  # a stranger's plain word
            forged = b"status gate-1 1 9 offline ~%s" % hexlify(secrets.token_bytes(8))
            sniff.publish(status, forged + b"*%08x" % crc32(forged), retain=True)  # a made-up MAC
            await until(lambda: t.counters.get("mac", 0) == 2, 10, "both refused")
            assert t.online[key] is True
            assert any("board %s/gate-1 signs, but an unsigned status (offline) came for it: refused" % table in n
                       for n in notes)

            fw.kill()  # power lost: the broker sends the will the board signed at connect
            await until(lambda: t.online.get(key) is False, 15, "the board's own will taken")
            will1 = sniff.wait(status, b"status gate-1 1 0 offline ~")[0]
            fw.start()
            await heard.hello(2)
            await until(lambda: t.online.get(key) is True, 10, "online again, boot 2")
            for old in (will1, online1):  # boot 1's own signed status, played back
                sniff.publish(status, old, retain=True)
            await until(lambda: t.counters.get("old-boot", 0) == 2, 10, "boot 1's status refused")
            assert t.online[key] is True and t.counters["mac"] == 2
        finally:
            sniff.publish(status, b"", retain=True)  # no retained status left for the next test on this broker
            sniff.stop()
            fw.stop()
            await t.stop()

    asyncio.run(asyncio.wait_for(main(), 90))


def test_a_board_of_protocol_2_is_told_to_reflash(pty_pair):
    """A board with firmware from before boot counters: its hello is refused (proto) and its frames (signed the
    old way, over the boot alone) too, each said in words that say what to do."""
    def v2_signed(frame, boot):
        star = frame.rindex(b"*")
        body = frame[:star] + b" ~" + hexlify(wire.hmac_sha256(KEY, b"%x " % boot + frame[:star])[:8])
        return body + b"*%08x\n" % crc32(body)

    fd = open(pty_pair.b, "r+b", buffering=0)  # noqa: SIM115 -- the board's end, closed by running()

    async def main():
        t = SerialTransport([pty_pair.a])
        t.sign(None, {"tower-1": KEY}, table_id="hall")
        notes = []
        t.log = notes.append
        async with running(t, fd):
            fd.write(v2_signed(wire.encode("hello", ("tower-1", 0x5F3A9C, "0.1.0", 2, "tower", "cup-1:beam", 0, 0)),
                               0x5F3A9C))
            fd.write(v2_signed(wire.encode("event", ("tower-1", 0x5F3A9C, 1, "cup-1", "beam", 1, 5, 9000)), 0x5F3A9C))
            await until(lambda: t.counters.get("proto", 0) == 1 and t.counters.get("mac", 0) == 1, 10, "both refused")
            said = "\n".join(notes)
            assert "tower-1 speaks protocol v2, this host v%d" % wire.VERSION in said
            assert "board tower-1 signs as protocol 2" in said
            assert said.count("reflash it with this version's firmware (`battlement flash`)") >= 2
            assert not t.boards and t.get_nowait() is None

    asyncio.run(asyncio.wait_for(main(), 30))
