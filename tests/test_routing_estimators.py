"""Metadata routing of ``groups`` to the rankers inside GridSearchCV and
Pipeline, the warnings a fit gives when it gets no groups or nothing to learn
from them, and score() without groups."""

import re
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import map_score, map_scorer, ndcg_score, ndcg_scorer

from ._data import FAST, RANKERS, SHORT_FIT, _small, _twenty_queries

# Most fits here use few epochs on purpose; the convergence warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _routing_data():
    return make_ranking(30, max_docs=20, random_state=0)


def _pipeline(**ranker_params):
    return make_pipeline(StandardScaler(), LambdaRankRanker(max_iter=5, random_state=0, **ranker_params))


def _no_groups_warnings(caught):
    return [w for w in caught if "got no groups" in str(w.message)]


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_no_groups_warning_names_the_method_and_points_at_its_caller(method):
    X, y, _ = _small(3)
    ranker = LambdaRankRanker(max_iter=2, random_state=0, **FAST)
    with pytest.warns(UserWarning, match=rf"^{method} got no groups") as caught:
        getattr(ranker, method)(X, y)
    assert [w.filename for w in _no_groups_warnings(caught)] == [__file__]


def _nothing_to_learn_warnings(caught):
    return [w for w in caught if "found no query with two documents of different relevance" in str(w.message)]


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("case", [
    "groups_are_row_ids", "labels_tie_in_every_query", "weights_zero_where_they_differ",
    "weight_only_on_a_one_row_query",
])
def test_fit_warns_when_no_query_has_anything_to_rank(cls, case):
    X, y, qid = _small(6)
    weights = None
    if case == "groups_are_row_ids":
        qid, cause = np.arange(len(y)), "every query holds a single row: pass query ids as groups"
    elif case == "weight_only_on_a_one_row_query":
        # The cause is read from the queries of positive weight: the
        # weightless ones, whose labels differ, once made it "share one
        # relevance label".
        qid = qid.copy()
        qid[0] = qid.min() - 1
        weights, cause = np.where(qid == qid[0], 1.0, 0.0), "every query with a positive sample_weight holds a single row"
    elif case == "labels_tie_in_every_query":
        y, cause = np.repeat(y[:1], len(y)), "share one relevance label"
    else:  # the one query with distinct labels weighs nothing
        y = np.where(qid == qid[0], y, 1.0)
        weights, cause = np.where(qid == qid[0], 0.0, 1.0), "of different relevance"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid, sample_weight=weights)
    [warning] = _nothing_to_learn_warnings(caught)
    assert cause in str(warning.message) and warning.filename == __file__
    # One query with two labels is something to learn: no warning.
    y[:2] = [0.0, 1.0]
    qid[:2] = -1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
    assert not _nothing_to_learn_warnings(caught)


def test_map_lambdarank_warns_when_every_document_is_relevant():
    """Under metric="map" labels 1 and 3 are equally relevant: graded labels
    all above 0 leave nothing to learn (the weights stay where they start),
    and the warning says why; one irrelevant document gives something."""
    X, y, qid = _small(6)
    graded = y + 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranker = LambdaRankRanker(metric="map", max_iter=2, alpha=0.0, random_state=0, **FAST)
        ranker.fit(X, graded, groups=qid)
    [warning] = _nothing_to_learn_warnings(caught)
    assert "all relevant (label > 0) or all not" in str(warning.message)
    assert ranker.loss_curve_ == [0.0, 0.0]
    graded[0] = 0.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LambdaRankRanker(metric="map", max_iter=2, random_state=0, **FAST).fit(X, graded, groups=qid)
    assert not _nothing_to_learn_warnings(caught)


@pytest.mark.parametrize("cls, params, warns", [
    (RankNetRanker, {}, "LambdaRankRanker\\(k=30\\)"),
    (LambdaRankRanker, {}, "set k"),
    (LambdaRankRanker, {"k": 3}, None),  # n * k pairs: under the bound
    (ListNetRanker, {}, None),  # linear in n
])
def test_a_query_of_too_many_pairs_warns_with_the_linear_ways_out(cls, params, warns, monkeypatch):
    """Past LONG_QUERY_PAIRS pairs in one query an epoch's time grows with
    the square of its length: a warning names the query and the rankers
    whose cost is linear in it. (The bound is lowered here: a real query of
    45,000 documents would take seconds per epoch.)"""
    from sklearn_ranknet import _fit_checks

    X, y, qid = _small(6, max_docs=15)
    longest = int(np.bincount(qid).max())
    monkeypatch.setattr(_fit_checks, "LONG_QUERY_PAIRS", longest * 4)  # longest**2 / 2 pairs is more; 4 * longest / 2 less
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(max_iter=1, random_state=0, **FAST, **params).fit(X, y, groups=qid)
    found = [w for w in caught if "longest query" in str(w.message)]
    if warns is None:
        assert not found
    else:
        [warning] = found
        assert re.search(warns, str(warning.message)) and f"holds {longest:,} documents" in str(warning.message)
        assert warning.filename == __file__


def test_partial_fit_warns_that_a_chunk_without_anything_to_learn_keeps_the_model():
    X, y, qid = _small(6)
    ranker = RankNetRanker(random_state=0, **FAST).partial_fit(X, y, groups=qid)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranker.partial_fit(X, np.zeros_like(y), groups=qid)
    [warning] = _nothing_to_learn_warnings(caught)
    assert "partial_fit found" in str(warning.message)
    assert "leaves the model as it was" in str(warning.message)


def test_grid_search_routes_groups_to_the_ranker_and_the_scorers():
    X, y, qid = _routing_data()
    cv = GroupKFold(3)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            _pipeline(),
            {"lambdarankranker__k": [3, None]},
            cv=cv,
            scoring={"ndcg@10": ndcg_scorer(10), "map": map_scorer()},
            refit="ndcg@10",
            error_score="raise",
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, y, groups=qid)
        assert not _no_groups_warnings(caught)

        results = search.cv_results_
        for j, params in enumerate(results["params"]):
            for i, (train, test) in enumerate(cv.split(X, y, qid)):
                model = _pipeline().set_params(**params).fit(X[train], y[train], groups=qid[train])
                scores = model.predict(X[test])
                expected_ndcg = ndcg_score(y[test], scores, groups=qid[test], k=10)
                expected_map = map_score(y[test], scores, groups=qid[test])
                assert results[f"split{i}_test_ndcg@10"][j] == pytest.approx(expected_ndcg, rel=0, abs=1e-12)
                assert results[f"split{i}_test_map"][j] == pytest.approx(expected_map, rel=0, abs=1e-12)
                # Not the number a whole fold scored as one query would give.
                as_one_query = ndcg_score(y[test], scores, k=10)
                assert abs(results[f"split{i}_test_ndcg@10"][j] - as_one_query) > 1e-6

        best = np.argmax(results["mean_test_ndcg@10"])
        assert search.best_params_ == results["params"][best]

        # The refit ranker got the query ids of the whole data set ...
        refit = _pipeline().set_params(**search.best_params_).fit(X, y, groups=qid)
        np.testing.assert_array_equal(search.predict(X), refit.predict(X))
        # ... which matters: the same fit with all rows as one query differs.
        with pytest.warns(UserWarning, match="got no groups"):
            one_query = _pipeline().set_params(**search.best_params_).fit(X, y)
        assert not np.allclose(search.predict(X), one_query.predict(X))


def test_grid_search_default_scoring_uses_score_with_routed_groups():
    X, y, qid = _routing_data()
    X = StandardScaler().fit_transform(X)  # see the xfail below for why no Pipeline
    cv = GroupKFold(3)
    ranker = LambdaRankRanker(max_iter=5, random_state=0, **FAST)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(ranker, {"k": [3, None]}, cv=cv, error_score="raise")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, y, groups=qid)
        assert not _no_groups_warnings(caught)
        for j, params in enumerate(search.cv_results_["params"]):
            for i, (train, test) in enumerate(cv.split(X, y, qid)):
                model = clone(ranker).set_params(**params).fit(X[train], y[train], groups=qid[train])
                expected = ndcg_score(y[test], model.predict(X[test]), groups=qid[test], k=10)
                got = search.cv_results_[f"split{i}_test_score"][j]
                assert got == pytest.approx(expected, rel=0, abs=1e-12)
                assert abs(got - ndcg_score(y[test], model.predict(X[test]), k=10)) > 1e-6


def test_pipeline_score_with_routing():
    X, y, qid = _routing_data()
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = _pipeline().fit(X, y, groups=qid)
        expected = ndcg_score(y, pipe.predict(X), groups=qid, k=10)
        assert pipe.score(X, y, groups=qid) == pytest.approx(expected, abs=1e-12)
        search = GridSearchCV(_pipeline(), {"lambdarankranker__k": [3]}, cv=GroupKFold(3), error_score="raise")
        search.fit(X, y, groups=qid)


def test_score_without_groups_is_an_error_naming_both_fixes():
    X, y, qid = _small(10)
    ranker = LambdaRankRanker(max_iter=3, random_state=0, **FAST).fit(X, y, groups=qid)
    with pytest.raises(ValueError, match=r"score got no groups, so it would score all \d+ rows as one query") as error:
        ranker.score(X, y)
    assert "enable_metadata_routing=True" in str(error.value)
    assert "query_column" in str(error.value)
    # One row is one query whatever the groups say: no error.
    assert ranker.score(X[:1], y[:1]) == ranker.score(X[:1], y[:1], groups=qid[:1])
    # With routing on, turning it on is no advice: what to pass and request.
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match=r"score got no groups.*Metadata routing is on: pass groups=") as error:
            ranker.score(X, y)
    assert "enable_metadata_routing=True" not in str(error.value) and "set_score_request" in str(error.value)


def test_routing_off_warns_how_to_turn_it_on():
    X, y, qid = _small(10)
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.warns(UserWarning, match=re.escape("enable_metadata_routing=True")):
            LambdaRankRanker(max_iter=2, random_state=0, **FAST).fit(X, y)
        # GridSearchCV gives the groups to the splitter only: the ranker warns.
        search = GridSearchCV(LambdaRankRanker(max_iter=2, random_state=0, **FAST), {"k": [3]}, cv=GroupKFold(3))
        with pytest.warns(UserWarning, match=re.escape("enable_metadata_routing=True")):
            search.fit(X, y, groups=qid)
        # Given groups directly, there is nothing to warn about.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            LambdaRankRanker(max_iter=2, random_state=0, **FAST).fit(X, y, groups=qid)
        assert not _no_groups_warnings(caught)


@pytest.mark.parametrize("cls", RANKERS)
def test_score_refuses_two_rows_without_groups(cls):
    X, y, qid = _twenty_queries()
    ranker = cls(**SHORT_FIT).fit(X, y, groups=qid)
    with pytest.raises(ValueError, match="score got no groups"):
        ranker.score(X[:2], y[:2])
    # One row is one query whatever its id.
    assert ranker.score(X[:1], y[:1]) == ranker.score(X[:1], y[:1], groups=[7])
