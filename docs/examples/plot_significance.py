"""
Is one ranker better than another? A paired test over queries
=============================================================

Two rankers scored on the same held-out queries give one NDCG@10 *per query*
each: paired samples. :func:`~sklearn_ranknet.metrics.ndcg_per_query` returns
them, and a paired test (Wilcoxon's signed-rank test, or the paired t-test)
says whether the mean difference could be chance. This is the standard way
ranking papers compare systems on the same queries.
"""

# %%
# Two rankers, the same test queries
# ----------------------------------
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from sklearn_ranknet import LambdaRankRanker, RankNetRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_per_query

X_train, y_train, qid_train = make_ranking(n_queries=150, random_state=0)
X_test, y_test, qid_test = make_ranking(n_queries=300, random_state=1)

rankers = {
    "LambdaRank": LambdaRankRanker(hidden_layer_sizes=(32,), k=10, random_state=0),
    "RankNet": RankNetRanker(hidden_layer_sizes=(32,), random_state=0),
}
for ranker in rankers.values():
    ranker.fit(X_train, y_train, groups=qid_train)

# %%
# One value per query
# -------------------
# ``empty_query_score=None`` leaves out the queries without a relevant
# document: every ranker scores them alike, and they would only add ties
# (zero differences) to the test.
per_query = {}
for name, ranker in rankers.items():
    ids, values = ndcg_per_query(
        y_test, ranker.predict(X_test), groups=qid_test, k=10, empty_query_score=None
    )
    per_query[name] = (ids, values)

(ids_a, a), (ids_b, b) = per_query["LambdaRank"], per_query["RankNet"]
assert np.array_equal(ids_a, ids_b)  # the same queries, in the same (sorted) order
difference = a - b
print(f"{len(difference)} queries with a relevant document")
print(f"mean NDCG@10: LambdaRank {a.mean():.4f}, RankNet {b.mean():.4f}")
print(f"mean difference {difference.mean():+.4f}; LambdaRank better on "
      f"{np.sum(difference > 0)}, worse on {np.sum(difference < 0)}, "
      f"tied on {np.sum(difference == 0)} queries")

# %%
# Paired tests
# ------------
# Per-query NDCG is bounded and often far from normal, so the signed-rank
# test is the safer default; the paired t-test tests the mean difference
# itself. A bootstrap over queries gives a confidence interval for that mean.
wilcoxon = stats.wilcoxon(a, b)
ttest = stats.ttest_rel(a, b)
rng = np.random.default_rng(0)
boot = np.array([rng.choice(difference, len(difference)).mean() for _ in range(2000)])
low, high = np.percentile(boot, [2.5, 97.5])
print(f"Wilcoxon signed-rank: statistic {wilcoxon.statistic:.1f}, p = {wilcoxon.pvalue:.3g}")
print(f"paired t-test:        t = {ttest.statistic:.2f}, p = {ttest.pvalue:.3g}")
print(f"95% bootstrap interval of the mean difference: [{low:+.4f}, {high:+.4f}]")

# %%
# A small p-value says the difference is unlikely on *these* queries under
# the null hypothesis of no difference; it says nothing about other data, and
# with several comparisons it needs a correction (e.g. Holm's). With a single
# seed per ranker it also ignores the variation between training runs: for a
# claim about the methods rather than two fitted models, repeat over seeds.
#
# Plots
# -----
# Left: each query's NDCG@10 under the two rankers (points above the diagonal
# favour LambdaRank). Right: the per-query differences, sorted.
fig, (ax_pairs, ax_diff) = plt.subplots(1, 2, figsize=(11, 4.5))
ax_pairs.scatter(b, a, s=12, alpha=0.6)
ax_pairs.plot([0, 1], [0, 1], color="black", linewidth=0.8)
ax_pairs.set_xlabel("RankNet NDCG@10")
ax_pairs.set_ylabel("LambdaRank NDCG@10")
ax_pairs.set_title("One point per test query")
ax_pairs.set_aspect("equal")

sorted_difference = np.sort(difference)
colors = np.where(sorted_difference > 0, "tab:blue", "tab:red")
ax_diff.bar(np.arange(len(sorted_difference)), sorted_difference, width=1.0, color=colors)
ax_diff.axhline(difference.mean(), color="black", linestyle="--",
                label=f"mean {difference.mean():+.4f}")
ax_diff.set_xlabel("query (sorted by difference)")
ax_diff.set_ylabel("NDCG@10: LambdaRank − RankNet")
ax_diff.set_title(f"Wilcoxon p = {wilcoxon.pvalue:.2g}, paired t p = {ttest.pvalue:.2g}")
ax_diff.legend(loc="upper left")
fig.tight_layout()
plt.show()
