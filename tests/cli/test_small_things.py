"""Small things a user meets first: one-line errors, --version, `make run` installing only what running
needs, a systemd unit."""

import pathlib
import socket
import subprocess

import battlement as package
from support.cli import battlement

ROOT = pathlib.Path(__file__).resolve().parents[2]


def one_error_line(err):
    """The lines a user reads, log lines of the start-up aside: exactly one, and no traceback."""
    assert "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if " INFO " not in ln]
    assert len(lines) == 1, err
    return lines[0]


def test_a_busy_port_is_one_line(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _out, err = battlement("run", "--simulate", "--port", str(port), "--journal", str(tmp_path / "j.sqlite"),
                                     "--log-file", "-")
    assert code == 2
    line = one_error_line(err)
    assert "port %d" % port in line and "--port" in line


def test_a_table_toml_given_to_hardware_check_says_what_it_is():
    code, _out, err = battlement("hardware", "check", "hardware/tables/ringo.toml")
    assert code == 2
    assert "not valid JSON" not in err
    assert "table map" in err and "hardware/boards/" in err and "ring-1" in err  # what to check instead


def test_flash_to_a_missing_port_fails_before_compiling(tmp_path):
    code, out, err = battlement("flash", "--board", "pico-w", "--port", str(tmp_path / "ttyACM9"), "--id", "ring-1")
    assert code == 2
    line = one_error_line(err)
    assert "ttyACM9" in line and "mpremote devs" in line
    assert "mpy-cross" not in out  # nothing planned, nothing compiled


def test_version():
    code, out, _err = battlement("--version")
    assert code == 0 and out.strip() == "battlement %s" % package.__version__


def makes(target):
    """The commands `make TARGET` would run on a fresh clone (nothing is run: make -n -B)."""
    r = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_make_run_installs_only_what_running_needs():
    run, test = makes("run"), makes("test")
    for what in ("chromium", "mosquitto", ".[dev]", "stubs"):
        assert what not in run, what
        assert what in test, what
    assert "espeak-ng" in run and "battlement run --simulate" in run


def test_service_install_prints_a_unit_that_runs_the_bridge(tmp_path):
    code, out, err = battlement("service", "install", "--var", str(tmp_path), "--", "--table",
                                "hardware/tables/ringo.toml", "--host", "0.0.0.0")
    assert code == 0, err
    assert "[Service]" in out and "Restart=on-failure" in out and "WantedBy=default.target" in out
    start = next(ln for ln in out.splitlines() if ln.startswith("ExecStart="))
    assert " run --journal %s/journal.sqlite --table hardware/tables/ringo.toml --host 0.0.0.0" % tmp_path in start
