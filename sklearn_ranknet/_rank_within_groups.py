"""The rank of every row within its query, from pointwise scores."""

import warnings

import numpy as np

from ._groups import group_rows, query_of_row
from ._validation import float_column

__all__ = ["rank_within_groups"]


def rank_within_groups(scores, groups):
    """Rank of each row within its query: 1 for the highest score.

    Rankers score rows one at a time (``predict`` needs no query ids); this
    turns those scores into positions in each query's ranked list, the way
    the metrics rank them with ``ignore_ties=True``. It is SQL's
    ``ROW_NUMBER() OVER (PARTITION BY groups ORDER BY scores DESC)``, or
    pandas' ``groupby(groups).rank(ascending=False, method="first")`` as
    integers.

    The top k documents of each query are the rows with ``ranks <= k``;
    sort them by ``(query, rank)`` to list them query by query (see the
    example).

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Score of each row, e.g. ``ranker.predict(X)``; higher ranks first.
        Real numbers; ``inf`` and ``-inf`` rank first and last, NaN is an
        error.
    groups : array-like of shape (n_samples,) or None
        Query id of each row: ints, strings or any sortable values, in any
        order; rows of one query need not be adjacent. ``None`` ranks all
        rows as one query.

    Returns
    -------
    ranks : ndarray of shape (n_samples,), int64
        The 1-based rank of each row among the rows of its query, in the
        input row order. Tied scores are ranked in input order (the first
        row gets the better rank), so the ranks of a query are exactly
        ``1, ..., n_docs`` of that query.

    Raises
    ------
    ValueError
        If ``scores`` holds NaN or is not 1-D, or if ``groups`` does not hold
        one valid query id per row.

    Warns
    -----
    UserWarning
        If every query holds a single row (more than one row in all): every
        rank is then 1, as when ``groups`` holds an id per row, or the
        arguments were swapped (``rank_within_groups(groups, scores)``).

    See Also
    --------
    sklearn_ranknet.metrics.ndcg_per_query : NDCG@k of each query.

    Examples
    --------
    Two interleaved queries; in query ``"b"`` the first two rows tie, so the
    one given first ranks first:

    >>> from sklearn_ranknet import rank_within_groups
    >>> rank_within_groups([0.3, 0.5, 0.5, 0.9, 0.5], ["a", "b", "b", "a", "b"])
    array([2, 1, 2, 1, 3])

    The top 2 documents of each query of a DataFrame, best first:

    >>> import pandas as pd
    >>> df = pd.DataFrame({
    ...     "query": [7, 7, 3, 7, 3, 3, 7],
    ...     "doc": ["d1", "d2", "d3", "d4", "d5", "d6", "d7"],
    ...     "score": [0.2, 1.5, 0.7, 0.9, -0.3, 2.0, 0.1],
    ... })
    >>> df["rank"] = rank_within_groups(df["score"], df["query"])
    >>> df[df["rank"] <= 2].sort_values(["query", "rank"])
       query doc  score  rank
    5      3  d6    2.0     1
    2      3  d3    0.7     2
    1      7  d2    1.5     1
    3      7  d4    0.9     2
    """
    scores = float_column(scores, "scores")
    n_samples = len(scores)
    nan = np.isnan(scores)
    if nan.any():
        raise ValueError(
            f"scores contains NaN (first at row {int(np.flatnonzero(nan)[0])}); "
            "a NaN score has no place in a ranking."
        )
    query_groups = group_rows(groups, n_samples)
    if n_samples > 1 and query_groups.n_queries == n_samples:
        warnings.warn(
            f"Every one of the {n_samples} queries holds a single row, so every rank "
            "is 1. groups should hold query ids, not an id per row (document); the "
            "scores come first: rank_within_groups(scores, groups).",
            UserWarning,
            stacklevel=2,
        )
    # Position of each row's query (queries in sorted id order), per input row.
    query = query_groups.restore(query_of_row(query_groups.offsets))
    # Rows by query, then by descending score; np.lexsort is stable, so tied
    # scores keep their input order. Negation is exact, and maps -0.0 and
    # 0.0 to values that compare equal, as they do in the metrics.
    by_rank = np.lexsort((-scores, query))
    ranks = np.empty(n_samples, dtype=np.int64)
    # by_rank lists the queries one after another in the order of offsets.
    ranks[by_rank] = np.arange(n_samples) - query_groups.offsets[query[by_rank]] + 1
    return ranks
