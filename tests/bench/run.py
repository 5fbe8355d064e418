"""Run every benchmark module (tests/bench/bench_*.py), or the ones named on the command line.

Each module has main() that prints its figures, each beside a baseline measured in the same run.
"""
import importlib.util
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def main(argv):
    names = argv or sorted(p.stem for p in HERE.glob("bench_*.py"))
    for name in names:
        if not name.startswith("bench_"):
            name = "bench_" + name
        spec = importlib.util.spec_from_file_location(name, HERE / (name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        print("== %s ==" % name[6:], flush=True)
        t0 = time.perf_counter()
        mod.main()
        print("   (%.1f s)" % (time.perf_counter() - t0), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
