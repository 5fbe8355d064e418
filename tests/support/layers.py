"""The host's layers, read from its imports: the rule the tests hold it to, and the picture in docs/bridge.md.

    python tests/support/layers.py            # print the picture
    python tests/support/layers.py --write    # put it into docs/bridge.md (`make docs`)

A module may import the battlement modules of its own folder and of the layers below its own, never
one above and never a neighbour on the same layer: the neighbours (boards, sound, ops, venue) each stand
on link and table alone, so each can change, or go, without the others noticing. `battlement` itself
(its version) and `battlement.errors` are the ground every layer stands on.
"""

from __future__ import annotations

import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOST = ROOT / "host" / "battlement"
DOC = ROOT / "docs" / "bridge.md"

# Lowest first; a tuple is one layer of neighbours. Each folder's job, as the picture says it.
LAYERS: list[tuple[str, ...]] = [
    ("link",),
    ("table",),
    ("boards", "sound", "ops", "venue"),
    ("sim",),
    ("web",),
    ("bridge",),
    ("cli",),
]
JOBS = {
    "link": "a board's bytes to messages and back, exactly once, signed",
    "table": "one table's game: sensors to inputs, journal, rules, effects; the adapter games fill in",
    "boards": "pin maps, wiring, firmware builds, flashing, board health",
    "sound": "speech and tones, one at a time",
    "ops": "metrics, logs, supervision, Home Assistant, the broker, the service",
    "venue": "a venue night: tournament formats, players, the hub over many tables",
    "sim": "simulated boards: the protocol in Python, the firmware under MicroPython",
    "web": "the pages, each viewer's projection, onboarding",
    "bridge": "the Bridge: wires the stages together for the tables it serves",
    "cli": "the battlement command, a module a command",
}
GROUND = ("battlement", "battlement.errors")

# The way one sensed event goes, stage by stage: (module, what it does there). Each module must exist.
EVENT_PATH = [
    ("link.transport", "a board's line arrives (serial or MQTT), is checked (CRC, MAC) and acknowledged"),
    ("link.wire", "the frame is decoded"),
    ("link.inbox", "its seq is taken once, in order"),
    ("bridge", "the pump hands it to its table's session, in batches"),
    ("table.router", "the sensor becomes a game object's input"),
    ("table.journal", "the input is journalled before it is applied"),
    ("table.session", "the rules (shared_rules) apply it and return effects"),
    ("table.effects", "the public view and cues become LED commands"),
    ("sound.speaker", "the calls are spoken"),
    ("web.app", "every viewer's page gets its own projection"),
]


def module_name(path: pathlib.Path, host: pathlib.Path = HOST) -> str:
    parts = path.relative_to(host.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(mod: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_package else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(host: pathlib.Path = HOST) -> dict[str, set[str]]:
    """module -> the battlement modules it imports (anywhere in it: top, functions, TYPE_CHECKING)."""
    known = {module_name(p, host) for p in host.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(host.rglob("*.py")):
        mod = module_name(path, host)
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("battlement"))
            elif isinstance(node, ast.ImportFrom):
                target = _absolute(mod, path.name == "__init__.py", node)
                if not target.startswith("battlement"):
                    continue
                for a in node.names:  # `from battlement.table import maps` imports the module battlement.table.maps
                    sub = target + "." + a.name
                    deps.add(sub if sub in known else target)
        deps.discard(mod)
        graph[mod] = deps
    return graph


def folder(mod: str) -> str:
    """The layer folder a module belongs to ('' for the ground)."""
    if mod in GROUND:
        return ""
    return mod.split(".")[1]


def rank(name: str) -> int:
    for i, layer in enumerate(LAYERS):
        if name in layer:
            return i
    raise KeyError(name)


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import that goes up a layer, sideways to a neighbour, or out of the known layers, in words."""
    out = []
    for mod, deps in sorted(graph.items()):
        here = folder(mod)
        if mod not in GROUND and here not in JOBS:
            out.append("%s: a module outside the layers (%s); put it in one of them" % (mod, ", ".join(JOBS)))
            continue
        for dep in sorted(deps):
            there = folder(dep)
            if there == "" or there == here:
                continue
            if here == "":
                out.append("%s imports %s: the ground imports no layer" % (mod, dep))
            elif there not in JOBS:
                out.append("%s imports %s, which is in no layer" % (mod, dep))
            elif rank(there) > rank(here):
                out.append("%s imports %s: %s is above %s" % (mod, dep, there, here))
            elif rank(there) == rank(here):
                out.append("%s imports %s: %s and %s are neighbours on one layer" % (mod, dep, here, there))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles between modules (each as the list of its modules), by Tarjan's strongly connected sets."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            # a package's __init__ re-exporting its own modules is one unit, not a cycle
            if len(comp) > 1 and len({c for c in comp if not any(o.startswith(c + ".") for o in comp)}) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def folder_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    edges = set()
    for mod, deps in graph.items():
        for dep in deps:
            a, b = folder(mod), folder(dep)
            if a and b and a != b:
                edges.add((a, b))
    return edges


def reduced(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The arrows worth drawing: a -> c is left out when a reaches c through another of its arrows."""
    succ: dict[str, set[str]] = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for n in succ.get(todo.pop(), ()):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen

    return {(a, c) for a, c in edges if not any(c in reach(b) for b in succ[a] if b != c)}


def picture(graph: dict[str, set[str]] | None = None) -> str:
    """The layers and the way of one event, as two Mermaid drawings (GitHub draws them; they read as text too)."""
    graph = imports() if graph is None else graph
    mods: dict[str, list[str]] = {}
    for mod in graph:
        f = folder(mod)
        if f and mod.count(".") >= 2 and f != "bridge":
            leaf = mod.split(".", 2)[2].split(".")[0]
            if not leaf.startswith("_"):
                mods.setdefault(f, []).append(leaf)
    # ELK lays out the layers with straight arrows; a viewer without it falls back to the default layout
    lines = ["```mermaid", '%%{init: {"flowchart": {"defaultRenderer": "elk"}} }%%', "flowchart BT"]
    for layer in LAYERS:
        if len(layer) > 1:
            lines.append('  subgraph %s["neighbours: none imports another"]' % "_".join(layer))
        for name in layer:
            inner = sorted(set(mods.get(name, [])))
            label = "<b>%s/</b><br/>%s" % (name, JOBS[name]) if name != "bridge" else "<b>bridge.py</b><br/>%s" % JOBS[name]
            if inner:
                label += "<br/><i>%s</i>" % " · ".join(inner)
            lines.append('  %s%s["%s"]' % ("  " if len(layer) > 1 else "", name, label))
        if len(layer) > 1:
            lines.append("  end")
    for a, b in sorted(reduced(folder_edges(graph))):
        lines.append("  %s --> %s" % (a, b))
    lines.append("```")
    lines.append("")
    lines.append("```mermaid")
    lines.append("flowchart TD")
    lines.append('  board(["a board: a ball breaks a beam"])')
    prev = "board"
    for i, (mod, what) in enumerate(EVENT_PATH, 1):
        node = "s%d" % i
        lines.append('  %s["%d. <b>%s</b>: %s"]' % (node, i, mod, what))
        lines.append("  %s --> %s" % (prev, node))
        prev = node
    lines.append("```")
    return "\n".join(lines)


BEGIN = "<!-- layers: drawn by tests/support/layers.py (make docs); edit that, not this -->"
END = "<!-- end of layers -->"


def in_doc(text: str) -> str | None:
    m = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), text, re.DOTALL)
    return m.group(1) if m else None


def write(doc: pathlib.Path = DOC) -> bool:
    text = doc.read_text()
    new = picture()
    if in_doc(text) == new:
        return False
    assert in_doc(text) is not None, "%s has no %s" % (doc, BEGIN)
    doc.write_text(re.sub(re.escape(BEGIN) + r"\n.*?\n" + re.escape(END),
                          lambda _: BEGIN + "\n" + new + "\n" + END, text, flags=re.DOTALL))
    return True


if __name__ == "__main__":
    if "--write" in sys.argv:
        print("docs/bridge.md: the layers %s" % ("redrawn" if write() else "already match the code"))
    else:
        print(picture())
        bad = violations(imports())
        for line in bad:
            print("layer rule: " + line, file=sys.stderr)
        sys.exit(1 if bad else 0)
