"""`battlement service install`: a systemd unit that runs the bridge at boot, as a Raspberry Pi user expects.

It prints the unit, or writes it with --write (a user unit by default, ~/.config/systemd/user/, or a
system unit with --system). The bridge's own options come after `--`, e.g.
    battlement service install --write -- --table hardware/tables/ringo.toml --serial /dev/ttyACM0 --host 0.0.0.0
The journal and the log sit in one folder (--var, default ~/.local/share/battlement), so a restart
resumes the game and keeps the host code.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import sys

from battlement.errors import UserError

UNIT = """\
[Unit]
Description=Battlement bridge (smart-table referee): boards, rules, LEDs, speech and the pages
After=network-online.target{after_mqtt}
Wants=network-online.target

[Service]
Type=simple
ExecStart={exec_start}
WorkingDirectory={workdir}
Restart=on-failure
RestartSec=2
# SIGTERM stops the bridge cleanly; the journal resumes the game at the next start
KillSignal=SIGTERM
TimeoutStopSec=15
{user_line}
[Install]
WantedBy={wanted_by}
"""


def command() -> str:
    """The battlement command of this installation (pipx, a venv or pip --user)."""
    here = pathlib.Path(sys.executable).parent / "battlement"
    return str(here) if here.exists() else (shutil.which("battlement") or "battlement")


def unit(bridge_args: list[str], var: str, system: bool = False, user: str | None = None) -> str:
    if any(a == "--journal" or a.startswith("--journal=") for a in bridge_args):
        journal_args: list[str] = []
    else:
        journal_args = ["--journal", os.path.join(var, "journal.sqlite")]
    argv = [command(), "run", *journal_args, *bridge_args]
    return UNIT.format(
        exec_start=" ".join(shlex.quote(a) for a in argv), workdir=var,
        after_mqtt=" mosquitto.service" if any(a.startswith("--mqtt") for a in bridge_args) else "",
        user_line="User=%s\n" % user if system and user else "",
        wanted_by="multi-user.target" if system else "default.target")


def install(args) -> int:
    extra = list(args.bridge_args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    var = os.path.abspath(os.path.expanduser(args.var))
    text = unit(extra, var, args.system, args.user or os.environ.get("SUDO_USER") or os.environ.get("USER"))
    if not args.write:
        print(text, end="")
        return 0
    if args.system:
        path = pathlib.Path("/etc/systemd/system/battlement.ops.service")
        how = "sudo systemctl daemon-reload && sudo systemctl enable --now battlement"
    else:
        path = pathlib.Path(os.path.expanduser("~/.config/systemd/user/battlement.ops.service"))
        how = ("systemctl --user daemon-reload && systemctl --user enable --now battlement"
               "   (and once: sudo loginctl enable-linger $USER, so it starts at boot without a login)")
    try:
        os.makedirs(var, exist_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as e:
        raise UserError("cannot write %s: %s%s" % (path, e.strerror or e,
                                                   " (a system unit needs root: sudo)" if args.system else "")) from None
    print("wrote %s\nstart it: %s\nlogs: journalctl %s-u battlement -f, and %s" % (
        path, how, "" if args.system else "--user ", os.path.join(var, "battlement.log")))
    return 0


