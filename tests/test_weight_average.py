"""Weight averaging (``ema_momentum``): the model is the moving average of
the weights the optimizer trains, and the training itself is unchanged."""

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet import _training
from sklearn_ranknet._resolve import EMA_MOMENTUM as AUTO_EMA_MOMENTUM
from sklearn_ranknet._resolve import LAMBDARANK, RANKNET, DataShape, resolve
from sklearn_ranknet._optim import WeightAverage
from sklearn_ranknet.datasets import make_ranking

RANKERS = [RankNetRanker, LambdaRankRanker, ListNetRanker]


def _reference_average(steps, momentum):
    """sum_s m**(t-s) (1 - m) p_s / (1 - m**t), written from the definition."""
    t = len(steps)
    weights = [(1 - momentum) * momentum ** (t - 1 - s) for s in range(t)]
    total = 1 - momentum**t
    return [sum(w * step[j] for w, step in zip(weights, steps)) / total for j in range(len(steps[0]))]


@settings(max_examples=50, deadline=None)
@given(momentum=st.floats(0.01, 0.999), n_steps=st.integers(1, 40), seed=st.integers(0, 2**31))
def test_average_is_the_bias_corrected_moving_average(momentum, n_steps, seed):
    rng = np.random.default_rng(seed)
    steps = [[rng.normal(size=(3, 2)), rng.normal(size=2)] for _ in range(n_steps)]
    averaging = WeightAverage(steps[0], momentum)
    for step in steps:
        averaging.update(step)
    expected = _reference_average(steps, momentum)
    # Each update rounds once per operation: about 3 t ulps of the largest
    # value, amplified by the 1 / (1 - m**t) correction.
    scale = max(np.abs(s).max() for step in steps for s in step)
    tolerance = 8 * n_steps * np.finfo(np.float64).eps * scale / (1 - momentum**n_steps)
    for got, want in zip(averaging.average(), expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)


def test_first_average_is_the_first_weights():
    p = [np.array([[1.0, -2.0]]), np.array([3.0])]
    averaging = WeightAverage(p, 0.99)
    averaging.update(p)
    for got, want in zip(averaging.average(), p):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def _record_steps(monkeypatch):
    """Copies of the trained weights after every optimizer step."""
    steps = []
    step = _training._step

    def recording(model, state, *args):
        step(model, state, *args)
        steps.append([p.copy() for p in state.optimizer.params])

    monkeypatch.setattr(_training, "_step", recording)
    return steps


def _fit(Ranker, X, y, qid, **params):
    # float64: the reference average below is float64 arithmetic (1e-9).
    params = {"early_stopping": False, "precision": "float64", **params}
    ranker = Ranker(hidden_layer_sizes=(4,), max_iter=3, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter=3 on purpose
        return ranker.fit(X, y, groups=qid)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_fit_returns_the_average_of_the_trained_steps(Ranker, monkeypatch):
    X, y, qid = make_ranking(40, n_features=5, n_informative=3, random_state=0)
    steps = _record_steps(monkeypatch)
    ranker = _fit(Ranker, X, y, qid, ema_momentum=0.9)
    expected = _reference_average(steps, 0.9)
    for got, want in zip(ranker.coefs_ + ranker.intercepts_, expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert ranker.n_iter_ == 3 and len(steps) > 3


@pytest.mark.parametrize("Ranker", RANKERS)
def test_averaging_does_not_change_the_training(Ranker):
    """The optimizer trains the same weights, bit for bit: averaging only
    changes which weights the model keeps."""
    X, y, qid = make_ranking(40, n_features=5, n_informative=3, random_state=1)
    plain = _fit(Ranker, X, y, qid, ema_momentum=0.0)
    averaged = _fit(Ranker, X, y, qid, ema_momentum=0.9)
    trained = averaged._fit_state.weight_average.trained
    for got, want in zip(trained, plain.coefs_ + plain.intercepts_):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(averaged.coefs_[0], plain.coefs_[0])


def test_partial_fit_carries_the_average_on(monkeypatch):
    X, y, qid = make_ranking(40, n_features=5, n_informative=3, random_state=2)
    params = dict(hidden_layer_sizes=(4,), random_state=0, precision="float64")
    plain = RankNetRanker(ema_momentum=0.0, **params)
    averaged = RankNetRanker(ema_momentum=0.8, **params)
    steps = _record_steps(monkeypatch)
    for _ in range(2):
        plain.partial_fit(X, y, groups=qid)
    plain_steps, steps[:] = list(steps), []
    for _ in range(2):
        averaged.partial_fit(X, y, groups=qid)
    # Training went on from the trained weights, not from the average...
    for got, want in zip(steps, plain_steps):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    # ... and the model is the average over both calls' steps.
    for got, want in zip(averaged.coefs_ + averaged.intercepts_, _reference_average(steps, 0.8)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_averaging_switched_off_between_partial_fits_resumes_the_trained_weights():
    X, y, qid = make_ranking(30, n_features=4, n_informative=2, random_state=3)
    ranker = RankNetRanker(hidden_layer_sizes=(3,), ema_momentum=0.8, random_state=0)
    ranker.partial_fit(X, y, groups=qid)
    trained = [w.copy() for w in ranker._fit_state.weight_average.trained]
    ranker.set_params(ema_momentum=0.0)
    optimizer = ranker._fit_state.optimizer
    steps = []
    original = optimizer.update

    def update(grads):
        steps.append([p.copy() for p in optimizer.params])  # the weights before the step
        original(grads)

    optimizer.update = update
    ranker.partial_fit(X, y, groups=qid)
    for got, want in zip(steps[0], trained):
        np.testing.assert_array_equal(got, want)
    assert ranker._fit_state.weight_average is None


def test_early_stopping_keeps_the_best_average(monkeypatch):
    """Epochs are scored on the average, and the average of the best epoch
    is the model: scoring it on the held-out queries gives the best score."""
    held_out = {}
    split = _training.split_validation

    def capture(*args):
        train, val = split(*args)
        held_out["val"] = val
        return train, val

    monkeypatch.setattr(_training, "split_validation", capture)
    X, y, qid = make_ranking(60, n_features=5, n_informative=3, random_state=4)
    ranker = LambdaRankRanker(hidden_layer_sizes=(4,), ema_momentum=0.95, early_stopping=True,
                              n_iter_no_change=2, max_iter=50, random_state=0).fit(X, y, groups=qid)
    assert ranker.best_validation_score_ == max(ranker.validation_scores_)
    score = _training.validation_score(ranker._model, ranker._fit_state, held_out["val"], "exponential")
    assert score == ranker.best_validation_score_


def test_partial_fit_after_early_stopping_goes_on_from_the_model_returned():
    """Early stopping returns an earlier epoch's average; a partial_fit
    after it starts from that model, not from the average (and trained
    weights) of the last epoch, which early stopping passed over. With a
    step of 1e-12 the weights cannot move by more than ~1e-10 in one
    epoch (Adam moves each by about the step per update), so the model
    stays the returned one to that precision."""
    X, y, qid = make_ranking(80, n_features=6, n_informative=4, max_docs=15, random_state=3)
    ranker = RankNetRanker(hidden_layer_sizes=(4,), ema_momentum=0.9, early_stopping=True,
                           validation_fraction=0.2, n_iter_no_change=3, max_iter=40, learning_rate_init=0.01,
                           input_noise=0.0, random_state=0).fit(X, y, groups=qid)
    assert int(np.argmax(ranker.validation_scores_)) + 1 < ranker.n_iter_  # an earlier epoch was kept
    returned = [p.copy() for p in ranker.coefs_ + ranker.intercepts_]
    ranker.set_params(learning_rate_init=1e-12).partial_fit(X, y, groups=qid)
    for now, then in zip(ranker.coefs_ + ranker.intercepts_, returned):
        np.testing.assert_allclose(now, then, rtol=0, atol=1e-9)


def test_lbfgs_ignores_averaging():
    X, y, qid = make_ranking(30, n_features=4, n_informative=2, random_state=5)
    params = dict(hidden_layer_sizes=(3,), solver="lbfgs", max_iter=15, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = RankNetRanker(**params).fit(X, y, groups=qid)
        averaged = RankNetRanker(ema_momentum=0.9, **params).fit(X, y, groups=qid)
    for got, want in zip(averaged.coefs_, plain.coefs_):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("value", [-0.1, 1.0, 1.5])
def test_ema_momentum_out_of_range_is_refused(value):
    X, y, qid = make_ranking(10, n_features=3, n_informative=2, random_state=0)
    with pytest.raises(ValueError, match="ema_momentum"):
        RankNetRanker(ema_momentum=value).fit(X, y, groups=qid)


def test_float32_model_stays_float32():
    X, y, qid = make_ranking(30, n_features=4, n_informative=2, random_state=6)
    ranker = _fit(ListNetRanker, X.astype(np.float32), y, qid, ema_momentum=0.9)
    assert all(w.dtype == np.float32 for w in ranker.coefs_ + ranker.intercepts_)
    assert ranker.predict(X.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("Ranker", RANKERS)
@pytest.mark.parametrize("early_stopping, resolved", [(False, AUTO_EMA_MOMENTUM), (True, 0.0)])
def test_auto_averages_only_without_a_validation_set(Ranker, early_stopping, resolved):
    """ "auto" is AUTO_EMA_MOMENTUM when the fit holds out no validation set
    and 0 when it does: the same weights as that value given explicitly."""
    X, y, qid = make_ranking(40, n_features=5, n_informative=3, random_state=4)
    auto = _fit(Ranker, X, y, qid, early_stopping=early_stopping)
    explicit = _fit(Ranker, X, y, qid, early_stopping=early_stopping, ema_momentum=resolved)
    other = _fit(Ranker, X, y, qid, early_stopping=early_stopping, ema_momentum=0.5)
    for got, want in zip(auto.coefs_ + auto.intercepts_, explicit.coefs_ + explicit.intercepts_):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(auto.coefs_[0], other.coefs_[0])
    assert (auto._fit_state.weight_average is not None) == (not early_stopping)
    assert auto.ema_momentum_ == resolved


def test_auto_resolves_by_size_as_early_stopping_does():
    """Under early_stopping="auto", "auto" averages on small data only (below
    10,000 rows, or 300 queries for LambdaRank and ListNet)."""
    params = RankNetRanker(input_noise=0.0).get_params()

    def ema(n_rows, n_queries=1_000, incremental=False, **changed):
        shape = DataShape(n_rows, n_queries)
        return resolve({**params, **changed}, RANKNET, shape, incremental=incremental).ema_momentum

    assert ema(9_999) == AUTO_EMA_MOMENTUM
    assert ema(10_000) == 0.0
    assert ema(10_000, n_queries=299) == 0.0  # RankNet's rules count rows only
    lambdarank = LambdaRankRanker(input_noise=0.0).get_params()
    for n_queries, expected in ((299, AUTO_EMA_MOMENTUM), (300, 0.0)):
        rows = SimpleNamespace(scaled_within_queries=False)  # what the small-data rules read
        shape = DataShape(10_000, n_queries, rows, missing_share=0.0)  # and "auto" alpha
        assert resolve(lambdarank, LAMBDARANK, shape).ema_momentum == expected
    assert ema(10_000, incremental=True) == AUTO_EMA_MOMENTUM  # partial_fit
    assert ema(10_000, ema_momentum=0.3) == 0.3


def test_partial_fit_averages_under_auto(monkeypatch):
    """partial_fit holds out no validation set: "auto" averages its steps
    with AUTO_EMA_MOMENTUM, carried over the calls."""
    X, y, qid = make_ranking(40, n_features=5, n_informative=3, random_state=5)
    ranker = RankNetRanker(hidden_layer_sizes=(4,), random_state=0, precision="float64")
    steps = _record_steps(monkeypatch)
    for _ in range(2):
        ranker.partial_fit(X, y, groups=qid)
    expected = _reference_average(steps, AUTO_EMA_MOMENTUM)
    for got, want in zip(ranker.coefs_ + ranker.intercepts_, expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert not np.array_equal(ranker.coefs_[0], steps[-1][0])
