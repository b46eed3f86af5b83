"""Slow, obvious pure-Python lambdas: every pair visited, every |delta Z| found
by swapping the two documents and recomputing the metric from scratch, every
LambdaLoss weight written out from its definition (Wang et al., CIKM 2018)."""

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


def _gain(y, exponential):
    return 2.0**y - 1.0 if exponential else float(y)


def _inverse_d(rank):
    """1 / D(rank) = 1 / log2(1 + rank), rank 1-based."""
    return 1.0 / math.log2(1.0 + rank)


def pair_weights(scores, labels, *, weighting, k=None, exponential=True, mu=10.0):
    """{(i, j): weight} for every pair with labels[i] > labels[j] that the
    weighting visits, by the current ranking (ties in input order).

    "ndcg" / "map": |change of NDCG@k or AP@k| when i and j swap places.
    "ndcg_loss2": delta_ij |G_i - G_j| with G = gain / ideal DCG@k and
    delta_ij = |1/D(|r_i - r_j|) - 1/D(|r_i - r_j| + 1)|, D(r) = log2(1 + r).
    "ndcg_loss2++": mu delta_ij |G_i - G_j| plus the "ndcg" weight.
    Only pairs with a document in the top k, whatever the weighting.
    """
    n = len(scores)
    k = n if k is None else k
    ranking = _ranking(scores)
    rank = {row: r + 1 for r, row in enumerate(ranking)}  # 1-based
    ideal = sorted(labels, reverse=True)
    ideal_dcg = sum(_gain(y, exponential) * _inverse_d(r + 1) for r, y in enumerate(ideal[:k]))

    def delta_metric(i, j, metric):
        return abs(metric(_swapped(ranking, i, j)) - metric(ranking))

    def ndcg(order):
        return _ndcg_at_k(labels, order, k, exponential)

    def ap(order):
        return _ap_at_k(labels, order, k)

    weights = {}
    for i in range(n):
        for j in range(n):
            if not labels[i] > labels[j]:
                continue
            if min(rank[i], rank[j]) > k:
                continue
            if weighting == "ndcg":
                weight = delta_metric(i, j, ndcg)
            elif weighting == "map":
                weight = delta_metric(i, j, ap)
            else:
                if ideal_dcg > 0:
                    gain_gap = abs(_gain(labels[i], exponential) - _gain(labels[j], exponential)) / ideal_dcg
                else:
                    gain_gap = 0.0
                distance = abs(rank[i] - rank[j])
                delta = abs(_inverse_d(distance) - _inverse_d(distance + 1))
                if weighting == "ndcg_loss2":
                    weight = delta * gain_gap
                elif weighting == "ndcg_loss2++":
                    weight = mu * delta * gain_gap + delta_metric(i, j, ndcg)
                else:
                    raise ValueError(weighting)
            weights[i, j] = weight
    return weights


def weighted_pair_lambdas(scores, weights, *, sigma=1.0):
    """Gradient dC/ds and cost C = sum of weight * softplus(-sigma (s_i - s_j))
    over the pairs (i, j) of ``weights``, i the better-labelled document."""
    grad = [0.0] * len(scores)
    cost = 0.0
    for (i, j), weight in weights.items():
        rho = _sigmoid_of_gap(sigma * (scores[i] - scores[j]))
        grad[i] -= sigma * weight * rho
        grad[j] += sigma * weight * rho
        cost += weight * _softplus(-sigma * (scores[i] - scores[j]))
    return grad, cost


def ranknet_weights(labels):
    """RankNet's cost is the mean cross-entropy over label-differing pairs:
    each pair weighs 1 / their number."""
    pairs = [(i, j) for i in range(len(labels)) for j in range(len(labels)) if labels[i] > labels[j]]
    return {pair: 1.0 / len(pairs) for pair in pairs}


def pair_lambdas(scores, labels, *, sigma=1.0, weighting=None, k=None, exponential=True):
    """Gradient dC/ds and cost of one query: RankNet (weighting=None), or
    LambdaRank / LambdaLoss (see :func:`pair_weights`)."""
    if weighting is None:
        weights = ranknet_weights(labels)
    else:
        weights = pair_weights(scores, labels, weighting=weighting, k=k, exponential=exponential)
    return weighted_pair_lambdas(scores, weights, sigma=sigma)


def soft_ranknet_lambdas(scores, labels, *, sigma=1.0):
    """RankNet with soft targets: over the label-differing pairs (i, j),
    y_i > y_j, the mean cross-entropy of P = sigmoid(sigma (s_i - s_j))
    against Pbar = sigmoid(y_i - y_j), written out from its definition."""
    pairs = [(i, j) for i in range(len(labels)) for j in range(len(labels)) if labels[i] > labels[j]]
    grad = [0.0] * len(scores)
    cost = 0.0
    for i, j in pairs:
        x = sigma * (scores[i] - scores[j])
        target = _sigmoid_of_gap(labels[j] - labels[i])  # sigmoid(y_i - y_j)
        p = _sigmoid_of_gap(-x)  # sigmoid(x)
        # -target log p - (1 - target) log(1 - p), with both logs as softplus
        cost += (target * _softplus(-x) + (1.0 - target) * _softplus(x)) / len(pairs)
        grad[i] += sigma * (p - target) / len(pairs)
        grad[j] -= sigma * (p - target) / len(pairs)
    return grad, cost
