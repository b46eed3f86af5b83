"""Numba kernels: per-query ranking metrics and, later, pair lambdas.

Inputs are arranged query by query (see ``_groups.py``): query ``q`` owns
rows ``offsets[q]:offsets[q + 1]``. Drivers loop ``prange`` over queries and
each iteration writes only its own query's outputs, so results do not depend
on the number of threads. No function here imports scikit-learn or validates
input: callers pass clean float64 arrays.

Conventions shared by every metric (one DCG for the whole package):

- gain is ``2**label - 1`` (exponential) or ``label`` (linear);
- the discount of 0-based rank ``r`` is ``1 / log2(r + 2)``;
- ranking is by descending score; ``ignore_ties=False`` gives the expected
  value over every ordering of tied scores, ``True`` keeps input order.
"""

import numpy as np
from numba import prange

from ._jit import jit


def label_gains(labels, exponential):
    """Gain of each label: ``2**label - 1`` if ``exponential`` else ``label``."""
    labels = np.asarray(labels, dtype=np.float64)
    return np.exp2(labels) - 1.0 if exponential else labels.copy()


def discount_table(n):
    """Discounts ``1 / log2(r + 2)`` for the 0-based ranks ``r < n``."""
    return 1.0 / np.log2(np.arange(n, dtype=np.float64) + 2.0)


@jit()
def rank_order(scores):
    """Row positions sorted by descending score; ties keep input order."""
    return np.argsort(-scores, kind="mergesort")


@jit()
def ideal_dcg(gains, discounts, k):
    """DCG@k of the best possible ordering of one query's ``gains``."""
    ordered = np.sort(gains)
    n = len(gains)
    total = 0.0
    for r in range(min(k, n)):
        total += ordered[n - 1 - r] * discounts[r]
    return total


@jit()
def dcg(gains, scores, discounts, k, ignore_ties):
    """DCG@k of one query ranked by ``scores``.

    With ``ignore_ties=False`` each block of tied scores contributes its mean
    gain times the sum of the discounts of the ranks it occupies: the
    expectation over every ordering of the block.
    """
    n = len(gains)
    top = min(k, n)
    order = rank_order(scores)
    total = 0.0
    if ignore_ties:
        for r in range(top):
            total += gains[order[r]] * discounts[r]
        return total
    start = 0
    while start < top:
        tied = scores[order[start]]
        gain_sum = gains[order[start]]
        end = start + 1
        while end < n and scores[order[end]] == tied:
            gain_sum += gains[order[end]]
            end += 1
        discount_sum = 0.0
        for r in range(start, min(end, top)):
            discount_sum += discounts[r]
        total += gain_sum / (end - start) * discount_sum
        start = end
    return total


@jit()
def average_precision(relevant, scores, k, ignore_ties):
    """AP@k of one query: the sum of precision at each relevant rank <= k,
    divided by ``min(k, number of relevant documents)``.

    ``relevant`` is a boolean array and must hold at least one True.

    With ``ignore_ties=False`` this is the expectation over every ordering of
    tied scores. Inside a tied block of ``m`` documents holding ``c``
    relevant ones, preceded by ``before`` relevant documents, the position
    ``j`` places into the block is relevant with probability ``c / m``; given
    that, ``j * (c - 1) / (m - 1)`` relevant documents are expected ahead of
    it in the block. So the expected precision term at that rank is
    ``(c / m) * (before + 1 + j * (c - 1) / (m - 1)) / rank``.
    """
    n = len(relevant)
    top = min(k, n)
    n_relevant = 0
    for i in range(n):
        n_relevant += relevant[i]
    order = rank_order(scores)
    total = 0.0
    before = 0
    start = 0
    while start < top:
        end = start + 1
        if not ignore_ties:
            while end < n and scores[order[end]] == scores[order[start]]:
                end += 1
        m = end - start
        c = 0
        for r in range(start, end):
            c += relevant[order[r]]
        for r in range(start, min(end, top)):
            j = r - start
            ahead = j * (c - 1) / (m - 1) if m > 1 else 0.0
            total += (c / m) * (before + 1 + ahead) / (r + 1)
        before += c
        start = end
    return total / min(k, n_relevant)


@jit(parallel=True)
def ndcg_per_query(gains, scores, offsets, discounts, k, ignore_ties):
    """NDCG@k of every query.

    Returns
    -------
    values : ndarray of shape (n_queries,)
        NDCG@k; 0.0 where the ideal DCG is 0.
    empty : ndarray of shape (n_queries,), bool
        True where the ideal DCG is 0 (no document with positive gain).
    """
    n_queries = len(offsets) - 1
    values = np.zeros(n_queries)
    empty = np.zeros(n_queries, dtype=np.bool_)
    for q in prange(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        best = ideal_dcg(gains[lo:hi], discounts, k)
        if best > 0.0:
            values[q] = dcg(gains[lo:hi], scores[lo:hi], discounts, k, ignore_ties) / best
        else:
            empty[q] = True
    return values, empty


@jit(parallel=True)
def ap_per_query(relevant, scores, offsets, k, ignore_ties):
    """AP@k of every query; same outputs as :func:`ndcg_per_query`, with
    ``empty`` marking queries that have no relevant document."""
    n_queries = len(offsets) - 1
    values = np.zeros(n_queries)
    empty = np.zeros(n_queries, dtype=np.bool_)
    for q in prange(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        if np.any(relevant[lo:hi]):
            values[q] = average_precision(relevant[lo:hi], scores[lo:hi], k, ignore_ties)
        else:
            empty[q] = True
    return values, empty
