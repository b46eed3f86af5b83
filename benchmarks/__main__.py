"""Run the benchmark suites: ``python -m benchmarks [--quick] [--only SUITE ...] [--out DIR]``.

- ``lambdas``:   lambda pass against LightGBM's, an epoch against a boosting iteration, and
                 the default fit against ``LGBMRanker()`` on MSLR-shaped data
- ``metrics``:   NDCG@10 / MAP over a million documents against ranx, pytrec_eval, sklearn
- ``quality``:   NDCG@1/3/5/10 and MAP of the three rankers, bare, bagged and tuned, against
                 LGBMRanker and XGBRanker, on the Yahoo LTR sample and MSLR-shaped data
- ``scale``:     an epoch over 1.2 M rows, one 200,000-document query, memory of ``fit``
- ``coldstart``: Numba compilation paid by a new user's first process
- ``inputs``:    default fits on the CSR ``load_letor`` returns against the same rows dense,
                 and where CSR stops being worth keeping sparse
- ``dask``:      fits on a 2-worker LocalCluster against in memory: wall time, shuffle share,
                 quality, a fixed budget of epochs
- ``selection``: where users start: default fits on modest data, a grid search and a bag,
                 against LightGBM, and a new user's first process
- ``clicks``:    rankers trained on simulated click logs, raw and position-debiased, against
                 LightGBM's and XGBoost's debiased LambdaMART, scored on true labels
- ``busy``:      default fits while another process keeps a core busy, BLAS's threads as
                 the package leaves them against one BLAS thread
- ``missing``:   default fits on data with 10-60 % of values missing, at random and not,
                 against LightGBM's native missing values
- ``dask_defaults``: default Dask fits in 2, 4 and 8 partitions against the in-memory fit
                 (small data gathered on one worker, large data data-parallel)

Each suite writes NAME.json, NAME.md and NAME.png into the output folder (default
``benchmarks/results``, or ``benchmarks/results/quick`` with ``--quick``) through the
shared harness (``benchmarks/_harness.py``). Peers that are not installed are skipped with a
note; ``pip install ".[bench]"`` installs them all. ``--quick`` (tiny sizes, a smoke test) runs
in CI through ``tests/test_benchmarks.py``; the full run of the twelve suites takes about 60
minutes on 2 cores (the sum of the wall times the result files record), the longest being
the quality suite (14 minutes) and the clicks suite (13).
"""

import argparse
import importlib
import sys

from ._harness import ROOT, Harness

SUITES = ("lambdas", "metrics", "quality", "scale", "coldstart", "inputs", "dask", "selection", "clicks", "busy",
          "missing", "dask_defaults")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--only", nargs="+", choices=SUITES, default=SUITES, metavar="SUITE")
    parser.add_argument("--out", default=None, help="output folder")
    args = parser.parse_args(argv)
    # The default folder is the repository's, wherever the command runs from.
    out_dir = args.out or str(ROOT / "benchmarks" / "results" / ("quick" if args.quick else ""))
    walls = {}
    for name in args.only:
        print(f"\n===== {name} =====", flush=True)
        suite = importlib.import_module(f"benchmarks.bench_{name}")
        h = Harness(name, quick=args.quick, out_dir=out_dir, doc=suite.__doc__)
        suite.run(h)
        h.write()
        walls[name] = h.record["wall_s"]
    print("\n===== done =====")
    for name, seconds in walls.items():
        print(f"{name:<10} {seconds:7.1f} s")
    print(f"results in {out_dir}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
