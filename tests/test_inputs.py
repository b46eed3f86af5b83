"""Input scaling inside the rankers, dropout and input noise."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils import check_array

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet._inputs import DENSE_BLOCKS_FROM, InputScaling, block_rows, edge_sample, stays_sparse
from sklearn_ranknet._network import backward, forward, init_params, predict_scores
from sklearn_ranknet.datasets import make_ranking

from ._assertions import CSR_PATHS, assert_same_training, csr_with_duplicate_entries, read_csr_as

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

RANKERS = [RankNetRanker, LambdaRankRanker, ListNetRanker]


def _signed_log1p(X):
    return np.sign(X) * np.log1p(np.abs(X))


def _raw(n_rows=300, n_features=6, seed=0, density=1.0):
    """Heavy-tailed raw features: counts, large offsets, signs, a constant."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.poisson(3.0, n_rows) * 100.0,  # counts
            1e6 + rng.normal(size=n_rows),  # mean dwarfs spread
            rng.standard_t(2, n_rows),  # heavy tails, both signs
            np.full(n_rows, 4.0),  # constant
            *rng.normal(size=(n_features - 4, n_rows)),
        ]
    )
    if density < 1.0:
        X[rng.random(X.shape) > density] = 0.0
    return X


@pytest.mark.parametrize("kind", ["log1p", "standard"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_statistics_are_those_of_the_transformed_features(kind, sparse):
    X = _raw(density=0.6 if sparse else 1.0)
    rows = np.random.default_rng(1).permutation(len(X))[:200]
    given = sp.csr_matrix(X) if sparse else X
    scaling = InputScaling.fit(kind, given, rows)
    T = _signed_log1p(X[rows]) if kind == "log1p" else X[rows]
    expected = StandardScaler().fit(T)
    np.testing.assert_allclose(scaling.mean, expected.mean_, rtol=1e-12)
    np.testing.assert_allclose(scaling.scale, expected.scale_, rtol=1e-9)
    if not sparse:
        assert scaling.scale[3] == 1.0  # a constant feature is only centred


def test_statistics_over_blocks_do_not_cancel():
    """A feature 1e6 + N(0, 1) read in many blocks: the spread survives."""
    n_rows = 5 * block_rows(2) + 7
    X = np.column_stack([1e6 + np.random.default_rng(0).normal(size=n_rows), np.zeros(n_rows)])
    scaling = InputScaling.fit("standard", X)
    assert scaling.scale[0] == pytest.approx(X[:, 0].std(), rel=1e-9)


@pytest.mark.parametrize("kind", ["log1p", "standard"])
def test_rows_never_modify_X(kind):
    X = _raw()
    saved = X.copy()
    scaling = InputScaling.fit(kind, X)
    for index in (slice(0, 50), np.arange(10)):
        block = scaling.rows(X, index)
        assert not np.may_share_memory(block, X)
    csr = sp.csr_matrix(X)
    block = scaling.rows(csr, slice(0, 50))
    assert not np.may_share_memory(block.data, csr.data)
    np.testing.assert_array_equal(X, saved)
    np.testing.assert_array_equal(csr.toarray(), saved)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["standard", "piecewise"])
def test_one_pass_gather_is_the_numpy_gather(dtype, kind):
    # The fused Numba gathers serve C-contiguous writeable X; every other
    # layout takes numpy's path. Both must give the same bits.
    X = _raw(n_rows=400, n_features=7).astype(dtype)
    scaling = InputScaling.fit(kind, X)
    rows = np.random.default_rng(1).integers(0, len(X), 150).astype(np.int64)
    readonly = X.copy()
    readonly.flags.writeable = False
    encode = scaling.encoding.transform if kind == "piecewise" else np.array
    for index, expected_rows in ((rows, X[rows]), (slice(350, 450), X[350:]), (slice(5, 9), X[5:9])):
        expected = (encode(expected_rows) - scaling.mean) * scaling.inv_scale
        for layout in (X, readonly, np.asfortranarray(X)):
            block = scaling.rows(layout, index)
            assert block.dtype == dtype and block.flags.c_contiguous
            np.testing.assert_array_equal(block, expected)


@pytest.mark.parametrize("kind", ["log1p", "standard"])
@pytest.mark.parametrize("hidden", [(), (5,)], ids=["linear", "mlp"])
def test_sparse_rows_with_the_folded_layer_score_as_dense_rows(kind, hidden, monkeypatch):
    read_csr_as(monkeypatch, "folded")
    X = _raw(density=0.5)
    X[:, 1] = np.where(X[:, 1] != 0, 3.0 + X[:, 1] * 1e-6, 0.0)  # keep float64 folding exact enough
    scaling = InputScaling.fit(kind, X)
    coefs, intercepts = init_params(X.shape[1], hidden, "tanh", np.random.RandomState(0))
    dense_rows = scaling.rows(X, slice(None))
    csr = sp.csr_matrix(X)
    sparse_rows = scaling.rows(csr, slice(None))
    dense = predict_scores(dense_rows, *scaling.network_params(X, coefs, intercepts), "tanh")
    folded = predict_scores(sparse_rows, *scaling.network_params(csr, coefs, intercepts), "tanh")
    np.testing.assert_allclose(folded, dense, rtol=1e-10, atol=1e-10)


def test_gradient_through_the_folded_layer(monkeypatch):
    """model_gradient turns the folded layer's gradient into the gradient of
    the model's own weights: compare with central differences."""
    read_csr_as(monkeypatch, "folded")
    X = sp.csr_matrix(_raw(40, density=0.5)[:, [0, 2, 4, 5]])
    scaling = InputScaling.fit("log1p", X)
    coefs, intercepts = init_params(4, (3,), "tanh", np.random.RandomState(1))
    rows = scaling.rows(X, slice(None))
    target = np.random.default_rng(2).normal(size=X.shape[0])

    def loss(coefs, intercepts):
        scores = predict_scores(rows, *scaling.network_params(X, coefs, intercepts), "tanh")
        return 0.5 * ((scores - target) ** 2).sum()

    effective = scaling.network_params(X, coefs, intercepts)
    scores, cache = forward(rows, *effective, "tanh")
    grads = backward(cache, scores - target, effective[0], "tanh")
    coef_grads, intercept_grads = scaling.model_gradient(X, *grads)
    eps = 1e-6
    for params, grads_of in ((coefs, coef_grads), (intercepts, intercept_grads)):
        for p, g in zip(params, grads_of):
            for idx in np.ndindex(p.shape):
                saved = p[idx]
                p[idx] = saved + eps
                up = loss(coefs, intercepts)
                p[idx] = saved - eps
                down = loss(coefs, intercepts)
                p[idx] = saved
                assert g[idx] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("Ranker", RANKERS)
@pytest.mark.parametrize("kind", ["log1p", "standard"])
def test_scaling_inside_is_scaling_before(Ranker, kind):
    """The built-in scaling trains the model a scikit-learn pipeline with the
    same transform would train (up to the order of float sums)."""
    X, y, qid = make_ranking(30, n_features=5, n_informative=3, random_state=0)
    X = X * np.array([1.0, 100.0, 0.01, 5.0, 1.0]) + np.array([0.0, 50.0, 0.0, -3.0, 0.0])
    params = dict(hidden_layer_sizes=(4,), max_iter=5, random_state=0)
    inside = Ranker(feature_scaling=kind, **params).fit(X, y, groups=qid)
    steps = [FunctionTransformer(_signed_log1p)] if kind == "log1p" else []
    before = make_pipeline(*steps, StandardScaler(), Ranker(feature_scaling=None, **params))
    before.fit(X, y, **{f"{type(before[-1]).__name__.lower()}__groups": qid})
    assert_same_training(inside.predict(X), before.predict(X))


@pytest.mark.parametrize("csr_path", list(CSR_PATHS))
@pytest.mark.parametrize("Ranker", RANKERS)
@pytest.mark.parametrize("kind", ["piecewise", "standard", "log1p"])
def test_sparse_input_trains_the_dense_model(Ranker, kind, csr_path, monkeypatch):
    """CSR trains the model dense X trains, whether it stays sparse (its
    first layer folded, or encoded to CSR) or is read as dense blocks."""
    read_csr_as(monkeypatch, csr_path)
    X, y, qid = make_ranking(30, n_features=6, n_informative=3, random_state=1)
    X[np.random.default_rng(0).random(X.shape) < 0.5] = 0.0
    params = dict(hidden_layer_sizes=(4,), max_iter=5, random_state=0, feature_scaling=kind)
    dense = Ranker(**params).fit(X, y, groups=qid)
    sparse = Ranker(**params).fit(sp.csr_matrix(X), y, groups=qid)
    assert_same_training(sparse.predict(sp.csr_matrix(X)), dense.predict(X))
    assert_same_training(sparse.predict(X), dense.predict(X))


def _read_only(X):
    X = X.copy()
    X.flags.writeable = False
    return X


LAYOUTS = {
    "fortran": np.asfortranarray,  # a DataFrame's values when read from a file
    "read-only": _read_only,  # pandas 3's values, np.load(path, mmap_mode="r")
    "strided": lambda X: np.repeat(X, 2, axis=0)[::2],
    "dataframe": lambda X: __import__("pandas").DataFrame(X),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_dense_x_in_any_layout_takes_the_fused_kernel_with_the_same_bits(layout, monkeypatch):
    """A dense X the compiled gather-encode kernel is not compiled for
    (Fortran order, read-only, strided) has each block of rows copied into C
    order first, then takes the kernel, not numpy's gather and encoding
    (``InputScaling.rows``): the same bits as a C-ordered X, in training and
    in predict, and the caller's array left as it was."""
    from sklearn_ranknet._inputs import PiecewiseEncoding

    if layout == "dataframe":
        pytest.importorskip("pandas")
    X, y, qid = make_ranking(30, n_features=6, n_informative=3, random_state=1)
    given = LAYOUTS[layout](X)
    snapshot = np.array(given, copy=True)
    validated = check_array(given)  # what the fit reads (pandas decides a frame's layout)
    assert not (validated.flags.c_contiguous and validated.flags.writeable) or layout == "dataframe"
    params = dict(hidden_layer_sizes=(4,), max_iter=3, random_state=0, input_noise=0.5)
    numpy_path = []  # blocks encoded by numpy (the scaling's moments are, once, in any layout)
    transform = PiecewiseEncoding.transform

    def spied_transform(encoding, block):
        numpy_path.append(block.shape)
        return transform(encoding, block)

    monkeypatch.setattr(PiecewiseEncoding, "transform", spied_transform)
    expected = LambdaRankRanker(**params).fit(X, y, groups=qid)
    expected_scores = expected.predict(X)
    in_c_order, numpy_path[:] = list(numpy_path), []
    got = LambdaRankRanker(**params).fit(given, y, groups=qid)
    scores = got.predict(given)
    assert numpy_path == in_c_order == [X.shape]
    for a, b in zip(got.coefs_ + got.intercepts_, expected.coefs_ + expected.intercepts_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(scores, expected_scores)
    # feature_scaling="standard" takes the other fused kernel: the same bits too.
    standard = dict(params, feature_scaling="standard")
    np.testing.assert_array_equal(LambdaRankRanker(**standard).fit(given, y, groups=qid).predict(given),
                                  LambdaRankRanker(**standard).fit(X, y, groups=qid).predict(X))
    np.testing.assert_array_equal(np.asarray(given), snapshot)


@pytest.mark.parametrize("form", ["C-order", "F-order", "float32", "csr-dense-enough", "no-scaling"])
@pytest.mark.parametrize("ranker", ["LambdaRank", "a bag of 3"])
def test_kept_inputs_train_to_the_same_bits(form, ranker, monkeypatch):
    """A fit computes its network inputs for every row once
    (``TrainingSet.keep_inputs``) when they take at most
    ``KEPT_INPUTS_BYTES``, and its minibatches and loss sample copy their
    rows from them. The encoding, the standardization and the cast work row
    by row, so the fit is the same to the bit as one whose minibatches
    compute their own rows (the budget at 0), with noise and dropout drawn
    on top, alone and in a stack of networks; the kept rows are released
    when the fit ends."""
    from sklearn_ranknet import BaggingRanker, _training

    X, y, qid = make_ranking(40, n_features=7, n_informative=3, random_state=3)
    X[np.random.default_rng(1).random(X.shape) < 0.3] = 0.0
    params = dict(hidden_layer_sizes=(6,), max_iter=4, random_state=0, input_noise=0.3, dropout=0.2)
    if form == "F-order":
        X = np.asfortranarray(X)
    elif form == "float32":
        X = X.astype(np.float32)
    elif form == "csr-dense-enough":
        X = sp.csr_matrix(X)
    elif form == "no-scaling":
        params["feature_scaling"] = None
    kept_at_drop = []
    drop = _training.TrainingSet.drop_inputs

    def spied_drop(data):
        kept_at_drop.append(data._kept.inputs is not None)
        drop(data)
        assert data._kept.inputs is None

    monkeypatch.setattr(_training.TrainingSet, "drop_inputs", spied_drop)

    def fitted():
        estimator = LambdaRankRanker(**params)
        if ranker != "LambdaRank":
            estimator = BaggingRanker(estimator, n_estimators=3, random_state=0)
        return estimator.fit(X, y, groups=qid)

    kept = fitted()
    assert kept_at_drop == [True]
    monkeypatch.setattr(_training, "KEPT_INPUTS_BYTES", 0)
    computed = fitted()
    assert kept_at_drop == [True, False]
    members = [(kept, computed)] if ranker == "LambdaRank" else zip(kept.estimators_, computed.estimators_)
    for got, expected in members:
        for a, b in zip(got.coefs_ + got.intercepts_, expected.coefs_ + expected.intercepts_):
            np.testing.assert_array_equal(a, b)
        assert got.loss_curve_ == expected.loss_curve_


@pytest.mark.parametrize("copied", [True, False], ids=["dense-copy", "block-by-block"])
def test_csr_dense_enough_is_read_as_the_dense_rows_are(copied, monkeypatch):
    """CSR with at least DENSE_BLOCKS_FROM of its entries stored (LETOR
    files as ``load_letor`` returns them) takes the dense code: one dense
    copy for the fit (``TrainingSet.densify``), or, when that copy would
    exceed ``DENSE_COPY_BYTES``, each minibatch densified as gathered.
    Either way the same bits as the dense array, in training and in
    predict. Sparser CSR stays sparse."""
    from sklearn_ranknet import _training

    if not copied:
        monkeypatch.setattr(_training, "DENSE_COPY_BYTES", 0)
    X, y, qid = make_ranking(30, n_features=6, n_informative=3, random_state=1)
    X[np.random.default_rng(0).random(X.shape) < 0.5] = 0.0
    assert stays_sparse(sp.csr_matrix(X)) == bool(np.count_nonzero(X) < DENSE_BLOCKS_FROM * X.size)
    assert not stays_sparse(sp.csr_matrix(X))  # about half of the entries are stored
    sparse = X.copy()
    sparse[:, 1:] = 0.0  # one column of six, about half filled: below the threshold
    assert stays_sparse(sp.csr_array(sparse)) and not stays_sparse(sparse)
    params = dict(hidden_layer_sizes=(4,), max_iter=3, random_state=0, input_noise=0.5)
    dense = LambdaRankRanker(**params).fit(X, y, groups=qid)
    from_csr = []  # whether each minibatch (or loss-sample block) was gathered from the CSR
    features = _training.TrainingSet.features

    def spied_features(data, ranker, positions):
        from_csr.append(sp.issparse(data.X))
        return features(data, ranker, positions)

    monkeypatch.setattr(_training.TrainingSet, "features", spied_features)
    csr = LambdaRankRanker(**params).fit(sp.csr_matrix(X), y, groups=qid)
    assert from_csr and all(from_csr) != copied
    for got, expected in zip(csr.coefs_ + csr.intercepts_, dense.coefs_ + dense.intercepts_):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(dense.predict(sp.csr_array(X)), dense.predict(X))
    # Without input scaling too (predict once ran one sparse product there).
    unscaled = LambdaRankRanker(feature_scaling=None, **params).fit(X, y, groups=qid)
    np.testing.assert_array_equal(unscaled.predict(sp.csr_array(X)), unscaled.predict(X))
    np.testing.assert_array_equal(unscaled.predict(sp.csr_array(X.astype(np.float32))), unscaled.predict(X.astype(np.float32)))


@pytest.mark.parametrize("kind", ["piecewise", "standard", "log1p", None])
def test_float64_model_scores_float32_rows_as_their_float64_values(kind):
    """float32 -> float64 is exact, so a float64 model gives float32 rows the
    scores of the same values in float64 (as MLPRegressor does): the scaling
    runs in the model's precision, not the input's."""
    X, y, qid = make_ranking(30, n_features=6, n_informative=3, random_state=1)
    X = X * np.array([1.0, 100.0, 0.01, 5.0, 1.0, 3e3]) + np.array([0.0, 50.0, 0.0, -3.0, 0.0, 1e4])
    X32 = X.astype(np.float32)
    model = LambdaRankRanker(feature_scaling=kind, hidden_layer_sizes=(4,), max_iter=3, random_state=0)
    model.fit(X, y, groups=qid)
    expected = model.predict(X32.astype(np.float64))
    assert expected.dtype == np.float64
    np.testing.assert_array_equal(model.predict(X32), expected)
    np.testing.assert_array_equal(model.predict(sp.csr_matrix(X32)), expected)


def test_predict_in_blocks_is_predict_at_once(monkeypatch):
    from sklearn_ranknet import _inputs

    monkeypatch.setattr(_inputs, "BLOCK_VALUES", 100)
    X, y, qid = make_ranking(40, n_features=3, n_informative=2, random_state=2)
    ranker = RankNetRanker(hidden_layer_sizes=(3,), max_iter=2, random_state=0).fit(X, y, groups=qid)
    assert len(X) > 10 * block_rows(3)  # several blocks
    coefs, intercepts = ranker._model.layers(X)
    expected = predict_scores(ranker._model.inputs(X, slice(None)), coefs, intercepts, "relu")
    np.testing.assert_array_equal(ranker.predict(X), expected)


def test_fitted_statistics_are_exposed():
    X, y, qid = make_ranking(20, n_features=4, n_informative=2, random_state=3)
    ranker = RankNetRanker(max_iter=1, feature_scaling="standard").fit(X, y, groups=qid)
    np.testing.assert_allclose(ranker.feature_mean_, X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(ranker.feature_scale_, X.std(axis=0), rtol=1e-10)
    plain = RankNetRanker(max_iter=1, feature_scaling=None).fit(X, y, groups=qid)
    assert plain.feature_mean_ is None and plain.feature_scale_ is None


# ----------------------------------------------------------------------------
# Dropout and input noise


@pytest.mark.parametrize("Ranker", RANKERS)
@pytest.mark.parametrize("regularizer", [dict(dropout=0.3), dict(input_noise=0.5)])
def test_random_regularizers_are_seeded_and_only_train(Ranker, regularizer):
    X, y, qid = make_ranking(30, n_features=5, n_informative=3, random_state=4)
    params = dict(hidden_layer_sizes=(8,), max_iter=3, random_state=0, **regularizer)
    first = Ranker(**params).fit(X, y, groups=qid)
    second = Ranker(**params).fit(X, y, groups=qid)
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    np.testing.assert_array_equal(first.predict(X), first.predict(X))  # predict is deterministic
    plain = Ranker(hidden_layer_sizes=(8,), max_iter=3, random_state=0).fit(X, y, groups=qid)
    assert np.abs(first.predict(X) - plain.predict(X)).max() > 1e-3 * np.ptp(plain.predict(X))
    other_seed = Ranker(**{**params, "random_state": 1}).fit(X, y, groups=qid)
    assert not np.allclose(other_seed.predict(X), first.predict(X))


@pytest.mark.parametrize("regularizer", [dict(dropout=0.3), dict(input_noise=0.5)])
def test_random_regularizers_do_not_depend_on_threads(regularizer, monkeypatch):
    from sklearn_ranknet import _training

    monkeypatch.setattr(_training, "BLOCK_WORK", 64)  # several row blocks per batch
    X, y, qid = make_ranking(30, n_features=5, n_informative=3, random_state=5)
    params = dict(hidden_layer_sizes=(8,), max_iter=2, random_state=0, **regularizer)
    one = LambdaRankRanker(n_jobs=1, **params).fit(X, y, groups=qid).predict(X)
    two = LambdaRankRanker(n_jobs=2, **params).fit(X, y, groups=qid).predict(X)
    np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("given_as", ["dense", *CSR_PATHS])
def test_input_noise_is_in_standardized_units(given_as, monkeypatch):
    """The noise added to a minibatch has the asked-for spread once the
    batch is standardized, for dense rows (standardized as gathered), for
    CSR rows that stay sparse (made dense, then standardized by the folded
    layer) and for CSR read as dense blocks (standardized as gathered)."""
    from sklearn_ranknet import _training

    sparse = given_as != "dense"
    folded = given_as == "folded"
    if sparse:
        read_csr_as(monkeypatch, given_as)

    X, y, qid = make_ranking(30, n_features=4, n_informative=2, random_state=6)
    X = X * np.array([1.0, 1000.0, 0.001, 10.0])
    given = sp.csr_matrix(X) if sparse else X
    seen = []
    original = _training._with_input_noise

    def spy(model, rows, noise, generator):
        clean = rows.toarray() if sp.issparse(rows) else rows.copy()
        noisy = original(model, rows, noise, generator)
        scale = model.scaling.scale if folded else 1.0
        seen.append((noisy - clean) / scale)
        return noisy

    monkeypatch.setattr(_training, "_with_input_noise", spy)
    RankNetRanker(hidden_layer_sizes=(), max_iter=1, input_noise=0.7, random_state=0).fit(
        given, y, groups=qid
    )
    noise = np.concatenate(seen)
    # The sample standard deviation of n normal draws has a relative standard
    # error of 1 / sqrt(2 n): with n >= 400 per feature, 3.5 %, so 15 % is
    # more than 4 standard errors. A noise left in raw units would be off by
    # the features' spreads (factors of 10 to 1000 here).
    assert noise.shape[0] >= 400
    np.testing.assert_allclose(noise.std(axis=0), 0.7, rtol=0.15)


@pytest.mark.parametrize("Ranker", [RankNetRanker, ListNetRanker])
def test_lbfgs_refuses_random_regularizers(Ranker):
    X, y, qid = make_ranking(10, n_features=3, n_informative=2, random_state=0)
    ranker = Ranker(solver="lbfgs", dropout=0.2)
    with pytest.raises(ValueError, match="L-BFGS"):
        ranker.fit(X, y, groups=qid)
    assert not hasattr(ranker, "coefs_")
    with pytest.raises(ValueError, match="L-BFGS"):
        Ranker(solver="lbfgs", input_noise=0.1).fit(X, y, groups=qid)


def test_predict_uses_the_scaling_it_was_fitted_with():
    """Changing feature_scaling after fit changes nothing until the next fit
    (the statistics and their kind are fitted state)."""
    X, y, qid = make_ranking(20, n_features=4, n_informative=2, random_state=7)
    ranker = RankNetRanker(max_iter=2, random_state=0, feature_scaling="standard").fit(X, y, groups=qid)
    before = ranker.predict(sp.csr_matrix(X))
    ranker.set_params(feature_scaling="log1p")
    np.testing.assert_array_equal(ranker.predict(sp.csr_matrix(X)), before)


@pytest.mark.parametrize("feature_scaling", ["piecewise", "standard", "log1p"])
def test_features_below_float32s_normal_range_warn_that_they_read_as_constant(feature_scaling):
    """Rows are multiplied by 1 / spread, which overflows float32 for a
    spread below its smallest normal number: such a feature is read as
    constant, and the user is told, since every row would score the same."""
    from sklearn_ranknet import LambdaRankRanker
    from sklearn_ranknet.datasets import make_ranking

    X, y, qid = make_ranking(n_queries=20, n_features=3, n_informative=2, random_state=0)
    X = X.astype(np.float32)
    X[:, 1] = (X[:, 1] / np.abs(X[:, 1]).max() * 1e-39).astype(np.float32)  # subnormal, varied
    assert len(np.unique(X[:, 1])) > 100
    ranker = LambdaRankRanker(max_iter=2, random_state=0, feature_scaling=feature_scaling)
    with pytest.warns(UserWarning, match=r"Feature 1 of X varies only by less than float32's smallest normal"):
        ranker.fit(X, y, groups=qid)
    # The same values in float64 are ordinary numbers: no warning.
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*smallest normal")
        ranker.fit(X.astype(np.float64), y, groups=qid)


# Found by a mutation audit of the suite (2026-11-27).

@pytest.mark.parametrize("limit", [1, 2, 7, 2000])
def test_edge_sample_never_exceeds_its_limit_and_spreads_evenly(limit):
    for n_rows in [1, limit - 1, limit, limit + 1, 2 * limit - 1, 2 * limit, 2 * limit + 1, 5 * limit + 3]:
        if n_rows < 1:
            continue
        sample = edge_sample(n_rows, limit=limit)
        assert 1 <= len(sample) <= limit
        assert sample[0] == 0 and np.all(np.diff(sample) == (sample[1] - sample[0] if len(sample) > 1 else 0))
        if n_rows <= limit:
            np.testing.assert_array_equal(sample, np.arange(n_rows))
        rows = np.arange(n_rows) * 3 + 1
        np.testing.assert_array_equal(edge_sample(n_rows, rows, limit=limit), rows[sample])


# Found by a mutation audit of the suite, second round (2026-11-27).

def test_csr_stays_sparse_only_below_the_share():
    # "Only CSR with fewer than DENSE_BLOCKS_FROM of its entries stored stays
    # sparse": exactly that share is read as dense blocks.
    n_rows, n_columns = 20, 10
    n_at_share = int(round(DENSE_BLOCKS_FROM * n_rows * n_columns))
    assert n_at_share == DENSE_BLOCKS_FROM * n_rows * n_columns  # the share is reachable exactly

    def with_entries(n):
        flat = np.zeros(n_rows * n_columns)
        flat[np.linspace(0, flat.size - 1, n).astype(int)] = 1.0
        X = sp.csr_matrix(flat.reshape(n_rows, n_columns))
        assert X.nnz == n
        return X

    assert stays_sparse(with_entries(n_at_share - 1))
    assert not stays_sparse(with_entries(n_at_share))
    assert not stays_sparse(np.zeros((n_rows, n_columns)))


@pytest.mark.parametrize("kind", ["standard", "log1p"])
@pytest.mark.parametrize("value", [-0.1, -1 / 3, -123.456, 0.1, 123.456])
def test_a_constant_feature_is_only_centred_whatever_its_sign(kind, value):
    # A constant column's spread is rounding of its mean's sums: its scale
    # is 1 (as StandardScaler's), for a negative constant as for a positive.
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.rand(3000), np.full(3000, value)])
    scaling = InputScaling.fit(kind, X)
    assert scaling.scale[1] == 1.0
    # And so the ranker's rows: that column standardizes to 0 but for the
    # rounding of its mean (count * eps relative to it, the code's own bound).
    rows = scaling.rows(X, slice(None))
    assert np.abs(rows[:, 1]).max() <= len(X) * np.finfo(np.float64).eps * abs(value)


def test_a_negative_constant_feature_changes_no_score():
    X, y, qid = make_ranking(n_queries=20, n_features=4, n_informative=3, random_state=0)
    with_constant = np.column_stack([X, np.full(len(X), -0.1)])
    ranker = RankNetRanker(hidden_layer_sizes=(4,), max_iter=3, random_state=0, feature_scaling="standard")
    ranker.fit(with_constant, y, groups=qid)
    assert ranker.feature_scale_[-1] == 1.0
    moved = with_constant.copy()
    moved[:, -1] = -0.1 + 1e-15  # a rounding away from the training constant
    np.testing.assert_allclose(ranker.predict(moved), ranker.predict(with_constant), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("feature_scaling", ["piecewise", "standard", "log1p"])
def test_sparse_csr_with_duplicate_entries_is_the_matrix_it_sums_to(feature_scaling):
    X, y, qid = make_ranking(n_queries=15, n_features=10, n_informative=5, random_state=0)
    X[np.random.RandomState(0).rand(*X.shape) < 0.97] = 0.0  # ~3 % stored
    X[::10, 0] = 2.0  # a column with repeated values
    duplicated = csr_with_duplicate_entries(X)
    assert not duplicated.has_canonical_format and stays_sparse(duplicated)
    canonical = sp.csr_matrix(X)
    kwargs = dict(hidden_layer_sizes=(6,), max_iter=5, random_state=0, feature_scaling=feature_scaling)
    reference = LambdaRankRanker(**kwargs).fit(canonical, y, groups=qid)
    from_duplicates = LambdaRankRanker(**kwargs).fit(duplicated, y, groups=qid)
    # 0.25 v + 0.75 v may differ from v by an ulp, amplified a little by
    # training; a model of other inputs differs by far more.
    np.testing.assert_allclose(from_duplicates.predict(canonical), reference.predict(canonical), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(reference.predict(duplicated), reference.predict(canonical), rtol=1e-9, atol=1e-12)
    assert not duplicated.has_canonical_format  # the caller's matrix is left as it was
