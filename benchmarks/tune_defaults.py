"""Choosing default hyperparameters for LambdaRankRanker and RankNetRanker
without looking at the test set.

Run it as a script::

    python benchmarks/tune_defaults.py search [--estimator lambdarank|ranknet|both]
    python benchmarks/tune_defaults.py eval --estimator ranknet --params '{"alpha": 0.01}'
    python benchmarks/tune_defaults.py final --lambdarank '{...}' --ranknet '{...}' [--seeds 5]
    python benchmarks/tune_defaults.py report

Method
------
Selection data: ``rank.train`` of the Yahoo! LTR sample only (3,005 rows, 201
queries). ``GroupKFold(5, shuffle=True, random_state=0)`` by query, the same
folds for every configuration; in each fold the model
``make_pipeline(StandardScaler(), Ranker(**params, random_state=seed))`` is
fitted with seeds 0 and 1, so every configuration gets 10 paired scores (fold x
seed): test-fold NDCG@10 (gain 2^rel - 1, ties in input order, empty query =
1). Configurations are compared by the mean of these 10 scores and by the
mean and standard error of their *paired* differences.

Robustness: every configuration is also fitted on ``make_ranking(n_queries=300,
random_state=0)`` and scored on ``make_ranking(n_queries=300, random_state=1)``
(seeds 0 and 1), the package's synthetic problem (65 % nonlinear signal).

Coordinate search (``search``), from the current defaults:

* coordinates, in this order: ``hidden_layer_sizes`` {(), (32,), (64,)};
  ``learning_rate_init`` x ``max_iter`` jointly {1e-3, 3e-3, 1e-2} x {50, 100,
  200} (they trade off against each other); ``alpha`` {1e-4, 1e-3, 1e-2, 1e-1};
  ``batch_size`` {8, "auto"} (32 is "auto" here: min(32, n_queries) with ~160
  training queries per fold); ``early_stopping`` {False, True}; ``sigma`` {0.5,
  1, 2}; ``k`` {None, 10, 30} (LambdaRank only);
* on each coordinate every value is evaluated with the others fixed; the
  point moves to the best value only if (a) its mean paired gain over the
  current value is > 0.002 and > 1 standard error, and (b) its synthetic
  NDCG@10 is not more than 0.01 below the current point's;
* rounds repeat until a full round makes no move (at most 3 rounds).

Every evaluation is cached in ``tune_cache.json`` (out dir), keyed by estimator
and parameters, so runs resume and the ``report`` counts the fits. ``final``
is the only stage that touches ``rank.test``: 5 seeds, chosen configurations
next to the current defaults and the peers, after the choice is made.

Threads: ``threadpoolctl.threadpool_limits(1)``, ``numba.set_num_threads(1)``
and ``n_jobs=1`` everywhere.
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_quality  # noqa: E402  (data loading, peers, metrics)

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
N_SPLITS = 5
CV_SEEDS = (0, 1)
SYNTH_SEEDS = (0, 1)
SYNTH_QUERIES = 300
MIN_GAIN = 0.002
SYNTH_TOLERANCE = 0.01
MAX_ROUNDS = 3

CURRENT = {
    "hidden_layer_sizes": (),
    "activation": "relu",
    "solver": "adam",
    "alpha": 1e-4,
    "batch_size": "auto",
    "learning_rate_init": 1e-3,
    "max_iter": 200,
    "tol": 1e-4,
    "n_iter_no_change": 10,
    "early_stopping": False,
    "sigma": 1.0,
}
CURRENT_LAMBDARANK = {**CURRENT, "metric": "ndcg", "k": None, "gain": "exponential"}

COORDINATES = [
    ("hidden_layer_sizes", [{"hidden_layer_sizes": h} for h in ((), (32,), (64,))]),
    ("learning_rate_init x max_iter",
     [{"learning_rate_init": lr, "max_iter": mi}
      for lr in (1e-3, 3e-3, 1e-2) for mi in (50, 100, 200)]),
    ("alpha", [{"alpha": a} for a in (1e-4, 1e-3, 1e-2, 1e-1)]),
    ("batch_size", [{"batch_size": b} for b in (8, "auto")]),
    ("early_stopping", [{"early_stopping": e} for e in (False, True)]),
    ("sigma", [{"sigma": s} for s in (0.5, 1.0, 2.0)]),
    ("k", [{"k": k} for k in (None, 10, 30)]),
]


def _key(estimator, params):
    canon = {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(params.items())}
    return estimator + " " + json.dumps(canon, sort_keys=True)


def _ranker(estimator, params, seed):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ranknet import LambdaRankRanker, RankNetRanker

    cls = LambdaRankRanker if estimator == "lambdarank" else RankNetRanker
    params = dict(params)
    params["hidden_layer_sizes"] = tuple(params.get("hidden_layer_sizes", ()))
    return make_pipeline(StandardScaler(), cls(**params, random_state=seed, n_jobs=1))


def _fit_score(estimator, params, seed, train, test):
    from sklearn.exceptions import ConvergenceWarning

    from sklearn_ranknet.metrics import ndcg_score

    Xtr, ytr, qtr = train
    Xte, yte, qte = test
    pipe = _ranker(estimator, params, seed)
    step = pipe.steps[-1][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        started = time.perf_counter()
        pipe.fit(Xtr, ytr, **{f"{step}__groups": qtr})
        elapsed = time.perf_counter() - started
    score = ndcg_score(yte, pipe.predict(Xte), groups=qte, k=10, ignore_ties=True)
    return score, elapsed, int(pipe.steps[-1][1].n_iter_)


class Evaluator:
    """CV on rank.train and the synthetic check, cached on disk."""

    def __init__(self, out_dir=DEFAULT_OUT, fold_seed=0, cv_seeds=CV_SEEDS,
                 cache_name="tune_cache.json"):
        from sklearn.model_selection import GroupKFold

        from sklearn_ranknet.datasets import make_ranking

        self.cv_seeds = tuple(cv_seeds)
        self.path = Path(out_dir) / cache_name
        self.cache = json.loads(self.path.read_text()) if self.path.exists() else {}
        data = bench_quality.load_data()
        self.X, self.y, self.qid = data["train"]
        cv = GroupKFold(n_splits=N_SPLITS, shuffle=True, random_state=fold_seed)
        self.folds = list(cv.split(self.X, self.y, groups=self.qid))
        self.synth_train = make_ranking(n_queries=SYNTH_QUERIES, random_state=0)
        self.synth_test = make_ranking(n_queries=SYNTH_QUERIES, random_state=1)

    def __call__(self, estimator, params):
        key = _key(estimator, params)
        if key in self.cache:
            return self.cache[key]
        started = time.perf_counter()
        cv, times, iters = [], [], []
        for train_idx, test_idx in self.folds:
            train = (self.X[train_idx], self.y[train_idx], self.qid[train_idx])
            test = (self.X[test_idx], self.y[test_idx], self.qid[test_idx])
            for seed in self.cv_seeds:
                score, elapsed, n_iter = _fit_score(estimator, params, seed, train, test)
                cv.append(score)
                times.append(elapsed)
                iters.append(n_iter)
        synth, synth_times = [], []
        for seed in SYNTH_SEEDS:
            score, elapsed, _ = _fit_score(estimator, params, seed, self.synth_train,
                                           self.synth_test)
            synth.append(score)
            synth_times.append(elapsed)
        record = {
            "estimator": estimator,
            "params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()},
            "cv": cv,  # fold-major, seeds inner: 10 paired units
            "cv_mean": float(np.mean(cv)),
            "cv_std": float(np.std(cv, ddof=1)),
            "cv_fit_s": float(np.mean(times)),
            "cv_n_iter": float(np.mean(iters)),
            "synth": synth,
            "synth_mean": float(np.mean(synth)),
            "synth_fit_s": float(np.mean(synth_times)),
            "n_fits": len(cv) + len(synth),
        }
        self.cache[key] = record
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.cache, indent=1) + "\n")
        os.replace(tmp, self.path)
        print(f"  {estimator:10s} {_short(params)}: CV {record['cv_mean']:.4f} ± "
              f"{record['cv_std']:.4f}, synth {record['synth_mean']:.4f}, "
              f"{record['cv_fit_s']:.2f} s/fit, {record['cv_n_iter']:.0f} epochs "
              f"[{time.perf_counter() - started:.0f} s]", flush=True)
        return record


def _short(params, base=None):
    base = base or {}
    diff = {k: v for k, v in params.items()
            if k not in base or _canon(base[k]) != _canon(v)}
    return ", ".join(f"{k}={v}" for k, v in diff.items()) or "(start)"


def _canon(v):
    return list(v) if isinstance(v, tuple) else v


def paired(a, b):
    """Mean and standard error of the paired differences a - b."""
    d = np.asarray(a["cv"]) - np.asarray(b["cv"])
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))


def coordinate_search(evaluate, estimator, log):
    point = dict(CURRENT_LAMBDARANK if estimator == "lambdarank" else CURRENT)
    start = dict(point)
    for round_ in range(1, MAX_ROUNDS + 1):
        moved = False
        for name, values in COORDINATES:
            if name == "k" and estimator != "lambdarank":
                continue
            current = evaluate(estimator, point)
            rows = []
            for change in values:
                candidate = {**point, **change}
                rec = evaluate(estimator, candidate)
                gain, se = paired(rec, current)
                rows.append((change, rec, gain, se))
            best = max(rows, key=lambda r: r[1]["cv_mean"])
            change, rec, gain, se = best
            accept = (gain > MIN_GAIN and gain > se
                      and rec["synth_mean"] >= current["synth_mean"] - SYNTH_TOLERANCE)
            is_same = all(_canon(point[k]) == _canon(v) for k, v in change.items())
            log.append({
                "estimator": estimator, "round": round_, "coordinate": name,
                "from": {k: _canon(point[k]) for k in change},
                "rows": [{"values": {k: _canon(v) for k, v in c.items()},
                          "cv_mean": r["cv_mean"], "cv_std": r["cv_std"],
                          "gain_vs_current": g, "se": s, "synth_mean": r["synth_mean"],
                          "fit_s": r["cv_fit_s"], "n_iter": r["cv_n_iter"]}
                         for c, r, g, s in rows],
                "best": {k: _canon(v) for k, v in change.items()},
                "moved": bool(accept and not is_same),
            })
            if accept and not is_same:
                point.update(change)
                moved = True
                print(f"[{estimator} round {round_}] {name}: move to {change} "
                      f"(+{gain:.4f} ± {se:.4f})", flush=True)
            else:
                print(f"[{estimator} round {round_}] {name}: stay "
                      f"(best {change}: {gain:+.4f} ± {se:.4f}, synth "
                      f"{rec['synth_mean']:.4f} vs {current['synth_mean']:.4f})", flush=True)
        if not moved:
            break
    return start, point


# --------------------------------------------------------------------------
# Confirmation on fresh folds and seeds (still rank.train only)


def confirm(out_dir, lambdarank_end, ranknet_end):
    """Re-run the end points and their close rivals on new folds and seeds.

    The search picked the best of many noisy comparisons, so its gains are
    biased upwards; fresh folds (``random_state=1``) and seeds (2, 3) give an
    unbiased comparison of the few candidates that matter.
    """
    evaluate = Evaluator(out_dir, fold_seed=1, cv_seeds=(2, 3),
                         cache_name="tune_confirm_cache.json")
    lr_end = {**CURRENT_LAMBDARANK, **_tuples(lambdarank_end)}
    rn_end = {**CURRENT, **_tuples(ranknet_end)}
    variants = {
        "end point": {},
        "alpha=1e-3": {"alpha": 1e-3},
        "lr=3e-3, max_iter=50": {"learning_rate_init": 3e-3, "max_iter": 50},
        "max_iter=200": {"max_iter": 200},
        "hidden=(32,)": {"hidden_layer_sizes": (32,)},
        "hidden=() (linear)": {"hidden_layer_sizes": ()},
        "early_stopping, val 0.2, patience 20, max_iter=200": {
            "early_stopping": True, "validation_fraction": 0.2, "n_iter_no_change": 20,
            "max_iter": 200},
    }
    plan = [("lambdarank", "current defaults", CURRENT_LAMBDARANK)]
    plan += [("lambdarank", name, {**lr_end, **v}) for name, v in variants.items()]
    plan += [("lambdarank", "sigma=0.5", {**lr_end, "sigma": 0.5})]
    plan += [("ranknet", "current defaults", CURRENT)]
    plan += [("ranknet", name, {**rn_end, **v}) for name, v in variants.items()]
    plan += [("ranknet", "sigma=1.0", {**rn_end, "sigma": 1.0})]
    rows = []
    for estimator, name, params in plan:
        rec = evaluate(estimator, params)
        rows.append((estimator, name, rec))
    print("\n| estimator | configuration | CV NDCG@10 (new folds, seeds 2-3) | vs end point "
          "(paired) | vs current defaults (paired) | synthetic NDCG@10 | fit s | epochs |")
    print("|---|---|---|---|---|---|---|---|")
    out = []
    for estimator, name, rec in rows:
        end = next(r for e, n, r in rows if e == estimator and n == "end point")
        cur = next(r for e, n, r in rows if e == estimator and n == "current defaults")
        g_end, se_end = paired(rec, end)
        g_cur, se_cur = paired(rec, cur)
        print(f"| {estimator} | {name} | {rec['cv_mean']:.4f} ± {rec['cv_std']:.4f} | "
              f"{g_end:+.4f} ± {se_end:.4f} | {g_cur:+.4f} ± {se_cur:.4f} | "
              f"{rec['synth_mean']:.4f} | {rec['cv_fit_s']:.2f} | {rec['cv_n_iter']:.0f} |")
        out.append({"estimator": estimator, "name": name, "params": rec["params"],
                    "cv_mean": rec["cv_mean"], "cv_std": rec["cv_std"],
                    "gain_vs_end": g_end, "se_vs_end": se_end,
                    "gain_vs_current": g_cur, "se_vs_current": se_cur,
                    "synth_mean": rec["synth_mean"], "fit_s": rec["cv_fit_s"],
                    "n_iter": rec["cv_n_iter"]})
    (Path(out_dir) / "tune_confirm.json").write_text(json.dumps(out, indent=1) + "\n")


def sizes(out_dir, lambdarank_end, ranknet_end, n_queries=(60, 300, 1000), seeds=(0, 1)):
    """Synthetic robustness across training-set sizes (test: 300 queries, seed 1)."""
    from sklearn_ranknet.datasets import make_ranking

    test = make_ranking(n_queries=300, random_state=1)
    plan = [("lambdarank", "current", CURRENT_LAMBDARANK),
            ("lambdarank", "recommended", {**CURRENT_LAMBDARANK, **_tuples(lambdarank_end)}),
            ("ranknet", "current", CURRENT),
            ("ranknet", "recommended", {**CURRENT, **_tuples(ranknet_end)})]
    rows = []
    for n in n_queries:
        train = make_ranking(n_queries=n, random_state=0)
        for estimator, name, params in plan:
            res = [_fit_score(estimator, params, seed, train, test) for seed in seeds]
            row = {"n_queries": n, "estimator": estimator, "config": name,
                   "ndcg@10": [r[0] for r in res], "fit_s": [r[1] for r in res],
                   "n_iter": [r[2] for r in res]}
            rows.append(row)
            print(f"| {n} | {estimator} | {name} | {np.mean(row['ndcg@10']):.4f} | "
                  f"{np.mean(row['fit_s']):.2f} | {np.mean(row['n_iter']):.0f} |", flush=True)
    (Path(out_dir) / "tune_sizes.json").write_text(json.dumps(rows, indent=1) + "\n")


def _tuples(params):
    params = dict(params)
    if "hidden_layer_sizes" in params:
        params["hidden_layer_sizes"] = tuple(params["hidden_layer_sizes"])
    return params


# --------------------------------------------------------------------------
# Final evaluation on rank.test (only after the choice)


def final(configs, seeds, out_dir):
    """Test NDCG@10 etc. over seeds for named (estimator, params) configs and peers."""
    from threadpoolctl import threadpool_limits

    data = bench_quality.load_data()
    Xtr, ytr, qtr = data["train"]
    Xte, yte, qte = data["test"]
    rows = {}
    with threadpool_limits(1):
        for label, (estimator, params) in configs.items():
            runs = []
            for seed in range(seeds):
                pipe = _ranker(estimator, params, seed)
                step = pipe.steps[-1][0]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    started = time.perf_counter()
                    pipe.fit(Xtr, ytr, **{f"{step}__groups": qtr})
                    elapsed = time.perf_counter() - started
                rec = bench_quality.evaluate(yte, pipe.predict(Xte), qte)
                rec["fit_s"] = elapsed
                rec["n_iter"] = pipe.steps[-1][1].n_iter_
                runs.append(rec)
            rows[label] = {"estimator": estimator,
                           "params": {k: _canon(v) for k, v in params.items()}, "runs": runs}
            print(f"  {label}: NDCG@10 " + " ".join(f"{r['ndcg@10']:.4f}" for r in runs),
                  flush=True)
        for peer in bench_quality.PEERS + bench_quality.BASELINES:
            runs = []
            for seed in range(seeds):
                model = bench_quality.make_model(peer, seed)
                started = time.perf_counter()
                bench_quality.fit_model(peer, model, Xtr, ytr, qtr)
                elapsed = time.perf_counter() - started
                rec = bench_quality.evaluate(yte, model.predict(Xte), qte)
                rec["fit_s"] = elapsed
                runs.append(rec)
            rows[peer] = {"estimator": peer, "params": "library defaults", "runs": runs}
    out = Path(out_dir) / "tune_final.json"
    out.write_text(json.dumps(rows, indent=1, default=bench_quality._json_default) + "\n")
    cols = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg@10 tie-avg", "map"]
    print("\n| model | " + " | ".join(c.upper() for c in cols) + " | fit s (median) | epochs |")
    print("|" + "---|" * (len(cols) + 3))
    for label, row in rows.items():
        cells = []
        for c in cols:
            v = np.array([r[c] for r in row["runs"]])
            cells.append(f"{v.mean():.4f} ± {v.std(ddof=1) if len(v) > 1 else 0:.4f}")
        ep = [r.get("n_iter") for r in row["runs"] if r.get("n_iter") is not None]
        ep = f"{np.mean(ep):.0f} ({min(ep)}..{max(ep)})" if ep else ""
        fit = np.median([r["fit_s"] for r in row["runs"]])
        print(f"| {label} | " + " | ".join(cells) + f" | {fit:.2f} | {ep} |")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stage", choices=["search", "eval", "confirm", "sizes", "final", "report"])
    parser.add_argument("--estimator", default="both")
    parser.add_argument("--params", default="{}", help="JSON changes from the current defaults")
    parser.add_argument("--lambdarank", default="{}")
    parser.add_argument("--ranknet", default="{}")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)

    import numba
    from threadpoolctl import threadpool_limits

    numba.set_num_threads(1)
    if args.stage == "final":
        lr = {**CURRENT_LAMBDARANK, **_tuples(json.loads(args.lambdarank))}
        rn = {**CURRENT, **_tuples(json.loads(args.ranknet))}
        configs = {
            "LambdaRank current defaults": ("lambdarank", CURRENT_LAMBDARANK),
            "LambdaRank recommended": ("lambdarank", lr),
            "RankNet current defaults": ("ranknet", CURRENT),
            "RankNet recommended": ("ranknet", rn),
        }
        final(configs, args.seeds, args.out)
        return
    if args.stage == "sizes":
        with threadpool_limits(1):
            sizes(args.out, json.loads(args.lambdarank), json.loads(args.ranknet))
        return
    if args.stage == "confirm":
        with threadpool_limits(1):
            confirm(args.out, json.loads(args.lambdarank), json.loads(args.ranknet))
        return
    evaluate = Evaluator(args.out)
    with threadpool_limits(1):
        if args.stage == "eval":
            base = CURRENT_LAMBDARANK if args.estimator == "lambdarank" else CURRENT
            params = {**base, **json.loads(args.params)}
            if "hidden_layer_sizes" in params:
                params["hidden_layer_sizes"] = tuple(params["hidden_layer_sizes"])
            rec = evaluate(args.estimator, params)
            print(json.dumps({k: v for k, v in rec.items() if k not in ("cv",)}, indent=1))
            return
        if args.stage == "search":
            names = ["lambdarank", "ranknet"] if args.estimator == "both" else [args.estimator]
            log_path = Path(args.out) / "tune_search.json"
            log = []
            results = {}
            for name in names:
                start, point = coordinate_search(evaluate, name, log)
                results[name] = {"start": start, "end": point,
                                 "start_record": evaluate(name, start),
                                 "end_record": evaluate(name, point)}
                log_path.write_text(json.dumps({"log": log, "results": results}, indent=1,
                                               default=_canon) + "\n")
            for name, r in results.items():
                gain, se = paired(r["end_record"], r["start_record"])
                print(f"{name}: {_short(r['end'], r['start'])}: CV "
                      f"{r['start_record']['cv_mean']:.4f} -> {r['end_record']['cv_mean']:.4f} "
                      f"({gain:+.4f} ± {se:.4f}); synth {r['start_record']['synth_mean']:.4f} "
                      f"-> {r['end_record']['synth_mean']:.4f}")
        n_fits = sum(r["n_fits"] for r in evaluate.cache.values())
        print(f"{len(evaluate.cache)} configurations, {n_fits} fits in the cache")


if __name__ == "__main__":
    main()
