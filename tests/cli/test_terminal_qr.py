"""At start-up the terminal shows a QR code of the scoreboard's address (segno), for a phone's camera;
not with --quiet, and not when the output is a file (a service's log)."""

import os
import pty
import select
import subprocess
import time

from battlement.web import onboarding
from support.bridgeproc import BATTLEMENT, ROOT
from support.procs import free_port


def started_on_a_terminal(tmp_path, *extra):
    port = free_port()
    master, slave = pty.openpty()
    proc = subprocess.Popen([BATTLEMENT, "run", "--simulate", "--game", "ringo", "--no-mdns", "--port", str(port),
                             "--journal", str(tmp_path / ("j%d.sqlite" % port)), *extra],
                            stdin=slave, stdout=slave, stderr=slave, cwd=str(ROOT), start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 30
    try:
        while b"ready in" not in out and time.monotonic() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
    finally:
        proc.terminate()
        proc.wait(10)
        os.close(master)
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    assert "ready in" in text, text
    return text, "http://127.0.0.1:%d/" % port


def test_the_terminal_shows_the_scoreboard_as_a_qr_code(tmp_path):
    text, url = started_on_a_terminal(tmp_path)
    assert "the scoreboard, for a phone's camera (%s)" % url in text
    assert onboarding.terminal_qr(url) in text  # exactly segno's drawing of that address


def test_quiet_leaves_the_qr_code_out(tmp_path):
    text, url = started_on_a_terminal(tmp_path, "--quiet")
    assert "phone's camera" not in text and onboarding.terminal_qr(url) not in text
    assert "scoreboard: " + url in text  # the address itself is still printed


def test_no_qr_code_in_a_log_file(bridge_process):
    b = bridge_process("--simulate", "--game", "ringo")
    assert "phone's camera" not in b.output() and "\u2588" not in b.output()
