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
    if not exponential:
        return labels.copy()
    # exp2 is exact on integer labels (LightGBM's gain table); expm1 keeps
    # the precision of fractional labels below 1.
    return np.where(labels < 1.0, np.expm1(labels * np.log(2.0)), np.exp2(labels) - 1.0)


def discount_table(n):
    """Discounts ``1 / log2(r + 2)`` for the 0-based ranks ``r < n``."""
    return 1.0 / np.log2(np.arange(n, dtype=np.float64) + 2.0)


@jit()
def rank_order(scores):
    """Row positions sorted by descending score; ties keep input order."""
    return np.argsort(-scores, kind="mergesort")


@jit()
def top_k_order(scores, k):
    """The first k positions of :func:`rank_order`, then the other rows in
    input order: O(n + k log k) instead of a full sort.

    Rows tied with the k-th score enter the top k in input order, exactly as
    the stable full sort would place them.
    """
    n = len(scores)
    if k >= n:
        return rank_order(scores)
    kth = -np.partition(-scores, k - 1)[k - 1]
    n_above = 0
    for i in range(n):
        n_above += scores[i] > kth
    tied_slots = k - n_above
    top = np.empty(k, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    n_top = 0
    n_rest = k
    for i in range(n):
        if scores[i] > kth or (scores[i] == kth and tied_slots > 0):
            if scores[i] == kth:
                tied_slots -= 1
            top[n_top] = i
            n_top += 1
        else:
            order[n_rest] = i
            n_rest += 1
    order[:k] = top[rank_order(scores[top])]
    return order


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
            # The tie-averaged DCG and the ideal DCG are summed in different
            # orders; rounding may put their ratio one ulp above 1.
            values[q] = min(dcg(gains[lo:hi], scores[lo:hi], discounts, k, ignore_ties) / best, 1.0)
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


# Queries are handed to threads in chunks; each chunk allocates its scratch
# buffers once, which matters for short queries (an allocation costs about as
# much as all the pairs of a 10-document query).
MAX_CHUNKS = 256
# Below this length an insertion sort beats argsort's allocations.
INSERTION_SORT_BELOW = 24


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
def _rank_into(scores, k, order):
    """Fill ``order`` with :func:`top_k_order` (the stable descending sort,
    at least its first k positions)."""
    n = len(scores)
    if n >= INSERTION_SORT_BELOW:
        order[:] = top_k_order(scores, k)
        return
    for i in range(n):  # stable: a row never passes an equal score
        j = i
        while j > 0 and scores[order[j - 1]] < scores[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i


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
def _lambdarank_query(scores, utility, norm, discounts, k, use_ap, sigma, with_cost, grad, order, work):
    """LambdaRank gradient of one query; returns its weighted cost.

    ``utility`` is the gain of each document (NDCG) or 1.0 / 0.0 for
    relevant / not (AP); ``norm`` is 1 / ideal DCG@k or 1 / min(k, R), and 0
    for a query where every swap is worth nothing. ``discounts`` is zero from
    rank k on, so its differences are those of NDCG@k. Only pairs with at
    least one document in the current top k are visited: O(n * k) work and
    O(n) memory. Ranks from k on carry no weight difference (zero discount;
    constant AP terms), so only the top k needs sorting.

    ``order`` (int) and the rows of ``work`` (float, 7 rows) are scratch space
    of at least the query's length.
    """
    n = len(scores)
    grad[:] = 0.0
    if n < 2 or norm == 0.0:
        return 0.0
    order = order[:n]
    s, u, e, g = work[0, :n], work[1, :n], work[2, :n], work[3, :n]
    c, h0, h1 = work[4, :n], work[5, :n], work[6, :n]
    _rank_into(scores, k, order)
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
        work = np.empty((7, longest[chunk]))
        for q in range(bounds[chunk], bounds[chunk + 1]):
            lo, hi = offsets[q], offsets[q + 1]
            cost[q] = _lambdarank_query(
                scores[lo:hi], utility[lo:hi], norms[q], discounts, k, use_ap, sigma,
                with_cost, grad[lo:hi], order, work,
            )
    return grad, cost


@jit(parallel=True)
def ideal_dcg_per_query(gains, offsets, discounts, k):
    """Ideal DCG@k of every query: cached once per fit, labels never change."""
    n_queries = len(offsets) - 1
    out = np.zeros(n_queries)
    for q in prange(n_queries):
        out[q] = ideal_dcg(gains[offsets[q] : offsets[q + 1]], discounts, k)
    return out
