"""Scale-out on Dask: rankers trained on a cluster, and distributed metrics.

The rankers :class:`DaskLambdaRankRanker`, :class:`DaskRankNetRanker` and
:class:`DaskListNetRanker` take dask arrays or dask DataFrame / Series (with
matching partitions) and train where the data lives; the metrics
:func:`ndcg_score` and :func:`map_score` score dask collections. Everything
here is built from the in-memory rankers and metrics, which stay the unit of
work on each partition. Needs the dask extra (``pip install ".[dask]"`` from the repository's
folder); ``import sklearn_ranknet`` never imports Dask.

Notes
-----
How a fit runs:

1. **Co-location.** The rows, labels, query ids and weights are zipped
   partition by partition into one dask DataFrame and shuffled on the query
   id (``DataFrame.shuffle(on=...)``), so that every partition holds whole
   queries: no query is ever trained or scored as two. The shuffle moves the
   data once, across the network: with ``partitioned_by_query=True`` it is
   skipped, and the promise is checked (each partition's query ids are
   gathered, and an id found in two partitions is an error).
2. **Shards.** Each partition becomes a shard on its worker: its queries
   arranged as the in-memory ranker arranges its training set. The client
   gathers per-query numbers only (ids, sizes, weights) and the features'
   count, mean and sum of squared deviations, merged into the global input
   scaling with Chan et al.'s formula; it draws the validation queries and
   the loss sample as the in-memory ranker does (the same queries for the
   same ``random_state``).
3. **Rounds.** Local SGD with parameter averaging: each round, every shard
   runs one epoch over its own training queries from the current averaged
   parameters with its own optimizer state, and the client averages the
   parameters weighted by each shard's total query weight. The same round
   evaluates the previous epoch's parameters on the shards (loss and
   held-out NDCG@10, per query), so an epoch costs one round trip; early
   stopping decides as in memory.

The training state (parameters, each shard's optimizer state, the random
state, the early-stopping record) lives on the client and travels with each
round's tasks, which are pure functions of their inputs: a worker that dies
costs a recomputed partition (from its lineage) and a retried task, and the
fit ends with the same model. Work the cluster cannot recover (a worker that
dies again and again) is a :class:`RuntimeError` saying so.

Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> from distributed import Client, LocalCluster
>>> from sklearn_ranknet import dask as skd
>>> from sklearn_ranknet.metrics import ndcg_score
>>> from sklearn_ranknet.datasets import make_ranking
>>> X, y, qid = make_ranking(n_queries=40, random_state=0)
>>> scores = X[:, 0]
>>> chunks = 200  # chunks that cut through queries
>>> dy, ds, dq = (da.from_array(a, chunks=chunks) for a in (y, scores, qid))
>>> with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster, \\
...         Client(cluster):
...     value = skd.ndcg_score(dy, ds, groups=dq, k=10)
>>> bool(abs(value - ndcg_score(y, scores, groups=qid, k=10)) < 1e-12)
True
"""

import copy
import sys
import warnings

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import distributed
    import pandas as pd
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "sklearn_ranknet.dask needs Dask (dask[distributed,dataframe]) and pandas, "
        f"which are not installed ({exc}). Install the extra: "
        "pip install \"dask[distributed,dataframe]\" pandas"
    ) from exc

import inspect
import re

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    _get_feature_names,
    check_is_fitted,
)

from . import _dask_training
from . import metrics as _metrics
from ._base import check_groups_for_score
from ._groups import QueryGroups, _check_no_missing, query_weights, weight_values
from ._lambdarank import LambdaRankRanker
from ._listnet import ListNetRanker
from ._query_column import (
    check_features_left,
    check_width_with_column,
    merge_groups,
    missing_ids_fixes,
    split_query_column,
)
from ._ranknet import RankNetRanker
from ._training import SCORE_K
from ._validation import float_column, label_remedy

__all__ = [
    "DaskLambdaRankRanker",
    "DaskRankNetRanker",
    "DaskListNetRanker",
    "ndcg_score",
    "map_score",
]

#: Column names of the zipped frame; features are f0, f1, ...
_Y, _SCORE, _QID, _WEIGHT, _PART, _ROW = "__y__", "__score__", "__qid__", "__w__", "__part__", "__row__"


# ---------------------------------------------------------------------------
# Zipping collections partition by partition


def _is_dask(collection):
    return isinstance(collection, (da.Array, dd.DataFrame, dd.Series))


def _partitions(collection, name, ndim):
    """The partitions of a dask collection as delayed objects, and an empty
    sample of one (its meta). 2-D arrays are rechunked to whole rows."""
    if isinstance(collection, da.Array):
        if collection.ndim == 2 and ndim == 1 and collection.shape[1] == 1:
            collection = collection[:, 0]
        if collection.ndim != ndim:
            raise ValueError(
                f"{name} must be a {ndim}-D dask array; got shape {collection.shape}."
            )
        if ndim == 2 and collection.numblocks[1] > 1:
            collection = collection.rechunk({1: -1})
        shape = (0,) if ndim == 1 else (0, collection.shape[1])
        return list(collection.to_delayed().ravel()), np.empty(shape, dtype=collection.dtype)
    if isinstance(collection, dd.DataFrame) and ndim == 1:
        if len(collection.columns) != 1:
            raise ValueError(f"{name} must be one column; got a DataFrame of {len(collection.columns)}.")
        collection = collection[collection.columns[0]]
    if isinstance(collection, dd.Series) and ndim == 2:
        raise ValueError(
            f"{name} must be 2-D: a dask DataFrame or 2-D array; got a Series. For a single "
            f"feature, use {name}.to_frame()."
        )
    if isinstance(collection, (dd.DataFrame, dd.Series)):
        return list(collection.to_delayed()), collection._meta
    raise TypeError(
        f"{name} must be a dask Array, DataFrame or Series; got {type(collection).__name__}. "
        "For data in memory use the in-memory rankers and sklearn_ranknet.metrics."
    )


def _numpy_dtype(dtype):
    """The numpy dtype a column's values take: pandas' nullable columns
    (Float64, Int64, boolean) name theirs; text and categories are objects."""
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if numpy_dtype is not None:
        return np.dtype(numpy_dtype)
    return dtype if isinstance(dtype, np.dtype) else np.dtype(object)


def _feature_dtype(meta_features):
    """float32 when every feature is float32 (a float32 model, as in
    memory), float64 otherwise."""
    dtypes = list(meta_features.dtypes) if hasattr(meta_features, "dtypes") else [meta_features.dtype]
    bad = [str(d) for d in dtypes if _numpy_dtype(d).kind not in "biuf"]
    if bad:
        raise ValueError(f"X must hold numeric features; found columns of dtype {sorted(set(bad))}.")
    return np.float32 if dtypes and all(_numpy_dtype(d) == np.float32 for d in dtypes) else np.float64


def _part_frame(index, X, y, groups, weights, scores, *, query_column, dtype, features, y_name,
                score_name):
    """One partition of the zipped frame: features f0.. (when ``features``),
    label, score, query id, weight, and where each row came from. ``y_name``
    and ``score_name`` are the caller's names of the labels and scores."""
    ids = None
    if X is not None:
        if not hasattr(X, "iloc"):
            X = np.asarray(X)
        if query_column is not None:
            X, ids = split_query_column(X, query_column)
    groups = merge_groups(None if groups is None else np.asarray(groups).ravel(), ids, query_column)
    if groups is not None:
        # Here, in input order: after the shuffle a row's place says nothing.
        # pandas' vectorised test first, as the full check reads object ids
        # one by one (0.3 s a million rows).
        ids = np.asarray(groups)
        if pd.isna(ids).any() or (ids.dtype.kind == "f" and not np.isfinite(ids).all()):
            _check_no_missing(ids, "groups", partition=index)
    given = {"X": X, y_name: y, "groups": groups, "sample_weight": weights, score_name: scores}
    lengths = {name: len(v) for name, v in given.items() if v is not None}
    if len(set(lengths.values())) > 1:
        sizes = ", ".join(f"{name} {n}" for name, n in lengths.items())
        raise ValueError(
            f"Partition {index} does not match across the inputs (rows: {sizes}). Give them "
            "matching partitions: the same number of partitions, with the same rows in each "
            "(e.g. y.rechunk(X.chunks[0]), or columns of one DataFrame)."
        )
    n = next(iter(lengths.values()))
    if features:
        values = X.to_numpy(dtype=dtype) if hasattr(X, "iloc") else np.asarray(X, dtype=dtype)
        frame = pd.DataFrame(values, columns=[f"f{j}" for j in range(values.shape[1])], copy=False)
    else:
        frame = pd.DataFrame(index=pd.RangeIndex(n))
    if y is not None:
        if isinstance(y, np.ndarray) and y.dtype == object:
            # A dask array of numbers held as objects (dask would make the
            # column text); pandas' object columns are refused by their meta.
            y = float_column(y, y_name)
        frame[_Y] = np.asarray(y).ravel()
    if scores is not None:
        values = np.asarray(scores)
        if values.dtype.kind in "iu":
            # Kept as integers: after co-location the in-memory check sees a
            # query's rows together and refuses integers past 2**53 that
            # float64 would round onto one (tied rows); cast here, per input
            # partition, they would tie unseen.
            frame[_SCORE] = values.ravel()
        else:
            # As in memory: text and datetimes are refused, not read as numbers.
            frame[_SCORE] = float_column(scores, score_name)
    frame[_QID] = np.zeros(n, dtype=np.int64) if groups is None else groups
    if weights is not None:
        # Refused here as in memory: cast to float64, complex weights would
        # lose their imaginary parts (with a warning on a worker, unseen).
        frame[_WEIGHT] = weight_values(weights).ravel()
    frame[_PART] = np.full(n, index, dtype=np.int64)
    frame[_ROW] = np.arange(n, dtype=np.int64)
    return frame


def _zipped(*, X=None, y=None, groups=None, sample_weight=None, y_score=None, query_column=None,
            features=False, y_name="y", score_name="y_score"):
    """One dask DataFrame of the given collections, zipped partition by
    partition, X's features' meta (or None) and their dtype. ``y_name`` and
    ``score_name`` name ``y`` and ``y_score`` in the messages as the caller
    knows them."""
    given = {"X": X, y_name: y, "groups": groups, "sample_weight": sample_weight, score_name: y_score}
    parts, metas = {}, {}
    for name, collection in given.items():
        if collection is not None:
            parts[name], metas[name] = _partitions(collection, name, 2 if name == "X" else 1)
    counts = {name: len(p) for name, p in parts.items()}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{name} has {n}" for name, n in counts.items())
        raise ValueError(
            f"The inputs must have matching partitions, but {listed}. Rechunk or repartition "
            "them alike (e.g. b = b.rechunk(a.chunks[0]) for dask arrays)."
        )
    known = {name: c.chunks[0] for name, c in given.items()
             if isinstance(c, da.Array) and not np.isnan(c.shape[0])}
    if len(set(known.values())) > 1:
        (first_name, first), *others = known.items()
        name, chunks = next((name, chunks) for name, chunks in others if chunks != first)
        at = next((i for i, (a, b) in enumerate(zip(first, chunks)) if a != b), min(len(first), len(chunks)))
        shown = {n: f"{c[at]} rows" if at < len(c) else "none" for n, c in ((first_name, first), (name, chunks))}
        raise ValueError(
            "The inputs must have matching partitions, but their row chunks differ: "
            f"{first_name} has {len(first)} chunks of {sum(first)} rows in all, {name} "
            f"{len(chunks)} chunks of {sum(chunks)} rows; chunk {at} holds "
            f"{shown[first_name]} in {first_name} and {shown[name]} in {name}. "
            "Rechunk them alike (e.g. b = b.rechunk(a.chunks[0]))."
        )
    ids_dtype = metas["groups"].dtype if "groups" in metas else None
    if isinstance(ids_dtype, np.dtype) and ids_dtype.kind == "O":  # not pandas' text or categories
        # Partitions are read apart: one cannot tell that another holds 1 where
        # it holds "1" (an error in memory), and the shuffle hashes 1 and 1.0
        # apart (one query in memory). So ids come in one dtype.
        raise ValueError(
            "groups holds Python objects (dtype object); the Dask rankers and metrics need query "
            "ids of one dtype. Convert them first, e.g. groups.astype(int) or groups.astype(str)."
        )
    meta_features = None
    dtype = np.float64
    if X is not None:
        meta_features = split_query_column(metas["X"], query_column)[0]
        if features:
            dtype = _feature_dtype(meta_features)
    options = {"query_column": query_column, "dtype": dtype, "features": features, "y_name": y_name,
               "score_name": score_name}
    names = list(given)

    def pieces(index, source):
        return [source[name][index] if name in source else None for name in names]

    meta = _part_frame(0, *pieces(0, {k: [v] for k, v in metas.items()}), **options)
    n_parts = next(iter(counts.values()))
    delayed_parts = [
        dask.delayed(_part_frame, pure=True)(i, *pieces(i, parts), **options) for i in range(n_parts)
    ]
    frame = dd.from_delayed(delayed_parts, meta=meta, verify_meta=False)
    return frame, meta_features, dtype


def _colocated(frame, partitioned_by_query):
    """The frame's partitions (delayed), each holding whole queries: shuffled
    on the query id unless the caller says they already do."""
    if not partitioned_by_query and frame.npartitions > 1:
        frame = frame.shuffle(on=_QID, ignore_index=True)
    return list(frame.to_delayed())


# ---------------------------------------------------------------------------
# Metrics


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


def _check_open(client):
    """``client``, unless it is closed: distributed's own error ("Client is
    closed. Can't send update-graph message.") says nothing of the ranker's
    ``client`` parameter, which is where the fix lies."""
    if getattr(client, "status", None) in ("closing", "closed"):
        raise ValueError(
            "The ranker's client is closed. Give it a running one with "
            "set_params(client=...), or set client=None to use the default client."
        )
    return client


def _computed(client, *collections):
    """``dask.compute(*collections)``, on ``client`` when one is given (a
    ranker's own, which need not be the default scheduler)."""
    if client is None:
        return dask.compute(*collections)
    _check_open(client)
    return tuple(client.gather(client.compute(list(collections))))


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
    _dask_training.check_disjoint(ids[order], partition_of, partitioned_by_query)
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


# ---------------------------------------------------------------------------
# The rankers


def _get_client(client):
    if client is not None:
        return _check_open(client)
    try:
        return distributed.default_client()
    except ValueError as exc:
        raise ValueError(
            "The Dask rankers train on a distributed cluster, and no Client was found. "
            "Create one first (distributed.Client(...) makes itself the default) or pass "
            "client=... to the ranker."
        ) from exc


def _predict_rows(rows, model, dtype):
    # A partition may be empty (filtered data); the model refuses 0 rows.
    return model.predict(rows) if rows.shape[0] else np.empty(0, dtype=dtype)


def _predict_frame(frame, model, dtype):
    return pd.Series(_predict_rows(frame, model, dtype), index=frame.index, dtype=dtype)


def _scores_dtype(model_dtype, input_dtypes):
    """The dtype ``predict`` returns: float32 when the model and every input
    column are float32 (it then computes in float32), float64 otherwise,
    as the in-memory ranker's ``predict`` does."""
    inputs_float32 = all(_numpy_dtype(d) == np.float32 for d in input_dtypes)
    return np.dtype(np.float32 if inputs_float32 and model_dtype == np.float32 else np.float64)


#: Attributes of a Dask ranker that its in-memory twin does not get.
_DASK_ONLY = ("_fit_timings",)


class _DaskRanker:
    """What the Dask rankers add to their in-memory class: fit on dask
    collections, lazy predict, distributed score, to_local."""

    _local_class = None

    def _store(self, arguments):
        # __init__ only stores its arguments, as scikit-learn asks.
        arguments = {k: v for k, v in arguments.items() if k not in ("self", "__class__")}
        self.client = arguments.pop("client")
        self.partitioned_by_query = arguments.pop("partitioned_by_query")
        self._local_class.__init__(self, **arguments)

    @property
    def client_(self):
        """The client ``fit`` uses: ``client``, or the default one."""
        return _get_client(self.client)

    def __getstate__(self):
        # A client is a connection: never pickled (nor deep-copied).
        state = dict(super().__getstate__())
        state["client"] = None
        return state

    def __sklearn_clone__(self):
        # clone deep-copies parameters, which a client cannot survive: the
        # clone shares it instead, as it would share n_jobs.
        params = self.get_params(deep=False)
        client = params.pop("client")
        cloned = type(self)(**{name: clone(value, safe=False) for name, value in params.items()}, client=client)
        # What scikit-learn's clone carries besides the parameters: the
        # metadata requests (set_fit_request, ...) and set_output's choice.
        for name in ("_metadata_request", "_sklearn_output_config"):
            if name in vars(self):
                setattr(cloned, name, copy.deepcopy(vars(self)[name]))
        return cloned

    def _local_params(self):
        params = self.get_params(deep=False)
        del params["client"], params["partitioned_by_query"]
        return params

    def to_local(self):
        """The equivalent fitted in-memory ranker.

        Returns
        -------
        ranker : RankNetRanker, LambdaRankRanker or ListNetRanker
            The in-memory ranker of the same class, with the same
            hyperparameters (but ``client`` and ``partitioned_by_query``) and
            a copy of the fitted state: its ``predict`` gives the same scores.
        """
        check_is_fitted(self, "coefs_")
        params = self.get_params(deep=False)
        local = self._local_class(**self._local_params())
        for name, value in vars(self).items():
            if name not in params and name not in _DASK_ONLY:
                setattr(local, name, copy.deepcopy(value))
        return local

    def _no_partial_fit(self):
        raise AttributeError(
            "The Dask rankers have no partial_fit: fit trains on a whole dask collection. "
            "For data arriving in chunks, call partial_fit on to_local()."
        )

    @available_if(_no_partial_fit)
    def partial_fit(self, X, y, groups=None, sample_weight=None):  # pragma: no cover
        """Not available (see :meth:`to_local`)."""

    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit the ranker on a Dask cluster.

        Parameters
        ----------
        X : dask Array or dask DataFrame of shape (n_samples, n_features)
            Dense features (a 2-D dask array, rechunked to whole rows if
            needed, or a DataFrame). float32 trains a float32 model.
        y : dask Array or Series of shape (n_samples,)
            Graded relevance labels, partitioned like ``X``.
        groups : dask Array or Series of shape (n_samples,), default=None
            Query id of each row, partitioned like ``X``; a query's rows may
            be in several partitions (the shuffle brings them together).
            ``None`` takes them from ``query_column``, or treats all rows as
            one query (and warns).
        sample_weight : dask Array or Series of shape (n_samples,), default=None
            Query weights, constant within a query.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        self._validate_params()
        if self.solver == "lbfgs":
            raise ValueError(
                'The Dask rankers train with a stochastic solver ("adam" or "sgd"). For '
                "L-BFGS, fit the in-memory ranker on data that fits in memory."
            )
        if self.ema_momentum not in ("auto", 0):  # "auto": no average here
            raise ValueError(
                "The Dask rankers do not average weights yet; set ema_momentum=0 (or "
                "fit the in-memory ranker)."
            )
        client = _get_client(self.client)
        # As in memory: a fit that raises leaves the ranker as it was.
        with self._as_before_if_it_raises():
            self._begin_fit()
            first_call = not hasattr(self, "_model")
            if not first_call:
                self._check_same_network()  # warm_start continues the fitted network
            shards = self._shards(client, X, y, groups, sample_weight, first_call)
            history = self._history()
            request = _dask_training.FitRequest(
                params=self._local_params(), rules=self._AUTO, n_features=self.n_features_in_,
                model=None if first_call else self._model, state=self._fit_state, history=history,
                objective_factory=self._objective_factory, partitioned_by_query=self.partitioned_by_query,
            )
            model, resolved, self._fit_timings = _dask_training.fit(client, shards, request)
            self._publish(model, history, resolved)
        return self

    def _shards(self, client, X, y, groups, sample_weight, first_call):
        """Futures of the co-located shards of the training data."""
        if not _is_dask(X):
            raise TypeError(
                f"X must be a dask Array or DataFrame; got {type(X).__name__}. For data in "
                f"memory use {self._local_class.__name__}."
            )
        if isinstance(X, da.Array) and sp.issparse(X._meta):
            raise TypeError(
                "The Dask rankers train on dense features; X's chunks are scipy.sparse "
                "matrices. Densify them (X.map_blocks(lambda b: b.toarray())), or fit "
                f"{self._local_class.__name__} on the CSR matrix in memory."
            )
        if groups is None and self.query_column is None:
            warnings.warn(
                f"fit got no groups, so all rows are treated as one query. {missing_ids_fixes()}",
                UserWarning,
                stacklevel=4,  # the caller of fit
            )
        frame, meta_features, dtype = _zipped(
            X=X, y=y, groups=groups, sample_weight=sample_weight, query_column=self.query_column,
            features=True,
        )
        y_dtype = frame._meta[_Y].dtype
        if _numpy_dtype(y_dtype).kind not in "biuf":
            raise ValueError(f"y must hold numeric relevance labels (e.g. 0..4); got dtype {y_dtype}.")
        # As in memory, before scikit-learn's checks, which would count the
        # features left (or meet none only on a worker).
        check_features_left(meta_features, self.query_column, None if first_call else self)
        _check_n_features(self, meta_features, reset=first_call)
        _check_feature_names(self, meta_features, reset=first_call)
        if not first_call:
            dtype = self._model.dtype  # a model keeps its precision
        spec = _dask_training.ShardSpec(
            self._objective_factory(None), self._uses_exponential_gain(), label_remedy(self)
        )
        columns = [f"f{j}" for j in range(self.n_features_in_)]
        make = dask.delayed(_dask_training.make_shard, pure=False)
        parts = _colocated(frame, self.partitioned_by_query)
        return client.compute([make(p, spec, columns, dtype, sample_weight is not None) for p in parts])

    def predict(self, X):
        """Score every row, lazily: one task per partition.

        Parameters
        ----------
        X : dask Array or dask DataFrame of shape (n_samples, n_features)
            Feature vectors, with the columns seen in ``fit`` (and the
            ``query_column`` when it is set, which is dropped).

        Returns
        -------
        scores : dask Array of shape (n_samples,)
            ``to_local().predict`` of each partition. From a DataFrame the
            chunk sizes are unknown until computed
            (``scores.compute_chunk_sizes()``).
        """
        check_is_fitted(self, "coefs_")
        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(f"X must be a 2-D dask array; got shape {X.shape}.")
            if X.numblocks[1] > 1:
                X = X.rechunk({1: -1})
            model = self._partition_model(np.empty((0, X.shape[1]), dtype=X.dtype))
            dtype = _scores_dtype(self.coefs_[0].dtype, [X.dtype])
            return X.map_blocks(_predict_rows, model, dtype, drop_axis=1, dtype=dtype,
                                meta=np.empty((0,), dtype=dtype))
        if isinstance(X, dd.DataFrame):
            model = self._partition_model(X._meta)
            # The query column, which the model drops, has no say in the dtype.
            features = split_query_column(X._meta, self.query_column)[0]
            dtype = _scores_dtype(self.coefs_[0].dtype, features.dtypes)
            scores = X.map_partitions(_predict_frame, model, dtype, meta=pd.Series([], dtype=dtype))
            return scores.to_dask_array()
        raise TypeError(
            f"X must be a dask Array or DataFrame; got {type(X).__name__}. For data in memory "
            "use to_local().predict(X)."
        )

    def _partition_model(self, meta):
        """The in-memory model that scores each partition of an ``X`` like
        ``meta`` (its empty form), after ``X``'s columns are checked here.

        The in-memory checks run on the client, when ``predict`` is called:
        a wrong width or foreign column names raise there, naming this class,
        and a mismatch of named and unnamed columns warns once, as in memory.
        On the workers each partition would warn again (or, on worker
        processes, the warning would be lost). Having passed these checks,
        the columns are the fitted ones in order, so the copy that goes to
        the workers takes ``X``'s names (or none) and warns no more.
        """
        if any(isinstance(n, float) and np.isnan(n) for n in meta.shape):
            return self.to_local()  # unknown width: each partition checks its own
        features = split_query_column(meta, self.query_column)[0]
        check_width_with_column(features, self.query_column, self)
        _check_n_features(self, features, reset=False)
        _check_feature_names(self, features, reset=False)
        model = self.to_local()
        names = _get_feature_names(features)
        if names is None:
            model.__dict__.pop("feature_names_in_", None)
        else:
            model.feature_names_in_ = names
        return model

    def score(self, X, y, groups=None, sample_weight=None):
        """Mean NDCG@10 over queries of ``predict(X)``, computed on the cluster.

        Parameters
        ----------
        X : dask Array or dask DataFrame of shape (n_samples, n_features)
            Feature vectors, as in :meth:`predict`.
        y : dask Array or Series of shape (n_samples,)
            Graded relevance labels, partitioned like ``X``.
        groups : dask Array or Series of shape (n_samples,), default=None
            Query id of each row; needed, here or in ``query_column``.
        sample_weight : dask Array or Series of shape (n_samples,), default=None
            Query weights: a weighted mean over queries.

        Returns
        -------
        score : float
            As :func:`ndcg_score` with ``k=10`` and the ranker's gain.
        """
        check_is_fitted(self, "coefs_")
        scores = self.predict(X)
        if groups is None and self.query_column is None:
            if isinstance(y, da.Array):  # chunks of unknown size are counted on the cluster
                counts = y.map_blocks(lambda block: np.array([len(block)]), chunks=(1,), dtype=np.int64)
                n_rows = y.shape[0] if not np.isnan(y.shape[0]) else _computed(self.client, counts.sum())[0]
            elif isinstance(y, (dd.Series, dd.DataFrame)):
                # The lengths themselves, summed here: dask before 2025 (seen:
                # 2024.1, 2024.12) cannot sum map_partitions(len) on the cluster.
                n_rows = np.sum(_computed(self.client, y.map_partitions(len))[0])
            else:  # not a dask collection: the error says so once the groups are there
                n_rows = len(y)
            check_groups_for_score(None, int(n_rows), type(self).__name__)
        return _query_mean(
            "ndcg", y, scores, groups=groups, sample_weight=sample_weight, k=SCORE_K,
            gain=getattr(self, "gain", "exponential"), ignore_ties=False, empty_query_score=1.0,
            partitioned_by_query=self.partitioned_by_query,
            X=X if self.query_column is not None else None, query_column=self.query_column,
            client=self.client, names=("y", "predict(X)"),
        )


_CLIENT_DOC = """\
client : distributed.Client or None, default=None
    The Dask client to train with; ``None`` uses
    ``distributed.default_client()`` at fit time (``client_`` tells which).
    It is never pickled nor deep-copied (a copy gets ``None`` and uses the
    default client); ``clone`` shares it. A closed client is a ``ValueError``
    in ``fit`` and ``score``.
partitioned_by_query : bool, default=False
    Whether every partition of the data already holds whole queries (e.g.
    data written partitioned by query id). Then ``fit`` and ``score`` skip
    the shuffle that co-locates each query's rows; the promise is checked
    cheaply (each partition's query ids, gathered on the client) and a query
    found in two partitions is a ``ValueError``."""

_NOTES = """\
Training is data-parallel local SGD with parameter averaging (see the
module :mod:`sklearn_ranknet.dask` and the user guide): one round per
epoch, in which every partition runs an epoch of minibatch steps over its
own queries, from the averaged parameters, with its own optimizer state;
the client averages the parameters weighted by each partition's query
weight. With P partitions an epoch takes about ``1 / P`` as many sequential
steps as in memory, and averaging P models that each took a step behaves
roughly like one step on a minibatch P times larger: the effective batch is
about ``P * batch_size`` queries. Expect more epochs than in memory for the
same ``learning_rate_init``; a larger step (about sqrt(P) times for Adam, P
times for SGD) or a smaller ``batch_size`` makes up for it. Early stopping
holds out whole queries and counts rounds, as in memory. The parameters
are not averaged over steps: ``ema_momentum="auto"`` means 0 here, and any
other value but 0 is an error. ``input_noise="auto"`` means 0 here too (it
is measured on small data held in memory); a number adds that noise. The
"auto" values for small data scaled within each query do not apply either
(the rows are not read on the client): ``batch_size="auto"`` is
LambdaRank's 16. LambdaRank's ``normalize_lambdas="auto"`` is off here (it
is for small data); True normalizes each query's lambdas in every partition.

The input scaling statistics are those of the whole data (per-partition
moments merged on the client; for the default piecewise encoding, those of
the partitions' pooled sample of at most 200,000 rows, as in memory), and the validation queries are those the
in-memory ranker draws for the same ``random_state``. A fit is reproducible
for a given ``random_state`` and partitioning (the number of partitions and
where they cut): rows are put back in input order after the shuffle."""

_EXAMPLE = """\
>>> import numpy as np
>>> import dask.array as da
>>> from distributed import Client, LocalCluster
>>> from sklearn_ranknet.dask import {name}
>>> from sklearn_ranknet.datasets import make_ranking
>>> X, y, qid = make_ranking(n_queries=60, random_state=0)
>>> dX = da.from_array(X, chunks=(400, -1))  # cuts through queries
>>> dy, dqid = da.from_array(y, chunks=400), da.from_array(qid, chunks=400)
>>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
>>> client = Client(cluster)
>>> ranker = {name}(hidden_layer_sizes=(16,), max_iter=3, random_state=0)
>>> ranker = ranker.fit(dX, dy, groups=dqid)
>>> scores = ranker.predict(dX)  # lazy
>>> scores.shape == (len(X),)
True
>>> bool(np.allclose(scores.compute(), ranker.to_local().predict(X)))
True
>>> bool(0.0 <= ranker.score(dX, dy, groups=dqid) <= 1.0)
True
>>> client.close(); cluster.close()"""


def _sections(doc):
    """A numpydoc docstring -> (summary, {section title: body})."""
    lines = inspect.cleandoc(doc).splitlines()
    heads = [
        i for i in range(len(lines) - 1)
        if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())
    ]
    summary = "\n".join(lines[: heads[0]]).strip()
    sections = {}
    for start, stop in zip(heads, heads[1:] + [len(lines)]):
        sections[lines[start].strip()] = "\n".join(lines[start + 2 : stop]).strip("\n")
    return summary, sections


def _docstring(local_class, name):
    """The Dask ranker's docstring: the in-memory one's parameters and
    attributes, plus ``client``, and notes and an example of its own."""
    _, sections = _sections(local_class.__doc__)
    local = local_class.__name__
    parts = [
        f"{local} trained data-parallel on a Dask cluster.",
        f"The same model and parameters as :class:`~sklearn_ranknet.{local}`, for data in dask "
        "collections: ``fit`` co-locates each query's rows, then trains where the data lives; "
        "``predict`` returns a lazy dask array; ``score`` computes the mean NDCG@10 by query on "
        f"the cluster; ``to_local()`` returns the equivalent fitted :class:`~sklearn_ranknet.{local}`. "
        "Modelled on ``lightgbm.DaskLGBMRanker``.",
        "Parameters\n----------\n" + sections["Parameters"] + "\n" + _CLIENT_DOC,
        "Attributes\n----------\n" + sections["Attributes"],
        f"See Also\n--------\n{local} : The in-memory ranker; ``to_local()`` returns one.",
        "Notes\n-----\n" + _NOTES,
        "Examples\n--------\n" + _EXAMPLE.format(name=name),
    ]
    return "\n\n".join(parts)


class DaskLambdaRankRanker(_DaskRanker, LambdaRankRanker):
    _local_class = LambdaRankRanker
    _parameter_constraints = {
        **LambdaRankRanker._parameter_constraints,
        "client": "no_validation",
        "partitioned_by_query": ["boolean"],
    }

    def __init__(
        self,
        hidden_layer_sizes="auto",
        *,
        activation="relu",
        solver="adam",
        alpha="auto",
        batch_size="auto",
        learning_rate_init="auto",
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=1.0,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        query_column=None,
        metric="ndcg",
        k=None,
        gain="exponential",
        pair_weighting="lambdarank",
        normalize_lambdas="auto",
        client=None,
        partitioned_by_query=False,
    ):
        self._store(locals())


class DaskRankNetRanker(_DaskRanker, RankNetRanker):
    _local_class = RankNetRanker
    _parameter_constraints = {
        **RankNetRanker._parameter_constraints,
        "client": "no_validation",
        "partitioned_by_query": ["boolean"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        activation="relu",
        solver="adam",
        alpha=1.5,
        batch_size="auto",
        learning_rate_init=3e-3,
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=0.5,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        query_column=None,
        pair_targets="hard",
        client=None,
        partitioned_by_query=False,
    ):
        self._store(locals())


class DaskListNetRanker(_DaskRanker, ListNetRanker):
    _local_class = ListNetRanker
    _parameter_constraints = {
        **ListNetRanker._parameter_constraints,
        "client": "no_validation",
        "partitioned_by_query": ["boolean"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        activation="relu",
        solver="adam",
        alpha=15.0,
        batch_size="auto",
        learning_rate_init="auto",
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=1.0,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        query_column=None,
        gain="exponential",
        client=None,
        partitioned_by_query=False,
    ):
        self._store(locals())


for _cls in (DaskLambdaRankRanker, DaskRankNetRanker, DaskListNetRanker):
    _cls.__doc__ = _docstring(_cls._local_class, _cls.__name__)
del _cls


# A fitted Dask ranker exports to ONNX as its in-memory twin; if the ONNX
# converters were registered before this module was imported, add these.
if "sklearn_ranknet.onnx" in sys.modules:
    sys.modules["sklearn_ranknet.onnx"].register_converters()
