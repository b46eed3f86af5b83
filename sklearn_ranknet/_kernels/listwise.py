"""Numba kernel of the listwise softmax cross-entropy (ListNet, top-one form).

For a query with scores s and labels y, the target distribution puts
p_i = y_i / sum(y) on each document and the model's distribution is
softmax(sigma * s). The cost is their cross-entropy,

    C = -sum_i p_i log softmax(sigma * s)_i = logsumexp(sigma * s) - sigma * sum_i p_i s_i,

and its gradient dC/ds_i = sigma * (softmax(sigma * s)_i - p_i): O(n) per
query, one exponential per document and one logarithm per query. A query
whose labels are all 0 has no target distribution; it costs 0 and pushes
nothing (as in TF-Ranking's ``softmax_loss``). Layout and thread rules as in
``metrics.py``; run through :func:`sklearn_ranknet._jit.over_queries`.
"""

import numpy as np

from .._jit import jit
from .pair_lambdas import _exp_nonpositive


@jit(inline=True)
def _softmax_query(scores, labels, sigma, with_cost, grad):
    """Gradient of one query into ``grad``; returns its cost (0 unless
    ``with_cost``)."""
    n = len(scores)
    total = 0.0
    top = -np.inf
    for i in range(n):
        total += labels[i]
        top = max(top, sigma * scores[i])
    if total <= 0.0:
        grad[:] = 0.0
        return 0.0
    # exp(sigma * s - max) <= 1: no overflow, and the largest term is 1, so
    # the normalizer never underflows.
    normalizer = 0.0
    for i in range(n):
        grad[i] = _exp_nonpositive(sigma * scores[i] - top)
        normalizer += grad[i]
    share = 1.0 / normalizer
    inverse_total = 1.0 / total
    cost = 0.0
    for i in range(n):
        target = labels[i] * inverse_total
        grad[i] = sigma * (grad[i] * share - target)
        cost += target * scores[i]
    if not with_cost:
        return 0.0
    return top + np.log(normalizer) - sigma * cost


@jit
def softmax_chunk(scores, labels, offsets, sigma, with_cost, grad, cost, first, last):
    """ListNet's dC/ds of queries ``first:last`` into ``grad`` and their
    costs into ``cost``.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,)
        Current scores, query by query.
    labels : ndarray of shape (n_samples,)
        Relevance labels (any non-negative reals), query by query, any order
        inside a query.
    offsets : ndarray of shape (n_queries + 1,)
    sigma : float
        Inverse temperature of the softmax.
    with_cost : bool
        Also compute the cost (one log per query).
    grad : ndarray of shape (n_samples,)
        Output.
    cost : ndarray of shape (n_queries,)
        Output.
    first, last : int
        The queries this call handles.
    """
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        cost[q] = _softmax_query(scores[lo:hi], labels[lo:hi], sigma, with_cost, grad[lo:hi])
