"""Slow, obvious, pure-Python references for the ranking metrics (and, at
the end, for the value a missing feature value reads as).

These follow the textbook definitions as literally as possible, so that the
fast Numba kernels in ``sklearn_ranknet._kernels`` can be checked against
them. No numpy, no vectorisation, no closed forms:

- ranks start at 1 and the discount of rank ``r`` is ``1 / log2(r + 1)``;
- gain is ``2**label - 1`` ("exponential") or ``label`` ("linear");
- ``ignore_ties=True`` ranks by descending score, tied documents in input
  order (a stable sort);
- ``ignore_ties=False`` is the plain average of the metric over *every*
  ordering of the documents inside each block of tied scores, enumerated
  with ``itertools.permutations``. The number of orderings is the product
  of the factorials of the block sizes, so only use it on small queries
  (7 documents at most is a good rule);
- a query with nothing to find (ideal DCG 0 for NDCG, no relevant document
  for AP and RR, no label > 0 for ERR) scores ``empty_value``; ``None``
  means "leave it out".
"""

import itertools
import math


def gain_of(label, gain):
    """The gain of one relevance label."""
    if gain == "exponential":
        return 2.0 ** label - 1.0
    if gain == "linear":
        return float(label)
    raise ValueError(f"unknown gain {gain!r}")


def discount_of(rank):
    """Discount of a 1-based rank."""
    return 1.0 / math.log2(rank + 1)


def dcg(labels_in_rank_order, k, gain):
    """DCG@k of labels already listed best rank first; ``k=None``: all ranks."""
    total = 0.0
    for rank, label in enumerate(labels_in_rank_order, start=1):
        if k is not None and rank > k:
            break
        total += gain_of(label, gain) * discount_of(rank)
    return total


def stable_ranking(scores):
    """Document positions by descending score, ties in input order."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


def tie_blocks(scores):
    """The stable ranking cut into blocks of documents with equal scores."""
    blocks = []
    for i in stable_ranking(scores):
        if blocks and scores[blocks[-1][0]] == scores[i]:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    return blocks


def all_tie_orderings(scores):
    """Every ranking that orders by descending score, tied documents in any
    order. Yields lists of document positions, best rank first."""
    per_block = [itertools.permutations(block) for block in tie_blocks(scores)]
    for choice in itertools.product(*per_block):
        ranking = []
        for block in choice:
            ranking.extend(block)
        yield ranking


def average_over_orderings(value_of_ranking, scores, ignore_ties):
    """``value_of_ranking`` of the stable ranking, or its mean over every
    ordering of the tied documents."""
    if ignore_ties:
        return value_of_ranking(stable_ranking(scores))
    values = [value_of_ranking(r) for r in all_tie_orderings(scores)]
    return sum(values) / len(values)


def ndcg_query(labels, scores, k=None, gain="exponential", ignore_ties=False,
               empty_value=1.0):
    """NDCG@k of one query."""
    labels = list(labels)
    scores = list(scores)
    ideal = dcg(sorted(labels, reverse=True), k, gain)
    if ideal == 0.0:
        return empty_value

    def value(ranking):
        return dcg([labels[i] for i in ranking], k, gain) / ideal

    return average_over_orderings(value, scores, ignore_ties)


def average_precision(relevant_in_rank_order, k, n_relevant):
    """AP@k of relevance flags listed best rank first."""
    hits = 0
    total = 0.0
    for rank, is_relevant in enumerate(relevant_in_rank_order, start=1):
        if k is not None and rank > k:
            break
        if is_relevant:
            hits += 1
            total += hits / rank
    cutoff = n_relevant if k is None else min(k, n_relevant)
    return total / cutoff


def ap_query(labels, scores, k=None, ignore_ties=False, empty_value=1.0):
    """AP@k of one query: relevant means label > 0; the sum of precision@r
    over relevant ranks r <= k, divided by min(k, number relevant)."""
    relevant = [label > 0 for label in labels]
    scores = list(scores)
    n_relevant = sum(relevant)
    if n_relevant == 0:
        return empty_value

    def value(ranking):
        return average_precision([relevant[i] for i in ranking], k, n_relevant)

    return average_over_orderings(value, scores, ignore_ties)


def reciprocal_rank(relevant_in_rank_order, k):
    """RR@k of relevance flags listed best rank first: 1 / the rank of the
    first relevant one, 0 if none is at rank k or above."""
    for rank, is_relevant in enumerate(relevant_in_rank_order, start=1):
        if k is not None and rank > k:
            break
        if is_relevant:
            return 1.0 / rank
    return 0.0


def rr_query(labels, scores, k=None, ignore_ties=False, empty_value=1.0):
    """RR@k of one query: relevant means label > 0."""
    relevant = [label > 0 for label in labels]
    if not any(relevant):
        return empty_value

    def value(ranking):
        return reciprocal_rank([relevant[i] for i in ranking], k)

    return average_over_orderings(value, list(scores), ignore_ties)


def expected_reciprocal_rank(labels_in_rank_order, k, max_label):
    """ERR@k of labels listed best rank first, by walking the cascade: the
    user reaches each rank with the chance of not having stopped above it,
    and stops there with chance (2**label - 1) / 2**max_label."""
    total = 0.0
    reaches = 1.0
    for rank, label in enumerate(labels_in_rank_order, start=1):
        if k is not None and rank > k:
            break
        stops = (2.0 ** label - 1.0) / 2.0 ** max_label
        total += reaches * stops / rank
        reaches *= 1.0 - stops
    return total


def err_query(labels, scores, k=None, *, max_label, ignore_ties=False, empty_value=1.0):
    """ERR@k of one query; ``max_label`` is the scale's top grade (no
    default: the package's None is the largest label of all queries, which
    one query cannot know)."""
    labels = list(labels)
    if not any(label > 0 for label in labels):
        return empty_value

    def value(ranking):
        return expected_reciprocal_rank([labels[i] for i in ranking], k, max_label)

    return average_over_orderings(value, list(scores), ignore_ties)


def split_queries(y_true, y_score, groups):
    """``{query id: (labels, scores)}``, rows in input order; ``groups=None``
    puts every row in one query with id 0."""
    if groups is None:
        groups = [0] * len(y_true)
    queries = {}
    for label, score, query in zip(y_true, y_score, groups):
        labels, scores = queries.setdefault(query, ([], []))
        labels.append(float(label))
        scores.append(float(score))
    return queries


def per_query(metric, y_true, y_score, groups, **kw):
    """``(sorted query ids, values)`` of ``metric`` query by query; with
    ``empty_value=None`` the empty queries are left out."""
    queries = split_queries(y_true, y_score, groups)
    ids, values = [], []
    for query in sorted(queries):
        labels, scores = queries[query]
        value = metric(labels, scores, **kw)
        if value is not None:
            ids.append(query)
            values.append(value)
    return ids, values


def mean_over_queries(metric, y_true, y_score, groups, **kw):
    """Mean of ``metric`` over queries (None when no query is left)."""
    _, values = per_query(metric, y_true, y_score, groups, **kw)
    if not values:
        return None
    return sum(values) / len(values)


# ----------------------------------------------------------------------
# The value missing values read as (``_missingness.missing_fill``)


def within_query_residuals(labels, sizes):
    """Each label minus the mean label of its query, queries listed in turn."""
    residuals, start = [], 0
    for n in sizes:
        query = [float(v) for v in labels[start:start + n]]
        residuals.extend(v - sum(query) / n for v in query)
        start += n
    return residuals


def missing_fill(values, residuals):
    """The present value the missing ones (NaN) read as, step by step as the
    User Guide says: the present values sorted (ties in row order) and cut
    into 8 groups of equal size (the first ones one larger when they do not
    divide), and the median of the group whose mean residual is nearest the
    missing rows' mean residual (the first such group on a tie)."""
    missing = [i for i, v in enumerate(values) if math.isnan(v)]
    present = sorted((i for i, v in enumerate(values) if not math.isnan(v)), key=lambda i: values[i])
    if not missing or not present:
        return math.nan
    n_groups = min(8, len(present))
    size, extra = divmod(len(present), n_groups)
    target = sum(residuals[i] for i in missing) / len(missing)
    best, start = None, 0
    for g in range(n_groups):
        group = present[start:start + size + (1 if g < extra else 0)]
        start += len(group)
        gap = abs(sum(residuals[i] for i in group) / len(group) - target)
        if best is None or gap < best[0]:
            best = (gap, sorted(values[i] for i in group))
    group = best[1]
    middle = len(group) // 2
    return group[middle] if len(group) % 2 else (group[middle - 1] + group[middle]) / 2
