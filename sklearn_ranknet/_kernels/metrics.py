"""Numba kernels of the ranking metrics: gains, DCG, ideal DCG and AP.

Inputs are arranged query by query (see ``_groups.py``): query ``q`` owns
rows ``offsets[q]:offsets[q + 1]``. The ``*_chunk`` kernels handle queries
``first:last`` and are run through :func:`sklearn_ranknet._jit.over_queries`, which splits
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

from .._jit import jit
from .sort import _argsort_desc, rank_into


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

# Labels that are whole numbers below this are counted, not ranked, for the
# ideal DCG, and their gains are read from a table.
COUNTED_LABELS = 32
# AP over the whole list compares every relevant score with every
# irrelevant one (a vectorized count, ~0.14 ns a pair) unless sorting the
# smaller set and binary-searching it (~5.5 ns a row and search step) costs
# less: pairs > COUNT_PAIRS_PER_STEP * rows * log2(smaller set).
COUNT_PAIRS_PER_STEP = 32
# What ap_whole_list returns when a relevant and an irrelevant document tie.
MIXED_TIE = -2.0


@jit
def _table_gain(label, exponential, table):
    """:func:`gain` of ``label``, read from ``table`` (the gains of
    ``0 .. COUNTED_LABELS - 1``) for small whole labels."""
    if label < COUNTED_LABELS:
        whole = int(label)
        if whole == label:
            return table[whole]
    return gain(label, exponential)


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
def _discounted_sum(ranked_gains, discounts, top):
    """``sum(ranked_gains[r] * discounts[r] for r < top)``: the one DCG sum
    of the NDCG kernels. The package's fastmath lets LLVM reorder a sum
    differently in every loop; through this one loop a ranking and the ideal
    ranking that put equal gains at each rank give the same bits (NDCG 1.0
    exactly)."""
    total = 0.0
    for r in range(top):
        total += ranked_gains[r] * discounts[r]
    return total


@jit(inline=True)
def ideal_dcg_of_labels(labels, exponential, table, discounts, k, counts, order, spare, ranked_gains):
    """Ideal DCG@k of one query from its labels (gain is increasing in
    the label, so the best order of labels is the best order of gains).
    Whole labels below ``COUNTED_LABELS`` are counted instead of ranked.

    ``table`` holds the gains of ``0 .. COUNTED_LABELS - 1``; ``counts`` is
    int scratch of that length, ``order`` and ``spare`` int and
    ``ranked_gains`` float scratch of the query's length.
    """
    n = len(labels)
    top = min(k, n)
    counts[:] = 0
    counted = True
    for i in range(n):
        label = labels[i]
        if not label < COUNTED_LABELS:
            counted = False
            break
        whole = int(label)
        if whole != label:
            counted = False
            break
        counts[whole] += 1
    if counted:
        r = 0
        label = COUNTED_LABELS - 1
        while r < top:
            stop = min(r + counts[label], top)
            while r < stop:
                ranked_gains[r] = table[label]
                r += 1
            label -= 1
    else:
        rank_into(labels, top, order, spare, ranked_gains)
        for r in range(top):
            ranked_gains[r] = _table_gain(labels[order[r]], exponential, table)
    return _discounted_sum(ranked_gains, discounts, top)


@jit(inline=True)
def dcg(labels, scores, exponential, table, discounts, k, ignore_ties, order, spare, ranked_gains):
    """DCG@k of one query ranked by ``scores``; gains from ``labels`` by
    :func:`gain` (``table`` and scratch as in :func:`ideal_dcg_of_labels`).

    With ``ignore_ties=False`` each rank held by a block of tied scores gets
    the block's mean gain: the expectation over every ordering of the block.
    Only the top k is ranked; a block tied at the k-th score is completed by
    one scan of the query.
    """
    n = len(labels)
    top = min(k, n)
    rank_into(scores, top, order, spare, ranked_gains)
    for r in range(top):
        ranked_gains[r] = _table_gain(labels[order[r]], exponential, table)
    # int64, not the literal 0: a literal start would compile _tied_block a
    # second time, for Literal[int](0).
    start = np.int64(0)
    while start < top and not ignore_ties:
        end, open_ended = _tied_block(scores, order, start, top, n)
        tied = scores[order[start]]
        count = end - start
        if open_ended:  # rows past the head tied with it? (branch-free count)
            count = 0
            for i in range(n):
                count += scores[i] == tied
        if count > 1:
            gain_sum = 0.0
            if count > end - start:
                for i in range(n):
                    if scores[i] == tied:
                        gain_sum += _table_gain(labels[i], exponential, table)
            else:
                for r in range(start, end):
                    gain_sum += ranked_gains[r]
            for r in range(start, end):
                ranked_gains[r] = gain_sum / count
        start = end
    return _discounted_sum(ranked_gains, discounts, top)


@jit(inline=True)
def ap_whole_list(labels, scores, order, spare, work):
    """AP of one query over its whole list, without ranking it (relevant:
    label > 0); -1.0 when nothing is relevant, ``MIXED_TIE`` when a
    relevant and an irrelevant document have equal scores (then only
    :func:`average_precision` knows the answer).

    With ``a_j`` irrelevant documents above the j-th relevant one, AP is
    ``mean over j of j / (j + a_j)``; ``a_j`` only needs, for every document
    of one set, a count of the scores of the other set above it. Ties among
    relevant documents alone, or irrelevant ones alone, change no term, so
    this is the value for either tie convention.

    ``order`` and ``spare`` are int scratch of the query's length n,
    ``work`` float scratch of length 2n.
    """
    n = len(labels)
    # Irrelevant scores to the front of work, relevant ones to the back,
    # without a branch on the label.
    lo, hi = 0, n
    for i in range(n):
        v = scores[i]
        relevant = labels[i] > 0.0
        work[lo] = v
        work[hi - 1] = v
        lo += 1 - relevant
        hi -= relevant
    n_irrelevant, n_relevant = lo, n - lo
    if n_relevant == 0:
        return -1.0
    if n_irrelevant == 0:
        return 1.0
    # Either every pair is compared (the longer set in the inner loop), or
    # the smaller set is sorted and binary-searched for each row of the
    # other: the "side" set is counted above each "probe".
    smaller = min(n_relevant, n_irrelevant)
    depth = 1
    while (1 << depth) < smaller:
        depth += 1
    search = n_relevant * n_irrelevant > COUNT_PAIRS_PER_STEP * n * depth
    relevant_side = (n_relevant <= n_irrelevant) == search
    irrelevant, relevant = work[:lo], work[lo:n]
    side, probes = (relevant, irrelevant) if relevant_side else (irrelevant, relevant)
    m = len(side)
    if search:
        _argsort_desc(side, order[:m], spare[:m])
        for r in range(m):
            work[n + r] = side[order[r]]
        side = work[n : n + m]
    # counts[c]: probes with exactly c side scores above them.
    counts = order
    counts[: m + 1] = 0
    for p in range(len(probes)):
        v = probes[p]
        above = 0
        equal = 0
        if search:  # branch-free binary search of the descending side
            base = 0
            length = m
            while length > 1:
                half = length >> 1
                base = base + half if side[base + half] > v else base
                length -= half
            above = base + (side[base] > v)
            equal = above < m and side[min(above, m - 1)] == v
        else:
            for s in range(m):
                above += side[s] > v
                equal += side[s] == v
        if equal:
            return MIXED_TIE
        counts[above] += 1
    total = 0.0
    if relevant_side:
        # The j-th relevant document has the irrelevant ones below fewer
        # than j relevant ones above it (a running count, then the
        # divisions, which vectorize).
        above = 0
        for j in range(1, n_relevant + 1):
            above += counts[j - 1]
            work[n + j - 1] = j + above
        for j in range(1, n_relevant + 1):
            total += j / work[n + j - 1]
    else:
        # The relevant documents below exactly a irrelevant ones come next
        # in the ranking of the relevant ones.
        j = 0
        for a in range(n_irrelevant + 1):
            for _ in range(counts[a]):
                j += 1
                total += j / (j + a)
    return total / n_relevant


@jit(inline=True)
def average_precision(labels, scores, k, ignore_ties, order, spare, keys):
    """AP@k of one query (relevant: label > 0): the sum of precision at each
    relevant rank <= k, divided by ``min(k, number of relevant documents)``;
    -1.0 when no document is relevant. Ranks the top k (over the whole list
    :func:`ap_whole_list` is faster, unless relevant and irrelevant scores
    tie).

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
    rank_into(scores, top, order, spare, keys)
    total = 0.0
    before = 0
    start = np.int64(0)  # not a literal: see ndcg's loop
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
    ranked_gains = np.empty(longest)
    counts = np.empty(COUNTED_LABELS, dtype=np.int64)
    table = np.empty(COUNTED_LABELS)
    for label in range(COUNTED_LABELS):
        table[label] = gain(float(label), exponential)
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        best = ideal_dcg_of_labels(
            labels[lo:hi], exponential, table, discounts, k, counts, order[:n], spare[:n], ranked_gains[:n]
        )
        if best > 0.0:
            found = dcg(
                labels[lo:hi], scores[lo:hi], exponential, table, discounts, k, ignore_ties,
                order[:n], spare[:n], ranked_gains[:n],
            )
            # A tie-averaged gain may round an ulp above the gains it
            # averages, and the ratio above 1.
            values[q] = min(found / best, 1.0)
            empty[q] = False
        else:
            values[q] = 0.0
            empty[q] = True


# AP is computed in two passes so that a call compiles only what it needs:
# the whole-list pass answers every query of a ``map_score(k=None)`` on
# untied scores, and the ranked pass (AP@k, or relevant and irrelevant scores
# tied) is compiled only by the first call that has such a query, which a
# new user's first process (the cold-start benchmark's) does not pay.


@jit
def ap_whole_chunk(labels, scores, offsets, k, values, empty, pending, first, last):
    """AP of queries ``first:last`` that ``k`` does not cut, over their
    whole list; outputs as :func:`ndcg_chunk`, with ``empty`` marking queries
    that have no relevant document. ``pending`` is set where only
    :func:`ap_ranked_chunk` can answer (the query is longer than ``k``, or
    a relevant and an irrelevant document tie); their ``values`` and
    ``empty`` are left for it."""
    longest = longest_query(offsets, first, last)
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    work = np.empty(2 * longest)
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        ap = MIXED_TIE
        if k >= n:
            ap = ap_whole_list(labels[lo:hi], scores[lo:hi], order[:n], spare[:n], work[: 2 * n])
        pending[q] = ap == MIXED_TIE
        values[q] = max(ap, 0.0)
        empty[q] = ap == -1.0


@jit
def ap_ranked_chunk(labels, scores, offsets, k, ignore_ties, values, empty, pending, first, last):
    """AP@k, through the ranked top k, of the queries among ``first:last``
    that :func:`ap_whole_chunk` left ``pending``."""
    longest = longest_query(offsets, first, last)
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    keys = np.empty(longest)
    for q in range(first, last):
        if not pending[q]:
            continue
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        ap = average_precision(labels[lo:hi], scores[lo:hi], k, ignore_ties, order[:n], spare[:n], keys[:n])
        values[q] = max(ap, 0.0)
        empty[q] = ap < 0.0
