"""Which features' missing values tell the relevance: the missing indicators
a fit keeps.

A feature with missing values (NaN) in training gets a missing indicator
input only when its missingness goes with the labels inside queries: when
the within-query covariance of the indicator and the label is at least
``EVIDENCE_Z`` standard errors from 0 under the null of no relation (the
query's labels shuffled among its rows). Missing completely at random, an
indicator is a noise input. Cross-validated on training data (the Yahoo
sample and an MSLR-shaped set, values missing at random and larger values
missing more often; docs/benchmarks.md, "Missing values"), indicators for
every feature with NaN ranked worse at random, and none at all worse when
missing meant large; this rule ranked as well as the better of the two in
4 of 6 settings, and within 0.002 of it in the other 2. A missing value of
a feature without an indicator reads as the feature's mean, as a feature
complete in training reads NaN at predict.

For query q with n rows, labels y and indicator m (1 where missing),

    S_q = sum_i (y_i - mean(y)) (m_i - mean(m))

has mean 0 over the n! orders of the query's labels, and variance

    V_q = S_yy,q * S_mm,q / (n - 1)

(S_yy,q and S_mm,q the sums of squared deviations). Queries are shuffled
independently, so the evidence is z = sum_q S_q / sqrt(sum_q V_q). Both
sums add over any split of the queries, so the Dask rankers merge the
shards' sums (:func:`merge_evidence`).

A missing value of a feature that keeps its indicator reads as one of the
feature's present values, the one whose rows are labelled as the missing
rows are (:func:`missing_fill`): where larger values go missing, a large
value. The network then scores a missing value as it scores that value,
with the weights every row with that value trains, and the indicator's
weights correct what the match left. With the mean in its place, the
indicator alone had to learn what "missing" meant; cross-validated on
training data (docs/benchmarks.md, "Missing values") the match ranked
better where missing meant large and the same at random.
"""

import numpy as np
import scipy.sparse as sp

#: Standard errors of the within-query covariance of a feature's missing
#: indicator and the labels from which the indicator is kept (see the module
#: docstring): about 1 in 370 features whose values go missing at random keeps
#: one. Chosen by cross-validation on training data among 2, 3, 4 and 6.
EVIDENCE_Z = 3.0
#: Groups of present values among which :func:`missing_fill` matches the
#: missing rows: equal numbers of the sampled rows, by value.
FILL_GROUPS = 8
#: Rows read at a time (whole queries, so that a longer query is one block).
EVIDENCE_BLOCK_ROWS = 8192


def has_missing(X):
    """Whether a dense or sparse ``X`` holds a NaN, without an array of
    ``X``'s size: a sum is NaN when any term is, so a finite sum says no at
    the cost of one pass; a sum that is not finite (a NaN, an infinite
    value, or an overflow) sends it to a check by blocks of rows."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.dtype.kind != "f":
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(values.sum()):
            return False
    # Rows of a dense X; about as many values of a sparse one's data.
    step = EVIDENCE_BLOCK_ROWS * (1 if values.ndim > 1 else 128)
    return any(np.isnan(values[start : start + step]).any() for start in range(0, len(values), step))


def missingness_evidence(X, rows, y, offsets):
    """The within-query covariance of each feature's missing indicator with
    the labels, and its variance under shuffled labels (module docstring).

    Parameters
    ----------
    X : {ndarray, sparse CSR matrix} of shape (n_samples, n_features)
    rows : ndarray of shape (n_rows,)
        ``X[rows]`` lists the rows query by query.
    y : ndarray of shape (n_rows,)
        Their labels, in that order.
    offsets : ndarray of shape (n_queries + 1,)
        Query ``q`` owns the listed rows ``offsets[q]:offsets[q + 1]``.

    Returns
    -------
    evidence : tuple of two ndarrays of shape (n_features,)
        The sums of ``S_q`` and ``V_q`` over the queries, in float64 (0 for
        a feature with no missing value).
    """
    n_features = X.shape[1]
    covariance, variance = np.zeros(n_features), np.zeros(n_features)
    if not has_missing(X):
        return covariance, variance
    y = np.asarray(y, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    for first, last in _query_blocks(offsets):
        start, stop = offsets[first], offsets[last]
        columns, m = _missing_columns(X[rows[start:stop]])
        if not len(columns):
            continue
        sizes = np.diff(offsets[first:last + 1])
        # reduceat sums each start's rows up to the next start: an empty
        # query has no rows, and would repeat its neighbour's first row.
        starts, sizes = offsets[first:last][sizes > 0] - start, sizes[sizes > 0].astype(np.float64)
        labels = y[start:stop]
        n_missing = np.add.reduceat(m, starts, axis=0)
        label_sum = np.add.reduceat(labels, starts)
        cross = np.add.reduceat(labels[:, None] * m, starts, axis=0)
        covariance[columns] += (cross - label_sum[:, None] * n_missing / sizes[:, None]).sum(axis=0)
        label_spread = np.add.reduceat(labels**2, starts) - label_sum**2 / sizes
        missing_spread = n_missing - n_missing**2 / sizes[:, None]
        # A query of one row has no order to shuffle (both spreads are 0).
        per_order = np.where(sizes > 1, label_spread, 0.0) / np.maximum(sizes - 1.0, 1.0)
        variance[columns] += (per_order[:, None] * missing_spread).sum(axis=0)
    return covariance, variance


def _missing_columns(block):
    """The columns of a dense or CSR row block that hold a NaN, and their
    indicators (1.0 where missing), dense, of shape (n_rows, n_columns)."""
    if sp.issparse(block):
        block = sp.csr_matrix(block)
        stored_nan = np.isnan(block.data)
        columns = np.unique(block.indices[stored_nan])
        indicators = block[:, columns]
        indicators.data = np.isnan(indicators.data).astype(np.float64)
        return columns, indicators.toarray()
    missing = np.isnan(block)
    columns = np.flatnonzero(missing.any(axis=0))
    return columns, missing[:, columns].astype(np.float64)


def _query_blocks(offsets):
    """(first, last) query ranges of about ``EVIDENCE_BLOCK_ROWS`` rows."""
    n_queries = len(offsets) - 1
    first = 0
    while first < n_queries:
        last = int(np.searchsorted(offsets, offsets[first] + EVIDENCE_BLOCK_ROWS, side="right")) - 1
        last = min(max(last, first + 1), n_queries)
        yield first, last
        first = last


def missing_count(X, rows):
    """How many of the values of the rows ``X[rows]`` of a dense or CSR
    ``X`` are missing (NaN), read ``EVIDENCE_BLOCK_ROWS`` rows at a time."""
    if not has_missing(X):
        return 0
    count = 0
    for start in range(0, len(rows), EVIDENCE_BLOCK_ROWS):
        block = X[rows[start : start + EVIDENCE_BLOCK_ROWS]]
        count += int(np.isnan(block.data if sp.issparse(block) else block).sum())
    return count


def merge_evidence(a, b):
    """The evidence of two disjoint sets of queries."""
    return a[0] + b[0], a[1] + b[1]


def telling_features(evidence):
    """Boolean mask over the features: those whose missingness is at least
    ``EVIDENCE_Z`` standard errors from unrelated to the labels."""
    covariance, variance = evidence
    spread = np.sqrt(np.maximum(variance, 0.0))  # rounding can leave a spread of 0 a hair below it
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(spread > 0, np.abs(covariance) / np.where(spread > 0, spread, 1.0), 0.0)
    return z >= EVIDENCE_Z


def within_query_residuals(y, offsets):
    """Each label minus the mean label of its query (float64), for labels
    listed query by query (query ``q`` owns ``y[offsets[q]:offsets[q + 1]]``)."""
    y = np.asarray(y, dtype=np.float64)
    sizes = np.diff(np.asarray(offsets, dtype=np.int64))
    query = np.repeat(np.arange(len(sizes)), sizes)
    return y - (np.bincount(query, weights=y, minlength=len(sizes)) / np.maximum(sizes, 1))[query]


def missing_fill(X, rows, residuals, features):
    """The present value each feature's missing values read as: the one
    whose rows' labels look like the missing rows'.

    Within queries, the missing rows of feature j have a mean label residual
    r (label minus its query's mean label). The present values, sorted, are
    cut into ``FILL_GROUPS`` groups of equal size; the median value of the
    group whose mean residual is nearest r is the fill (the lowest such group
    on a tie).

    Parameters
    ----------
    X : {ndarray, sparse CSR matrix} of shape (n_samples, n_features)
    rows : ndarray of int of shape (n_rows,) or None
        The training rows to read (all of them, or an evenly spaced sample);
        None reads every row of ``X``.
    residuals : ndarray of shape (n_rows,)
        Their labels' :func:`within_query_residuals`, computed over whole
        queries.
    features : ndarray of int of shape (n_filled,)
        The columns to fill.

    Returns
    -------
    fill : ndarray of shape (n_filled,)
        float64; NaN for a feature with no missing or no present value among
        the rows (it reads as its mean).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0], [2.0], [np.nan], [3.0], [4.0], [np.nan]])
    >>> residuals = np.array([-1.0, -0.5, 1.0, 0.5, 1.0, 1.0])
    >>> missing_fill(x, None, residuals, np.array([0]))
    array([4.])
    """
    features = np.asarray(features, dtype=np.int64)
    residuals = np.asarray(residuals, dtype=np.float64)
    fill = np.full(len(features), np.nan)
    if not len(features):
        return fill
    rows = np.arange(X.shape[0]) if rows is None else np.asarray(rows)
    # Only the filled columns are copied (a sample may be 200,000 rows).
    columns = X[rows][:, features].toarray() if sp.issparse(X) else X[np.ix_(rows, features)]
    for k in range(len(features)):
        values = columns[:, k].astype(np.float64)
        missing = np.isnan(values)
        if missing.all() or not missing.any():
            continue
        present = np.flatnonzero(~missing)
        groups = np.array_split(present[np.argsort(values[present], kind="stable")],
                                min(FILL_GROUPS, len(present)))
        target = residuals[missing].mean()
        match = [abs(residuals[group].mean() - target) for group in groups]
        fill[k] = np.median(values[groups[int(np.argmin(match))]])
    return fill
