"""Serial transport over real pty pairs: garbage, partial frames, hot-plug, routing, exactly-once."""

import asyncio
import pathlib
import random
import time
from binascii import crc32

import pytest
from battlement.link import wire
from battlement.link.messages import Event, Hello, Led, Reply
from battlement.link.transport import NoRoute, SerialTransport
from support.aio import drain, running, take, until
from support.board import SerialBoard
from support.procs import PtyPair


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def events(msgs):
    return [(m.board, m.seq) for m in msgs if isinstance(m, Event)]


def test_garbage_partial_and_overlong_frames_are_skipped_and_counted(pty_pair):
    async def main():
        board = SerialBoard(pty_pair.b).open()
        async with running(SerialTransport([pty_pair.a]), board) as t:
            board.write(b"\x00\xffMicroPython v1.29 boot banner\r\n")  # a board's boot chatter
            board.hello()
            board.event()
            board.write(b"event tower-1 b007 9 cup-1 be")  # frame cut off mid-way by a glitch...
            board.write(b"x" * 700)  # ...then a long burst of noise with no newline
            board.write(b"\n")
            frame = bytearray(board.event_frame())
            frame[10] ^= 0x01  # one flipped bit on the wire
            board.write(bytes(frame))
            board.write(wire.encode("event", ("tower-1", 0xB007, 3, "cup-1", "laser", 1, 0, 0)))
            body = b"nonsense tower-1"
            board.write(b"%s*%08x\n" % (body, crc32(body)))  # well-formed, but no such message type
            board.event()  # a good frame after all that is still recovered
            msgs = await take(t, 3)
            assert isinstance(msgs[0], Hello) and msgs[0].port == pty_pair.a
            # seq 2 was corrupted (crc): reported as a gap, the board's resend can still fill it
            assert events(msgs) == [("tower-1", 1), ("tower-1", 3)]
            assert t.counters["syntax"] >= 1 and t.counters["crc"] == 1
            assert t.counters["length"] == 1 and t.counters["fields"] == 1 and t.counters["unknown-type"] == 1
            assert t.counters["gap"] == 1
            board.resend()  # board missed an evack covering 2, resends its outbox
            msgs = await take(t, 1)
            assert events(msgs) == [("tower-1", 2)]
            await asyncio.sleep(0.1)
            assert drain(t) == []  # 1 and 3 were not applied twice
            assert t.counters["late"] == 1

    run(main())


def test_host_acknowledges_events_so_the_board_trims_its_outbox(pty_pair):
    async def main():
        board = SerialBoard(pty_pair.b).open()
        async with running(SerialTransport([pty_pair.a]), board) as t:
            board.hello()
            for _ in range(5):
                board.event()
            await take(t, 6)
            await asyncio.to_thread(board.pump, 0.3)
            assert board.down_of("evack")[-1] == ("tower-1", 0xB007, 5)
            assert board.unacked() == []

    run(main())


def test_events_before_hello_are_held_and_the_board_is_pinged(pty_pair):
    async def main():
        board = SerialBoard(pty_pair.b).open()  # bridge started after the board: no hello seen
        async with running(SerialTransport([pty_pair.a]), board) as t:
            board.event()
            board.event()
            await until(lambda: t.counters.get("unknown-board", 0) == 2, what="unknown-board count")
            await asyncio.to_thread(board.pump, 0.3)  # the board answers the ping with ack + hello
            assert len(board.down_of("ping")) == 1
            msgs = await take(t, 4)
            kinds = [type(m).__name__ for m in msgs]
            assert sorted(kinds) == ["Event", "Event", "Hello", "Reply"]
            assert events(msgs) == [("tower-1", 1), ("tower-1", 2)]  # nothing lost

    run(main())


def test_a_host_started_late_takes_the_outbox_in_order_from_where_the_board_stands(pty_pair):
    """The board kept 1..5 while no host listened; the first thing the new host hears is event 6.
    Taking 6 as the baseline would drop 1..5 as duplicates: the host holds 6, pings, and the board's
    hello (acked 0) and resent outbox bring 1..6 in order, each once."""

    async def main():
        board = SerialBoard(pty_pair.b).open()
        for _ in range(5):
            board.event_frame()  # sensed while nobody listened: in the outbox only
        async with running(SerialTransport([pty_pair.a]), board) as t:
            board.event()  # 6: the first the host hears
            await until(lambda: t.counters.get("unknown-board", 0) == 1, what="event 6 held")
            await asyncio.to_thread(board.pump, 0.3)  # ack, hello (acked 0), then 1..6
            msgs = await take(t, 8)
            await asyncio.sleep(0.1)
            msgs += drain(t)
            assert events(msgs) == [("tower-1", s) for s in range(1, 7)]
            assert t.counters.get("gap", 0) == 0 and t.counters.get("stale-seq", 0) == 0
            await asyncio.to_thread(board.pump, 0.3)
            assert board.unacked() == []

    run(main())


def test_unplug_and_replug_reopens_without_restarting(pty_pair):
    async def main():
        board = SerialBoard(pty_pair.b).open()
        async with running(SerialTransport([pty_pair.a], retry=0.05), board) as t:
            board.hello()
            board.event()
            await take(t, 2)
            board.close()
            pty_pair.unplug()
            await until(lambda: t.links[pty_pair.a] != "open", what="port noticed gone")
            assert t.online[(None, "tower-1")] is False
            pty_pair.replug()
            await until(lambda: t.links[pty_pair.a] == "open", what="port reopened")
            board.reboot(0xB008)  # a replugged board reboots: new boot id
            board.open()
            board.hello()
            board.event()
            msgs = await take(t, 2)
            assert msgs[0].boot == 0xB008 and events(msgs) == [("tower-1", 1)]
            assert t.online[(None, "tower-1")] is True
            # The host can talk to it again on the reopened port
            msgid = await t.send(Led("tower-1", "ring", "blink", 0xFF0000, 500))
            await asyncio.to_thread(board.pump, 0.3)
            assert board.down_of("led") == [("tower-1", msgid, "ring", "blink", 0xFF0000, 500)]
            await asyncio.sleep(0.1)
            # (the host also resynced the board it heard before the port dropped: a ping, its hello)
            assert Reply(None, "tower-1", msgid, True, "") in drain(t)

    run(main())


def test_writer_closing_and_reopening_its_end_loses_nothing(pty_pair):
    async def main():
        board = SerialBoard(pty_pair.b).open()
        async with running(SerialTransport([pty_pair.a]), board) as t:
            board.hello()
            board.event()
            board.close()
            board.open()
            board.event()
            board.resend()  # whatever was unacknowledged comes again; applied once
            msgs = await take(t, 3)
            await asyncio.sleep(0.1)
            msgs += drain(t)
            assert events(msgs) == [("tower-1", 1), ("tower-1", 2)]

    run(main())


def test_commands_go_to_the_port_where_the_board_said_hello(tmp_path):
    pairs = [PtyPair(tmp_path / n).start() for n in ("p1", "p2")]
    try:

        async def main():
            b1 = SerialBoard(pairs[0].b, board="tower-1").open()
            b2 = SerialBoard(pairs[1].b, board="keep-2").open()
            async with running(SerialTransport([p.a for p in pairs]), b1, b2) as t:
                b1.hello()
                b2.hello()
                await take(t, 2)
                assert t.boards[(None, "keep-2")].port == pairs[1].a
                await t.send(Led("keep-2", "flag", "solid", 0x00FF00))
                await asyncio.to_thread(b1.pump, 0.2)
                await asyncio.to_thread(b2.pump, 0.2)
                assert b1.down_of("led") == []
                assert [f[2:4] for f in b2.down_of("led")] == [("flag", "solid")]
                with pytest.raises(NoRoute) as err:  # a clear message naming the board and the ports
                    await t.send(Led("nobody", "flag", "solid", 0))
                assert "nobody" in str(err.value) and pairs[0].a in str(err.value)

        run(main())
    finally:
        for p in pairs:
            p.close()


def test_missing_port_is_waited_for(tmp_path):
    pair = PtyPair(tmp_path / "late")

    async def main():
        async with running(SerialTransport([pair.a], retry=0.05)) as t:
            assert t.links[pair.a].startswith("waiting")
            pair.start()  # the board is plugged in after the bridge started
            await until(lambda: t.links[pair.a] == "open", what="late port opened")
            board = SerialBoard(pair.b).open()
            board.hello()
            assert isinstance((await take(t, 1))[0], Hello)
            board.close()

    try:
        run(main())
    finally:
        pair.close()


def test_a_board_that_stops_reading_does_not_stall_the_bridge(pty_pair, tmp_path):
    other = PtyPair(tmp_path / "other").start()

    async def main():
        stuck = SerialBoard(pty_pair.b).open()  # never reads what the host sends
        healthy = SerialBoard(other.b, board="keep-2").open()
        async with running(SerialTransport([pty_pair.a, other.a]), stuck, healthy) as t:
            stuck.hello()
            healthy.hello()
            await take(t, 2)
            for _ in range(4000):  # ~200 KB of commands: far more than the pty buffers hold
                await t.send(Led("tower-1", "ring", "blink", 0xFF0000, 500))
            assert t.counters["unsent"] > 0  # dropped and counted, not blocking
            healthy.event()
            assert events(await take(t, 1)) == [("keep-2", 1)]  # the rest of the table carries on

    try:
        run(main())
    finally:
        other.close()


def test_allow_list_and_protocol_version_are_enforced(pty_pair):
    async def main():
        stranger = SerialBoard(pty_pair.b, board="keep-9").open()
        future = SerialBoard(pty_pair.b).open()
        async with running(SerialTransport([pty_pair.a], allow=["tower-1"]), stranger, future) as t:
            stranger.hello()
            stranger.event()
            future.write(wire.encode("hello", ("tower-1", 1, "9.0", wire.VERSION + 1, "tower", "cup-1:beam", 0, 0)))
            body = b"hello tower-1 1 0.1.0 1 tower cup-1:beam"  # a version 1 board: its hello had no acked
            future.write(body + b"*%08x\n" % crc32(body))
            future.hello()
            msgs = await take(t, 1)
            assert msgs[0].board == "tower-1" and msgs[0].proto == wire.VERSION
            assert t.counters["unknown-board"] == 2 and t.counters["proto"] == 2
            assert (None, "keep-9") not in t.boards

    run(main())


def test_a_micropython_board_and_the_host_understand_each_other(pty_pair, micropython, tmp_path):
    """A board script under the real MicroPython, using the same wire.py the firmware ships."""
    script = tmp_path / "board.py"
    script.write_text(
        "import sys\nsys.path.insert(0, %r)\nimport wire\n"
        "f = open(%r, 'r+b')\n"
        "f.write(b'\\n' + wire.encode('hello', ('mp-1', 0x77, '0.1', wire.VERSION, 'gate', 'door:presence', 0, 0)))\n"
        "for seq in (1, 2, 3):\n"
        "    f.write(wire.encode('event', ('mp-1', 0x77, seq, 'door', 'presence', seq %% 2, seq * 100, 0)))\n"
        "while True:\n"
        "    typ, fields = wire.decode(f.readline())\n"
        "    if typ == 'evack' and fields[2] == 3:\n"
        "        print('acked', fields[2])\n"
        "        break\n" % (str(pathlib.Path(wire.__file__).parent), pty_pair.b)
    )

    async def main():
        async with running(SerialTransport([pty_pair.a])) as t:
            proc = await asyncio.create_subprocess_exec(micropython, str(script), stdout=asyncio.subprocess.PIPE)
            msgs = await take(t, 4)
            out, _ = await asyncio.wait_for(proc.communicate(), 20)
            assert msgs[0].board == "mp-1" and msgs[0].sensors == {"door": "presence"}
            assert [(m.seq, m.value) for m in msgs[1:]] == [(1, 1), (2, 0), (3, 1)]
            assert out.decode().strip() == "acked 3"  # the board got its cumulative acknowledgement

    run(main())


def test_noisy_line_soak_every_event_exactly_once(pty_pair):
    """300 events over a line that corrupts one frame in eight; the board resends like firmware does."""
    rng = random.Random(7)
    total = 300

    async def main():
        board = SerialBoard(pty_pair.b).open()
        async with running(SerialTransport([pty_pair.a]), board) as t:
            board.hello()
            got = []
            for i in range(total):
                frame = bytearray(board.event_frame(value=i % 2))
                if rng.random() < 0.125:
                    frame[rng.randrange(len(frame) - 1)] ^= 1 << rng.randrange(8)
                board.write(bytes(frame))
                if i % 50 == 49:
                    await asyncio.to_thread(board.pump, 0.05)  # read evacks, trim the outbox
                    board.resend()
            deadline = time.monotonic() + 30  # the resends until all is acknowledged (a busy machine: slowly)
            while time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                got += [m for m in drain(t) if isinstance(m, Event)]
                await asyncio.to_thread(board.pump, 0.05)
                if not board.unacked():
                    break
                board.resend()
            seqs = [e.seq for e in got]
            assert sorted(seqs) == list(range(1, total + 1))  # nothing lost, nothing twice
            assert t.counters["crc"] + t.counters.get("syntax", 0) + t.counters.get("fields", 0) > 0

    run(main())
