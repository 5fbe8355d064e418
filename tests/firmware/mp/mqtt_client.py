# Runs under MicroPython: firmware/mqttlite.py against a broker stand-in in the same process that
# misbehaves on purpose. Usage: micropython mqtt_client.py <scenario> <port>; prints one JSON line.
#   writers: two publishers and the reader's PUBACKs share the link while the broker reads slowly
#            (a small send buffer, as on lwIP, so drains really wait): every packet must arrive whole.
#   stall:   the broker stops reading: publish must fail within the response time, not hang.
#   eof:     the broker closes before CONNACK: connect raises MQTTError (an OSError), socket closed.
import asyncio
import json
import socket
import sys
import time

from mqttlite import MQTTClient

PORT = int(sys.argv[2])  # a free loopback port the test picked


def packets(buf):
    """Split a byte stream into (type, body); None if it is not a clean sequence of MQTT packets."""
    out = []
    i = 0
    while i < len(buf):
        head = buf[i]
        n = shift = 0
        j = i + 1
        while True:
            if j >= len(buf):
                return None
            c = buf[j]
            j += 1
            n |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                break
        if j + n > len(buf):
            return None
        out.append((head & 0xF0, bytes(buf[j : j + n])))
        i = j + n
    return out


async def broker(r, w, mode, got):
    await r.read(512)  # CONNECT
    if mode == "eof":
        w.s.close()
        return
    w.write(b"\x20\x02\x00\x00")
    await w.drain()
    if mode == "stall":
        await asyncio.sleep(30)  # never reads again
        return
    # Commands down at QoS 1 while the board publishes: its reader answers each with a PUBACK.
    for k in range(40):
        topic = b"battlement/t/b/down"
        w.write(bytes((0x32, 2 + len(topic) + 2 + 8, 0, len(topic))) + topic + bytes((0, k + 1)) + b"cmd-%04d" % k)
        await w.drain()
        data = await r.read(700)  # slowly, in small bites
        if not data:
            break
        got.extend(data)
        await asyncio.sleep_ms(2)
    while True:
        try:
            data = await asyncio.wait_for_ms(r.read(700), 1500)
        except asyncio.TimeoutError:  # noqa: UP041 - MicroPython has no builtin TimeoutError
            break
        if not data:
            break
        got.extend(data)


async def main(mode):
    got = bytearray()
    srv = await asyncio.start_server(lambda r, w: broker(r, w, mode, got), "127.0.0.1", PORT)
    c = MQTTClient("battlement/t/b", "127.0.0.1", PORT, keepalive=10, response_ms=400)
    heard = []
    c.on_message = lambda t, p: heard.append(p)
    addr = socket.getaddrinfo("127.0.0.1", PORT)[0][-1]
    res = {}
    try:
        await c.connect(addr, 2000)
    except OSError as e:
        res["connect_error"] = type(e).__name__
        res["closed"] = c.sock is None
        print(json.dumps(res))
        return
    c.sock.setsockopt(socket.SOL_SOCKET, 7, 2048)  # SO_SNDBUF: lwIP-sized, so drains wait

    async def reader():
        try:
            while True:
                await c.wait_msg()
        except OSError:
            pass

    rt = asyncio.create_task(reader())
    if mode == "stall":
        t0 = time.ticks_ms()
        try:
            for k in range(2000):
                await c.publish("battlement/t/b/up", b"x" * 1000, qos=1)
            res["stall_error"] = None
        except OSError as e:
            res["stall_error"] = type(e).__name__
        res["stall_ms"] = time.ticks_diff(time.ticks_ms(), t0)
    else:

        async def pub(name):
            for k in range(60):
                await c.publish("battlement/t/b/up", (name + "-%03d-" % k).encode() + b"y" * 500, qos=1)

        try:
            await asyncio.gather(pub("a"), pub("b"))
            await asyncio.sleep_ms(1600)
        except Exception as e:  # noqa: BLE001 - reported, the test decides
            res["error"] = "%s: %s" % (type(e).__name__, e)
        pk = packets(got)
        res["clean"] = pk is not None
        if pk:
            res["publish"] = sorted(p[1][21:26].decode() for p in pk if p[0] == 0x30)
            res["puback"] = len([p for p in pk if p[0] == 0x40])
        res["heard"] = len(heard)
    rt.cancel()
    c.close()
    srv.close()
    print(json.dumps(res))


asyncio.run(main(sys.argv[1]))
