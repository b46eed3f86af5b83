"""Missing values: default fits on data with NaN, against LightGBM, which learns them natively too.

``python -m benchmarks --only missing`` (``--quick``: a smoke test on 150 MSLR-shaped queries, 5 epochs and
5 boosting rounds; its figures are not the benchmark's).

Both libraries take the NaN as they are: our rankers through their input scaling (a missing
indicator for each feature whose missingness goes with the labels, and its missing values read as
the present value labelled most alike; other features' missing values at their training mean),
LightGBM through its own missing-value splits. Each row is ``LambdaRankRanker(random_state=0)``
and ``LGBMRanker(verbose=-1)`` fitted on the training split and scored once on the test split
(NDCG@10, gain 2^rel - 1), with the same values missing in both splits' features.

Data:

- Yahoo: the Yahoo! LTR sample beside the checkout (``rank.train`` / ``rank.test``, 300
  features; skipped without it);
- MSLR-shaped ``make_ranking(500, n_features=136, n_informative=20, min_docs=20, max_docs=370)``
  (``random_state=0``) and 1,000 test queries (``random_state=1``).

Missing values, drawn with ``np.random.default_rng(0)`` (train) and ``(1)`` (test), each value
of X independently:

- none: the data as it is;
- at random (MCAR): missing with probability s, for s = 10 %, 30 %, 60 %;
- not at random (MNAR, larger values more often): the value at within-feature percentile u
  (of its split, ties averaged) missing with probability u^a, a = 1/s - 1, whose mean over
  u in [0, 1] is s. At s = 10 % mostly the largest values go missing; at 60 % most values
  but the smallest.

A figure of interest beside each row: ours minus LightGBM (positive: ours ranks better). The
targets are the issue's measurement, not a bar it sets: the difference at each condition.
"""

import time
import warnings

import numpy as np

from .bench_quality import DATA, by_query, evaluate, load_data, mslr_shaped

SHARES = (0.1, 0.3, 0.6)


def _missing(X, share, mechanism, seed):
    """A copy of X with values NaN as the module docstring says."""
    rng = np.random.default_rng(seed)
    X = np.array(X, dtype=np.float64)
    if mechanism == "none":
        return X
    if mechanism == "MCAR":
        chance = np.full(X.shape, share)
    else:  # MNAR: within-feature percentile u, missing with chance u^(1/s - 1)
        from scipy.stats import rankdata

        percentile = (rankdata(X, axis=0) - 0.5) / X.shape[0]
        chance = percentile ** (1.0 / share - 1.0)
    X[rng.random(X.shape) < chance] = np.nan
    return X


def _conditions():
    yield "none", 0.0
    for mechanism in ("MCAR", "MNAR"):
        for share in SHARES:
            yield mechanism, share


def _data_sets(h):
    """Yahoo (when present) and the quality suite's MSLR-shaped split."""
    sets = {}
    if not h.quick and DATA.is_dir():
        sets["Yahoo"] = load_data()
    elif not h.quick:
        h.note(f"The Yahoo! LTR sample is not at {DATA}: its rows are skipped.")
        h.skipped.append("Yahoo! LTR sample not found")
    sets["MSLR-shaped, 150 queries" if h.quick else "MSLR-shaped, 500 queries"] = mslr_shaped(h.quick)
    return sets


def _timed(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model = fit()
        return model, time.perf_counter() - started


def run(h):
    from sklearn_ranknet import LambdaRankRanker

    lgb = h.peer("lightgbm")
    quick = {"max_iter": 5} if h.quick else {}
    rows = []
    for name, data in _data_sets(h).items():
        (X, y, qid), (X_test, y_test, qid_test) = data["train"], data["test"]
        _timed(lambda: LambdaRankRanker(random_state=0, max_iter=2).fit(X[:2000], y[:2000], qid[:2000]))  # JIT
        for mechanism, share in _conditions():
            train = _missing(X, share, mechanism, seed=0)
            test = _missing(X_test, share, mechanism, seed=1)
            row = {"data": name, "missing": "none" if mechanism == "none" else f"{mechanism} {share:.0%}",
                   "share": float(np.isnan(train).mean())}
            model, row["ours_fit_s"] = _timed(lambda: LambdaRankRanker(random_state=0, **quick).fit(train, y, qid))
            row["ours"] = evaluate(y_test, model.predict(test), qid_test)["ndcg10"]
            if lgb is not None:
                Xs, ys, qs = by_query(train, y, qid)
                sizes = np.unique(qs, return_counts=True)[1]
                params = {"n_estimators": 5} if h.quick else {}
                peer, row["lgbm_fit_s"] = _timed(
                    lambda: lgb.LGBMRanker(verbose=-1, **params).fit(Xs, ys, group=sizes))
                row["lgbm"] = evaluate(y_test, peer.predict(test), qid_test)["ndcg10"]
                row["diff"] = row["ours"] - row["lgbm"]
                h.target(f"{name}, {row['missing']}: NDCG@10 ours - LGBMRanker()", row["diff"], 0.0,
                         higher_is_better=True)
            h.say(f"{name} {row['missing']}: ours {row['ours']:.4f} in {row['ours_fit_s']:.1f} s"
                  + (f", LightGBM {row['lgbm']:.4f} in {row['lgbm_fit_s']:.1f} s" if lgb is not None else ""))
            rows.append(row)
    h.table("Held-out NDCG@10 with missing values (same values missing in both libraries' input)", rows, {
        "data": "data", "missing": "missing", "share of X missing": "share",
        "LambdaRankRanker()": "ours", "LGBMRanker()": "lgbm", "ours - LightGBM": "diff",
        "our fit (s)": "ours_fit_s", "LightGBM fit (s)": "lgbm_fit_s",
    })

    def draw(ax):
        for name in dict.fromkeys(r["data"] for r in rows):
            mine = [r for r in rows if r["data"] == name]
            labels = [r["missing"] for r in mine]
            ax.plot(labels, [r["ours"] for r in mine], "o-", label=f"LambdaRankRanker(), {name}")
            if lgb is not None:
                ax.plot(labels, [r["lgbm"] for r in mine], "s--", label=f"LGBMRanker(), {name}")
        ax.set_ylabel("test NDCG@10")
        ax.tick_params(axis="x", rotation=30)
        ax.legend(fontsize=7)

    h.plot(draw, size=(8.0, 4.5))
