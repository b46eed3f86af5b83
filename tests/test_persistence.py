"""Clone, parameters, persistence and determinism: get_params / set_params and
the documented defaults, pickle and joblib round trips that train on as before,
and the same model for the same random_state and any n_jobs."""

import ast
import inspect
import pickle
import re

import joblib
import numba
import numpy as np
import pytest
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, RankNetRanker
from sklearn_ranknet import _jit, _training

from ._assertions import assert_same_training
from ._data import FAST, RANKERS, _small

# Most fits here use few epochs on purpose; the convergence warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.mark.parametrize(
    "ranker",
    [
        RankNetRanker(hidden_layer_sizes=(4,), solver="sgd", alpha=0.1, sigma=2.0, random_state=3),
        LambdaRankRanker(metric="map", k=5, gain="linear", batch_size=4, random_state=3),
    ],
    ids=["ranknet", "lambdarank"],
)
def test_clone_get_params_set_params(ranker):
    params = ranker.get_params()
    assert set(params) >= {"hidden_layer_sizes", "solver", "alpha", "sigma", "n_jobs", "random_state"}
    extra = {"metric", "k", "gain"}
    assert extra <= set(params) if isinstance(ranker, LambdaRankRanker) else not extra & set(params)

    X, y, qid = _small(8)
    fitted = clone(ranker).set_params(max_iter=3, **FAST).fit(X, y, groups=qid)
    copy = clone(fitted)
    assert copy.get_params() == fitted.get_params()
    assert not hasattr(copy, "coefs_") and not hasattr(copy, "n_features_in_")

    assert copy.set_params(alpha=0.5, random_state=7) is copy
    assert copy.get_params()["alpha"] == 0.5 and copy.random_state == 7
    assert fitted.alpha == params["alpha"]  # the clone is independent
    with pytest.raises(ValueError, match="not_a_param"):
        copy.set_params(not_a_param=1)


@pytest.mark.parametrize("hidden", [(), (6,)], ids=["linear", "mlp"])
@pytest.mark.parametrize("cls", RANKERS)
def test_pickle_and_joblib_round_trips(cls, hidden, tmp_path):
    X, y, qid = _small(12)
    ranker = cls(hidden_layer_sizes=hidden, max_iter=5, learning_rate_init=0.01, random_state=0, **FAST)
    ranker.partial_fit(X, y, groups=qid)
    expected = ranker.predict(X)

    from_pickle = pickle.loads(pickle.dumps(ranker))
    path = tmp_path / "ranker.joblib"
    joblib.dump(ranker, path)
    from_joblib = joblib.load(path)
    for loaded in (from_pickle, from_joblib):
        np.testing.assert_array_equal(loaded.predict(X), expected)
        assert loaded.get_params() == ranker.get_params()

    # The optimizer state and the random generator travel with the model:
    # training goes on exactly as it would have without the round trip.
    # (joblib restores the optimizer's arrays as copies apart from coefs_;
    # its steps once went to those copies, and the model stopped learning.)
    for _ in range(2):
        for model in (ranker, from_pickle, from_joblib):
            model.partial_fit(X, y, groups=qid)
    for loaded in (from_pickle, from_joblib):
        np.testing.assert_array_equal(loaded.predict(X), ranker.predict(X))
        assert loaded.loss_curve_ == ranker.loss_curve_
    assert not np.array_equal(ranker.predict(X), expected)


@pytest.mark.parametrize(
    "cls, params",
    [
        (RankNetRanker, dict(hidden_layer_sizes=(6,))),
        (RankNetRanker, dict(solver="lbfgs", hidden_layer_sizes=(6,))),
        (LambdaRankRanker, dict(hidden_layer_sizes=(6,), k=3)),
        (LambdaRankRanker, dict(early_stopping=True, validation_fraction=0.3)),
    ],
)
def test_same_random_state_same_model(cls, params):
    X, y, qid = _small(15)
    kwargs = dict(max_iter=8, learning_rate_init=0.01, **FAST, **params)
    first = cls(random_state=5, **kwargs).fit(X, y, groups=qid).predict(X)
    second = cls(random_state=5, **kwargs).fit(X, y, groups=qid).predict(X)
    other = cls(random_state=6, **kwargs).fit(X, y, groups=qid).predict(X)
    np.testing.assert_array_equal(first, second)
    assert not np.allclose(first, other)
    # A RandomState instance gives the same model as its seed.
    as_instance = cls(random_state=np.random.RandomState(5), **kwargs).fit(X, y, groups=qid)
    np.testing.assert_array_equal(as_instance.predict(X), first)


def _fit_for_each_n_jobs(cls, params, X, y, qid):
    threads_before = numba.get_num_threads()
    preds = {}
    for n_jobs in (1, 2, None):
        ranker = cls(max_iter=6, learning_rate_init=0.01, random_state=0, n_jobs=n_jobs, **params)
        preds[n_jobs] = ranker.fit(X, y, groups=qid).predict(X)
        assert ranker.n_jobs == n_jobs  # not mutated
        assert numba.get_num_threads() == threads_before  # restored
    return preds


@pytest.mark.parametrize(
    "cls, params",
    [
        (RankNetRanker, dict(hidden_layer_sizes=(8,))),
        (RankNetRanker, dict(solver="lbfgs", feature_scaling="standard")),
        (LambdaRankRanker, dict(hidden_layer_sizes=(8,))),
        (LambdaRankRanker, dict(metric="map", k=3)),
    ],
)
def test_n_jobs_gives_identical_models(cls, params, monkeypatch):
    # Threads even for these small calls, and several row blocks per batch.
    monkeypatch.setattr(_jit, "SERIAL_BELOW_WORK", 0)
    monkeypatch.setattr(_training, "BLOCK_WORK", 1)
    X, y, qid = _small(40, max_docs=25)
    # float64: in float32, BLAS's other rounding (below) grows past what
    # assert_same_training allows.
    params = {**params, "precision": "float64"}
    # Our pool's work is bit-identical whatever its size (each query is one
    # thread's). BLAS is held at one thread here because OpenBLAS itself may
    # round a product differently on one thread and on two, by shape and by
    # CPU (this file's shapes did on an AMD EPYC VM, not on an Intel Xeon
    # one): a documented limitation, checked below with a tolerance.
    with threadpool_limits(limits=1, user_api="blas"):
        preds = _fit_for_each_n_jobs(cls, params, X, y, qid)
    np.testing.assert_array_equal(preds[1], preds[2])
    np.testing.assert_array_equal(preds[1], preds[None])
    # With BLAS's own threads, n_jobs may change the rounding only.
    free = _fit_for_each_n_jobs(cls, params, X, y, qid)
    for n_jobs in (1, 2, None):
        assert_same_training(free[n_jobs], preds[1])


@pytest.mark.parametrize("cls", [*RANKERS, BaggingRanker])
def test_documented_defaults_are_the_defaults(cls):
    doc = cls.__doc__
    params = inspect.signature(cls).parameters
    checked = 0
    for match in re.finditer(r"^    (\w+) : [^\n]*default=([^\n]+)$", doc, flags=re.M):
        name, text = match.group(1), match.group(2).strip()
        default = params[name].default
        try:
            assert ast.literal_eval(text) == default, name
        except (ValueError, SyntaxError):
            assert text in (repr(default), str(default)), name
        checked += 1
    assert checked >= len(params) - 2  # a parameter or two may document its default in words
