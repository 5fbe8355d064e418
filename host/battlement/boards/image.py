"""`battlement flash --image`: install MicroPython itself from an image file, its SHA-256 checked first.

    battlement flash --board pico-w --image RPI_PICO_W-v1.25.0.uf2 --sha256 HEX        (Pico W in BOOTSEL mode)
    battlement flash --board esp32-s3-devkitc-1 --port /dev/ttyACM0 --image ESP32_GENERIC_S3-v1.25.0.bin

The hash the image must have: --sha256, else the first word of IMAGE.sha256 beside it (what `sha256sum`
writes); with neither, or a different one, nothing is written. The board's profile (hardware/profiles,
"micropython_image") says how the image goes on:

  esptool  ESP32-S3: one esptool run erases the whole flash and writes the image at the profile's offset
           (0x0: MicroPython's ESP32-S3 image holds bootloader, partition table and firmware). The image
           must be an ESP image for the profile's chip (its header names the chip).
  uf2      Pico W: the .uf2 is copied onto the board's RPI-RP2 drive (BOOTSEL held while plugging it in),
           found by the INFO_UF2.TXT every UF2 drive holds, under --drive DIR or where desktops mount
           drives; the image's blocks must be for the profile's chip family (RP2040).

The board then restarts into MicroPython; with --id, `battlement flash` waits for --port and goes on with
the firmware. BATTLEMENT_ESPTOOL names another esptool to run instead of the project's.
"""

from __future__ import annotations

import dataclasses
import getpass
import hashlib
import os
import pathlib
import re
import shlex
import shutil
import struct
import subprocess
import sys
import time

from battlement.boards import firmware as fwbuild
from battlement.boards import hardware
from battlement.errors import UserError

HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
UF2_MAGIC = (0x0A324655, 0x9E5D5157)
UF2_FAMILY_FLAG = 0x00002000
ESP_MAGIC = 0xE9
BAUD = "460800"  # what MicroPython's own instructions use for the ESP32-S3
PORT_WAIT_S = 30.0  # for the board's serial port to come back with MicroPython on it


@dataclasses.dataclass
class Install:
    image: pathlib.Path
    by: str  # "esptool" or "uf2"
    sha256: str
    command: list[str] | None = None  # esptool's
    drive: pathlib.Path | None = None  # the RPI-RP2 drive

    def steps(self) -> list[str]:
        if self.command is not None:
            return [shlex.join(self.command)]
        return ["cp %s %s" % (shlex.quote(str(self.image)), shlex.quote(str(self.drive) + "/"))]


def expected_sha256(image: pathlib.Path, given: str | None) -> tuple[str, str]:
    """The hash image must have, and where it was found."""
    if given:
        if not HEX64.match(given):
            raise UserError("--sha256 %s is not a SHA-256 (64 hex digits)" % given)
        return given.lower(), "--sha256"
    side = image.with_name(image.name + ".sha256")
    if side.is_file():
        words = side.read_text(errors="replace").split()
        if not words or not HEX64.match(words[0]):
            raise UserError("%s does not start with a SHA-256 (64 hex digits, as `sha256sum` writes)" % side)
        return words[0].lower(), str(side)
    raise UserError("no SHA-256 to check %s against: give --sha256 HEX (the hash published with the image) or "
                    "put %s beside it" % (image, side.name))


def check(image: pathlib.Path, given: str | None) -> str:
    """The image's SHA-256 if it is the one expected; one line saying both if not."""
    want, where = expected_sha256(image, given)
    h = hashlib.sha256()
    with open(image, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    got = h.hexdigest()
    if got != want:
        raise UserError("%s has SHA-256 %s, but %s says %s: not written (a damaged or different download)"
                        % (image, got, where, want))
    return got


def _check_kind(image: pathlib.Path, way: dict, profile: str) -> None:
    """An image for another chip would leave the board without a working MicroPython: refused before writing."""
    with open(image, "rb") as f:
        head = f.read(32)
    if way["by"] == "uf2":
        if len(head) < 32 or struct.unpack_from("<II", head) != UF2_MAGIC:
            raise UserError("%s is not a UF2 image: a %s takes the .uf2 from its MicroPython download page"
                            % (image, profile))
        flags, family = struct.unpack_from("<I", head, 8)[0], struct.unpack_from("<I", head, 28)[0]
        if flags & UF2_FAMILY_FLAG and family != int(way["family"], 16):
            raise UserError("%s is a UF2 image for chip family 0x%08x, not %s's (%s): another board's download?"
                            % (image, family, profile, way["family"]))
        return
    if len(head) < 14 or head[0] != ESP_MAGIC:
        raise UserError("%s is not an ESP32 image (it does not start with 0xE9): a %s takes the .bin from its "
                        "MicroPython download page" % (image, profile))
    chip = struct.unpack_from("<H", head, 12)[0]
    if chip != way["chip_id"]:
        raise UserError("%s is an image for ESP chip id %d, not the %s's %s (id %d): another board's download?"
                        % (image, chip, profile, way["chip"], way["chip_id"]))


def esptool() -> str:
    return os.environ.get("BATTLEMENT_ESPTOOL") or fwbuild.venv_tool("esptool", "esptool")


def _mount_roots() -> list[pathlib.Path]:
    user = os.environ.get("USER") or getpass.getuser()
    return [pathlib.Path(p) for p in ("/media/" + user, "/run/media/" + user, "/media", "/mnt", "/Volumes")]


def _uf2_drives(root: pathlib.Path, board_id: str) -> list[pathlib.Path]:
    """UF2 drives of board_id at root, one or two levels down (/media/<user>/RPI-RP2)."""
    found = []
    for d in [root, *sorted(root.glob("*")), *sorted(root.glob("*/*"))]:
        info = d / "INFO_UF2.TXT"
        try:
            text = info.read_text(errors="replace") if info.is_file() else ""
        except OSError:
            continue
        if any(line.split(":", 1)[1].strip() == board_id for line in text.splitlines() if line.startswith("Board-ID:")):
            found.append(d)
    return found


def find_drive(board_id: str, where: str | None) -> pathlib.Path:
    roots = [pathlib.Path(where)] if where else _mount_roots()
    found = sorted({d for r in roots if r.is_dir() for d in _uf2_drives(r, board_id)})
    if len(found) > 1:
        raise UserError("%d boards in BOOTSEL mode (%s): unplug all but one, or give --drive DIR"
                        % (len(found), ", ".join(map(str, found))))
    if not found:
        raise UserError("no %s drive (a Pico in BOOTSEL mode, with an INFO_UF2.TXT) under %s: hold BOOTSEL while "
                        "plugging the board in, wait for the drive to be mounted, or give --drive DIR"
                        % (board_id, ", ".join(map(str, roots))))
    return found[0]


def plan(args) -> Install:
    """Check the image (hash, chip) and find how it goes on, before anything is written."""
    if not args.board:
        raise UserError("--image needs --board: the board profile says how MicroPython goes on (%s)"
                        % ", ".join(hardware.profile_names()))
    prof = hardware.load_profile(args.board)
    way = prof.get("micropython_image")
    if not way:
        raise UserError("board profile %s does not say how MicroPython is installed on it (micropython_image)"
                        % args.board)
    image = pathlib.Path(args.image)
    if not image.is_file():
        raise UserError("--image %s: no such file (download it from %s)" % (image, prof.get("micropython", "")))
    digest = check(image, getattr(args, "sha256", None))
    _check_kind(image, way, args.board)
    if way["by"] == "esptool":
        if not args.port:
            raise UserError("--image on a %s needs --port: the board's serial port, e.g. /dev/ttyACM0" % args.board)
        cmd = [esptool(), "--chip", way["chip"], "--port", args.port, "--baud", BAUD,
               "write-flash", "--erase-all", "-z", way["offset"], str(image)]
        return Install(image, "esptool", digest, command=cmd)
    return Install(image, "uf2", digest, drive=find_drive(way["drive"], getattr(args, "drive", None)))


def _run_esptool(cmd: list[str], port: str) -> None:
    """esptool as the user would see it (its progress passed through); a failure in one line, its own reason."""
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:
        raise UserError("cannot run %s: %s" % (cmd[0], e.strerror or e))
    tail = b""
    assert p.stdout is not None
    fd = p.stdout.fileno()
    for chunk in iter(lambda: os.read(fd, 4096), b""):  # as it comes: esptool's progress
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        tail = (tail + chunk)[-4096:]
    rc = p.wait()
    if rc == 0:
        return
    lines = [x.strip() for x in tail.decode(errors="replace").replace("\r", "\n").splitlines() if x.strip()]
    why = next((x for x in reversed(lines) if "fatal error" in x.lower()), lines[-1] if lines else "no output")
    raise UserError("esptool could not write MicroPython on %s (exit %d): %s; put the board in download mode "
                    "(hold BOOT, press and release RST, release BOOT) and close any program holding the port"
                    % (port, rc, why.removeprefix("ERROR: ")))


def write(inst: Install, say) -> None:
    if inst.command is not None:
        _run_esptool(inst.command, inst.command[inst.command.index("--port") + 1])
        say("MicroPython written (SHA-256 %s); the board restarts into it" % inst.sha256)
        return
    assert inst.drive is not None
    dst = inst.drive / inst.image.name
    try:
        with open(inst.image, "rb") as src, open(dst, "wb") as out:
            shutil.copyfileobj(src, out)
            out.flush()
            os.fsync(out.fileno())
    except OSError as e:
        raise UserError("could not copy %s onto %s: %s (did the board leave BOOTSEL mode?)"
                        % (inst.image, inst.drive, e.strerror or e))
    say("MicroPython copied onto %s (SHA-256 %s); the board restarts into it" % (inst.drive, inst.sha256))


def wait_port(inst: Install, port: str, timeout: float = PORT_WAIT_S) -> None:
    """The board's serial port, back with MicroPython on it (a native USB port esptool used goes away as the
    board restarts, and comes back: a moment for it to go first)."""
    if inst.command is not None:
        gone = time.monotonic() + 3
        while os.path.exists(port) and time.monotonic() < gone:
            time.sleep(0.1)
    deadline = time.monotonic() + timeout
    while not os.path.exists(port):
        if time.monotonic() > deadline:
            raise UserError("MicroPython is on the board, but %s did not appear within %d s: unplug and replug it, "
                            "then run `battlement flash` again without --image" % (port, timeout))
        time.sleep(0.2)
