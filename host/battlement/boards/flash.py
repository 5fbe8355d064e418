"""`battlement flash`: put the firmware, the board's config and its pin map on a board with mpremote.

    battlement flash --board pico-w --port /dev/ttyACM0 --id red-kingdom
    battlement flash --board esp32-s3-devkitc-1 --port /dev/ttyUSB0 --id plingpong-1 \\
        --wifi-ssid castle --wifi-password ... --mqtt mqtt://192.168.1.10 --table hall-1
    make flash BOARD=pico-w PORT=/dev/ttyACM0 ID=red-kingdom DRYRUN=1

Steps: check the pin map (hardware/boards/<id>.json unless --map), compile every
module with mpy-cross for the board's CPU, write config.json, then one mpremote
session removes stale copies, copies the files and resets the board. MicroPython
itself must already be on the board, or come from --image FILE first (battlement.boards.image:
esptool or a UF2 copy, the image's SHA-256 checked; docs/flashing.md).
"""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import shutil
import subprocess
import time

from battlement.boards import firmware as fwbuild
from battlement.boards import hardware, image
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.transport.mqtt.names import SEP, check_id, login

BUILD = hardware.ROOT / "firmware" / "build"


def _mpremote() -> str:
    return fwbuild.venv_tool("mpremote", "mpremote")


def _check_login(user: str | None, table: str, board: str) -> None:
    """A `battlement broker-config` login (<table>.<board>) of another board of this table, or of this
    board's id on another table, would connect and then have every publish dropped by the ACL."""
    t, _, b = (user or "").partition(SEP)
    if hardware.ID_RE.match(t) and hardware.ID_RE.match(b) and (t == table or b == board) and user != login(table, board):
        raise UserError("--mqtt user %s is the broker login of table %s's board %s, but this board is %s of table "
                        "%s: give it %s (its password is in broker-config's credentials.toml)"
                        % (user, t, b, board, table, login(table, board)))


def plan(args, port_now: bool = True) -> tuple[dict, pathlib.Path, list[list[str]], list[list[str]]]:
    """Check everything and work out the steps: (config, build dir, mpy-cross commands, mpremote command).

    port_now: the port must be there now (not when MicroPython is to be installed first: --image)."""
    if not args.board:
        raise UserError(
            "--board (BOARD=) is missing: give the board profile, one of %s"
            % ", ".join(hardware.profile_names())
        )
    prof = hardware.load_profile(args.board)
    if not args.port:
        raise UserError(
            "--port (PORT=) is missing: the board's serial port, e.g. /dev/ttyACM0 (see `mpremote devs`)"
        )
    if (args.port.startswith("/") and port_now and not getattr(args, "dry_run", False)
            and not os.path.exists(args.port)):
        # before anything is compiled: a board not plugged in is the usual reason
        raise UserError("--port %s: no such serial port; is the board plugged in (with a data cable)? "
                        "`mpremote devs` lists the ports" % args.port)
    if not args.id or not hardware.ID_RE.match(args.id):
        raise UserError(
            "--id (ID=) %r must be the board id, 1-32 of a-z, 0-9 and '-', e.g. red-kingdom" % (args.id or "")
        )
    path = pathlib.Path(args.map) if args.map else hardware.BOARDS / ("%s.json" % args.id)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in hardware.BOARDS.glob("*.json")))
        raise UserError(
            "no pin map for board %s: expected %s (copy one of %s) or pass --map FILE"
            % (args.id, path, known)
        )
    m = hardware.check_file(path)
    if m["profile"] != args.board:
        raise UserError(
            "%s is a pin map for %s, but --board is %s: flash the board it was drawn for"
            % (path, m["profile"], args.board)
        )
    mqtt = wifi = None
    if args.mqtt:
        from battlement.link.transport.mqtt import check_ca, parse_url

        host, port, tls, user, password = parse_url(args.mqtt)
        user = getattr(args, "username", None) or user
        password = getattr(args, "password", None) or password
        tls_ca = check_ca(getattr(args, "tls_ca", None))
        tls = tls or getattr(args, "tls", False) or bool(tls_ca)
        if tls and not tls_ca:
            raise UserError(
                "--mqtt %s: TLS on a board needs --tls-ca PEM, the CA that signed the broker's certificate "
                "(a board has no store of public CAs, and TLS without a check would trust any broker)" % args.mqtt
            )
        if not args.table:
            raise UserError("--mqtt needs --table: the table id this board belongs to, e.g. hall-1")
        check_id("table", args.table)
        _check_login(user, args.table, args.id)
        if not args.wifi_ssid:
            raise UserError(
                "--mqtt needs --wifi-ssid (and usually --wifi-password): the board reaches the broker over Wi-Fi"
            )
        mqtt = {
            "host": host,
            "port": port,
            "table": args.table,
            "user": user or "",
            "password": password or "",
        }
        if tls and tls_ca:
            mqtt["tls"] = True
            mqtt["ca"] = _ca_pem(tls_ca)
        wifi = {"ssid": args.wifi_ssid, "password": args.wifi_password or ""}
    elif args.wifi_ssid:
        raise UserError("--wifi-ssid only means something with --mqtt URL (the broker the board publishes to)")
    cfg = hardware.board_config(m, args.id, mqtt, wifi)
    if m.get("transport") == "mqtt" and not args.mqtt:
        # No broker or Wi-Fi yet: the board talks over USB until `battlement provision` gives it both (Improv).
        cfg["transport"] = "serial"
        args.network_later = True  # run() says so
    # The board's signing key: kept in its table's keys file (battlement.link.keys, made 0600 if missing),
    # where every command finds it, the same one on every reflash so the bridge keeps recognising the board.
    # Boot counts start above this clock (firmware/bootcount.py): a board whose flash was erased begins past
    # every boot the host has seen of it.
    cfg["boots_from"] = int(time.time())
    if args.table:
        check_id("table", args.table)
        cfg["table"] = args.table  # the board's MACs are bound to its table (docs/protocol.md)
        keys_path = boardkeys.path_of(args.table, getattr(args, "keys_dir", None))
        have = boardkeys.load(keys_path).get(args.id)
        if args.dry_run:
            cfg["key"] = have.hex() if have else "(a new key, added to %s)" % keys_path
        else:
            cfg["key"] = boardkeys.provision(keys_path, args.id)
    out = pathlib.Path(args.build_dir) if args.build_dir else BUILD / args.id
    compiles = []
    files = []
    for src in fwbuild.firmware_modules():
        if src.name == "main.py":
            files.append(out / "main.py")
            continue
        dst = out / (src.stem + ".mpy")
        compiles.append([fwbuild.mpy_cross(), "-march=" + prof["mpy_march"], "-o", str(dst), str(src)])
        files.append(dst)
    files.append(out / (fwbuild.VERSION_MODULE + ".py"))  # the version its hello says (written by run())
    files.append(out / "config.json")
    # A module's old .py copy on the board would be imported instead of the new .mpy; an update's pointer
    # (fwset, firmware/ota.py) would start the set it swapped in instead of this one.
    stale = sorted(p.stem + ".py" for p in fwbuild.firmware_modules() if p.name != "main.py") + ["fwset"]
    clean = "import os; have = os.listdir(); [os.remove(f) for f in %r if f in have]" % (stale,)
    mp = [_mpremote(), "connect", args.port, "exec", clean, "+", "cp", *map(str, files), ":", "+", "reset"]
    return cfg, out, compiles, [mp]


def _ca_pem(path: str) -> str:
    """The first certificate of a PEM file, as text (the board decodes it to DER for mbedtls)."""
    text = pathlib.Path(path).read_text(errors="replace")
    begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
    a = text.find(begin)
    b = text.find(end, a)
    if a < 0 or b < 0:
        raise UserError("--tls-ca %s: no PEM certificate in it (expected a %s block)" % (path, begin))
    return text[a : b + len(end)] + "\n"


def _shown(cfg: dict) -> str:
    c = json.loads(json.dumps(cfg))
    for sect in ("wifi", "mqtt"):
        if c.get(sect, {}).get("password"):
            c[sect]["password"] = "********"
    if c.get("key") and not c["key"].startswith("("):
        c["key"] = "********"
    return json.dumps(c)


def run(args) -> int:
    # --image: MicroPython itself first (battlement.boards.image), its hash and chip checked before anything
    inst = image.plan(args) if getattr(args, "image", None) else None
    say = print
    if inst is not None and not args.id:
        return _install_only(inst, args, say)
    cfg, out, compiles, mp = plan(args, port_now=inst is None)
    if args.dry_run:
        say("# dry run: nothing is written and the board is not touched")
    for step in inst.steps() if inst else ():
        say(step)
    say("mkdir -p %s" % shlex.quote(str(out)))
    for c in compiles:
        say(shlex.join(c))
    say("cp %s %s" % (shlex.quote(str(fwbuild.FIRMWARE / "main.py")), shlex.quote(str(out / "main.py"))))
    say("# %s:\n%s" % (out / "config.json", _shown(cfg)))
    say("# signing: %s" % ("on: the board's key is in %s, where every command finds table %s's keys"
                           % (boardkeys.path_of(args.table, getattr(args, "keys_dir", None)), args.table)
                           if args.table else "OFF: no --table, so no key; the board signs nothing"))
    for c in mp:
        say(shlex.join(c))
    if getattr(args, "network_later", False):
        say("# network: none yet (%s says mqtt): the board talks over USB until `battlement provision %s --broker "
            "HOST --table TABLE` gives it Wi-Fi and its broker (docs/flashing.md)" % (args.id, args.port))
    if args.table:  # the fleet's "flashed" (`battlement boards`), beside the board's key
        say("# then: %s records board %s flashed now with firmware %s over %s"
            % (boardkeys.path_of(args.table, getattr(args, "keys_dir", None)), args.id, fwbuild.version(),
               cfg.get("transport", "serial")))
    if args.dry_run:
        return 0
    if inst is not None:
        image.write(inst, say)
        image.wait_port(inst, args.port)
    out.mkdir(parents=True, exist_ok=True)
    for c in compiles:
        p = subprocess.run(c, capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise UserError("mpy-cross failed on %s: %s" % (c[-1], (p.stderr or p.stdout).strip()))
    shutil.copyfile(fwbuild.FIRMWARE / "main.py", out / "main.py")
    fwbuild.write_version(out)
    (out / "config.json").write_text(json.dumps(cfg))
    for c in mp:
        rc = subprocess.run(c, check=False).returncode
        if rc != 0:
            raise UserError(
                "mpremote could not reach or write the board on %s (exit %d): is MicroPython installed "
                "(docs/flashing.md) and no other program (monitor, bridge, screen) holding the port?"
                % (args.port, rc)
            )
    if args.table:
        boardkeys.record_flash(boardkeys.path_of(args.table, getattr(args, "keys_dir", None)), args.id,
                               fwbuild.version(), cfg.get("transport", "serial"), time.time())
    say(
        "flashed %s on %s: it resets, then says hello; watch it with `battlement monitor --serial %s`"
        % (args.id, args.port, args.port)
    )
    return 0


def _install_only(inst: image.Install, args, say) -> int:
    """--image without --id: MicroPython alone."""
    if args.dry_run:
        say("# dry run: nothing is written and the board is not touched")
    for step in inst.steps():
        say(step)
    if not args.dry_run:
        image.write(inst, say)
    say("next: battlement flash --board %s --port PORT --id BOARD (the firmware and the board's config)" % args.board)
    return 0
