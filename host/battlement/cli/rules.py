"""`battlement games`, `battlement playout`, `battlement replay`: the rules of every registered game.

Generic over shared_rules.GAMES; see docs/rules/engine.md for the contract.
"""

import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys

from battlement.errors import UserError
from battlement.table.maps import required_objects
from battlement.table.session import shown_path
from shared_rules import GAMES, engine, load, playout_main

ROOT = pathlib.Path(playout_main.__file__).resolve().parent.parent


def _game(name):
    if name not in GAMES:
        raise UserError("unknown game %r (known: %s)" % (name, ", ".join(sorted(GAMES))))
    try:
        return load(name)
    except ImportError as e:
        raise UserError("game %r is registered but its rules cannot be loaded: %s" % (name, e)) from None


def parse_value(game, key, text):
    """An option value typed on the command line, read with the type its default or choices have."""
    if key not in game.OPTIONS:
        raise UserError(
            "unknown option %r for %s (known: %s)" % (key, game.NAME, ", ".join(sorted(game.OPTIONS)) or "none")
        )
    spec = game.OPTIONS[key]
    for choice in spec.get("choices") or ():
        if text == (json.dumps(choice) if not isinstance(choice, str) else choice):
            return choice
    default = spec["default"]
    try:
        if isinstance(default, str):
            val = text
        else:
            val = json.loads(text)
    except ValueError:
        raise UserError("option %s=%s: expected a value like %s" % (key, text, json.dumps(default))) from None
    if spec.get("choices") is not None and val not in spec["choices"]:
        raise UserError(
            "option %s=%s is not one of %s" % (key, text, ", ".join(_show(c) for c in spec["choices"]))
        )
    return val


def _show(v):
    return v if isinstance(v, str) else json.dumps(v)


def chosen_options(game, pairs):
    """--option KEY=VALUE pairs -> {key: value}, each checked as `battlement games` lists it."""
    out = {}
    for pair in pairs or ():
        if "=" not in pair:
            raise UserError("--option %r: expected KEY=VALUE, e.g. --option %s" % (pair, _example(game)))
        key, text = pair.split("=", 1)
        out[key.strip()] = parse_value(game, key.strip(), text.strip())
    return out


def complete(game, options):
    """Every option of the game, the ones not given at their default; a combination the rules refuse is
    one line."""
    try:
        return engine.complete_options(game, options)
    except engine.Illegal as e:
        raise UserError(str(e)) from None


def parse_options(game, pairs):
    return complete(game, chosen_options(game, pairs))


def table_options(maps, pairs):
    """`battlement run --option`: the table maps as if each one's [options] also said KEY=VALUE (so the game
    the bridge starts, and a new game, play with them), and {table: the options given}. Checked before
    anything starts: a key or value its game does not take, a combination the rules refuse, and objects
    the options need that the table has no sensor for."""
    if not pairs:
        return maps, {}
    out, given = [], {}
    for m in maps:
        game = _game(m.game)
        given[m.table] = chosen = chosen_options(game, pairs)
        options = dict(m.options, **chosen)
        complete(game, options)
        missing = [o for o in required_objects(m.game, options) if o not in m.objects] if m.objects else []
        if missing:
            raise UserError("--option %s: table %s has no sensor for %d object(s) these options need (%s%s); its map "
                            "%s is built for %s" % (" ".join(pairs), m.table, len(missing), ", ".join(missing[:4]),
                                                    ", ..." if len(missing) > 4 else "", shown_path(m.path), m.title))
        out.append(dataclasses.replace(m, options=options))
    return out, given


def options_said(sessions, given):
    """One line per table given --option: the options its game plays with, or, when it resumed a game that
    keeps others, that they wait for the next new game."""
    lines = []
    for table, chosen in sorted(given.items()):
        now = sessions[table].match.options
        words = " ".join("%s=%s" % (k, _show(v)) for k, v in chosen.items())
        kept = " ".join("%s=%s" % (k, _show(now.get(k))) for k in chosen if now.get(k) != chosen[k])
        if any(k not in now for k in chosen):  # a simulated table that was switched to another game
            lines.append("table %s plays %s now: %s not applied" % (table, sessions[table].tmap.game, words))
        elif kept:
            lines.append("table %s resumed its game, which keeps %s; %s applies from the next new game"
                         % (table, kept, words))
        else:
            lines.append(words + ("" if len(sessions) == 1 else " (table %s)" % table))
    return lines


def _example(game):
    for key in sorted(game.OPTIONS):
        return "%s=%s" % (key, _show(game.OPTIONS[key]["default"]))
    return "KEY=VALUE"


# ---------------------------------------------------------------- games


def describe(name):
    """A registered game as plain data (name, title, options, sensed inputs), or why it cannot load."""
    try:
        game = load(name)
    except ImportError as e:
        return {"name": name, "error": "rules not available: %s" % e}
    opts = {}
    for key in sorted(game.OPTIONS):
        spec = game.OPTIONS[key]
        opts[key] = {"default": spec["default"], "choices": spec.get("choices"), "help": spec.get("help", "")}
    return {
        "name": name, "title": game.TITLE, "options": opts, "sensed": sorted(game.SENSED),
        "max_steps": engine.max_steps(game),
    }


def cmd_games(args):
    games = [describe(n) for n in sorted(GAMES)]
    if args.json:
        print(json.dumps(games, indent=2, sort_keys=True))
        return 0
    for g in games:
        if "error" in g:
            print("%s: %s" % (g["name"], g["error"]))
            continue
        print("%s - %s (sensed: %s)" % (g["name"], g["title"], ", ".join(g["sensed"]) or "none"))
        for key, spec in g["options"].items():
            choices = " | ".join(_show(c) for c in spec["choices"]) if spec["choices"] else "any"
            print("    --option %s=%s   [%s]  %s" % (key, _show(spec["default"]), choices, spec["help"]))
    return 0


# ---------------------------------------------------------------- playout


def micropython_binary():
    here = pathlib.Path(sys.executable).parent / "micropython"
    found = str(here) if here.exists() else shutil.which("micropython")
    if not found:
        raise UserError("--interpreter micropython: no `micropython` command found (run `make setup`)")
    return found


def playout_micropython(name, options, games, seed, heapsize=None):
    cmd = [micropython_binary()]
    if heapsize:
        cmd += ["-X", "heapsize=%s" % heapsize]
    cmd += [str(ROOT / "shared_rules" / "playout_main.py"), name, json.dumps(options), str(games), str(seed)]
    env = dict(os.environ, MICROPYPATH="%s:.frozen" % ROOT)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    lines = proc.stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1])
    except (IndexError, ValueError):
        out = None
    if proc.returncode != 0 or out is None or "error" in out:
        why = out["error"] if out and "error" in out else (proc.stdout + proc.stderr).strip()[-800:]
        raise UserError("playout of %s under MicroPython failed: %s" % (name, why))
    out["seconds"] = round(out["seconds"], 4)
    return out


def cmd_playout(args):
    game = _game(args.game)
    options = parse_options(game, args.option)
    if args.games < 1:
        raise UserError("--games must be at least 1, got %d" % args.games)
    if args.interpreter == "micropython":
        out = playout_micropython(args.game, options, args.games, args.seed)
    else:
        try:
            out = playout_main.run(args.game, options, args.games, args.seed)
        except engine.Illegal as e:
            raise UserError(str(e)) from None
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return 0
    rate = out["games"] / out["seconds"] if out["seconds"] else float("inf")
    print("%s: %d games, %d finished, %d steps, %.3f s (%.0f games/s, %s)" % (
        out["game"], out["games"], out["finished"], out["steps"], out["seconds"], rate, out["interpreter"]))
    for who in sorted(out["winners"]):
        print("    %-12s %d" % (who, out["winners"][who]))
    return 0


# ---------------------------------------------------------------- replay


def read_script(path):
    """(options, seed, [(line number, input)]) from a JSON Lines script; errors name file:line."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UserError("cannot read script %s: %s" % (path, e.strerror or e)) from None
    options, seed, inputs = {}, 0, []
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        try:
            obj = json.loads(s)
        except ValueError as e:
            raise UserError("%s:%d: not valid JSON (%s)" % (path, no, e.msg)) from None
        if not isinstance(obj, dict):
            raise UserError("%s:%d: expected a JSON object, got %s" % (path, no, type(obj).__name__))
        if "t" not in obj:
            if inputs or not ("options" in obj or "seed" in obj):
                raise UserError("%s:%d: an input needs a \"t\" field (its type)" % (path, no))
            options = obj.get("options") or {}
            seed = obj.get("seed", 0)
            if not isinstance(options, dict) or not isinstance(seed, int):
                raise UserError("%s:%d: setup line must look like {\"options\": {...}, \"seed\": 7}" % (path, no))
            continue
        inputs.append((no, obj))
    return options, seed, inputs


def replay(game, path):
    """The Match after replaying the script at path."""
    options, seed, inputs = read_script(path)
    try:
        m = engine.Match(game, options, seed)
    except engine.Illegal as e:
        raise UserError("%s: %s" % (path, e)) from None
    for no, inp in inputs:
        if m.over:
            raise UserError("%s:%d: the game is already over (won by %s)" % (path, no, m.state["winner"]))
        try:
            m.apply(inp)
        except engine.Illegal as e:
            raise UserError("%s:%d: illegal input %s: %s" % (path, no, json.dumps(inp), e)) from None
    return m


def cmd_replay(args):
    game = _game(args.game)
    m = replay(game, args.script)
    view = m.view(None)
    if args.json:
        if args.viewer:
            view = m.view(args.viewer)  # that side's secrets too (a side's view has no public log)
            view["log"] = list(m.announcements)
        print(json.dumps(view, sort_keys=True))
        return 0
    for line in view["log"]:
        print(line)
    if view["over"]:
        print("Game over: %s." % ("winner " + str(view["winner"]) if view["winner"] is not None else "a draw"))
    else:
        print("Game not over; awaiting %s." % ", ".join(str(a) for a in view["awaiting"]))
    return 0


# ---------------------------------------------------------------- registration


def register(sub):
    names = ", ".join(sorted(GAMES))
    p = sub.add_parser(
        "games", help="list the games and their options",
        description="List every game the rules engine knows, with its options (--option KEY=VALUE) and sensed inputs.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser(
        "playout", help="play random games to check and time the rules",
        description="Play N games choosing uniformly at random among the legal inputs, up to the game's "
        "step cap; print who won. The same seed gives the same result.",
        epilog="Example: battlement playout medieval-pong --games 100 --seed 1 --option tactical=true",
    )
    p.add_argument("game", help="one of: " + names)
    p.add_argument("--option", action="append", metavar="KEY=VALUE", help="a game option (see `battlement games`)")
    p.add_argument("--games", type=int, default=100, help="how many games (default 100)")
    p.add_argument("--seed", type=int, default=1, help="seed; game i uses seed+i (default 1)")
    p.add_argument("--interpreter", choices=("cpython", "micropython"), default="cpython",
                   help="run the rules here (cpython) or under the micropython command, as on a board")
    p.add_argument("--json", action="store_true", help="one JSON object: game, games, finished, winners, steps, seconds")
    p.set_defaults(func=cmd_playout)

    p = sub.add_parser(
        "replay", help="replay a script of inputs and show the final state",
        description="Replay a JSON Lines script of inputs (first line may be {\"options\": {...}, \"seed\": 7}; "
        "blank lines and # comments are skipped) and print the announcements and the result. "
        "An illegal input stops with FILE:LINE and the reason (exit 2).",
        epilog="Example: battlement replay medieval-pong docs/examples/medieval-pong.jsonl",
    )
    p.add_argument("game", help="one of: " + names)
    p.add_argument("script", help="JSON Lines file of inputs")
    p.add_argument("--json", action="store_true", help="print the final public view as JSON")
    p.add_argument("--viewer", metavar="SIDE",
                   help="with --json: the view of this side or player (adds its secrets) instead of the public one")
    p.set_defaults(func=cmd_replay)
