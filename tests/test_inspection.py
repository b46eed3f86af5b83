"""permutation_importance by query: a slow reference, input types, scorers,
routing, validation and invariants."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import Ridge
from sklearn.metrics import get_scorer, make_scorer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state

from sklearn_ranknet import BaggingRanker, LambdaRankRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.inspection import permutation_importance
from sklearn_ranknet.metrics import map_score, map_scorer, ndcg_score, ndcg_scorer


@pytest.fixture(autouse=True)
def _quiet_scorer_construction():
    """Building a scorer checks its options on a two-row sample, which may
    warn about the missing groups; that is not what these tests look at."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="No groups were given")
        yield


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _interleaved(n_queries=12, n_features=4, seed=0, string_ids=True):
    """Small data with shuffled rows, string ids, and a linear ranker."""
    rng = np.random.RandomState(seed)
    sizes = rng.randint(1, 9, size=n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    if string_ids:
        qid = np.array([f"q{q:02d}" for q in qid])
    X = rng.normal(size=(len(qid), n_features))
    y = np.digitize(X @ np.linspace(1.0, 0.1, n_features) + 0.5 * rng.normal(size=len(qid)), [-1, 0, 1, 2])
    perm = rng.permutation(len(qid))
    X, y, qid = X[perm], y[perm], qid[perm]
    return X, y, qid, Ridge(alpha=1.0).fit(X, y)


# --------------------------------------------------------------------------
# The slow, obvious reference


def _ndcg10(estimator, X, y, groups, sample_weight=None):
    return ndcg_score(y, estimator.predict(X), groups=groups, k=10, sample_weight=sample_weight)


def reference_importances(
    estimator, X, y, groups, *, n_repeats, random_state, permute="within_queries",
    max_queries=None, sample_weight=None, score=_ndcg10,
):
    """Loop over features and repeats; permute one column with lists and
    dicts; score with ndcg_score. The random draws, in the order the
    function documents: the query subsets of max_queries (if any), one seed
    per feature, then per repeat one uniform number per row; a row takes the
    value of the row that sorts to its place by those numbers, among the rows
    of its own query ("within_queries") or among all rows."""
    X = np.asarray(X, dtype=float)
    y, groups = list(y), list(groups)
    n_samples, n_features = X.shape
    rng = check_random_state(random_state)
    ids = sorted(set(groups))
    subsets = None
    # Queries of weight 0 count for nothing: never drawn.
    candidates = [
        q for q, query in enumerate(ids)
        if sample_weight is None or sample_weight[groups.index(query)] > 0
    ]
    if max_queries is not None and max_queries < len(candidates):
        subsets = [
            sorted(candidates[i] for i in rng.choice(len(candidates), size=max_queries, replace=False))
            for _ in range(n_repeats)
        ]
    seeds = rng.randint(np.iinfo(np.int32).max + 1, size=n_features)

    def rows_for(repeat):
        if subsets is None:
            return list(range(n_samples))
        chosen = {ids[q] for q in subsets[repeat]}
        return [i for i in range(n_samples) if groups[i] in chosen]

    def score_rows(matrix, rows):
        weights = None if sample_weight is None else [sample_weight[i] for i in rows]
        return score(estimator, matrix, [y[i] for i in rows], [groups[i] for i in rows], weights)

    importances = np.zeros((n_features, n_repeats))
    for j in range(n_features):
        feature_rng = np.random.RandomState(seeds[j])
        for repeat in range(n_repeats):
            rows = rows_for(repeat)
            baseline = score_rows(X[rows], rows)
            u = feature_rng.random_sample(len(rows))
            blocks = {}
            for position, row in enumerate(rows):
                key = groups[row] if permute == "within_queries" else None
                blocks.setdefault(key, []).append(position)
            permuted = X[rows].copy()
            for positions in blocks.values():
                shuffled = sorted(positions, key=lambda p: u[p])
                for place, source in zip(positions, shuffled):
                    permuted[place, j] = X[rows[source], j]
            importances[j, repeat] = baseline - score_rows(permuted, rows)
    return importances


@pytest.mark.parametrize("permute", ["within_queries", "all_rows"])
def test_matches_the_reference(permute):
    X, y, qid, model = _interleaved()
    result = permutation_importance(model, X, y, groups=qid, n_repeats=4, permute=permute, random_state=3)
    expected = reference_importances(model, X, y, qid, n_repeats=4, random_state=3, permute=permute)
    np.testing.assert_array_equal(result.importances, expected)
    np.testing.assert_array_equal(result.importances_mean, expected.mean(axis=1))
    np.testing.assert_array_equal(result.importances_std, expected.std(axis=1))
    assert result.importances.shape == (X.shape[1], 4)
    assert (result.importances[0] > 0).all()  # the strongest feature


def test_matches_the_reference_with_query_subsets_and_weights():
    X, y, qid, model = _interleaved(n_queries=15, seed=1)
    ids = np.unique(qid)
    weight_of = dict(zip(ids, np.random.RandomState(0).uniform(0.5, 2.0, size=len(ids))))
    weights = np.array([weight_of[q] for q in qid])
    result = permutation_importance(
        model, X, y, groups=qid, n_repeats=3, max_queries=6, sample_weight=weights, random_state=7
    )
    expected = reference_importances(
        model, X, y, qid, n_repeats=3, random_state=7, max_queries=6, sample_weight=weights
    )
    np.testing.assert_array_equal(result.importances, expected)


def test_query_subsets_skip_queries_of_weight_zero():
    # A subset of zero-weight queries alone cannot be scored; they used to
    # be drawn ("sample_weight is zero for every query", by chance).
    X, y, qid, model = _interleaved(n_queries=15, seed=1)
    ids = np.unique(qid)
    weights = np.where(np.isin(qid, ids[[1, 4, 8, 11]]), 2.0, 0.0)
    for seed in range(5):
        result = permutation_importance(
            model, X, y, groups=qid, n_repeats=2, max_queries=2, sample_weight=weights, random_state=seed
        )
        expected = reference_importances(
            model, X, y, qid, n_repeats=2, random_state=seed, max_queries=2, sample_weight=weights
        )
        np.testing.assert_array_equal(result.importances, expected)
    with pytest.raises(ValueError, match="max_queries=5 is more than the 4 queries of nonzero weight"):
        permutation_importance(model, X, y, groups=qid, max_queries=5, sample_weight=weights)


def test_ensembles_whose_estimators_are_an_array():
    # Looking for a query column through a BaggingRanker's members must not
    # ask the truth of another ensemble's estimators_ (an ndarray here).
    from sklearn.ensemble import GradientBoostingRegressor

    X, y, qid, _ = _interleaved(n_queries=8, seed=0)
    model = GradientBoostingRegressor(n_estimators=3, random_state=0).fit(X, y)
    assert isinstance(model.estimators_, np.ndarray) and model.estimators_.size > 1
    result = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0)
    expected = reference_importances(model, X, y, qid, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(result.importances, expected)


def test_max_queries_as_a_fraction_and_all_queries():
    X, y, qid, model = _interleaved(n_queries=10, seed=2)
    by_fraction = permutation_importance(model, X, y, groups=qid, max_queries=0.45, random_state=0)
    by_count = permutation_importance(model, X, y, groups=qid, max_queries=4, random_state=0)
    np.testing.assert_array_equal(by_fraction.importances, by_count.importances)
    everything = permutation_importance(model, X, y, groups=qid, random_state=0)
    for all_queries in (10, 1.0):
        result = permutation_importance(model, X, y, groups=qid, max_queries=all_queries, random_state=0)
        np.testing.assert_array_equal(result.importances, everything.importances)


# --------------------------------------------------------------------------
# What it finds


def test_informative_features_rank_above_noise_with_lambdarank():
    """make_ranking: relevance depends on the first n_informative columns
    (with 6 features and 3 informative none of the noise columns is built
    from an informative one). Importances on held-out queries."""
    kwargs = dict(n_queries=150, n_features=6, n_informative=3, noise=0.2)
    X, y, qid = make_ranking(**kwargs, random_state=0)
    X_test, y_test, qid_test = make_ranking(**kwargs, random_state=1)
    model = LambdaRankRanker(hidden_layer_sizes=(32,), max_iter=100, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # not converged in 100 epochs
        model.fit(X, y, qid)
    result = permutation_importance(model, X_test, y_test, groups=qid_test, n_repeats=10, random_state=0)
    mean = result.importances_mean
    assert mean[:3].min() > mean[3:].max() + 0.005, mean
    assert np.abs(mean[3:]).max() < 0.005, mean


def test_informative_features_rank_above_noise_with_ridge():
    """A linear model only finds the monotone part of the relevance. Here
    the informative feature has a linear effect (plus a "sweet spot" term a
    linear model cannot use), and noise feature 1 is correlated with it."""
    kwargs = dict(n_queries=150, n_features=6, n_informative=1, noise=0.2)
    X, y, qid = make_ranking(**kwargs, random_state=0)
    X_test, y_test, qid_test = make_ranking(**kwargs, random_state=1)
    model = make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    result = permutation_importance(model, X_test, y_test, groups=qid_test, n_repeats=10, random_state=0)
    mean = result.importances_mean
    assert mean[0] > 0.05 and np.abs(mean[1:]).max() < 0.005, mean
    # the raw Ridge, unscaled, agrees
    raw = permutation_importance(Ridge().fit(X, y), X_test, y_test, groups=qid_test, random_state=0)
    assert int(np.argmax(raw.importances_mean)) == 0


def test_a_constant_column_has_importance_exactly_zero():
    X, y, qid, _ = _interleaved(seed=4)
    X[:, 2] = 3.5
    model = make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    for permute in ("within_queries", "all_rows"):
        result = permutation_importance(model, X, y, groups=qid, n_repeats=6, permute=permute, random_state=0)
        assert (result.importances[2] == 0).all()
        assert result.importances_mean[2] == 0 and result.importances_std[2] == 0


def test_a_query_level_column_is_zero_within_queries_only():
    """A column constant within each query cannot order documents: shuffled
    within queries it does not change, even for a model that uses it; shuffled
    across queries it adds noise to every query's scores."""
    X, y, qid, _ = _interleaved(seed=5, string_ids=False)
    X[:, 3] = (qid * 7919) % 13
    model = Ridge(alpha=1e-3).fit(X, y + 0.3 * X[:, 3])
    within = permutation_importance(model, X, y, groups=qid, n_repeats=5, random_state=0)
    assert (within.importances[3] == 0).all()
    across = permutation_importance(model, X, y, groups=qid, n_repeats=5, permute="all_rows", random_state=0)
    assert across.importances_mean[3] > 0


def test_queries_of_one_document_never_change():
    X, y, _, model = _interleaved(seed=6)
    singletons = np.arange(len(y))
    result = permutation_importance(model, X, y, groups=singletons, random_state=0)
    assert (result.importances == 0).all()


# --------------------------------------------------------------------------
# Inputs


def test_n_jobs_does_not_change_the_result():
    X, y, qid, model = _interleaved(n_features=5, seed=7)
    one = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=0, n_jobs=1)
    two = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(one.importances, two.importances)
    threads = pytest.importorskip("joblib").parallel_backend("threading", n_jobs=2)
    with threads:
        three = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(one.importances, three.importances)


@pytest.mark.parametrize("max_queries", [None, 0.5])
@pytest.mark.parametrize("to_sparse", [sp.csr_matrix, sp.csr_array, sp.csc_matrix, sp.coo_array, sp.coo_matrix,
                                       sp.dia_matrix, sp.bsr_matrix, sp.lil_matrix, sp.dok_matrix])
def test_sparse_gives_the_dense_result(to_sparse, max_queries):
    # Every scipy format, with a subset of the queries too (which takes
    # rows: formats without row indexing are read as CSR).
    X, y, qid, model = _interleaved(seed=8)
    X[np.abs(X) < 0.6] = 0.0  # sparse for real, with zeros moving around
    dense = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=0, max_queries=max_queries)
    X_sparse = to_sparse(X)
    sparse = permutation_importance(model, X_sparse, y, groups=qid, n_repeats=3, random_state=0,
                                    max_queries=max_queries)
    np.testing.assert_array_equal(sparse.importances, dense.importances)
    np.testing.assert_array_equal(X_sparse.toarray(), X)  # untouched


def test_sparse_column_permutation_keeps_the_format_and_values():
    from sklearn_ranknet.inspection import _ColumnPermuter

    X = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, np.nan], [0.0, 3.0, 4.0], [5.0, 0.0, 0.0]])
    source = np.array([2, 0, 3, 1])
    for fmt in ("csr", "csc"):
        for col in range(3):
            permuted = _ColumnPermuter(sp.csr_matrix(X).asformat(fmt), col).permuted(source)
            expected = X.copy()
            expected[:, col] = X[source, col]
            assert permuted.format == fmt
            np.testing.assert_array_equal(permuted.toarray(), expected)


def test_dataframe_with_column_names_in_a_pipeline():
    pd = pytest.importorskip("pandas")
    X, y, qid, _ = _interleaved(seed=9)
    names = ["bm25", "pagerank", "clicks", "age"]
    frame = pd.DataFrame(X, columns=names, index=np.arange(len(y))[::-1] * 3)
    by_name = make_pipeline(ColumnTransformer([("num", StandardScaler(), ["bm25", "clicks", "pagerank"])]), Ridge())
    result = permutation_importance(by_name.fit(frame, y), frame, y, groups=pd.Series(qid), n_repeats=3, random_state=0)
    # the same numbers as an array with the columns selected by position
    by_position = make_pipeline(ColumnTransformer([("num", StandardScaler(), [0, 2, 1])]), Ridge())
    expected = permutation_importance(by_position.fit(X, y), X, y, groups=qid, n_repeats=3, random_state=0)
    np.testing.assert_allclose(result.importances, expected.importances, rtol=0, atol=1e-12)
    assert (result.importances[3] == 0).all()  # "age" is dropped by the pipeline
    assert list(frame.columns) == names
    np.testing.assert_array_equal(frame.to_numpy(), X)  # untouched


def test_dataframe_with_a_categorical_column():
    pd = pytest.importorskip("pandas")
    from sklearn.preprocessing import OneHotEncoder

    X, y, qid, _ = _interleaved(seed=9)
    frame = pd.DataFrame(X[:, :2], columns=["bm25", "pagerank"])
    frame["source"] = pd.Categorical(np.where(X[:, 0] + X[:, 2] > 0, "web", "news"))
    encode = ColumnTransformer(
        [("num", StandardScaler(), ["bm25", "pagerank"]), ("cat", OneHotEncoder(), ["source"])]
    )
    model = make_pipeline(encode, Ridge()).fit(frame, y)
    result = permutation_importance(model, frame, y, groups=qid, n_repeats=3, random_state=0)
    assert result.importances.shape == (3, 3)
    assert result.importances_mean[2] > 0  # "source" carries X[:, 2]
    assert isinstance(frame["source"].dtype, pd.CategoricalDtype)


def test_list_input_and_integer_labels():
    X, y, qid, model = _interleaved(seed=10)
    from_lists = permutation_importance(model, X.tolist(), y.tolist(), groups=qid.tolist(), random_state=0)
    from_arrays = permutation_importance(model, X, y, groups=qid, random_state=0)
    np.testing.assert_array_equal(from_lists.importances, from_arrays.importances)


def test_inputs_are_not_modified():
    X, y, qid, model = _interleaved(seed=11)
    X_before, y_before, qid_before = X.copy(), y.copy(), qid.copy()
    permutation_importance(model, X, y, groups=qid, random_state=0)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(y, y_before)
    np.testing.assert_array_equal(qid, qid_before)


def test_read_only_input():
    X, y, qid, model = _interleaved(seed=12)
    X.setflags(write=False)
    result = permutation_importance(model, X, y, groups=qid, random_state=0)
    assert np.isfinite(result.importances).all()


def test_groups_none_is_an_error_not_one_query():
    """Without ids every row would be scored as one list, a silent wrong
    number; one list is still possible when asked for with zeros."""
    X, y, _, model = _interleaved(seed=13)
    with pytest.raises(ValueError, match="groups=np.zeros"):
        permutation_importance(model, X, y, groups=None, random_state=0)
    as_one = permutation_importance(model, X, y, groups=np.zeros(len(y)), random_state=0)
    assert np.isfinite(as_one.importances).all()


# --------------------------------------------------------------------------
# Estimators


def test_bagging_ranker_and_a_ranker_pipeline():
    X, y, qid = make_ranking(n_queries=30, n_features=5, n_informative=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bagging = BaggingRanker(
            LambdaRankRanker(hidden_layer_sizes=(), max_iter=20, random_state=0), n_estimators=2, random_state=0
        ).fit(X, y, qid)
        pipe = make_pipeline(StandardScaler(), LambdaRankRanker(hidden_layer_sizes=(8,), max_iter=20, random_state=0))
        pipe.fit(X, y, lambdarankranker__groups=qid)
    for model in (bagging, pipe):
        result = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0)
        expected = reference_importances(model, X, y, qid, n_repeats=2, random_state=0)
        np.testing.assert_array_equal(result.importances, expected)


def test_unfitted_estimator_raises():
    X, y, qid, _ = _interleaved()
    with pytest.raises(sklearn.exceptions.NotFittedError):
        permutation_importance(Ridge(), X, y, groups=qid)


# --------------------------------------------------------------------------
# Scorers and metadata routing


@pytest.mark.parametrize("routing_on", [False, True])
def test_our_scorers_with_routing_off_and_on(routing_on):
    X, y, qid, model = _interleaved(seed=14)
    with sklearn.config_context(enable_metadata_routing=routing_on):
        default = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=0)
        ndcg = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=0, scoring=ndcg_scorer(10))
        ap = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=0, scoring=map_scorer(5))
        # the global setting is as it was
        assert sklearn.get_config()["enable_metadata_routing"] is routing_on
    np.testing.assert_array_equal(default.importances, ndcg.importances)

    def map5(estimator, X, y, groups, sample_weight=None):
        return map_score(y, estimator.predict(X), groups=groups, k=5)

    expected = reference_importances(model, X, y, qid, n_repeats=3, random_state=0, score=map5)
    np.testing.assert_array_equal(ap.importances, expected)


def test_routing_setting_reaches_joblib_workers_unchanged(routing):
    X, y, qid, model = _interleaved(seed=15)
    one = permutation_importance(model, X, y, groups=qid, random_state=0, scoring=ndcg_scorer(5))
    two = permutation_importance(model, X, y, groups=qid, random_state=0, scoring=ndcg_scorer(5), n_jobs=2)
    np.testing.assert_array_equal(one.importances, two.importances)


def test_make_scorer_of_a_grouped_metric_without_a_request():
    """make_scorer(ndcg_score) takes groups (request unset): it is given them."""
    X, y, qid, model = _interleaved(seed=16)
    scorer = make_scorer(ndcg_score, k=10)
    result = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0, scoring=scorer)
    expected = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(result.importances, expected.importances)


def test_scorer_requests_with_an_alias_or_refusal(routing):
    X, y, qid, model = _interleaved(seed=16)
    alias = make_scorer(ndcg_score, k=10).set_score_request(groups="qid")
    result = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0, scoring=alias)
    expected = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(result.importances, expected.importances)
    refused = make_scorer(ndcg_score, k=10).set_score_request(groups=False)
    with pytest.raises(ValueError, match="does not take `groups`"):
        permutation_importance(model, X, y, groups=qid, scoring=refused)


@pytest.mark.parametrize("routing_on", [False, True])
def test_a_scorer_without_groups_is_refused(routing_on):
    X, y, qid, model = _interleaved()
    with sklearn.config_context(enable_metadata_routing=routing_on):
        with pytest.raises(ValueError, match="does not take `groups`.*query by query"):
            permutation_importance(model, X, y, groups=qid, scoring=get_scorer("r2"))


def test_labels_above_30_name_the_scorer_that_takes_a_linear_gain():
    # The default scorer's exponential gain cannot take them; the advice must
    # be one this function accepts (it has no gain parameter of its own).
    X, y, qid = make_ranking(n_queries=12, n_features=3, n_informative=2, random_state=0)
    y = 10.0 * y
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match=r'up to 40.*scoring=ndcg_scorer\(10, gain="linear"\)'):
        permutation_importance(model, X, y, groups=qid)
    result = permutation_importance(
        model, X, y, groups=qid, n_repeats=1, random_state=0, scoring=ndcg_scorer(10, gain="linear")
    )
    assert result.importances.shape == (3, 1)


@pytest.mark.parametrize("routing_on", [False, True])
def test_plain_callable_scorer(routing_on):
    X, y, qid, model = _interleaved(seed=17)
    calls = []

    def scorer(estimator, X, y, groups):
        calls.append(len(groups))
        return ndcg_score(y, estimator.predict(X), groups=groups, k=3)

    with sklearn.config_context(enable_metadata_routing=routing_on):
        result = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0, scoring=scorer)
    expected = reference_importances(
        model, X, y, qid, n_repeats=2, random_state=0,
        score=lambda e, X, y, g, w: ndcg_score(y, e.predict(X), groups=g, k=3),
    )
    np.testing.assert_array_equal(result.importances, expected)
    assert calls == [len(y)] * (1 + 2 * X.shape[1])


@pytest.mark.parametrize("routing_on", [False, True])
def test_several_metrics(routing_on):
    X, y, qid, model = _interleaved(seed=18)
    scoring = {"ndcg@10": ndcg_scorer(10), "map": map_scorer(), "mine": lambda e, X, y, groups: 1.0}
    with sklearn.config_context(enable_metadata_routing=routing_on):
        result = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0, scoring=scoring)
    assert set(result) == {"ndcg@10", "map", "mine"}
    single = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0, scoring=map_scorer())
    np.testing.assert_array_equal(result["map"].importances, single.importances)
    np.testing.assert_array_equal(result["mine"].importances, np.zeros((X.shape[1], 2)))

    def both(estimator, X, y, groups):
        scores = estimator.predict(X)
        return {"ndcg": ndcg_score(y, scores, groups=groups, k=10), "map": map_score(y, scores, groups=groups)}

    from_dict = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0, scoring=both)
    np.testing.assert_array_equal(from_dict["map"].importances, single.importances)
    np.testing.assert_array_equal(from_dict["ndcg"].importances, result["ndcg@10"].importances)
    # Inside a dict each scorer gives one float: a dict within a dict is
    # refused by name (it crashed in numpy, "float() argument must be ...").
    with pytest.raises(ValueError, match=r"scoring\['both'\] returned a dict \(\['map', 'ndcg'\]\)"):
        permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0,
                               scoring={"both": both, "map": map_scorer()})


def test_sample_weight_reaches_every_kind_of_scorer():
    X, y, qid, model = _interleaved(seed=19, string_ids=False)
    weights = 1.0 + (qid % 3)
    expected = reference_importances(model, X, y, qid, n_repeats=2, random_state=0, sample_weight=weights)
    default = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0, sample_weight=weights)
    np.testing.assert_array_equal(default.importances, expected)
    with sklearn.config_context(enable_metadata_routing=True):
        weighted = ndcg_scorer(10).set_score_request(groups=True, sample_weight=True)
    result = permutation_importance(
        model, X, y, groups=qid, n_repeats=2, random_state=0, sample_weight=weights, scoring=weighted
    )
    np.testing.assert_array_equal(result.importances, expected)
    unweighted = permutation_importance(model, X, y, groups=qid, n_repeats=2, random_state=0)
    assert not np.array_equal(unweighted.importances, expected)


def test_the_scorer_objects_are_picklable():
    from sklearn_ranknet.inspection import _check_scoring

    for scoring in (None, ndcg_scorer(5), {"a": map_scorer()}):
        pickle.loads(pickle.dumps(_check_scoring(scoring)))


# --------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_repeats": 0}, ValueError, "n_repeats"),
        ({"permute": "rows"}, ValueError, "permute"),
        ({"scoring": "ndcg"}, ValueError, "scoring"),
        ({"scoring": {}}, ValueError, "empty dict"),
        ({"scoring": {"a": 3}}, TypeError, r"scoring\['a'\] must be a callable"),
        ({"max_queries": 0}, ValueError, "max_queries"),
        ({"max_queries": 1.5}, ValueError, "max_queries"),
        ({"max_queries": 100}, ValueError, "max_queries=100 is more than the 12 queries"),
        ({"n_jobs": "two"}, ValueError, "n_jobs"),
    ],
)
def test_bad_parameters(kwargs, error, match):
    X, y, qid, model = _interleaved()
    with pytest.raises(error, match=match):
        permutation_importance(model, X, y, groups=qid, **kwargs)


@pytest.mark.parametrize(
    "scoring, match",
    [
        ("ndcg", r"scoring='ndcg' is a name.*scoring=ndcg_scorer\(10\)"),
        ("neg_mean_squared_error", r"scoring='neg_mean_squared_error' is a name"),
        (["ndcg", "map"], r"scoring is a list.*\{'ndcg@10': ndcg_scorer\(10\), 'map': map_scorer\(\)\}"),
        ((ndcg_scorer(5),), r"scoring is a tuple.*dict"),
    ],
)
def test_scoring_by_name_or_as_a_list_says_what_to_pass(scoring, match):
    # scikit-learn takes these; here they were refused with the generic
    # "must be a callable, an instance of 'dict' or None", which names
    # neither the scorers that score by query nor the dict form.
    X, y, qid, model = _interleaved()
    with pytest.raises(ValueError, match=match):
        permutation_importance(model, X, y, groups=qid, scoring=scoring)


def test_bad_lengths_and_weights():
    X, y, qid, model = _interleaved(string_ids=False)
    with pytest.raises(ValueError, match="groups has .* entries but the data has"):
        permutation_importance(model, X, y, groups=qid[:-1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        permutation_importance(model, X, y[:-1], groups=qid)
    with pytest.raises(ValueError, match="sample_weight"):
        permutation_importance(model, X, y, groups=qid, sample_weight=np.ones(len(y) - 1))
    varying = np.arange(len(y), dtype=float)
    with pytest.raises(ValueError, match="same on every row of a query"):
        permutation_importance(model, X, y, groups=qid, sample_weight=varying)
    with pytest.raises(ValueError, match="NaN or infinite query ids"):
        permutation_importance(model, X, y, groups=np.where(qid == qid[0], np.nan, qid))
    with pytest.raises(TypeError, match="groups"):
        permutation_importance(model, X, y)  # groups is required


# --------------------------------------------------------------------------
# Properties


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.permutations(list("abcdefghijkl")),
    st.sampled_from(["within_queries", "all_rows"]),
)
def test_relabelling_the_queries_changes_nothing(seed, new_ids, permute):
    """The permutations depend on the rows and which rows share a query, not
    on the ids or their sort order (up to the order of the mean's sum)."""
    X, y, qid, model = _interleaved(n_queries=12, seed=seed % 1000, string_ids=False)
    relabelled = np.array(new_ids)[qid]
    a = permutation_importance(model, X, y, groups=qid, n_repeats=2, permute=permute, random_state=seed)
    b = permutation_importance(model, X, y, groups=relabelled, n_repeats=2, permute=permute, random_state=seed)
    np.testing.assert_allclose(a.importances, b.importances, rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_one_query_shuffles_within_as_across(seed):
    X, y, _, model = _interleaved(n_queries=3, seed=seed % 1000)
    one = np.full(len(y), "only")
    within = permutation_importance(model, X, y, groups=one, n_repeats=2, random_state=seed)
    across = permutation_importance(model, X, y, groups=one, n_repeats=2, permute="all_rows", random_state=seed)
    np.testing.assert_array_equal(within.importances, across.importances)


class _Interactions(RegressorMixin, BaseEstimator):
    """A fixed nonlinear scorer in which column 0 (query-level in the test)
    switches how the other columns are used."""

    def fit(self, X, y=None):
        self.fitted_ = True
        return self

    def predict(self, X):
        X = np.asarray(X)
        return np.where(X[:, 0] > 0, X[:, 1], -X[:, 2]) + np.sin(X[:, 0] * X[:, 1])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=8), st.integers(0, 2**31 - 1))
def test_a_query_level_feature_is_zero_within_queries_for_any_model(sizes, seed):
    rng = np.random.RandomState(seed % 2**32)
    qid = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    X = rng.normal(size=(len(qid), 3))
    X[:, 0] = rng.normal(size=len(sizes))[qid]
    y = rng.randint(0, 4, size=len(qid))
    model = _Interactions().fit(X)
    result = permutation_importance(model, X, y, groups=qid, n_repeats=3, random_state=seed)
    assert (result.importances[0] == 0).all()
