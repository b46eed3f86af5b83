"""Co-location: dask collections zipped partition by partition into one
DataFrame, shuffled so that every partition holds whole queries."""

import dask
import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd

from .._groups import _check_no_missing, weight_values
from .._metadata_columns import merge_groups, split_query_column
from .._validation import float_column

_Y, _SCORE, _QID, _WEIGHT, _PART, _ROW = "__y__", "__score__", "__qid__", "__w__", "__part__", "__row__"



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
        if ndim == 2 and np.isnan(collection.shape[1]):
            raise ValueError(
                f"{name} has an unknown number of columns (shape {collection.shape}): compute its "
                f"chunk sizes first ({name}.compute_chunk_sizes()), or give map_blocks its chunks=."
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
        # one by one.
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
        # The task shuffle: distributed's p2p shuffle logs two WARNING lines
        # per shuffle on the scheduler, and was no faster here (see
        # docs/benchmarks.md, "Dask").
        frame = frame.shuffle(on=_QID, ignore_index=True, shuffle_method="tasks")
    return list(frame.to_delayed())


# ---------------------------------------------------------------------------
# The client


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


def _row_count(client, collection):
    """The number of rows of a dask collection (or of anything with a
    length), counted on the cluster when its chunks' sizes are unknown."""
    if isinstance(collection, da.Array):
        if not np.isnan(collection.shape[0]):
            return int(collection.shape[0])
        if collection.ndim == 2:  # one block per row chunk
            collection = collection[:, 0]
        counts = collection.map_blocks(lambda block: np.array([len(block)]), chunks=(1,), dtype=np.int64)
        return int(_computed(client, counts.sum())[0])
    if isinstance(collection, (dd.Series, dd.DataFrame)):
        # The lengths themselves, summed here: dask before 2025 (seen:
        # 2024.1, 2024.12) cannot sum map_partitions(len) on the cluster.
        return int(np.sum(_computed(client, collection.map_partitions(len))[0]))
    return len(collection)


#: The share of the smallest worker's memory limit that the training
#: features may take for a fit to gather them on that worker: the in-memory
#: fit holds them several times over (the gathered frame, X, the encoded
#: inputs and a minibatch's activations).
_ONE_WORKER_SHARE = 1 / 8
#: The budget when the workers have no memory limit.
_UNLIMITED_WORKER_BUDGET = 2**30


def _one_worker_budget(client):
    """Bytes of training features one worker can take for a gathered fit."""
    limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    limits = [limit for limit in limits if limit > 0]
    return int(min(limits) * _ONE_WORKER_SHARE) if limits else _UNLIMITED_WORKER_BUDGET
