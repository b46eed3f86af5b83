"""Ranking one query: the stable descending order of its scores, or its head.

Every metric and LambdaRank kernel ranks through :func:`rank_into`; this is
the one place that decides how. Stable: tied values keep their input order.
Serial and allocation-free: callers pass int64 and float64 scratch arrays of the query's
length.

- A short head (k <= ``SELECT_UP_TO``) is selected, not sorted: rows below a
  cheap lower bound of the k-th largest value are dropped first, and the few
  left are ranked.
- A short query (n <= ``COUNT_SORT_UP_TO``) is sorted by counting, for each
  row, the rows that go before it: O(n^2) comparisons, but vectorized and
  free of data-dependent branches, which on random scores cost a merge sort
  more than its comparisons do.
- Otherwise a bottom-up merge sort: insertion-sorted runs, then merges of
  equal runs from both ends at once without branches (two independent chains
  of loads instead of one).
"""

import numpy as np

from .._jit import jit

# Top-k selection beats a full sort up to about this k.
SELECT_UP_TO = 64
# Selection first bounds the k-th largest value from below (the smallest of
# k block maxima) when the query has at least this many times k rows, and
# keeps only the rows at or above the bound: ~2.5 k of them on random data.
PREFILTER_FROM = 4
# Up to this many kept rows are ranked by counting; more by insertion.
COUNT_RANKS_UP_TO = 32
# Queries up to this length are sorted by counting (faster than the merge
# sort on short queries, though O(n^2)).
COUNT_SORT_UP_TO = 128
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


@jit(inline=True)
def stable_rank(keys, r):
    """The place of ``keys[r]`` in the stable descending order of ``keys``:
    the keys above it plus the equal ones before it, counted without a
    branch (O(n), vectorized). In ``[0, len(keys))``; NaN keys compare false,
    so their ranks may collide."""
    v = keys[r]
    rank = 0
    for t in range(len(keys)):
        w = keys[t]
        rank += (w > v) | ((w == v) & (t < r))
    return rank


@jit
def _count_ranks(keys, rows, order, cap):
    """``order[stable_rank(keys, r)] = rows[r]`` for every r; ranks from
    ``cap`` on all land in ``order[cap]``. ``keys`` must hold no NaN (ranks
    would collide)."""
    for r in range(len(keys)):
        order[min(stable_rank(keys, r), cap)] = rows[r]


@jit(inline=True)
def _select_top_k(values, k, order, spare, keys):
    """order[:k] = the k rows a stable descending sort puts first, in that
    order (0 < k < n). ``spare`` is int and ``keys`` float scratch of length
    n.

    The smallest of the maxima of k disjoint blocks is at most the k-th
    largest value, so rows below it cannot reach the head; the rows kept,
    still in input order, are ranked among themselves.
    """
    n = len(values)
    kept = n
    if n >= PREFILTER_FROM * k:
        size = n // k
        bound = np.inf
        for b in range(k):
            block_max = values[b * size]
            for i in range(b * size + 1, (b + 1) * size):
                block_max = max(block_max, values[i])
            bound = min(bound, block_max)
        kept = 0
        for i in range(n):
            spare[kept] = i
            kept += values[i] >= bound  # never true for NaN
        if kept < k:  # NaN scores: rank every row
            kept = n
    if kept == n:
        for i in range(n):
            spare[i] = i
    elif kept <= COUNT_RANKS_UP_TO and 2 * kept <= n:
        # The kept values copied into keys, so that the counting loop reads
        # them contiguously; order[k] is a discarded slot for the rows ranked
        # k or later. (A float view of the int scratch instead compiles more,
        # in a new user's first process: Numba's array.view.)
        kept_values = keys[:kept]
        for r in range(kept):
            kept_values[r] = values[spare[r]]
        _count_ranks(kept_values, spare[:kept], order, k)
        return
    # A variable, not the literal 0: Numba would compile _insert_desc a
    # second time, for Literal[int](0).
    first = np.int64(0)
    for r in range(k):
        _insert_desc(values, order, spare[r], first, r)
    threshold = values[order[k - 1]]
    for r in range(k, kept):
        i = spare[r]
        if values[i] > threshold:  # strict: a later tie stays out (stable)
            _insert_desc(values, order, i, first, k - 1)
            threshold = values[order[k - 1]]


@jit(inline=True)
def _merge_runs(values, src, dst, lo, mid, hi):
    """dst[lo:hi] = the stable merge of the sorted runs src[lo:mid] and
    src[mid:hi]. Equal runs are merged from the front and from the back at
    once, each step a select instead of a branch; with equal lengths
    neither end can run past its runs. Otherwise a plain merge."""
    if hi - mid == mid - lo:
        i, j, t = lo, mid, lo
        i_back, j_back, t_back = mid - 1, hi - 1, hi - 1
        for _ in range(mid - lo):
            a, b = src[i], src[j]
            front = values[b] > values[a]  # strict: ties take the left run
            dst[t] = b if front else a
            t += 1
            j += front
            i += 1 - front
            a, b = src[i_back], src[j_back]
            back = values[a] < values[b]  # strict: ties leave the right run last
            dst[t_back] = a if back else b
            t_back -= 1
            i_back -= back
            j_back -= 1 - back
            # Keep the next reads inside the runs: a pointer only steps out
            # on the last iteration, and then what it reads is never used.
            i, j = min(i, mid - 1), min(j, hi - 1)
            i_back, j_back = max(i_back, lo), max(j_back, mid)
        return
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


@jit
def _argsort_desc(values, order, spare):
    """order = stable descending argsort of values, using spare as scratch
    (both int, length n; no allocation)."""
    n = len(values)
    if n <= COUNT_SORT_UP_TO:
        nan = False
        for i in range(n):
            nan |= values[i] != values[i]
            spare[i] = i
        if not nan:
            _count_ranks(values, spare[:n], order, n)
            return
    for lo in range(0, n, RUN):
        for i in range(lo, min(lo + RUN, n)):
            _insert_desc(values, order, i, lo, i)
    src, dst = order, spare
    in_spare = False
    width = RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            _merge_runs(values, src, dst, lo, mid, hi)
        src, dst = dst, src
        in_spare = not in_spare
        width *= 2
    if in_spare:
        # A loop, not order[:n] = spare[:n]: Numba's shape-checked slice copy
        # compiles seconds of error-message code in a new user's first process.
        for i in range(n):
            order[i] = spare[i]


@jit
def rank_into(values, k, order, spare, keys):
    """Fill ``order`` so that ``order[:min(k, n)]`` is the head of the stable
    descending sort of ``values`` (ties in input order).

    ``order`` and ``spare`` are int and ``keys`` float scratch of length n
    (``keys`` is overwritten; the caller may reuse it afterwards). Small k uses
    selection, about O(n + k^2) with no sort; otherwise the whole order is
    sorted. Returns True when only the head was ranked (selection).
    """
    n = len(values)
    if k < n and k <= SELECT_UP_TO:
        _select_top_k(values, k, order, spare, keys)
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
