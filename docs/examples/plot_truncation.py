"""
Truncation: LambdaRank's ``k`` on a 200,000-document query
==========================================================

With ``k`` set, :class:`~sklearn_ranknet.LambdaRankRanker` weights pairs by
the change of NDCG@k and visits only the pairs with a document in the current
top k: a query of n documents costs O(n k) time and O(n) memory instead of
O(n²) (see :ref:`lambdas`). This example trains on one query of 200,000
documents, which has about 2·10¹⁰ document pairs, and then looks at what
``k`` does to ranking quality on ordinary queries.
"""

# %%
# One query of 200,000 documents
# ------------------------------
# A single query, five features, graded labels. (LightGBM refuses queries of
# more than 10,000 documents.)
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score

n_docs = 200_000
X, y, qid = make_ranking(
    n_queries=1, n_features=5, n_informative=3, min_docs=n_docs, max_docs=n_docs, random_state=0
)
counts = np.bincount(y.astype(int))
# Pairs with different labels: all pairs minus the pairs within each grade.
differing = (n_docs * (n_docs - 1) - np.sum(counts * (counts - 1))) // 2
print(f"{len(y):,} documents in {len(np.unique(qid))} query; labels 0..4: {counts}")
print(f"pairs with different labels: {differing:,}")

# %%
# One epoch for each k
# --------------------
# A linear model and a single epoch (``max_iter=1``): the one minibatch is the
# whole query, so the epoch is one forward pass, one call of the lambda
# kernel, and one backward pass. ``max_iter=1`` stops training before it
# converges, on purpose, and the ranker says so with a ``ConvergenceWarning``,
# silenced here.
#
# The times are wall-clock times of the machine that built this page, with
# whatever else it was doing: illustrative, not a benchmark (the measured
# figures are in :doc:`/benchmarks`, "Scale, memory and threads").
def one_epoch(k):
    ranker = LambdaRankRanker(
        hidden_layer_sizes=(), k=k, max_iter=1, early_stopping=False, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        started = time.perf_counter()
        ranker.fit(X, y, groups=qid)
        return time.perf_counter() - started


one_epoch(10)  # once untimed: the first fit of a process loads the compiled kernels
k_values = [1, 10, 30, 100, 300, 1000]
epoch_seconds = []
for k in k_values:
    epoch_seconds.append(one_epoch(k))
    print(f"k={k:>5}: one epoch in {epoch_seconds[-1]:.2f} s, "
          f"at most {n_docs * k:,} pairs visited")

# %%
# The time grows with k, from a base that does not depend on k (ranking the
# top k, gathering the rows, the forward and backward passes). Without
# truncation the kernel would visit every one of the 10¹⁰ pairs with
# different labels in every epoch: over a thousand times the pairs of k=30.
#
# What k does to quality
# ----------------------
# On a problem of ordinary queries (5 to 100 documents), train with several
# k and score NDCG@10 and NDCG over the whole list on held-out queries. A
# small network keeps the example short.
X_train, y_train, qid_train = make_ranking(n_queries=150, max_docs=100, random_state=1)
X_test, y_test, qid_test = make_ranking(n_queries=300, max_docs=100, random_state=2)

quality_k = [1, 3, 10, 30, None]
ndcg10, ndcg_all = [], []
for k in quality_k:
    ranker = LambdaRankRanker(hidden_layer_sizes=(32,), k=k, random_state=0)
    ranker.fit(X_train, y_train, groups=qid_train)
    s = ranker.predict(X_test)
    ndcg10.append(ndcg_score(y_test, s, groups=qid_test, k=10))
    ndcg_all.append(ndcg_score(y_test, s, groups=qid_test))
    print(f"k={str(k):>4}: NDCG@10 {ndcg10[-1]:.3f}, NDCG {ndcg_all[-1]:.3f}, {ranker.n_iter_} epochs")

# %%
# A very small k throws away most of the pairs that order the rest of the
# list; from k around the evaluation depth on, the differences are small
# here, while a long query becomes much cheaper. Which k ranks best depends
# on the data: treat it as a hyperparameter (see
# :ref:`sphx_glr_auto_examples_plot_grid_search.py`). A fit that reaches
# ``max_iter`` before its training objective settles says so with a
# ``ConvergenceWarning``, shown in the output above rather than hidden.
fig, (ax_time, ax_quality) = plt.subplots(1, 2, figsize=(11, 4))
ax_time.plot(k_values, epoch_seconds, marker="o")
ax_time.set_xscale("log")
ax_time.set_xlabel("k")
ax_time.set_ylabel("seconds (illustrative)")
ax_time.set_title(f"One epoch on one query of {n_docs:,} documents")

labels = [str(k) for k in quality_k]
positions = np.arange(len(quality_k))
ax_quality.plot(positions, ndcg10, marker="o", label="NDCG@10")
ax_quality.plot(positions, ndcg_all, marker="s", label="NDCG (whole list)")
ax_quality.set_xticks(positions, labels)
ax_quality.set_xlabel("k used in training")
ax_quality.set_ylabel("mean over test queries")
ax_quality.set_title("Quality on held-out queries")
ax_quality.legend()
fig.tight_layout()
plt.show()
