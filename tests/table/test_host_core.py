"""The host core names no game: what a game needs at a table is in its own folder
(shared_rules/<game>/table.py and page.js), so adding or changing a game edits no host file."""

import pathlib
import re

import shared_rules

HOST = pathlib.Path(__file__).resolve().parents[2] / "host" / "battlement"
CORE = ["link", "table", "bridge.py", "web"]  # the pipeline's layers, with the pages and their script


def test_no_game_is_named_in_the_host_core():
    words = set()
    for name, module in shared_rules.GAMES.items():
        words.update(re.split(r"[-_]", name) + [name, module.split(".")[1]])
    words = {w for w in words if len(w) > 3 and w not in ("medieval",)} | {"pong"}
    pattern = re.compile("|".join(sorted(words)), re.IGNORECASE)
    found = []
    for entry in CORE:
        path = HOST / entry
        for f in sorted(path.rglob("*") if path.is_dir() else [path]):
            if f.suffix in (".py", ".js", ".html"):
                for n, line in enumerate(f.read_text().splitlines(), 1):
                    if pattern.search(line):
                        found.append("%s:%d: %s" % (f.relative_to(HOST), n, line.strip()))
    assert found == [], "\n".join(found)
