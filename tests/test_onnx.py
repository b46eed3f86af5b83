"""ONNX export (sklearn_ranknet.onnx): onnxruntime's scores against predict.

Every ranker, every activation and depth, every feature scaling, float32- and
float64-trained models, CSR-trained models, Pipelines and BaggingRanker; then
precision with large feature means, the output's shape and type, and the
models the converter must refuse.

Scores are compared in float32 (the graph's type for float32 input) with
``rtol=1e-4`` and an absolute tolerance of ``ATOL_EPS`` float32 epsilons times
the largest score: the graph and ``predict`` round differently (MatMul's
summation order, onnxruntime's own sigmoid and tanh), each rounding error is
a few epsilons relative to the values being summed, which are of the order of
the score scale, so a score that happens to be near zero (the terms cancel)
may differ by a few epsilons of the score scale, far above 1e-4 of itself.
"""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import (
    BaggingRanker, LambdaRankRanker, LambdaRankRankerCV, ListNetRanker, ListNetRankerCV, RankNetRanker,
    RankNetRankerCV,
)
from sklearn_ranknet.datasets import make_ranking

skl2onnx = pytest.importorskip("skl2onnx")
ort = pytest.importorskip("onnxruntime")
ranknet_onnx = pytest.importorskip("sklearn_ranknet.onnx")

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

RANKERS = [RankNetRanker, LambdaRankRanker, ListNetRanker]
CV_RANKERS = [RankNetRankerCV, LambdaRankRankerCV, ListNetRankerCV]
ACTIVATIONS = ["identity", "logistic", "tanh", "relu"]
DEPTHS = [(), (8,), (8, 4)]
SCALINGS = ["standard", "log1p", "piecewise", None]
RTOL = 1e-4
#: Absolute tolerance in float32 epsilons of the largest score (see the
#: module docstring).
ATOL_EPS = 32


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(
        n_queries=12, n_features=6, n_informative=4, max_docs=12, random_state=0
    )
    # make_ranking's columns are already skewed, heavy-tailed and signed;
    # add a heavier tail and a zero-heavy signed column, so that log1p has
    # work.
    X[:, 2] = np.expm1(5.0 * X[:, 2])
    X[:, 5] = np.where(X[:, 5] > 0.3, 0.0, -30.0 * X[:, 5])
    return X, y, qid


def fit(cls, X, y, qid, **params):
    params = {"max_iter": 3, "random_state": 0, **params}
    return cls(**params).fit(X, y, groups=qid)


def onnx_scores(model, X):
    """Export with ``to_onnx(model, X[:1])`` and score ``X`` with
    onnxruntime: the (N, 1) output, as returned."""
    onx = skl2onnx.to_onnx(model, X[:1])
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    (output,) = session.run(None, {session.get_inputs()[0].name: X})
    return output


def assert_scores_match(scores, expected, dtype=np.float32):
    expected = np.asarray(expected)
    assert scores.shape == (len(expected), 1)
    assert scores.dtype == dtype
    atol = ATOL_EPS * np.finfo(dtype).eps * np.max(np.abs(expected))
    np.testing.assert_allclose(scores[:, 0], expected, rtol=RTOL if dtype == np.float32 else 1e-10, atol=atol)


# ----------------------------------------------------------------------
# The package does not need the extra


def test_core_package_does_not_import_skl2onnx():
    code = (
        "import sys, sklearn_ranknet\n"
        "from sklearn_ranknet import LambdaRankRanker\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('skl2onnx', 'onnx', 'onnxruntime'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("order", [("onnx", "dask"), ("dask", "onnx")])
def test_the_dask_rankers_export_whichever_module_is_imported_first(order):
    """sklearn_ranknet.dask announces its rankers and sklearn_ranknet.onnx
    hears of them, announced before it was imported or after (neither
    module imports the other)."""
    pytest.importorskip("distributed")
    code = (
        "import importlib, sys\n"
        f"for name in {order!r}: importlib.import_module('sklearn_ranknet.' + name)\n"
        "from skl2onnx import get_model_alias\n"
        "from sklearn_ranknet import dask as skd\n"
        "print([get_model_alias(c) for c in (skd.DaskLambdaRankRanker, skd.DaskRankNetRanker, "
        "skd.DaskListNetRanker)])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    expected = ["SklearnRanknetDaskLambdaRankRanker", "SklearnRanknetDaskRankNetRanker",
                "SklearnRanknetDaskListNetRanker"]
    assert out.stdout.strip() == str(expected)


def test_every_class_is_registered():
    aliases = ranknet_onnx.register_converters()
    for cls in [*RANKERS, BaggingRanker, *CV_RANKERS]:
        assert skl2onnx.get_model_alias(cls) == aliases[cls]


# ----------------------------------------------------------------------
# Scores match predict


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fit32", "fit64"])
@pytest.mark.parametrize("feature_scaling", SCALINGS)
@pytest.mark.parametrize("hidden_layer_sizes", DEPTHS, ids=["linear", "one", "two"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_scores_match_predict(data, activation, hidden_layer_sizes, feature_scaling, dtype):
    X, y, qid = data
    model = fit(
        LambdaRankRanker, X.astype(dtype), y, qid, activation=activation,
        hidden_layer_sizes=hidden_layer_sizes, feature_scaling=feature_scaling,
    )
    assert model.coefs_[0].dtype == dtype
    X32 = X.astype(np.float32)
    assert_scores_match(onnx_scores(model, X32), model.predict(X32))


@pytest.mark.parametrize("cls", RANKERS)
def test_every_ranker(data, cls):
    X, y, qid = data
    model = fit(cls, X, y, qid, hidden_layer_sizes=(8,))
    X32 = X.astype(np.float32)
    assert_scores_match(onnx_scores(model, X32), model.predict(X32))


@pytest.mark.parametrize("feature_scaling", SCALINGS)
def test_float64_input_gives_a_float64_graph(data, feature_scaling):
    X, y, qid = data
    model = fit(LambdaRankRanker, X, y, qid, hidden_layer_sizes=(8,), feature_scaling=feature_scaling)
    assert_scores_match(onnx_scores(model, X), model.predict(X), dtype=np.float64)


def test_integer_input_is_cast_to_float32(data):
    X, y, qid = data
    X_int = np.round(X).astype(np.int64)
    model = fit(LambdaRankRanker, X_int, y, qid, hidden_layer_sizes=(8,), feature_scaling="log1p")
    assert_scores_match(onnx_scores(model, X_int), model.predict(X_int))


@pytest.mark.parametrize("feature_scaling", SCALINGS)
def test_fitted_on_csr(data, feature_scaling):
    X, y, qid = data
    model = fit(
        LambdaRankRanker, sp.csr_matrix(X), y, qid, hidden_layer_sizes=(8,),
        feature_scaling=feature_scaling,
    )
    X32 = X.astype(np.float32)
    assert_scores_match(onnx_scores(model, X32), model.predict(X32))


def test_fitted_on_a_dataframe(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = fit(LambdaRankRanker, frame, y, qid, hidden_layer_sizes=(8,))
    X32 = X.astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # X has no feature names
        expected = model.predict(X32)
    assert_scores_match(onnx_scores(model, X32), expected)
    # A sample of the DataFrame: one input matrix, as from its values.
    onx = ranknet_onnx.to_onnx(model, frame.iloc[:1].astype(np.float32))
    assert [i.name for i in onx.graph.input] == ["X"]
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    assert_scores_match(session.run(None, {"X": X32})[0], expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fit32", "fit64"])
@pytest.mark.parametrize("scaling", ["standard", "piecewise"])
def test_large_feature_means_keep_float32_precision(dtype, scaling):
    # Features 1e4 + N(0, 1): standardizing subtracts a mean 1e4 times the
    # spread (and the encoding bin edges of that size). Folded into the first
    # layer (W / scale, b - mean / scale @ W), float32 would cancel about 4
    # of its 7 digits; a float64 mean rounded to float32 alone is off by up
    # to 5e-4 standard deviations.
    X, y, qid = make_ranking(n_queries=12, n_features=6, n_informative=4, max_docs=12, random_state=1)
    X = 1e4 + X
    model = fit(LambdaRankRanker, X.astype(dtype), y, qid, hidden_layer_sizes=(8,), max_iter=20,
                feature_scaling=scaling)
    X32 = X.astype(np.float32)
    expected = model.predict(X32)
    assert np.ptp(expected) > 0.1  # the scores do depend on the features
    assert_scores_match(onnx_scores(model, X32), expected)


@pytest.mark.parametrize("offset, spread", [(1e4, 1.0), (-1e4, 1.0), (1.0, 1e-6)])
def test_log1p_of_features_far_from_zero_keeps_float32_precision(offset, spread):
    # log1p(1e4 + N(0, 1)) is about 9.2 with a spread of 1e-4: rounded to
    # float32 (to 5e-7) before the mean is subtracted, it keeps 2-3 digits of
    # its variation, and standardizing magnified that into relative score
    # errors of ~2e-3 against predict of a float64 model (which computes it
    # in float64). The graph must lose no more than the float32 rounding of
    # the inputs (shared with predict here) and of the standardized values.
    X, y, qid = make_ranking(n_queries=12, n_features=6, n_informative=4, max_docs=12, random_state=1)
    X = offset + spread * X
    model = fit(LambdaRankRanker, X, y, qid, hidden_layer_sizes=(8,), max_iter=20, feature_scaling="log1p")
    X32 = X.astype(np.float32)
    expected = model.predict(X32)
    assert np.ptp(expected) > 0.1  # the scores do depend on the features
    assert_scores_match(onnx_scores(model, X32), expected)


def test_small_values_with_log1p(data):
    # log(1 + x) in float32 loses x below 6e-8; the graph's log1p does not.
    X, y, qid = data
    X = X * 1e-6
    model = fit(LambdaRankRanker, X, y, qid, hidden_layer_sizes=(8,), feature_scaling="log1p")
    X32 = X.astype(np.float32)
    assert_scores_match(onnx_scores(model, X32), model.predict(X32))


@pytest.mark.parametrize("feature_scaling", SCALINGS)
def test_non_finite_input_behaves_as_documented(data, feature_scaling):
    # NaN is a missing value, scored as predict scores it; predict raises
    # on inf, which the graph cannot, and the module's Notes say what it
    # returns instead.
    X, y, qid = data
    model = fit(LambdaRankRanker, X, y, qid, hidden_layer_sizes=(8,), feature_scaling=feature_scaling)
    rows = np.repeat(X[:1].astype(np.float32), 4, axis=0)
    rows[0, 0] = np.nan
    rows[1, 0], rows[2, 0], rows[3, 0] = np.inf, -np.inf, 3e38
    with pytest.raises(ValueError, match="infinity"):
        model.predict(rows[1:2])
    scores = onnx_scores(model, rows)[:, 0]
    if feature_scaling is None:  # no scaling to read missing values: predict refuses them
        with pytest.raises(ValueError, match="NaN"):
            model.predict(rows[:1])
        assert np.isnan(scores[0])
    else:
        assert_scores_match(onnx_scores(model, rows[:1]), model.predict(rows[:1]))
    if feature_scaling == "piecewise":  # clipped to the end bins, as a finite value beyond them
        np.testing.assert_array_equal(scores[1], scores[3])
        assert np.isfinite(scores[2])
    elif feature_scaling == "log1p":
        assert np.isnan(scores[1:3]).all()
    else:
        assert not np.isfinite(scores[1:3]).any()


# ----------------------------------------------------------------------
# Pipelines and BaggingRanker


def _smallest_plain_tanh(estimator, X, y):
    """A scorer that prefers 4 units, no scaling and tanh, so the refit's
    network differs from the CV ranker's own parameters."""
    model = estimator._model
    return -model.coefs[0].shape[1] - (model.scaling is not None) - (model.activation == "relu")


@pytest.mark.parametrize("cls", CV_RANKERS)
def test_cv_rankers_export_the_network_of_their_refit(data, cls):
    X, y, qid = data
    grid = {"activation": ["relu", "tanh"], "hidden_layer_sizes": [(8,), (4,)], "feature_scaling": ["piecewise", None]}
    model = cls(grid, cv=2, max_iter=3, random_state=0, scoring=_smallest_plain_tanh).fit(X, y, qid)
    assert model.best_params_ == {"activation": "tanh", "feature_scaling": None, "hidden_layer_sizes": (4,)}
    X32 = X.astype(np.float32)
    assert_scores_match(onnx_scores(model, X32), model.predict(X32))
    assert_scores_match(onnx_scores(model, X), model.predict(X), dtype=np.float64)


def test_pipeline(data):
    X, y, qid = data
    pipe = make_pipeline(StandardScaler(), LambdaRankRanker(hidden_layer_sizes=(8,), max_iter=3, random_state=0))
    pipe.fit(X, y, lambdarankranker__groups=qid)
    X32 = X.astype(np.float32)
    assert_scores_match(onnx_scores(pipe, X32), pipe.predict(X32))


@pytest.mark.parametrize("cls", RANKERS)
def test_bagging_ranker(data, cls):
    X, y, qid = data
    template = cls(hidden_layer_sizes=(8,), max_iter=3, feature_scaling="log1p")
    model = BaggingRanker(template, n_estimators=3, bootstrap=True, random_state=0).fit(X, y, groups=qid)
    X32 = X.astype(np.float32)
    assert_scores_match(onnx_scores(model, X32), model.predict(X32))
    assert_scores_match(onnx_scores(model, X), model.predict(X), dtype=np.float64)


def test_bagging_pipelines_and_a_pipeline_of_bagging(data):
    X, y, qid = data
    X32 = X.astype(np.float32)
    with sklearn.config_context(enable_metadata_routing=True):
        member = make_pipeline(
            StandardScaler(), LambdaRankRanker(max_iter=3).set_fit_request(groups=True)
        )
        model = BaggingRanker(member, n_estimators=2, random_state=0).fit(X, y, groups=qid)
        pipe = make_pipeline(StandardScaler(), BaggingRanker(LambdaRankRanker(max_iter=3), n_estimators=2))
        pipe.fit(X, y, groups=qid)
    assert_scores_match(onnx_scores(model, X32), model.predict(X32))
    assert_scores_match(onnx_scores(pipe, X32), pipe.predict(X32))


# ----------------------------------------------------------------------
# Refusals


@pytest.mark.parametrize("model", [*(cls() for cls in RANKERS), BaggingRanker()], ids=repr)
def test_unfitted_model(data, model):
    X = data[0].astype(np.float32)
    with pytest.raises(NotFittedError, match="not fitted yet: fit it before converting it to ONNX"):
        skl2onnx.to_onnx(model, X[:1])


@pytest.fixture
def fitted(data):
    X, y, qid = data
    return fit(LambdaRankRanker, X, y, qid, hidden_layer_sizes=(8,), feature_scaling="log1p")


HAS_QUERY_COLUMN = "query_column" in LambdaRankRanker().get_params()
needs_query_column = pytest.mark.skipif(
    not HAS_QUERY_COLUMN, reason="the rankers have no query_column parameter yet"
)


@needs_query_column
@pytest.mark.parametrize("query_column", [0, 3, -1])
def test_query_column_position_is_dropped_in_the_graph(data, query_column):
    X, y, qid = data
    position = query_column % (X.shape[1] + 1)
    Xq32 = np.insert(X, position, qid, axis=1).astype(np.float32)
    model = fit(
        LambdaRankRanker, Xq32, y, None, query_column=query_column,
        hidden_layer_sizes=(8,), feature_scaling="log1p",
    )
    scores = onnx_scores(model, Xq32)
    assert_scores_match(scores, model.predict(Xq32))
    other_ids = Xq32.copy()
    other_ids[:, position] = -7.0
    np.testing.assert_array_equal(onnx_scores(model, other_ids), scores)

    bagging = BaggingRanker(
        LambdaRankRanker(query_column=query_column, max_iter=3), n_estimators=2, random_state=0
    ).fit(Xq32, y)
    assert_scores_match(onnx_scores(bagging, Xq32), bagging.predict(Xq32))


def _click_log_with_columns(data):
    """A small click log from ``data``: X with the session ids in column 0
    and the positions in column 2 (float32), and the clicks."""
    from sklearn_ranknet.datasets import make_clicks

    X, y, qid = data
    log = make_clicks(y, qid, X[:, 0], n_sessions=3, k=5, max_label=4, random_state=0)
    X_log = np.insert(np.insert(X[log.rows], 0, log.sessions, axis=1), 2, log.positions, axis=1)
    return X_log.astype(np.float32), log.clicks


@pytest.mark.parametrize("position_column", [2, -1])
def test_position_column_is_dropped_in_the_graph(data, position_column):
    X_log, clicks = _click_log_with_columns(data)
    if position_column == -1:  # the positions moved to the last column
        X_log = np.concatenate([np.delete(X_log, 2, axis=1), X_log[:, [2]]], axis=1)
    model = fit(LambdaRankRanker, X_log, clicks, None, query_column=0, position_column=position_column,
                hidden_layer_sizes=(8,))
    scores = onnx_scores(model, X_log)
    assert_scores_match(scores, model.predict(X_log))
    other = X_log.copy()
    other[:, [0, position_column]] = -7.0  # neither column is a feature
    np.testing.assert_array_equal(onnx_scores(model, other), scores)


def test_position_column_of_a_bagging_ranker_is_refused_with_a_fix_that_fits(data):
    X_log, clicks = _click_log_with_columns(data)
    bagging = BaggingRanker(
        LambdaRankRanker(max_iter=2, query_column=0), n_estimators=2, position_column=2, random_state=0
    ).fit(X_log, clicks)
    with pytest.raises(NotImplementedError, match=r"position_column=2.*BaggingRanker\(LambdaRankRanker\(position_column=2"):
        skl2onnx.to_onnx(bagging, X_log[:1])
    fixed = BaggingRanker(
        LambdaRankRanker(max_iter=2, query_column=0, position_column=2), n_estimators=2, random_state=0
    ).fit(X_log, clicks)
    assert_scores_match(onnx_scores(fixed, X_log), fixed.predict(X_log))


@needs_query_column
def test_query_column_name_is_refused(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)
    model = fit(LambdaRankRanker, frame, y, None, query_column="qid")
    with pytest.raises(NotImplementedError, match="Remove the query column before export"):
        skl2onnx.to_onnx(model, frame.to_numpy(np.float32)[:1])


@needs_query_column
@pytest.mark.parametrize("bootstrap", [False, True])
def test_query_column_of_a_bagging_ranker_is_refused_with_a_fix_that_fits(data, bootstrap):
    # The refusal used to say "set query_column on its members instead"
    # whatever bootstrap was, and fit refuses exactly that with
    # bootstrap=True ("Set query_column on the BaggingRanker instead"): the
    # two messages sent the user in a circle. Each fix it names must fit
    # and export.
    X, y, qid = data
    Xq32 = np.insert(X, 0, qid, axis=1).astype(np.float32)
    bagging = BaggingRanker(
        LambdaRankRanker(max_iter=2), n_estimators=2, bootstrap=bootstrap, query_column=0, random_state=0
    ).fit(Xq32, y)
    if bootstrap:
        expected = r"bootstrap=True.*refit it on X without the query column.*groups="
        fixed = BaggingRanker(LambdaRankRanker(max_iter=2), n_estimators=2, bootstrap=True, random_state=0)
        fixed.fit(Xq32[:, 1:], y, groups=qid)
        X_fixed = Xq32[:, 1:]
    else:
        expected = r"BaggingRanker\(LambdaRankRanker\(query_column=0, \.\.\.\)\)"
        fixed = BaggingRanker(LambdaRankRanker(max_iter=2, query_column=0), n_estimators=2, random_state=0)
        fixed.fit(Xq32, y)
        X_fixed = Xq32
    with pytest.raises(NotImplementedError, match=expected):
        skl2onnx.to_onnx(bagging, Xq32[:1])
    assert_scores_match(onnx_scores(fixed, X_fixed), fixed.predict(X_fixed))


def test_a_one_dimensional_sample_is_refused_with_the_fix(data, fitted):
    # skl2onnx exported a rank-1 input from X[0], and onnxruntime then
    # failed to load the graph ("axis must be in [-r, r-1]").
    X, y, qid = data
    X = X.astype(np.float32)
    bagging = BaggingRanker(LambdaRankRanker(max_iter=2), n_estimators=2, random_state=0).fit(X, y, groups=qid)
    for model in (fitted, bagging):
        with pytest.raises(ValueError, match=r"must be 2-D.*it is 1-D.*X\[:1\] rather than X\[0\]"):
            skl2onnx.to_onnx(model, X[0])
    assert_scores_match(onnx_scores(fitted, X), fitted.predict(X))  # a 2-D sample still exports


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint8])
def test_a_sample_of_a_type_no_graph_input_takes_is_refused_with_the_fix(data, fitted, dtype):
    # skl2onnx's own errors name no dtype a graph takes.
    with pytest.raises(TypeError, match=f"The sample's dtype is {np.dtype(dtype)}; give one of float32"):
        ranknet_onnx.to_onnx(fitted, data[0][:1].astype(dtype))


def test_unknown_activation_is_refused(data, fitted):
    fitted._model.activation = "softmax"
    with pytest.raises(ValueError, match="activation='softmax'"):
        skl2onnx.to_onnx(fitted, data[0][:1].astype(np.float32))


def test_unknown_input_scaling_is_refused(data, fitted):
    fitted._model.scaling.kind = "quantile"
    with pytest.raises(ValueError, match="unknown input scaling"):
        skl2onnx.to_onnx(fitted, data[0][:1].astype(np.float32))


def test_inconsistent_layers_are_refused(data, fitted):
    fitted.coefs_[-1] = np.vstack([fitted.coefs_[-1]] * 2)
    with pytest.raises(ValueError, match="do not chain"):
        skl2onnx.to_onnx(fitted, data[0][:1].astype(np.float32))


def test_predict_the_converter_does_not_reproduce_is_refused(data, fitted):
    # Stands for a future option that changes predict without the converter
    # knowing: the export is checked against predict on synthetic rows.
    original = fitted.predict
    fitted.predict = lambda X: 2.0 * original(X)
    with pytest.raises(RuntimeError, match="does not reproduce its predict"):
        skl2onnx.to_onnx(fitted, data[0][:1].astype(np.float32))


def test_wrong_number_of_columns_is_refused(data, fitted):
    with pytest.raises(ValueError, match=r"takes 6 columns \(its 6 features\); the ONNX input has 4"):
        skl2onnx.to_onnx(fitted, data[0][:1, :4].astype(np.float32))


@pytest.mark.parametrize("convert", ["skl2onnx", "sklearn_ranknet"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_export_from_a_csr_sample(data, dtype, convert):
    """A CSR sample (load_letor's), which skl2onnx alone cannot guess the
    type of: skl2onnx.to_onnx (taught by importing sklearn_ranknet.onnx)
    and sklearn_ranknet.onnx.to_onnx read its dtype and width, and give the
    graph of the dense sample."""
    import sklearn_ranknet.onnx

    to_onnx = skl2onnx.to_onnx if convert == "skl2onnx" else sklearn_ranknet.onnx.to_onnx
    X, y, qid = data
    X_csr = sp.csr_matrix(X.astype(dtype))
    model = fit(LambdaRankRanker, X_csr, y, qid)
    onx = to_onnx(model, X_csr[:1])
    assert onx.graph.input[0].type.tensor_type.shape.dim[1].dim_value == X.shape[1]
    assert onx.SerializeToString() == skl2onnx.to_onnx(model, X_csr[:1].toarray()).SerializeToString()
    session = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    (scores,) = session.run(None, {"X": X_csr.toarray()})
    assert scores.dtype == dtype
    assert_scores_match(scores, model.predict(X_csr), dtype=dtype)
    with pytest.raises(TypeError, match="float32"):
        to_onnx(model, X_csr[:1].astype(np.int32))
    # Not a sparse sample: skl2onnx's own answer.
    with pytest.raises(TypeError, match="unable to guess type"):
        to_onnx(model, tuple(X[0]))
