"""The CV rankers (LambdaRankRankerCV, RankNetRankerCV, ListNetRankerCV):
the search GridSearchCV would run, in passes of networks trained together.

A fold's networks share their lead's random stream (``_stack.py``), so
settings of one network shape drawing nothing else (no input noise, no
dropout) train exactly as GridSearchCV's separate fits, up to where BLAS
rounds the shared first-layer product: the comparisons allow that rounding
(see tests/test_stack.py).
"""

import inspect
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import (
    BaggingRanker, LambdaRankRanker, LambdaRankRankerCV, ListNetRanker, ListNetRankerCV, RankNetRanker, RankNetRankerCV,
)
from sklearn_ranknet import _cv
from sklearn_ranknet._stack import fit_together
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import map_scorer, ndcg_scorer

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

PAIRS = [(LambdaRankRankerCV, LambdaRankRanker), (RankNetRankerCV, RankNetRanker), (ListNetRankerCV, ListNetRanker)]
FIXED = dict(hidden_layer_sizes=(16,), max_iter=6, input_noise=0.0, random_state=0, n_jobs=1)
RTOL, ATOL = 1e-7, 1e-9


def _data(n_queries=36, seed=0):
    return make_ranking(n_queries, n_features=8, n_informative=4, max_docs=12, random_state=seed)


def _grid_search(ranker, grid, X, y, groups, sample_weight=None, scoring=None):
    with sklearn.config_context(enable_metadata_routing=True):
        if sample_weight is not None:
            ranker = ranker.set_fit_request(sample_weight=True)
        search = GridSearchCV(ranker, grid, cv=GroupKFold(3), scoring=scoring or ndcg_scorer(10))
        fit_params = {} if sample_weight is None else {"sample_weight": sample_weight}
        return search.fit(X, y, groups=groups, **fit_params)


@pytest.mark.parametrize("cv_class, ranker_class", PAIRS, ids=["lambdarank", "ranknet", "listnet"])
def test_the_search_of_gridsearchcv_with_the_same_settings(cv_class, ranker_class):
    X, y, groups = _data()
    grid = {"alpha": [0.5, 20.0], "learning_rate_init": [1e-3, 1e-2]}
    expected = _grid_search(ranker_class(**FIXED), grid, X, y, groups)
    search = cv_class(grid, cv=GroupKFold(3), scoring=ndcg_scorer(10), **FIXED).fit(X, y, groups)
    assert search.cv_results_["params"] == expected.cv_results_["params"]
    for fold in range(3):
        key = f"split{fold}_test_score"
        np.testing.assert_allclose(search.cv_results_[key], expected.cv_results_[key], rtol=RTOL)
    np.testing.assert_array_equal(search.cv_results_["rank_test_score"], expected.cv_results_["rank_test_score"])
    assert search.best_params_ == expected.best_params_
    assert search.best_score_ == pytest.approx(expected.best_score_, rel=RTOL)
    assert set(search.cv_results_) == set(expected.cv_results_)
    for name in ("param_alpha", "param_learning_rate_init"):
        assert list(search.cv_results_[name]) == list(expected.cv_results_[name])
    # The refit is the best setting on all the data: GridSearchCV's too.
    np.testing.assert_allclose(search.predict(X), expected.best_estimator_.predict(X), rtol=RTOL, atol=ATOL)
    if hasattr(expected.best_estimator_, "alpha_"):  # alpha accepts "auto": its value is published
        assert search.alpha_ == expected.best_estimator_.alpha_ == expected.best_params_["alpha"]
    assert search.n_splits_ == 3 and search.refit_time_ > 0


def test_sample_weight_reaches_every_fold_as_in_gridsearchcv():
    X, y, groups = _data()
    weights = np.random.RandomState(0).uniform(0.2, 3.0, groups.max() + 1)[groups]
    grid = {"alpha": [0.5, 20.0]}
    expected = _grid_search(LambdaRankRanker(**FIXED), grid, X, y, groups, sample_weight=weights)
    search = LambdaRankRankerCV(grid, cv=GroupKFold(3), scoring=ndcg_scorer(10), **FIXED)
    search.fit(X, y, groups, sample_weight=weights)
    for fold in range(3):
        key = f"split{fold}_test_score"
        np.testing.assert_allclose(search.cv_results_[key], expected.cv_results_[key], rtol=RTOL)
    unweighted = LambdaRankRankerCV(grid, cv=GroupKFold(3), scoring=ndcg_scorer(10), **FIXED).fit(X, y, groups)
    assert not np.allclose(unweighted.cv_results_["split0_test_score"], search.cv_results_["split0_test_score"])


def _spy(monkeypatch):
    calls = []

    def recording(runs, counts=None):
        calls.append(len(runs))
        return fit_together(runs, counts)

    monkeypatch.setattr(_cv, "fit_together", recording)
    return calls


def test_settings_of_a_fold_train_in_one_pass_whatever_their_shape(monkeypatch):
    X, y, groups = _data()
    calls = _spy(monkeypatch)
    grid = {"hidden_layer_sizes": [(8,), (16,), (8, 4)], "alpha": [1.0, 10.0], "dropout": [0.0, 0.2],
            "input_noise": [0.0, 0.5]}
    search = LambdaRankRankerCV(grid, cv=3, max_iter=4, random_state=0, n_jobs=1).fit(X, y, groups)
    assert calls == [24, 24, 24]
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (24,) and np.isfinite(scores).all() and (scores > 0).all()
    assert search.best_params_ == search.cv_results_["params"][int(np.argmax(scores))]


def test_settings_that_cannot_share_a_pass_get_their_own(monkeypatch):
    X, y, groups = _data()
    calls = _spy(monkeypatch)
    grid = [{"batch_size": [4, 8], "alpha": [1.0, 10.0]}, {"solver": ["lbfgs"]}]
    search = RankNetRankerCV(grid, cv=2, max_iter=4, random_state=0, n_jobs=1).fit(X, y, groups)
    assert calls == [2, 2, 2, 2]  # per fold: one pass per batch size; L-BFGS fits alone
    assert len(search.cv_results_["params"]) == 5
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert np.ma.is_masked(search.cv_results_["param_solver"][0])


def test_default_grid_and_folds():
    X, y, groups = _data(n_queries=30)
    search = LambdaRankRankerCV(max_iter=3, hidden_layer_sizes=(8,), random_state=0, n_jobs=1).fit(X, y, groups)
    assert [p["alpha"] for p in search.cv_results_["params"]] == _cv.DEFAULT_GRID["alpha"]
    assert search.n_splits_ == 5


def test_query_column_gives_the_search_of_groups():
    X, y, groups = _data()
    grid = {"alpha": [0.5, 20.0]}
    by_groups = LambdaRankRankerCV(grid, cv=3, **FIXED).fit(X, y, groups)
    with_column = np.column_stack([groups, X])
    by_column = LambdaRankRankerCV(grid, cv=3, query_column=0, **FIXED).fit(with_column, y)
    np.testing.assert_allclose(by_column.cv_results_["mean_test_score"], by_groups.cv_results_["mean_test_score"],
                               rtol=RTOL)
    np.testing.assert_allclose(by_column.predict(with_column), by_groups.predict(X), rtol=RTOL, atol=ATOL)
    assert by_column.score(with_column, y) == pytest.approx(by_groups.score(X, y, groups=groups), rel=RTOL)


def test_scoring_other_than_the_default():
    X, y, groups = _data()
    grid = {"alpha": [0.5, 20.0]}
    expected = _grid_search(LambdaRankRanker(**FIXED), grid, X, y, groups, scoring=map_scorer())
    search = LambdaRankRankerCV(grid, cv=GroupKFold(3), scoring=map_scorer(), **FIXED).fit(X, y, groups)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], expected.cv_results_["mean_test_score"],
                               rtol=RTOL)
    default = LambdaRankRankerCV(grid, cv=GroupKFold(3), **FIXED).fit(X, y, groups)  # the ranker's score
    ndcg = LambdaRankRankerCV(grid, cv=GroupKFold(3), scoring=ndcg_scorer(10), **FIXED).fit(X, y, groups)
    np.testing.assert_allclose(default.cv_results_["mean_test_score"], ndcg.cv_results_["mean_test_score"])


@pytest.mark.parametrize("routing", [False, True])
def test_in_a_pipeline_and_in_nested_cross_validation(routing):
    X, y, groups = _data()
    search = LambdaRankRankerCV({"alpha": [0.5, 20.0]}, cv=2, **FIXED)
    with sklearn.config_context(enable_metadata_routing=routing):
        pipeline = make_pipeline(StandardScaler(), clone(search))
        if routing:
            pipeline.fit(X, y, groups=groups)
            scores = cross_validate(clone(search), X, y, cv=GroupKFold(3), params={"groups": groups})
        else:
            pipeline.fit(X, y, lambdarankrankercv__groups=groups)
            with_column = np.column_stack([groups, X])
            scores = cross_validate(clone(search).set_params(query_column=0), with_column, y, groups=groups,
                                    cv=GroupKFold(3))
    inner = pipeline[-1]
    assert inner.best_params_["alpha"] in (0.5, 20.0)
    assert np.isfinite(pipeline.predict(X)).all()
    assert scores["test_score"].shape == (3,) and ((0 < scores["test_score"]) & (scores["test_score"] <= 1)).all()


def test_without_groups_all_rows_are_one_query_with_one_warning():
    X, y, _ = _data(n_queries=10)
    search = LambdaRankRankerCV({"alpha": [1.0, 10.0]}, cv=2, **FIXED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    messages = [str(w.message) for w in caught if "got no groups" in str(w.message)]
    assert len(messages) == 1
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


@pytest.mark.parametrize("grid, match", [
    ({"alphas": [1.0]}, r"param_grid names \['alphas'\], which LambdaRankRanker does not take"),
    ({"warm_start": [True]}, r"cannot vary: warm_start"),
    ([{"alpha": [1.0]}, {"query_column": [0]}], r"param_grid names \['query_column'\]"),
])
def test_a_grid_of_unknown_parameters_is_refused(grid, match):
    X, y, groups = _data(n_queries=10)
    with pytest.raises(ValueError, match=match):
        LambdaRankRankerCV(grid, cv=2, **FIXED).fit(X, y, groups)


@pytest.mark.parametrize("grid, cv, match", [
    ([], 2, "param_grid holds no setting"),
    ({"alpha": [1.0]}, [], "cv gave no split"),
])
def test_a_search_of_no_fit_is_refused_as_in_gridsearchcv(grid, cv, match):
    X, y, groups = _data(n_queries=10)
    with pytest.raises(ValueError, match=f"No fits were performed: {match}"):
        LambdaRankRankerCV(grid, cv=cv, **FIXED).fit(X, y, groups)


def test_a_plain_function_scores_as_in_gridsearchcv():
    """scoring(estimator, X, y): called as GridSearchCV calls it, with no
    metadata (a function requests none)."""
    X, y, groups = _data(n_queries=12)
    calls = []

    def larger_alpha(estimator, X_test, y_test):
        calls.append(len(y_test))
        return estimator.alpha

    search = LambdaRankRankerCV({"alpha": [1.0, 7.0, 3.0]}, cv=2, scoring=larger_alpha, **FIXED).fit(X, y, groups)
    assert search.best_params_ == {"alpha": 7.0} and search.best_score_ == 7.0
    assert len(calls) == 6 and sum(calls) == 3 * len(y)  # each setting on both folds' held-out rows


def test_scorers_of_grouped_metrics_get_the_query_ids_however_they_ask():
    """make_scorer(ndcg_score) (groups accepted, not requested), an aliased
    request and a function with a groups parameter score query by query,
    as ndcg_scorer does; a refused request scores each fold as one list."""
    from sklearn.metrics import make_scorer

    from sklearn_ranknet.metrics import ndcg_score

    X, y, groups = _data(n_queries=12)
    grid = {"alpha": [1.0, 9.0]}

    def scores(scoring):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # one list: ndcg_score says it got no groups
            search = LambdaRankRankerCV(grid, cv=2, scoring=scoring, **FIXED).fit(X, y, groups)
        return search.cv_results_["split0_test_score"], search.cv_results_["split1_test_score"]

    expected = scores(ndcg_scorer(10))

    def by_function(estimator, X_test, y_test, groups):
        return ndcg_score(y_test, estimator.predict(X_test), groups=groups, k=10)

    np.testing.assert_array_equal(scores(make_scorer(ndcg_score, k=10)), expected)
    np.testing.assert_array_equal(scores(by_function), expected)
    with sklearn.config_context(enable_metadata_routing=True):
        np.testing.assert_array_equal(scores(ndcg_scorer(10).set_score_request(groups="qid")), expected)
        one_list = scores(make_scorer(ndcg_score, k=10).set_score_request(groups=False))
    assert not np.allclose(one_list, expected)


def test_splits_that_cut_queries_are_warned_about():
    X, y, groups = _data(n_queries=10)
    rows = np.arange(len(y))
    with pytest.warns(UserWarning, match="Split 0 of cv puts rows of 10 queries"):
        LambdaRankRankerCV({"alpha": [1.0]}, cv=[(rows[::2], rows[1::2])], **FIXED).fit(X, y, groups)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Split .* of cv")  # whole queries: no warning
        LambdaRankRankerCV({"alpha": [1.0]}, cv=list(GroupKFold(2).split(X, y, groups)), **FIXED).fit(X, y, groups)


def test_no_partial_fit_and_no_warm_start():
    search = LambdaRankRankerCV()
    assert not hasattr(search, "partial_fit")
    assert "warm_start" not in search.get_params()


@pytest.mark.parametrize("cv_class, ranker_class", PAIRS, ids=["lambdarank", "ranknet", "listnet"])
def test_parameters_are_the_rankers_and_the_searchs(cv_class, ranker_class):
    # A parameter added to a ranker must be added to its CV ranker too.
    ours = inspect.signature(cv_class.__init__).parameters
    theirs = inspect.signature(ranker_class.__init__).parameters
    assert set(ours) == (set(theirs) - {"warm_start"}) | {"param_grid", "cv", "scoring"}
    for name, parameter in theirs.items():
        if name not in ("self", "warm_start"):
            assert ours[name].default == parameter.default, name
    for name in ("param_grid", "cv", "scoring"):
        assert name in cv_class.__doc__
    assert "warm_start :" not in cv_class.__doc__


def test_failed_fits_score_nan_as_in_gridsearchcv():
    # A step so large that the weights overflow: that setting's fits fail
    # (and leave their pass), the other settings go on.
    X, y, groups = _data()
    grid = {"learning_rate_init": [1e-3, 1e300]}
    search = LambdaRankRankerCV(grid, cv=3, **FIXED)
    with pytest.warns(FitFailedWarning, match=r"(?s)3 of the 6 fits failed.*non-finite weights"):
        search.fit(X, y, groups)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores[0]) and np.isnan(scores[1])
    assert list(search.cv_results_["rank_test_score"]) == [1, 2]
    assert search.best_params_ == {"learning_rate_init": 1e-3}
    with pytest.raises(ValueError, match="All the 3 fits failed"):
        LambdaRankRankerCV({"learning_rate_init": [1e300]}, cv=3, **FIXED).fit(X, y, groups)


def test_a_member_whose_weights_overflow_fails_the_bag_as_its_fit_would():
    X, y, groups = _data()
    with pytest.raises(ValueError, match="non-finite weights"):
        BaggingRanker(LambdaRankRanker(**dict(FIXED, learning_rate_init=1e300)), n_estimators=2).fit(X, y, groups)


def test_a_validation_set_reaches_every_fold_and_the_refit_as_in_gridsearchcv():
    """fit(X_val=...): every fold's fits and the refit stop early on it, as
    GridSearchCV passes fit parameters to every fit (routed there)."""
    X, y, groups = _data()
    X_val, y_val, groups_val = _data(12, seed=1)
    validation = {"X_val": X_val, "y_val": y_val, "groups_val": groups_val}
    grid = {"alpha": [0.5, 20.0]}
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = LambdaRankRanker(**FIXED).set_fit_request(X_val=True, y_val=True, groups_val=True)
        expected = GridSearchCV(ranker, grid, cv=GroupKFold(3), scoring=ndcg_scorer(10))
        expected.fit(X, y, groups=groups, **validation)
    search = LambdaRankRankerCV(grid, cv=GroupKFold(3), scoring=ndcg_scorer(10), **FIXED).fit(
        X, y, groups, **validation)
    for fold in range(3):
        key = f"split{fold}_test_score"
        np.testing.assert_allclose(search.cv_results_[key], expected.cv_results_[key], rtol=RTOL)
    best = expected.best_estimator_
    assert search.early_stopping_ is True and search.validation_scores_ == pytest.approx(best.validation_scores_)
    np.testing.assert_allclose(search.predict(X), best.predict(X), rtol=RTOL, atol=ATOL)
    plain = LambdaRankRankerCV(grid, cv=GroupKFold(3), scoring=ndcg_scorer(10), **FIXED).fit(X, y, groups)
    assert plain.validation_scores_ is None or plain.validation_scores_ != search.validation_scores_


def test_a_validation_set_with_a_query_column_and_dataframes():
    pd = pytest.importorskip("pandas")
    X, y, groups = _data()
    X_val, y_val, groups_val = _data(12, seed=1)
    columns = [f"x{j}" for j in range(X.shape[1])]
    frame, frame_val = pd.DataFrame(X, columns=columns), pd.DataFrame(X_val, columns=columns)
    frame.insert(0, "qid", groups)
    frame_val.insert(0, "qid", groups_val)
    grid = {"alpha": [0.5, 20.0]}
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names")  # the fold fits see arrays
        by_column = LambdaRankRankerCV(grid, cv=3, query_column="qid", **FIXED).fit(frame, y, X_val=frame_val,
                                                                                   y_val=y_val)
    by_groups = LambdaRankRankerCV(grid, cv=3, **FIXED).fit(X, y, groups, X_val=X_val, y_val=y_val,
                                                           groups_val=groups_val)
    np.testing.assert_allclose(by_column.cv_results_["mean_test_score"], by_groups.cv_results_["mean_test_score"],
                               rtol=RTOL)
    assert list(by_column.feature_names_in_) == columns
    np.testing.assert_allclose(by_column.predict(frame), by_groups.predict(X), rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="early_stopping=False"):
        LambdaRankRankerCV(grid, early_stopping=False, **FIXED).fit(X, y, groups, X_val=X_val, y_val=y_val)
