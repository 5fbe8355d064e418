"""Board profiles, pin maps and the `battlement hardware` command.

A pin map (hardware/boards/*.json) says which sensor hangs on which GPIO of
which board profile (hardware/profiles/*.json). `battlement hardware check`
rejects maps that cannot work (a pin wired to the flash, used twice, missing
on the board...) with one line per problem naming the pin and the reason;
`battlement flash` and the simulator turn a checked map into the board's
config.json.
"""

from __future__ import annotations

import difflib
import json
import pathlib
import re

from battlement.errors import UserError
from battlement.link.wire import MAC_LEN, MAX_FRAME, MSGID, SETTINGS, U32, VERSION

ROOT = pathlib.Path(__file__).resolve().parents[3]
HARDWARE = ROOT / "hardware"
PROFILES = HARDWARE / "profiles"
BOARDS = HARDWARE / "boards"

KINDS = ("beam", "tilt", "presence")
ID_RE = re.compile(r"^[a-z0-9-]{1,32}$")
SENSOR_RE = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")  # wire-safe, no ':' or ',' (they separate the hello list)
# Settings a map may set, with the range that makes physical sense.
LIMITS = {
    # The beam settings take only the values the detection holds in (the same as the `config` command's).
    "min_pulse_us": SETTINGS["min_us"],
    "lockout_ms": SETTINGS["lockout_ms"],
    "block_ms": SETTINGS["block_ms"],
    "settle_ms": (10, 5000),
    "tilt_settle_ms": (10, 5000),
    "presence_settle_ms": (10, 5000),
    "scan_ms": (1, 100),
    "beat_ms": (500, 60000),
    "resend_ms": (200, 60000),
    "outbox": (8, 1024),
    "ring": (32, 4096),
    "wdt_ms": (0, 8000),  # 0: off; the RP2040 watchdog cannot count past 8.3 s
    "gc_ms": (200, 60000),  # esp32: idle garbage collection, before the heap fills (docs/hardware.md "Timing")
    "gc_free": (4096, 1 << 20),  # esp32: collect sooner once less heap than this is free
}
# Why a beam setting's range is what it is, said beside the rejection (docs/hardware.md "Timing").
WHY = {
    "min_pulse_us": "below it a 0.5 ms flicker of noise may count as a ball, above it a 2 ms ball may be lost "
                    "(an IRQ up to 150 us late either way)",
    "lockout_ms": "below it a rim flicker's light (up to 0.5 ms) splits one ball in two, above it balls of a "
                  "burst (6 ms apart) merge into one",
    "block_ms": "a beam dark longer is blocked, not a ball: it must be longer than the widest ball (30 ms) and "
                "short enough that collections do not wait long behind a blocked beam",
}
# Below this a watchdog resets a healthy board: the sensing loop waits out blocking calls (a DNS
# lookup, a step of a TLS handshake: elliptic-curve arithmetic in mbedtls, of the order of a second).
WDT_MIN_MS = 2000
# Settings that mean something for one kind of sensor only (elsewhere they would be silently ignored).
ONLY_FOR = {
    "settle_ms": (("tilt", "presence"), "how long a reading must hold", "a beam is filtered by min_pulse_us and lockout_ms"),
    "min_pulse_us": (("beam",), "the shortest break counted as a ball", "a %s sensor is filtered by settle_ms"),
    "lockout_ms": (("beam",), "how long a flicker after a ball is ignored", "a %s sensor is filtered by settle_ms"),
    "block_ms": (("beam",), "how long a beam may stay dark before it is blocked", "a %s sensor is filtered by settle_ms"),
}


TOP_KEYS = {"board", "profile", "role", "transport", "muxes", "sensors", "leds", "wifi", "mqtt", "serial", "comment"}
TOP_KEYS |= {"key"}  # signing key (hex), written by `battlement flash` from the keys file
TOP_KEYS |= {"table", "boots_from"}  # the table its MACs bind; the least boot count (firmware/bootcount.py)
TOP_KEYS |= {"console"}  # an MQTT board's USB console on the unix port: a tty path (Improv, firmware/improv.py)
SENSOR_KEYS = {"id", "kind", "pin", "lower", "mux", "channel", "active", "pull", "min_pulse_us", "lockout_ms", "block_ms"}
SENSOR_KEYS |= {"settle_ms", "comment"}


def _unknown_keys(obj: dict, known, where: str, problems: list[str]) -> None:
    """A misspelt setting would silently fall back to its default: name it instead."""
    for key in sorted(set(obj) - set(known)):
        near = difflib.get_close_matches(key, sorted(known), 1)
        problems.append("%s: unknown key %r%s" % (where, key, " (did you mean %r?)" % near[0] if near else ""))


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILES.glob("*.json"))


def load_profile(name: str) -> dict:
    path = PROFILES / ("%s.json" % name)
    if not name or not path.is_file():
        raise UserError(
            "unknown board profile %r: known profiles are %s (in %s)"
            % (name, ", ".join(profile_names()) or "none", PROFILES)
        )
    return json.loads(path.read_text())


def load_map(path: str | pathlib.Path) -> dict:
    p = pathlib.Path(path)
    if p.suffix == ".toml":
        raise UserError(_table_not_board(p))
    try:
        text = p.read_text()
    except OSError as e:
        raise UserError("cannot read pin map %s: %s" % (p, e.strerror or e))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError("%s line %d column %d: not valid JSON: %s" % (p, e.lineno, e.colno, e.msg))
    if not isinstance(data, dict):
        raise UserError("%s: a pin map is a JSON object with board, profile, sensors, leds" % p)
    return data


def _table_not_board(p: pathlib.Path) -> str:
    """What to say when a table map (TOML) is given where a board's pin map (JSON) belongs."""
    boards: list[str] = []
    try:
        import tomllib

        boards = sorted(tomllib.loads(p.read_text()).get("boards") or {})
    except (OSError, ValueError):
        pass
    named = " ".join(str(BOARDS / ("%s.json" % b)) for b in boards[:6]) if boards else str(BOARDS / "BOARD.json")
    return ("%s is a table map (TOML: which board and sensor is which game object), not a board's pin map. "
            "`hardware check` checks pin maps (JSON, hardware/boards/): battlement hardware check %s%s; "
            "`battlement run --table %s` checks the table map itself"
            % (p, _rel(named), " ..." if len(boards) > 6 else "", p))


def _rel(paths: str) -> str:
    root = str(BOARDS.parent.parent) + "/"
    return paths.replace(root, "")


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Pins:
    """Who uses which GPIO, so a second user is reported with the first one's name."""

    def __init__(self, profile: dict, problems: list[str]):
        self.profile = profile
        self.problems = problems
        self.used: dict[int, str] = {}

    def claim(self, pin, user: str, output: bool = False, sensor: bool = False) -> None:
        prof = self.profile
        if not _int(pin):
            self.problems.append("%s: pin %r is not a GPIO number" % (user, pin))
            return
        key = str(pin)
        if key in prof.get("never", {}):
            self.problems.append(
                "%s: GPIO %d must not be used on %s: it %s" % (user, pin, prof["name"], prof["never"][key])
            )
        elif pin not in prof["gpio"]:
            self.problems.append("%s: GPIO %d does not exist on %s" % (user, pin, prof["name"]))
        elif output and key in prof.get("input_only", {}):
            self.problems.append(
                "%s: GPIO %d is input-only on %s and cannot drive %s" % (user, pin, prof["name"], user)
            )
        elif sensor and key in prof.get("no_input", {}):
            self.problems.append(
                "%s: GPIO %d cannot be a sensor input on %s: it %s" % (user, pin, prof["name"], prof["no_input"][key])
            )
        if pin in self.used:
            self.problems.append("%s: GPIO %d is already used by %s" % (user, pin, self.used[pin]))
        else:
            self.used[pin] = user


def _check_settings(obj: dict, where: str, problems: list[str]) -> None:
    for key, (lo, hi) in LIMITS.items():
        if key in obj:
            v = obj[key]
            if not _int(v) or not lo <= v <= hi:
                problems.append(
                    "%s: %s is %r; it must be a whole number from %d to %d%s"
                    % (where, key, v, lo, hi, ": " + WHY[key] if key in WHY else "")
                )
            elif key == "wdt_ms" and 0 < v < WDT_MIN_MS:
                problems.append(
                    "%s: wdt_ms is %d; a watchdog shorter than %d ms resets a healthy board over and over "
                    "(a DNS lookup or a TLS handshake holds the sensing loop about a second): use 0 (off) "
                    "or %d to 8000" % (where, v, WDT_MIN_MS, WDT_MIN_MS)
                )


FIRMWARE_VERSION = "0.1.0-000000"  # as long as a build's (boards/firmware.py version(): release and hash)


def hello_bytes(board: str, role: str, listing: str) -> int:
    """The longest the board's hello can get: every number at its widest, the firmware's version, and
    the MAC a signed board adds (" ~" and 16 hex digits), newline included."""
    fields = "hello %s ffffffff %s %d %s %s %d %d" % (board, FIRMWARE_VERSION, VERSION, role, listing or "-",
                                                     U32, MSGID)
    return len(fields) + len(" ~") + 2 * MAC_LEN + len("*00000000\n")


def check(m: dict, where: str = "pin map") -> list[str]:
    """Every reason this map cannot work, one readable line each (empty: the map is fine)."""
    problems: list[str] = []
    board = m.get("board")
    if not isinstance(board, str) or not ID_RE.match(board):
        problems.append("%s: board id %r must be 1-32 of a-z, 0-9 and '-'" % (where, board))
    try:
        prof = load_profile(m.get("profile", ""))
    except UserError as e:
        return problems + ["%s: %s" % (where, e)]
    transport = m.get("transport", "serial")
    if transport not in ("serial", "mqtt"):
        problems.append("%s: transport %r must be serial or mqtt" % (where, transport))
    _check_settings(m, where, problems)
    _unknown_keys(m, TOP_KEYS | set(LIMITS), where, problems)
    pins = _Pins(prof, problems)
    muxes = m.get("muxes") or {}
    mux_size = {}
    for name in sorted(muxes):
        mc = muxes[name]
        user = "mux %s" % name
        if not isinstance(mc, dict) or "sig" not in mc or not isinstance(mc.get("select"), list):
            problems.append("%s: needs sig (the common pin) and select (list of select pins)" % user)
            continue
        if not 1 <= len(mc["select"]) <= 4:
            problems.append(
                "%s: %d select pins; a 74HC4067 has 4 (16 channels), a 74HC4051 3" % (user, len(mc["select"]))
            )
        pins.claim(mc["sig"], user + " sig", sensor=True)
        for i, p in enumerate(mc["select"]):
            pins.claim(p, "%s select S%d" % (user, i), output=True)
        mux_size[name] = 1 << len(mc["select"])
    sensors = m.get("sensors")
    if not isinstance(sensors, list) or not sensors:
        problems.append("%s: sensors must be a non-empty list" % where)
        sensors = []
    seen: dict[str, int] = {}
    channels: dict[tuple, str] = {}
    for i, s in enumerate(sensors):
        sid = s.get("id") if isinstance(s, dict) else None
        user = "sensors[%d]%s" % (i, " (%s)" % sid if sid else "")
        if not isinstance(s, dict):
            problems.append("%s: each sensor is an object with id, kind and pin" % user)
            continue
        if not isinstance(sid, str) or not SENSOR_RE.match(sid):
            problems.append("%s: id %r must be 1-32 of letters, digits, '_', '.', '-'" % (user, sid))
        elif sid in seen:
            problems.append("%s: id %s is already used by sensors[%d]" % (user, sid, seen[sid]))
        else:
            seen[sid] = i
        kind = s.get("kind")
        if kind not in KINDS:
            problems.append("%s: kind %r must be one of %s" % (user, kind, ", ".join(KINDS)))
            continue
        _check_settings(s, user, problems)
        _unknown_keys(s, SENSOR_KEYS, user, problems)
        for key in sorted(set(s) & set(ONLY_FOR)):
            kinds, what, instead = ONLY_FOR[key]
            if kind not in kinds:
                problems.append(
                    "%s: %s is for %s sensors (%s); %s"
                    % (user, key, " and ".join(kinds), what, instead % kind if "%s" in instead else instead)
                )
        if s.get("active", 0) not in (0, 1):
            problems.append("%s: active must be 0 (pulled low when triggered) or 1" % user)
        if s.get("pull", "up") not in ("up", "down", "none"):
            problems.append("%s: pull must be up, down or none" % user)
        if "mux" in s:
            if kind == "beam":
                problems.append(
                    "%s: a beam needs its own IRQ pin; a multiplexer is scanned too slowly for 1 ms pulses"
                    % user
                )
                continue
            if "lower" in s:
                problems.append(
                    "%s: lower (a second beam) is only for beams on their own pins; a %s on a multiplexer "
                    "has one channel" % (user, kind)
                )
            mux = s["mux"]
            ch = s.get("channel", -1)
            if mux not in muxes:
                problems.append("%s: mux %r is not defined under muxes" % (user, mux))
            elif mux in mux_size and not (_int(ch) and 0 <= ch < mux_size[mux]):
                problems.append(
                    "%s: channel %r must be 0 to %d on mux %s" % (user, ch, mux_size[mux] - 1, mux)
                )
            elif (mux, ch) in channels:
                problems.append(
                    "%s: mux %s channel %s is already used by %s" % (user, mux, ch, channels[(mux, ch)])
                )
            else:
                channels[(mux, ch)] = user
            continue
        if "pin" not in s:
            problems.append("%s: needs pin (or mux and channel for tilt/presence)" % user)
            continue
        pins.claim(s["pin"], user, sensor=True)
        if "lower" in s:
            if kind != "beam":
                problems.append("%s: only a beam can have a lower beam" % user)
            else:
                pins.claim(s["lower"], user + " lower beam", sensor=True)
    if len(sensors) + sum(1 for s in sensors if isinstance(s, dict) and "lower" in s) > 250:
        problems.append("%s: more than 250 sensor channels on one board" % where)
    listing = ",".join("%s:%s" % (s.get("id"), s.get("kind")) for s in sensors if isinstance(s, dict))
    hello = hello_bytes(str(board), str(m.get("role") or m.get("profile")), listing)
    if hello > MAX_FRAME:
        problems.append(
            "%s: %d sensors make the board's hello %d bytes signed, over the %d-byte frame limit: "
            "shorten the sensor ids or split the sensors across two boards"
            % (where, len(sensors), hello, MAX_FRAME)
        )
    leds = m.get("leds")
    if leds is not None:
        if not isinstance(leds, dict) or "pin" not in leds:
            problems.append("%s: leds needs pin and count" % where)
        else:
            pins.claim(leds["pin"], "leds data", output=True)
            n = leds.get("count", 0)
            if not _int(n) or not 0 <= n <= 1024:
                problems.append("leds: count %r must be 0 to 1024" % (n,))
                n = 0
            st = leds.get("status", -1)
            if not _int(st) or not -1 <= st < max(n, 1) or (st >= n and n):
                problems.append("leds: status pixel %r must be -1 (none) or 0 to %d" % (st, n - 1))
            for g, spec in sorted((leds.get("groups") or {}).items()):
                if g in ("all", "status") or not SENSOR_RE.match(g):
                    problems.append("leds group %r: name is reserved or not a plain token" % g)
                if isinstance(spec, str):
                    a, _, b = spec.partition("-")
                    ok = a.isdigit() and (not b or b.isdigit())
                    idx = list(range(int(a), int(b or a) + 1)) if ok else []
                else:
                    idx = spec if isinstance(spec, list) else []
                    ok = all(_int(x) for x in idx)
                if not ok or not idx or any(not 0 <= x < n for x in idx):
                    problems.append(
                        "leds group %s: %r must be a range 'a-b' or list of indexes 0 to %d"
                        % (g, spec, n - 1)
                    )
    return problems


def check_file(path: str | pathlib.Path) -> dict:
    """Load and check one map; raises UserError listing every problem."""
    m = load_map(path)
    problems = check(m, str(path))
    if problems:
        raise UserError("%s: %d problem(s):\n  %s" % (path, len(problems), "\n  ".join(problems)))
    return m


def board_config(
    m: dict, board: str | None = None, mqtt: dict | None = None, wifi: dict | None = None
) -> dict:
    """The config.json a board runs from: the checked map, its id, and link settings."""
    cfg = json.loads(json.dumps(m))
    cfg.pop("comment", None)
    if board:
        cfg["board"] = board
    if mqtt:
        cfg["transport"] = "mqtt"
        cfg["mqtt"] = dict(mqtt)
    if wifi:
        cfg["wifi"] = dict(wifi)
    return cfg


def pins_for(profile: str, sensors, leds: int = 0) -> dict:
    """A pin map for a profile that gives each sensor free pins in order (used by the simulator).

    sensors: {id: kind} or a list of dicts (id, kind, optional pin/lower/mux...); a beam
    spec with "two": true gets a lower beam too.
    """
    prof = load_profile(profile)
    free = [
        p
        for p in prof["gpio"]
        if str(p) not in prof.get("never", {}) and str(p) not in prof.get("caution", {})
    ]
    free += [
        p for p in prof["gpio"] if str(p) in prof.get("caution", {}) and str(p) not in prof.get("never", {})
    ]
    specs = (
        [{"id": k, "kind": sensors[k]} for k in sorted(sensors)]
        if isinstance(sensors, dict)
        else [dict(s) for s in sensors]
    )
    taken = {s[k] for s in specs for k in ("pin", "lower") if k in s}
    avail = [p for p in free if p not in taken]
    out: dict = {"board": "sim", "profile": profile, "sensors": []}
    if leds:
        out["leds"] = {"pin": avail.pop(), "count": leds, "status": 0}
    # Pins wired to something on the board (an LED) can drive a strip but never read a sensor.
    avail = [p for p in avail if str(p) not in prof.get("no_input", {})]
    for s in specs:
        if "mux" not in s and "pin" not in s:
            s["pin"] = avail.pop(0)
        if s.pop("two", False):
            s["lower"] = avail.pop(0)
        out["sensors"].append(s)
    return out
