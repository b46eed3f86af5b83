"""Ranking one query: the stable descending order of its scores, or its head.

Every metric and LambdaRank kernel ranks through :func:`rank_into`; this is
the one place that decides how (selection for a short head, a sort
otherwise). Stable: tied values keep their input order. Serial and
allocation-free: callers pass int64 scratch arrays of the query's length.
"""

import numpy as np

from ._jit import jit

# Top-k selection by insertion beats a full sort up to about this k.
SELECT_UP_TO = 64
# Merge sort starts from insertion-sorted runs of this length.
RUN = 16


@jit
def _insert_desc(values, order, i, lo, j):
    """Place row i at position j of order[lo:], shifting strictly smaller
    values right: equal values keep their input order (stability)."""
    v = values[i]
    while j > lo and values[order[j - 1]] < v:
        order[j] = order[j - 1]
        j -= 1
    order[j] = i


@jit
def _select_top_k(values, k, order):
    """order[:k] = the k rows a stable descending sort puts first, in that
    order. One scan; a row enters only if strictly above the current k-th."""
    filled = 0
    for i in range(len(values)):
        if filled < k:
            _insert_desc(values, order, i, 0, filled)
            filled += 1
        elif values[i] > values[order[k - 1]]:
            _insert_desc(values, order, i, 0, k - 1)


@jit
def _argsort_desc(values, order, spare):
    """order = stable descending argsort of values: insertion-sorted runs,
    then bottom-up merges between order and spare (no allocation)."""
    n = len(values)
    for lo in range(0, n, RUN):
        for i in range(lo, min(lo + RUN, n)):
            _insert_desc(values, order, i, lo, i)
    src, dst = order, spare
    in_spare = False
    width = RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, t = lo, mid, lo
            while i < mid and j < hi:
                if values[src[j]] > values[src[i]]:  # strict: stable
                    dst[t] = src[j]
                    j += 1
                else:
                    dst[t] = src[i]
                    i += 1
                t += 1
            while i < mid:
                dst[t] = src[i]
                i += 1
                t += 1
            while j < hi:
                dst[t] = src[j]
                j += 1
                t += 1
        src, dst = dst, src
        in_spare = not in_spare
        width *= 2
    if in_spare:
        order[:n] = spare[:n]


@jit
def rank_into(values, k, order, spare):
    """Fill ``order`` so that ``order[:min(k, n)]`` is the head of the stable
    descending sort of ``values`` (ties in input order).

    ``order`` and ``spare`` are int scratch of length n. Small k uses
    selection, O(n + k log(n / k) k) with no sort; otherwise the whole order
    is sorted. Returns True when only the head was ranked (selection).
    """
    n = len(values)
    if k < n and k <= SELECT_UP_TO:
        _select_top_k(values, k, order)
        return True
    _argsort_desc(values, order, spare)
    return False


@jit
def rank_order(scores):
    """Row positions sorted by descending score; ties keep input order."""
    n = len(scores)
    order = np.empty(n, dtype=np.int64)
    _argsort_desc(scores, order, np.empty(n, dtype=np.int64))
    return order
