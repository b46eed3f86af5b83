"""Run the benchmark suites: ``python -m benchmarks [--quick] [--only SUITE ...] [--out DIR]``.

Suites (each also runs alone as ``python benchmarks/bench_<suite>.py``):

- ``lambdas``:   lambda-kernel throughput against LightGBM and NumPy
- ``metrics``:   NDCG@10 / MAP throughput against ranx, pytrec_eval, sklearn
- ``quality``:   NDCG / MAP on the Yahoo LTR sample against LGBMRanker, XGBRanker
- ``scale``:     MSLR-WEB30K-shaped data and one 200,000-document query
- ``coldstart``: import + first fit in a new process, cold and warm Numba cache

Each writes NAME.json, NAME.md and plots into the output folder (default
``benchmarks/results``, or ``benchmarks/results/quick`` with ``--quick``). Peers
that are not installed are skipped with a note; ``pip install ".[bench]"``
installs them all. The full run is not part of CI; ``--quick`` is, through
``tests/test_benchmarks.py``.
"""

import argparse
import importlib
import sys
import time

SUITES = ("lambdas", "metrics", "quality", "scale", "coldstart")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test in well under 60 s")
    parser.add_argument("--only", nargs="+", choices=SUITES, default=SUITES, metavar="SUITE")
    parser.add_argument("--out", default=None, help="output folder")
    args = parser.parse_args(argv)
    out_dir = args.out or ("benchmarks/results/quick" if args.quick else "benchmarks/results")

    timings = {}
    for name in args.only:
        print(f"\n===== {name} =====", flush=True)
        suite = importlib.import_module(f"benchmarks.bench_{name}")
        started = time.perf_counter()
        suite.run(quick=args.quick, out_dir=out_dir)
        timings[name] = time.perf_counter() - started
    print("\n===== done =====")
    for name, seconds in timings.items():
        print(f"{name:<10} {seconds:7.1f} s")
    print(f"results in {out_dir}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
