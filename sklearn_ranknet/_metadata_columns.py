"""Metadata that travels inside X, as its columns: the query ids
(``query_column``) and, for a click log, the position each row was shown at
(``position_column``).

With scikit-learn's metadata routing off (its default), tools such as
``cross_validate``, ``GridSearchCV``, ``learning_curve`` and
``permutation_importance`` hand an estimator and its scorer only ``X`` and
``y``. A ranker whose ``query_column`` names a column of ``X`` takes its query
ids from there (XGBoost's ``qid`` column does the same), so every fold is
still trained and scored query by query; its ``position_column`` likewise
carries a click log's positions to every fold's fit. This module is the one
place those columns are found, read and dropped.
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils.metadata_routing import _routing_enabled

from ._groups import group_rows
from ._wrapped import wrapped_chain

ROUTING_OFF_FIXES = (
    "Either pass groups=<query id per row> (inside GridSearchCV, cross_validate "
    "or a Pipeline, turn on metadata routing first: "
    "sklearn.set_config(enable_metadata_routing=True)), or keep the query ids "
    "in a column of X and name it with the ranker's query_column parameter, "
    "which works with routing off."
)

ROUTING_ON_FIXES = (
    "Metadata routing is on: pass groups=<query id per row> where you fit or "
    "score (GridSearchCV(...).fit(X, y, groups=qid), cross_validate(..., "
    "params={'groups': qid})), and keep the ranker's requests for them "
    "(set_fit_request and set_score_request replace them; the rankers ask for "
    "groups by default). A meta-estimator around the ranker that requests "
    "nothing passes none (scikit-learn's FrozenEstimator: score it with "
    "scoring=ndcg_scorer(10), which requests them itself). Or keep the query "
    "ids in a column of X and name it with the ranker's query_column parameter."
)


def missing_ids_fixes():
    """The ways to give a ranker its query ids, for a message about their
    absence: they depend on whether metadata routing is on."""
    return ROUTING_ON_FIXES if _routing_enabled() else ROUTING_OFF_FIXES


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "iloc")


#: What each column parameter's column holds, for messages.
_HOLDS = {"query_column": "query ids", "position_column": "positions"}
#: How messages name each column (the width's message counts the query ids' column).
_CALLED = {"query_column": "the query column", "position_column": "the position column"}
_COUNTED = {"query_column": "the query-id column", "position_column": "the position column"}


def metadata_columns(estimator):
    """``{parameter: column}`` of the columns ``estimator`` reads from X
    (its ``query_column`` and ``position_column`` that are set), in that
    order."""
    named = {name: getattr(estimator, name, None) for name in _HOLDS}
    return {name: column for name, column in named.items() if column is not None}


def _column_position(X, column, n_columns, parameter="query_column"):
    """Position of ``column`` (the value of ``parameter``) among the columns
    of ``X``."""
    holds = _HOLDS[parameter]
    if isinstance(column, str):
        if not _is_dataframe(X):
            raise ValueError(
                f"{parameter}={column!r} names a column, but X has no column "
                f"names ({type(X).__name__}); give the column's position instead, "
                f"e.g. {parameter}=0."
            )
        matches = np.flatnonzero(np.asarray(X.columns == column))
        if len(matches) != 1:
            found = "is not a" if len(matches) == 0 else "is more than one"
            raise ValueError(
                f"{parameter}={column!r} {found} column of X; its columns are "
                f"{list(X.columns)[:20]}{' ...' if len(X.columns) > 20 else ''}."
                + (_prefixed_name_hint(X.columns, column, parameter) if len(matches) == 0 else "")
            )
        return int(matches[0])
    if isinstance(column, (bool, np.bool_)):
        raise ValueError(
            f"{parameter}={column} is a boolean; give the {holds}' column "
            f"name or position, e.g. {parameter}=0."
        )
    if not -n_columns <= column < n_columns:
        raise ValueError(
            f"{parameter}={column} is out of range for X with {n_columns} columns."
        )
    return int(column) % n_columns


def _prefixed_name_hint(columns, column, parameter):
    """Advice when ``column`` is missing from ``columns`` because a
    ColumnTransformer (or FeatureUnion) in front of the ranker prefixed it
    (``"qid"`` became ``"id__qid"``), or an empty string. The list of
    columns in the message stops at 20, where the id column, passed through
    last, was not shown."""
    prefixed = [name for name in columns if isinstance(name, str) and name.endswith(f"__{column}")]
    if not prefixed:
        return ""
    return (
        f" The column {prefixed[0]!r} may hold it: a ColumnTransformer or FeatureUnion "
        "prefixes its outputs' names with the transformer's. Give "
        f"{parameter}={prefixed[0]!r}, or build the ColumnTransformer with "
        "verbose_feature_names_out=False to keep the names."
    )


def column_position(X, query_column):
    """Position of ``query_column`` among the columns of ``X`` (which must
    be 2-D), validated as :func:`split_columns` does."""
    return _column_position(X, query_column, X.shape[1])


def split_columns(X, query_column, position_column=None):
    """The features of ``X``, and the query ids and positions held in its
    ``query_column`` and ``position_column``.

    Parameters
    ----------
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_columns)
    query_column, position_column : str, int or None
        A column name (DataFrames only) or position (negative counts from the
        end), of two different columns. ``None`` reads no such column; with
        both ``None``, ``X`` is returned unchanged.

    Returns
    -------
    features : same kind as X, of shape (n_samples, n_columns - n_read)
        ``X`` without the columns read (a new array: columns are removed).
    query_ids, positions : ndarray of shape (n_samples,) or None
        The columns' values, in their own dtype.
    """
    named = {
        name: column for name, column in (("query_column", query_column), ("position_column", position_column))
        if column is not None
    }
    if not named:
        return X, None, None
    if sp.issparse(X):
        X = X.tocsr()
    elif not _is_dataframe(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(
                f"X must be 2-dimensional to hold a {' and a '.join(_CALLED[n][4:] for n in named)}; "
                f"got shape {X.shape}."
            )
    n_columns = X.shape[1]
    places = {name: _column_position(X, column, n_columns, name) for name, column in named.items()}
    if len(set(places.values())) < len(places):
        raise ValueError(
            f"query_column={query_column!r} and position_column={position_column!r} are the same "
            "column of X; the query ids and the positions need a column each."
        )
    keep = np.ones(n_columns, dtype=bool)
    keep[list(places.values())] = False
    if _is_dataframe(X):
        values = {name: X.iloc[:, place].to_numpy() for name, place in places.items()}
        features = X.iloc[:, keep]
    elif sp.issparse(X):
        values = {name: X[:, [place]].toarray().ravel() for name, place in places.items()}
        features = X[:, np.flatnonzero(keep)]
    else:
        values = {name: X[:, place] for name, place in places.items()}
        features = X[:, keep]
    return features, values.get("query_column"), values.get("position_column")


def split_query_column(X, query_column):
    """The features of ``X`` and the query ids held in its ``query_column``
    (see :func:`split_columns`)."""
    return split_columns(X, query_column)[:2]


def estimator_features(estimator, X):
    """``X`` without the columns ``estimator`` reads metadata from, checked
    to be as wide as its fitted input (see :func:`check_width`): what its
    ``predict`` scores."""
    columns = metadata_columns(estimator)
    features = split_columns(X, columns.get("query_column"), columns.get("position_column"))[0]
    check_width(features, estimator)
    return features


def check_width(features, estimator):
    """After the metadata columns are dropped, ``features`` must be as wide
    as the fitted ``estimator``'s input; say so in X's own columns, which is
    what the user counts (scikit-learn's message would count the features
    left)."""
    expected = getattr(estimator, "n_features_in_", None)
    shape = getattr(features, "shape", ())
    columns = metadata_columns(estimator)
    if not columns or expected is None or len(shape) != 2 or shape[1] == expected:
        return
    settings = " and ".join(f"{name}={column!r}" for name, column in columns.items())
    called = ", ".join(_COUNTED[name] for name in columns)
    raise ValueError(
        f"X has {shape[1] + len(columns)} columns, but {type(estimator).__name__} with "
        f"{settings} expects {expected + len(columns)}: {called} "
        f"and the {expected} features it was fitted on."
    )


def features_and_metadata(X, groups, positions, estimator, fitted=None):
    """``X`` without the metadata columns of ``estimator``, and one set of
    query ids and of positions each, from the arguments and those columns
    (see :func:`merge_groups` and :func:`merge_positions`). ``fitted``, a
    model that a fit continues (``partial_fit``, ``warm_start``), has its
    width checked first, as :func:`check_width` does for ``predict``: an X
    without the columns is then named as such, not read as a feature
    short, nor its first feature as query ids."""
    columns = metadata_columns(estimator)
    query_column, position_column = columns.get("query_column"), columns.get("position_column")
    X, query_ids, shown_at = split_columns(X, query_column, position_column)
    check_features_left(X, estimator, fitted)
    return (
        X, merge_groups(groups, query_ids, query_column), merge_positions(positions, shown_at, position_column)
    )


def check_features_left(features, estimator, fitted=None):
    """The checks of a fit's ``features`` (X without its metadata columns):
    as wide as ``fitted``'s input when a fit continues it (see
    :func:`check_width`), and at least one feature beside the metadata
    columns. Said here: a DataFrame left without columns reaches numpy
    as no dtype at all ("at least one array or dtype is required"), and
    the Dask rankers would meet the empty rows only on a worker."""
    if fitted is not None:
        check_width(features, fitted)
    columns = metadata_columns(estimator)
    if columns and features.shape[1] == 0:
        settings = ", ".join(f"{name}={column!r}" for name, column in columns.items())
        raise ValueError(
            f"X holds only {' and '.join(_CALLED[name] for name in columns)} ({settings}), no feature "
            "to rank by: give X the feature columns too."
        )


def merge_positions(positions, shown_at, position_column):
    """One set of positions from ``positions=`` and the position column
    (``shown_at``); either may be None. Given both, they must be equal."""
    if shown_at is None:
        return positions
    if positions is None:
        return shown_at
    given = np.asarray(positions)
    try:
        same = given.shape == shown_at.shape and np.array_equal(given.astype(float), shown_at.astype(float))
    except (TypeError, ValueError):
        same = False
    if not same:
        raise ValueError(
            f"positions and the position column of X (position_column={position_column!r}) "
            "differ. Pass the positions once: either as positions= (and "
            "position_column=None), or in the column (with routing on, stop routing "
            "them to the ranker: ranker.set_fit_request(positions=False))."
        )
    return positions


def merge_groups(groups, query_ids, query_column):
    """One set of query ids from ``groups=`` and the query column.

    Either may be None. When both are given they must describe the same
    queries: equal ids, or ids that map one to one (a scaler in front of the
    ranker standardizes the column too, while metadata routing hands the
    ranker the untouched ids); ``groups`` is returned.
    """
    if query_ids is None:
        return groups
    if groups is None:
        return query_ids
    given = np.asarray(groups)
    if given.shape != query_ids.shape or not (
        np.array_equal(given, query_ids) or _same_queries(given, query_ids, query_column)
    ):
        raise ValueError(
            f"groups and the query column of X (query_column={query_column!r}) "
            "put the rows in different queries. Pass the ids once: either as "
            "groups (and query_column=None), or in the column (with routing on, "
            "stop routing them to the ranker: ranker.set_fit_request(groups=False)"
            ".set_score_request(groups=False), and to its scorer: "
            "ndcg_scorer(10).set_score_request(groups=False)). A step before the ranker that "
            "mixes columns (PCA, a ColumnTransformer's reordering) changes the "
            "column too."
        )
    return groups


def _same_queries(a, b, query_column):
    """Whether ids ``a`` (``groups``) and ``b`` (the query column's), 1-d,
    one per row, split the rows into the same queries: each id of one
    matches exactly one id of the other."""
    try:
        ids_a, query_a = np.unique(a, return_inverse=True)
        ids_b, query_b = np.unique(b, return_inverse=True)
    except TypeError:
        # Ids that do not sort (mixed types): the ids' own check names which
        # input holds them, which "different queries" would not.
        group_rows(a, len(a))
        group_rows(b, len(b), input_name=f"the query column of X (query_column={query_column!r})")
        return False
    pairs = np.unique(query_a.ravel() * len(ids_b) + query_b.ravel())
    return len(ids_a) == len(ids_b) == len(pairs)


def query_column_of(estimator):
    """The ``query_column`` an estimator reads its query ids from, or None.

    Looks through a Pipeline to its last step, through a fitted search
    (``best_estimator_``), a fitted TransformedTargetRegressor
    (``regressor_``) and a fitted BaggingRanker to its members, so a scorer
    finds the ids in the X it is given.
    """
    return _reader_of(estimator, None)[0]


def column_of(estimator, parameter):
    """The ``parameter`` (``"query_column"`` or ``"position_column"``) of
    ``estimator`` or of the first estimator it wraps that sets it (see
    :func:`wrapped_chain`), or None."""
    return next(
        (getattr(inner, parameter) for inner in wrapped_chain(estimator) if getattr(inner, parameter, None) is not None),
        None,
    )


def query_column_reader(estimator):
    """The estimator that reads the query ids from X: ``estimator`` itself
    or one it wraps (see :func:`wrapped_chain`) whose ``query_column`` is
    set, or None."""
    return next(
        (inner for inner in wrapped_chain(estimator) if getattr(inner, "query_column", None) is not None),
        None,
    )


def _reader_of(estimator, X):
    """``(query_column, X_seen, transformed)``: the column the estimator (or
    the ranker it wraps, see :func:`wrapped_chain`) reads its ids from, the X
    that ranker receives (``X`` sent through the Pipeline steps before it; not
    computed when ``X`` is None) and whether any step came before it."""
    transformed = False
    for inner in wrapped_chain(estimator):
        query_column = getattr(inner, "query_column", None)
        if query_column is not None:
            return query_column, X, transformed
        if hasattr(inner, "steps") and len(inner.steps) > 1:
            # The position or name refers to the last step's input, which
            # the steps before it may have reordered.
            transformed = True
            if X is not None:
                X = inner[:-1].transform(X)
    return None, X, transformed


def query_ids_in(estimator, X):
    """The query ids in ``X`` for ``estimator`` (see :func:`query_column_of`),
    or None when it reads none from X. Behind a Pipeline's transformers they
    are read from the transformed X, as the ranker itself reads them."""
    query_column, X_seen, _ = _reader_of(estimator, X)
    return split_query_column(X_seen, query_column)[1]


def query_column_in_input(estimator):
    """The ``query_column`` of the estimator when it names a column of the
    estimator's own input (no Pipeline step before the ranker), else None."""
    query_column, _, transformed = _reader_of(estimator, None)
    return None if transformed else query_column


METADATA_COLUMN_CONSTRAINT = [None, str, Integral]
