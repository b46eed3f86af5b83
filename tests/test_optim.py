import copy
import pickle

import numpy as np
import pytest

from sklearn_ranknet._optim import SGD, Adam


def _problem(seed=0):
    """Least squares ||A w - b||^2 with w split into a matrix and a vector."""
    rng = np.random.RandomState(seed)
    A = rng.normal(size=(40, 6))
    b = rng.normal(size=40)
    w_star = np.linalg.lstsq(A, b, rcond=None)[0]

    def grads(params):
        w = np.concatenate([params[0].ravel(), params[1]])
        g = 2.0 * A.T @ (A @ w - b)
        return [g[:4].reshape(2, 2), g[4:]]

    return A, grads, w_star


def _flat(params):
    return np.concatenate([params[0].ravel(), params[1]])


def _start():
    return [np.zeros((2, 2)), np.zeros(2)]


@pytest.mark.parametrize(
    "make, n_steps",
    [
        (lambda p, L: Adam(p, learning_rate_init=0.01), 1000),
        (lambda p, L: SGD(p, learning_rate_init=0.5 / L, momentum=0.9), 500),
        (lambda p, L: SGD(p, learning_rate_init=0.5 / L, nesterov=False), 500),
        (lambda p, L: SGD(p, learning_rate_init=0.5 / L, momentum=0.0), 5000),
    ],
    ids=["adam", "sgd-nesterov", "sgd-momentum", "sgd-plain"],
)
def test_minimizes_least_squares(make, n_steps):
    A, grads, w_star = _problem()
    L = 2.0 * np.linalg.eigvalsh(A.T @ A).max()  # Lipschitz constant of grad
    params = _start()
    ids = [id(p) for p in params]
    opt = make(params, L)
    for _ in range(n_steps):
        opt.update(grads(params))
    assert [id(p) for p in params] == ids  # updated in place
    np.testing.assert_allclose(_flat(params), w_star, rtol=0, atol=1e-8)


def test_adam_first_step_is_learning_rate_per_coordinate():
    rng = np.random.RandomState(0)
    params = [rng.normal(size=(3, 4)), rng.normal(size=4)]
    before = [p.copy() for p in params]
    # gradients spanning many orders of magnitude, both signs
    grads = [
        rng.choice([-1, 1], size=(3, 4)) * 10.0 ** rng.uniform(-3, 3, (3, 4)),
        np.array([1e-2, -5.0, 300.0, -1e-3]),
    ]
    opt = Adam(params, learning_rate_init=0.01)
    opt.update(grads)
    assert opt.t == 1
    for p, p0, g in zip(params, before, grads):
        step = p - p0
        np.testing.assert_allclose(np.abs(step), 0.01, rtol=1e-4)
        np.testing.assert_array_equal(np.sign(step), -np.sign(g))


def test_adam_zero_gradient_does_not_move():
    params = [np.ones(3)]
    opt = Adam(params, learning_rate_init=0.1)
    opt.update([np.array([0.0, 1.0, 0.0])])
    np.testing.assert_array_equal(params[0][[0, 2]], 1.0)
    assert params[0][1] < 1.0


def test_sgd_steps_by_hand():
    g1, g2 = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    lr, mu = 0.1, 0.9

    plain = [np.zeros(2)]
    opt = SGD(plain, learning_rate_init=lr, momentum=0.0)
    opt.update([g1])
    np.testing.assert_allclose(plain[0], -lr * g1)

    classical = [np.zeros(2)]
    opt = SGD(classical, learning_rate_init=lr, momentum=mu, nesterov=False)
    opt.update([g1])
    opt.update([g2])
    v1 = -lr * g1
    v2 = mu * v1 - lr * g2
    np.testing.assert_allclose(classical[0], v1 + v2)

    nesterov = [np.zeros(2)]
    opt = SGD(nesterov, learning_rate_init=lr, momentum=mu, nesterov=True)
    opt.update([g1])
    opt.update([g2])
    expected = (mu * v1 - lr * g1) + (mu * v2 - lr * g2)
    np.testing.assert_allclose(nesterov[0], expected)
    assert not np.allclose(nesterov[0], classical[0])


def test_learning_rate_attribute_is_used():
    params = [np.zeros(2)]
    opt = SGD(params, learning_rate_init=0.1, momentum=0.0)
    assert opt.learning_rate == 0.1
    opt.learning_rate = 0.01
    opt.update([np.ones(2)])
    np.testing.assert_allclose(params[0], -0.01)


@pytest.mark.parametrize(
    "make",
    [
        lambda p: Adam(p, learning_rate_init=0.05),
        lambda p: SGD(p, learning_rate_init=1e-3, momentum=0.9),
    ],
    ids=["adam", "sgd"],
)
@pytest.mark.parametrize("copier", ["pickle", "deepcopy"])
def test_pickle_mid_run_continues_identically(make, copier):
    _, grads, _ = _problem()
    params = _start()
    opt = make(params)
    for _ in range(15):
        opt.update(grads(params))

    if copier == "pickle":
        params2, opt2 = pickle.loads(pickle.dumps((params, opt)))
    else:
        params2, opt2 = copy.deepcopy((params, opt))
    assert all(a is b for a, b in zip(opt2.params, params2))  # identity kept
    assert all(a is not b for a, b in zip(params2, params))

    for _ in range(15):
        opt.update(grads(params))
        opt2.update(grads(params2))
        for a, b in zip(params, params2):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(_flat(params), np.zeros(6))


def test_gradient_mismatch_raises():
    opt = Adam([np.zeros((2, 3)), np.zeros(3)])
    with pytest.raises(ValueError, match="gradients"):
        opt.update([np.zeros((2, 3))])
    with pytest.raises(ValueError, match="shape"):
        opt.update([np.zeros((2, 3)), np.zeros((3, 1))])
    assert opt.t == 0  # a rejected update leaves the state untouched


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_adam_compiled_update_follows_the_textbook_steps(dtype, rtol):
    """The compiled pass (bias corrections folded into factors, float64
    arithmetic) against Algorithm 1 written out in numpy, over 30 steps of
    gradients spanning six orders of magnitude. float32 rounds each stored
    moment once per step, so it drifts by a few ulps a step at most."""
    rng = np.random.RandomState(0)
    shapes = [(7, 5), (5,), (5, 1), (1,)]
    params = [rng.normal(size=s).astype(dtype) for s in shapes]
    expected = [p.astype(np.float64) for p in params]
    ms = [np.zeros(s) for s in shapes]
    vs = [np.zeros(s) for s in shapes]
    opt = Adam(params, learning_rate_init=0.01)
    for t in range(1, 31):
        grads = [(rng.normal(size=s) * 10.0 ** rng.uniform(-3, 3, s)).astype(dtype) for s in shapes]
        opt.update(grads)
        for p, m, v, g in zip(expected, ms, vs, grads):
            m[...] = 0.9 * m + 0.1 * g
            v[...] = 0.999 * v + 0.001 * g.astype(np.float64) ** 2
            p -= 0.01 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    assert opt.t == 30
    for p, e in zip(params, expected):
        assert p.dtype == dtype
        np.testing.assert_allclose(p, e, rtol=rtol, atol=0)


def test_adam_arrays_the_kernel_cannot_take_use_the_numpy_steps():
    """A strided parameter (a transposed view) is updated in place all the
    same, by the numpy steps, to the kernel's result up to rounding."""
    rng = np.random.RandomState(1)
    base = rng.normal(size=(4, 3))
    strided = [base.copy().T]  # F-ordered view of its own buffer
    contiguous = [np.ascontiguousarray(base.T)]
    grads = [rng.normal(size=(3, 4)) for _ in range(5)]
    slow, fast = Adam(strided, 0.01), Adam(contiguous, 0.01)
    for g in grads:
        slow.update([g])
        fast.update([g])
    assert not strided[0].flags.c_contiguous
    np.testing.assert_allclose(strided[0], contiguous[0], rtol=1e-12)
    assert not np.allclose(strided[0], base.T)
