"""feature_scaling="piecewise": each feature encoded over its quantile bins.

The encoding is checked against a loop written from its definition, and the
rankers that use it against a scikit-learn pipeline that encodes with that
loop before a StandardScaler.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet import _inputs
from sklearn_ranknet._inputs import PIECEWISE_BINS, PIECEWISE_BINS_LARGE, InputScaling, PiecewiseEncoding
from sklearn_ranknet.datasets import make_ranking

from ._assertions import assert_same_training

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

RANKERS = [RankNetRanker, LambdaRankRanker, ListNetRanker]


def reference_edges(column, n_bins=PIECEWISE_BINS):
    return np.unique(np.quantile(np.asarray(column, dtype=np.float64), np.linspace(0, 1, n_bins + 1)))


def reference_encode(X, edges):
    """The definition, one value at a time: bin t of a feature with edges
    e_0 < ... < e_m is clip((x - e_{t-1}) / (e_t - e_{t-1}), 0, 1) minus its
    value at x = 0; a feature with one edge has one input, always 0."""
    X = np.asarray(X, dtype=np.float64)
    rows = []
    for x in X:
        row = []
        for value, e in zip(x, edges):
            if len(e) < 2:
                row.append(0.0)
                continue
            for lo, hi in zip(e[:-1], e[1:]):
                def fill(v):
                    return min(max((v - lo) / (hi - lo), 0.0), 1.0)
                row.append(fill(value) - fill(0.0))
        rows.append(row)
    return np.array(rows)


def _features(n_rows=300, seed=0):
    """Ties, zeros, signs, a constant, a binary and a heavy tail."""
    rng = np.random.default_rng(seed)
    return np.column_stack([
        rng.normal(size=n_rows),
        np.where(rng.random(n_rows) < 0.6, 0.0, rng.exponential(size=n_rows)),  # zero-heavy
        np.full(n_rows, 4.0),  # constant
        rng.integers(0, 2, n_rows).astype(float),  # binary
        rng.standard_t(2, n_rows) * 1e3,  # heavy tails
        rng.integers(-3, 4, n_rows).astype(float),  # few values
    ])


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_edges_are_each_features_quantiles(sparse):
    X = _features()
    rows = np.random.default_rng(1).permutation(len(X))[:200]
    encoding = PiecewiseEncoding.fit(sp.csr_matrix(X) if sparse else X, rows)
    assert len(encoding.edges) == X.shape[1]
    for j, edges in enumerate(encoding.edges):
        np.testing.assert_allclose(edges, reference_edges(X[rows, j]), rtol=1e-15)
    assert len(encoding.edges[2]) == 1  # the constant
    np.testing.assert_array_equal(encoding.edges[3], [0.0, 1.0])  # the binary feature


def test_edges_from_evenly_spaced_rows_of_large_data(monkeypatch):
    monkeypatch.setattr(_inputs, "EDGE_SAMPLE_ROWS", 50)
    X = _features(n_rows=230)
    rows = np.random.default_rng(2).permutation(len(X))
    encoding = PiecewiseEncoding.fit(X, rows)
    sample = rows[::5]  # ceil(230 / 50) = 5: 46 rows, evenly spaced
    for j, edges in enumerate(encoding.edges):
        np.testing.assert_allclose(edges, reference_edges(X[sample, j]), rtol=1e-15)


def test_large_data_gets_fewer_bins(monkeypatch):
    # The size-aware default: 8 bins below PIECEWISE_LARGE_ROWS rows, 4 from
    # there on, counted over the rows the edges are fitted on.
    monkeypatch.setattr(_inputs, "PIECEWISE_LARGE_ROWS", 200)
    X = _features()
    for n_rows, n_bins in ((199, PIECEWISE_BINS), (200, PIECEWISE_BINS_LARGE)):
        rows = np.arange(n_rows)
        encoding = PiecewiseEncoding.fit(X, rows)
        for j, edges in enumerate(encoding.edges):
            np.testing.assert_allclose(edges, reference_edges(X[rows, j], n_bins), rtol=1e-15)
    assert len(encoding.edges[0]) == PIECEWISE_BINS_LARGE + 1


@pytest.mark.parametrize("Ranker", RANKERS)
def test_rankers_count_their_training_rows_for_the_bins(Ranker, monkeypatch):
    X, y, qid = make_ranking(n_queries=30, n_features=3, n_informative=2, random_state=0)
    monkeypatch.setattr(_inputs, "PIECEWISE_LARGE_ROWS", len(X))
    large = Ranker(hidden_layer_sizes=(), max_iter=2).fit(X, y, groups=qid)
    small = Ranker(hidden_layer_sizes=(), max_iter=2).fit(X[1:], y[1:], groups=qid[1:])
    assert [len(e) for e in large.bin_edges_] == [PIECEWISE_BINS_LARGE + 1] * 3
    assert [len(e) for e in small.bin_edges_] == [PIECEWISE_BINS + 1] * 3
    assert large.coefs_[0].shape[0] == 3 * PIECEWISE_BINS_LARGE


@settings(max_examples=60, deadline=None)
@given(
    train=arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 4)),
                 elements=st.sampled_from([-2.5, -1.0, 0.0, 0.0, 0.5, 1.0, 3.0, 1e3])
                 | st.floats(-10, 10, allow_nan=False, width=32)),
    new=arrays(np.float64, st.tuples(st.integers(1, 10), st.just(4)),
               elements=st.floats(-1e4, 1e4, allow_nan=False, width=32)),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_encoding_is_the_definition(train, new, dtype):
    """Dense and CSR rows, seen in training or not, in float64 and float32,
    encode as the definition says."""
    train = train.astype(dtype)
    new = new[:, : train.shape[1]].astype(dtype)
    encoding = PiecewiseEncoding.fit(train)
    expected = reference_encode(new, [e.astype(np.float64) for e in encoding.edges])
    dense = encoding.transform(new)
    csr = encoding.transform(sp.csr_matrix(new))
    assert dense.dtype == dtype and csr.dtype == dtype
    assert dense.shape == csr.shape == (len(new), encoding.n_inputs)
    # a subtraction, a product with a rounded reciprocal, a subtraction of values <= 1
    tolerance = 8 * np.finfo(dtype).eps
    np.testing.assert_allclose(dense, expected, rtol=0, atol=tolerance)
    np.testing.assert_allclose(csr.toarray(), expected, rtol=0, atol=tolerance)


@settings(max_examples=40, deadline=None)
@given(
    column=arrays(np.float64, st.integers(2, 40), elements=st.floats(-100, 100, allow_nan=False)),
    x=st.floats(-1e3, 1e3, allow_nan=False),
)
def test_bins_add_up_to_the_clipped_feature(column, x):
    """sum_t width_t * c_t(x) = clip(x, e_0, e_m) - e_0: the encoding keeps
    the feature itself, as a linear function of its inputs."""
    encoding = PiecewiseEncoding.fit(column[:, None])
    inputs = encoding.transform(np.array([[x]]))[0] + encoding.zero_level
    edges = encoding.edges[0]
    rebuilt = np.sum(np.where(np.isfinite(encoding.width), encoding.width, 0.0) * inputs)
    expected = np.clip(x, edges[0], edges[-1]) - edges[0]
    assert rebuilt == pytest.approx(expected, rel=1e-12, abs=1e-12 * (edges[-1] - edges[0] + 1))


def test_zero_encodes_as_zero_so_csr_stays_sparse():
    X = _features()
    X[np.random.default_rng(3).random(X.shape) < 0.7] = 0.0
    encoding = PiecewiseEncoding.fit(X)
    csr = encoding.transform(sp.csr_matrix(X))
    assert np.all(encoding.transform(np.zeros((1, X.shape[1]))) == 0)
    assert sp.issparse(csr)
    # A stored value fills at most the bins between 0 and itself.
    assert csr.nnz <= np.count_nonzero(X) * PIECEWISE_BINS
    assert csr.nnz < 0.5 * np.prod(csr.shape)


def test_duplicate_csr_entries_encode_as_their_sum():
    X = _features(n_rows=50)
    encoding = PiecewiseEncoding.fit(X)
    row = sp.csr_matrix((np.array([0.3, 0.4]), np.array([0, 0]), np.array([0, 2])), shape=(1, X.shape[1]))
    single = np.zeros((1, X.shape[1]))
    single[0, 0] = 0.7
    np.testing.assert_allclose(encoding.transform(row).toarray(), encoding.transform(single), atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_statistics_are_those_of_the_encoded_inputs(sparse):
    X = _features()
    scaling = InputScaling.fit("piecewise", sp.csr_matrix(X) if sparse else X)
    encoded = reference_encode(X, scaling.encoding.edges)
    expected = StandardScaler().fit(encoded)
    assert scaling.n_inputs == encoded.shape[1]
    np.testing.assert_allclose(scaling.mean, expected.mean_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(scaling.scale, np.where(expected.scale_ > 0, expected.scale_, 1.0), rtol=1e-9)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_large_data_takes_edges_and_statistics_from_one_sample(sparse, monkeypatch):
    # Past EDGE_SAMPLE_ROWS both come from the evenly spaced sample; the
    # number of bins still follows all the rows.
    monkeypatch.setattr(_inputs, "EDGE_SAMPLE_ROWS", 50)
    monkeypatch.setattr(_inputs, "PIECEWISE_LARGE_ROWS", 200)
    X = _features(n_rows=230)
    rows = np.random.default_rng(3).permutation(len(X))
    scaling = InputScaling.fit("piecewise", sp.csr_matrix(X) if sparse else X, rows)
    sample = rows[::5]  # ceil(230 / 50) = 5: 46 rows
    for j, edges in enumerate(scaling.encoding.edges):
        np.testing.assert_allclose(edges, reference_edges(X[sample, j], PIECEWISE_BINS_LARGE), rtol=1e-15)
    expected = StandardScaler().fit(reference_encode(X[sample], scaling.encoding.edges))
    np.testing.assert_allclose(scaling.mean, expected.mean_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(scaling.scale, np.where(expected.scale_ > 0, expected.scale_, 1.0), rtol=1e-9)


def _pipeline_before(Ranker, X, **params):
    """Encode with the reference, standardize, then the ranker unscaled."""
    edges = PiecewiseEncoding.fit(X).edges
    return make_pipeline(
        FunctionTransformer(reference_encode, kw_args={"edges": edges}),
        StandardScaler(),
        Ranker(feature_scaling=None, **params),
    )


@pytest.mark.parametrize("Ranker", RANKERS)
def test_piecewise_inside_is_the_encoding_before(Ranker):
    X, y, qid = make_ranking(30, n_features=5, n_informative=3, random_state=0)
    X = X * np.array([1.0, 100.0, 0.01, 5.0, 1.0]) + np.array([0.0, 50.0, 0.0, -3.0, 0.0])
    # input_noise="auto" reads X as given to fit, and the bins of one feature
    # order the rows alike: the pipeline would add noise that the ranker
    # on raw X does not. Fix it to compare the encodings alone.
    params = dict(hidden_layer_sizes=(4,), max_iter=5, random_state=0, input_noise=0.0)
    inside = Ranker(feature_scaling="piecewise", **params).fit(X, y, groups=qid)
    before = _pipeline_before(Ranker, X, **params)
    before.fit(X, y, **{f"{type(before[-1]).__name__.lower()}__groups": qid})
    assert_same_training(inside.predict(X), before.predict(X))


def test_lbfgs_trains_on_the_encoded_inputs():
    X, y, qid = make_ranking(30, n_features=5, n_informative=3, random_state=2)
    params = dict(hidden_layer_sizes=(4,), max_iter=20, random_state=0, solver="lbfgs")
    inside = RankNetRanker(feature_scaling="piecewise", **params).fit(X, y, groups=qid)
    before = _pipeline_before(RankNetRanker, X, **params).fit(X, y, ranknetranker__groups=qid)
    assert_same_training(inside.predict(X), before.predict(X))


def test_fitted_attributes():
    X, y, qid = make_ranking(20, n_features=4, n_informative=2, random_state=3)
    X[:, 3] = 7.0
    ranker = LambdaRankRanker(max_iter=2, feature_scaling="piecewise").fit(X, y, groups=qid)
    n_inputs = sum(max(len(e) - 1, 1) for e in ranker.bin_edges_)
    assert ranker.bin_edges_.shape == (4,) and ranker.bin_edges_.dtype == object
    np.testing.assert_allclose(ranker.bin_edges_[0], reference_edges(X[:, 0]), rtol=1e-15)
    np.testing.assert_array_equal(ranker.bin_edges_[3], [7.0])
    assert ranker.coefs_[0].shape[0] == n_inputs == len(ranker.feature_mean_) == len(ranker.feature_scale_)
    assert n_inputs == 3 * PIECEWISE_BINS + 1
    for kind in ("standard", None):
        other = LambdaRankRanker(max_iter=1, feature_scaling=kind).fit(X, y, groups=qid)
        assert other.bin_edges_ is None and other.coefs_[0].shape[0] == 4


def test_float32_trains_in_float32():
    X, y, qid = make_ranking(20, n_features=4, n_informative=2, random_state=4)
    ranker = LambdaRankRanker(max_iter=3, feature_scaling="piecewise", random_state=0)
    ranker.fit(X.astype(np.float32), y, groups=qid)
    assert all(c.dtype == np.float32 for c in ranker.coefs_)
    assert ranker.predict(X.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("Ranker", RANKERS)
def test_values_outside_the_training_range_score_as_its_ends(Ranker):
    """Like a tree, the encoded model is flat beyond the outermost edges,
    and a feature constant in training does not move the scores."""
    X, y, qid = make_ranking(30, n_features=4, n_informative=3, random_state=5)
    X[:, 3] = 1.0  # constant in training
    ranker = Ranker(max_iter=5, feature_scaling="piecewise", random_state=0).fit(X, y, groups=qid)
    low, high = X[:, 0].min(), X[:, 0].max()
    for bound, beyond, far in ((high, high + 1.0, high + 100.0), (low, low - 1.0, low - 1e6)):
        at, past, farther = X[:5].copy(), X[:5].copy(), X[:5].copy()
        at[:, 0], past[:, 0], farther[:, 0] = bound, beyond, far
        # Past the edge every input is clipped: the same bits however far.
        np.testing.assert_array_equal(ranker.predict(farther), ranker.predict(past))
        # At the edge itself (x - lower) * (1 / width) may round to an ulp
        # below 1, which the network carries to an ulp or so of the score.
        scale = np.abs(ranker.predict(at)).max()
        np.testing.assert_allclose(ranker.predict(past), ranker.predict(at), rtol=0, atol=1e-13 * scale)
    moved = X[:5].copy()
    moved[:, 3] = -50.0
    np.testing.assert_array_equal(ranker.predict(moved), ranker.predict(X[:5]))


def test_warm_start_keeps_the_encoding_and_refuses_another_scaling():
    X, y, qid = make_ranking(20, n_features=4, n_informative=2, random_state=6)
    ranker = RankNetRanker(max_iter=2, feature_scaling="piecewise", warm_start=True, random_state=0)
    ranker.fit(X, y, groups=qid)
    edges = [e.copy() for e in ranker.bin_edges_]
    ranker.fit(X[: len(X) // 2] * 3.0, y[: len(X) // 2], groups=qid[: len(X) // 2])
    for kept, before in zip(ranker.bin_edges_, edges):
        np.testing.assert_array_equal(kept, before)
    ranker.set_params(feature_scaling="standard")
    with pytest.raises(ValueError, match="feature_scaling='standard'"):
        ranker.fit(X, y, groups=qid)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_edges_closer_than_the_smallest_normal_number_are_one_edge(dtype):
    """Inputs are (x - lower) * (1 / width): a bin narrower than the dtype's
    smallest normal number would have an infinite reciprocal width and
    encode its own lower edge as 0 * inf = NaN."""
    step = np.finfo(dtype).smallest_subnormal
    X = np.column_stack([step * (np.arange(30) % 3), np.arange(30)]).astype(dtype)
    encoding = PiecewiseEncoding.fit(X)
    assert encoding.edges[0].tolist() == [0.0]  # 0, step and 2 * step count as one value
    np.testing.assert_array_equal(encoding.edges[1], reference_edges(X[:, 1]).astype(dtype))
    encoded = encoding.transform(X)
    assert np.all(np.isfinite(encoded)) and np.all(encoded[:, 0] == 0.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["piecewise", "standard"])
def test_a_feature_with_a_subnormal_spread_scores_finitely(kind, dtype):
    """Its spread is below what 1 / scale or 1 / width can represent: the
    feature counts as constant instead of turning the scores into NaN."""
    X, y, groups = make_ranking(n_queries=20, n_features=3, n_informative=2, random_state=0)
    X = X.astype(dtype)
    X[:, 1] = np.finfo(dtype).smallest_subnormal * (np.arange(len(X)) % 3)
    with pytest.warns(UserWarning, match="reads it as constant") as caught:
        ranker = LambdaRankRanker(feature_scaling=kind, max_iter=3, random_state=0).fit(X, y, groups=groups)
    # "give X as float64" only helps X that is not float64 already.
    for message in (str(w.message) for w in caught if "reads it as constant" in str(w.message)):
        assert ("float64" in message.split("Rescale it")[-1]) == (dtype != np.float64), message
    assert np.all(np.isfinite(ranker.predict(X)))
    assert np.all(np.isfinite(ranker.feature_scale_)) and np.all(ranker.feature_scale_ > 0)


# ----------------------------------------------------------------------------
# Edges of CSR in time that follows its stored values


def _padded_quantiles(X, sample, levels):
    """The obvious reference: each column of X[sample] with its zeros, to
    np.quantile (what the CSR path did before, in rows times columns)."""
    dense = X[sample].toarray().astype(np.float64)
    return np.array([np.quantile(dense[:, j], levels) for j in range(X.shape[1])])


@settings(max_examples=200, deadline=None)
@given(
    n_rows=st.integers(1, 40), n_columns=st.integers(1, 8), density=st.floats(0.0, 1.0),
    ties=st.booleans(), positive=st.booleans(), explicit_zeros=st.booleans(),
    n_bins=st.sampled_from([1, 2, 3, 4, 8, 16]), seed=st.integers(0, 2**31 - 1),
)
def test_sparse_quantiles_are_np_quantiles_bits(n_rows, n_columns, density, ties, positive, explicit_zeros,
                                                 n_bins, seed):
    """Order statistics read off the sorted stored values give np.quantile's
    very numbers, whatever the signs, ties, stored zeros (-0.0 too) and rows
    sampled. (The sign of a zero may differ: np.quantile's interpolation
    flips it by the level, and x - 0.0 and x + 0.0 encode alike.)"""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_rows, n_columns)) * (rng.random((n_rows, n_columns)) < density)
    if ties:
        A = np.round(A)
    if positive:
        A = np.abs(A)
    X = sp.csr_matrix(A)
    if explicit_zeros and X.nnz:
        X.data[: max(X.nnz // 3, 1)] = 0.0
        X.data[X.nnz // 2:][:2] = -0.0
    sample = np.sort(rng.choice(n_rows, size=int(rng.integers(1, n_rows + 1)), replace=False))
    levels = np.linspace(0.0, 1.0, n_bins + 1)
    got = np.array(list(_inputs._column_quantiles(X, sample, levels)))
    expected = _padded_quantiles(X, sample, levels)
    np.testing.assert_array_equal(got, expected)  # exact; -0.0 == 0.0


def test_sparse_quantiles_of_wide_csr_read_columns_in_chunks():
    # More columns than one chunk of the vectorized path holds.
    rng = np.random.default_rng(0)
    n_rows, n_columns, nnz = 300, 20_000, 3_000
    X = sp.csr_matrix((rng.normal(size=nnz), (rng.integers(0, n_rows, nnz), rng.integers(0, n_columns, nnz))),
                      shape=(n_rows, n_columns))
    # One column full: np.quantile's own path.
    X = sp.csr_matrix(sp.hstack([X, sp.csr_matrix(rng.normal(size=(n_rows, 1)))]))
    levels = np.linspace(0.0, 1.0, 5)
    sample = np.arange(0, n_rows, 2)
    got = np.array(list(_inputs._column_quantiles(X, sample, levels)))
    np.testing.assert_array_equal(got, _padded_quantiles(X, sample, levels))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_distinct_edges_of_all_rows_are_each_rows(dtype):
    """The vectorized edges equal the one-row rule, steps below the smallest
    normal number (merged one by one) included."""
    tiny = float(np.finfo(dtype).tiny)
    rows = [
        [0.0, 0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0], [-2.0, -1.0, 0.0, 0.0, 3.0],
        [0.0, tiny / 4, tiny / 2, 2 * tiny, 1.0], [5.0, 5.0, 6.0, 6.0, 7.0], [0.0, tiny, tiny, 2 * tiny, 3 * tiny],
    ]
    quantiles = np.array(rows, dtype=dtype)
    got = _inputs._distinct_edges_of_all(quantiles)
    for row, edges in zip(quantiles, got):
        expected = _inputs._distinct_edges(row)
        assert edges.dtype == expected.dtype
        np.testing.assert_array_equal(edges, expected)


@pytest.mark.parametrize(
    "dtype, far, n_far",
    [
        (np.float64, 1.7e308, 5),  # the median's interpolation overflows float64
        (np.float32, 3.3e38, 6),  # the edges -far, far: a width past float32's range
    ],
)
@pytest.mark.parametrize("form", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
def test_edges_past_the_dtypes_range_make_no_numpy_warning(dtype, far, n_far, form):
    # Bins wider than the dtype can hold give non-finite edges or widths;
    # fitting then refuses the feature with a remedy (test_bad_input's
    # bad-data cases), so numpy's overflow warnings before it are noise.
    X = np.array([[-far]] * 5 + [[far]] * n_far, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoding = PiecewiseEncoding.fit(form(X), n_bins=4)
    assert not np.isfinite(encoding.width).all() or not np.isfinite(encoding.lower).all()
