"""
Which features does a ranker use?
=================================

Permutation importance asks a fitted model a simple question: how much worse
does it rank when one feature is scrambled? Shuffle one column, score again,
and the drop in the score is the importance of that feature. Nothing is
refitted, so it works for any model: a neural ranker, a bagged ensemble, a
Pipeline, or a plain regressor used as a ranker.

For ranking, two details matter, and
:func:`sklearn_ranknet.inspection.permutation_importance` takes care of both:

* the score is computed **query by query** (mean NDCG@10 over queries by
  default), so the function takes the query id of every row, ``groups``;
* the column is shuffled **within each query** by default: every document
  gets the value of another document of the same query. A ranking only
  compares documents of the same query, so this measures what the feature
  contributes to that comparison, and nothing else.

This example fits a :class:`~sklearn_ranknet.LambdaRankRanker` on synthetic
data where we know which features matter, plots the importances, and then
lists the top documents of two queries with
:func:`sklearn_ranknet.rank_within_groups`.
"""

# %%
# Data with known informative features
# ------------------------------------
# :func:`~sklearn_ranknet.datasets.make_ranking` makes the relevance depend
# on its first ``n_informative`` columns; the others are noise, some of them
# correlated with an informative column. We add one more column, the number
# of documents of the query: it is the same for every document of a query,
# so it cannot tell them apart, but it differs a lot between queries.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_ranknet import LambdaRankRanker, rank_within_groups
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.inspection import permutation_importance

n_features, n_informative = 8, 3


def with_query_length(X, qid):
    """X with one more column: the number of documents of each row's query."""
    _, codes, counts = np.unique(qid, return_inverse=True, return_counts=True)
    return np.column_stack([X, counts[codes]])


X_train, y_train, qid_train = make_ranking(
    n_queries=300, n_features=n_features, n_informative=n_informative, random_state=0
)
X_test, y_test, qid_test = make_ranking(
    n_queries=150, n_features=n_features, n_informative=n_informative, random_state=1
)
X_train = with_query_length(X_train, qid_train)
X_test = with_query_length(X_test, qid_test)
names = [f"informative {j}" for j in range(n_informative)]
names += [f"noise {j}" for j in range(n_informative, n_features)]
names += ["query length"]

ranker = LambdaRankRanker(hidden_layer_sizes=(32,), random_state=0)
ranker.fit(X_train, y_train, groups=qid_train)
print(f"test NDCG@10: {ranker.score(X_test, y_test, groups=qid_test):.3f}")

# %%
# Permutation importance on held-out queries
# ------------------------------------------
# The importances are computed on the test queries, so they describe what
# the model uses to rank new queries, not what it memorized. Each feature is
# shuffled ``n_repeats`` times; the spread of the drops shows how much of a
# difference between two features is noise.
result = permutation_importance(
    ranker, X_test, y_test, groups=qid_test, n_repeats=10, random_state=0
)
order = np.argsort(result.importances_mean)
colors = ["tab:blue" if name.startswith("informative") else "tab:gray" for name in names]

fig, ax = plt.subplots(figsize=(7, 4))
ax.barh(
    [names[i] for i in order],
    result.importances_mean[order],
    xerr=result.importances_std[order],
    color=[colors[i] for i in order],
)
for y_pos, i in enumerate(order):  # every repeat, as a dot
    ax.plot(result.importances[i], np.full(result.importances.shape[1], y_pos), ".k", markersize=3)
ax.axvline(0, color="black", linewidth=0.8)
ax.set_xlabel("drop in NDCG@10 when the feature is shuffled within queries")
ax.set_title("Permutation importance on held-out queries")
fig.tight_layout()

# %%
# The informative features come first. The third matters less: in this
# problem its linear effect and a saturating effect pull in opposite
# directions, so it tells documents apart over only part of its range.
# ``noise 6`` and ``noise 7`` are built partly from ``informative 1`` and
# ``informative 0`` (correlated with them), yet they score within their
# spread of zero, like the other noise: the model reads the informative
# columns themselves, so shuffling a partial copy costs nothing. The query
# length gets exactly 0: shuffled within a query, it does not change.
#
# Why not shuffle across all rows?
# --------------------------------
# Shuffling a column across all rows, as
# :func:`sklearn.inspection.permutation_importance` does, also moves values
# between queries. Each query then gets values typical of other queries,
# which the model has never seen together, and the feature's differences
# *between* queries turn into noise *within* each query. The query length
# shows it: it cannot order the documents of a query, yet shuffled across
# rows it seems to matter as soon as the model uses it at all. For the same
# reason every feature with a query-level part looks more important than it
# is for ranking: shuffled across rows, its values vary more within a query
# than real values ever do.
classic = permutation_importance(
    ranker, X_test, y_test, groups=qid_test, n_repeats=10, permute="all_rows", random_state=0
)
y_pos = np.arange(len(names))
fig, ax = plt.subplots(figsize=(7, 4))
ax.barh(y_pos - 0.2, result.importances_mean, height=0.4, label="within queries (default)")
ax.barh(y_pos + 0.2, classic.importances_mean, height=0.4, label="across all rows")
ax.set_yticks(y_pos, names)
ax.invert_yaxis()
ax.set_xlabel("mean drop in NDCG@10")
ax.legend()
fig.tight_layout()

# %%
# The top documents of each query
# -------------------------------
# ``predict`` gives one score per document. :func:`~sklearn_ranknet.rank_within_groups`
# turns the scores into the rank of each document within its query (1 is
# the best; ties go to the row given first), so that the top ``k`` of every
# query are the rows with ``rank <= k``.
docs = pd.DataFrame({"query": qid_test, "label": y_test, "score": ranker.predict(X_test)})
docs["rank"] = rank_within_groups(docs["score"], docs["query"])
two_queries = docs["query"].isin(np.unique(qid_test)[:2])
top3 = docs[two_queries & (docs["rank"] <= 3)].sort_values(["query", "rank"])
print(top3.round(3).to_string())

plt.show()
