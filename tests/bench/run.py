"""Run every benchmark module (tests/bench/bench_*.py), or the ones named on the command line.

Each module has main() that prints its figures, each beside a baseline measured in the same run.
A benchmark that raises or exits non-zero is reported and the others still run; the run then
exits 1, so `make bench` never looks green with a figure missing.
"""
import argparse
import importlib.util
import pathlib
import sys
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent


def _run_one(path: pathlib.Path) -> str | None:
    """Run one bench module's main(); None if it went through, else what went wrong in one line."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        mod.main()
    except SystemExit as e:  # sys.exit("why") in a bench, or a failed check's exit code
        if e.code in (None, 0):
            return None
        return str(e.code) if isinstance(e.code, str) else "exit %s" % e.code
    except Exception as e:  # noqa: BLE001 - one bench's failure must not hide the others' figures
        traceback.print_exc()
        return "%s: %s" % (type(e).__name__, e)
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Run the benchmarks; each figure is printed beside its baseline.")
    ap.add_argument("names", nargs="*", help="benchmarks to run (e.g. mqtt wire); default: all")
    ap.add_argument("--dir", default=str(HERE), help=argparse.SUPPRESS)  # the tests' own bench folder
    args = ap.parse_args(argv)
    here = pathlib.Path(args.dir)
    names = args.names or sorted(p.stem for p in here.glob("bench_*.py"))
    failed = []
    for name in names:
        if not name.startswith("bench_"):
            name = "bench_" + name
        path = here / (name + ".py")
        if not path.exists():
            failed.append("%s: no such benchmark (%s)" % (name[6:], ", ".join(sorted(p.stem[6:] for p in here.glob("bench_*.py")))))
            continue
        print("== %s ==" % name[6:], flush=True)
        t0 = time.perf_counter()
        why = _run_one(path)
        print("   (%.1f s)" % (time.perf_counter() - t0), flush=True)
        if why:
            print("   %s failed: %s" % (name[6:], why), flush=True)
            failed.append("%s failed: %s" % (name[6:], why))
    if failed:
        print("\n%d benchmark%s failed:\n  %s" % (len(failed), "" if len(failed) == 1 else "s", "\n  ".join(failed)), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
