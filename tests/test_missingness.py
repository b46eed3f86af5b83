"""Which features keep a missing indicator (``_missingness``): the evidence
against a slow reference and against the exact permutation distribution it
claims, and the rule as the rankers apply it."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet import _missingness
from sklearn_ranknet._missingness import (
    EVIDENCE_Z, merge_evidence, missingness_evidence, telling_features,
)
from sklearn_ranknet.datasets import make_ranking
from tests import _reference as ref


def _covariance(m, y, sizes):
    """sum over queries of sum_i (y_i - mean y)(m_i - mean m), by the definition."""
    total, start = 0.0, 0
    for n in sizes:
        ys, ms = y[start:start + n], m[start:start + n]
        if n:
            total += sum((a - ys.mean()) * (b - ms.mean()) for a, b in zip(ys, ms))
        start += n
    return total


def _reference(X, y, sizes):
    """Covariance and shuffled-label variance per feature, query by query."""
    covariance, variance = [], []
    for j in range(X.shape[1]):
        m = np.isnan(X[:, j]).astype(float)
        covariance.append(_covariance(m, y, sizes))
        v, start = 0.0, 0
        for n in sizes:
            if n > 1:
                ys, ms = y[start:start + n], m[start:start + n]
                v += ((ys - ys.mean()) ** 2).sum() * ((ms - ms.mean()) ** 2).sum() / (n - 1)
            start += n
        variance.append(v)
    return np.array(covariance), np.array(variance)


def _queries(sizes, n_features, share, seed):
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < share] = np.nan
    y = rng.integers(0, 5, n).astype(float)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return X, y, offsets


def test_the_variance_is_that_of_every_order_of_the_labels():
    """Enumerate every within-query order of the labels (1 x 3! x 4! = 144,
    an empty query between): the covariance has mean 0 over them and the
    variance the function gives, exactly (up to float64 rounding)."""
    sizes = [1, 3, 0, 4]
    X, y, offsets = _queries(sizes, 3, 0.4, seed=3)
    X[[1, 4], 2] = np.nan  # a feature with missing values in each query of several rows
    X[[2, 5], 2] = 0.5
    _, variance = missingness_evidence(X, np.arange(len(y)), y, offsets)
    segments = [list(range(offsets[q], offsets[q + 1])) for q in range(len(sizes))]
    for j in range(X.shape[1]):
        m = np.isnan(X[:, j]).astype(float)
        values = []
        for orders in itertools.product(*(itertools.permutations(s) for s in segments)):
            shuffled = y[np.concatenate([np.array(o, dtype=int) for o in orders])]
            values.append(_covariance(m, shuffled, sizes))
        values = np.array(values)
        assert len(values) == math.factorial(3) * math.factorial(4)
        assert abs(values.mean()) < 1e-12
        assert values.var() == pytest.approx(variance[j], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_the_evidence_is_the_reference(form, monkeypatch):
    """Queries of 0, 1 and many rows, listed out of X's order, read in
    blocks of a few queries (and one block), dense and CSR."""
    sizes = [5, 0, 1, 7, 2, 0, 9, 1, 4]
    X, y, offsets = _queries(sizes, 6, 0.3, seed=0)
    X[:, 4] = 0.25  # complete: no evidence
    rows = np.random.default_rng(1).permutation(len(y))
    given_X = np.empty_like(X)
    given_X[rows] = X  # X[rows] lists the queries
    if form == "csr":  # stored values and NaN, the rest implicit zeros
        given_X[given_X > 0.5] = 0.0
        X = given_X[rows]
        stored = sp.csr_matrix(np.where(np.isnan(given_X), 1.0, given_X))
        stored.data = given_X[stored.nonzero()]
        given_X = stored
    expected = _reference(X, y, sizes)
    whole = missingness_evidence(given_X, rows, y, offsets)
    monkeypatch.setattr(_missingness, "EVIDENCE_BLOCK_ROWS", 3)
    blocked = missingness_evidence(given_X, rows, y, offsets)
    for got in (whole, blocked):
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-12)
    assert got[0][4] == got[1][4] == 0.0


def test_the_evidence_of_split_queries_adds_up():
    sizes = [4, 6, 3, 8, 5]
    X, y, offsets = _queries(sizes, 4, 0.3, seed=2)
    rows = np.arange(len(y))
    cut = offsets[2]
    first = missingness_evidence(X, rows[:cut], y[:cut], offsets[:3])
    second = missingness_evidence(X, rows[cut:], y[cut:], offsets[2:] - cut)
    for a, b in zip(merge_evidence(first, second), missingness_evidence(X, rows, y, offsets)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    shift=st.lists(st.floats(-5, 5), min_size=6, max_size=6),
    stretch=st.floats(0.1, 10),
)
def test_the_rule_reads_labels_within_queries_only(seed, shift, stretch):
    """Labels shifted by a constant per query, or stretched: the same
    features keep their indicator (z is unchanged)."""
    sizes = [3, 5, 8, 2, 6, 4]
    X, y, offsets = _queries(sizes, 5, 0.4, seed=seed)
    X[y > 2, 0] = np.nan  # telling
    rows = np.arange(len(y))
    moved = y * stretch + np.repeat(shift, sizes)
    c, v = missingness_evidence(X, rows, y, offsets)
    c2, v2 = missingness_evidence(X, rows, moved, offsets)
    z = np.abs(c) / np.sqrt(np.where(v > 0, v, 1.0))
    z2 = np.abs(c2) / np.sqrt(np.where(v2 > 0, v2, 1.0))
    np.testing.assert_allclose(z, z2, rtol=1e-6, atol=1e-6)
    clear = np.abs(z - EVIDENCE_Z) > 1e-6  # away from the threshold, where rounding cannot flip the rule
    np.testing.assert_array_equal(telling_features((c, v))[clear], telling_features((c2, v2))[clear])


def test_no_missing_value_is_no_evidence():
    X, y, offsets = _queries([4, 4], 3, 0.0, seed=0)
    c, v = missingness_evidence(X, np.arange(8), y, offsets)
    assert not c.any() and not v.any() and not telling_features((c, v)).any()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_rankers_keep_the_indicators_of_missing_values_that_tell_the_labels():
    """Values missing at random get no indicator; a feature whose values go
    missing where the label is high does; the others' NaN read as the
    feature's mean, as at predict for a feature complete in training."""
    X, y, qid = make_ranking(150, n_features=8, n_informative=5, random_state=0)[:3]
    rng = np.random.default_rng(0)
    X = X.copy()
    X[rng.random(X.shape) < 0.2] = np.nan
    X[(y >= 2) & (rng.random(len(y)) < 0.7), 3] = np.nan
    ranker = LambdaRankRanker(max_iter=2, random_state=0).fit(X, y, groups=qid)
    np.testing.assert_array_equal(ranker.missing_features_, [3])
    n_encoded = sum(max(len(edges) - 1, 1) for edges in ranker.bin_edges_)
    assert ranker.coefs_[0].shape[0] == n_encoded + 1  # one indicator input


# ----------------------------------------------------------------------
# The value a missing value reads as


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 9), min_size=1, max_size=6),
    n_distinct=st.integers(1, 6),
    share=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
    sparse=st.booleans(),
)
def test_the_fill_is_the_reference(sizes, n_distinct, share, seed, sparse):
    """Against the step-by-step reference, whatever the ties among values
    (few distinct ones), the number of present values (fewer than 8 groups,
    none) and missing ones (none: NaN), dense and CSR (zeros implicit), rows
    read through a permutation."""
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    X = rng.integers(0, n_distinct, size=(n, 3)).astype(float) - 1.0
    X[rng.random(X.shape) < share] = np.nan
    y = rng.integers(0, 5, n).astype(float)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    residuals = _missingness.within_query_residuals(y, offsets)
    np.testing.assert_allclose(residuals, ref.within_query_residuals(y, sizes), rtol=0, atol=1e-12)
    order = rng.permutation(n)  # X[order] lists the rows
    stored = X.copy()
    stored[order] = X
    given_X = sp.csr_matrix(np.where(np.isnan(stored), 1.0, stored)) if sparse else stored
    if sparse:
        rows_, columns = given_X.nonzero()
        given_X.data = stored[rows_, columns]
    got = _missingness.missing_fill(given_X, order, residuals, np.arange(3))
    expected = [ref.missing_fill(list(X[:, j]), list(residuals)) for j in range(3)]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_where_larger_values_go_missing_a_missing_value_reads_as_a_large_one():
    """The case the fill is for: an informative feature whose larger values
    go missing. Its missing values read as a value above most present ones,
    and the ranker scores a missing value as the network scores that value,
    but for its indicator's weights."""
    X, y, qid = make_ranking(150, n_features=6, n_informative=6, noise=0.1, random_state=0)[:3]
    X = X.copy()
    j = int(np.argmax([abs(np.corrcoef(X[:, k], y)[0, 1]) for k in range(6)]))
    X[:, j] *= np.sign(np.corrcoef(X[:, j], y)[0, 1])  # larger values, higher labels
    rng = np.random.default_rng(0)
    percentile = np.argsort(np.argsort(X[:, j])) / len(X)
    X[rng.random(len(X)) < percentile**2, j] = np.nan
    ranker = LambdaRankRanker(max_iter=2, random_state=0).fit(X, y, groups=qid)
    np.testing.assert_array_equal(ranker.missing_features_, [j])
    present = X[~np.isnan(X[:, j]), j]
    assert ranker.missing_fill_[0] > np.quantile(present, 0.75)
    scaling = ranker._model.scaling
    row = np.nan_to_num(X[:1], nan=0.0)
    missing, filled = row.copy(), row.copy()
    missing[0, j], filled[0, j] = np.nan, ranker.missing_fill_[0]
    n = scaling.n_transformed
    inputs_missing, inputs_filled = scaling.rows(missing, slice(None)), scaling.rows(filled, slice(None))
    # The same float64 operations on the value but for its standardization's
    # order (a division here, a product with the reciprocal there).
    np.testing.assert_allclose(inputs_missing[:, :n], inputs_filled[:, :n], rtol=1e-13, atol=1e-13)
    assert inputs_missing[0, n] > inputs_filled[0, n]  # the indicator tells them apart


@settings(max_examples=60, deadline=None)
@given(
    n_rows=st.integers(0, 40),
    n_columns=st.integers(1, 5),
    dtype=st.sampled_from([np.float32, np.float64]),
    order=st.sampled_from(["C", "F"]),
    specials=st.lists(st.sampled_from([np.nan, np.inf, -np.inf, 3e38, -3e38]), max_size=4),
    sparse=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_has_missing_says_whether_any_value_is_nan(n_rows, n_columns, dtype, order, specials, sparse, seed):
    # Infinite values and sums that overflow must not read as missing, nor
    # hide a NaN.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_columns)).astype(dtype)
    X[rng.random(X.shape) < 0.5] = 0.0
    for value in specials[: X.size]:
        X.flat[rng.integers(X.size)] = value
    X = np.asarray(X, order=order)
    expected = bool(np.isnan(X).any())
    assert _missingness.has_missing(sp.csr_matrix(X) if sparse else X) is expected


def test_has_missing_reads_a_large_x_without_an_array_of_its_size():
    import tracemalloc

    X = np.ones((6 * _missingness.EVIDENCE_BLOCK_ROWS, 32))
    X[-1, -1] = np.inf  # the sum is not finite: the blocks are read
    full = X.size  # bytes of np.isnan(X)
    tracemalloc.start()
    try:
        assert not _missingness.has_missing(X)
        X[-1, 0] = np.nan
        assert _missingness.has_missing(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < full / 4
