"""Bad input: invalid data, labels and parameters give clear errors, a failed
fit leaves no model (or the previous one), and overflowing rows are refused."""

import copy
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet.metrics import ndcg_score

from ._data import FAST, RANKERS, SHORT_FIT, _small, _twenty_queries

# Most fits here use few epochs on purpose; the convergence warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _bad_data_cases():
    X, y, qid = _small(8)
    cases = {}

    def case(name, X_=X, y_=y, qid_=qid, cls=LambdaRankRanker, params=None, match=""):
        cases[name] = (X_, y_, qid_, cls, params or {}, match)

    case("groups_too_short", qid_=qid[:-1], match=r"groups has \d+ entries but the data has \d+ rows")
    case("groups_too_long", qid_=np.r_[qid, 0], match="one query id per row")
    nan_groups = qid.astype(float)
    nan_groups[5] = np.nan
    case("groups_nan", qid_=nan_groups, match="groups contains NaN")
    none_groups = qid.astype(object)
    none_groups[5] = None
    case("groups_none_entry", qid_=none_groups, match="groups contains NaN")
    case("groups_2d", qid_=np.c_[qid, qid], match="1-D")
    mixed = qid.astype(object)
    mixed[::2] = "a"
    case("groups_mixed_types", qid_=mixed, match="cannot be compared")
    for bad in (np.inf, -np.inf):
        X_bad = X.copy()
        X_bad[3, 2] = bad
        case(f"X_{bad}", X_=X_bad, match="Input X contains infinity.*np.nan, which .* reads as missing")
    # NaN is a missing value, learned by the input scaling, which None lacks.
    X_nan = X.copy()
    X_nan[3, 2] = np.nan
    case("X_nan_without_scaling", X_=X_nan, params={"feature_scaling": None},
         match=r"Input X contains NaN\. .*feature_scaling=None has none")
    y_nan = y.astype(float)
    y_nan[2] = np.nan
    case("y_nan", y_=y_nan, match="Input y contains NaN")
    y_inf = y.astype(float)
    y_inf[2] = np.inf
    case("y_inf", y_=y_inf, match="Input y contains infinity")
    # An object y with a missing label: scikit-learn's own check lets None
    # through and y_numeric turns it into NaN.
    y_none = y.astype(object)
    y_none[2] = None
    case("y_none", y_=y_none, match="Input y contains NaN")
    case("y_none_ranknet", y_=y_none, cls=RankNetRanker, match="Input y contains NaN")
    y_neg = y.copy()
    y_neg[2] = -1
    case("y_negative", y_=y_neg, match="negative relevance labels")
    case("y_negative_ranknet", y_=y_neg, cls=RankNetRanker, match="negative relevance labels")
    y_31 = y.copy()
    y_31[2] = 31
    case("y_31_exponential", y_=y_31, match=r"labels up to 31.*at most 30.*gain=\"linear\"")
    # RankNet has no gain parameter: the advice must be one it can follow.
    case("y_31_ranknet", y_=y_31, cls=RankNetRanker, match=r"at most 30\. RankNetRanker scores.*rescale")
    # Linear gains of subnormal labels lose their precision: 1 / ideal DCG
    # overflowed and training "produced non-finite weights".
    tiny_labels = (y > 0) * 1e-320
    for cls in (LambdaRankRanker, ListNetRanker):
        case(f"y_subnormal_{cls.__name__}", y_=tiny_labels, cls=cls, params={"gain": "linear"},
             match="positive labels as small as 9.99989e-321, below the smallest normal float")
    case("X_beyond_1e154_standardized", X_=X * 1e160, params={"feature_scaling": "standard"},
         match=r"cannot standardize feature 0 of X: .*mean or variance overflow float64\. .*\"piecewise\"")
    # Piecewise: the message names the column of X (not one of its encoded
    # inputs) and advises another scaling than the one that failed.
    X_extreme = X.copy()
    X_extreme[:, 2] = np.where(y > 0, 1e308, -1e308)
    case("X_range_past_float_max_piecewise", X_=X_extreme, params={"feature_scaling": "piecewise"},
         match=r"'piecewise' cannot standardize feature 2 of X: .*Use feature_scaling=\"log1p\", or rescale")
    # float32 X within float32's range, whose bins are wider than it: the
    # message names float32, and float64 is the way out.
    X_wide32 = X.astype(np.float32)
    X_wide32[:, 1] = np.where(y > 0, 2e38, -2e38)
    case("X_bins_past_float32_max", X_=X_wide32, match=r"overflow float32, the dtype of X\. Give X as float64")
    # Standardized: float64 moments are finite, but the rows, centred in
    # float32, reach past its limit (3.3e38 minus a mean of about -2e37):
    # the fit ended in "non-finite weights" after numpy's NaN warnings.
    X_far32 = X.astype(np.float32)
    X_far32[:, 1] = np.where(y > 0, 3.3e38, -3.3e38)
    X_far32[: len(y) // 2, 1] = -3.3e38
    case("X_centred_past_float32_max_standardized", X_=X_far32, params={"feature_scaling": "standard"},
         match=r"'standard' cannot standardize feature 1 of X: .*overflow float32, the dtype of X\. Give X as float64")
    case("y_2d", y_=np.c_[y, y], match="1d array")
    case("y_too_short", y_=y[:-1], match="inconsistent numbers of samples")
    case("X_empty", X_=X[:0], y_=y[:0], qid_=qid[:0], match="0 sample")
    case("X_1d", X_=X[:, 0], match="2D array")
    return cases


BAD_DATA = _bad_data_cases()


@pytest.mark.parametrize("name", list(BAD_DATA))
def test_bad_data_raises_a_clear_value_error(name):
    X, y, qid, cls, params, match = BAD_DATA[name]
    for method in ("fit", "partial_fit"):
        ranker = cls(max_iter=3, random_state=0, **FAST, **params)
        with pytest.raises(ValueError, match=match):
            getattr(ranker, method)(X, y, groups=qid)
        assert not hasattr(ranker, "coefs_")  # never a half-trained (or NaN) model


@pytest.mark.parametrize("form", [np.asarray, sp.csr_matrix], ids=["dense", "csr"])
@pytest.mark.parametrize("kind", ["standard", "log1p"])
def test_a_spread_whose_variance_underflows_warns_that_it_reads_as_constant(kind, form):
    """A feature varying by ~1e-170 squares to 0 in float64 and is read as
    constant (every row then scored alike on it), as a spread below the
    dtype's smallest normal number is; that was silent. A feature of one
    tiny value is constant and says nothing."""
    X, y, qid = _small(8)
    params = dict(feature_scaling=kind, hidden_layer_sizes=(4,), max_iter=3, random_state=0, **FAST)
    tiny = X.copy()
    tiny[:, 1] *= 1e-170
    with pytest.warns(UserWarning, match=r"Feature 1 of X varies only by less than about 1e-154 .*read"):
        LambdaRankRanker(**params).fit(form(tiny), y, groups=qid)
    tiny[:, 1] = 1e-170
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        LambdaRankRanker(**params).fit(form(tiny), y, groups=qid)


@pytest.mark.parametrize("kind", ["standard", "log1p"])
def test_tiny_but_representable_spreads_are_standardized(kind):
    """Features scaled by 1e-150 (their squared deviations ~1e-300, still
    normal float64 numbers) give the model of the unscaled features: the
    standardized inputs differ by rounding only (log1p of a value this
    small is the value itself, so compare it with "standard" on X)."""
    X, y, qid = _small(8)
    X = np.abs(X) + 0.5  # log1p of the unscaled X would bend the features
    params = dict(hidden_layer_sizes=(4,), max_iter=3, random_state=0, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tiny = LambdaRankRanker(feature_scaling=kind, **params).fit(X * 1e-150, y, groups=qid)
        plain = LambdaRankRanker(feature_scaling="standard", **params).fit(X, y, groups=qid)
    np.testing.assert_allclose(tiny.predict(X * 1e-150), plain.predict(X), rtol=1e-6, atol=1e-9)


def _diverging_fit(X, y, qid):
    # A step of 1e300 on features ~1e6 overflows the weights in one epoch.
    ranker = LambdaRankRanker(solver="sgd", learning_rate_init=1e300, max_iter=3, random_state=0, **FAST)
    with pytest.raises(ValueError, match="non-finite weights.*learning_rate_init.*extreme values"):
        ranker.fit(X * 1e6, y, groups=qid)
    # Unscaled features: the advice is to let the ranker scale them.
    unscaled = clone(ranker).set_params(feature_scaling=None)
    with pytest.raises(ValueError, match='non-finite weights.*feature_scaling="piecewise"'):
        unscaled.fit(X * 1e6, y, groups=qid)
    return ranker


def _early_stopping_on_one_query(X, y, qid):
    ranker = LambdaRankRanker(early_stopping=True, max_iter=3, random_state=0, **FAST)
    with pytest.raises(ValueError, match="early_stopping"):
        ranker.fit(X, y, groups=np.zeros(len(y)))
    return ranker


def test_training_that_diverges_raises():
    X, y, qid = _small(8)
    _diverging_fit(X, y, qid)


def test_training_that_diverges_under_a_large_sigma_names_sigma():
    # RankNet's pair gradient is sigma * (P_ij - target): at sigma=1e300 the
    # first step overflows with a sane step size, so the message must name it.
    X, y, qid = _small(8)
    with pytest.raises(ValueError, match=r"non-finite weights\. Lower learning_rate_init or sigma \(sigma=1e\+300"):
        RankNetRanker(sigma=1e300, max_iter=3, random_state=0, **FAST).fit(X, y, groups=qid)
    # At the default sigma the message names the step size alone.
    with pytest.raises(ValueError, match=r"Lower learning_rate_init, or check"):
        RankNetRanker(learning_rate_init=1e300, solver="sgd", max_iter=3, random_state=0, **FAST).fit(
            X * 1e6, y, groups=qid
        )
    # Nor does sigma=1 (LambdaRank's and ListNet's default), which scales nothing.
    with pytest.raises(ValueError, match=r"Lower learning_rate_init, or check"):
        RankNetRanker(sigma=1.0, learning_rate_init=1e300, solver="sgd", max_iter=3, random_state=0, **FAST).fit(
            X * 1e6, y, groups=qid
        )


@pytest.mark.parametrize("failing_fit", [_diverging_fit, _early_stopping_on_one_query])
def test_failed_fit_leaves_no_model(failing_fit):
    X, y, qid = _small(8)
    ranker = failing_fit(X, y, qid)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        ranker.predict(X)
    # scikit-learn's generic test (any public attribute ending in "_"),
    # which Pipeline and the meta-estimators use, agrees with predict.
    with pytest.raises(sklearn.exceptions.NotFittedError):
        check_is_fitted(ranker)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        check_is_fitted(make_pipeline(StandardScaler().fit(X), ranker))


@pytest.mark.parametrize("bad_query_column", [False, True], ids=["bad_labels", "bad_query_column"])
def test_failed_first_fit_passes_no_fitted_check(bad_query_column):
    X, y, qid = _small(8)
    ranker = LambdaRankRanker(max_iter=3, random_state=0, **FAST)
    if bad_query_column:  # fails before the training data is validated
        ranker.set_params(query_column="qid")
    with pytest.raises(ValueError):
        ranker.fit(X, -1.0 - y if not bad_query_column else y, groups=None if bad_query_column else qid)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        check_is_fitted(ranker)


def _chunk_that_overflows(X):
    # One feature a million times too large for an unscaled network at this
    # step: the weights go non-finite within the call.
    X = X.copy()
    X[:, 0] *= 1e200
    return X


@pytest.mark.parametrize("how", ["partial_fit", "warm_start"])
def test_failed_incremental_fit_keeps_the_previous_model(how):
    """A partial_fit or warm_start refit that fails part way (its weights
    went non-finite) leaves the model of the calls before it, optimizer
    state and curves included, instead of NaN weights."""
    X, y, qid = _small(8)
    kwargs = dict(feature_scaling=None, max_iter=3, random_state=0, **FAST)
    ranker = LambdaRankRanker(warm_start=how == "warm_start", **kwargs)
    getattr(ranker, "partial_fit" if how == "partial_fit" else "fit")(X, y, groups=qid)
    before = copy.deepcopy(ranker.__dict__)
    scores = ranker.predict(X)
    with pytest.raises(ValueError, match="non-finite weights"):
        getattr(ranker, "partial_fit" if how == "partial_fit" else "fit")(_chunk_that_overflows(X), y, groups=qid)
    np.testing.assert_array_equal(ranker.predict(X), scores)
    assert ranker.n_iter_ == before["n_iter_"] and ranker.t_ == before["t_"]
    assert ranker.loss_curve_ == before["loss_curve_"]
    # The next call continues from the same state as without the failure.
    again = copy.deepcopy(ranker)
    again.__dict__.update(copy.deepcopy(before))
    getattr(ranker, "partial_fit" if how == "partial_fit" else "fit")(X, y, groups=qid)
    getattr(again, "partial_fit" if how == "partial_fit" else "fit")(X, y, groups=qid)
    np.testing.assert_array_equal(ranker.predict(X), again.predict(X))


def test_failed_fit_keeps_a_random_state_instance_of_the_caller():
    X, y, qid = _small(8)
    state = np.random.RandomState(0)
    ranker = LambdaRankRanker(max_iter=3, random_state=state, **FAST)
    with pytest.raises(ValueError):
        ranker.fit(X, -1.0 - y, groups=qid)
    assert ranker.random_state is state


def test_labels_above_30_work_with_linear_gain():
    X, y, qid = _small(8)
    y = y * 10 + 1  # up to 41
    assert y.max() > 30
    ranker = LambdaRankRanker(gain="linear", max_iter=5, random_state=0, **FAST).fit(X, y, groups=qid)
    assert np.isfinite(ranker.predict(X)).all()
    expected = ndcg_score(y, ranker.predict(X), groups=qid, k=10, gain="linear")
    assert ranker.score(X, y, groups=qid) == pytest.approx(expected)
    with pytest.raises(ValueError, match="at most 30"):  # 2**41 would swamp the other grades
        LambdaRankRanker(metric="map", max_iter=5, **FAST).fit(X, y, groups=qid)


def test_ranknet_scores_the_labels_it_accepts():
    """RankNet's score() and early stopping use NDCG with exponential gain,
    so fit refuses labels that score() could not handle, up front."""
    X, y, qid = _small(8)
    with pytest.raises(ValueError, match="at most 30"):
        RankNetRanker(max_iter=5, random_state=0, **FAST).fit(X, y * 10, groups=qid)
    ranker = RankNetRanker(max_iter=5, random_state=0, **FAST).fit(X, y * 7, groups=qid)  # up to 28
    assert 0.0 <= ranker.score(X, y * 7, groups=qid) <= 1.0


@pytest.mark.parametrize("cls", RANKERS)
def test_score_advises_what_the_ranker_can_do_about_labels_above_30(cls):
    """score() and fit give the same advice: gain="linear" is a parameter
    of LambdaRank's and ListNet's, not of RankNet's."""
    X, y, qid = _small(8)
    ranker = cls(max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
    with pytest.raises(ValueError, match="at most 30") as at_fit:
        cls(max_iter=2, **FAST).fit(X, y * 10, groups=qid)
    with pytest.raises(ValueError, match="at most 30") as at_score:
        ranker.score(X, y * 10, groups=qid)
    assert str(at_score.value) == str(at_fit.value)
    assert ('gain="linear" or rescale' in str(at_score.value)) == ("gain" in ranker.get_params())


def test_feature_count_mismatch_at_predict():
    X, y, qid = _small(8)
    for cls in RANKERS:
        ranker = cls(max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
        with pytest.raises(ValueError, match=f"X has 3 features, but {cls.__name__} is expecting {X.shape[1]}"):
            ranker.predict(X[:, :3])
        with pytest.raises(ValueError, match="features"):
            ranker.score(X[:, :3], y, groups=qid)
        with pytest.raises(ValueError, match=r"groups has \d+ entries"):
            ranker.score(X, y, groups=qid[:-1])
        with pytest.raises(ValueError, match="0 sample"):
            ranker.predict(X[:0])


@pytest.mark.parametrize("cls", RANKERS)
def test_score_names_the_callers_arguments(cls):
    """score(X, y, groups) is checked in the caller's terms, as fit is, not
    in those of the metric it calls (y_true, y_score)."""
    X, y, qid = _small(8)
    ranker = cls(max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
    bag = BaggingRanker(cls(max_iter=2, **FAST), n_estimators=2, random_state=0).fit(X, y, groups=qid)
    with_nan = y.astype(float)
    with_nan[3] = np.nan
    for model in (ranker, bag):
        with pytest.raises(ValueError, match=rf"^y has {len(y) - 1} rows but X has {len(y)}; give one label"):
            model.score(X, y[:-1], groups=qid)
        with pytest.raises(ValueError, match="^Input y contains NaN"):
            model.score(X, with_nan, groups=qid)


@pytest.mark.parametrize("activation", ["identity", "tanh", "relu"])
def test_predict_refuses_scores_that_overflowed(activation):
    """Finite rows far outside the training range overflow the network's
    arithmetic when the inputs are standardized (not bounded): an error that
    says so, not NaN or infinite scores. The default encoding bounds every
    input by the training range, so the same rows score finitely."""
    X, y, qid = _small(8)
    X *= 1e-3  # standard deviations of 1e-3: 1e308 standardizes beyond float64's range
    extreme = np.vstack([X[:2], np.full(X.shape[1], 1e308), np.full(X.shape[1], -1e308)])
    ranker = LambdaRankRanker(feature_scaling="standard", activation=activation, max_iter=2, random_state=0,
                              **FAST).fit(X, y, groups=qid)
    for model in (ranker, BaggingRanker(ranker, n_estimators=2, random_state=0).fit(X, y, groups=qid)):
        with pytest.raises(ValueError, match=r"^2 of 4 scores are not finite \(the first at row 2\)"):
            model.predict(extreme)
    np.testing.assert_array_equal(ranker.predict(extreme[:2]), ranker.predict(X[:2]))
    bounded = LambdaRankRanker(max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
    assert np.isfinite(bounded.predict(extreme)).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_predict_overflow_raises_without_numpy_warnings(dtype):
    """Rows that overflow the network's products get the clear error of
    test_predict_refuses_scores_that_overflowed, and nothing before it:
    numpy's "overflow encountered in matmul" / "invalid value encountered in
    matmul" warnings were emitted first, as if something else were wrong."""
    X, y, qid = _small(8)
    X = (X * 1e-3).astype(dtype)
    huge = np.finfo(dtype).max / 2  # one sign only: scikit-learn's own finiteness check stays quiet
    extreme = np.vstack([X[:2], np.full(X.shape[1], huge, dtype=dtype)])
    ranker = LambdaRankRanker(feature_scaling="standard", max_iter=2, random_state=0, **FAST)
    ranker.fit(X, y, groups=qid)
    for rows in (extreme, sp.csr_matrix(extreme)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with pytest.raises(ValueError, match=r"^1 of 3 scores are not finite \(the first at row 2\)"):
                ranker.predict(rows)


def test_predict_before_fit():
    with pytest.raises(sklearn.exceptions.NotFittedError):
        LambdaRankRanker().predict(np.ones((2, 2)))


@pytest.mark.parametrize(
    "cls, params, match",
    [
        (LambdaRankRanker, dict(k=0), "'k' parameter"),
        (LambdaRankRanker, dict(k=2.0), "'k' parameter"),
        (LambdaRankRanker, dict(metric="foo"), "'metric' parameter"),
        (LambdaRankRanker, dict(gain="cubic"), "'gain' parameter"),
        (LambdaRankRanker, dict(solver="lbfgs"), "'solver' parameter.*'adam'"),
        (RankNetRanker, dict(solver="newton"), "'solver' parameter"),
        (RankNetRanker, dict(sigma=0), "'sigma' parameter"),
        (LambdaRankRanker, dict(sigma=-1.0), "'sigma' parameter"),
        (RankNetRanker, dict(batch_size=0), "'batch_size' parameter"),
        (LambdaRankRanker, dict(batch_size="all"), "'batch_size' parameter"),
        (RankNetRanker, dict(alpha=-1.0), "'alpha' parameter"),
        (RankNetRanker, dict(learning_rate_init=0.0), "'learning_rate_init' parameter"),
        (LambdaRankRanker, dict(max_iter=0), "'max_iter' parameter"),
        (LambdaRankRanker, dict(validation_fraction=1.0), "'validation_fraction' parameter"),
        (RankNetRanker, dict(activation="softmax"), "'activation' parameter"),
        (RankNetRanker, dict(hidden_layer_sizes=0), "'hidden_layer_sizes' parameter"),
        (LambdaRankRanker, dict(n_jobs="two"), "'n_jobs' parameter"),
    ],
)
def test_invalid_parameters(cls, params, match):
    X, y, qid = _small(5)
    ranker = cls(max_iter=2, **params) if "max_iter" not in params else cls(**params)
    with pytest.raises((ValueError, TypeError), match=match) as info:
        ranker.fit(X, y, groups=qid)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)  # InvalidParameterError
    assert not hasattr(ranker, "coefs_")


@pytest.mark.parametrize("cls", RANKERS)
def test_zero_width_hidden_layer_is_rejected(cls):
    X, y, qid = _small(5)
    ranker = cls(hidden_layer_sizes=(0,), max_iter=2)
    with pytest.raises(ValueError, match=re.escape("hidden_layer_sizes must hold positive integers")):
        ranker.fit(X, y, groups=qid)
    assert not hasattr(ranker, "coefs_")


@pytest.mark.parametrize("cls", RANKERS)
def test_an_int_hidden_layer_size_means_one_layer(cls):
    X, y, qid = _small(5)
    ranker = cls(hidden_layer_sizes=4, max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
    assert [c.shape for c in ranker.coefs_] == [(len(ranker.feature_mean_), 4), (4, 1)]


@pytest.mark.parametrize("hidden", [(0,), (-1,), ("a",), (2.5,)])
def test_bad_hidden_layer_sizes_name_the_parameter(hidden):
    X, y, qid = _small(5)
    with pytest.raises((ValueError, TypeError), match="hidden_layer_sizes"):
        RankNetRanker(hidden_layer_sizes=hidden, max_iter=2).fit(X, y, groups=qid)


@pytest.mark.parametrize("container", ["numpy", "object", "pandas"])
def test_string_labels_give_a_clear_error(container):
    # Text is refused in every container, not read as numbers from a Series
    # or an object array as validate_data would.
    X, y, qid = _small(5)
    labels = y.astype(int).astype(str)
    if container == "object":
        labels = labels.astype(object)
    elif container == "pandas":
        labels = pytest.importorskip("pandas").Series(labels)
    with pytest.raises(ValueError, match=r"y must hold numeric relevance labels .*got text \(e.g. '\d'\)"):
        LambdaRankRanker(max_iter=2).fit(X, labels, groups=qid)


@pytest.mark.parametrize("cls", [RankNetRanker, ListNetRanker])
def test_lbfgs_refuses_dropout(cls):
    X, y, qid = _twenty_queries()
    with pytest.raises(ValueError, match="L-BFGS"):
        cls(solver="lbfgs", dropout=0.2, max_iter=2).fit(X, y, groups=qid)


@pytest.mark.parametrize("continue_fit", ["partial_fit", "warm_start"])
@pytest.mark.parametrize("sparse", [False, True])
def test_float64_rows_beyond_a_float32_models_range_are_refused(continue_fit, sparse):
    # A float32 model casts later float64 rows to float32; a finite value
    # past float32's range became inf in that cast, and training went on
    # silently with it (the finiteness check had run before the cast).
    X, y, qid = _twenty_queries()
    model = RankNetRanker(**SHORT_FIT, warm_start=continue_fit == "warm_start").fit(
        X.astype(np.float32), y, groups=qid
    )
    before = [c.copy() for c in model.coefs_]
    wide = X.copy()
    wide[3, 1] = 1e39  # finite in float64, above float32's largest value (3.4e38)
    wide = sp.csr_matrix(wide) if sparse else wide
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no numpy "overflow encountered in cast"
        with pytest.raises(ValueError, match=r"beyond the range of float32 .*Rescale those features"):
            if continue_fit == "partial_fit":
                model.partial_fit(wide, y, groups=qid)
            else:
                model.fit(wide, y, groups=qid)
    for a, b in zip(model.coefs_, before):  # the model is left as it was
        np.testing.assert_array_equal(a, b)
