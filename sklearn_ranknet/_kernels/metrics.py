"""Numba kernels of the ranking metrics: gains, DCG, ideal DCG, AP, RR and ERR.

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

RR and ERR discount by ``1 / rank`` instead (ranks from 1): they are the
expected reciprocal rank at which a user stops reading.
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


@jit(inline=True)
def reciprocal_rank(labels, scores, k, ignore_ties):
    """RR@k of one query (relevant: label > 0): 1 / the rank of its first
    relevant document, 0 when that rank is below ``k``; -1.0 when no document
    is relevant. Nothing is sorted: the first relevant document is in the
    block of documents tied at the best score of a relevant one, after the
    ``above`` documents scored higher.

    With ``ignore_ties=True`` it is the block's first relevant row in input
    order. With ``ignore_ties=False`` this is the expectation over every
    ordering of the block: of its ``m`` documents, ``r`` relevant, the first
    relevant one is the block's j-th with probability
    ``C(m - j, r - 1) / C(m, r)``: ``r / m`` for j = 1, and each next one the
    previous times ``(m - j - r + 2) / (m - j + 1)`` (factors in [0, 1], no
    factorial to overflow).
    """
    n = len(labels)
    n_relevant = 0
    best = -np.inf  # scores are finite
    for i in range(n):
        relevant = labels[i] > 0.0
        n_relevant += relevant
        if relevant:
            best = max(best, scores[i])
    if n_relevant == 0:
        return -1.0
    above = 0
    m = 0
    r = 0
    ahead = 0  # rows of the block before its first relevant one in input order
    for i in range(n):
        above += scores[i] > best
        if scores[i] == best:
            m += 1
            if labels[i] > 0.0:
                r += 1
            elif r == 0:
                ahead += 1
    if ignore_ties:
        rank = above + ahead + 1
        return 1.0 / rank if rank <= k else 0.0
    total = 0.0
    chance = r / m
    for j in range(1, min(m - r + 1, k - above) + 1):
        if j > 1:
            chance *= (m - j - r + 2) / (m - j + 1)
        total += chance / (above + j)
    return total


@jit
def _tied_err(gains, top_gain, before, k, by_gain, spare, means):
    """A tied block's share of ERR@k, times ``m`` / the chance of reading
    past the ``before`` ranks above it: ``sum over documents d of R_d *
    sum over j <= min(m, k - before) of M_{j-1}(x without d) / (before + j)``.

    ``gains`` are the block's ``m`` gains ``2**label - 1``; ``R = gain /
    top_gain`` is a document's chance to stop the user and ``x = 1 - R``.
    In a random order of the block, document d is its j-th with chance
    1 / m, after a uniformly random (j - 1)-subset of the others, which the
    user reads past with chance the mean product of their ``x``:
    ``M_{j-1}``, the elementary symmetric mean. ``M_t`` over a growing set
    gains one item at a time, ``M_t(n + 1) = (t x M_{t-1}(n) + (n + 1 - t)
    M_t(n)) / (n + 1)``, a convex combination that stays in [0, 1]. Documents
    of equal gain share it, so it is computed once per distinct gain: O(m
    depth) each, with ``depth = min(m, k - before)`` ranks that count.

    ``by_gain`` and ``spare`` are int scratch of length m, ``means`` float
    scratch of length ``depth`` or more.
    """
    m = len(gains)
    depth = min(m, k - before)
    _argsort_desc(gains, by_gain, spare)
    total = 0.0
    run = 0
    while run < m:
        g = gains[by_gain[run]]
        if g == 0.0:  # gains descend: no document left that stops the user
            break
        count = 1
        while run + count < m and gains[by_gain[run + count]] == g:
            count += 1
        left_out = by_gain[run]
        means[0] = 1.0
        for t in range(1, depth):
            means[t] = 0.0
        size = 0
        for i in range(m):
            if i == left_out:
                continue
            x = (top_gain - gains[i]) / top_gain
            size += 1
            for t in range(min(size, depth - 1), 0, -1):
                means[t] = (t * x * means[t - 1] + (size - t) * means[t]) / size
        reach = 0.0
        for j in range(1, depth + 1):
            reach += means[j - 1] / (before + j)
        total += count * (g / top_gain) * reach
        run += count
    return total


@jit(inline=True)
def expected_reciprocal_rank(labels, scores, exponential, top_gain, k, ignore_ties, order, spare, keys,
                             by_gain, by_gain_spare, means):
    """ERR@k of one query (Chapelle et al., 2009), by the cascade model: the
    user reads down the ranking and stops at rank r with chance
    ``R_r = gain(label) / top_gain``; ERR@k is ``sum over r <= k of R_r
    prod_{i < r} (1 - R_i) / r``. -1.0 when no label is > 0.

    With ``ignore_ties=False`` this is the expectation over every ordering
    of tied scores. The chance of reading past a block does not depend on
    the order inside it, so each block's own share is averaged
    (:func:`_tied_err`) and the blocks chained. Only the top k is ranked; a
    block tied at the k-th score is completed by one scan of the query.

    ``exponential`` is True (a value, not the literal: see ``err_chunk``);
    ``order``, ``spare``, ``by_gain`` and ``by_gain_spare`` are int and
    ``keys`` and ``means`` float scratch of the query's length.
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
    reading = 1.0  # the chance that the user reads past the ranks so far
    start = np.int64(0)  # not a literal: see ndcg's loop
    while start < top:
        if ignore_ties:
            end, open_ended = start + 1, False
        else:
            end, open_ended = _tied_block(scores, order, start, top, n)
        m = 0  # the block's gains into keys[:m] (ranking is done with keys)
        if open_ended:
            tied = scores[order[start]]
            for i in range(n):
                if scores[i] == tied:
                    keys[m] = gain(labels[i], exponential)
                    m += 1
        else:
            for r in range(start, end):
                keys[m] = gain(labels[order[r]], exponential)
                m += 1
        if m == 1:
            total += reading * (keys[0] / top_gain) / (start + 1)
        else:
            share = _tied_err(keys[:m], top_gain, start, k, by_gain[:m], by_gain_spare[:m], means)
            total += reading * share / m
        for t in range(m):
            # Exact for whole labels: top_gain - gain is a whole number.
            reading *= (top_gain - keys[t]) / top_gain
        start = end
    return total


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


@jit
def rr_chunk(labels, scores, offsets, k, ignore_ties, values, empty, first, last):
    """RR@k of queries ``first:last``; outputs as :func:`ndcg_chunk`, with
    ``empty`` marking queries that have no relevant document."""
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        rr = reciprocal_rank(labels[lo:hi], scores[lo:hi], k, ignore_ties)
        values[q] = max(rr, 0.0)
        empty[q] = rr < 0.0


@jit
def err_chunk(labels, scores, offsets, top_gain, k, ignore_ties, values, empty, first, last):
    """ERR@k of queries ``first:last``, with stop chances ``(2**label - 1) /
    top_gain`` (``top_gain = 2**max_label``); outputs as :func:`ndcg_chunk`,
    with ``empty`` marking queries that have no label > 0."""
    longest = longest_query(offsets, first, last)
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    by_gain = np.empty(longest, dtype=np.int64)
    by_gain_spare = np.empty(longest, dtype=np.int64)
    keys = np.empty(longest)
    means = np.empty(longest)
    # ERR's gain is exponential. A computed True, not the literal: a literal
    # argument would compile gain() a second time, for Literal[bool](True).
    exponential = top_gain > 0.0
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        err = expected_reciprocal_rank(
            labels[lo:hi], scores[lo:hi], exponential, top_gain, k, ignore_ties,
            order[:n], spare[:n], keys[:n], by_gain[:n], by_gain_spare[:n], means[:n],
        )
        values[q] = max(err, 0.0)
        empty[q] = err < 0.0
