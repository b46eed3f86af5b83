r"""
RankNet by hand: a four-document query
======================================

One query, four documents with three features each and labels 3 > 2 > 1 > 0.
A linear :class:`~sklearn_ranknet.RankNetRanker` learns to order them; then
the lambdas of :ref:`lambdas` are computed by hand with numpy, from the pair
formula

.. math::

   \lambda_{ij} = \frac{-\sigma}{1 + e^{\sigma (s_i - s_j)}}, \qquad
   \lambda_i = \frac{1}{|I|} \Big( \sum_{j : (i, j) \in I} \lambda_{ij}
             - \sum_{j : (j, i) \in I} \lambda_{ji} \Big),

and the composition identity :math:`\partial C / \partial w = \sum_i
\lambda_i \, \partial s_i / \partial w` is checked against the pairwise sum
and a finite-difference derivative.
"""

# %%
# The query
# ---------
# The first feature grows with relevance, the third shrinks with it, the
# second mostly grows. ``groups`` says that all four rows are one query.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_ranknet import RankNetRanker

X = np.array(
    [
        [3.0, 2.0, 1.0],
        [1.0, 2.0, 1.0],
        [1.0, 1.0, 2.0],
        [1.0, 0.0, 3.0],
    ]
)
y = np.array([3, 2, 1, 0])
groups = np.zeros(len(y))

# %%
# A linear RankNet
# ----------------
# ``hidden_layer_sizes=()`` makes the scoring function linear, :math:`s = x
# \cdot w + b`; ``feature_scaling=None`` keeps the weights in the units of
# ``X``; L-BFGS minimizes the whole objective (RankNet's cost is a true
# objective), which suits a problem this small.
ranker = RankNetRanker(
    hidden_layer_sizes=(), feature_scaling=None, solver="lbfgs", tol=1e-4, alpha=1e-3, random_state=0
)
ranker.fit(X, y, groups=groups)

w = ranker.coefs_[0].ravel()
scores = ranker.predict(X)
print("learned weights:", np.round(w, 3))
print("scores:         ", np.round(scores, 3))
print("ranking (best first):", np.argsort(-scores) + 1, " labels:", y[np.argsort(-scores)])
print(f"L-BFGS iterations: {ranker.n_iter_}, final objective: {ranker.loss_curve_[-1]:.5f}")

# %%
# The weights have the signs the data suggests, positive, positive, negative,
# and the scores order the documents exactly by label. The L2 penalty
# (``alpha=1e-3``, light: the default is weighed against the sum of the
# query costs, and there is one query here) keeps the weights finite:
# without it, separable pairs push them to infinity.
#
# The objective by hand
# ---------------------
# The pairs are all six (i, j) with :math:`y_i > y_j`. The cost of a pair is
# :math:`\log(1 + e^{-\sigma (s_i - s_j)})`, the query's cost the mean over
# its pairs, plus :math:`\frac{\alpha}{2 n} \lVert w \rVert^2` for
# :math:`n` training queries (one here). Recomputed from
# the learned weights, it matches the ranker's last ``loss_curve_`` entry.
sigma, alpha = ranker.sigma, ranker.alpha
pairs = [(i, j) for i in range(4) for j in range(4) if y[i] > y[j]]


def cost(w, b=0.0):
    s = X @ w + b
    pair_costs = [np.logaddexp(0.0, -sigma * (s[i] - s[j])) for i, j in pairs]
    n_queries = 1
    return np.mean(pair_costs) + 0.5 * alpha / n_queries * w @ w


print(f"objective by hand:  {cost(w, ranker.intercepts_[0][0]):.6f}")
print(f"ranker.loss_curve_: {ranker.loss_curve_[-1]:.6f}")

# %%
# The lambdas of the first step
# -----------------------------
# Start from :math:`w = 0`: every score is 0, every pair is a coin toss
# (:math:`P_{ij} = 1/2`) and every pair lambda is :math:`-\sigma / 2`. Each
# document's lambda counts the documents it should beat minus those that
# should beat it, over the 6 pairs.


def lambdas(s):
    """Pair lambdas and their composition into one lambda per document."""
    pair_lambda = {(i, j): -sigma / (1.0 + np.exp(sigma * (s[i] - s[j]))) for i, j in pairs}
    per_document = np.zeros(len(s))
    for (i, j), lam in pair_lambda.items():
        per_document[i] += lam  # i should rank above j: pushed up
        per_document[j] -= lam  # j: pushed down
    return pair_lambda, per_document / len(pairs)


pair_lambda, lambda_start = lambdas(np.zeros(4))
for (i, j), lam in pair_lambda.items():
    print(f"lambda_{i + 1}{j + 1} = {lam:+.4f}")
print("lambda_i at w = 0:", np.round(lambda_start, 4), " sum:", lambda_start.sum())

# %%
# The composition identity
# ------------------------
# The gradient of the cost by the weights, computed three ways: pair by pair,
# :math:`\frac{1}{|I|}\sum_{(i,j)} \lambda_{ij} (x_i - x_j)`; document by
# document, :math:`\sum_i \lambda_i x_i` (what the network's backward pass
# receives: one number per document); and by central finite differences of
# the cost. They agree; the descent direction already has the signs of the
# learned weights.
w0 = np.zeros(3)
by_pairs = sum(lam * (X[i] - X[j]) for (i, j), lam in pair_lambda.items()) / len(pairs)
by_documents = lambda_start @ X
eps = 1e-6
by_differences = np.array(
    [(cost(w0 + eps * e) - cost(w0 - eps * e)) / (2 * eps) for e in np.eye(3)]
)
print("pair by pair:        ", np.round(by_pairs, 6))
print("document by document:", np.round(by_documents, 6))
print("finite differences:  ", np.round(by_differences, 6))
print("descent direction:   ", np.round(-by_documents, 4))

# %%
# At the learned weights the pairs are ordered with wide margins, so the
# lambdas have almost vanished: only the L2 penalty balances them.
_, lambda_end = lambdas(scores)
print("lambda_i at the learned weights:", np.array2string(lambda_end, precision=2))

# %%
# Plots
# -----
fig, axes = plt.subplot_mosaic([["scores", "loss"], ["lambdas", "lambdas"]], figsize=(9, 7))
documents = np.arange(1, 5)

axes["scores"].bar(documents, scores, color=plt.cm.viridis(y / 3))
for d, s, label in zip(documents, scores, y):
    axes["scores"].annotate(f"label {label}", (d, s), ha="center", va="bottom" if s >= 0 else "top")
axes["scores"].set_xticks(documents)
axes["scores"].set_xlabel("document")
axes["scores"].set_ylabel("learned score")
axes["scores"].set_title("Scores: ordered by label")

axes["loss"].plot(np.arange(1, len(ranker.loss_curve_) + 1), ranker.loss_curve_, marker="o")
axes["loss"].set_yscale("log")
axes["loss"].set_xlabel("L-BFGS iteration")
axes["loss"].set_ylabel("objective")
axes["loss"].set_title("loss_curve_")

width = 0.38
axes["lambdas"].bar(documents - width / 2, lambda_start, width, label="at w = 0")
axes["lambdas"].bar(documents + width / 2, lambda_end, width, label="at the learned w")
axes["lambdas"].axhline(0.0, color="black", linewidth=0.8)
axes["lambdas"].set_xticks(documents)
axes["lambdas"].set_xlabel("document (label 3, 2, 1, 0)")
axes["lambdas"].set_ylabel(r"$\lambda_i = \partial C / \partial s_i$")
axes["lambdas"].set_title("Lambdas: a negative lambda pushes the score up")
axes["lambdas"].legend()
fig.tight_layout()
plt.show()
