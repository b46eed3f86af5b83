"""The scorers inside scikit-learn model selection, with a plain regressor."""

import inspect
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.linear_model import Ridge
from sklearn.metrics import make_scorer
from sklearn.model_selection import (
    GridSearchCV,
    GroupKFold,
    HalvingRandomSearchCV,
    RandomizedSearchCV,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet.inspection import permutation_importance
from sklearn_ranknet.metrics import (
    ap_per_query, err_per_query, err_score, err_scorer, map_score, map_scorer, mrr_score, mrr_scorer,
    ndcg_per_query, ndcg_score, ndcg_scorer, rr_per_query,
)

# Every query-aware scorer factory, for the tests that hold for all of them.
SCORER_FACTORIES = [ndcg_scorer, map_scorer, mrr_scorer, err_scorer]


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _ranking_data(seed=0, n_queries=24, shuffle=True):
    """Small grouped data with interleaved rows and string query ids."""
    rng = np.random.RandomState(seed)
    sizes = rng.randint(2, 12, size=n_queries)
    qid = np.repeat([f"q{i:02d}" for i in range(n_queries)], sizes)
    X = rng.normal(size=(len(qid), 5))
    latent = X @ [1.0, -0.5, 0.3, 0.0, 0.0] + 0.5 * rng.normal(size=len(qid))
    y = np.digitize(latent, [-0.5, 0.5, 1.2, 2.0]).astype(float)
    if shuffle:
        perm = rng.permutation(len(qid))
        X, y, qid = X[perm], y[perm], qid[perm]
    return X, y, qid


def _manual_fold_scores(model, X, y, qid, cv, metric, *, as_one_query=False, **kwargs):
    scores = []
    for train, test in cv.split(X, y, groups=qid):
        fitted = clone(model).fit(X[train], y[train])
        groups = None if as_one_query else qid[test]
        scores.append(metric(y[test], fitted.predict(X[test]), groups=groups, **kwargs))
    return np.array(scores)


def test_grid_search_scores_every_fold_query_by_query(routing):
    X, y, qid = _ranking_data()
    cv = GroupKFold(n_splits=3)
    search = GridSearchCV(Ridge(), {"alpha": [0.01, 100.0]}, cv=cv, scoring=ndcg_scorer(5))
    search.fit(X, y, groups=qid)
    for i, alpha in enumerate([0.01, 100.0]):
        expected = _manual_fold_scores(Ridge(alpha=alpha), X, y, qid, cv, ndcg_score, k=5)
        got = [search.cv_results_[f"split{j}_test_score"][i] for j in range(3)]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        # A whole fold scored as one query would give a different number.
        one_query = _manual_fold_scores(
            Ridge(alpha=alpha), X, y, qid, cv, ndcg_score, as_one_query=True, k=5
        )
        assert not np.allclose(got, one_query)
    best = np.argmax(search.cv_results_["mean_test_score"])
    assert search.best_params_ == search.cv_results_["params"][best]


def test_pipeline_and_several_scorers_with_refit(routing):
    X, y, qid = _ranking_data(seed=1)
    cv = GroupKFold(n_splits=4)
    pipe = make_pipeline(StandardScaler(), Ridge())
    scoring = {"ndcg@10": ndcg_scorer(10), "map": map_scorer(), "ndcg_lin": ndcg_scorer(None, gain="linear")}
    search = GridSearchCV(pipe, {"ridge__alpha": [0.1, 10.0]}, cv=cv, scoring=scoring, refit="ndcg@10")
    search.fit(X, y, groups=qid)
    model = make_pipeline(StandardScaler(), Ridge(alpha=search.best_params_["ridge__alpha"]))
    checks = {
        "ndcg@10": (ndcg_score, {"k": 10}),
        "map": (map_score, {}),
        "ndcg_lin": (ndcg_score, {"gain": "linear"}),
    }
    best = search.best_index_
    for name, (metric, kwargs) in checks.items():
        expected = _manual_fold_scores(model, X, y, qid, cv, metric, **kwargs)
        got = [search.cv_results_[f"split{j}_test_{name}"][best] for j in range(4)]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_cross_validate_takes_groups_through_params(routing):
    X, y, qid = _ranking_data(seed=2)
    cv = GroupKFold(n_splits=3)
    result = cross_validate(Ridge(), X, y, cv=cv, params={"groups": qid}, scoring={"map": map_scorer(k=5)})
    expected = _manual_fold_scores(Ridge(), X, y, qid, cv, map_score, k=5)
    np.testing.assert_allclose(result["test_map"], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("search_cls", [RandomizedSearchCV, HalvingRandomSearchCV])
def test_randomized_and_halving_searches_accept_the_scorer(routing, search_cls):
    X, y, qid = _ranking_data(seed=3, n_queries=40)
    kwargs = {"n_iter": 3} if search_cls is RandomizedSearchCV else {"min_resources": 200}
    search = search_cls(
        Ridge(), {"alpha": [0.01, 0.1, 1.0, 10.0]}, cv=GroupKFold(3), scoring=ndcg_scorer(),
        random_state=0, **kwargs,
    )
    search.fit(X, y, groups=qid)
    scores = search.cv_results_["mean_test_score"]
    assert np.all((scores >= 0) & (scores <= 1))


def test_parallel_search_pickles_the_scorer(routing):
    X, y, qid = _ranking_data(seed=4)
    scorer = pickle.loads(pickle.dumps(ndcg_scorer(3)))
    serial = GridSearchCV(Ridge(), {"alpha": [0.1, 1.0]}, cv=GroupKFold(3), scoring=scorer)
    parallel = clone(serial).set_params(n_jobs=2)
    np.testing.assert_allclose(
        serial.fit(X, y, groups=qid).cv_results_["mean_test_score"],
        parallel.fit(X, y, groups=qid).cv_results_["mean_test_score"],
        rtol=0, atol=1e-12,
    )


def test_scorer_called_directly_with_groups(routing):
    X, y, qid = _ranking_data(seed=5)
    model = Ridge().fit(X, y)
    assert ndcg_scorer(10)(model, X, y, groups=qid) == ndcg_score(y, model.predict(X), groups=qid, k=10)


@pytest.mark.parametrize("make", SCORER_FACTORIES)
def test_routing_off_is_an_error_that_says_how_to_turn_it_on(make):
    X, y, qid = _ranking_data(seed=6)
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        make()(model, X, y)
    search = GridSearchCV(Ridge(), {"alpha": [1.0]}, cv=GroupKFold(3), scoring=make(), error_score="raise")
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        search.fit(X, y, groups=qid)


@pytest.mark.parametrize("make", SCORER_FACTORIES)
def test_routing_on_without_groups_says_what_to_request(make, routing):
    """set_score_request replaces the scorer's requests: one that asks for
    sample_weight alone gets no ids. The error must not advise turning on
    routing (it is on), but name the request."""
    X, y, qid = _ranking_data(seed=6)
    scorer = make().set_score_request(sample_weight=True)
    weights = np.ones(len(y))
    with pytest.raises(ValueError, match=r"although metadata routing is on.*set_score_request\(groups=True"):
        cross_validate(Ridge().set_fit_request(sample_weight=False), X, y, cv=GroupKFold(3), scoring=scorer,
                       params={"groups": qid, "sample_weight": weights}, error_score="raise")


def test_routing_off_with_default_error_score_never_gives_a_number():
    X, y, qid = _ranking_data(seed=7)
    search = GridSearchCV(Ridge(), {"alpha": [1.0]}, cv=GroupKFold(3), scoring=ndcg_scorer())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y, groups=qid)
    assert np.isnan(search.cv_results_["mean_test_score"]).all()
    assert any("enable_metadata_routing=True" in str(w.message) for w in caught)


def test_bad_scorer_arguments_fail_at_creation():
    with pytest.raises(ValueError, match="'k' parameter"):
        ndcg_scorer(0)
    with pytest.raises(ValueError, match="'gain' parameter"):
        ndcg_scorer(gain="cubic")
    with pytest.raises(TypeError):
        map_scorer(gain="linear")  # MAP has no gain
    with pytest.raises(TypeError, match="metadata routing"):
        ndcg_scorer(groups=[0, 0])
    for make in SCORER_FACTORIES:  # per fold, like groups
        with pytest.raises(TypeError, match=r"sample_weight cannot be fixed.*set_score_request"):
            make(sample_weight=np.ones(100))


@pytest.mark.parametrize("make", SCORER_FACTORIES)
def test_the_scorer_function_itself_given_as_scoring_names_the_fix(routing, make):
    # scoring=ndcg_scorer (not ndcg_scorer()) makes the search call the
    # factory as scorer(estimator, X, y).
    X, y, qid = _ranking_data(seed=3)
    search = GridSearchCV(Ridge(), {"alpha": [1.0]}, cv=GroupKFold(3), scoring=make, error_score="raise")
    with pytest.raises(TypeError, match=rf"{make.__name__} makes a scorer.*Pass scoring={make.__name__}\(\)"):
        search.fit(X, y, groups=qid)
    # The factory keeps its own signature (documentation reads it).
    assert list(inspect.signature(make).parameters) == ["k", "metric_kwargs"]
    # make_scorer(ndcg_scorer) calls the factory with (y_true, y_pred).
    wrapped = make_scorer(make)
    with pytest.raises(TypeError, match=rf"as make_scorer\({make.__name__}\) calls.*scoring={make.__name__}\(\)"):
        wrapped(Ridge().fit(X, y), X, y)
    assert repr(make(5)) == repr(make(k=5))  # k alone, positional, still works


@pytest.mark.parametrize(
    ("metric", "scorer"),
    [(ndcg_score, "ndcg_scorer"), (map_score, "map_scorer"), (ndcg_per_query, "ndcg_scorer"),
     (ap_per_query, "map_scorer"), (mrr_score, "mrr_scorer"), (rr_per_query, "mrr_scorer"),
     (err_score, "err_scorer"), (err_per_query, "err_scorer")],
)
def test_a_metric_given_as_scoring_names_the_scorer(routing, metric, scorer):
    # scoring=ndcg_score (the metric, not a scorer): scikit-learn refuses its
    # own metrics there by their module, not these; a search called
    # ndcg_score(estimator, X, y) and reported nan scores.
    X, y, qid = _ranking_data(seed=4)
    search = GridSearchCV(Ridge(), {"alpha": [1.0]}, cv=GroupKFold(3), scoring=metric, error_score="raise")
    with pytest.raises(TypeError, match=rf"{metric.__name__} is a metric, not a scorer.*scoring={scorer}\(\)"):
        search.fit(X, y, groups=qid)
    # permutation_importance (groups as a keyword) and a direct call.
    with pytest.raises(TypeError, match=rf"scoring={scorer}\(\)"):
        permutation_importance(Ridge().fit(X, y), X, y, groups=qid, scoring=metric, n_repeats=1)
    assert list(inspect.signature(metric).parameters)[:3] == ["y_true", "y_score", "groups"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metric(y, X[:, 0])  # no groups: the warning still names the caller's line
    assert [w.filename for w in caught] == [__file__]


def test_scorer_reports_greater_is_better_and_its_settings():
    text = repr(ndcg_scorer(5, gain="linear"))
    assert "k=5" in text and "gain=linear" in text and "greater_is_better=False" not in text


# Found by a mutation audit of the suite (2026-11-27).

def _long_queries(seed=0):
    """Queries of 30 documents with relevant documents below rank 10, so
    that k=10 and the whole list give different values."""
    rng = np.random.RandomState(seed)
    qid = np.repeat(np.arange(6), 30)
    X = rng.normal(size=(len(qid), 3))
    y = (rng.rand(len(qid)) < 0.3).astype(float) * rng.randint(1, 4, len(qid))
    return X, y, qid


def test_default_cut_offs_are_ndcg_at_10_and_map_of_the_whole_list(routing):
    X, y, qid = _long_queries()
    model = Ridge().fit(X, y)
    s = model.predict(X)
    assert ndcg_score(y, s, groups=qid, k=10) != ndcg_score(y, s, groups=qid)
    assert map_score(y, s, groups=qid, k=10) != map_score(y, s, groups=qid)
    assert ndcg_scorer()(model, X, y, groups=qid) == ndcg_score(y, s, groups=qid, k=10)
    assert map_scorer()(model, X, y, groups=qid) == map_score(y, s, groups=qid)


def test_a_pipeline_without_a_query_column_is_transformed_once_per_score(routing):
    """The scorer looks for a query column without sending X through the
    Pipeline's transformers: it ran them a second time on every call (once
    for predict, once to find no column) while checking routed ids."""
    from sklearn.preprocessing import FunctionTransformer

    X, y, qid = _long_queries(1)
    calls = []

    def counted(block):
        calls.append(len(block))
        return block

    pipe = make_pipeline(FunctionTransformer(counted),
                         LambdaRankRanker(hidden_layer_sizes=(), max_iter=2, random_state=0, n_jobs=1))
    pipe.fit(X, y, groups=qid)
    calls.clear()
    assert ndcg_scorer(10)(pipe, X, y, groups=qid) == ndcg_score(y, pipe.predict(X), groups=qid, k=10)
    assert calls == [len(X), len(X)]  # the scorer's predict, then the reference's


def test_routed_groups_must_split_the_rows_as_the_query_column_does(routing):
    """The scorer reads query ids from the estimator's query_column; ids
    routed as well are checked against them, as the estimator's own score
    does. Coarser ones (one query per pair of column ids, e.g. the users a
    GroupKFold splits by, routed to the scorer too) scored merged queries
    without a word; ids that map one to one onto the column score alike."""
    X, y, qid = _long_queries(1)
    with_column = np.column_stack([qid, X])
    ranker = LambdaRankRanker(query_column=0, hidden_layer_sizes=(), max_iter=2, random_state=0,
                              n_jobs=1).fit(with_column, y)
    s = ranker.predict(with_column)
    coarse = qid // 2
    assert ndcg_score(y, s, groups=coarse, k=10) != ndcg_score(y, s, groups=qid, k=10)
    for scorer in (ndcg_scorer(10), map_scorer(), mrr_scorer(), err_scorer(max_label=3)):
        by_column = scorer(ranker, with_column, y)
        assert scorer(ranker, with_column, y, groups=qid + 1000) == by_column  # renamed ids
        with pytest.raises(ValueError, match=r"put the rows in different queries.*set_score_request\(groups=False\)"):
            scorer(ranker, with_column, y, groups=coarse)
    assert ndcg_scorer(10)(ranker, with_column, y) == ndcg_score(y, s, groups=qid, k=10)


@pytest.mark.parametrize("metric", [ndcg_score, map_score, mrr_score, err_score])
def test_make_scorer_of_a_metric_without_groups_names_the_scorer(metric):
    """make_scorer(ndcg_score) given as scoring= with routing off passes the
    metric no groups: each fold was scored as one query under a warning to
    "pass groups=", which the user cannot do there. The warning names the
    scorer that reads the ids; with routing on and groups requested, the
    user's own scorer scores query by query."""
    X, y, qid = _ranking_data(seed=8)
    cv = GroupKFold(n_splits=3)
    scorer = {ndcg_score: "ndcg_scorer", map_score: "map_scorer", mrr_score: "mrr_scorer",
              err_score: "err_scorer"}[metric]
    with pytest.warns(UserWarning, match=rf"{metric.__name__} got no groups from the scikit-learn scorer.*"
                                         rf"scoring={scorer}\(\).*Or turn routing on, request the ids, "
                                         r".*set_score_request\(groups=True\)"):
        cross_validate(Ridge(), X, y, groups=qid, cv=cv, scoring=make_scorer(metric, k=5))
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        result = cross_validate(Ridge(), X, y, cv=cv, params={"groups": qid},
                                scoring=make_scorer(metric, k=5).set_score_request(groups=True))
    expected = _manual_fold_scores(Ridge(), X, y, qid, cv, metric, k=5)
    np.testing.assert_allclose(result["test_score"], expected, rtol=0, atol=1e-12)
    # Routing on, but the scorer requests nothing (and a KFold needs no
    # ids): the advice is to request and pass them, not to turn routing on.
    from sklearn.model_selection import KFold

    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_validate(Ridge(), X, y, cv=KFold(2), scoring=make_scorer(metric, k=5))
    advice = {str(w.message).split("refuse")[-1] for w in caught if "got no groups" in str(w.message)}
    assert len(advice) == 1
    assert "set_score_request(groups=True), and pass them" in advice.pop()
    assert not any("turn routing on" in str(w.message) for w in caught)


def test_a_frozen_ranker_under_routing_is_scored_by_the_scorer(routing):
    """FrozenEstimator requests no metadata, so with routing on its default
    score (the ranker's) gets no groups however they are passed. The error
    told the user to pass groups and keep the ranker's requests, both
    already done; it now names the wrapper and the scorer that works."""
    from sklearn.frozen import FrozenEstimator

    X, y, qid = _long_queries(2)
    ranker = LambdaRankRanker(hidden_layer_sizes=(), max_iter=2, random_state=0, n_jobs=1).fit(X, y, groups=qid)
    cv = GroupKFold(n_splits=3)
    with pytest.raises(ValueError, match=r"requests nothing.*FrozenEstimator.*scoring=ndcg_scorer\(10\)"):
        cross_validate(FrozenEstimator(ranker), X, y, cv=cv, params={"groups": qid}, error_score="raise")
    result = cross_validate(FrozenEstimator(ranker), X, y, cv=cv, params={"groups": qid}, scoring=ndcg_scorer(10))
    expected = [ndcg_score(y[test], ranker.predict(X[test]), groups=qid[test], k=10)
                for _, test in cv.split(X, y, qid)]
    np.testing.assert_allclose(result["test_score"], expected, rtol=0, atol=1e-12)
