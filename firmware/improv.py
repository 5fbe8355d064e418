"""Improv Wi-Fi over serial: a browser tool or `battlement provision PORT` gives the board its Wi-Fi, and
Battlement's own commands its broker and table, without a file edited by hand.

links.py imports this only when a line starting "IMPROV" arrives on the serial link (or, on an MQTT board,
the USB console): a board never provisioned never loads it. The packets are improvwire's (the codec the
host shares). Answers go out on the same stream, each a line of its own between the frames.

The Wi-Fi settings apply everything at once: join the network, log in to the broker (when the board is to
report over MQTT), and only if both work write config.json (a new file renamed over the old, so a power cut
leaves one or the other whole) and answer "provisioned"; a board that now reports over MQTT, or has a new
key or table, restarts to take them. A failure answers "unable to connect" and leaves the config as it was.
"""

import asyncio
import json
import os
import time

import hal
import improvwire as iw

WAIT_MS = 500  # the rest of a packet comes within this (a client writes it whole) or it was a cut one
JOIN_MS = 15000  # to join the Wi-Fi
RESTART_MS = 300  # before a restart: the answer leaves the USB FIFO first
_pending = {}  # type: dict  # "broker", "table": Battlement's settings, kept until the Wi-Fi settings apply them


async def _fill(lines, buf):
    """Read on until buf holds its whole packet, or the stream ends."""
    while len(buf) < 9 or len(buf) < iw.size(buf):
        b = await lines.byte()
        if not b:
            return
        buf.extend(b)


async def serve(app, lines, first, tx):
    """Answer the packet whose first line is first (from lines, links.Lines); returns the bytes read past it
    that are the stream's again: after a bad packet, everything after its first line."""
    buf = bytearray(first)
    try:
        await asyncio.wait_for_ms(_fill(lines, buf), WAIT_MS)
    except asyncio.TimeoutError:  # noqa: UP041 - MicroPython has no builtin TimeoutError
        pass
    try:
        typ, data = iw.unpack(buf)
        if typ != iw.RPC:
            raise iw.ImprovError("a device takes only RPC commands")
        cmd, strings = iw.command(data)
    except iw.ImprovError:
        app.rejected += 1
        _error(tx, iw.INVALID_RPC)
        nl = buf.find(b"\n")
        return bytes(buf[nl + 1 :]) if nl >= 0 else b""
    rest = bytes(buf[iw.size(buf) :])
    _error(tx, iw.NO_ERROR)  # the standard's "no error" before each answer
    await _answer(app, tx, cmd, strings)
    return rest


def _state(tx, state):
    tx.write(iw.packet(iw.STATE, bytes((state,))))


def _error(tx, err):
    tx.write(iw.packet(iw.ERROR, bytes((err,))))


def _version(app):
    v = getattr(app, "firmware", None)  # the installed set's version, on a board that keeps one
    if v:
        return v
    import app as appmod

    return appmod.FIRMWARE


def _wlan():
    try:
        import network
    except ImportError:
        return None  # the unix port: the host's network is up
    w = network.WLAN(network.STA_IF)
    w.active(True)
    return w


def _provisioned(app):
    if not (app.cfg.get("wifi") or {}).get("ssid"):
        return False
    w = _wlan()
    return w is None or w.isconnected()


async def _answer(app, tx, cmd, s):
    if cmd == iw.GET_INFO:
        chip = "%s/%s" % (app.cfg.get("profile") or "board", hal.PORT)
        tx.write(iw.result(cmd, (iw.FIRMWARE, _version(app), chip, app.board)))
    elif cmd == iw.GET_STATE:
        if _provisioned(app):
            _state(tx, iw.PROVISIONED)
            tx.write(iw.result(cmd))
        else:
            _state(tx, iw.READY)
    elif cmd == iw.SCAN:
        w = _wlan()
        for net in (w.scan() if w is not None else ()):  # blocks a second or two: asked for while provisioning
            if net[0]:
                tx.write(iw.result(cmd, (net[0], str(net[3]), "YES" if net[4] else "NO")))
        tx.write(iw.result(cmd))
    elif cmd == iw.BROKER and len(s) == 4 and s[0] and s[1].isdigit() and 0 < int(s[1]) < 65536:
        _pending["broker"] = {"host": s[0], "port": int(s[1]), "user": s[2], "password": s[3]}
        tx.write(iw.result(cmd))
    elif cmd == iw.TABLE and len(s) == 2 and _id(s[0]) and (not s[1] or _hex(s[1])):
        _pending["table"] = (s[0], s[1])
        tx.write(iw.result(cmd))
    elif cmd == iw.WIFI and len(s) == 2 and 0 < len(s[0]) <= 32:
        await _provision(app, tx, s[0], s[1])
    elif cmd in (iw.BROKER, iw.TABLE, iw.WIFI):
        app.rejected += 1
        _error(tx, iw.INVALID_RPC)
    else:
        _error(tx, iw.UNKNOWN_RPC)  # hostname, device name, network state: optional, and not kept here


def _id(s):
    return 0 < len(s) <= 32 and all(c.isdigit() or "a" <= c <= "z" or c == "-" for c in s)


def _hex(s):
    return 32 <= len(s) <= 128 and all(c in "0123456789abcdef" for c in s)


def _settings(app, ssid, password):
    """The config the board is to run with: its own, with the Wi-Fi and what Battlement's commands gave."""
    with open(_config_path()) as f:
        cfg = json.load(f)  # the whole file: the board keeps only part of it in memory (app.PIN_MAP)
    cfg["wifi"] = {"ssid": ssid, "password": password}
    mq = dict(cfg.get("mqtt") or {})
    b = _pending.get("broker")
    if b:
        mq.update(b)
        mq.pop("tls", None)  # a new broker: a CA given for another one means nothing (TLS: battlement flash)
        mq.pop("ca", None)
        cfg["transport"] = "mqtt"
    t = _pending.get("table")
    if t:
        cfg["table"] = t[0]  # the table its frames' MACs are bound to
        if mq:
            mq["table"] = t[0]  # ... and its topics
        if t[1]:
            cfg["key"] = t[1]
    if mq:
        cfg["mqtt"] = mq
    return cfg


async def _join(ssid, password):
    w = _wlan()
    if w is None:
        return True
    try:
        w.disconnect()  # a half-joined station does not join again until told to let go
    except OSError:
        pass
    w.connect(ssid, password)
    t0 = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), t0) < JOIN_MS:
        if w.isconnected():
            return True
        await asyncio.sleep_ms(100)
    return False


async def _login(app, mq):
    """Whether the broker takes the board's login (a TLS broker's certificate dates need the clock: not here)."""
    if mq.get("tls"):
        return True
    import socket

    from mqttlite import MQTTClient

    c = MQTTClient("battlement/%s/%s" % (mq.get("table", "table"), app.board), mq.get("host", "127.0.0.1"),
                   mq.get("port", 1883), mq.get("user") or None, mq.get("password") or None, 30)
    try:
        await c.connect(socket.getaddrinfo(c.host, c.port)[0][-1])
        return True
    except OSError:  # MQTTError is one: refused, wrong login, nobody there
        return False
    finally:
        c.close()


def _config_path():
    """Where app.main() read the config: BATTLEMENT_CONFIG's file on the unix port (a board has no environment)."""
    getenv = getattr(os, "getenv", None)
    return (getenv and getenv("BATTLEMENT_CONFIG")) or "config.json"


def save(cfg):
    """config.json replaced whole: a new file renamed over the old (littlefs, both ports' default, renames
    atomically; FAT cannot rename over a file, so there the old one goes first)."""
    path = _config_path()
    tmp = path + ".new"
    with open(tmp, "w") as f:
        json.dump(cfg, f)
    try:
        os.rename(tmp, path)
    except OSError:
        os.remove(path)
        os.rename(tmp, path)


async def _provision(app, tx, ssid, password):
    _state(tx, iw.PROVISIONING)
    cfg = _settings(app, ssid, password)
    ok = await _join(ssid, password)
    if ok and cfg.get("transport") == "mqtt":
        ok = await _login(app, cfg["mqtt"])
    if not ok:
        _error(tx, iw.UNABLE_TO_CONNECT)
        _state(tx, iw.READY)
        return
    save(cfg)
    _pending.clear()
    # The link, the key and the table are taken at start: a board whose change touches them starts again.
    restart = cfg.get("transport") == "mqtt" or any(cfg.get(k) != app.cfg.get(k) for k in ("key", "table"))
    from app import PIN_MAP

    app.cfg = {k: v for k, v in cfg.items() if k not in PIN_MAP}
    _state(tx, iw.PROVISIONED)
    tx.write(iw.result(iw.WIFI))
    if restart:
        await asyncio.sleep_ms(RESTART_MS)
        import machine

        machine.reset()  # the link starts over from the new config (a new boot: the host sees a restart)
