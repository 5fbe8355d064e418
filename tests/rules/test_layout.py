# rules-test: cpython-only
"""Each game is one folder, shared_rules/<game>/, and its modules import without a cycle.

A helper (the Pong team rules, the refusal reasons, ...) imports the engine and its game's core
modules; the rules import a helper only inside the function that needs it, so a board that never
needs it never loads it. Any cycle, even through such a late import, is refused here: the helper
would then depend on a half-imported module.
"""

import ast
import pathlib

import shared_rules

RULES = pathlib.Path(shared_rules.__file__).resolve().parent


def imports(path):
    """(module names imported anywhere in the file, the ones imported at module level)."""
    tree = ast.parse(path.read_text())
    anywhere, top = set(), set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shared_rules"):
            assert node.level == 0, "%s: a relative import (the board's MicroPython has none)" % path
            for a in node.names:
                sub = node.module + "." + a.name
                names.append(sub if (RULES.parent / (sub.replace(".", "/") + ".py")).exists() else node.module)
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("shared_rules")]
        anywhere.update(names)
        if node in tree.body:
            top.update(names)
    return anywhere, top


def module_name(path):
    return ".".join(path.relative_to(RULES.parent).with_suffix("").parts)


def graph():
    return {module_name(p): imports(p)[0] - {"shared_rules"} for p in RULES.rglob("*.py")}


def test_every_game_is_a_folder_with_its_rules_and_an_empty_package():
    for name, modname in shared_rules.GAMES.items():
        folder = RULES / modname.split(".")[1]
        assert (folder / "rules.py").exists(), name
        assert shared_rules.load(name).NAME == name
        # A board pays for every name a package's __init__ defines.
        init = (folder / "__init__.py").read_text()
        assert all(ln.startswith("#") or not ln.strip() for ln in init.splitlines()), folder
    assert sorted(p.name for p in RULES.glob("*.py")) == ["__init__.py", "engine.py", "playout_main.py"]


def test_no_import_cycle_even_through_late_imports():
    g = graph()

    def visit(mod, path):
        for nxt in sorted(g.get(mod, ())):
            assert nxt not in path, "import cycle: " + " -> ".join(path + [nxt])
            visit(nxt, path + [nxt])

    for mod in sorted(g):
        visit(mod, [mod])


def test_medieval_pong_helpers_are_loaded_late_and_import_only_its_core():
    _, top = imports(RULES / "medieval_pong" / "rules.py")
    assert top == {"shared_rules.engine", "shared_rules.medieval_pong.core"}
    for helper in ("alt", "team", "padlocks", "reasons"):
        anywhere, _ = imports(RULES / "medieval_pong" / (helper + ".py"))
        assert anywhere <= {"shared_rules.engine", "shared_rules.medieval_pong.core"}, (helper, anywhere)
