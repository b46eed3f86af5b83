"""Numba kernels of the training objectives: one lambda per document.

For a pair where document ``hi`` should rank above ``lo``, RankNet's cost is
softplus(-sigma * (s_hi - s_lo)) and its gradient pushes s_hi up and s_lo
down by sigma * rho with rho = 1 / (1 + exp(sigma * (s_hi - s_lo))).
LambdaRank multiplies both by a weight |delta Z| (the change of NDCG or AP
if the two swapped places), or by one of LambdaLoss's NDCG weights (Wang et
al., 2018), which also look at how far apart the two documents are ranked.
Each document then collects one number, the derivative of the query's cost
by its score, so the model's backward pass runs once per document instead of
once per pair.

The ``*_chunk`` kernels handle queries ``first:last`` and are run through
:func:`sklearn_ranknet._jit.over_queries`; layout and thread rules as in ``metrics.py``.
"""

import numpy as np

from .._jit import jit
from .metrics import discount_table, longest_query
from .sort import rank_into, stable_rank


# rho is computed without an exp per pair: with e = exp(sigma * (s - max s)),
# rho = e_lo / (e_hi + e_lo). That needs every e to stay a normal float, which
# holds when the query's scores span less than SAFE_SPREAD / sigma; wider
# queries take the exact per-pair formula instead.

SAFE_SPREAD = 600.0  # exp(-600) ~ 1e-261: far from underflow


# exp(x) for x <= 0 in a form LLVM vectorizes: Numba's np.exp is a call to
# libm's scalar exp (~4.3 ns a value here, against ~0.9 ns), and it was the
# largest fixed cost per document of short queries and of truncated ones.
# x = n ln2 + r with |r| <= ln2 / 2 (Cody-Waite: ln2 in two parts), exp(r)
# by its Taylor series to r^12 (tail < 2e-16), 2^n from a table.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: n * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_POW2_FROM = -1080  # 2^-1080 .. 2^-1075 round to 0: exp(x < -745) = 0
_POW2 = np.ldexp(1.0, np.arange(_POW2_FROM, 1))
# 1 / i! from i = 12 down to 0, in Horner's order.
_TAYLOR = tuple(float(1.0 / np.prod(np.arange(1.0, i + 1.0))) for i in range(12, -1, -1))


@jit(in_order=True)
def _exp_nonpositive(x):
    """exp(x) for x <= 0 (NaN stays NaN), within 2 ulp of libm's."""
    if x < -746.0:
        x = -746.0
    n = np.floor(x * _LOG2E + 0.5)
    r = (x - n * _LN2_HI) - n * _LN2_LO
    p = 0.0
    for coefficient in _TAYLOR:  # a constant tuple: unrolled by LLVM
        p = p * r + coefficient
    # NaN converts to some integer: the clamp keeps the read in the table.
    index = min(max(np.int64(n) - _POW2_FROM, 0), -_POW2_FROM)
    return p * _POW2[index]


@jit
def _scaled_exp(scores, sigma, e):
    """e = exp(sigma * (s - max s)); returns whether the factorized pair form
    is unsafe (the scores span more than SAFE_SPREAD / sigma)."""
    # Loops rather than scores.max() / .min(): Numba's reductions cost close
    # to a second of compilation in a new user's first process.
    high = scores[0]
    low = scores[0]
    for i in range(1, len(scores)):
        high = max(high, scores[i])
        low = min(low, scores[i])
    exact = sigma * (high - low) > SAFE_SPREAD
    for i in range(len(scores)):
        e[i] = _exp_nonpositive(sigma * (scores[i] - high))
    return exact


@jit
def _pair_rho(s_hi, s_lo, sigma):
    """1 / (1 + exp(sigma * (s_hi - s_lo))), exact for any score gap (the
    slow path of queries whose scores span too much for the factorized form)."""
    d = sigma * (s_hi - s_lo)
    if d >= 0.0:
        t = np.exp(-d)
        return t / (1.0 + t)
    return 1.0 / (1.0 + np.exp(d))


@jit
def _pair_cost(s_hi, s_lo, sigma):
    """softplus(-sigma * (s_hi - s_lo)) = log(1 + exp(-sigma * (s_hi - s_lo))),
    exact for any score gap."""
    d = sigma * (s_hi - s_lo)
    return max(-d, 0.0) + np.log1p(np.exp(-abs(d)))


# The pair cost needs a logarithm per pair. libm's log is a call LLVM cannot
# vectorize, so the fast path writes it as -log(f) with f in [1/2, 1]:
# for the pair (hi, lo), softplus(-sigma (s_hi - s_lo)) = -log(e_hi / (e_hi
# + e_lo)) = -log(f) + sigma * max(s_lo - s_hi, 0) with f = max(e_hi, e_lo) /
# (e_hi + e_lo). On that interval a short series is exact to rounding.
_SQRT_HALF = np.sqrt(0.5)
_HALF_LN2 = 0.5 * np.log(2.0)


@jit
def _neg_log_half_to_one(f):
    """-log(f) for f in [1/2, 1], branch-free and to ~1 ulp.

    f is scaled into m in [sqrt(1/2), 1]; with t = (1 - m) / (1 + m) in
    [0, 0.172], -log(m) = 2 atanh(t) = 2 t sum_j t^(2j) / (2j + 1), whose
    tail after ten terms is below 2e-17 relative.
    """
    low = f < _SQRT_HALF
    m = f * (np.sqrt(2.0) if low else 1.0)
    t = (1.0 - m) / (1.0 + m)
    z = t * t
    series = 1.0 / 19.0
    series = series * z + 1.0 / 17.0
    series = series * z + 1.0 / 15.0
    series = series * z + 1.0 / 13.0
    series = series * z + 1.0 / 11.0
    series = series * z + 1.0 / 9.0
    series = series * z + 1.0 / 7.0
    series = series * z + 1.0 / 5.0
    series = series * z + 1.0 / 3.0
    series = series * z + 1.0
    return 2.0 * t * series + (_HALF_LN2 if low else 0.0)


@jit(inline=True)
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


@jit(inline=True)
def _ranknet_push_with_cost(s_i, e_i, scores, e, sigma, grad, start):
    """:func:`_ranknet_push` that also returns the pairs' summed cost,
    still branch-free."""
    push = 0.0
    cost = 0.0
    for signed_j in range(start, len(e)):
        j = np.uint64(signed_j)
        inverse = 1.0 / (e_i + e[j])
        rho = e[j] * inverse
        push += rho
        grad[j] += rho
        f = max(e_i, e[j]) * inverse
        cost += _neg_log_half_to_one(f) + sigma * max(scores[j] - s_i, 0.0)
    return push, cost


# Not inlined (see ``_jit.jit``): inlined, RankNet's pass over 10-document
# queries ran ~25 % slower. Its two pair loops are (no change in speed).
@jit
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
        if exact:
            push = 0.0
            for j in range(tail, n):
                rho = _pair_rho(scores[i], scores[j], sigma)
                push += rho
                grad[j] += rho
                if with_cost:
                    cost += _pair_cost(scores[i], scores[j], sigma)
        elif with_cost:
            push, pair_cost = _ranknet_push_with_cost(scores[i], e[i], scores, e, sigma, grad, tail)
            cost += pair_cost
        else:
            push = _ranknet_push(e[i], e, grad, tail)
        grad[i] -= push
        n_pairs += n - tail
    if n_pairs == 0:
        return 0.0
    grad *= sigma / n_pairs
    return cost / n_pairs


@jit
def ranknet_chunk(scores, labels, offsets, sigma, with_cost, grad, cost, first, last):
    """RankNet's dC/ds of queries ``first:last`` into ``grad`` and their
    costs into ``cost`` (left untouched unless ``with_cost``).

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
    grad : ndarray of shape (n_samples,)
        Output.
    cost : ndarray of shape (n_queries,)
        Output.
    first, last : int
        The queries this call handles.
    """
    e = np.empty(longest_query(offsets, first, last))
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        cost[q] = _ranknet_query(
            scores[lo:hi], labels[lo:hi], sigma, with_cost, grad[lo:hi], e[: hi - lo]
        )


# Soft targets (Burges et al., 2005): real-valued labels set the target
# probability of each pair, Pbar = sigmoid(y_hi - y_lo), instead of 1. With
# x = sigma * (s_hi - s_lo) the pair cost becomes
#     -Pbar log P - (1 - Pbar) log(1 - P) = softplus(-x) + (1 - Pbar) x,
# and s_hi's gradient sigma * (P - Pbar) = sigma * ((1 - Pbar) - rho): the hard
# push -rho plus a constant pull (1 - Pbar) that no score can undo. Only
# label-differing pairs count, as with hard targets, so the two agree on
# which pairs a query has.


@jit
def _ranknet_soft_query(scores, labels, sigma, with_cost, grad, e):
    """RankNet gradient of one query with soft pair targets; returns its
    cost. Same layout and normalization as :func:`_ranknet_query`."""
    n = len(scores)
    grad[:] = 0.0
    exact = _scaled_exp(scores, sigma, e)
    cost = 0.0
    n_pairs = 0
    tail = 0
    for i in range(n):
        while tail < n and labels[tail] >= labels[i]:
            tail += 1
        push = 0.0
        for j in range(tail, n):
            rho = _pair_rho(scores[i], scores[j], sigma) if exact else e[j] / (e[i] + e[j])
            # 1 - Pbar = sigmoid(y_lo - y_hi), with y_hi > y_lo.
            t = _exp_nonpositive(labels[j] - labels[i])
            pull = t / (1.0 + t)
            g = pull - rho
            push += g
            grad[j] -= g
            if with_cost:
                cost += _pair_cost(scores[i], scores[j], sigma) + pull * sigma * (scores[i] - scores[j])
        grad[i] += push
        n_pairs += n - tail
    if n_pairs == 0:
        return 0.0
    grad *= sigma / n_pairs
    return cost / n_pairs


@jit
def ranknet_soft_chunk(scores, labels, offsets, sigma, with_cost, grad, cost, first, last):
    """:func:`ranknet_chunk` with soft pair targets sigmoid(y_hi - y_lo)."""
    e = np.empty(longest_query(offsets, first, last))
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        cost[q] = _ranknet_soft_query(
            scores[lo:hi], labels[lo:hi], sigma, with_cost, grad[lo:hi], e[: hi - lo]
        )


# --------------------------------------------------------------------------
# LambdaRank's pair weights
#
# The pair at current ranks a < b (0-based) weighs |u_a - u_b| * |c[a] + h[b]|,
# with per-rank terms c and h from _weight_terms: |delta NDCG@k| or
# |delta AP@k| times the query's normaliser. LambdaLoss (Wang, Li, Golbandi,
# Bendersky and Najork, "The LambdaLoss Framework for Ranking Metric
# Optimization", CIKM 2018) adds a term that depends on the rank distance
# b - a: the pair weighs |u_a - u_b| * (|c[a] + h[b]| + t[b - a]), with the
# table t = ``by_distance`` built once per objective by distance_weights.
# For NDCG, c[a] + h[b] = d_a - d_b >= 0 (discounts do not increase down the
# ranking) and t >= 0, so that is |u_a - u_b| * |c[a] + (h[b] + t[b - a])|:
# for each a the term goes into a copy of h (O(n)), and the pair loops stay
# the same. With NDCG's normalised gains G = u * norm (the kernel multiplies
# by norm at the end), D(r) = log2(1 + r) and delta(d) = 1/D(d) - 1/D(d + 1):
#
# - "lambdarank": |G_a - G_b| |1/D(a+1) - 1/D(b+1)| = |delta NDCG@k| (or
#   |delta AP@k|); t unused;
# - "ndcg_loss2": delta(b - a) |G_a - G_b|: c = h = 0, t = delta;
# - "ndcg_loss2++": (mu delta(b - a) + |1/D(a+1) - 1/D(b+1)|) |G_a - G_b|:
#   t = mu delta.
#
# Truncation at k. allRank's lambdaLoss (allrank/models/losses/lambdaLoss.py)
# keeps the pairs with *both* documents in the top k, cuts the ideal DCG
# that normalises G at k, and leaves D and delta uncut. We keep LambdaRank's
# pair set for all three weightings (at least one document in the top k, as
# LightGBM's truncation does) and, as allRank, cut at k only G's normaliser:
# delta is not cut, so a top-k document against one below rank k weighs by
# their true distance. NDCG-Loss2++'s second term is LambdaRank's own
# |delta NDCG@k| (discounts cut at k), equal to allRank's on the pairs both
# keep. Ranks below k then matter, so the LambdaLoss weightings rank every
# document (an O(n log n) sort besides the O(n k) pairs).

LAMBDARANK, NDCG_LOSS2, NDCG_LOSS2_PP = 0, 1, 2
PAIR_WEIGHTINGS = {"lambdarank": LAMBDARANK, "ndcg_loss2": NDCG_LOSS2, "ndcg_loss2++": NDCG_LOSS2_PP}

# mu of NDCG-Loss2++ = mu * NDCG-Loss2 + LambdaRank, the weight of the
# rank-distance term: the paper leaves it a hyperparameter; 10 is allRank's
# default (lambdaLoss(..., mu=10.)). For scale: delta is 0.37 at distance 1,
# 0.13 at 2 and 0.01 at 10, and |1/D(1) - 1/D(2)| is 0.37.
LAMBDALOSS_MU = 10.0


def distance_weights(n, weighting):
    """LambdaLoss's rank-distance term for the distances ``0 .. n - 1``.

    Parameters
    ----------
    n : int
        Table length: at least the longest query.
    weighting : {"lambdarank", "ndcg_loss2", "ndcg_loss2++"}

    Returns
    -------
    table : ndarray of shape (n,)
        ``delta(d) = 1 / log2(1 + d) - 1 / log2(2 + d)`` for ``d >= 1`` (0 at
        ``d = 0``, which no pair has), times ``LAMBDALOSS_MU`` for
        "ndcg_loss2++"; all zero for "lambdarank".
    """
    table = np.zeros(n)
    if weighting == "lambdarank" or n < 2:
        return table
    # 1 / D(d) = 1 / log2(1 + d) is discount_table's entry for rank d - 1.
    inverse_d = discount_table(n)
    table[1:] = inverse_d[:-1] - inverse_d[1:]
    if weighting == "ndcg_loss2++":
        table *= LAMBDALOSS_MU
    return table


@jit(inline=True)
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


@jit(inline=True)
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


@jit(inline=True)
def _lambdarank_push_with_cost(a, s, e, u, c_a, h, sigma, g):
    """:func:`_lambdarank_push` that also returns the pairs' weighted cost,
    still branch-free."""
    s_a, e_a, u_a = s[a], e[a], u[a]
    push = 0.0
    cost = 0.0
    for signed_b in range(a + 1, len(e)):
        b = np.uint64(signed_b)
        du = u_a - u[b]
        weight = abs(du) * abs(c_a + h[b])
        inverse = 1.0 / (e_a + e[b])
        lam = weight * (e[b] if du > 0.0 else -e_a) * inverse
        push += lam
        g[b] += lam
        # the lower-labelled document's score minus the higher one's
        behind = (s[b] - s_a) if du > 0.0 else (s_a - s[b])
        f = max(e_a, e[b]) * inverse
        cost += weight * (_neg_log_half_to_one(f) + sigma * max(behind, 0.0))
    return push, cost


# Queries up to this length, and at most this many times k, take
# :func:`_short_query_lambdas`: its n^2 pairs, each one vector step, beat the
# general path's n k scattered ones on short queries only (the crossing was
# measured near 96 documents with all pairs, between 32 and 64 with k = 10).
SHORT_QUERY = 64
SHORT_QUERY_PER_K = 4
# Its loops run over the query padded to a multiple of this many documents:
# one full vector step of LLVM's loops (4 doubles x 4 interleaved), never
# the scalar remainder that short loops otherwise spend all their time in.
LANES = 16


@jit(inline=True)
def _short_query_lambdas(scores, utility, rows, discounts, scale, sigma, grad, work):
    """LambdaRank's NDCG lambdas of a short query, in input order; returns
    False (and does nothing) when the scores span too much for the
    factorized pair form.

    The lambda of a document x collects, from every document y, |du| |d_x -
    d_y| (u_x > u_y ? -e_y : e_x) / (e_x + e_y), with du = u_x - u_y and d
    the discount at the document's rank: the same value whichever of the two
    ranks higher. So each document sums over all the others, a reduction
    without the scatter of the pair loop in :func:`_lambdarank_query`, and
    it needs the rank of each document but no ranked copy of the query.
    Twice the pairs, but every loop is one vector step, which is faster on
    short queries. Ranks come from counting
    (:func:`.sort.stable_rank`: ties in input order). The utility of the
    document at position x is ``utility[rows[x]]``.

    ``work`` is float scratch of four rows of at least ``len(scores) +
    LANES``, flat.
    """
    n = len(scores)
    padded = (n + LANES - 1) // LANES * LANES
    row = len(work) // 4
    e, u = work[:padded], work[row : row + padded]
    d, mask = work[2 * row : 2 * row + padded], work[3 * row : 3 * row + padded]
    if _scaled_exp(scores, sigma, e[:n]):
        return False
    for x in range(n):
        d[x] = discounts[stable_rank(scores, x)]
        u[x] = utility[rows[x]]
        mask[x] = 1.0
    # Padding documents: finite, and with a zero weight against every other.
    for y in range(n, padded):
        e[y], u[y], d[y], mask[y] = 1.0, 0.0, 0.0, 0.0
    for x in range(n):
        e_x, u_x, d_x = e[x], u[x], d[x]
        total = 0.0
        for y in range(padded):
            du = u_x - u[y]
            weight = abs(du) * abs(d_x - d[y]) * mask[y]
            total += weight * (-e[y] if du > 0.0 else e_x) / (e_x + e[y])
        grad[x] = total * scale
    return True


@jit(inline=True)
def _add_distance_terms(h, by_distance, a, out):
    """out[b] = h[b] + by_distance[b - a] for the ranks b > a: LambdaLoss's
    rank-distance term folded into the weight terms of the document at rank
    a (see the comment above :data:`LAMBDARANK`)."""
    unsigned_a = np.uint64(a)
    for signed_b in range(a + 1, len(h)):
        b = np.uint64(signed_b)  # unsigned: no negative-index wraparound to block SIMD
        out[b] = h[b] + by_distance[b - unsigned_a]


@jit(inline=True)
def _lambdarank_query(
    scores, utility, rows, norm, discounts, by_distance, weighting, k, use_ap, sigma, with_cost,
    grad, order, spare, work,
):
    """LambdaRank gradient of one query through its ranking (the general
    path; :func:`lambdarank_chunk` sends short queries to
    :func:`_short_query_lambdas`); returns its weighted cost.

    ``utility[rows[i]]`` is the gain of the query's document i (NDCG) or
    1.0 / 0.0 for relevant / not (AP); ``norm`` is 1 / ideal DCG@k or 1 / min(k, R), and 0
    for a query where every swap is worth nothing. ``discounts`` is zero from
    rank k on, so its differences are those of NDCG@k. ``by_distance`` and
    ``weighting`` choose the pair weights (see :data:`LAMBDARANK`). Only
    pairs with at least one document in the current top k are visited:
    O(n * k) work and O(n) memory. Under LambdaRank's weights, ranks from k
    on carry no weight difference (zero discount; constant AP terms), so
    only the top k needs sorting; LambdaLoss's distances need every rank.

    ``order``, ``spare`` (int, at least the query's length) and ``work``
    (float, seven rows of at least that length, flat) are scratch space.
    """
    n = len(scores)
    grad[:] = 0.0
    if n < 2 or norm == 0.0:
        return 0.0
    order, spare = order[:n], spare[:n]
    # Seven float rows of scratch in one flat array (a 2-D array costs more
    # compilation than it saves).
    row = len(work) // 7
    s, u, e, g = work[:n], work[row : row + n], work[2 * row : 2 * row + n], work[3 * row : 3 * row + n]
    c, h0, h1 = work[4 * row : 4 * row + n], work[5 * row : 5 * row + n], work[6 * row : 6 * row + n]
    # g is free until the ranking is done: rank_into's float scratch.
    if rank_into(scores, k if weighting == LAMBDARANK else n, order, spare, g):
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
        u[r] = utility[rows[order[r]]]
        g[r] = 0.0
    exact = _scaled_exp(s, sigma, e)
    if weighting == NDCG_LOSS2:  # no |delta NDCG| term: the distance alone
        c[:] = 0.0
        h0[:] = 0.0
    else:
        _weight_terms(u, discounts, k, use_ap, c, h0, h1)
    cost = 0.0
    for a in range(min(k, n)):
        if use_ap and u[a] > 0.0:
            h_a = h1
        elif weighting == LAMBDARANK:
            h_a = h0
        else:  # NDCG only: h1 is free
            _add_distance_terms(h0, by_distance, a, h1)
            h_a = h1
        if exact:
            push = 0.0
            for b in range(a + 1, n):
                du = u[a] - u[b]
                weight = abs(du) * abs(c[a] + h_a[b])
                hi, lo = (a, b) if du > 0.0 else (b, a)
                lam = weight * _pair_rho(s[hi], s[lo], sigma)
                lam = lam if du > 0.0 else -lam
                push += lam
                g[b] += lam
                if with_cost and weight > 0.0:
                    cost += weight * _pair_cost(s[hi], s[lo], sigma)
        elif with_cost:
            push, pair_cost = _lambdarank_push_with_cost(a, s, e, u, c[a], h_a, sigma, g)
            cost += pair_cost
        else:
            push = _lambdarank_push(a, e, u, c[a], h_a, g)
        g[a] -= push
    scale = sigma * norm
    for r in range(n):
        grad[order[r]] = g[r] * scale
    return cost * norm


@jit
def lambdarank_chunk(
    scores, utility, rows, norms, queries, offsets, discounts, by_distance, weighting, k, use_ap,
    sigma, with_cost, grad, cost, first, last,
):
    """LambdaRank's dC/ds of queries ``first:last`` into ``grad`` and their
    costs into ``cost``.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,)
        Query by query.
    utility : ndarray of shape (n_training_rows,)
        Gains (NDCG) or 1.0 / 0.0 (AP) of every training row.
    rows : ndarray of int64, shape (n_samples,)
        The training row of each score: read through this index here
        rather than gathered beforehand, which saved a pass over the
        minibatch on the calling thread.
    norms : ndarray of shape (n_training_queries,)
        1 / ideal DCG@k (NDCG) or 1 / min(k, R) (AP); 0 for empty queries.
    queries : ndarray of int64, shape (n_queries,)
        The training query of each segment.
    offsets : ndarray of shape (n_queries + 1,)
    discounts : ndarray of shape (>= longest query,)
        1 / log2(rank + 2) up to rank k, zero beyond.
    by_distance : ndarray of shape (>= longest query,)
        LambdaLoss's rank-distance term, from :func:`distance_weights`
        (unused by LambdaRank's weights).
    weighting : int
        ``LAMBDARANK``, ``NDCG_LOSS2`` or ``NDCG_LOSS2_PP``; the two
        LambdaLoss ones are for NDCG only (``use_ap`` False).
    k : int
        Truncation: pairs need one document in the current top k.
    use_ap : bool
        Weight by |delta AP| instead of |delta NDCG|.
    sigma : float
    with_cost : bool
    grad : ndarray of shape (n_samples,)
        Output.
    cost : ndarray of shape (n_queries,)
        Output.
    first, last : int
        The queries this call handles.
    """
    longest = longest_query(offsets, first, last)
    order = np.empty(longest, dtype=np.int64)
    spare = np.empty(longest, dtype=np.int64)
    work = np.empty(7 * (longest + LANES))
    # Short queries under LambdaRank's NDCG weights (not while the cost is
    # wanted, which needs each pair once), unless k cuts off most of them,
    # take the padded path, chosen here rather than inside _lambdarank_query:
    # the short pass runs faster so, and the first fit compiles less.
    fits_short_path = weighting == LAMBDARANK and not use_ap and not with_cost
    short = min(SHORT_QUERY, SHORT_QUERY_PER_K * k) if fits_short_path else 0
    row = len(work) // 7
    for q in range(first, last):
        lo, hi = offsets[q], offsets[q + 1]
        norm = norms[queries[q]]
        if 2 <= hi - lo <= short and norm != 0.0:
            scale = sigma * norm
            if _short_query_lambdas(
                scores[lo:hi], utility, rows[lo:hi], discounts, scale, sigma, grad[lo:hi], work[: 4 * row]
            ):
                cost[q] = 0.0
                continue
        cost[q] = _lambdarank_query(
            scores[lo:hi], utility, rows[lo:hi], norm, discounts, by_distance, weighting, k, use_ap,
            sigma, with_cost, grad[lo:hi], order, spare, work,
        )
