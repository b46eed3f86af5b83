"""Query ids per row -> contiguous query segments, and back.

Metrics and estimators both receive ``groups``: one query id per row, of any
dtype, in any order, possibly interleaved. Kernels want the opposite shape:
the rows of each query next to each other, described by segment offsets.
This module is the one place that converts between the two and validates
``groups``.
"""

from dataclasses import dataclass

import numpy as np

from ._validation import shown


@dataclass(frozen=True)
class QueryGroups:
    """Rows arranged query by query.

    Queries appear in the order of their sorted ids (as ``np.unique`` sorts
    them); rows inside a query keep their input order.

    Attributes
    ----------
    order : ndarray of shape (n_samples,) or None
        Row indices that put the rows query by query (``a[order]``), or
        ``None`` when the input is already arranged that way.
    offsets : ndarray of shape (n_queries + 1,), int64
        Query ``q`` owns the arranged rows ``offsets[q]:offsets[q + 1]``.
    query_ids : ndarray of shape (n_queries,)
        The id of each query, sorted.
    """

    order: np.ndarray | None
    offsets: np.ndarray
    query_ids: np.ndarray

    @property
    def n_queries(self):
        return len(self.query_ids)

    @property
    def n_samples(self):
        return int(self.offsets[-1])

    @property
    def sizes(self):
        """Number of rows of each query, shape (n_queries,)."""
        return np.diff(self.offsets)

    def arrange(self, values):
        """Reorder per-row ``values`` query by query (rows or array rows)."""
        return values if self.order is None else values[self.order]

    def restore(self, arranged):
        """Inverse of :meth:`arrange`: back to the input row order."""
        if self.order is None:
            return arranged
        restored = np.empty_like(arranged)
        restored[self.order] = arranged
        return restored

    def rows_of(self, queries):
        """Input-row indices of the given query positions, query by query.

        Parameters
        ----------
        queries : array-like of int
            Positions in ``0..n_queries - 1`` (not ids).

        Returns
        -------
        rows : ndarray of int64
            The input rows of those queries, concatenated in the given order.
        offsets : ndarray of shape (len(queries) + 1,)
            Segment offsets of the selected queries within ``rows``.
        """
        arranged, offsets = segments_of(self.offsets, queries)
        rows = arranged if self.order is None else self.order[arranged]
        return rows, offsets


def group_rows(groups, n_samples, *, input_name="groups"):
    """Validate ``groups`` and arrange rows query by query.

    Parameters
    ----------
    groups : array-like of shape (n_samples,) or None
        One query id per row: integers, strings or any sortable values, in
        any order. ``None`` puts every row in one query.
    n_samples : int
        The number of rows the ids must cover.
    input_name : str, default="groups"
        Name used in error messages.

    Returns
    -------
    query_groups : QueryGroups

    Raises
    ------
    ValueError
        If ``groups`` is not 1-D, has the wrong length, holds NaN, or mixes
        ids that cannot be compared with each other.
    """
    if groups is None:
        return QueryGroups(
            order=None,
            offsets=np.array([0, n_samples], dtype=np.int64),
            query_ids=np.zeros(1, dtype=np.int64),
        )
    given = groups
    groups = np.asarray(groups)
    if groups.dtype.kind in "US" and not isinstance(given, np.ndarray):
        _check_one_id_type(given, input_name)
    if groups.ndim == 2 and groups.shape[1] == 1:
        groups = groups.ravel()
    if groups.ndim != 1:
        raise ValueError(
            f"{input_name} must hold one query id per row (a 1-D array); "
            f"got an array of shape {groups.shape}."
        )
    if len(groups) != n_samples:
        raise ValueError(
            f"{input_name} has {len(groups)} entries but the data has "
            f"{n_samples} rows; give one query id per row."
        )
    _check_no_missing(groups, input_name)
    if n_samples == 0:
        return QueryGroups(
            order=None, offsets=np.zeros(1, dtype=np.int64), query_ids=groups[:0]
        )
    try:
        return _group_sorted_runs(groups) or _group_by_sorting(groups)
    except TypeError as exc:
        raise ValueError(
            f"{input_name} mixes query ids that cannot be compared with each "
            f"other ({exc}); use ids of one type, e.g. all ints or all strings."
        ) from exc


def _check_one_id_type(given, input_name):
    """np.asarray turns [1, "1"] into two equal strings: refuse to merge
    ids of different types."""
    types = {type(value) for value in given}
    if len(types) > 1 and not all(issubclass(t, (str, np.str_)) for t in types):
        names = ", ".join(sorted(t.__name__ for t in types))
        raise ValueError(
            f"{input_name} mixes query ids of different types ({names}); "
            "use ids of one type, e.g. all ints or all strings."
        )


def _check_no_missing(groups, input_name, partition=None):
    """Refuse missing ids; ``partition``, the index of the Dask partition
    ``groups`` come from (their rows counted within it), or None."""
    if groups.dtype.kind == "f":
        bad = ~np.isfinite(groups)
    elif groups.dtype.kind in "mM":  # dates and durations: NaT is missing
        bad = np.isnat(groups)
    elif groups.dtype.kind == "O":
        bad = np.array([_is_missing(g) for g in groups], dtype=bool)
    else:
        return
    if bad.any():
        raise ValueError(
            f"{input_name} contains NaN or infinite query ids (first at row "
            f"{int(np.flatnonzero(bad)[0])}{'' if partition is None else f' of partition {partition}'}; "
            "NaT, None and pandas.NA are missing ids too); every row needs a query id."
        )


def _is_missing(value):
    # pandas.NA refuses to be a bool: recognised by its type, without
    # importing pandas.
    if value is None or type(value).__name__ == "NAType":
        return True
    try:
        return bool(value != value) or value in (np.inf, -np.inf)
    except (TypeError, ValueError):
        return False


def _group_sorted_runs(groups):
    """O(n) path for the common case: ids already sorted and contiguous."""
    starts = np.flatnonzero(groups[1:] != groups[:-1]) + 1
    run_ids = groups[np.concatenate(([0], starts))]
    if len(run_ids) > 1 and not np.all(run_ids[1:] > run_ids[:-1]):
        return None
    offsets = np.concatenate(([0], starts, [len(groups)])).astype(np.int64)
    return QueryGroups(order=None, offsets=offsets, query_ids=run_ids)


def _group_by_sorting(groups):
    query_ids, codes = np.unique(groups, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=len(query_ids)), out=offsets[1:])
    return QueryGroups(order=order, offsets=offsets, query_ids=query_ids)


def segments_of(offsets, queries):
    """Arranged positions of the rows of some queries, and their segments.

    Parameters
    ----------
    offsets : ndarray of shape (n_queries + 1,)
        Segment offsets of every query.
    queries : array-like of int
        Query positions (not ids), in the order wanted.

    Returns
    -------
    positions : ndarray of int64
        ``offsets[q]:offsets[q + 1]`` of each query, concatenated.
    segments : ndarray of shape (len(queries) + 1,)
        Offsets of the selected queries within ``positions``.
    """
    queries = np.asarray(queries, dtype=np.int64)
    starts = offsets[queries]
    sizes = offsets[queries + 1] - starts
    segments = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum(sizes, out=segments[1:])
    # position j of the result lies in query i at (j - segments[i]) rows in
    positions = np.repeat(starts - segments[:-1], sizes) + np.arange(segments[-1])
    return positions, segments


def query_of_row(offsets):
    """Position of the query of every arranged row, shape (n_samples,).

    Examples
    --------
    >>> query_of_row(np.array([0, 2, 5]))
    array([0, 0, 1, 1, 1])
    """
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def groups_from_sizes(sizes):
    """Per-row query ids ``0, 0, ..., 1, 1, ...`` from query sizes.

    This is LightGBM's ``group`` convention (and its ``.query`` sidecar
    files) turned into ``groups``.

    Parameters
    ----------
    sizes : array-like of int, shape (n_queries,)
        The number of consecutive rows of each query.

    Returns
    -------
    groups : ndarray of shape (sum(sizes),), int64

    Examples
    --------
    >>> groups_from_sizes([2, 3])
    array([0, 0, 1, 1, 1])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def weight_values(sample_weight, input_name="sample_weight"):
    """``sample_weight`` as a float64 array, refusing what is not real
    numbers by name; shape and values are the caller's to check.

    Parameters
    ----------
    sample_weight : float or array-like
    input_name : str, default="sample_weight"
        The name the messages give it.

    Returns
    -------
    weights : ndarray of float64, of ``sample_weight``'s shape

    Raises
    ------
    ValueError
        If a value is complex or not a number.
    """
    try:
        complex_values = np.asarray(sample_weight).dtype.kind == "c"
        weights = None if complex_values else np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        # numpy's message ("could not convert string to float: 'a'", a
        # TypeError for dicts, "inhomogeneous shape" for nested lists)
        # names no input, and the caller converts several.
        raise ValueError(f"{input_name} must hold one number per row ({exc}).") from exc
    if complex_values:
        # The cast to float64 would drop the imaginary parts, with only
        # numpy's ComplexWarning to say so (scikit-learn refuses them too).
        raise ValueError(f"{input_name} must hold real numbers; got complex values.")
    return weights


def query_weights(query_groups, sample_weight, *, input_name="sample_weight", relative=False):
    """One weight per query from per-row weights that are constant within
    each query (the convention of XGBoost's and LightGBM's rankers).

    Parameters
    ----------
    query_groups : QueryGroups
    sample_weight : float, array-like of shape (n_samples,) or None
        Per-row weights, finite and >= 0, equal on every row of a query; a
        float is every row's weight.
    relative : bool, default=False
        Divide by the largest weight, for callers to whom the weights'
        scale does not matter: sums of weights near the float maximum would
        overflow to inf and turn a weighted mean into nan.

    Returns
    -------
    weights : ndarray of shape (n_queries,) or None
        ``None`` when ``sample_weight`` is None.

    Raises
    ------
    ValueError
        If a query's rows carry different weights, or if a weight is
        negative, complex, not finite or not a number, or if every weight
        is 0.

    Examples
    --------
    >>> query_weights(group_rows([7, 7, 3], 3), [2.0, 2.0, 0.5])
    array([0.5, 2. ])
    """
    if sample_weight is None:
        return None
    weights = weight_values(sample_weight, input_name)
    if weights.ndim == 0:  # one weight for every row, as scikit-learn's estimators take it
        weights = np.full(query_groups.n_samples, weights)
    if weights.ndim != 1 or len(weights) != query_groups.n_samples:
        raise ValueError(
            f"{input_name} must hold one weight per row, shape "
            f"({query_groups.n_samples},); got shape {weights.shape}."
        )
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError(f"{input_name} must be finite and >= 0.")
    arranged = query_groups.arrange(weights)
    per_query = arranged[query_groups.offsets[:-1]]
    differs = arranged != np.repeat(per_query, query_groups.sizes)
    if differs.any():
        row = int(np.flatnonzero(differs)[0])
        query = int(np.searchsorted(query_groups.offsets, row, side="right")) - 1
        raise ValueError(
            f"{input_name} weighs whole queries, so it must be the same on every "
            f"row of a query; query {shown(query_groups.query_ids[query])!r} has "
            f"different weights ({per_query[query]:g} and {arranged[row]:g})."
        )
    if not per_query.any():
        raise ValueError(f"{input_name} is zero for every query; at least one weight must be > 0.")
    return per_query / per_query.max() if relative else per_query
