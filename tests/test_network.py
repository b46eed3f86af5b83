import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from sklearn_ranknet._network import (
    ACTIVATIONS,
    add_l2,
    backward,
    forward,
    init_params,
    l2_penalty,
    layer_sizes,
    pack,
    predict_scores,
    unpack,
)

ACTS = ["identity", "logistic", "tanh", "relu"]
HIDDEN = [(), (7,), (5, 3)]
N_FEATURES = 4


def _data(n_samples, sparse, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, N_FEATURES))
    if sparse:
        X[rng.uniform(size=X.shape) < 0.5] = 0.0
        return sp.csr_matrix(X)
    return X


def _params(hidden, activation, seed=0, scale=1.0):
    coefs, intercepts = init_params(
        N_FEATURES, hidden, activation, np.random.RandomState(seed)
    )
    # Scale up so the activations leave their linear regime.
    return [scale * c for c in coefs], [scale * b for b in intercepts]


def _numerical_grad(loss, coefs, intercepts, eps=1e-6):
    """Central differences of loss(coefs, intercepts) for every entry."""
    grads = [np.zeros_like(p) for p in coefs + intercepts]
    for p, grad in zip(coefs + intercepts, grads):
        for idx in np.ndindex(p.shape):
            orig = p[idx]
            p[idx] = orig + eps
            plus = loss(coefs, intercepts)
            p[idx] = orig - eps
            minus = loss(coefs, intercepts)
            p[idx] = orig
            grad[idx] = (plus - minus) / (2 * eps)
    n = len(coefs)
    return grads[:n], grads[n:]


def _assert_grads_close(analytic, numeric):
    for a, n in zip(itertools.chain(*analytic), itertools.chain(*numeric)):
        assert a.shape == n.shape
        np.testing.assert_allclose(a, n, rtol=1e-6, atol=1e-8)


def test_activations_names():
    assert set(ACTIVATIONS) == {"identity", "logistic", "tanh", "relu"}


@pytest.mark.parametrize("n_samples", [1, 20])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("hidden", HIDDEN, ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_gradient_linear_upstream_with_l2(activation, hidden, sparse, n_samples):
    X = _data(n_samples, sparse)
    coefs, intercepts = _params(hidden, activation, scale=2.0)
    g = np.random.RandomState(1).normal(size=n_samples)
    alpha = 0.3

    def loss(coefs, intercepts):
        s = predict_scores(X, coefs, intercepts, activation)
        return g @ s + l2_penalty(coefs, alpha)

    scores, cache = forward(X, coefs, intercepts, activation)
    coef_grads, intercept_grads = backward(cache, g, coefs, activation)
    add_l2(coef_grads, coefs, alpha)
    numeric = _numerical_grad(loss, coefs, intercepts)
    _assert_grads_close((coef_grads, intercept_grads), numeric)
    for grad, p in zip(coef_grads + intercept_grads, coefs + intercepts):
        assert grad.shape == p.shape and grad.dtype == np.float64


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("hidden", HIDDEN, ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_gradient_nonlinear_upstream(activation, hidden, sparse):
    n_samples = 15
    X = _data(n_samples, sparse, seed=3)
    coefs, intercepts = _params(hidden, activation, seed=4, scale=1.5)
    t = np.random.RandomState(5).normal(size=n_samples)

    def loss(coefs, intercepts):
        s = predict_scores(X, coefs, intercepts, activation)
        return np.logaddexp(0.0, s - t).sum()

    scores, cache = forward(X, coefs, intercepts, activation)
    grads = backward(cache, expit(scores - t), coefs, activation)
    _assert_grads_close(grads, _numerical_grad(loss, coefs, intercepts))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("hidden", HIDDEN[1:], ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_gradient_with_dropout(activation, hidden, sparse):
    """With the masks held fixed (the same generator state for every call),
    dropout is a fixed linear map between layers: backward must be the
    derivative of the forward pass that drew them."""
    n_samples, rate = 15, 0.4
    X = _data(n_samples, sparse, seed=6)
    coefs, intercepts = _params(hidden, activation, seed=7, scale=1.5)
    t = np.random.RandomState(8).normal(size=n_samples)

    def dropped_forward(coefs, intercepts):
        generator = np.random.default_rng(9)
        return forward(X, coefs, intercepts, activation, dropout=rate, random_state=generator)

    def loss(coefs, intercepts):
        return np.logaddexp(0.0, dropped_forward(coefs, intercepts)[0] - t).sum()

    scores, cache = dropped_forward(coefs, intercepts)
    grads = backward(cache, expit(scores - t), coefs, activation)
    _assert_grads_close(grads, _numerical_grad(loss, coefs, intercepts))
    # Some units were dropped, some kept, and the kept ones were rescaled.
    kept = np.concatenate([k.ravel() for k in cache.kept[1:]])
    assert 0 < kept.mean() < 1
    for i in range(1, len(coefs)):
        np.testing.assert_allclose(
            cache.inputs[i], cache.activations[i] * cache.kept[i] / (1 - rate), rtol=1e-15
        )


def test_dropout_keeps_the_expected_output():
    """Inverted dropout: averaged over many masks, a hidden layer's output is
    the output without dropout, so predict needs no rescaling."""
    X = _data(200, False, seed=1)
    coefs, intercepts = _params((50,), "relu", seed=2)
    generator = np.random.default_rng(3)
    plain = forward(X, coefs, intercepts, "relu")[1].inputs[1]
    draws = [
        forward(X, coefs, intercepts, "relu", dropout=0.3, random_state=generator)[1].inputs[1]
        for _ in range(400)
    ]
    # Each unit's mean over 400 Bernoulli(0.7) masks / 0.7: standard error
    # sqrt(0.3 / (0.7 * 400)) ~ 3.3 % of the value; the mean over all units
    # and rows averages that away.
    ratio = np.mean(draws, axis=0).sum() / plain.sum()
    assert abs(ratio - 1) < 0.01


def test_l2_penalty_and_gradient():
    coefs, _ = _params((5, 3), "tanh")
    grads = [np.ones_like(c) for c in coefs]
    out = add_l2(grads, coefs, 0.5)
    assert out is grads
    for grad, W in zip(grads, coefs):
        np.testing.assert_allclose(grad, 1.0 + 0.5 * W, rtol=1e-15)
    expected = 0.25 * sum((W**2).sum() for W in coefs)
    np.testing.assert_allclose(l2_penalty(coefs, 0.5), expected, rtol=1e-14)
    assert l2_penalty(coefs, 0.0) == 0.0
    untouched = [np.ones_like(c) for c in coefs]
    add_l2(untouched, coefs, 0.0)
    assert all((g == 1.0).all() for g in untouched)


@pytest.mark.parametrize("hidden", HIDDEN, ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_backward_does_not_mutate_cache(activation, hidden):
    X = _data(10, False)
    coefs, intercepts = _params(hidden, activation, scale=2.0)
    g = np.random.RandomState(2).normal(size=10)
    _, cache = forward(X, coefs, intercepts, activation)
    saved = [c.copy() for c in cache.inputs]
    g_saved = g.copy()
    first = backward(cache, g, coefs, activation)
    second = backward(cache, g, coefs, activation)
    for a, b in zip(cache.inputs, saved):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(g, g_saved)
    for a, b in zip(itertools.chain(*first), itertools.chain(*second)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_samples", [1, 20])
@pytest.mark.parametrize("hidden", HIDDEN, ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_forward_predict_dense_sparse_agree(activation, hidden, n_samples):
    X = _data(n_samples, sparse=True).toarray()
    coefs, intercepts = _params(hidden, activation, scale=2.0)
    scores, cache = forward(X, coefs, intercepts, activation)
    assert scores.shape == (n_samples,) and scores.dtype == np.float64
    assert len(cache) == len(coefs)
    np.testing.assert_array_equal(
        predict_scores(X, coefs, intercepts, activation), scores
    )
    for X_sparse in (sp.csr_matrix(X), sp.csr_array(X)):
        np.testing.assert_allclose(
            predict_scores(X_sparse, coefs, intercepts, activation),
            scores,
            rtol=1e-12,
            atol=1e-12,
        )
        sparse_scores, _ = forward(X_sparse, coefs, intercepts, activation)
        np.testing.assert_array_equal(
            sparse_scores, predict_scores(X_sparse, coefs, intercepts, activation)
        )


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_linear_case(sparse):
    X = _data(30, sparse)
    coefs, intercepts = _params((), "relu")  # activation unused when linear
    assert [c.shape for c in coefs] == [(N_FEATURES, 1)]
    X_dense = X.toarray() if sparse else X
    expected = X_dense @ coefs[0][:, 0] + intercepts[0][0]
    for activation in ACTS:
        np.testing.assert_allclose(
            predict_scores(X, coefs, intercepts, activation),
            expected,
            rtol=1e-13,
            atol=1e-13,
        )
    # Gradient of sum_i g_i s_i for a linear model is (X^T g, sum g).
    g = np.random.RandomState(0).normal(size=30)
    _, cache = forward(X, coefs, intercepts, "tanh")
    (cg,), (ig,) = backward(cache, g, coefs, "tanh")
    np.testing.assert_allclose(cg[:, 0], X_dense.T @ g, rtol=1e-12)
    np.testing.assert_allclose(ig, [g.sum()], rtol=1e-12)


def test_hidden_activation_is_applied():
    # Same weights, different activations -> different scores, output identity.
    X = _data(20, False)
    coefs, intercepts = _params((7,), "tanh", scale=2.0)
    scores = {a: predict_scores(X, coefs, intercepts, a) for a in ACTS}
    for a, b in itertools.combinations(ACTS, 2):
        assert not np.allclose(scores[a], scores[b])
    hidden = np.tanh(X @ coefs[0] + intercepts[0])
    np.testing.assert_allclose(
        scores["tanh"], hidden @ coefs[1][:, 0] + intercepts[1][0], rtol=1e-12
    )


@pytest.mark.parametrize("hidden", [(), (7,), (5, 3), (1, 1, 1), (100,)], ids=str)
def test_init_params_shapes(hidden):
    coefs, intercepts = init_params(6, hidden, "relu", np.random.RandomState(0))
    sizes = [6, *hidden, 1]
    assert layer_sizes(6, hidden) == sizes
    assert [c.shape for c in coefs] == list(zip(sizes[:-1], sizes[1:]))
    assert [b.shape for b in intercepts] == [(s,) for s in sizes[1:]]
    assert all(p.dtype == np.float64 for p in coefs + intercepts)


@pytest.mark.parametrize("activation", ACTS)
def test_init_params_deterministic_and_bounded(activation):
    def draw(seed):
        return init_params(50, (40, 30), activation, np.random.RandomState(seed))

    (c1, b1), (c2, b2), (c3, _) = draw(0), draw(0), draw(1)
    for x, y in zip(c1 + b1, c2 + b2):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(c1[0], c3[0])
    factor = 2.0 if activation == "logistic" else 6.0
    for W, b in zip(c1, b1):
        bound = np.sqrt(factor / (W.shape[0] + W.shape[1]))
        assert np.abs(W).max() <= bound and np.abs(b).max() <= bound
        if W.size > 20:  # the bound is nearly reached, not just respected
            assert np.abs(W).max() > 0.9 * bound
            assert W.min() < 0 < W.max()


def test_init_params_matches_mlp_regressor_draw_order():
    # Weights then intercepts, layer by layer, from one RandomState.
    rs = np.random.RandomState(42)
    coefs, intercepts = init_params(3, (4,), "tanh", np.random.RandomState(42))
    for W, b in zip(coefs, intercepts):
        fan_in, fan_out = W.shape
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        np.testing.assert_array_equal(W, rs.uniform(-bound, bound, (fan_in, fan_out)))
        np.testing.assert_array_equal(b, rs.uniform(-bound, bound, fan_out))


def test_invalid_arguments():
    X = _data(3, False)
    coefs, intercepts = _params((2,), "relu")
    with pytest.raises(ValueError, match="activation"):
        predict_scores(X, coefs, intercepts, "softmax")
    with pytest.raises(ValueError, match="activation"):
        init_params(3, (2,), "sigmoid", np.random.RandomState(0))
    with pytest.raises(ValueError, match="positive"):
        init_params(3, (2, 0), "relu", np.random.RandomState(0))
    with pytest.raises(ValueError, match="shape"):
        unpack(np.zeros(5), layer_sizes(3, (2,)))


@pytest.mark.parametrize("hidden", HIDDEN, ids=str)
def test_pack_unpack_round_trip(hidden):
    coefs, intercepts = _params(hidden, "tanh")
    vector = pack(coefs, intercepts)
    n_params = sum(p.size for p in coefs + intercepts)
    assert vector.shape == (n_params,) and vector.dtype == np.float64
    c, b = unpack(vector, layer_sizes(N_FEATURES, hidden))
    for x, y in zip(c + b, coefs + intercepts):
        assert x.shape == y.shape
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(pack(c, b), vector)
    # coefs come first, in C order, then intercepts
    np.testing.assert_array_equal(vector[: coefs[0].size], coefs[0].ravel())
    np.testing.assert_array_equal(vector[-1:], intercepts[-1])


@settings(max_examples=50, deadline=None)
@given(
    n_features=st.integers(1, 6),
    hidden=st.lists(st.integers(1, 5), max_size=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_pack_unpack_round_trip_property(n_features, hidden, seed):
    rng = np.random.RandomState(seed)
    sizes = layer_sizes(n_features, hidden)
    vector = rng.normal(size=sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:])))
    coefs, intercepts = unpack(vector, sizes)
    assert [c.shape for c in coefs] == list(zip(sizes[:-1], sizes[1:]))
    np.testing.assert_array_equal(pack(coefs, intercepts), vector)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("hidden", [(), (7,), (5, 3)], ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_large_inputs_stay_finite(activation, hidden, sparse):
    rng = np.random.RandomState(0)
    X = 1e6 * rng.normal(size=(25, N_FEATURES))
    X[0] = 1e6  # every activation pushed far into saturation at least once
    X[1] = -1e6
    if sparse:
        X = sp.csr_matrix(X)
    coefs, intercepts = _params(hidden, activation, scale=3.0)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        scores, cache = forward(X, coefs, intercepts, activation)
        g = expit(scores - scores.mean())
        grads = backward(cache, g, coefs, activation)
        add_l2(grads[0], coefs, 1e-3)
    assert np.isfinite(scores).all()
    np.testing.assert_array_equal(
        scores, predict_scores(X, coefs, intercepts, activation)
    )
    for grad in itertools.chain(*grads):
        assert np.isfinite(grad).all()


def _textbook_forward_backward(X, coefs, intercepts, activation, upstream):
    """Scores and gradients layer by layer in plain numpy (float64), the
    definitions the fused kernels of the last hidden layer must match."""
    derivative = {
        "identity": lambda A: np.ones_like(A),
        "logistic": lambda A: A * (1 - A),
        "tanh": lambda A: 1 - A**2,
        "relu": lambda A: (A > 0).astype(float),
    }[activation]
    inputs = [X]
    for W, b in zip(coefs[:-1], intercepts[:-1]):
        Z = inputs[-1] @ W + b
        inputs.append({"identity": Z, "logistic": expit(Z), "tanh": np.tanh(Z), "relu": np.maximum(Z, 0)}[activation])
    scores = inputs[-1] @ coefs[-1][:, 0] + intercepts[-1][0]
    delta = upstream[:, None]
    coef_grads, intercept_grads = [None] * len(coefs), [None] * len(coefs)
    for i in range(len(coefs) - 1, -1, -1):
        coef_grads[i] = inputs[i].T @ delta
        intercept_grads[i] = delta.sum(axis=0)
        if i > 0:
            delta = (delta @ coefs[i].T) * derivative(inputs[i])
    return scores, coef_grads, intercept_grads


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("hidden", HIDDEN[1:], ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_fused_last_hidden_layer_matches_the_textbook_passes(activation, hidden, dtype):
    """forward, predict_scores and backward run the last hidden layer and
    the output in fused Numba passes; they equal the layer-by-layer
    definitions up to the rounding of the dtype (sums of at most ~10 terms
    of size ~1, so a few ulps: 1e-12 in float64, 1e-5 in float32)."""
    X = _data(30, sparse=False, seed=3)
    coefs, intercepts = _params(hidden, activation, seed=4, scale=2.0)
    upstream = np.random.RandomState(5).normal(size=30)
    scores, coef_grads, intercept_grads = _textbook_forward_backward(X, coefs, intercepts, activation, upstream)
    cast = [[p.astype(dtype) for p in ps] for ps in (coefs, intercepts)]
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)
    got, cache = forward(X.astype(dtype), *cast, activation)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, scores, **tol)
    np.testing.assert_array_equal(predict_scores(X.astype(dtype), *cast, activation), got)
    got_coefs, got_intercepts = backward(cache, upstream, cast[0], activation)
    for got_grad, grad in zip(got_coefs + got_intercepts, coef_grads + intercept_grads):
        assert got_grad.dtype == dtype and got_grad.shape == grad.shape
        np.testing.assert_allclose(got_grad, grad, **tol)


@pytest.mark.parametrize("hidden", HIDDEN[1:], ids=str)
@pytest.mark.parametrize("activation", ACTS)
def test_non_finite_inputs_give_non_finite_scores(activation, hidden):
    """A row whose pre-activations are NaN (infinite inputs meeting weights
    of both signs) scores NaN, as the layer-by-layer definition
    (np.maximum for relu) does: the fused last layer must not turn NaN into
    a finite score, which would rank the row silently. Finite rows are
    unaffected."""
    X = _data(6, sparse=False, seed=3)
    X[2] = np.inf
    X[4] = -np.inf
    coefs, intercepts = _params(hidden, activation, seed=4, scale=2.0)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = _textbook_forward_backward(X, coefs, intercepts, activation, np.zeros(6))[0]
        got = predict_scores(X, coefs, intercepts, activation)
        forward_scores = forward(X, coefs, intercepts, activation)[0]
    assert not np.isfinite(expected[[2, 4]]).any()  # the definition's own verdict
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected))
    np.testing.assert_array_equal(forward_scores, got)
    np.testing.assert_allclose(got[[0, 1, 3, 5]], expected[[0, 1, 3, 5]], rtol=1e-12, atol=1e-12)
