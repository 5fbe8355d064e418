"""`make bench` (tests/bench/run.py) must fail when a benchmark fails, and still run the others."""
import importlib.util
import pathlib
import subprocess
import sys

RUN = pathlib.Path(__file__).resolve().parent / "bench" / "run.py"


def test_a_failing_bench_fails_the_run_and_the_others_still_run(tmp_path):
    (tmp_path / "bench_alpha.py").write_text("def main():\n    raise RuntimeError('the broker went away')\n")
    (tmp_path / "bench_beta.py").write_text("def main():\n    print('beta: 10 events/s (baseline 20): 0.50')\n")
    p = subprocess.run([sys.executable, str(RUN), "--dir", str(tmp_path)], check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "beta: 10 events/s" in p.stdout  # the one after the failure ran
    assert "alpha failed: RuntimeError: the broker went away" in p.stdout + p.stderr
    assert "Traceback" in p.stderr  # the operator gets the whole story of the failure, on stderr


def test_a_bench_that_exits_nonzero_fails_the_run(tmp_path):
    (tmp_path / "bench_gamma.py").write_text("import sys\ndef main():\n    sys.exit('gamma: the subscriber died')\n")
    p = subprocess.run([sys.executable, str(RUN), "--dir", str(tmp_path)], check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert "gamma failed: gamma: the subscriber died" in p.stdout + p.stderr


def test_every_bench_passes_its_checks_when_all_is_well(tmp_path):
    spec = importlib.util.spec_from_file_location("benchrun", RUN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "bench_delta.py").write_text("def main():\n    print('delta ok')\n")
    assert mod.main(["--dir", str(tmp_path)]) == 0
