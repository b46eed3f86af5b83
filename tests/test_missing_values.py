"""Missing values (NaN in X), learned by the input scaling: each input of a
missing value is 0 after standardization (its mean over the rows that have
the feature), but for a feature whose missingness tells the labels: it gets
a missing indicator input the network learns from, and its missing values
read as the present value labelled most alike (``_inputs.InputScaling``,
``_missingness``)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet._inputs import InputScaling, stays_sparse
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score
from tests import _reference as ref

KINDS = ["piecewise", "standard", "log1p"]
FAST = {"max_iter": 3, "random_state": 0}


def _with_missing(X, share, seed=0, labels=None):
    """A copy of X with a share of its values NaN (column 1 kept complete):
    at random, or with ``labels`` mostly in the rows of a label above the
    median, so that the rankers keep every indicator (``_missingness``)."""
    X = np.array(X, dtype=np.float64)
    X[:, 1] = np.abs(X[:, 1]) + 1.0  # never 0 (a stored CSR value)
    chance = np.full(X.shape, share)
    if labels is not None:
        relevant = np.asarray(labels) > np.median(labels)
        chance[:] = np.where(relevant, min(3 * share, 1.0), share / 10)[:, None]
    missing = np.random.default_rng(seed).random(X.shape) < chance
    missing[:, 1] = False
    X[missing] = np.nan
    return X


def _raw(n_rows=240, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.poisson(3.0, n_rows) * 10.0,
        rng.normal(size=n_rows),
        1e3 + rng.normal(size=n_rows),
        rng.standard_t(3, n_rows),
        np.full(n_rows, 2.0),
    ])
    X = _with_missing(X, 0.25)
    X[:, 4] = np.where(np.arange(n_rows) % 3 == 0, np.nan, 2.0)  # a constant with gaps
    return X


def _csr_with_nan(X, density):
    """CSR of X with (1 - density) of its present values 0 (implicit) and
    its NaN stored."""
    X = X.copy()
    present = ~np.isnan(X)
    X[present & (np.random.default_rng(5).random(X.shape) > density)] = 0.0
    filled = np.where(np.isnan(X), 1.0, X)
    csr = sp.csr_matrix(filled)
    rows, columns = csr.nonzero()
    csr.data = X[rows, columns]
    return csr, X


# ----------------------------------------------------------------------
# A pure-Python reference of the scaling


def _reference_transform(kind, value, edges):
    """The inputs of one present value of a feature, before standardization."""
    if kind == "standard":
        return [value]
    if kind == "log1p":
        return [np.sign(value) * np.log1p(abs(value))]
    if len(edges) == 1:
        return [0.0]
    out = []
    for lower, upper in zip(edges[:-1], edges[1:]):
        def clip(x):
            return min(max((x - lower) / (upper - lower), 0.0), 1.0)
        out.append(clip(value) - clip(0.0))
    return out


def _reference_inputs(kind, X_train, X, edges=None, fill=None):
    """The network's inputs of X by the definition: each feature's inputs
    standardized over the training rows where it is present, 0 for a missing
    value (or those of ``fill[j]``, when given), then a standardized
    indicator for each feature with NaN in training (of ``fill``'s, when
    given)."""
    fill = {} if fill is None else fill
    n_train, n_features = X_train.shape
    edges = edges if edges is not None else [None] * n_features
    columns = []
    for j in range(n_features):
        present = [_reference_transform(kind, v, edges[j]) for v in X_train[:, j] if not np.isnan(v)]
        present = np.array(present, dtype=np.float64)
        mean = present.mean(axis=0)
        std = present.std(axis=0)
        std[std <= len(present) * np.finfo(float).eps * np.abs(mean)] = 1.0
        for i_input in range(len(mean)):
            column = []
            for v in X[:, j]:
                if np.isnan(v) and j in fill:
                    column.append((_reference_transform(kind, fill[j], edges[j])[i_input] - mean[i_input])
                                  / std[i_input])
                elif np.isnan(v):
                    column.append(0.0)
                else:
                    column.append((_reference_transform(kind, v, edges[j])[i_input] - mean[i_input]) / std[i_input])
            columns.append(column)
    for j in range(n_features):
        n_missing = int(np.isnan(X_train[:, j]).sum())
        if n_missing and (not fill or j in fill):
            p = n_missing / n_train
            s = np.sqrt(p * (1 - p)) or 1.0
            columns.append([(float(np.isnan(v)) - p) / s for v in X[:, j]])
    return np.array(columns).T


def _sparse_raw(seed):
    """_raw with few values stored: most present values 0, few NaN."""
    X = _raw(seed=seed)
    rng = np.random.default_rng(seed + 10)
    X[np.isnan(X) & (rng.random(X.shape) < 0.9)] = 0.0
    return _csr_with_nan(X, 0.05)


def _telling_labels(X, feature, seed=0):
    """Labels of queries of 8 rows, high where ``feature`` is missing, and
    their offsets."""
    rng = np.random.default_rng(seed)
    y = np.where(np.isnan(X[:, feature]), 3.0, 0.0) + rng.integers(0, 2, len(X))
    return y, np.arange(0, len(X) + 1, 8)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", ["dense", "csr", "sparse"])
@pytest.mark.parametrize("labelled", [False, True])
def test_inputs_are_the_reference(kind, form, labelled):
    X = _raw()
    X_test = _raw(seed=1)
    given_train, given_test = X, X_test
    if form == "csr":  # read as dense blocks
        given_train, X = _csr_with_nan(X, 0.5)
        given_test, X_test = _csr_with_nan(X_test, 0.5)
    if form == "sparse":  # stays sparse
        (given_train, X), (given_test, X_test) = _sparse_raw(0), _sparse_raw(1)
        assert stays_sparse(given_train) and stays_sparse(given_test)
    fill = None
    if labelled:  # feature 0's missingness tells the labels; the others' do not
        y, offsets = _telling_labels(X, 0)
        scaling = InputScaling.fit(kind, given_train, labels=(y, offsets))
        np.testing.assert_array_equal(scaling.indicated, [0])
        fill = {0: ref.missing_fill(X[:, 0], ref.within_query_residuals(y, np.diff(offsets)))}
        np.testing.assert_allclose(scaling.imputed, [fill[0]], rtol=1e-15)
    else:
        scaling = InputScaling.fit(kind, given_train)
        np.testing.assert_array_equal(scaling.indicated, np.flatnonzero(np.isnan(X).any(axis=0)))
    edges = scaling.encoding.edges if kind == "piecewise" else None
    if kind == "piecewise":  # the edges are the distinct quantiles of the present values
        for j, e in enumerate(edges):
            present = X[~np.isnan(X[:, j]), j]
            np.testing.assert_allclose(e, np.unique(np.quantile(present, np.linspace(0, 1, 9))), rtol=1e-12)
    expected = _reference_inputs(kind, X, X_test, edges, fill)
    got = scaling.rows(given_test, slice(None))
    if sp.issparse(got):  # CSR that stays sparse: standardized by the folded first layer
        mean, scale = scaling.mean, scaling.scale
        got = (got.toarray() - mean) / scale
    assert not np.isnan(got).any()
    # Standardized values are O(1..100) and computed with a few roundings each.
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    share=st.floats(0.0, 0.9),
    seed=st.integers(0, 2**16),
    column=st.integers(0, 3),
)
def test_a_missing_value_changes_only_its_features_inputs(kind, share, seed, column):
    """Whatever the pattern of NaN: no input is NaN, a missing value's
    inputs are 0 and its indicator is the indicator's largest value, and
    making a value missing changes no other feature's inputs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4)) * [1.0, 10.0, 0.1, 1e3]
    X[rng.random(X.shape) < share] = np.nan
    X[0, :] = 1.0  # every feature has a value
    scaling = InputScaling.fit(kind, X)
    inputs = scaling.rows(X, slice(None))
    assert not np.isnan(inputs).any()
    source = np.arange(4) if scaling.encoding is None else scaling.encoding.source
    n = scaling.n_transformed
    missing = np.isnan(X[:, source])
    assert (inputs[:, :n][missing] == 0.0).all()
    for k, j in enumerate(scaling.indicated):
        indicator = inputs[:, n + k]
        np.testing.assert_array_equal(indicator == indicator.max(), np.isnan(X[:, j]))
    row = X[:1].copy()
    row[0, column] = np.nan
    changed = scaling.rows(row, slice(None))[0] != scaling.rows(X[:1], slice(None))[0]
    mine = np.concatenate([source == column, scaling.indicated == column])
    assert not changed[~mine].any()


def test_a_feature_complete_in_training_reads_nan_as_its_mean():
    """Documented: NaN at predict in a feature that had none in training
    scores as the feature's training mean (standardized 0), with no
    indicator."""
    X, y, qid = make_ranking(40, n_features=6, n_informative=4, random_state=0)[:3]
    ranker = LambdaRankRanker(feature_scaling="standard", **FAST).fit(X, y, groups=qid)
    assert len(ranker.missing_features_) == 0
    X_nan, X_mean = X[:20].copy(), X[:20].copy()
    X_nan[::3, 2] = np.nan
    X_mean[::3, 2] = ranker.feature_mean_[2]
    np.testing.assert_array_equal(ranker.predict(X_nan), ranker.predict(X_mean))


# ----------------------------------------------------------------------
# The rankers


@pytest.mark.parametrize("Ranker", [LambdaRankRanker, RankNetRanker, ListNetRanker])
@pytest.mark.parametrize("kind", KINDS)
def test_sparse_rows_with_missing_values_score_as_dense(Ranker, kind):
    X, y, qid = make_ranking(40, n_features=8, n_informative=5, random_state=0)[:3]
    csr, X_dense = _csr_with_nan(_with_missing(X, 0.03, labels=y), 0.03)
    assert stays_sparse(csr)
    ranker = Ranker(feature_scaling=kind, **FAST).fit(csr, y, groups=qid)
    dense = Ranker(feature_scaling=kind, **FAST).fit(X_dense, y, groups=qid)
    assert ranker.coefs_[0].shape == dense.coefs_[0].shape
    assert len(dense.missing_features_)  # the indicators' sparse path is exercised
    np.testing.assert_array_equal(ranker.missing_features_, dense.missing_features_)
    # One model scores both forms alike; only the folded first layer's
    # rounding differs (scores are O(1), sums of ~100 products).
    np.testing.assert_allclose(ranker.predict(csr), ranker.predict(X_dense), rtol=1e-9, atol=1e-9)


def test_the_missing_indicator_is_learned():
    """Relevance told only by which values are missing (missing not at
    random): the ranker learns it from the indicator and ranks held-out
    queries perfectly; the feature's values themselves are noise."""
    rng = np.random.default_rng(0)
    n_queries, per_query = 60, 10
    qid = np.repeat(np.arange(n_queries), per_query)
    y = (rng.random(len(qid)) < 0.3).astype(float)
    X = rng.normal(size=(len(qid), 3))
    X[y > 0, 0] = np.nan
    train = qid < 40
    ranker = LambdaRankRanker(random_state=0, max_iter=60).fit(X[train], y[train], groups=qid[train])
    assert list(ranker.missing_features_) == [0]
    scores = ranker.predict(X[~train])
    assert ndcg_score(y[~train], scores, groups=qid[~train], k=10) == 1.0


def test_partial_fit_reads_later_missing_values_without_indicators():
    X, y, qid = make_ranking(30, n_features=6, n_informative=4, random_state=0)[:3]
    ranker = RankNetRanker(random_state=0).partial_fit(X, y, groups=qid)
    X_nan = _with_missing(X, 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ranker.partial_fit(X_nan, y, groups=qid)
    assert len(ranker.missing_features_) == 0  # the scaling is the first call's
    assert np.isfinite(ranker.predict(X_nan)).all()


def test_bagging_members_learn_missing_values():
    X, y, qid = make_ranking(40, n_features=6, n_informative=4, random_state=0)[:3]
    X_nan = _with_missing(X, 0.3, labels=y)
    bag = BaggingRanker(LambdaRankRanker(**FAST), n_estimators=3, random_state=0).fit(X_nan, y, groups=qid)
    members = np.mean([m.predict(X_nan) for m in bag.estimators_], axis=0)
    np.testing.assert_allclose(bag.predict(X_nan), members, rtol=1e-12, atol=1e-12)
    assert all(len(m.missing_features_) == X.shape[1] - 1 for m in bag.estimators_)


def test_validation_rows_with_missing_values():
    """X_val may hold NaN too; its score is that of predict."""
    X, y, qid = make_ranking(60, n_features=6, n_informative=4, random_state=0)[:3]
    X_nan = _with_missing(X, 0.3, labels=y)
    val = qid >= 45
    ranker = LambdaRankRanker(random_state=0, max_iter=4, early_stopping=True).fit(
        X_nan[~val], y[~val], groups=qid[~val], X_val=X_nan[val], y_val=y[val], groups_val=qid[val],
    )
    expected = ndcg_score(y[val], ranker.predict(X_nan[val]), groups=qid[val], k=10)
    assert ranker.best_validation_score_ == pytest.approx(expected, abs=1e-12)
    assert ranker.best_validation_score_ == max(ranker.validation_scores_)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", KINDS)
def test_onnx_scores_missing_values_as_predict(kind, dtype):
    pytest.importorskip("onnxruntime")
    import onnxruntime as ort

    from sklearn_ranknet.onnx import to_onnx

    X, y, qid = make_ranking(40, n_features=6, n_informative=4, random_state=0)[:3]
    X_nan = _with_missing(X, 0.3, labels=y).astype(dtype)
    X_test = X_nan.copy()
    X_test[::4, 1] = np.nan  # also where training had no NaN
    ranker = LambdaRankRanker(feature_scaling=kind, **FAST).fit(X_nan, y, groups=qid)
    assert len(ranker.missing_features_) == X.shape[1] - 1  # the graph's indicators too
    session = ort.InferenceSession(to_onnx(ranker, X_test[:1]).SerializeToString())
    scores = session.run(None, {session.get_inputs()[0].name: X_test})[0].ravel()
    expected = ranker.predict(X_test)
    # float32: a graph computes in float32 (eps 1.2e-7) what predict computes
    # in float64 for a float32 model's rows: scores O(1) from ~100 terms.
    tolerance = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(scores, expected, rtol=tolerance, atol=tolerance * np.abs(expected).max())


def test_the_cv_ranker_and_a_grid_search_take_missing_values():
    """Model selection over data with NaN: the CV ranker's refit reads them
    as a plain fit does, and GridSearchCV scores its folds."""
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from sklearn_ranknet import LambdaRankRankerCV
    from sklearn_ranknet.metrics import ndcg_scorer

    X, y, qid = make_ranking(45, n_features=6, n_informative=4, random_state=0)[:3]
    X_nan = _with_missing(X, 0.3, labels=y)
    grid = {"alpha": [1.0, 20.0]}
    cv = LambdaRankRankerCV(grid, cv=3, **FAST).fit(X_nan, y, groups=qid)
    plain = LambdaRankRanker(**FAST, **cv.best_params_).fit(X_nan, y, groups=qid)
    assert len(plain.missing_features_)
    np.testing.assert_array_equal(cv.missing_features_, plain.missing_features_)
    np.testing.assert_allclose(cv.predict(X_nan), plain.predict(X_nan), rtol=1e-12, atol=1e-12)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(LambdaRankRanker(**FAST), grid, cv=GroupKFold(3), scoring=ndcg_scorer(10))
        search.fit(X_nan, y, groups=qid)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
