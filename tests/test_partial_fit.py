"""partial_fit and warm_start: training on in chunks of whole queries or from
the previous weights, and the settings a continued fit takes or refuses."""

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import LambdaRankRanker, RankNetRanker

from ._data import FAST, RANKERS, _initial_params, _small, _train_test

# Most fits here use few epochs on purpose; the convergence warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.mark.parametrize("cls", RANKERS)
def test_partial_fit_on_chunks_of_whole_queries(cls):
    X, y, qid, _, _, _ = _train_test()
    chunks = np.array_split(np.unique(qid), 4)
    ranker = cls(hidden_layer_sizes=(8,), learning_rate_init=0.01, max_iter=1000, random_state=0, **FAST)
    n_calls = 0
    first_score = None
    for _ in range(6):
        for chunk in chunks:
            rows = np.isin(qid, chunk)
            assert ranker.partial_fit(X[rows], y[rows], groups=qid[rows]) is ranker
            n_calls += 1
            assert len(ranker.loss_curve_) == ranker.n_iter_ == n_calls  # max_iter ignored
            if first_score is None:
                first_score = ranker.score(X, y, groups=qid)
    assert ranker.score(X, y, groups=qid) > first_score + 0.03
    with pytest.raises(ValueError, match="features"):
        ranker.partial_fit(X[:, :3], y, groups=qid)


def test_convergence_warning_only_when_max_iter_runs_out():
    X, y, qid = _small(10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ranker = LambdaRankRanker(max_iter=2, random_state=0, **FAST)
        with pytest.warns(ConvergenceWarning, match=r"Maximum iterations \(2\)"):
            ranker.fit(X, y, groups=qid)
        with pytest.warns(ConvergenceWarning, match="max_iter=2"):
            RankNetRanker(solver="lbfgs", max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
        ranker.partial_fit(X, y, groups=qid)  # one pass by design: no warning
        # Stopping on the training loss: a huge tol means no epoch improves.
        stopped = RankNetRanker(tol=1e9, n_iter_no_change=2, max_iter=50, random_state=0, **FAST)
        assert stopped.fit(X, y, groups=qid).n_iter_ == 4  # epoch 1 sets the best, 2..4 do not improve


def test_partial_fit_is_not_offered_with_lbfgs():
    assert not hasattr(RankNetRanker(solver="lbfgs"), "partial_fit")
    assert hasattr(RankNetRanker(solver="adam"), "partial_fit")
    assert hasattr(RankNetRanker(solver="sgd"), "partial_fit")
    assert hasattr(LambdaRankRanker(), "partial_fit")
    with pytest.raises(AttributeError, match="has no attribute 'partial_fit'") as info:
        RankNetRanker(solver="lbfgs").partial_fit
    # The reason is only in the chained exception (sklearn's available_if).
    assert "lbfgs" in str(info.value.__cause__)


@pytest.mark.parametrize(
    "cls, solver",
    [(RankNetRanker, "adam"), (RankNetRanker, "sgd"), (RankNetRanker, "lbfgs"),
     (LambdaRankRanker, "adam"), (LambdaRankRanker, "sgd")],
)
def test_warm_start_continues_from_the_previous_weights(cls, solver):
    X, y, qid = _small(20)
    kwargs = dict(
        solver=solver, hidden_layer_sizes=(), max_iter=1, learning_rate_init=0.01, random_state=0,
        batch_size=len(np.unique(qid)), feature_scaling="standard", **FAST,  # one minibatch per epoch
        ema_momentum=0.0,  # the optimizer's arithmetic, on the trained weights
        precision="float64",  # followed to 1e-8 below
    )
    warm = cls(warm_start=True, **kwargs).fit(X, y, groups=qid)
    after_one = [p.copy() for p in warm.coefs_ + warm.intercepts_]
    warm.fit(X, y, groups=qid)
    cold = cls(**kwargs).fit(X, y, groups=qid)

    np.testing.assert_array_equal(cold.coefs_[0], after_one[0])  # first warm fit == cold fit
    assert not np.allclose(warm.predict(X), cold.predict(X))
    # The loss curve goes on over warm fits (L-BFGS iterations describe the
    # last fit); n_iter_ counts the last fit's epochs, as in MLPRegressor.
    assert len(warm.loss_curve_) == (1 if solver == "lbfgs" else 2)
    if solver != "lbfgs":
        # The second fit started where the first stopped but, as in
        # MLPRegressor, with a fresh optimizer (so changed hyperparameters
        # apply): not the same as one cold fit of two epochs, whose second
        # epoch reuses the moment estimates of the first.
        two = cls(**{**kwargs, "max_iter": 2}).fit(X, y, groups=qid)
        assert not np.array_equal(warm.predict(X), two.predict(X))
        gap = two.coefs_[0] - warm.coefs_[0]
        lr = kwargs["learning_rate_init"]
        if solver == "sgd":
            # Nesterov momentum m, one full batch per epoch, the same
            # gradient at the same weights: the carried velocity adds
            # m^2 / (1 + m) times the first epoch's move.
            m = cls().momentum
            start = _initial_params(warm, warm.coefs_[0].shape[0])[0][0]
            first_move = after_one[0] - start
            np.testing.assert_allclose(gap, m**2 / (1 + m) * first_move, rtol=1e-8, atol=1e-14)
        else:
            # The fresh Adam's step is lr per weight, the carried one at most
            # lr (1 - beta_1) / sqrt(1 - beta_2) = 3.17 lr (Kingma & Ba, 2.1).
            assert np.abs(gap).max() <= (1 + 0.1 / np.sqrt(0.001)) * lr * (1 + 1e-6)
    assert warm.n_iter_ == 1
    # Without warm_start, fit starts over.
    cold.fit(X, y, groups=qid)
    np.testing.assert_array_equal(cold.coefs_[0], after_one[0])


@pytest.mark.parametrize("cls", RANKERS)
def test_warm_start_uses_the_new_learning_rate(cls):
    X, y, qid = _small(20)
    ranker = cls(warm_start=True, max_iter=1, learning_rate_init=0.01, random_state=0, **FAST)
    before = ranker.fit(X, y, groups=qid).predict(X)
    ranker.set_params(learning_rate_init=1e-12, max_iter=3)
    after = ranker.fit(X, y, groups=qid).predict(X)
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-6)  # moved by ~0.6 instead


@pytest.mark.parametrize("change", [{"hidden_layer_sizes": (4, 3)}, {"feature_scaling": None}])
@pytest.mark.parametrize("method", ["warm_start", "partial_fit"])
def test_continuing_refuses_a_changed_network(change, method):
    """The fitted weights cannot take another shape or input scaling: an
    error naming the change, and the model left as it was (not a model
    whose get_params describes another network)."""
    X, y, qid = _small(20)
    ranker = LambdaRankRanker(warm_start=True, max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
    before = [p.copy() for p in ranker.coefs_]
    ranker.set_params(**change)
    with pytest.raises(ValueError, match=f"cannot take {next(iter(change))}=.*warm_start=False"):
        if method == "warm_start":
            ranker.fit(X, y, groups=qid)
        else:
            ranker.partial_fit(X, y, groups=qid)
    for p, b in zip(ranker.coefs_, before):
        np.testing.assert_array_equal(p, b)
    # Without warm_start the new settings simply train a new network.
    ranker.set_params(warm_start=False).fit(X, y, groups=qid)
    assert ranker.coefs_[0].shape[1] == (4 if "hidden_layer_sizes" in change else before[0].shape[1])


@pytest.mark.parametrize("cls", RANKERS)
def test_a_warm_fit_stops_on_its_own_losses(cls):
    """The tol rule compares a warm fit's epochs with each other: against
    the best loss of the fit before (other data, here a lower loss) it ended
    every warm fit after n_iter_no_change + 1 epochs, however much it still
    improved, and without a warning. Here a cold fit on the second data
    improves for more than that many epochs, and so must the warm one."""
    X, y, qid = _small(40, seed=0, max_docs=6)  # short queries: few pairs, a low loss
    X2, y2, qid2 = _small(40, seed=1, max_docs=30)
    params = dict(hidden_layer_sizes=(8,), n_iter_no_change=3, max_iter=60, random_state=0, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cold = cls(**params).fit(X2, y2, groups=qid2)
        warm = cls(warm_start=True, **params).fit(X, y, groups=qid)
        first_best = warm.best_loss_
        warm.fit(X2, y2, groups=qid2)
    assert cold.n_iter_ > params["n_iter_no_change"] + 1  # the data asks for more epochs
    warm_curve = warm.loss_curve_[-warm.n_iter_:]
    assert min(warm_curve) > first_best  # the old rule could not see an improvement
    assert warm.n_iter_ > params["n_iter_no_change"] + 1
    assert warm.best_loss_ == min(warm_curve)


@pytest.mark.parametrize("cls", RANKERS)
def test_a_warm_fit_takes_a_random_state_changed_since(cls):
    """A warm fit drew its minibatch order (and split, and noise) from the
    stream the first fit had made, so random_state=1 and =2 set in between
    gave the same model, bit for bit: the new value was ignored. Now a
    changed random_state starts a new stream; an unchanged one (an equal
    int) goes on with the old stream, as before."""
    X, y, qid = _small(20)
    first = cls(warm_start=True, max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)

    def refit(**params):
        return copy.deepcopy(first).set_params(**params).fit(X, y, groups=qid).predict(X)

    kept = refit()
    np.testing.assert_array_equal(refit(random_state=np.int64(0)), kept)
    one, two = refit(random_state=1), refit(random_state=2)
    assert not np.array_equal(one, two)
    # A new stream from the new seed: as if the first fit had left that one.
    reseeded = copy.deepcopy(first)
    reseeded._fit_state.random_state = np.random.RandomState(1)
    np.testing.assert_array_equal(reseeded.fit(X, y, groups=qid).predict(X), one)


def test_warm_start_can_switch_early_stopping_on():
    X, y, qid = _small(20)
    ranker = LambdaRankRanker(warm_start=True, max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
    ranker.set_params(early_stopping=True, validation_fraction=0.2)
    ranker.fit(X, y, groups=qid)
    assert len(ranker.validation_scores_) >= 1


def _largest_weight_change(ranker, X, y, qid):
    before = [c.copy() for c in ranker.coefs_]
    ranker.partial_fit(X, y, groups=qid)
    return max(float(np.abs(c - b).max()) for c, b in zip(ranker.coefs_, before))


@pytest.mark.parametrize("cls", RANKERS)
def test_set_params_between_partial_fit_calls_changes_the_steps(cls):
    """A step size, solver or momentum set between partial_fit calls takes
    effect on the next call (they were kept from the first call, silently,
    while get_params reported the new values). Adam moves each weight by
    about the step size per update, at most a few times it, so a step of
    1e-12 moves no weight by 1e-9 over an epoch of a few updates."""
    X, y, qid = _small(6)
    ranker = cls(hidden_layer_sizes=(4,), ema_momentum=0.0, random_state=0, **FAST)
    ranker.partial_fit(X, y, groups=qid)
    assert _largest_weight_change(ranker, X, y, qid) > 1e-5
    ranker.set_params(learning_rate_init=1e-12)
    assert _largest_weight_change(ranker, X, y, qid) < 1e-9
    # Plain gradient descent of step 0 does not move at all.
    ranker.set_params(solver="sgd", momentum=0.0, learning_rate_init=1e-300)
    before = ranker.predict(X)
    ranker.partial_fit(X, y, groups=qid)
    np.testing.assert_array_equal(ranker.predict(X), before)
    # Back to a real step: the model learns again.
    ranker.set_params(learning_rate_init=0.1)
    assert _largest_weight_change(ranker, X, y, qid) > 1e-5


def test_momentum_set_between_partial_fit_calls_takes_effect():
    """Under SGD, a momentum set between calls changes the next call's
    steps (the velocity is kept, its weight is the new momentum); the same
    model with the momentum it had takes other steps."""
    X, y, qid = _small(6)
    ranker = RankNetRanker(hidden_layer_sizes=(4,), solver="sgd", momentum=0.9, learning_rate_init=0.05,
                           ema_momentum=0.0, random_state=0, **FAST)
    ranker.partial_fit(X, y, groups=qid)
    same = pickle.loads(pickle.dumps(ranker))
    ranker.set_params(momentum=0.0).partial_fit(X, y, groups=qid)
    same.partial_fit(X, y, groups=qid)
    assert not np.allclose(ranker.predict(X), same.predict(X), rtol=0, atol=1e-6)


@pytest.mark.parametrize("param, value", [("batch_size", 0), ("alpha", -1.0), ("k", 0), ("dropout", 1.5)])
def test_partial_fit_checks_parameters_on_every_call(param, value):
    """set_params between partial_fit calls cannot slip a value past the
    checks fit makes: the call raises InvalidParameterError and the model
    stays as it was."""
    from sklearn.utils._param_validation import InvalidParameterError

    X, y, qid = _small(6)
    ranker = LambdaRankRanker(random_state=0, **FAST).partial_fit(X, y, groups=qid)
    before = ranker.predict(X)
    ranker.set_params(**{param: value})
    with pytest.raises(InvalidParameterError, match=param):
        ranker.partial_fit(X, y, groups=qid)
    np.testing.assert_array_equal(ranker.predict(X), before)
