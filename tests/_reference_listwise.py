"""Slow, obvious reference of ListNet's softmax cross-entropy, one query at a
time, in Python floats (math.fsum for the sums)."""

import math


def softmax_cross_entropy(scores, labels, sigma=1.0):
    """Cost and dC/ds of one query: targets y / sum(y), predictions
    softmax(sigma * s); all-zero labels give cost 0 and no gradient."""
    total = math.fsum(labels)
    if total == 0:
        return [0.0] * len(scores), 0.0
    top = max(sigma * s for s in scores)
    weights = [math.exp(sigma * s - top) for s in scores]
    normalizer = math.fsum(weights)
    probabilities = [w / normalizer for w in weights]
    targets = [y / total for y in labels]
    cost = -math.fsum(t * math.log(p) for t, p in zip(targets, probabilities) if t > 0)
    grad = [sigma * (p - t) for p, t in zip(probabilities, targets)]
    return grad, cost
