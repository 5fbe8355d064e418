"""Run the `battlement` command as a user does: a separate process, from the repo root."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def battlement(*args, timeout=120):
    """Returns (exit code, stdout, stderr) of `battlement ARGS...`."""
    proc = subprocess.run(
        [sys.executable, "-m", "battlement.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    return proc.returncode, proc.stdout, proc.stderr
