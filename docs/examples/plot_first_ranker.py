"""
A first ranker
==============

Fit a :class:`~sklearn_ranknet.LambdaRankRanker` on a synthetic ranking
problem, score held-out queries with :func:`~sklearn_ranknet.metrics.ndcg_score`,
and compare with a pointwise baseline: a ridge regression on the labels.
"""

# %%
# Data: queries, documents, graded labels
# ---------------------------------------
# :func:`~sklearn_ranknet.datasets.make_ranking` draws a ranking problem shaped
# like the public LTR collections: each row is a (query, document) pair with
# 20 features on very different scales, ``y`` holds graded labels 0..4, and
# ``qid`` the query id of each row. Two seeds give two independent samples of
# the same problem: one to train on, one to test on.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import Ridge

from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score

X_train, y_train, qid_train = make_ranking(n_queries=200, random_state=0)
X_test, y_test, qid_test = make_ranking(n_queries=200, random_state=1)

print(f"{X_train.shape[0]} training rows in {len(np.unique(qid_train))} queries")
print("labels 0..4:", np.bincount(y_train.astype(int)))

# %%
# Fit and predict
# ---------------
# ``fit`` takes the query ids as ``groups``; raw features need no scaler (the
# ranker standardizes its inputs). ``predict`` scores each row on its own, so
# it needs no query ids; only the order of the scores within each query
# matters.
ranker = LambdaRankRanker(random_state=0).fit(X_train, y_train, groups=qid_train)
scores = ranker.predict(X_test)

print(f"stopped after {ranker.n_iter_} epochs")
print(f"NDCG@10 on the test queries: {ndcg_score(y_test, scores, groups=qid_test, k=10):.3f}")
print(f"the same through score():    {ranker.score(X_test, y_test, groups=qid_test):.3f}")

# %%
# A pointwise baseline
# --------------------
# Regressing the labels with a ridge regression and ranking by the prediction
# is the simplest approach, and a fair baseline. Random scores show where
# NDCG starts on this problem.
baseline = Ridge().fit(X_train, y_train)
random_scores = np.random.default_rng(0).random(len(y_test))

ks = np.arange(1, 11)
curves = {
    "LambdaRankRanker": scores,
    "Ridge (pointwise)": baseline.predict(X_test),
    "random scores": random_scores,
}
ndcg_at = {
    name: [ndcg_score(y_test, s, groups=qid_test, k=k) for k in ks]
    for name, s in curves.items()
}
for name, values in ndcg_at.items():
    print(f"{name:>18}: NDCG@10 = {values[-1]:.3f}")

# %%
# Plot NDCG@k and the training curve
# ----------------------------------
# ``loss_curve_`` is the training objective after each epoch: here the pair
# cross-entropy weighted by the change of NDCG of each pair, on a fixed sample
# of training queries.
fig, (ax_ndcg, ax_loss) = plt.subplots(1, 2, figsize=(10, 4))
for (name, values), marker in zip(ndcg_at.items(), "osx"):
    ax_ndcg.plot(ks, values, marker=marker, label=name)
ax_ndcg.set_xlabel("k")
ax_ndcg.set_ylabel("mean NDCG@k over test queries")
ax_ndcg.set_xticks(ks)
ax_ndcg.set_title("Held-out ranking quality")
ax_ndcg.legend()

ax_loss.plot(np.arange(1, len(ranker.loss_curve_) + 1), ranker.loss_curve_)
ax_loss.set_xlabel("epoch")
ax_loss.set_ylabel("training objective")
ax_loss.set_title("LambdaRankRanker.loss_curve_")
fig.tight_layout()
plt.show()
