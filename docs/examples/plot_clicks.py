"""
Learning from clicks: position bias and its correction
======================================================

Users click what they see, and they see the top of the list. A ranker
trained on raw clicks learns where the old ranker put things as much as
what is relevant. Given the rank each row was shown at, the rankers
estimate how often each rank is looked at and train on clicks corrected by
it (see :ref:`clicks`). This example simulates click logs of growing size
from a weak logging ranker, compares the estimated propensities with the
true ones, and scores the rankers on the true labels of held-out queries.

It runs on the Yahoo! LTR sample when it finds it (as
:ref:`sphx_glr_auto_examples_plot_compare_rankers.py` does: in
``$SKLEARN_RANKNET_DATA``, or in ``shared/data/`` of the current folder or
one above it), and on a synthetic problem from
:func:`~sklearn_ranknet.datasets.make_ranking` otherwise.
"""

# %%
# A weak logging ranker and its click logs
# ----------------------------------------
# The logging ranker learnt from the labels of 10 training queries only
# (5 %). Each session shows a query's top 10 by its scores, the same list
# every time, and the user examines rank r with probability 1 / r (the
# position-based model); an examined document is clicked with a probability
# that grows with its grade.
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet.datasets import load_letor, make_clicks, make_ranking
from sklearn_ranknet.metrics import ndcg_score


def find_yahoo_sample():
    """The folder of the Yahoo LTR sample, or None."""
    candidates = []
    if os.environ.get("SKLEARN_RANKNET_DATA"):
        given = Path(os.environ["SKLEARN_RANKNET_DATA"])
        candidates += [given, given / "yahoo-ltr-sample"]
    starts = [Path.cwd()] + ([Path(__file__).resolve().parent] if "__file__" in globals() else [])
    for start in starts:
        candidates += [folder / "shared" / "data" / "yahoo-ltr-sample" for folder in [start, *start.parents]]
    return next((f for f in candidates if (f / "rank.train").is_file() and (f / "rank.test").is_file()), None)


folder = find_yahoo_sample()
if folder is not None:
    X, y, groups = load_letor(folder / "rank.train", n_features=300)
    X_test, y_test, groups_test = load_letor(folder / "rank.test", n_features=300)
    X, X_test = X.toarray(), X_test.toarray()
else:
    print("Note: the Yahoo LTR sample was not found; using make_ranking instead.")
    X, y, groups = make_ranking(n_queries=200, random_state=0)
    X_test, y_test, groups_test = make_ranking(n_queries=50, random_state=1)

queries = np.unique(groups)
few = np.isin(groups, np.random.default_rng(0).choice(queries, len(queries) // 20, replace=False))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # a short fit's ConvergenceWarning
    logger = LambdaRankRanker(random_state=0).fit(X[few], y[few], groups[few])
logged = logger.predict(X)


def held_out(model):
    return ndcg_score(y_test, model.predict(X_test), groups=groups_test, k=10)


# %%
# Raw and debiased rankers as the log grows
# -----------------------------------------
# For each number of sessions per query, one ranker on the raw clicks and
# one given ``positions``; the ceiling is a ranker on the true labels of all
# training queries, including the documents the logger never showed.
ceiling = held_out(LambdaRankRanker(random_state=0).fit(X, y, groups))
sessions = [10, 30, 100]
raw_ndcg, debiased_ndcg, estimates = [], [], {}
for n_sessions in sessions:
    log = make_clicks(y, groups, logged, n_sessions=n_sessions, max_label=4, random_state=0)
    X_log = X[log.rows]
    raw = LambdaRankRanker(random_state=0).fit(X_log, log.clicks, log.sessions)
    debiased = LambdaRankRanker(random_state=0).fit(
        X_log, log.clicks, log.sessions, positions=log.positions
    )
    raw_ndcg.append(held_out(raw))
    debiased_ndcg.append(held_out(debiased))
    estimates[n_sessions] = debiased.position_propensities_
    print(f"{n_sessions:>3} sessions per query: NDCG@10 raw {raw_ndcg[-1]:.3f}, "
          f"debiased {debiased_ndcg[-1]:.3f} (true labels: {ceiling:.3f})")
truth = log.propensities

# %%
# The estimate and the gain
# -------------------------
# Left: the estimated examination propensity of each rank against the truth
# (1 / rank). Right: NDCG\@10 on the held-out queries' true labels.
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
ranks = np.arange(1, len(truth) + 1)
left.plot(ranks, truth, "k--", label="truth: 1 / rank")
for n_sessions, estimate in estimates.items():
    left.plot(ranks, estimate, "o-", label=f"estimate, {n_sessions} sessions")
left.set(xlabel="rank", ylabel="examination propensity", yscale="log", title="Position bias")
left.legend()
right.plot(sessions, raw_ndcg, "o-", label="raw clicks")
right.plot(sessions, debiased_ndcg, "o-", label="debiased (positions=...)")
right.axhline(ceiling, color="k", ls="--", label="true labels")
right.plot(sessions, [held_out(logger)] * len(sessions), ":", color="grey", label="logging ranker")
right.set(xlabel="sessions per query", xscale="log", ylabel="NDCG@10 on true labels", title="Held-out quality")
right.legend()
fig.tight_layout()
plt.show()

# %%
# One seed of each log: the differences between seeds are of the order of
# 0.01 (:doc:`/benchmarks` has three seeds per setting). With few sessions
# the corrected clicks are noisy (a click at rank 10 counts ten times). The
# logger shows every session of a query the same list, so the position
# effect is told apart from relevance only through the features, which
# predict relevance well on the Yahoo sample; on data where they do not,
# the estimate and the gain are weaker (see :ref:`clicks`).
