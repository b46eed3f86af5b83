"""Tuning study: default hyperparameters of the rankers, chosen without the test set.

A study script, not a suite of ``python -m benchmarks``::

    python -m benchmarks.tune_defaults search [--estimator lambdarank|ranknet|both]
    python -m benchmarks.tune_defaults final [--lambdarank JSON] [--ranknet JSON] [--seeds 5]

Selection data: ``rank.train`` of the Yahoo! LTR sample only. ``GroupKFold(5, shuffle=True,
random_state=0)`` by query; in each fold ``make_pipeline(StandardScaler(), Ranker(**params,
random_state=seed))`` with seeds 0 and 1: 10 paired test-fold NDCG@10 scores per configuration
(gain 2^rel - 1, ties in input order). Robustness: every configuration is also fitted on
``make_ranking(300, random_state=0)`` and scored on ``make_ranking(300, random_state=1)``.

``search``: coordinate search from the current defaults (read from the estimators). On each
coordinate every value is tried with the others fixed; the point moves to the best one only if
its mean paired gain is > 0.002 and > 1 standard error, and its synthetic NDCG@10 is at most
0.01 below the current point's. Rounds repeat until one makes no move (at most 3). Every
evaluation is cached in ``OUT/tune_cache.json``, so runs resume. ``final`` is the only stage
that touches ``rank.test``: the current defaults and the recommended changes over seeds, after
the choice (the peers are in the quality suite). One thread everywhere. The study behind the
current defaults (stages search, confirm, sizes, final) is in ``results/tune_defaults.md``.
"""

import argparse
import json
import os
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone

from . import bench_quality
from ._harness import Harness, threads

OUT = Path(__file__).resolve().parent / "results"
ESTIMATORS = {"lambdarank": "LambdaRankRanker", "ranknet": "RankNetRanker"}
MIN_GAIN, SYNTH_TOLERANCE, MAX_ROUNDS = 0.002, 0.01, 3
COORDINATES = {
    "hidden_layer_sizes": [{"hidden_layer_sizes": h} for h in ((), (32,), (64,))],
    "learning_rate_init x max_iter": [{"learning_rate_init": lr, "max_iter": mi}
                                      for lr in (1e-3, 3e-3, 1e-2) for mi in (50, 100, 200)],
    "alpha": [{"alpha": a} for a in (1e-4, 1e-3, 1e-2, 1e-1)],
    "batch_size": [{"batch_size": b} for b in (8, "auto")],
    "early_stopping": [{"early_stopping": e} for e in (False, True)],
    "sigma": [{"sigma": s} for s in (0.5, 1.0, 2.0)],
    "k": [{"k": k} for k in (None, 10, 30)],  # LambdaRank only
}


def defaults(estimator):
    import sklearn_ranknet

    params = getattr(sklearn_ranknet, ESTIMATORS[estimator])().get_params()
    return {k: v for k, v in params.items() if k not in ("random_state", "verbose", "n_jobs")}


def _key(estimator, params):
    return estimator + " " + json.dumps(params, sort_keys=True, default=list)


def fit_score(estimator, params, seed, train, test):
    from sklearn_ranknet.metrics import ndcg_score

    model = bench_quality.ours(ESTIMATORS[estimator], seed, **params)
    bench_quality.fit(model, *train)
    return ndcg_score(test[1], model.predict(test[0]), groups=test[2], k=10, ignore_ties=True)


class Evaluator:
    """10 paired CV scores on rank.train and the synthetic check, cached on disk."""

    def __init__(self, out_dir):
        from sklearn.model_selection import GroupKFold

        from sklearn_ranknet.datasets import make_ranking

        self.path = Path(out_dir) / "tune_cache.json"
        self.cache = json.loads(self.path.read_text()) if self.path.exists() else {}
        X, y, q = self.data = bench_quality.load_data()["train"]
        self.folds = list(GroupKFold(5, shuffle=True, random_state=0).split(X, y, groups=q))
        self.synth = [make_ranking(300, random_state=s) for s in (0, 1)]

    def __call__(self, estimator, params):
        key = _key(estimator, params)
        if key not in self.cache:
            cv = [fit_score(estimator, params, seed, *[[a[idx] for a in self.data] for idx in fold])
                  for fold in self.folds for seed in (0, 1)]
            synth = [fit_score(estimator, params, seed, *self.synth) for seed in (0, 1)]
            self.cache[key] = {"cv": cv, "cv_mean": float(np.mean(cv)),
                               "synth_mean": float(np.mean(synth))}
            self.path.with_suffix(".tmp").write_text(json.dumps(self.cache, indent=1) + "\n")
            os.replace(self.path.with_suffix(".tmp"), self.path)
            print(f"  {key}: CV {np.mean(cv):.4f}, synthetic {np.mean(synth):.4f}", flush=True)
        return self.cache[key]


def search(evaluate, estimator, log):
    point = defaults(estimator)
    for round_ in range(1, MAX_ROUNDS + 1):
        moved = False
        for name, values in COORDINATES.items():
            if name == "k" and estimator != "lambdarank":
                continue
            current = evaluate(estimator, point)
            best_change, best = max(((c, evaluate(estimator, {**point, **c})) for c in values),
                                    key=lambda cr: cr[1]["cv_mean"])
            d = np.subtract(best["cv"], current["cv"])
            gain, se = d.mean(), d.std(ddof=1) / np.sqrt(len(d))
            move = (gain > MIN_GAIN and gain > se
                    and best["synth_mean"] >= current["synth_mean"] - SYNTH_TOLERANCE)
            log.append({"estimator": estimator, "round": round_, "coordinate": name,
                        "best": json.dumps(best_change, default=list), "gain": gain, "se": se,
                        "moved": bool(move)})
            if move:
                point.update(best_change)
                moved = True
        if not moved:
            return point
    return point


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["search", "final"])
    parser.add_argument("--estimator", default="both", choices=["lambdarank", "ranknet", "both"])
    parser.add_argument("--lambdarank", default="{}", help="final: JSON changes to the defaults")
    parser.add_argument("--ranknet", default="{}")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    h = Harness(f"tune_{args.stage}", quick=False, out_dir=args.out, doc=__doc__)
    with threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if args.stage == "search":
            evaluate, log = Evaluator(args.out), []
            names = list(ESTIMATORS) if args.estimator == "both" else [args.estimator]
            h.data["end"] = {e: search(evaluate, e, log) for e in names}
            h.table("Coordinate search (gain: mean paired CV NDCG@10 of the best value)", log, {
                "estimator": "estimator", "round": "round", "coordinate": "coordinate",
                "best value": "best", "gain": "gain", "se": "se", "moved": "moved"})
        else:
            (Xtr, ytr, qtr), (Xte, yte, qte) = bench_quality.load_data().values()
            rows = []
            for estimator in ESTIMATORS:
                change = json.loads(getattr(args, estimator))
                change = {k: tuple(v) if isinstance(v, list) else v for k, v in change.items()}
                for label, params in (("defaults", {}), ("recommended", change)):
                    model = bench_quality.ours(ESTIMATORS[estimator], 0, **params)
                    scores = [bench_quality.evaluate(yte, bench_quality.fit(
                        clone(model).set_params(**{f"{model.steps[-1][0]}__random_state": s}),
                        Xtr, ytr, qtr).predict(Xte), qte)["ndcg10"] for s in range(args.seeds)]
                    rows.append({"model": f"{ESTIMATORS[estimator]} {label}", "params": params,
                                 "ndcg10": np.mean(scores), "sd": np.std(scores, ddof=1)})
            h.table("rank.test NDCG@10 over seeds (after the choice)", rows, {
                "model": "model", "changes": "params", "NDCG@10": "ndcg10", "sd": "sd"})
    h.write()


if __name__ == "__main__":
    main()
