"""Mutation score of the rules: do the rules tests notice when shared_rules/ changes?

mutmut (configured in pyproject.toml, [tool.mutmut]) makes one mutant per small change of the
rules code (a number, a comparison, a word of an announcement...) and runs the rules tests that
reach it; a mutant the tests let pass "survived". Every mutant takes too long on a small machine
(about 16,000), so this runs a seeded random sample of them and gives the score with its margin:

    .venv/bin/python tests/rules/mutation.py [--sample 500] [--seed 7] [--jobs 2] [--reuse]

It prints each survivor's change and the score (killed / sampled mutants that are not
equivalent), and exits 1 under 95%. `make soak` runs it. Equivalent mutants (a change no player
could ever notice) are listed in mutation_equivalents.py with the reason. mutmut leaves its
work in mutants/ (`.venv/bin/mutmut show NAME` prints one mutant's change).
"""

import argparse
import math
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time

from mutation_equivalents import EQUIVALENT  # this folder: first on sys.path when run as a script

ROOT = pathlib.Path(__file__).resolve().parents[2]
THRESHOLD = 0.95
KILLED = ("killed", "timeout", "segfault")  # the tests stopped the mutant one way or another
METHOD = "x\u01c1"  # how mutmut starts a method's mutant name (x, then its class-name separator)
RECHECK_TIMEOUT = 900  # seconds for one survivor against all its game's tests
SPINNING = ("Generating mutants", "Running stats", "Running clean tests", "Listing all tests")  # mutmut's spinner


def all_mutants():
    """{mutant name: source path} of every mutant mutmut makes of the configured files."""
    from mutmut.configuration import config
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.utils.file_utils import walk_mutatable_files
    from mutmut.utils.format_utils import get_mutant_name

    out = {}
    for path in sorted(walk_mutatable_files()):
        assert config().should_mutate(path)
        mutated = mutate_file_contents(str(path), path.read_text())
        for name in mutated.mutant_names:
            out[get_mutant_name(path, name)] = path
    return out


def results(names):
    """{mutant name: mutmut's status} read from its files in mutants/."""
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code

    out = {}
    for path in sorted({p for p in names.values()}):
        data = SourceFileMutationData(path=path)
        data.load()
        for name, code in data.exit_code_by_key.items():
            if name in names:
                out[name] = status_by_exit_code[code]
    return out


def change(name, path):
    """The lines a mutant changed, as ('-' lines, '+' lines, the line after them)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    diff = get_diff_for_mutant(name, path=path).splitlines()
    minus = [x[1:].strip() for x in diff if x.startswith("-") and not x.startswith("---")]
    plus = [x[1:].strip() for x in diff if x.startswith("+") and not x.startswith("+++")]
    after = ""
    changed = [i for i in range(len(diff)) if diff[i][:1] in "+-" and diff[i][:3] not in ("+++", "---")]
    if changed and changed[-1] + 1 < len(diff):
        after = diff[changed[-1] + 1].strip()
    return minus, plus, after


def game_tests(name):
    """The rules test files of the mutant's game (every selected one for the engine), as mutmut
    is configured to select them."""
    import fnmatch

    from mutmut.configuration import config

    parts = name.split(".")
    game = parts[1] if len(parts) > 3 else ""
    ignored = []
    for arg in config().pytest_add_cli_args_test_selection:
        if arg.startswith(("--ignore=", "--ignore-glob=")):
            ignored.append(arg.split("=", 1)[1])
    out = []
    for path in sorted((ROOT / "tests" / "rules").glob("test_%s*.py" % game)):
        rel = str(path.relative_to(ROOT))
        if not any(fnmatch.fnmatch(rel, pat) for pat in ignored):
            out.append(rel)
    return out


def killed_by_game_tests(name):
    """Run a survivor again against every rules test of its game.

    mutmut gives each mutant the tests that called its function while they ran, so code that runs
    only while a module is imported (Ringo's move tables) is given whichever test ran first."""
    env = dict(os.environ, MUTANT_UNDER_TEST=name)
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    try:
        proc = subprocess.run(cmd + game_tests(name), cwd=str(ROOT / "mutants"), env=env, check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=RECHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        return True  # a game that no longer ends is noticed
    return proc.returncode != 0


def function_of(name):
    """shared_rules.ringo.rules.x__on_cell__mutmut_12 -> shared_rules.ringo.rules._on_cell; a method's
    mutant (x<sep>Match<sep>apply__mutmut_3) -> shared_rules.engine.Match.apply"""
    module, _, mangled = name.rpartition(".")
    func = mangled.rsplit("__mutmut_", 1)[0]
    if func.startswith(METHOD):
        func = ".".join(func[len(METHOD):].split(METHOD[1:]))
    return module + "." + func.removeprefix("x_")


def equivalent_reason(name, plus, after=""):
    """Why the mutant is equivalent, or None. Keyed by function and mutated line, not by mutmut's
    number for the mutant, which shifts when the function changes; where the same line occurs twice
    in a function, by the line after it too ("<mutated line> // then: <next line>")."""
    key = " / ".join(plus)
    return EQUIVALENT.get((function_of(name), key)) or EQUIVALENT.get((function_of(name), key + " // then: " + after))


def margin(killed, n, population):
    """Half-width of the 95% interval of the score (normal approximation, finite population)."""
    if n == 0:
        return 0.0
    p = killed / n
    fpc = math.sqrt((population - n) / (population - 1)) if population > 1 else 0.0
    return 1.96 * math.sqrt(p * (1 - p) / n) * fpc


def run_mutmut(sample, jobs, log):
    """Run mutmut on the sampled mutants (None: all of them); its spinner output goes to log."""
    cmd = [str(pathlib.Path(sys.executable).parent / "mutmut"), "run", "--max-children", str(jobs)]
    with open(log, "w") as f:
        proc = subprocess.run(cmd + sorted(sample or ()), cwd=str(ROOT), stdout=f, stderr=subprocess.STDOUT,
                              check=False)
    if proc.returncode != 0:
        lines = log.read_text(errors="replace").replace("\r", "\n").splitlines()
        tail = [x for x in lines if x.strip() and not x.strip().endswith(SPINNING)][-40:]
        sys.exit("mutation: mutmut failed (exit %d); the end of %s:\n%s\n(the rules tests must pass on the unmutated"
                 " copy: run them there with `cd mutants && ../.venv/bin/pytest tests/rules`)"
                 % (proc.returncode, log, "\n".join(tail)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=500, help="mutants to run (0: every mutant)")
    ap.add_argument("--seed", type=int, default=7, help="which sample")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    ap.add_argument("--reuse", action="store_true", help="keep mutants/ and its cached test stats")
    args = ap.parse_args(argv)
    try:
        import mutmut  # noqa: F401
    except ImportError:
        sys.exit("mutation: mutmut is not installed in %s; `make setup` installs the dev extra" % sys.executable)

    os.chdir(ROOT)  # mutmut reads pyproject.toml and writes mutants/ in the current folder
    if not args.reuse:
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    population = all_mutants()
    names = sorted(population)
    n = args.sample if 0 < args.sample < len(names) else len(names)
    sample = random.Random(args.seed).sample(names, n)
    print("mutation: %d mutants of %s; running %d (seed %d) on %d jobs"
          % (len(names), ", ".join(sorted({str(p).split("/")[0] for p in population.values()})), n,
             args.seed, args.jobs), flush=True)
    t0 = time.monotonic()
    (ROOT / "mutants").mkdir(exist_ok=True)
    # Every mutant: no names (mutmut matches each name given against every mutant).
    run_mutmut(sample if n < len(names) else None, args.jobs, ROOT / "mutants" / "mutation.log")

    status = results({k: population[k] for k in sample})
    killed, equivalent, survived = [], [], []
    rechecked = 0
    for name in sorted(sample):
        st = status.get(name, "not checked")
        if st in KILLED:
            killed.append(name)
            continue
        minus, plus, after = change(name, population[name])
        why = equivalent_reason(name, plus, after)
        if why:
            equivalent.append((name, why))
        elif killed_by_game_tests(name):
            killed.append(name)
            rechecked += 1
        else:
            survived.append((name, st, minus, plus))
    for name, st, minus, plus in survived:
        print("SURVIVED (%s) %s\n    - %s\n    + %s" % (st, name, "\n      ".join(minus), "\n      ".join(plus)))
    for name, why in equivalent:
        print("equivalent %s: %s" % (name, why))
    counted = n - len(equivalent)
    score = len(killed) / counted if counted else 1.0
    print("mutation: generated %d, sampled %d, killed %d (%d of them on the recheck against all their game's"
          " tests), equivalent %d, survived %d (%.0f min)"
          % (len(names), n, len(killed), rechecked, len(equivalent), len(survived), (time.monotonic() - t0) / 60))
    print("mutation: score %.1f%% +- %.1f%% (95%% interval) of the non-equivalent mutants killed; needs %.0f%%"
          % (100 * score, 100 * margin(len(killed), counted, len(names)), 100 * THRESHOLD))
    return 0 if score >= THRESHOLD else 1


if __name__ == "__main__":
    sys.exit(main())
