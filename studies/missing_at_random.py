"""Why LightGBM ranks better where most values are missing at random on
MSLR-shaped data (issue 54 D1), and what does not close the gap.

    python studies/missing_at_random.py draws      # the benchmark's split, 4 draws x 2 seeds
    python studies/missing_at_random.py sizes      # fresh data, 170 to 1,000 training queries
    python studies/missing_at_random.py variants   # fresh data, 500 queries, one change at a time

Every row is ``LambdaRankRanker`` against ``LGBMRanker(verbose=-1)`` at its
defaults, held-out NDCG@10 (gain 2^rel - 1), with 60 % of the values of X
missing at random in both splits (the missing-value benchmark's MCAR).

- ``draws``: the benchmark's own data (``make_ranking(500)`` and 1,000 test
  queries, MSLR-shaped), with its draw of the missing values (the first)
  and three others, and two seeds of our fit: is the benchmark's one
  figure typical?
- ``sizes`` and ``variants`` read fresh data, never the benchmark's test
  split: ``make_ranking`` with ``random_state=11`` (training) and ``12``
  (600 test queries), the missing values drawn by seeds 21 and 22.
  ``variants`` refits ours with one change each: wider, deeper, dropout,
  input noise, standard scaling, larger ``alpha``; a missing indicator for
  each of the 20 informative features (the oracle: the shipped test keeps
  none under MCAR); and the missing values set to the mean of the query's
  present values before both libraries' fits.

Takes ~5 minutes (``draws`` ~1, ``sizes`` ~2, ``variants`` ~2) on 2 cores.
The figures are in docs/benchmarks.md, "Missing values".
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_missing import _missing  # noqa: E402
from benchmarks.bench_quality import MSLR_SHAPE, by_query, evaluate, mslr_shaped  # noqa: E402
from sklearn_ranknet import LambdaRankRanker  # noqa: E402
from sklearn_ranknet.datasets import make_ranking  # noqa: E402

SHARE = 0.6
N_INFORMATIVE = MSLR_SHAPE["n_informative"]  # the first columns of make_ranking's X


def lightgbm(X, y, qid, X_test, y_test, qid_test):
    import lightgbm as lgb

    Xs, ys, qs = by_query(X, y, qid)
    sizes = np.unique(qs, return_counts=True)[1]
    model = lgb.LGBMRanker(verbose=-1).fit(Xs, ys, group=sizes)
    return evaluate(y_test, model.predict(X_test), qid_test)["ndcg10"]


def ours(X, y, qid, X_test, y_test, qid_test, **params):
    model = LambdaRankRanker(**{"random_state": 0, **params}).fit(X, y, qid)
    return evaluate(y_test, model.predict(X_test), qid_test)["ndcg10"]


def fresh(n_queries=1000):
    X, y, qid = make_ranking(n_queries, **MSLR_SHAPE, random_state=11)
    X_test, y_test, qid_test = make_ranking(600, **MSLR_SHAPE, random_state=12)
    return (_missing(X, SHARE, "MCAR", 21), y, qid), (_missing(X_test, SHARE, "MCAR", 22), y_test, qid_test)


def draws():
    data = mslr_shaped(False)
    (X, y, qid), (X_test, y_test, qid_test) = data["train"], data["test"]
    gaps = []
    for draw in range(4):
        train, test = _missing(X, SHARE, "MCAR", 10 * draw), _missing(X_test, SHARE, "MCAR", 10 * draw + 1)
        peer = lightgbm(train, y, qid, test, y_test, qid_test)
        for seed in (0, 1):
            mine = ours(train, y, qid, test, y_test, qid_test, random_state=seed)
            gaps.append(mine - peer)
            print(f"draw {draw}, seed {seed}: ours {mine:.4f}, LightGBM {peer:.4f}, {mine - peer:+.4f}", flush=True)
    print(f"ours - LightGBM: mean {np.mean(gaps):+.4f}, standard deviation {np.std(gaps, ddof=1):.4f}")


def sizes():
    (X, y, qid), test = fresh()
    ids = np.unique(qid)  # make_ranking leaves some queries empty
    for n_queries in (170, 333, 500, len(ids)):
        keep = qid <= ids[n_queries - 1]
        mine, peer = ours(X[keep], y[keep], qid[keep], *test), lightgbm(X[keep], y[keep], qid[keep], *test)
        print(f"{n_queries} queries ({keep.sum()} rows): ours {mine:.4f}, LightGBM {peer:.4f}, "
              f"{mine - peer:+.4f}", flush=True)


def query_mean_fill(X, qid):
    """Each missing value set to the mean of its query's present values of the feature."""
    X = X.copy()
    for query in np.unique(qid):
        rows = np.flatnonzero(qid == query)
        block = X[rows]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a feature missing in the whole query stays NaN
            means = np.nanmean(block, axis=0)
        missing_row, missing_feature = np.nonzero(np.isnan(block))
        block[missing_row, missing_feature] = means[missing_feature]
        X[rows] = block
    return X


def variants():
    import sklearn_ranknet._inputs as inputs

    (X, y, qid), test = fresh(500)
    peer = lightgbm(X, y, qid, *test)
    print(f"LightGBM {peer:.4f}")
    for params in [{}, {"hidden_layer_sizes": (128,)}, {"hidden_layer_sizes": (64, 64)}, {"dropout": 0.2},
                   {"input_noise": 1.0}, {"feature_scaling": "standard"},
                   {"alpha": 75.0}, {"alpha": 150.0}, {"alpha": 300.0}]:
        mine = ours(X, y, qid, *test, **params)
        print(f"{params or 'defaults'}: ours {mine:.4f}, {mine - peer:+.4f}", flush=True)

    shipped = inputs.telling_features

    def informative(evidence):
        return np.arange(len(evidence[0])) < N_INFORMATIVE

    inputs.telling_features = informative
    try:
        mine = ours(X, y, qid, *test)
    finally:
        inputs.telling_features = shipped
    print(f"an indicator for each informative feature: ours {mine:.4f}, {mine - peer:+.4f}")

    (X_test, y_test, qid_test) = test
    filled = (query_mean_fill(X, qid), y, qid), (query_mean_fill(X_test, qid_test), y_test, qid_test)
    mine, filled_peer = ours(*filled[0], *filled[1]), lightgbm(*filled[0], *filled[1])
    print(f"query-mean fill before both fits: ours {mine:.4f}, LightGBM {filled_peer:.4f}, {mine - filled_peer:+.4f}")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    LambdaRankRanker(max_iter=2).fit(*make_ranking(20, random_state=0))  # compile first
    {"draws": draws, "sizes": sizes, "variants": variants}[sys.argv[1] if len(sys.argv) > 1 else "draws"]()
