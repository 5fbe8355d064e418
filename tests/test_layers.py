"""The host's folders are its layers, and the imports keep to them (tests/support/layers.py says the rule)."""

import ast
import pathlib

from support import layers

ROOT = pathlib.Path(__file__).resolve().parents[1]
GAMES = ("battleground", "medieval_madness", "medieval_pong", "plingpong", "ringo")


def test_no_module_imports_up_a_layer_or_across_to_a_neighbour():
    assert layers.violations(layers.imports()) == []


def test_no_two_modules_import_each_other():
    assert layers.cycles(layers.imports()) == []


def test_the_rule_refuses_an_import_up_a_layer_and_one_across():
    graph = layers.imports()
    graph["battlement.table.session"] = graph["battlement.table.session"] | {"battlement.web.app"}
    graph["battlement.boards.health"] = graph["battlement.boards.health"] | {"battlement.sound.speaker"}
    graph["battlement.link.wire"] = graph["battlement.link.wire"] | {"battlement.link.inbox"}  # its own folder: fine
    assert layers.violations(graph) == [
        "battlement.boards.health imports battlement.sound.speaker: boards and sound are neighbours on one layer",
        "battlement.table.session imports battlement.web.app: web is above table",
    ]


def test_the_rule_reads_imports_inside_functions_and_relative_ones(tmp_path):
    pkg = tmp_path / "battlement"
    (pkg / "link").mkdir(parents=True)
    (pkg / "table").mkdir()
    for init in (pkg, pkg / "link", pkg / "table"):
        (init / "__init__.py").write_text("")
    (pkg / "link" / "wire.py").write_text("def f():\n    from ..table import maps\n")
    (pkg / "table" / "maps.py").write_text("from . import router\n")
    (pkg / "table" / "router.py").write_text("")
    graph = layers.imports(pkg)
    assert graph["battlement.link.wire"] == {"battlement.table.maps"}
    assert graph["battlement.table.maps"] == {"battlement.table.router"}
    assert layers.violations(graph) == ["battlement.link.wire imports battlement.table.maps: table is above link"]


def test_a_cycle_between_two_modules_is_found():
    graph = {"battlement.boards.hardware": {"battlement.boards.wiring"},
             "battlement.boards.wiring": {"battlement.boards.hardware"}}
    assert layers.cycles(graph) == [["battlement.boards.hardware", "battlement.boards.wiring"]]


def test_the_picture_in_the_docs_is_the_one_the_imports_draw():
    text = layers.DOC.read_text()
    assert layers.in_doc(text) == layers.picture(), "docs/bridge.md's layers are stale: run `make docs`"
    first, second = [i for i in range(len(text)) if text.startswith("\n## ", i)][:2]
    assert text[first:].startswith("\n## The layers") and first < text.index(layers.BEGIN) < second


def test_every_stage_of_an_event_is_a_module_of_the_host():
    known = set(layers.imports())
    for mod, _ in layers.EVENT_PATH:
        assert "battlement." + mod in known, mod


def test_the_root_holds_only_the_bridge_and_the_ground():
    assert sorted(p.name for p in (ROOT / "host" / "battlement").glob("*.py")) == [
        "__init__.py", "bridge.py", "errors.py"]


def test_every_host_file_is_under_500_lines_or_says_why():
    long = []
    for p in sorted((ROOT / "host" / "battlement").rglob("*.py")):
        lines = p.read_text().splitlines()
        if len(lines) >= 500 and "500 lines" not in "\n".join(lines[:12]):
            long.append("%s: %d lines" % (p.relative_to(ROOT), len(lines)))
    assert long == []


def test_the_games_see_only_the_adapter_contract_and_the_host_names_no_game():
    for game in GAMES:
        for p in (ROOT / "shared_rules" / game).glob("*.py"):
            for node in ast.walk(ast.parse(p.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("battlement"):
                    assert node.module in ("battlement.table.adapter", "battlement.errors"), (p, node.module)
    for p in (ROOT / "host" / "battlement").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                assert not any(name.startswith("shared_rules." + g) for g in GAMES), (p, name)


def test_every_host_folder_is_a_package_the_install_lists():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    host = ROOT / "host"
    found = {".".join(p.parent.relative_to(host).parts) for p in (host / "battlement").rglob("__init__.py")}
    assert found - listed == set(), "pyproject.toml's packages miss these: a wheel would leave them out"
    folders = {".".join(p.relative_to(host).parts) for p in (host / "battlement").rglob("*")
               if p.is_dir() and any(p.glob("*.py"))}
    assert folders - found == set(), "folders of modules without an __init__.py"
