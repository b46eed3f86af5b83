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
"""

import numpy as np
import scipy.sparse as sp

#: Standard errors of the within-query covariance of a feature's missing
#: indicator and the labels from which the indicator is kept (see the module
#: docstring): about 1 in 370 features whose values go missing at random keeps
#: one. Chosen by cross-validation on training data among 2, 3, 4 and 6.
EVIDENCE_Z = 3.0
#: Rows read at a time (whole queries, so that a longer query is one block).
EVIDENCE_BLOCK_ROWS = 8192


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
    if not np.isnan(X.data if sp.issparse(X) else X).any():  # one pass, no copy
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
