"""Numba kernels of the ranking metrics: gains, DCG, ideal DCG and AP.

Inputs are arranged query by query (see ``_groups.py``): query ``q`` owns
rows ``offsets[q]:offsets[q + 1]``. The ``*_chunk`` kernels handle queries
``first:last`` and are run through :func:`._jit.over_queries`, which splits
the queries over threads; each call allocates its own scratch space and each
query writes only its own outputs, so results do not depend on the number
of threads. No function here imports scikit-learn or validates input:
callers pass clean, C-contiguous float64 arrays and int64 offsets.

Conventions shared by every metric (one DCG for the whole package):

- gain is ``2**label - 1`` (exponential) or ``label`` (linear);
- the discount of 0-based rank ``r`` is ``1 / log2(r + 2)``;
- ranking is by descending score; ``ignore_ties=False`` gives the expected
  value over every ordering of tied scores, ``True`` keeps input order.
"""

import numpy as np

from ._jit import jit
from ._sort import rank_into


@jit
def longest_query(offsets, first, last):
    """Rows of the longest query among ``first:last``: a chunk's scratch size."""
    longest = 0
    for q in range(first, last):
        longest = max(longest, offsets[q + 1] - offsets[q])
    return longest


# --------------------------------------------------------------------------
# Gains and discounts


@jit
def gain(label, exponential):
    """``2**label - 1`` if ``exponential`` else ``label``."""
    if not exponential:
        return label
    # exp2 is exact on integer labels (LightGBM's gain table); expm1 keeps
    # the precision of fractional labels below 1.
    return np.expm1(label * np.log(2.0)) if label < 1.0 else np.exp2(label) - 1.0


@jit
def label_gains(labels, exponential):
    """:func:`gain` of every label, shape (n,)."""
    out = np.empty(len(labels))
    for i in range(len(labels)):
        out[i] = gain(labels[i], exponential)
    return out


def discount_table(n):
    """Discounts ``1 / log2(r + 2)`` for the 0-based ranks ``r < n``."""
    return 1.0 / np.log2(np.arange(n, dtype=np.float64) + 2.0)


# --------------------------------------------------------------------------
# Metrics of one query


@jit
def _tied_block(scores, order, start, top, n):
    """The block of rows tied with ``scores[order[start]]`` in the ranked
    head ``order[:top]``: returns its end in the head and whether the block
    may continue past the head (then only a scan of all rows finds it)."""
    tied = scores[order[start]]
    end = start + 1
    while end < top and scores[order[end]] == tied:
        end += 1
    return end, end == top and top < n


@jit
def ideal_dcg(gains, discounts, k, order, spare):
    """DCG@k of the best ordering of one query's ``gains``."""
    top = min(k, len(gains))
    rank_into(gains, top, order, spare)
    total = 0.0
    for r in range(top):
        total += gains[order[r]] * discounts[r]
    return total


@jit
def dcg(gains, scores, discounts, k, ignore_ties, order, spare):
    """DCG@k of one query ranked by ``scores``.

    With ``ignore_ties=False`` each block of tied scores contributes its mean
    gain times the sum of the discounts of the ranks it occupies: the
    expectation over every ordering of the block. Only the top k is ranked;
    a block tied at the k-th score is completed by one scan of the query.
    """
    n = len(gains)
    top = min(k, n)
    rank_into(scores, top, order, spare)
    total = 0.0
    if ignore_ties:
        for r in range(top):
            total += gains[order[r]] * discounts[r]
        return total
    start = 0
    while start < top:
        end, open_ended = _tied_block(scores, order, start, top, n)
        gain_sum = 0.0
        count = 0
        if open_ended:
            tied = scores[order[start]]
            for i in range(n):
                if scores[i] == tied:
                    gain_sum += gains[i]
                    count += 1
        else:
            for r in range(start, end):
                gain_sum += gains[order[r]]
            count = end - start
        discount_sum = 0.0
        for r in range(start, end):
            discount_sum += discounts[r]
        total += gain_sum / count * discount_sum
        start = end
    return total


@jit
def average_precision(labels, scores, k, ignore_ties, order, spare):
    """AP@k of one query (relevant: label > 0): the sum of precision at each
    relevant rank <= k, divided by ``min(k, number of relevant documents)``;
    -1.0 when no document is relevant.

    With ``ignore_ties=False`` this is the expectation over every ordering of
    tied scores. Inside a tied block of ``m`` documents holding ``c``
    relevant ones, preceded by ``before`` relevant documents, the position
    ``j`` places into the block is relevant with probability ``c / m``; given
    that, ``j * (c - 1) / (m - 1)`` relevant documents are expected ahead of
    it in the block. So the expected precision term at that rank is
    ``(c / m) * (before + 1 + j * (c - 1) / (m - 1)) / rank``.
    """
    n = len(labels)
    n_relevant = 0
    for i in range(n):
        n_relevant += labels[i] > 0.0
    if n_relevant == 0:
        return -1.0
    top = min(k, n)
    rank_into(scores, top, order, spare)
    total = 0.0
    before = 0
    start = 0
    while start < top:
        if ignore_ties:
            end, open_ended = start + 1, False
        else:
            end, open_ended = _tied_block(scores, order, start, top, n)
        m = 0
        c = 0
        if open_ended:
            tied = scores[order[start]]
            for i in range(n):
                if scores[i] == tied:
                    m += 1
                    c += labels[i] > 0.0
        else:
            m = end - start
            for r in range(start, end):
                c += labels[order[r]] > 0.0
        for r in range(start, end):
            j = r - start
            ahead = j * (c - 1) / (m - 1) if m > 1 else 0.0
            total += (c / m) * (before + 1 + ahead) / (r + 1)
        before += c
        start = end
    return total / min(k, n_relevant)


# --------------------------------------------------------------------------
# Metrics of every query (chunk kernels)


@jit
def ndcg_chunk(labels, scores, offsets, exponential, discounts, k, ignore_ties, values, empty, first, last):
    """NDCG@k of queries ``first:last``, written to ``values`` (0.0 where the
    ideal DCG is 0) and ``empty`` (True there), both of shape (n_queries,)."""
    longest = longest_query(offsets, first, last)
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    gains = np.empty(longest)
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        for i in range(n):
            gains[i] = gain(labels[lo + i], exponential)
        best = ideal_dcg(gains[:n], discounts, k, order[:n], spare[:n])
        if best > 0.0:
            found = dcg(gains[:n], scores[lo:hi], discounts, k, ignore_ties, order[:n], spare[:n])
            # The tie-averaged DCG and the ideal DCG are summed in different
            # orders; rounding may put the ratio an ulp above 1.
            values[q] = min(found / best, 1.0)
            empty[q] = False
        else:
            values[q] = 0.0
            empty[q] = True


@jit
def ap_chunk(labels, scores, offsets, k, ignore_ties, values, empty, first, last):
    """AP@k of queries ``first:last``; outputs as :func:`ndcg_chunk`, with
    ``empty`` marking queries that have no relevant document."""
    longest = longest_query(offsets, first, last)
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        ap = average_precision(labels[lo:hi], scores[lo:hi], k, ignore_ties, order[: hi - lo], spare[: hi - lo])
        values[q] = max(ap, 0.0)
        empty[q] = ap < 0.0


@jit
def ideal_dcg_chunk(gains, offsets, discounts, k, out, first, last):
    """Ideal DCG@k of queries ``first:last`` into ``out``: cached once per
    fit, labels never change."""
    longest = longest_query(offsets, first, last)
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        out[q] = ideal_dcg(gains[lo:hi], discounts, k, order[: hi - lo], spare[: hi - lo])
