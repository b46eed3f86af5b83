"""NDCG and MAP of dask collections, query by query, on the cluster."""

import warnings

import dask
import numpy as np

from .. import metrics as _metrics
from .._groups import QueryGroups, query_weights
from . import _training
from ._colocation import _PART, _QID, _ROW, _SCORE, _WEIGHT, _Y, _colocated, _computed, _numpy_dtype, _zipped

def _query_values(frame, metric, k, gain, ignore_ties, weighted):
    """Per-query values of one co-located partition: sorted query ids, the
    metric's value and emptiness flag, the query weights (or None), and the
    partition's number of rows."""
    if len(frame) == 0:
        nothing = np.zeros(0)
        return (frame[_QID].to_numpy(), nothing, nothing.astype(bool),
                nothing if weighted else None, 0)
    # Input order inside each query (ties with ignore_ties=True).
    frame = frame.sort_values([_PART, _ROW], kind="stable")
    y = frame[_Y].to_numpy()
    scores = frame[_SCORE].to_numpy()
    groups = frame[_QID].to_numpy()
    with warnings.catch_warnings():
        # Whether every query holds one row is a question about all the
        # data, not one partition's share: the client asks it.
        warnings.filterwarnings("ignore", message="Every one of the", category=UserWarning)
        if metric == "ndcg":
            query_groups, values, empty = _metrics._ndcg_values(y, scores, groups, k, gain, ignore_ties)
        else:
            query_groups, values, empty = _metrics._ap_values(y, scores, groups, k, ignore_ties)
    weights = None
    if weighted:
        w = frame[_WEIGHT].to_numpy()
        # All-zero weights are legitimate here (other partitions may weigh).
        weights = query_weights(query_groups, w) if np.any(w) else np.zeros(query_groups.n_queries)
    return query_groups.query_ids, values, empty, weights, len(frame)


def _query_mean(metric, y_true, y_score, *, groups, sample_weight, k, gain, ignore_ties,
                empty_query_score, partitioned_by_query, X=None, query_column=None, client=None,
                names=("y_true", "y_score")):
    """Mean over queries of a metric on dask collections: co-located, per
    query values on each partition, the mean on the client (computed on
    ``client``, or the default scheduler when None). ``names`` are the
    caller's names of ``y_true`` and ``y_score``, for the messages (a
    ranker's ``score`` gets ``y`` and scores it made from ``X``)."""
    y_name, score_name = names
    frame, _, _ = _zipped(X=X, y=y_true, groups=groups, sample_weight=sample_weight, y_score=y_score,
                          query_column=query_column, y_name=y_name, score_name=score_name)
    if _numpy_dtype(frame._meta[_Y].dtype).kind not in "biuf":
        raise ValueError(f"{y_name} must hold numeric labels; got dtype {frame._meta[_Y].dtype}.")
    parts = _colocated(frame, partitioned_by_query)
    weighted = sample_weight is not None
    tasks = [dask.delayed(_query_values, pure=True)(p, metric, k, gain, ignore_ties, weighted)
             for p in parts]
    results = _computed(client, *tasks)
    ids = np.concatenate([r[0] for r in results])
    if len(ids) == 0:
        raise ValueError(f"{y_name} and {score_name} are empty; there is nothing to rank.")
    order = np.argsort(ids, kind="stable")
    partition_of = np.repeat(np.arange(len(results)), [len(r[0]) for r in results])[order]
    _training.check_disjoint(ids[order], partition_of, partitioned_by_query)
    values = np.concatenate([r[1] for r in results])[order]
    empty = np.concatenate([r[2] for r in results])[order]
    weights = np.concatenate([r[3] for r in results])[order] if weighted else None
    _metrics._warn_if_one_row_each(sum(r[4] for r in results), len(ids), stacklevel=4)  # the caller of ndcg_score
    # One row per query: the in-memory mean, with its checks and messages.
    one_row_each = QueryGroups(order=None, offsets=np.arange(len(ids) + 1), query_ids=ids[order])
    return _metrics._mean_over_queries(one_row_each, values, empty, empty_query_score, weights)


def _warn_one_query(function):
    warnings.warn(
        f"{function} got no groups, so all rows are scored as one query. Pass "
        "groups=<query id per row> to score query by query.",
        UserWarning,
        stacklevel=3,
    )


def ndcg_score(y_true, y_score, *, groups=None, k=None, gain="exponential", ignore_ties=False,
               empty_query_score=1.0, sample_weight=None, partitioned_by_query=False):
    """NDCG averaged over queries, computed on a Dask cluster.

    Same arguments, conventions and result as
    :func:`sklearn_ranknet.metrics.ndcg_score`, for dask collections. The
    rows are co-located by query (a shuffle on the query id, skipped with
    ``partitioned_by_query=True``), each partition computes the NDCG of its
    queries with the in-memory metric, and only per-query values travel to
    the client, which takes their mean. The result equals the in-memory one
    (to rounding: the same per-query values, averaged in the same order).

    Parameters
    ----------
    y_true : dask Array or Series of shape (n_samples,)
        Graded relevance of each row.
    y_score : dask Array or Series of shape (n_samples,)
        Predicted score of each row, with partitions matching ``y_true``'s
        (the same number, with the same rows), e.g. ``ranker.predict(X)``.
    groups : dask Array or Series of shape (n_samples,), default=None
        Query id of each row, partitioned like ``y_true``. ``None`` scores
        all rows as one query (and warns).
    k : int, default=None
        NDCG@k; ``None`` uses every rank.
    gain : {"exponential", "linear"}, default="exponential"
        ``2**label - 1`` or ``label``.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents. If True, tied documents are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Score of a query whose ideal DCG is 0 (no document with a positive
        label). ``None`` leaves such queries out of the mean.
    sample_weight : dask Array or Series of shape (n_samples,), default=None
        Query weights, constant within a query.
    partitioned_by_query : bool, default=False
        Whether every partition already holds whole queries (then no
        shuffle; checked, an error if not).

    Returns
    -------
    score : float
        Mean NDCG@k over queries.

    See Also
    --------
    sklearn_ranknet.metrics.ndcg_score : The in-memory metric.

    Examples
    --------
    Without a distributed client, Dask's local scheduler computes it:

    >>> import dask.array as da
    >>> from sklearn_ranknet import dask as skd
    >>> y_true = da.from_array([3, 2, 0, 0, 1, 1], chunks=4)
    >>> y_score = da.from_array([0.5, 0.5, 0.1, 0.2, 0.9, 0.4], chunks=4)
    >>> groups = da.from_array([1, 1, 1, 2, 2, 2], chunks=4)
    >>> round(skd.ndcg_score(y_true, y_score, groups=groups), 4)
    0.9585
    """
    _metrics.ndcg_score([1.0, 0.0], [1.0, 0.0], groups=[0, 0], k=k, gain=gain,
                        ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    if groups is None:
        _warn_one_query("ndcg_score")
    return _query_mean("ndcg", y_true, y_score, groups=groups, sample_weight=sample_weight, k=k,
                       gain=gain, ignore_ties=ignore_ties, empty_query_score=empty_query_score,
                       partitioned_by_query=partitioned_by_query)


def map_score(y_true, y_score, *, groups=None, k=None, ignore_ties=False, empty_query_score=1.0,
              sample_weight=None, partitioned_by_query=False):
    """Mean average precision (MAP@k) over queries, computed on a Dask cluster.

    Same arguments, conventions and result as
    :func:`sklearn_ranknet.metrics.map_score`, for dask collections,
    computed as :func:`ndcg_score` is (co-located queries, per-query values
    on the partitions, the mean on the client).

    Parameters
    ----------
    y_true : dask Array or Series of shape (n_samples,)
        Relevance of each row; only ``> 0`` matters.
    y_score : dask Array or Series of shape (n_samples,)
        Predicted score of each row, with partitions matching ``y_true``'s.
    groups : dask Array or Series of shape (n_samples,), default=None
        Query id of each row. ``None`` scores all rows as one query.
    k : int, default=None
        MAP@k: only the top ``k`` ranks count. ``None`` uses every rank.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents. If True, tied documents are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Score of a query with no relevant document. ``None`` leaves such
        queries out of the mean.
    sample_weight : dask Array or Series of shape (n_samples,), default=None
        Query weights, constant within a query.
    partitioned_by_query : bool, default=False
        Whether every partition already holds whole queries (then no
        shuffle; checked, an error if not).

    Returns
    -------
    score : float
        Mean AP@k over queries.

    See Also
    --------
    sklearn_ranknet.metrics.map_score : The in-memory metric.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn_ranknet import dask as skd
    >>> y_true = da.from_array([1, 0, 1, 0, 1], chunks=2)
    >>> y_score = da.from_array([0.9, 0.8, 0.7, 0.5, 0.5], chunks=2)
    >>> groups = da.from_array(["q1", "q1", "q1", "q2", "q2"], chunks=2)
    >>> round(skd.map_score(y_true, y_score, groups=groups), 4)
    0.7917
    """
    _metrics.map_score([1.0, 0.0], [1.0, 0.0], groups=[0, 0], k=k, ignore_ties=ignore_ties,
                       empty_query_score=empty_query_score)
    if groups is None:
        _warn_one_query("map_score")
    return _query_mean("map", y_true, y_score, groups=groups, sample_weight=sample_weight, k=k,
                       gain=None, ignore_ties=ignore_ties, empty_query_score=empty_query_score,
                       partitioned_by_query=partitioned_by_query)
