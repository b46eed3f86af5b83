"""Whether the features arrive min-max scaled within each query.

LETOR 4.0 (MQ2007, MQ2008) and LETOR 3.0 ship their features in this form
("QueryLevelNorm"): inside every query each feature runs from exactly 0 to
exactly 1, or is 0 throughout where the query holds one value. Such features
only say where a document stands among its query's documents, and on small
data the networks need a different regimen for them: more input noise (for
LambdaRank and ListNet) and RankNet's width, step and minibatch (for
LambdaRank), which cost unscaled features (User Guide, "Choosing"). Some
``"auto"`` values therefore follow :func:`scaled_within_queries`
(``_resolve.py``).
"""

import numpy as np
import scipy.sparse as sp

from ._groups import query_of_row, segments_of
from ._inputs import edge_sample

#: Queries read (evenly spaced over those with two documents or more) ...
SAMPLE_QUERIES = 200
#: ... and fewer when they would hold more rows than this in all, or (dense
#: X, whose sampled rows are copied) more values than ``SAMPLE_VALUES``.
SAMPLE_ROWS = 5_000
SAMPLE_VALUES = 2**22
#: Share of the (query, feature) cells that vary inside their query which
#: must run from 0 to 1: a few rows of another form do not hide the rest,
#: and unscaled features reach it only by accident (features scaled to
#: [0, 1] over the whole collection, as the Yahoo sample's are, come far
#: below it).
SCALED_SHARE = 0.99
#: How far from 0 and 1 a minimum and a maximum may sit (LETOR files print
#: six decimals; float32 holds them to about 1e-7).
TOLERANCE = 1e-6


def _sampled_queries(offsets, max_rows=None):
    """Positions (into the arranged rows) of the sampled queries' rows, and
    their offsets: about ``max_rows`` rows (``SAMPLE_ROWS`` when None) of
    at least two queries."""
    max_rows = SAMPLE_ROWS if max_rows is None else max_rows
    sizes = np.diff(offsets)
    several = np.flatnonzero(sizes >= 2)
    if len(several) == 0:
        return segments_of(offsets, several)
    limit = max(2, min(SAMPLE_QUERIES, max_rows // max(int(sizes[several].mean()), 1)))
    return segments_of(offsets, edge_sample(len(several), several, limit=limit))


def _cell_ranges(X, offsets):
    """Minimum and maximum of each feature inside each query of ``X`` (rows
    grouped by ``offsets``), one value per (query, feature) cell (for CSR,
    only the cells holding a nonzero value: the others are 0 throughout),
    the feature of each cell, and the values of ``X`` (stored ones for CSR)
    with the feature of each."""
    n_features = X.shape[1]
    if not sp.issparse(X):
        starts = offsets[:-1]
        # fmin and fmax skip missing values (NaN): a cell of NaN only stays NaN, not varying.
        low, high = np.fmin.reduceat(X, starts, axis=0), np.fmax.reduceat(X, starts, axis=0)
        cell_feature = np.broadcast_to(np.arange(n_features), low.shape)
        return low, high, cell_feature, X, np.broadcast_to(np.arange(n_features), X.shape)
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    if X.nnz == 0:
        return np.empty(0), np.empty(0), np.empty(0, np.intp), X.data, X.indices
    sizes = np.diff(offsets)
    query = np.repeat(query_of_row(offsets), np.diff(X.indptr))  # of each stored value
    cell = query.astype(np.int64) * n_features + X.indices
    order = np.argsort(cell, kind="stable")
    cell, values = cell[order], X.data[order]
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    low, high = np.fmin.reduceat(values, starts), np.fmax.reduceat(values, starts)
    stored = np.diff(np.r_[starts, len(cell)])
    implicit_zero = stored < sizes[cell[starts] // n_features]
    # A cell with fewer stored values than its query has rows also holds 0.
    low = np.where(implicit_zero, np.fmin(low, 0), low)
    high = np.where(implicit_zero, np.fmax(high, 0), high)
    return low, high, cell[starts] % n_features, X.data, X.indices


def scaled_within_queries(X, rows, offsets):
    """Whether the training features look min-max scaled within each query.

    True when, over a sample of the queries, at least ``SCALED_SHARE`` of
    the (query, feature) cells whose feature varies inside the query run
    from 0 to 1 (each within ``TOLERANCE``), and some value lies strictly
    between 0 and 1. Flags (features whose sampled values are all 0 or 1)
    take no part: a flag that varies runs from 0 to 1 in any form, so data
    of many flags beside a few unscaled features is not called scaled, nor
    are features that are all flags. Reads about ``SAMPLE_ROWS`` rows at most (fewer of wide dense
    ``X``: ``SAMPLE_VALUES`` values); CSR stays sparse.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The training features, raw.
    rows : ndarray of shape (n_rows,)
        ``X[rows]`` lists the training rows query by query.
    offsets : ndarray of shape (n_queries + 1,)
        Where each query's rows start in ``rows``.

    Returns
    -------
    scaled : bool

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ranknet._query_scaled import scaled_within_queries
    >>> X = np.array([[0.0, 3.0], [0.5, 1.0], [1.0, 2.0], [0.0, 1.0], [1.0, 0.0]])
    >>> offsets = np.array([0, 3, 5])
    >>> scaled_within_queries(X, np.arange(5), offsets)
    False
    >>> low, high = np.minimum.reduceat(X, offsets[:-1]), np.maximum.reduceat(X, offsets[:-1])
    >>> query = np.repeat([0, 1], [3, 2])
    >>> scaled_within_queries((X - low[query]) / (high - low)[query], np.arange(5), offsets)
    True
    """
    max_rows = SAMPLE_ROWS if sp.issparse(X) else min(SAMPLE_ROWS, SAMPLE_VALUES // max(X.shape[1], 1))
    positions, sample_offsets = _sampled_queries(np.asarray(offsets), max_rows)
    if len(positions) == 0:
        return False
    low, high, cell_feature, values, value_feature = _cell_ranges(X[np.asarray(rows)[positions]], sample_offsets)
    # A missing value (NaN) does not stop a feature from being a flag.
    near_0_or_1 = (np.abs(values) <= TOLERANCE) | (np.abs(values - 1) <= TOLERANCE) | np.isnan(values)
    flag = np.ones(X.shape[1], dtype=bool)
    flag[value_feature[~near_0_or_1]] = False
    varying = (high > low) & ~flag[cell_feature]
    if not varying.any():
        return False
    from_0_to_1 = varying & (np.abs(low) <= TOLERANCE) & (np.abs(high - 1) <= TOLERANCE)
    between = np.any((values > TOLERANCE) & (values < 1 - TOLERANCE))
    return bool(between and from_0_to_1.sum() >= SCALED_SHARE * varying.sum())
