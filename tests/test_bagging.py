"""BaggingRanker: averaging, seeds, bootstrap of whole queries, and what
reaches the members (groups, sample_weight) with metadata routing on and off.

Most tests use ``Recorder``, a tiny estimator that stores what its ``fit``
received; the features carry the input row index in column 0 so that a
member's rows can be traced back.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import Ridge
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, RankNetRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

# Every Recorder fit, in call order (GridSearchCV clones the members, so the
# fitted objects are not all reachable from the search afterwards).
FIT_LOG = []


class Recorder(BaseEstimator):
    """Stores the rows, labels, query ids and weights its fit received.

    Predicts a random linear function of the features, seeded by
    ``random_state``, so that members with different seeds differ.
    """

    __metadata_request__fit = {"groups": True}

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y, groups=None, sample_weight=None):
        X = np.asarray(X)
        self.rows_ = X[:, 0].astype(np.int64)
        self.y_ = np.asarray(y)
        self.groups_ = None if groups is None else np.asarray(groups)
        self.sample_weight_ = None if sample_weight is None else np.asarray(sample_weight)
        self.n_features_in_ = X.shape[1]
        FIT_LOG.append(self)
        return self

    def predict(self, X):
        weights = np.random.RandomState(self.random_state).normal(size=self.n_features_in_)
        return np.asarray(X)[:, 1:] @ weights[1:]


class RecorderWithoutWeights(Recorder):
    """A member whose fit has no sample_weight parameter."""

    def fit(self, X, y, groups=None):
        return super().fit(X, y, groups=groups)


@pytest.fixture(autouse=True)
def _clear_fit_log():
    FIT_LOG.clear()
    yield
    FIT_LOG.clear()


def _small(n_queries=12, seed=0):
    X, y, qid = make_ranking(n_queries, n_features=5, n_informative=3, max_docs=10, random_state=seed)
    return StandardScaler().fit_transform(X), y, qid


def _traceable(n_queries=10, seed=0):
    """Rows interleaved across queries (shuffled), string query ids, the row
    index in column 0 and a per-query weight."""
    X, y, qid = _small(n_queries, seed)
    rng = np.random.RandomState(seed)
    perm = rng.permutation(len(y))
    X, y, qid = X[perm], y[perm], np.array([f"q{q}" for q in qid[perm]])
    X = np.column_stack([np.arange(len(y)), X])
    query_weight = {q: w for q, w in zip(np.unique(qid), rng.uniform(0.5, 2.0, len(np.unique(qid))))}
    sample_weight = np.array([query_weight[q] for q in qid])
    return X, y, qid, sample_weight


def _ranker(**params):
    return LambdaRankRanker(hidden_layer_sizes=(4,), max_iter=5, n_jobs=1, **params)


def _no_groups_warnings(caught):
    return [w for w in caught if "got no groups" in str(w.message)]


# ----------------------------------------------------------------------------
# Averaging and seeds


def test_predict_is_the_mean_of_the_members():
    X, y, qid = _small()
    bag = BaggingRanker(_ranker(), n_estimators=3, random_state=0).fit(X, y, groups=qid)
    assert len(bag.estimators_) == 3
    expected = np.mean([member.predict(X) for member in bag.estimators_], axis=0)
    got = bag.predict(X)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    # float32 members: the mean is still float64
    bag32 = clone(bag).fit(X.astype(np.float32), y, groups=qid)
    assert bag32.predict(X.astype(np.float32)).dtype == np.float64


def test_same_random_state_same_model_and_distinct_member_seeds():
    X, y, qid = _small()
    first = BaggingRanker(_ranker(), n_estimators=3, random_state=0).fit(X, y, groups=qid)
    second = BaggingRanker(_ranker(), n_estimators=3, random_state=0).fit(X, y, groups=qid)
    np.testing.assert_array_equal(first.predict(X), second.predict(X))

    seeds = [member.random_state for member in first.estimators_]
    assert all(isinstance(seed, int) for seed in seeds)
    assert len(set(seeds)) == len(seeds)
    predictions = [member.predict(X) for member in first.estimators_]
    assert not np.allclose(predictions[0], predictions[1])
    # The template keeps its own random_state (None), and is not fitted.
    assert first.estimator_.random_state is None
    assert not hasattr(first.estimator_, "coefs_")

    other = BaggingRanker(_ranker(), n_estimators=3, random_state=1).fit(X, y, groups=qid)
    assert not np.allclose(other.predict(X), first.predict(X))


def test_members_keep_their_weights_not_their_optimizer():
    """A bag never resumes its members' training: they drop the optimizer's
    moments and the weight average (four times the weights with Adam and
    averaging), also inside a Pipeline, and still predict as fitted."""
    X, y, qid = _small()
    # float64: the member trained in a stack predicts as its own fit does, to
    # the bit here (float32 products of another shape round differently).
    bag = BaggingRanker(_ranker(ema_momentum=0.9, precision="float64"), n_estimators=2, random_state=0).fit(
        X, y, groups=qid)
    member = bag.estimators_[0]
    assert member._fit_state.optimizer is None and member._fit_state.weight_average is None
    alone = clone(member).fit(X, y, groups=qid)
    assert alone._fit_state.optimizer is not None
    np.testing.assert_array_equal(member.predict(X), alone.predict(X))
    # A member taken out can still go on learning (from a new optimizer).
    before = member.predict(X)
    member.partial_fit(X, y, groups=qid)
    assert not np.array_equal(member.predict(X), before)
    with sklearn.config_context(enable_metadata_routing=True):
        piped = BaggingRanker(make_pipeline(StandardScaler(), _ranker()), n_estimators=2, random_state=0)
        piped.fit(X, y, groups=qid)
    assert not hasattr(piped.estimators_[0][-1], "_optimizer")


def test_nested_random_states_are_seeded():
    X, y, qid = _small()
    pipe = make_pipeline(StandardScaler(), _ranker(random_state=123))
    with sklearn.config_context(enable_metadata_routing=True):
        bag = BaggingRanker(pipe, n_estimators=2, random_state=0).fit(X, y, groups=qid)
    seeds = [member[-1].random_state for member in bag.estimators_]
    assert len(set(seeds)) == 2 and 123 not in seeds
    assert pipe[-1].random_state == 123  # the user's estimator is untouched


def test_more_members_start_with_the_members_of_fewer():
    """What the docstring offers instead of BaggingRegressor's warm_start:
    with an int random_state, n_estimators=4 gives the 2 members of
    n_estimators=2 (same seeds, same bootstrap samples), then new ones."""
    X, y, qid, _ = _traceable(n_queries=10)
    few = BaggingRanker(Recorder(), n_estimators=2, bootstrap=True, random_state=0).fit(X, y, groups=qid)
    more = BaggingRanker(Recorder(), n_estimators=4, bootstrap=True, random_state=0).fit(X, y, groups=qid)
    for one, two in zip(few.estimators_, more.estimators_):
        assert one.random_state == two.random_state
        np.testing.assert_array_equal(one.rows_, two.rows_)
    seeds = [member.random_state for member in more.estimators_]
    assert len(set(seeds)) == 4


def test_bagging_regressor_parameters_are_refused():
    """The docstring lists these as absent: an error, not a silent
    default."""
    for name, value in (("max_samples", 0.5), ("max_features", 0.5), ("bootstrap_features", True),
                        ("oob_score", True), ("warm_start", True)):
        with pytest.raises(TypeError, match=name):
            BaggingRanker(**{name: value})
        with pytest.raises(ValueError, match=f"Invalid parameter '{name}'"):
            BaggingRanker().set_params(**{name: value})


@pytest.mark.parametrize("bootstrap", [False, True])
def test_n_jobs_does_not_change_the_result(bootstrap):
    X, y, qid = _small()
    bags = [
        BaggingRanker(_ranker(), n_estimators=3, bootstrap=bootstrap, n_jobs=n_jobs, random_state=0)
        .fit(X, y, groups=qid)
        for n_jobs in (1, 2)
    ]
    np.testing.assert_array_equal(bags[0].predict(X), bags[1].predict(X))
    for one, two in zip(bags[0].estimators_, bags[1].estimators_):
        assert one.random_state == two.random_state


# ----------------------------------------------------------------------------
# Bootstrap of whole queries


def test_bootstrap_draws_whole_queries_and_copies_are_distinct_queries():
    X, y, qid, sample_weight = _traceable(n_queries=10)
    n_queries = len(np.unique(qid))
    bag = BaggingRanker(Recorder(), n_estimators=4, bootstrap=True, random_state=0)
    bag.fit(X, y, groups=qid, sample_weight=sample_weight)

    draws = []
    for member in bag.estimators_:
        rows, member_groups = member.rows_, member.groups_
        np.testing.assert_array_equal(member.y_, y[rows])
        np.testing.assert_array_equal(member.sample_weight_, sample_weight[rows])
        member_ids = np.unique(member_groups)
        # as many queries as the data has, drawn with replacement
        assert len(member_ids) == n_queries
        drawn = []
        for member_id in member_ids:
            rows_of_id = rows[member_groups == member_id]
            original = np.unique(qid[rows_of_id])
            assert len(original) == 1  # one member query is one input query ...
            whole = np.flatnonzero(qid == original[0])
            # ... with every one of its rows, once each
            np.testing.assert_array_equal(np.sort(rows_of_id), whole)
            drawn.append(original[0])
        counts = pd.Series(drawn).value_counts()
        draws.append(tuple(sorted(drawn)))
        # (10 draws from 10 queries: 10!/10**10 chance that none repeats)
        assert counts.max() >= 2, "some query must have been drawn twice"
    assert len(set(draws)) > 1, "members must get different samples"


def test_bootstrap_never_draws_a_query_of_weight_zero():
    # Such a query adds nothing to a member's fit; drawn alone it used to
    # fail the member ("sample_weight is zero for every query").
    X, y, qid, sample_weight = _traceable(n_queries=10)
    kept = np.unique(qid)[[2, 7]]
    sample_weight = np.where(np.isin(qid, kept), sample_weight, 0.0)
    bag = BaggingRanker(Recorder(), n_estimators=6, bootstrap=True, random_state=0)
    bag.fit(X, y, groups=qid, sample_weight=sample_weight)
    for member in bag.estimators_:
        assert (member.sample_weight_ > 0).all()
        assert set(qid[member.rows_]) <= set(kept)
        assert len(np.unique(member.groups_)) == len(kept)  # as many draws as weighted queries
    X, y, qid = _small()
    only_first = (qid == qid[0]).astype(float)
    for seed in range(5):
        BaggingRanker(_ranker(), n_estimators=3, bootstrap=True, random_state=seed).fit(
            X, y, groups=qid, sample_weight=only_first
        )


def test_bootstrap_copies_never_share_a_query_id():
    """What a member's fit receives: no query holds a row twice (a copy is
    a query of its own), and each query's rows are next to each other."""
    X, y, qid, _ = _traceable(n_queries=6)
    bag = BaggingRanker(Recorder(), n_estimators=3, bootstrap=True, random_state=0).fit(X, y, groups=qid)
    for member in bag.estimators_:
        # no member query holds a row twice
        for member_id in np.unique(member.groups_):
            rows_of_id = member.rows_[member.groups_ == member_id]
            assert len(np.unique(rows_of_id)) == len(rows_of_id)
        # and rows of one member query are contiguous (consecutive ids)
        changes = np.count_nonzero(member.groups_[1:] != member.groups_[:-1])
        assert changes == len(np.unique(member.groups_)) - 1


def test_bootstrap_without_groups_uses_all_rows_and_members_warn_once_each():
    X, y, _, _ = _traceable(n_queries=4)
    bag = BaggingRanker(_ranker(), n_estimators=2, bootstrap=True, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bag.fit(X, y)
    # one warning per member, none from BaggingRanker itself
    assert len(_no_groups_warnings(caught)) == 2
    recorded = BaggingRanker(Recorder(), n_estimators=2, bootstrap=True, random_state=0).fit(X, y)
    for member in recorded.estimators_:
        assert member.groups_ is None
        np.testing.assert_array_equal(member.rows_, np.arange(len(y)))


# ----------------------------------------------------------------------------
# What reaches the members


def test_groups_reach_members_with_routing_off():
    X, y, qid, _ = _traceable()
    with sklearn.config_context(enable_metadata_routing=False):
        bag = BaggingRanker(Recorder(), n_estimators=2, random_state=0).fit(X, y, groups=qid)
    for member in bag.estimators_:
        np.testing.assert_array_equal(member.rows_, np.arange(len(y)))
        np.testing.assert_array_equal(member.groups_, qid)
        assert member.sample_weight_ is None


def test_sample_weight_is_passed_only_when_given():
    X, y, qid, sample_weight = _traceable()
    # A member without sample_weight still works when none is given ...
    bag = BaggingRanker(RecorderWithoutWeights(), n_estimators=2, random_state=0)
    bag.fit(X, y, groups=qid)
    assert len(FIT_LOG) == 2
    # ... and a clear error when one is.
    with pytest.raises(ValueError, match="does not take sample_weight"):
        clone(bag).fit(X, y, groups=qid, sample_weight=sample_weight)
    # Given, it reaches the members unchanged (no bootstrap).
    bag = BaggingRanker(Recorder(), n_estimators=2, random_state=0)
    bag.fit(X, y, groups=qid, sample_weight=list(sample_weight))
    for member in bag.estimators_:
        np.testing.assert_array_equal(member.sample_weight_, sample_weight)


def test_sample_weight_reaches_a_ranker():
    X, y, qid = _small()
    weights = np.where(qid % 2 == 0, 3.0, 0.5)
    unweighted = BaggingRanker(_ranker(), n_estimators=2, random_state=0).fit(X, y, groups=qid)
    weighted = BaggingRanker(_ranker(), n_estimators=2, random_state=0).fit(X, y, groups=qid, sample_weight=weights)
    assert not np.allclose(weighted.predict(X), unweighted.predict(X))


def test_routing_on_groups_and_sample_weight_reach_members():
    X, y, qid, sample_weight = _traceable()
    with sklearn.config_context(enable_metadata_routing=True):
        member = Recorder().set_fit_request(sample_weight=True)
        bag = BaggingRanker(member, n_estimators=2, bootstrap=True, random_state=0)
        bag.fit(X, y, groups=qid, sample_weight=sample_weight)
        for fitted in bag.estimators_:
            np.testing.assert_array_equal(fitted.sample_weight_, sample_weight[fitted.rows_])
            for member_id in np.unique(fitted.groups_):
                assert len(np.unique(qid[fitted.rows_[fitted.groups_ == member_id]])) == 1
        # A member that did not request sample_weight: routing refuses it.
        with pytest.raises(ValueError, match="sample_weight"):
            BaggingRanker(Recorder(), n_estimators=2).fit(X, y, groups=qid, sample_weight=sample_weight)
        # A member that declines it fits unweighted, when none is passed
        # (the weights not passed once counted as passed, and failed).
        declining = BaggingRanker(Recorder().set_fit_request(sample_weight=False), n_estimators=2, random_state=0)
        declining.fit(X, y, groups=qid)
        assert all(fitted.sample_weight_ is None and fitted.groups_ is not None for fitted in declining.estimators_)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_routing_on_groups_reach_a_pipeline_member(bootstrap):
    X, y, qid, _ = _traceable()
    pipe = make_pipeline(FunctionTransformer(), Recorder())
    with sklearn.config_context(enable_metadata_routing=True):
        bag = BaggingRanker(pipe, n_estimators=2, bootstrap=bootstrap, random_state=0).fit(X, y, groups=qid)
    for member in bag.estimators_:
        recorder = member[-1]
        assert recorder.groups_ is not None
        if not bootstrap:
            np.testing.assert_array_equal(recorder.groups_, qid)
        for member_id in np.unique(recorder.groups_):
            assert len(np.unique(qid[recorder.rows_[recorder.groups_ == member_id]])) == 1


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bootstrap", [False, True])
def test_members_cannot_write_into_x_or_into_each_others_rows(sparse, bootstrap):
    """Every member (and, in predict, every member after the first) got the
    caller's X itself: a step that works in place (StandardScaler(copy=False))
    scaled the caller's X, the next member fitted its scaler on the rows the
    first had scaled (mean 0), and predict on the caller's X scaled it again.
    Members now get a read-only view, which scikit-learn's transformers copy
    before writing: each member sees the caller's values."""
    import scipy.sparse as sp

    X, y, qid = _small()
    X = X * 3.0 + 5.0  # a mean and a scale for the scaler to remove
    if sparse:
        X[np.abs(X - 5.0) < 2.0] = 0.0  # some entries not stored
        X = sp.csr_matrix(X)
    original = X.copy()
    pipe = make_pipeline(StandardScaler(copy=False, with_mean=not sparse), _ranker())
    with sklearn.config_context(enable_metadata_routing=True):
        bag = BaggingRanker(pipe, n_estimators=3, bootstrap=bootstrap, random_state=0)
        bag.fit(X, y, groups=qid)
        fitted_on_x = X.copy()
        scores = bag.predict(X)
        expected = np.mean([member.predict(original.copy()) for member in bag.estimators_], axis=0)
    for after in (fitted_on_x, X):
        np.testing.assert_array_equal(*(a.toarray() if sparse else a for a in (after, original)))
    if not bootstrap:  # every member scaled the same rows: the caller's
        reference = StandardScaler(with_mean=not sparse).fit(original)
        for member in bag.estimators_:
            np.testing.assert_array_equal(member[0].scale_, reference.scale_)
    # Each member scored the caller's rows, as it does alone on a copy.
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12)


def test_routing_on_pipeline_ranker_trains_on_queries():
    """End to end: the ranker inside each Pipeline got the query ids."""
    X, y, qid = _small()
    pipe = make_pipeline(StandardScaler(), _ranker())
    with sklearn.config_context(enable_metadata_routing=True):
        bag = BaggingRanker(pipe, n_estimators=2, random_state=0).fit(X, y, groups=qid)
        expected = np.mean(
            [clone(member).fit(X, y, groups=qid).predict(X) for member in bag.estimators_], axis=0
        )
        np.testing.assert_allclose(bag.predict(X), expected, rtol=1e-12)
        with pytest.warns(UserWarning, match="got no groups"):
            one_query = np.mean([clone(member).fit(X, y).predict(X) for member in bag.estimators_], axis=0)
    assert not np.allclose(bag.predict(X), one_query)


def test_routing_off_pipeline_with_groups_says_how_to_fix():
    X, y, qid = _small()
    bag = BaggingRanker(make_pipeline(StandardScaler(), _ranker()), n_estimators=2)
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.raises(ValueError, match=re.escape("enable_metadata_routing=True")):
            bag.fit(X, y, groups=qid)
    assert not hasattr(bag, "estimators_")


def test_grid_search_routes_groups_to_members_and_score():
    X, y, qid, _ = _traceable(n_queries=12)
    cv = GroupKFold(3)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            BaggingRanker(Recorder(), n_estimators=2, random_state=0),
            {"bootstrap": [False, True]},
            cv=cv,
            error_score="raise",
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, y, groups=qid)
    # neither the members' fit nor BaggingRanker.score went without groups
    assert not _no_groups_warnings(caught)
    # 2 settings x 3 folds x 2 members, plus the refit's 2 members
    assert len(FIT_LOG) == 14
    for fitted in FIT_LOG:
        assert fitted.groups_ is not None
        for member_id in np.unique(fitted.groups_):
            assert len(np.unique(qid[fitted.rows_[fitted.groups_ == member_id]])) == 1
    # the folds' members saw exactly the training queries of a fold
    train_sets = [set(qid[train]) for train, _ in cv.split(X, y, qid)]
    for fitted in FIT_LOG[:12]:
        seen = set(qid[fitted.rows_])
        assert any(seen <= train for train in train_sets)
    # the default scoring is BaggingRanker.score with the test fold's groups
    for j, params in enumerate(search.cv_results_["params"]):
        for i, (train, test) in enumerate(cv.split(X, y, qid)):
            model = clone(search.estimator).set_params(**params).fit(X[train], y[train], groups=qid[train])
            expected = ndcg_score(y[test], model.predict(X[test]), groups=qid[test], k=10)
            assert search.cv_results_[f"split{i}_test_score"][j] == pytest.approx(expected, abs=1e-12)


# ----------------------------------------------------------------------------
# score, fitted state, validation


def test_score_is_mean_ndcg_at_10_with_the_members_gain():
    X, y, qid = _small()
    y = y * 3.0  # labels up to 12: linear and exponential gains disagree
    # Through a Pipeline, and through a bag of bags (it fell back to the
    # exponential gain, and refused labels above 30 the members trained on).
    nested = BaggingRanker(_ranker(gain="linear"), n_estimators=2)
    for estimator in (_ranker(gain="linear"), make_pipeline(StandardScaler(), _ranker(gain="linear")), nested):
        with sklearn.config_context(enable_metadata_routing=True):
            bag = BaggingRanker(estimator, n_estimators=2, random_state=0).fit(X, y, groups=qid)
        scores = bag.predict(X)
        got = bag.score(X, y, groups=qid)
        assert got == pytest.approx(ndcg_score(y, scores, groups=qid, k=10, gain="linear"), abs=1e-12)
        assert got != pytest.approx(ndcg_score(y, scores, groups=qid, k=10, gain="exponential"), abs=1e-6)
    with pytest.raises(ValueError, match=r"BaggingRanker.score got no groups.*query_column"):
        bag.score(X, y)


def test_not_fitted_raises():
    X, y, qid = _small()
    with pytest.raises(NotFittedError):
        BaggingRanker().predict(X)
    with pytest.raises(NotFittedError):
        BaggingRanker().score(X, y, groups=qid)


def test_failed_first_fit_leaves_no_model():
    X, y, qid = _small()
    bag = BaggingRanker(_ranker(), n_estimators=2, bootstrap=True, random_state=0)
    with pytest.raises(ValueError, match="groups has"):
        bag.fit(X, y, groups=qid[:-1])
    for name in ("estimators_", "estimator_", "n_features_in_"):
        assert not hasattr(bag, name)
    with pytest.raises(NotFittedError):
        bag.predict(X)


@pytest.mark.parametrize("failure", ["groups", "member"])
def test_failed_refit_keeps_the_previous_ensemble(failure):
    """As the rankers: a refit that raises, before the members are fitted
    (its groups) or in a member's fit (a negative label, after validate_data
    has read the new X), leaves the ensemble it had."""
    X, y, qid = _small()
    bag = BaggingRanker(_ranker(), n_estimators=2, random_state=0).fit(X, y, groups=qid)
    members, scores = bag.estimators_, bag.predict(X)
    wider = np.hstack([X, X[:, :1]])  # a refit on other data, had it succeeded
    bad_y = y.astype(float).copy()
    bad_y[0] = -1.0
    with pytest.raises(ValueError, match="groups has" if failure == "groups" else "negative"):
        if failure == "groups":
            bag.fit(wider, y, groups=qid[:-1])
        else:
            bag.fit(wider, bad_y, groups=qid)
    assert bag.estimators_ is members
    assert bag.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(bag.predict(X), scores)


def test_default_estimator_and_dataframe_feature_names():
    X, y, qid = _small(6)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    bag = BaggingRanker(n_estimators=2, random_state=0).set_params(n_jobs=1)
    bag.fit(frame, y, groups=qid)
    assert isinstance(bag.estimators_[0], LambdaRankRanker)
    assert bag.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(bag.feature_names_in_, frame.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # same columns: no feature-name warning
        from_frame = bag.predict(frame)
    with pytest.warns(UserWarning, match="feature names"):
        from_array = bag.predict(X)
    np.testing.assert_array_equal(from_frame, from_array)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(n_estimators=0), "'n_estimators' parameter"),
        (dict(bootstrap="yes"), "'bootstrap' parameter"),
        (dict(n_jobs=0), "'n_jobs' parameter"),
        (dict(estimator="ranker"), "'estimator' parameter"),
    ],
)
def test_invalid_parameters(params, match):
    X, y, qid = _small(4)
    with pytest.raises(InvalidParameterError, match=match):
        BaggingRanker(**params).fit(X, y, groups=qid)


def test_n_estimators_true_is_one_member_as_in_the_rankers():
    """validate_params takes a bool for an int (the rankers' max_iter=True is
    1 iteration, scikit-learn's BaggingRegressor(n_estimators=True) one
    member); numpy's randint refused size=True with a message naming
    nothing the user gave."""
    X, y, qid = _small(4)
    bag = BaggingRanker(_ranker(), n_estimators=True, random_state=0).fit(X, y, groups=qid)
    one = BaggingRanker(_ranker(), n_estimators=1, random_state=0).fit(X, y, groups=qid)
    assert len(bag.estimators_) == 1
    np.testing.assert_array_equal(bag.predict(X), one.predict(X))


@pytest.mark.parametrize(
    "member, advice",
    [
        (LambdaRankRanker(max_iter=2, random_state=0), 'Use gain="linear"'),
        (RankNetRanker(max_iter=2, random_state=0), "RankNetRanker scores with that gain"),
        (Ridge(), "Rescale the labels"),
    ],
    ids=["lambdarank", "ranknet", "ridge"],
)
def test_score_with_labels_above_30_advises_for_the_member(member, advice):
    X, y, qid = _small()
    # A regressor takes no groups: it learns from the labels row by row.
    groups = None if isinstance(member, Ridge) else qid
    bag = BaggingRanker(member, n_estimators=2, random_state=0).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match=f"at most 30. {re.escape(advice)}"):
        bag.score(X, y + 31, groups=qid)


def test_member_query_column_by_name_is_refused_with_the_fix():
    """The members get X's values without column names, so a member's
    query_column name can name nothing; the message says where to set it."""
    X, y, qid = _small()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(qid=qid)
    member = LambdaRankRanker(max_iter=2, random_state=0, query_column="qid")
    with pytest.raises(ValueError, match=r"query_column='qid' on the BaggingRanker instead"):
        BaggingRanker(member, n_estimators=2, random_state=0).fit(frame, y)
    # The fix the message gives works.
    bag = BaggingRanker(
        LambdaRankRanker(max_iter=2, random_state=0), n_estimators=2, random_state=0, query_column="qid"
    ).fit(frame, y)
    assert 0.0 <= bag.score(frame, y) <= 1.0


def test_score_checks_groups_against_the_members_query_column():
    """As the member's own score: groups= must put the rows in the queries of
    the column the members read (BaggingRanker.score used groups= alone, so
    coarser ids, such as those a GroupKFold splits by, gave a silent NDCG of
    merged queries)."""
    X, y, qid = _small()
    with_ids = np.column_stack([qid, X])
    member = LambdaRankRanker(hidden_layer_sizes=(), max_iter=2, random_state=0, query_column=0)
    bag = BaggingRanker(member, n_estimators=2, random_state=0).fit(with_ids, y)
    with pytest.raises(ValueError, match=r"groups and the query column of X \(query_column=0\)"):
        bag.score(with_ids, y, groups=qid // 2)
    with pytest.raises(ValueError, match="different queries"):
        bag.estimators_[0].score(with_ids, y, groups=qid // 2)  # what the member says
    # Ids that map one to one onto the column's are the same queries.
    assert bag.score(with_ids, y, groups=qid + 100) == bag.score(with_ids, y)


@pytest.mark.parametrize("together", [True, False])
def test_verbose_prints_a_line_per_member(capsys, together):
    X, y, qid = make_ranking(20, max_docs=10, random_state=0)
    member = LambdaRankRanker(max_iter=3) if together else RankNetRanker(solver="lbfgs", max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        BaggingRanker(member, n_estimators=3, verbose=True, random_state=0).fit(X, y, groups=qid)
        BaggingRanker(member, n_estimators=3, random_state=0).fit(X, y, groups=qid)  # quiet
    lines = capsys.readouterr().out.splitlines()
    members = [line for line in lines if line.startswith("BaggingRanker: member ")]
    assert [line.split(",")[0].split(" fitted")[0] for line in members] == [
        f"BaggingRanker: member {i} of 3" for i in (1, 2, 3)]
    assert all(line.endswith(", 3 epochs") for line in members)
    assert len(lines) == 3 + together  # one pass: its own line first
    if together:
        assert lines[0].startswith("BaggingRanker: 3 members trained in one pass in ")
