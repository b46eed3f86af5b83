"""
Grid search by query with metadata routing
==========================================

``GridSearchCV`` over ``GroupKFold``, scored with
:func:`~sklearn_ranknet.metrics.ndcg_scorer` and
:func:`~sklearn_ranknet.metrics.map_scorer`. With scikit-learn's metadata
routing on, one ``groups=qid`` given to ``fit`` reaches the three places that
need it: the splitter (folds keep queries whole), each candidate's ``fit``,
and the scorers (each fold is scored query by query). See :ref:`routing`.
"""

# %%
# Routing on
# ----------
# One switch, for the whole program. (The gallery runs every example in one
# process, and turns it off again before the next one.)
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold

from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import map_scorer, ndcg_score, ndcg_scorer

sklearn.set_config(enable_metadata_routing=True)

X, y, qid = make_ranking(n_queries=120, random_state=0)
X_test, y_test, qid_test = make_ranking(n_queries=200, random_state=1)

# %%
# The search
# ----------
# Two questions: how wide a hidden layer, and does truncating LambdaRank's
# pairs at the top 10 (``k=10``, matching the NDCG@10 target) rank better than
# weighting every pair (``k=None``)? Two metrics are recorded for every
# candidate; ``refit`` chooses by NDCG@10.
search = GridSearchCV(
    LambdaRankRanker(random_state=0),
    {"hidden_layer_sizes": [(16,), (64,)], "k": [10, None]},
    cv=GroupKFold(n_splits=3),
    scoring={"NDCG@10": ndcg_scorer(10), "MAP": map_scorer()},
    refit="NDCG@10",
)
search.fit(X, y, groups=qid)

results = pd.DataFrame(search.cv_results_)
columns = ["params", "mean_test_NDCG@10", "std_test_NDCG@10", "mean_test_MAP", "std_test_MAP"]
print(results[columns].round(4).to_string(index=False))
print("best:", search.best_params_)

# %%
# The refitted best model on new queries
# --------------------------------------
# ``best_estimator_`` was refitted on all 120 training queries (``groups``
# routed to it as well). Its score on 200 queries it has never seen:
best = search.best_estimator_
print(f"test NDCG@10: {ndcg_score(y_test, best.predict(X_test), groups=qid_test, k=10):.3f}")

# %%
# The fold scores
# ---------------
# Each bar is the mean over the three folds, the ticks the scores of the
# individual folds: with 40 queries per fold, differences of a few thousandths
# are within the noise. (A fit whose training objective is still creeping
# down at ``max_iter=300`` says so with a ``ConvergenceWarning`` in the output
# above; its fold scores are valid all the same.)
labels = [f"{p['hidden_layer_sizes'][0]} units\nk={p['k']}" for p in results["params"]]
positions = np.arange(len(labels))
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=False)
for ax, metric in zip(axes, ["NDCG@10", "MAP"]):
    means = results[f"mean_test_{metric}"]
    ax.bar(positions, means, color="tab:blue", alpha=0.6)
    folds = results[[f"split{i}_test_{metric}" for i in range(3)]].to_numpy()
    for fold in folds.T:
        ax.plot(positions, fold, "_", color="black", markersize=14)
    best_index = search.best_index_
    ax.bar(best_index, means[best_index], color="tab:orange", alpha=0.8)
    ax.set_xticks(positions, labels)
    low = folds.min() - 0.02
    ax.set_ylim(low, min(1.0, folds.max() + 0.02))
    ax.set_ylabel(f"cross-validated {metric}")
    ax.set_title(f"{metric} by candidate (orange: refitted)")
fig.tight_layout()
plt.show()
