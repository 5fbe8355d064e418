"""Logging for the bridge: Python `logging` to the terminal and to a rotating file beside the journal.

Everything the bridge notes (unknown boards, missing sensors, refused commands, sound failures, page
errors) and each table's story (announcements, refusals) is logged, so nothing fails silently. The
terminal shows --log-level and up; the file keeps the same, rotated at 1 MB with 3 old files kept.
A page's code never reaches either: every line, whoever logs it (the web server's own lines name each
websocket's URL), has it masked as code=***, since whoever reads the log could open that page with it.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import re
import sys

LEVELS = ("debug", "info", "warning", "error")
FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
MAX_BYTES = 1_000_000
BACKUPS = 3
_OURS = "_battlement_handler"  # marks the handlers set up here, so a second setup replaces them
CODE = re.compile(r"(\bcode=)[^&\s\"'#]+")  # a page's code in a URL (?code=, &code=)


class Masked(logging.Formatter):
    """The usual line, with every code= in it (message, arguments, traceback) masked."""

    def format(self, record: logging.LogRecord) -> str:
        return CODE.sub(r"\1***", super().format(record))


def default_file(journal: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(journal)), "battlement.log")


def setup(level: str = "info", file: str | None = None, stream=None) -> None:
    """Terminal (stderr) and, unless file is None or "-", a rotating file; levels as the user chose."""
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(h)
        h.close()
    lvl = getattr(logging, level.upper())
    handlers: list[logging.Handler] = [logging.StreamHandler(stream or sys.stderr)]
    if file and file != "-":
        os.makedirs(os.path.dirname(os.path.abspath(file)), exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(file, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                                             encoding="utf-8"))
    for h in handlers:
        h.setFormatter(Masked(FORMAT, "%Y-%m-%d %H:%M:%S"))
        h.setLevel(lvl)
        setattr(h, _OURS, True)
        root.addHandler(h)
    root.setLevel(lvl)
    # one line per page request is noise at a table; their errors still come through
    logging.getLogger("uvicorn.access").setLevel(max(lvl, logging.WARNING))
    # uvicorn.error's debug lines are the websockets' frames and headers: noise, and bits of private pages
    for noisy in ("websockets", "asyncio", "uvicorn.error"):
        logging.getLogger(noisy).setLevel(max(lvl, logging.INFO))


def add_arguments(p) -> None:
    p.add_argument("--log-level", choices=LEVELS, default="info",
                   help="how much the terminal and the log file show (default info: the bridge's notes and "
                        "each table's announcements)")
    p.add_argument("--log-file", metavar="FILE",
                   help="rotating log file (default battlement.log beside the journal; '-' for none)")
