"""The precision a network trains in (``precision``): "auto" trains a
stochastic fit of float64 rows in float32 when the cast keeps every feature's
resolution, the fitted weights are published in X's dtype, and a continued
fit keeps the precision of the first."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _resolve
from sklearn_ranknet.datasets import make_ranking

from ._data import RANKERS


def _fit(ranker, X, y, qid, method="fit"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return getattr(ranker, method)(X, y, groups=qid)


@pytest.fixture(scope="module")
def data():
    return make_ranking(25, n_features=6, n_informative=3, max_docs=12, random_state=0)


def _is_float32_exact(a):
    return np.array_equal(a.astype(np.float32).astype(a.dtype), a)


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_auto_trains_a_stochastic_fit_of_float64_rows_in_float32_and_publishes_float64(cls, solver, data):
    X, y, qid = data
    ranker = _fit(cls(solver=solver, max_iter=3, random_state=0), X, y, qid)
    assert ranker.precision_ == "float32"
    for param in ranker.coefs_ + ranker.intercepts_:
        assert param.dtype == np.float64 and _is_float32_exact(param)
    assert ranker.predict(X).dtype == np.float64
    # The published value, given explicitly, gives the same model.
    explicit = _fit(cls(solver=solver, max_iter=3, random_state=0, precision="float32"), X, y, qid)
    np.testing.assert_array_equal(explicit.predict(X), ranker.predict(X))


@pytest.mark.parametrize("cls", RANKERS)
def test_lbfgs_and_float32_rows_train_in_the_rows_dtype(cls, data):
    X, y, qid = data
    if "lbfgs" in cls._parameter_constraints["solver"][0].options:
        assert _fit(cls(solver="lbfgs", max_iter=3, random_state=0), X, y, qid).precision_ == "float64"
    float32 = _fit(cls(max_iter=3, random_state=0), X.astype(np.float32), y, qid)
    assert float32.precision_ == "float32" and float32.coefs_[0].dtype == np.float32


def test_float64_trains_as_before_and_differs_from_float32_by_rounding_only(data):
    X, y, qid = data
    wide = _fit(LambdaRankRanker(max_iter=3, random_state=0, precision="float64"), X, y, qid)
    narrow = _fit(LambdaRankRanker(max_iter=3, random_state=0, precision="float32"), X, y, qid)
    assert wide.precision_ == "float64" and not _is_float32_exact(wide.coefs_[0])
    # Same initial weights, same minibatches and noise: three epochs of
    # float32 rounding apart, not another model.
    np.testing.assert_allclose(narrow.predict(X), wide.predict(X), rtol=1e-3, atol=1e-3 * np.abs(wide.predict(X)).max())


def test_float32_rows_train_in_float64_when_asked_and_publish_float32(data):
    X, y, qid = data
    ranker = _fit(RankNetRanker(max_iter=3, random_state=0, precision="float64"), X.astype(np.float32), y, qid)
    assert ranker.precision_ == "float64" and ranker.coefs_[0].dtype == np.float32


@pytest.mark.parametrize("cls", RANKERS)
def test_raw_rows_and_standardized_sparse_rows_train_in_their_own_dtype(cls, data):
    X, y, qid = data
    raw = _fit(cls(max_iter=2, random_state=0, feature_scaling=None), X, y, qid)
    assert raw.precision_ == "float64"
    sparse = sp.csr_matrix(np.where(np.random.RandomState(0).rand(*X.shape) < 0.05, X, 0.0))  # stays sparse
    assert _fit(cls(max_iter=2, random_state=0, feature_scaling="standard"), sparse, y, qid).precision_ == "float64"


def test_a_feature_far_from_zero_keeps_its_resolution(data):
    """Rows are scaled in float64 before the cast: a feature offset by 1e9
    (float32 spacing 64 there) trains as the same feature without the
    offset does, up to float32 rounding of the scaled inputs."""
    X, y, qid = data
    far = X.copy()
    far[:, 0] = far[:, 0] + 1e9
    near = _fit(LambdaRankRanker(max_iter=3, random_state=0, feature_scaling="standard"), X, y, qid)
    offset = _fit(LambdaRankRanker(max_iter=3, random_state=0, feature_scaling="standard"), far, y, qid)
    assert offset.precision_ == "float32"
    scores, reference = offset.predict(far), near.predict(X)
    np.testing.assert_allclose(scores, reference, rtol=1e-3, atol=1e-3 * np.abs(reference).max())


def test_raw_rows_beyond_float32_range_say_why_when_float32_is_asked(data):
    X, y, qid = data
    X = X.copy()
    X[0, 1] = 1e39  # finite in float64, inf in float32
    with pytest.raises(ValueError, match=r"beyond the range of float32.*precision='float32'"):
        _fit(RankNetRanker(max_iter=2, random_state=0, precision="float32", feature_scaling=None), X, y, qid)


@pytest.mark.parametrize("method", ["warm_start", "partial_fit"])
def test_a_continued_fit_keeps_the_precision_of_the_first(method, data, monkeypatch):
    X, y, qid = data
    ranker = RankNetRanker(max_iter=2, random_state=0, warm_start=method == "warm_start")
    call = "partial_fit" if method == "partial_fit" else "fit"
    _fit(ranker, X, y, qid, call)
    assert ranker.precision_ == "float32"
    # Were the rule to choose otherwise now, the fitted precision still wins.
    monkeypatch.setattr(_resolve, "_auto_precision", lambda *args: "float64")
    _fit(ranker, X, y, qid, call)
    assert ranker.precision_ == "float32" and _is_float32_exact(ranker.coefs_[0])
    assert ranker.coefs_[0].dtype == np.float64
    ranker.set_params(precision="float64")
    with pytest.raises(ValueError, match=r"precision='float64' \(fitted: 'float32'\)"):
        _fit(ranker, X, y, qid, call)


def test_a_model_cast_to_float32_and_back_is_the_original(data):
    """What a continued fit relies on: the published model, cast back to
    float32 for training, holds the values it trained with, and keeps its
    input scaling as fitted."""
    X, y, qid = data
    ranker = _fit(LambdaRankRanker(max_iter=2, random_state=0), X, y, qid)
    published = ranker._model
    narrow = published.astype(np.float32)
    assert narrow.dtype == np.float32 and narrow.scaling is published.scaling
    assert narrow.inputs(X, np.arange(5)).dtype == np.float32
    back = narrow.astype(np.float64)
    for a, b in zip(back.params, published.params):
        np.testing.assert_array_equal(a, b)
    assert published.astype(np.float64) is published


def test_sparse_rows_train_in_float32_too(data):
    X, y, qid = data
    dense = _fit(LambdaRankRanker(max_iter=3, random_state=0), X, y, qid)
    csr = _fit(LambdaRankRanker(max_iter=3, random_state=0), sp.csr_matrix(X), y, qid)
    assert csr.precision_ == "float32"
    np.testing.assert_array_equal(csr.predict(X), dense.predict(X))


def test_precision_is_validated(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="precision"):
        _fit(RankNetRanker(precision="float16"), X, y, qid)
    assert clone(RankNetRanker(precision="float64")).precision == "float64"


def test_networks_of_two_precisions_do_not_share_a_stack_and_a_cv_search_takes_both(data):
    from sklearn_ranknet import LambdaRankRankerCV
    from sklearn_ranknet._stack import can_stack

    X, y, qid = data
    runs = [LambdaRankRanker(random_state=0, precision=p)._plan_new_fit(X, y, qid) for p in ("float32", "float64")]
    assert can_stack(runs[:1]) and not can_stack(runs)
    search = _fit(LambdaRankRankerCV({"precision": ["float32", "float64"]}, cv=2, max_iter=2, random_state=0),
                  X, y, qid)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.precision_ == search.best_params_["precision"]
