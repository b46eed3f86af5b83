"""What a fit warns about its data: no query ids, nothing to learn, a query
whose pairs swamp every epoch."""

import warnings

import numpy as np

from ._metadata_columns import missing_ids_fixes


def warn_if_no_groups(groups, n_samples, method, stacklevel=3):
    # fit(X, y) must work without groups: scikit-learn's common checks (and
    # any tool that knows nothing of queries) call it so.
    if groups is None and n_samples > 1:
        warnings.warn(
            f"{method} got no groups, so all {n_samples} rows are treated as one "
            f"query. {missing_ids_fixes()}",
            UserWarning,
            stacklevel=stacklevel,
        )


def query_contrasts(data):
    """For each query of ``data`` (a ``TrainingSet``): whether the objective
    tells two of its documents apart, and whether two of its labels differ
    (weights left aside). They differ only under LambdaRank's
    ``metric="map"``, which counts every label above 0 as equally relevant."""
    # Relevance as the objective sees it rises with the label.
    relevance = getattr(data.objective, "utility", data.y)
    return _first_above_last(relevance, data.offsets), labels_differ(data)


def labels_differ(data):
    """For each query of ``data`` (a ``TrainingSet``, which need not have an
    objective): whether two of its labels differ."""
    return _first_above_last(data.y, data.offsets)


def _first_above_last(values, offsets):
    # A TrainingSet sorts the labels descending within each query: the
    # first row is the highest, the last the lowest.
    first, last = offsets[:-1], offsets[1:] - 1
    nonempty = last >= first
    differ = np.zeros(len(first), dtype=bool)
    differ[nonempty] = values[first[nonempty]] > values[last[nonempty]]
    return differ


def warn_if_nothing_to_learn(contrasts, sizes, weights, method, stacklevel, query_column=None):
    """Warn when no query (of positive weight) has documents the objective
    tells apart: training would only shrink the weights. The likely cause
    is groups holding an id per row (a document id). ``contrasts`` is
    :func:`query_contrasts`'s pair, ``sizes`` the queries' numbers of rows,
    ``weights`` their weights or None; ``stacklevel`` is ``warnings.warn``'s,
    counted from this function. ``query_column``, the ranker's, when the ids
    were read from a column of X: one id per row there more likely means a
    Pipeline step before the ranker that dropped or changed that column
    (SelectKBest, PCA put a feature where the ids were), which
    "pass query ids as groups" would not fix."""
    differ, labels_differ = contrasts
    if weights is not None:
        # Queries of weight 0 are left out of training, and so of the cause
        # named below: one-row queries of positive weight among longer
        # queries of weight 0 hold a single row each, not tied labels.
        weighed = weights > 0
        differ, labels_differ, sizes = differ[weighed], labels_differ[weighed], sizes[weighed]
    if differ.any():
        return
    if bool(np.all(sizes == 1)) and weights is not None and not bool(np.all(weights > 0)):
        cause = "every query with a positive sample_weight holds a single row"
    elif bool(np.all(sizes == 1)) and query_column is not None:
        cause = (
            f"every query holds a single row: the query column (query_column={query_column!r}) "
            "holds a different value on every row. In a Pipeline, query_column refers to the "
            "ranker's own input: a step before the ranker that selects, mixes or expands columns "
            "(SelectKBest, PCA, PolynomialFeatures, ...) may have dropped or changed the id "
            "column. Keep it out of such steps, e.g. ColumnTransformer([..., "
            "('id', 'passthrough', [<id column>])]), and point query_column at its place there"
        )
    elif bool(np.all(sizes == 1)):
        cause = "every query holds a single row: pass query ids as groups, not an id per row (document)"
    elif not labels_differ.any():
        cause = "every query's documents share one relevance label"
    else:  # metric="map": relevant or not
        cause = "every query's documents are all relevant (label > 0) or all not, and MAP tells no more"
    outcome = (
        "the model is its random initialization, shrunk by the penalty"
        if method == "fit" else "this call leaves the model as it was, but for the penalty's shrinking"
    )
    warnings.warn(
        f"{method} found no query with two documents of different relevance "
        f"({cause}), so there is nothing to learn: {outcome}.",
        UserWarning,
        stacklevel=stacklevel,
    )


#: Pairs in one query past which an epoch's cost is dominated by that query's
#: pairs, which grow with the square of its length: about 45,000 documents
#: without truncation, a few seconds per epoch on one core.
LONG_QUERY_PAIRS = 10**9


def warn_if_pairs_swamp(ranker, data, stacklevel):
    """Warn when one query has so many pairs that every epoch visits more
    than ``LONG_QUERY_PAIRS`` of them: the fit takes time that grows with
    the square of that query's length, while a truncated LambdaRank or
    ListNet would take time linear in it."""
    pairs = data.query_work()
    if len(pairs) == 0 or pairs.max() <= LONG_QUERY_PAIRS:
        return
    longest = int(np.argmax(pairs))
    size = int(data.offsets[longest + 1] - data.offsets[longest])
    remedy = (
        "set k (e.g. k=30: only pairs with a document in the current top k, n * k of them)"
        if hasattr(ranker, "k") else
        "LambdaRankRanker(k=30) visits n * k pairs of a query of n documents, ListNetRanker's cost is linear in n"
    )
    warnings.warn(
        f"The longest query holds {size:,} documents, {int(pairs[longest]):,} pairs that "
        f"{type(ranker).__name__} visits every epoch: the time per epoch grows with the square "
        f"of a query's length. If that is too slow, {remedy}; or check that groups hold query "
        "ids and not a coarser key.",
        UserWarning,
        stacklevel=stacklevel,
    )
