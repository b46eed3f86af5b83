"""Slow, obvious pure-Python lambdas: every pair visited, every |delta Z| found
by swapping the two documents and recomputing the metric from scratch."""

import math


def _ranking(scores):
    """Row indices by descending score, ties in input order."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def _ndcg_at_k(labels, ranking, k, exponential):
    gain = (lambda y: 2.0**y - 1.0) if exponential else (lambda y: float(y))
    dcg = sum(gain(labels[row]) / math.log2(r + 2) for r, row in enumerate(ranking[:k]))
    ideal = sorted(labels, reverse=True)
    best = sum(gain(y) / math.log2(r + 2) for r, y in enumerate(ideal[:k]))
    return dcg / best if best > 0 else 0.0


def _ap_at_k(labels, ranking, k):
    n_relevant = sum(1 for y in labels if y > 0)
    if n_relevant == 0:
        return 0.0
    hits, total = 0, 0.0
    for r, row in enumerate(ranking[:k]):
        if labels[row] > 0:
            hits += 1
            total += hits / (r + 1)
    return total / min(k, n_relevant)


def _swapped(ranking, i, j):
    out = list(ranking)
    a, b = out.index(i), out.index(j)
    out[a], out[b] = out[b], out[a]
    return out


def _sigmoid_of_gap(gap):
    """1 / (1 + exp(gap)), written plainly but safely."""
    if gap > 0:
        return math.exp(-gap) / (1.0 + math.exp(-gap))
    return 1.0 / (1.0 + math.exp(gap))


def _softplus(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def pair_lambdas(scores, labels, *, sigma=1.0, weighting=None, k=None, exponential=True):
    """Gradient dC/ds and cost of one query.

    weighting=None is RankNet: the mean cross-entropy over label-differing
    pairs. "ndcg" / "map" is LambdaRank: each pair's cross-entropy weighted by
    |change of NDCG@k or AP@k| when the two documents swap places in the
    current ranking, only for pairs with a document in the top k.
    """
    n = len(scores)
    k = n if k is None else k
    ranking = _ranking(scores)
    rank_of = {row: r for r, row in enumerate(ranking)}
    if weighting == "ndcg":
        metric = lambda order: _ndcg_at_k(labels, order, k, exponential)  # noqa: E731
    elif weighting == "map":
        metric = lambda order: _ap_at_k(labels, order, k)  # noqa: E731
    grad = [0.0] * n
    cost = 0.0
    n_pairs = 0
    for i in range(n):
        for j in range(n):
            if not labels[i] > labels[j]:
                continue
            n_pairs += 1
            if weighting is None:
                weight = 1.0
            else:
                if min(rank_of[i], rank_of[j]) >= k:
                    continue
                weight = abs(metric(_swapped(ranking, i, j)) - metric(ranking))
            rho = _sigmoid_of_gap(sigma * (scores[i] - scores[j]))
            grad[i] -= sigma * weight * rho
            grad[j] += sigma * weight * rho
            cost += weight * _softplus(-sigma * (scores[i] - scores[j]))
    if weighting is None and n_pairs > 0:
        grad = [g / n_pairs for g in grad]
        cost /= n_pairs
    return grad, cost
