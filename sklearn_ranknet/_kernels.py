"""Numba kernels: per-query ranking metrics and pair lambdas.

Inputs are arranged query by query (see ``_groups.py``): query ``q`` owns
rows ``offsets[q]:offsets[q + 1]``. Drivers hand threads chunks of
consecutive queries; each chunk allocates its scratch buffers once and each
query writes only its own outputs, so results do not depend on the number of
threads. No function here imports scikit-learn or validates input: callers
pass clean float64 arrays.

Conventions shared by every metric (one DCG for the whole package):

- gain is ``2**label - 1`` (exponential) or ``label`` (linear);
- the discount of 0-based rank ``r`` is ``1 / log2(r + 2)``;
- ranking is by descending score; ``ignore_ties=False`` gives the expected
  value over every ordering of tied scores, ``True`` keeps input order.
"""

import numpy as np
from numba import prange

from ._jit import jit

# Queries go to threads in chunks of consecutive queries, each with its own
# scratch buffers: for short queries an allocation costs as much as the work.
MAX_CHUNKS = 256
# Top-k selection by insertion beats a full sort up to about this k.
SELECT_UP_TO = 64
# Merge sort starts from insertion-sorted runs of this length.
RUN = 16


# --------------------------------------------------------------------------
# Gains, discounts, ranking


@jit()
def gain(label, exponential):
    """``2**label - 1`` if ``exponential`` else ``label``."""
    if not exponential:
        return label
    # exp2 is exact on integer labels (LightGBM's gain table); expm1 keeps
    # the precision of fractional labels below 1.
    return np.expm1(label * np.log(2.0)) if label < 1.0 else np.exp2(label) - 1.0


@jit()
def label_gains(labels, exponential):
    """:func:`gain` of every label, shape (n,)."""
    out = np.empty(len(labels))
    for i in range(len(labels)):
        out[i] = gain(labels[i], exponential)
    return out


def discount_table(n):
    """Discounts ``1 / log2(r + 2)`` for the 0-based ranks ``r < n``."""
    return 1.0 / np.log2(np.arange(n, dtype=np.float64) + 2.0)


@jit()
def _insert_desc(values, order, i, lo, j):
    """Place row i at position j of order[lo:], shifting strictly smaller
    values right: equal values keep their input order (stability)."""
    v = values[i]
    while j > lo and values[order[j - 1]] < v:
        order[j] = order[j - 1]
        j -= 1
    order[j] = i


@jit()
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


@jit()
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


@jit()
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


@jit()
def rank_order(scores):
    """Row positions sorted by descending score; ties keep input order."""
    n = len(scores)
    order = np.empty(n, dtype=np.int64)
    _argsort_desc(scores, order, np.empty(n, dtype=np.int64))
    return order


@jit()
def _tied_block(scores, order, start, top, n):
    """The block of rows tied with ``scores[order[start]]`` in the ranked
    head ``order[:top]``: returns its end in the head and whether the block
    may continue past the head (then only a scan of all rows finds it)."""
    tied = scores[order[start]]
    end = start + 1
    while end < top and scores[order[end]] == tied:
        end += 1
    return end, end == top and top < n


@jit()
def _query_chunks(offsets):
    """Boundaries of up to MAX_CHUNKS runs of consecutive queries, and the
    longest query of each run."""
    n_queries = len(offsets) - 1
    n_chunks = max(min(n_queries, MAX_CHUNKS), 1)
    bounds = np.empty(n_chunks + 1, dtype=np.int64)
    longest = np.zeros(n_chunks, dtype=np.int64)
    for c in range(n_chunks + 1):
        bounds[c] = c * n_queries // n_chunks
    for c in range(n_chunks):
        for q in range(bounds[c], bounds[c + 1]):
            longest[c] = max(longest[c], offsets[q + 1] - offsets[q])
    return bounds, longest


# --------------------------------------------------------------------------
# Metrics of one query


@jit()
def ideal_dcg(gains, discounts, k, order, spare):
    """DCG@k of the best ordering of one query's ``gains``."""
    top = min(k, len(gains))
    rank_into(gains, top, order, spare)
    total = 0.0
    for r in range(top):
        total += gains[order[r]] * discounts[r]
    return total


@jit()
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


@jit()
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
# Metrics of every query


@jit(parallel=True)
def ndcg_per_query(labels, scores, offsets, exponential, discounts, k, ignore_ties):
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
    bounds, longest = _query_chunks(offsets)
    for chunk in prange(len(longest)):
        order = np.empty(longest[chunk], dtype=np.int64)
        spare = np.empty(longest[chunk], dtype=np.int64)
        gains = np.empty(longest[chunk])
        for q in range(bounds[chunk], bounds[chunk + 1]):
            lo, hi = offsets[q], offsets[q + 1]
            n = hi - lo
            for i in range(n):
                gains[i] = gain(labels[lo + i], exponential)
            best = ideal_dcg(gains[:n], discounts, k, order[:n], spare[:n])
            if best > 0.0:
                found = dcg(gains[:n], scores[lo:hi], discounts, k, ignore_ties, order[:n], spare[:n])
                # The tie-averaged DCG and the ideal DCG are summed in
                # different orders; rounding may put the ratio an ulp above 1.
                values[q] = min(found / best, 1.0)
            else:
                empty[q] = True
    return values, empty


@jit(parallel=True)
def ap_per_query(labels, scores, offsets, k, ignore_ties):
    """AP@k of every query; same outputs as :func:`ndcg_per_query`, with
    ``empty`` marking queries that have no relevant document."""
    n_queries = len(offsets) - 1
    values = np.zeros(n_queries)
    empty = np.zeros(n_queries, dtype=np.bool_)
    bounds, longest = _query_chunks(offsets)
    for chunk in prange(len(longest)):
        order = np.empty(longest[chunk], dtype=np.int64)
        spare = np.empty(longest[chunk], dtype=np.int64)
        for q in range(bounds[chunk], bounds[chunk + 1]):
            lo, hi = offsets[q], offsets[q + 1]
            ap = average_precision(labels[lo:hi], scores[lo:hi], k, ignore_ties, order[: hi - lo], spare[: hi - lo])
            if ap >= 0.0:
                values[q] = ap
            else:
                empty[q] = True
    return values, empty


# --------------------------------------------------------------------------
# Pair lambdas
#
# For a pair where document ``hi`` should rank above ``lo``, RankNet's cost is
# softplus(-sigma * (s_hi - s_lo)) and its gradient pushes s_hi up and s_lo
# down by sigma * rho with rho = 1 / (1 + exp(sigma * (s_hi - s_lo))).
# LambdaRank multiplies both by a weight |delta Z| (the change of NDCG or AP
# if the two swapped places). Each document then collects one number, the
# derivative of the query's cost by its score, so the model's backward pass
# runs once per document instead of once per pair.
#
# rho is computed without an exp per pair: with e = exp(sigma * (s - max s)),
# rho = e_lo / (e_hi + e_lo). That needs every e to stay a normal float, which
# holds when the query's scores span less than SAFE_SPREAD / sigma; wider
# queries take the exact per-pair formula instead.

SAFE_SPREAD = 600.0  # exp(-600) ~ 1e-261: far from underflow


@jit()
def _scaled_exp(scores, sigma, e):
    """e = exp(sigma * (s - max s)); returns whether the factorized pair form
    is unsafe (the scores span more than SAFE_SPREAD / sigma)."""
    high = scores.max()
    exact = sigma * (high - scores.min()) > SAFE_SPREAD
    for i in range(len(scores)):
        e[i] = np.exp(sigma * (scores[i] - high))
    return exact


@jit()
def _pair_rho(s_hi, s_lo, e_hi, e_lo, sigma, exact):
    """1 / (1 + exp(sigma * (s_hi - s_lo)))."""
    if not exact:
        return e_lo / (e_hi + e_lo)
    d = sigma * (s_hi - s_lo)
    if d >= 0.0:
        t = np.exp(-d)
        return t / (1.0 + t)
    return 1.0 / (1.0 + np.exp(d))


@jit()
def _pair_cost(s_hi, s_lo, e_hi, e_lo, sigma, exact):
    """softplus(-sigma * (s_hi - s_lo)) = log(1 + exp(-sigma * (s_hi - s_lo)))."""
    if not exact:
        return np.log1p(e_lo / e_hi)
    d = sigma * (s_hi - s_lo)
    return max(-d, 0.0) + np.log1p(np.exp(-abs(d)))


@jit()
def _ranknet_push(e_i, e, grad, start):
    """Fast path: rho of document i over every j >= start, added to grad[j];
    returns their sum. Branch-free so that LLVM vectorizes it."""
    push = 0.0
    for signed_j in range(start, len(e)):
        j = np.uint64(signed_j)  # unsigned: no negative-index wraparound to block SIMD
        rho = e[j] / (e_i + e[j])
        push += rho
        grad[j] += rho
    return push


@jit()
def _ranknet_query(scores, labels, sigma, with_cost, grad, e):
    """RankNet gradient of one query; returns its cost.

    ``labels`` must be sorted in descending order, so that the documents
    below ``i`` with a smaller label form one contiguous tail. The cost is
    the mean cross-entropy over the query's label-differing pairs. ``e`` is
    scratch space of the query's length.
    """
    n = len(scores)
    grad[:] = 0.0
    exact = _scaled_exp(scores, sigma, e)
    cost = 0.0
    n_pairs = 0
    tail = 0
    for i in range(n):
        while tail < n and labels[tail] >= labels[i]:
            tail += 1
        if exact or with_cost:
            push = 0.0
            for j in range(tail, n):
                rho = _pair_rho(scores[i], scores[j], e[i], e[j], sigma, exact)
                push += rho
                grad[j] += rho
                if with_cost:
                    cost += _pair_cost(scores[i], scores[j], e[i], e[j], sigma, exact)
        else:
            push = _ranknet_push(e[i], e, grad, tail)
        grad[i] -= push
        n_pairs += n - tail
    if n_pairs == 0:
        return 0.0
    grad *= sigma / n_pairs
    return cost / n_pairs


@jit(parallel=True)
def ranknet_gradient(scores, labels, offsets, sigma, with_cost):
    """dC/ds for every document under RankNet, and each query's cost.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,)
        Current scores, query by query.
    labels : ndarray of shape (n_samples,)
        Relevance labels, sorted in descending order inside each query.
    offsets : ndarray of shape (n_queries + 1,)
    sigma : float
    with_cost : bool
        Also compute the cost (one log per pair; skip it when only the
        gradient is needed).

    Returns
    -------
    grad : ndarray of shape (n_samples,)
    cost : ndarray of shape (n_queries,)
    """
    grad = np.empty(len(scores))
    cost = np.zeros(len(offsets) - 1)
    bounds, longest = _query_chunks(offsets)
    for chunk in prange(len(longest)):
        e = np.empty(longest[chunk])
        for q in range(bounds[chunk], bounds[chunk + 1]):
            lo, hi = offsets[q], offsets[q + 1]
            cost[q] = _ranknet_query(
                scores[lo:hi], labels[lo:hi], sigma, with_cost, grad[lo:hi], e[: hi - lo]
            )
    return grad, cost


@jit()
def _weight_terms(utility, discounts, k, use_ap, c, h0, h1):
    """Per-rank terms that make every pair weight |du| * |c[a] + h[b]|.

    NDCG: |delta NDCG@k| * IDCG = |u_a - u_b| * (d_a - d_b), so c = d and
    h = -d (``discounts`` is already zero from rank k on).

    AP (``utility`` is 1 / 0 for relevant / not): when the documents at
    ranks a < b swap and one of them is relevant, let c be the relevant
    documents above a and m those strictly between. The relevant one earns
    (c + 1) / (a + 1) at rank a and (c + m + 1) / (b + 1) at rank b, and each
    relevant document between moves by one rank, changing by 1 / its rank.
    With prefix sums ``count`` (relevant among the first p ranks) and
    ``recip`` (sum of 1 / rank of those, within the top k), that is
    |(c + 1)/(a + 1) - recip[a + 1] + recip[b] - (c + m + 1)/(b + 1)| times
    1 / min(k, R); and c + m + 1 = count[b] + 1 - u_a. So h depends on u_a:
    ``h0`` for an irrelevant a, ``h1`` for a relevant one. Beyond rank k
    both are constant, so the order there does not matter.

    Writes into ``c``, ``h0`` and ``h1`` (scratch of the query's length).
    """
    n = len(utility)
    if not use_ap:
        for r in range(n):
            c[r] = discounts[r]
            h0[r] = -discounts[r]
        return
    count = 0.0
    recip = 0.0
    for r in range(n):
        in_top = 1.0 if r < k else 0.0
        # here count and recip cover ranks < r
        c[r] = in_top * (count + 1.0) / (r + 1) - (recip + in_top * utility[r] / (r + 1))
        h1[r] = recip - in_top * count / (r + 1)
        h0[r] = recip - in_top * (count + 1.0) / (r + 1)
        count += utility[r]
        recip += in_top * utility[r] / (r + 1)


@jit()
def _lambdarank_push(a, e, u, c_a, h, g):
    """Fast path: lambdas of the document at rank a against every lower
    rank b, added to g[b]; returns their sum. Branch-free (the select
    compiles to a blend) so that LLVM vectorizes it."""
    e_a, u_a = e[a], u[a]
    push = 0.0
    for signed_b in range(a + 1, len(e)):
        b = np.uint64(signed_b)  # unsigned: no negative-index wraparound to block SIMD
        du = u_a - u[b]
        weight = abs(du) * abs(c_a + h[b])
        lam = weight * (e[b] if du > 0.0 else -e_a) / (e_a + e[b])
        push += lam
        g[b] += lam
    return push


@jit()
def _lambdarank_query(
    scores, utility, norm, discounts, k, use_ap, sigma, with_cost, grad, order, spare, work
):
    """LambdaRank gradient of one query; returns its weighted cost.

    ``utility`` is the gain of each document (NDCG) or 1.0 / 0.0 for
    relevant / not (AP); ``norm`` is 1 / ideal DCG@k or 1 / min(k, R), and 0
    for a query where every swap is worth nothing. ``discounts`` is zero from
    rank k on, so its differences are those of NDCG@k. Only pairs with at
    least one document in the current top k are visited: O(n * k) work and
    O(n) memory. Ranks from k on carry no weight difference (zero discount;
    constant AP terms), so only the top k needs sorting.

    ``order``, ``spare`` (int) and the rows of ``work`` (float, 7 rows) are
    scratch space of at least the query's length.
    """
    n = len(scores)
    grad[:] = 0.0
    if n < 2 or norm == 0.0:
        return 0.0
    order, spare = order[:n], spare[:n]
    s, u, e, g = work[0, :n], work[1, :n], work[2, :n], work[3, :n]
    c, h0, h1 = work[4, :n], work[5, :n], work[6, :n]
    if rank_into(scores, k, order, spare):
        # Only the top k was ranked; the rest follow in input order.
        spare[:] = 0
        for r in range(k):
            spare[order[r]] = 1
        r = k
        for i in range(n):
            if spare[i] == 0:
                order[r] = i
                r += 1
    for r in range(n):
        s[r] = scores[order[r]]
        u[r] = utility[order[r]]
        g[r] = 0.0
    exact = _scaled_exp(s, sigma, e)
    _weight_terms(u, discounts, k, use_ap, c, h0, h1)
    cost = 0.0
    for a in range(min(k, n)):
        h_a = h1 if use_ap and u[a] > 0.0 else h0
        if exact or with_cost:
            push = 0.0
            for b in range(a + 1, n):
                du = u[a] - u[b]
                weight = abs(du) * abs(c[a] + h_a[b])
                hi, lo = (a, b) if du > 0.0 else (b, a)
                lam = weight * _pair_rho(s[hi], s[lo], e[hi], e[lo], sigma, exact)
                lam = lam if du > 0.0 else -lam
                push += lam
                g[b] += lam
                if with_cost and weight > 0.0:
                    cost += weight * _pair_cost(s[hi], s[lo], e[hi], e[lo], sigma, exact)
        else:
            push = _lambdarank_push(a, e, u, c[a], h_a, g)
        g[a] -= push
    scale = sigma * norm
    for r in range(n):
        grad[order[r]] = g[r] * scale
    return cost * norm


@jit(parallel=True)
def lambdarank_gradient(scores, utility, norms, offsets, discounts, k, use_ap, sigma, with_cost):
    """dC/ds for every document under LambdaRank, and each query's cost.

    Parameters
    ----------
    scores, utility : ndarray of shape (n_samples,)
        Query by query. ``utility`` holds gains (NDCG) or 1.0 / 0.0 (AP).
    norms : ndarray of shape (n_queries,)
        1 / ideal DCG@k (NDCG) or 1 / min(k, R) (AP); 0 for empty queries.
    offsets : ndarray of shape (n_queries + 1,)
    discounts : ndarray of shape (>= longest query,)
        1 / log2(rank + 2) up to rank k, zero beyond.
    k : int
        Truncation: pairs need one document in the current top k.
    use_ap : bool
        Weight by |delta AP| instead of |delta NDCG|.
    sigma : float
    with_cost : bool

    Returns
    -------
    grad : ndarray of shape (n_samples,)
    cost : ndarray of shape (n_queries,)
    """
    grad = np.empty(len(scores))
    cost = np.zeros(len(offsets) - 1)
    bounds, longest = _query_chunks(offsets)
    for chunk in prange(len(longest)):
        order = np.empty(longest[chunk], dtype=np.int64)
        spare = np.empty(longest[chunk], dtype=np.int64)
        work = np.empty((7, longest[chunk]))
        for q in range(bounds[chunk], bounds[chunk + 1]):
            lo, hi = offsets[q], offsets[q + 1]
            cost[q] = _lambdarank_query(
                scores[lo:hi], utility[lo:hi], norms[q], discounts, k, use_ap, sigma,
                with_cost, grad[lo:hi], order, spare, work,
            )
    return grad, cost


@jit(parallel=True)
def ideal_dcg_per_query(gains, offsets, discounts, k):
    """Ideal DCG@k of every query: cached once per fit, labels never change."""
    out = np.zeros(len(offsets) - 1)
    bounds, longest = _query_chunks(offsets)
    for chunk in prange(len(longest)):
        order = np.empty(longest[chunk], dtype=np.int64)
        spare = np.empty(longest[chunk], dtype=np.int64)
        for q in range(bounds[chunk], bounds[chunk + 1]):
            lo, hi = offsets[q], offsets[q + 1]
            out[q] = ideal_dcg(gains[lo:hi], discounts, k, order[: hi - lo], spare[: hi - lo])
    return out
