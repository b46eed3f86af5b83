"""
LambdaRank, RankNet, ListNet and LightGBM on real data
======================================================

The three rankers of the package with their default parameters, and
LightGBM's ``LGBMRanker`` with its own, trained on the Yahoo! Learning to Rank
sample (201 training queries) and scored on its 50 test queries, NDCG@1 to
NDCG@10.

The data is not part of the package: the example looks for the folder
``yahoo-ltr-sample`` (LightGBM's copy of the sample, files ``rank.train``,
``rank.test`` and their ``.query`` sidecars) in ``$SKLEARN_RANKNET_DATA``, then
in ``shared/data/`` of the current folder and of each folder above it. Without
it, the example runs on a synthetic problem from
:func:`~sklearn_ranknet.datasets.make_ranking` instead, and says so.
"""

# %%
# Load the data
# -------------
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet.datasets import load_letor, make_ranking
from sklearn_ranknet.metrics import ndcg_score


def find_yahoo_sample():
    """The folder of the Yahoo LTR sample, or None."""
    candidates = []
    if os.environ.get("SKLEARN_RANKNET_DATA"):
        given = Path(os.environ["SKLEARN_RANKNET_DATA"])
        candidates += [given, given / "yahoo-ltr-sample"]
    starts = [Path.cwd()]
    if "__file__" in globals():  # run as a script
        starts.append(Path(__file__).resolve().parent)
    for start in starts:
        for folder in [start, *start.parents]:
            candidates.append(folder / "shared" / "data" / "yahoo-ltr-sample")
    for folder in candidates:
        if (folder / "rank.train").is_file() and (folder / "rank.test").is_file():
            return folder
    return None


folder = find_yahoo_sample()
if folder is not None:
    data_name = "Yahoo LTR sample"
    # Feature ids start at 1 in LETOR-format files: saying so keeps the
    # columns of the two files aligned whichever ids each file holds.
    X_train, y_train, qid_train = load_letor(folder / "rank.train", zero_based=False)
    X_test, y_test, qid_test = load_letor(folder / "rank.test", n_features=X_train.shape[1], zero_based=False)
else:
    data_name = "make_ranking (synthetic)"
    print(
        "Note: the Yahoo LTR sample was not found (set SKLEARN_RANKNET_DATA to the "
        "folder that holds yahoo-ltr-sample); using make_ranking instead."
    )
    X_train, y_train, qid_train = make_ranking(n_queries=200, random_state=0)
    X_test, y_test, qid_test = make_ranking(n_queries=50, random_state=1)

print(f"{data_name}: train {X_train.shape[0]} rows in {len(np.unique(qid_train))} queries, "
      f"test {X_test.shape[0]} rows in {len(np.unique(qid_test))} queries, "
      f"{X_train.shape[1]} features")

# %%
# Fit the models
# --------------
# The rankers take the raw features (a CSR matrix for the Yahoo files) and
# scale them themselves. LightGBM wants each query's rows to be
# consecutive and the number of rows per query, ``group``; ``load_letor``
# returns the rows query by query, so the group sizes are the counts of the
# consecutive ids. Each fit is timed (wall clock, on the machine that built
# this page; the first fit of a process also compiles the package's Numba
# kernels unless a cache holds them, so a short fit warms them up first).
import time
import warnings

from sklearn.exceptions import ConvergenceWarning

models = {
    "LambdaRankRanker": LambdaRankRanker(random_state=0),
    "RankNetRanker": RankNetRanker(random_state=0),
    "ListNetRanker": ListNetRanker(random_state=0),
}
with warnings.catch_warnings():  # compile the kernels before timing
    warnings.simplefilter("ignore", ConvergenceWarning)  # (one epoch each)
    for model in models.values():
        type(model)(max_iter=1).fit(X_train[:200], y_train[:200], groups=qid_train[:200])
scores, fit_seconds = {}, {}
for name, model in models.items():
    started = time.perf_counter()
    model.fit(X_train, y_train, groups=qid_train)
    fit_seconds[name] = time.perf_counter() - started
    scores[name] = model.predict(X_test)

try:
    from lightgbm import LGBMRanker
except ImportError:  # LightGBM is in the "docs" extra, not a dependency
    print("LightGBM is not installed: its row is left out.")
else:
    order = np.argsort(qid_train, kind="stable")  # already in order for LETOR files
    _, group_sizes = np.unique(qid_train[order], return_counts=True)
    lgbm = LGBMRanker(random_state=0, verbose=-1)
    started = time.perf_counter()
    lgbm.fit(X_train[order], y_train[order], group=group_sizes)
    fit_seconds["LGBMRanker"] = time.perf_counter() - started
    scores["LGBMRanker"] = lgbm.predict(X_test)

# %%
# NDCG@k on the test queries
# --------------------------
# Gain 2^label − 1, tied scores averaged over their orderings, a query without
# a relevant document scores 1 (the package's conventions, see
# :ref:`metric_conventions`). The table keeps to NDCG@1, @3, @5 and @10 and
# the fit time, so that it fits the page; the plot below has every k.
ks = np.arange(1, 11)
ndcg = {
    name: np.array([ndcg_score(y_test, s, groups=qid_test, k=k) for k in ks])
    for name, s in scores.items()
}
shown = [1, 3, 5, 10]
print("model".ljust(17), " ".join(f"@{k:<5}" for k in shown), "fit")
for name, values in ndcg.items():
    print(name.ljust(17), " ".join(f"{values[k - 1]:.3f} " for k in shown), f"{fit_seconds[name]:.1f} s")

# %%
# With one seed and 50 test queries, differences of a hundredth are within
# the noise: on this split the benchmark's five seeds of each ranker spread
# by ±0.003 (``LambdaRankRanker()``) to ±0.007 (``RankNetRanker()``) NDCG@10,
# standard deviation, in the run of 2026-11-26 (:doc:`/benchmarks`). The
# page's numbers come from the build that made it.
#
# The left plot draws NDCG@k on an axis that spans the models' values only
# (it does not start at 0), so that their differences show; the right one
# draws each model's NDCG@10 against its fit time.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
markers = dict(zip(ndcg, "osD^v"))
for name, values in ndcg.items():
    left.plot(ks, values, marker=markers[name], label=name)
left.set_xticks(ks, [f"@{k}" for k in ks])
everything = np.concatenate(list(ndcg.values()))
spread = everything.max() - everything.min()
left.set_ylim(everything.min() - 0.1 * spread, everything.max() + 0.1 * spread)
left.set_xlabel("NDCG@k")
left.set_ylabel("mean over test queries")
left.grid(alpha=0.3)
left.legend(fontsize=8)
for name, values in ndcg.items():
    right.scatter(fit_seconds[name], values[-1], marker=markers[name], s=60, label=name)
at_10 = [values[-1] for values in ndcg.values()]
margin = 0.15 * (max(at_10) - min(at_10)) or 0.01
right.set_ylim(min(at_10) - margin, max(at_10) + margin)  # no marker on the frame
right.set_xlabel("fit time (s)")
right.set_ylabel("NDCG@10")
right.set_xlim(0, 1.15 * max(fit_seconds.values()))
right.legend(fontsize=8)  # names in a legend: close points would overlap as labels
right.grid(alpha=0.3)
fig.suptitle(f"Default models on the {data_name}")
fig.tight_layout()
plt.show()
