"""The board's MQTT link against a real Mosquitto, through faults a table meets in months of play.

The real firmware runs under MicroPython and talks to the broker through a
loopback proxy (tests/support/proxy.py) that refuses, stalls or blackholes it;
the bridge's MqttTransport listens on the broker itself. Each fault must end in
a reconnect (never a reset), with every event arriving exactly once and the
board's sockets closed. keepalive 2 s makes a dead link show within about a
second (a PUBACK or PINGRESP later than keepalive/2), so each test stays short.
"""

import asyncio
import os
import signal
import time

from battlement.link.messages import Event, Hello
from battlement.link.transport import MqttTransport
from battlement.sim.firmware import FirmwareProcess
from support.aio import until
from support.proxy import Proxy

CUPS = [{"id": "cup-%d" % i, "kind": "beam"} for i in range(1, 4)]


async def next_of(t, kind, timeout=10):
    while True:
        m = await asyncio.wait_for(t.get(), timeout)
        if isinstance(m, kind):
            return m


async def events(t, n, timeout=15):
    return [await next_of(t, Event, timeout) for _ in range(n)]


async def no_more_events(t, quiet=1.0):
    """Whatever the board resends after a reconnect is dropped by the host, never applied twice."""
    await asyncio.sleep(quiet)
    while (m := t.get_nowait()) is not None:
        assert not isinstance(m, Event), "duplicate or extra event %r" % (m,)


def board(url, table, board_id="plingpong-1", **mqtt):
    return FirmwareProcess(
        board_id,
        "esp32-s3-devkitc-1",
        CUPS,
        transport="mqtt",
        mqtt_url=url,
        table=table,
        leds=4,
        settings={"mqtt": {"keepalive": 2, **mqtt}},
    )


def drop(fw, first, n):
    for i in range(first, first + n):
        fw.drop_ball("cup-%d" % (i % 3 + 1), width_ms=5 + i)
    fw.sync()


def assert_once_in_order(seen, n):
    assert [e.seq for e in seen] == list(range(1, n + 1))
    assert [e.sensor for e in seen] == ["cup-%d" % (i % 3 + 1) for i in range(n)]
    assert len({e.boot for e in seen}) == 1, "the board reset: its outbox was lost"


def assert_no_reset(fw):
    log = fw.log()
    assert fw.alive(), log[-2000:]
    assert "machine.reset()" not in log and "Traceback" not in log, log[-2000:]


def through_proxy(mosquitto, table, body, refuse=0, **proxy_opts):
    """Run body(t, fw, proxy): a firmware board whose link to the broker goes through a fault proxy."""
    proxy = Proxy(mosquitto.port, **proxy_opts).start()
    if refuse:
        proxy.refuse(refuse)

    async def main():
        t = MqttTransport(mosquitto.url, table=table)
        await t.start()
        fw = board("mqtt://127.0.0.1:%d" % proxy.port, table)
        try:
            fw.start()
            await body(t, fw, proxy)
        finally:
            fw.stop()
            await t.stop()

    try:
        asyncio.run(main())
    finally:
        proxy.close()


def test_broker_closing_before_connack_three_times_loses_nothing(mosquitto):
    async def body(t, fw, proxy):
        drop(fw, 0, 10)  # balls fall while the board cannot get a session: they wait in the outbox
        hello = await next_of(t, Hello, 15)
        seen = await events(t, 10)
        assert_once_in_order(seen, 10)
        assert seen[0].boot == hello.boot
        await no_more_events(t)
        assert proxy.refused == 3 and proxy.accepted == 4
        assert proxy.closed_by_client == 3, "a refused connection's socket was left open"
        assert_no_reset(fw)

    through_proxy(mosquitto, "faults-1", body, refuse=3)  # defect: an EOF while waiting for CONNACK reset the board


def test_stalled_link_is_dropped_and_the_outbox_resent_once(mosquitto):
    async def body(t, fw, proxy):
        await next_of(t, Hello, 15)
        drop(fw, 0, 5)
        seen = await events(t, 5)
        proxy.stall()  # nothing moves either way, nothing is closed
        drop(fw, 5, 10)
        # The PUBACKs never come: the board gives up on the link (status pixel red) and retries.
        fw.wait_pixels(lambda px: px[0] == (0x40, 0, 0), timeout=10)
        await asyncio.sleep(1.5)  # retries into the stall time out too
        proxy.resume()
        seen += await events(t, 10, timeout=20)
        assert_once_in_order(seen, 15)
        await no_more_events(t)
        fw.wait_pixels(lambda px: px[0] == (0, 0x20, 0), timeout=10)
        assert proxy.accepted >= 2
        assert proxy.closed_by_client == proxy.accepted - 1, "a stalled session's socket was left open"
        assert_no_reset(fw)

    through_proxy(mosquitto, "faults-2", body)


def test_half_open_link_reconnects_and_the_old_will_never_lands_after_online(mosquitto):
    async def body(t, fw, proxy):
        await next_of(t, Hello, 15)
        drop(fw, 0, 5)
        seen = await events(t, 5)
        # Wi-Fi gone without a FIN: the broker still holds the old session, and will not drop it
        # (and publish its will) until 1.5 keepalives of silence have passed.
        proxy.blackhole()
        drop(fw, 5, 5)
        seen += await events(t, 5, timeout=20)  # reconnected through a fresh connection
        assert_once_in_order(seen, 10)
        assert t.online[("faults-3", "plingpong-1")] is True
        # Past the moment the broker would have timed the old session out: the stable client id
        # made the new session take it over, so no stale 'offline' lands after 'online'.
        await asyncio.sleep(3.5)
        assert t.online[("faults-3", "plingpong-1")] is True, "the old session's will said offline after online"
        late = MqttTransport(mosquitto.url, table="faults-3")  # a newcomer reads the retained status
        await late.start()
        try:
            await until(lambda: ("faults-3", "plingpong-1") in late.online, 30, "the retained status")
            assert late.online.get(("faults-3", "plingpong-1")) is True
        finally:
            await late.stop()
        await no_more_events(t, 0.2)
        assert proxy.closed_by_client == proxy.accepted - 1, "the half-open session's socket was left open"
        assert_no_reset(fw)

    through_proxy(mosquitto, "faults-3", body)


def test_tls_with_the_ca_from_the_config(tmp_path):
    from support.procs import Broker

    broker = Broker(tmp_path / "tls", tls=True).start()
    other = Broker(tmp_path / "other-ca", tls=True)  # only its CA is used: one the broker's cert is not from
    ca = broker.ca.read_text()

    async def main():
        t = MqttTransport(broker.url, table="faults-4", tls_ca=str(broker.ca))
        await t.start()
        fw = board(broker.url, "faults-4", tls=True, ca=ca)
        wrong = board(broker.url, "faults-4", "plingpong-2", tls=True, ca=other.ca.read_text())
        try:
            fw.start()
            wrong.start()
            hello = await next_of(t, Hello, 15)
            assert hello.board == "plingpong-1"
            drop(fw, 0, 3)
            assert_once_in_order(await events(t, 3), 3)
            # A broker whose certificate the board's CA did not sign is never trusted, and never a reset.
            wrong.wait_pixels(lambda px: px[0] == (0x40, 0, 0), timeout=10)
            await asyncio.sleep(1)
            assert ("faults-4", "plingpong-2") not in t.boards
            assert_no_reset(wrong)
            assert_no_reset(fw)
        finally:
            fw.stop()
            wrong.stop()
            await t.stop()

    try:
        asyncio.run(main())
    finally:
        broker.close()
        other.close()


def test_a_write_the_small_lwip_send_buffer_cannot_take_keeps_the_outbox(mosquitto):
    # The board's TCP socket holds only TCP_SND_BUF unacknowledged bytes (5744 on the ESP32's lwIP,
    # tests/firmware/fakes/socket.py). A link that stops taking data (a congested access point, a
    # broker that does not read) fills it within a few KB: the next write would block. It waits
    # response_ms at most, then the session goes, and every event stays in the outbox.
    async def body(t, fw, proxy):
        await next_of(t, Hello, 15)
        drop(fw, 0, 3)
        seen = await events(t, 3)
        proxy.choke()  # nothing more is read from the board: its send buffer fills
        drop(fw, 3, 90)  # ~12 KB of events: more than the send buffer and the small window together
        fw.wait_pixels(lambda px: px[0] == (0x40, 0, 0), timeout=15)
        await asyncio.sleep(1.0)
        assert "write stalled" in fw.log(), fw.log()[-2000:]  # a write blocked, not a missing PUBACK
        proxy.resume()
        seen += await events(t, 90, timeout=30)
        assert_once_in_order(seen, 93)
        await no_more_events(t)
        assert_no_reset(fw)

    through_proxy(mosquitto, "faults-6", body, rcvbuf=4096)


def _broker_frozen(broker, table, killed):
    """SIGSTOP the real Mosquitto for longer than the keepalive (balls keep falling), then SIGCONT it,
    or SIGKILL it while stopped and start a new one on the same port."""

    async def main():
        t = MqttTransport(broker.url, table=table)
        await t.start()
        fw = board(broker.url, table)
        try:
            fw.start()
            await next_of(t, Hello, 15)
            drop(fw, 0, 5)
            seen = await events(t, 5)
            os.kill(broker.proc.pid, signal.SIGSTOP)
            try:
                drop(fw, 5, 10)  # they wait in the outbox: no PUBACK comes from a frozen broker
                # keepalive 2 s: the board gives the session up after about a second of silence,
                # and its reconnects meet a kernel that accepts the TCP but a broker that never answers.
                fw.wait_pixels(lambda px: px[0] == (0x40, 0, 0), timeout=10)
                await asyncio.sleep(3.5)  # stopped 1.5 keepalives and more in all
            finally:
                if killed:
                    broker.kill()  # SIGKILL ends a stopped process too
                else:
                    os.kill(broker.proc.pid, signal.SIGCONT)
            if killed:
                broker.start()
            seen += await events(t, 10, timeout=30)
            assert_once_in_order(seen, 15)
            await no_more_events(t)
            fw.wait_pixels(lambda px: px[0] == (0, 0x20, 0), timeout=15)
            drop(fw, 15, 3)  # and the link works on
            seen += await events(t, 3)
            assert_once_in_order(seen, 18)
            assert_no_reset(fw)
        finally:
            fw.stop()
            await t.stop()

    asyncio.run(main())


def test_broker_stopped_longer_than_the_keepalive_then_continued(mosquitto_fresh):
    _broker_frozen(mosquitto_fresh, "faults-7", killed=False)


def test_broker_killed_while_stopped_and_started_again(mosquitto_fresh):
    _broker_frozen(mosquitto_fresh, "faults-8", killed=True)


def test_a_short_session_that_carried_traffic_resets_the_backoff(mosquitto):
    # Defect: the backoff was reset only after a session outlived the keepalive, so a session cut
    # soon after it carried events waited out the doubled delay (here 2-4 s) with the broker up.
    async def body(t, fw, proxy):
        await next_of(t, Hello, 20)  # after 4 refusals (250, 500, 1000, 2000 ms waits) the delay doubled to 4 s
        drop(fw, 0, 3)
        seen = await events(t, 3)
        proxy.cut()  # the broker drops the board and stays up
        t0 = time.monotonic()
        await next_of(t, Hello, 15)
        waited = time.monotonic() - t0
        assert waited < 1.5, "the board waited %.1f s to reconnect to a broker that was up" % waited
        drop(fw, 3, 2)
        seen += await events(t, 2)
        assert_once_in_order(seen, 5)
        assert_no_reset(fw)

    through_proxy(mosquitto, "faults-9", body, refuse=4)
