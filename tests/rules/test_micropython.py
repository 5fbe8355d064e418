"""Run every rules test module again under the real MicroPython unix port.

Each module tests/rules/test_<game>*.py / test_engine*.py is plain functions and
asserts (see rtest.py), so the same file runs here in one `micropython` process
per module. A module whose first line is `# rules-test: cpython-only` is skipped
(e.g. CLI tests that start subprocesses).
"""

import os
import pathlib
import subprocess

import pytest
from support.procs import MICROPYTHON

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# Generous: the unix port's default heap is small for long random soaks; boards are tested by the benchmark.
HEAP = "16M"


def rules_modules():
    out = []
    for p in sorted(HERE.glob("test_*.py")):
        if p.name == "test_micropython.py":
            continue
        with open(p) as f:
            first = f.readline()
        if "rules-test: cpython-only" in first:
            continue
        out.append(p.stem)
    return out


def run_under_micropython(modname, timeout=240):
    """(exit code, output) of running one rules test module under MicroPython."""
    env = dict(os.environ)
    env["MICROPYPATH"] = "%s:%s:.frozen" % (HERE, ROOT)
    code = "import rtest\nrtest.main(%r)\n" % modname
    proc = subprocess.run(
        [MICROPYTHON, "-X", "heapsize=" + HEAP, "-c", code],
        check=False, cwd=str(HERE), env=env, capture_output=True, text=True, timeout=timeout,
    )
    return proc.returncode, proc.stdout + proc.stderr


def failures(output):
    """{test name: its failure text} from the runner's FAIL ... END-FAIL blocks."""
    out = {}
    name = None
    for line in output.splitlines():
        if line.startswith("FAIL "):
            name = line[5:].split(":", 1)[0]
            out[name] = [line]
        elif line == "END-FAIL":
            name = None
        elif name:
            out[name].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


@pytest.mark.parametrize("modname", rules_modules())
def test_rules_module_passes_under_micropython(modname):
    if not MICROPYTHON:
        pytest.fail("micropython binary not found; run `make setup`")
    code, output = run_under_micropython(modname)
    failed = failures(output)
    if failed:
        pytest.fail(
            "%d test(s) of %s fail under MicroPython: %s\n\n%s"
            % (len(failed), modname, ", ".join(sorted(failed)), "\n\n".join(failed[k] for k in sorted(failed))),
            pytrace=False,
        )
    # Crashed before or between tests (import error, MemoryError in the runner, sys.exit...).
    assert code == 0 and ("DONE %s failed=0" % modname) in output, (
        "%s did not run to the end under MicroPython (exit %d):\n%s" % (modname, code, output[-3000:])
    )
    assert "PASS " in output, "%s has no test_ functions" % modname
