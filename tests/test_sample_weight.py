"""Query weights: ``sample_weight`` in the rankers, the metrics and the scorers."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GroupKFold, cross_validate
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet._groups import group_rows, query_weights
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import (
    ap_per_query,
    map_score,
    ndcg_per_query,
    ndcg_score,
    ndcg_scorer,
)

from ._assertions import assert_same_training

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

RANKERS = [RankNetRanker, LambdaRankRanker]


def _data(n_queries=24, seed=0):
    X, y, qid = make_ranking(n_queries, n_features=6, n_informative=4, random_state=seed)
    return StandardScaler().fit_transform(X), y, qid


def _query_weights(qid, seed):
    """A random weight per query, repeated on its rows (queries interleaved
    or not, the weight follows the id)."""
    ids = np.unique(qid)
    weights = np.random.default_rng(seed).uniform(0.2, 3.0, len(ids))
    return weights[np.searchsorted(ids, qid)]


# ----------------------------------------------------------------------------
# Metrics


@pytest.mark.parametrize("metric, per_query", [(ndcg_score, ndcg_per_query), (map_score, ap_per_query)])
@pytest.mark.parametrize("empty_query_score", [1.0, None])
def test_metric_is_the_weighted_mean_of_the_per_query_values(metric, per_query, empty_query_score):
    rng = np.random.default_rng(0)
    qid = rng.permutation(np.repeat(np.arange(30), 7))  # interleaved queries
    y = rng.integers(0, 3, len(qid)) * (rng.random(len(qid)) < 0.5)
    score = rng.normal(size=len(qid))
    weight = _query_weights(qid, 1)
    ids, values = per_query(y, score, groups=qid, k=5, empty_query_score=empty_query_score)
    expected = np.average(values, weights=weight[[np.flatnonzero(qid == i)[0] for i in ids]])
    got = metric(y, score, groups=qid, k=5, empty_query_score=empty_query_score, sample_weight=weight)
    assert got == pytest.approx(expected, rel=1e-12)
    # Equal weights are the plain mean.
    assert metric(y, score, groups=qid, k=5, sample_weight=np.full(len(qid), 2.5)) == pytest.approx(
        metric(y, score, groups=qid, k=5), rel=1e-12
    )


def test_metric_weight_zero_leaves_a_query_out():
    y = np.array([1, 0, 0, 1, 2, 0])
    score = np.array([0.1, 0.9, 0.5, 0.3, 0.2, 0.1])
    qid = np.array([0, 0, 0, 1, 1, 1])
    only_second = ndcg_score(y[3:], score[3:], groups=qid[3:])
    assert ndcg_score(y, score, groups=qid, sample_weight=[0, 0, 0, 1, 1, 1]) == pytest.approx(only_second)


@pytest.mark.parametrize("metric", [ndcg_score, map_score])
def test_metric_weights_near_floats_limit_are_their_ratios(metric):
    """Only the weights' ratios matter: 1e308 on every query (whose sum
    overflows) is the unweighted mean, not NaN."""
    y, score, qid = [3, 2, 0, 1, 1, 0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [1, 1, 2, 2, 3, 3]
    huge = metric(y, score, groups=qid, sample_weight=[1e308] * 6)
    assert huge == pytest.approx(metric(y, score, groups=qid), rel=1e-15)
    mixed = metric(y, score, groups=qid, sample_weight=[1e308, 1e308, 5e307, 5e307, 1e308, 1e308])
    assert mixed == pytest.approx(metric(y, score, groups=qid, sample_weight=[2, 2, 1, 1, 2, 2]), rel=1e-15)


@pytest.mark.parametrize(
    "weight, message",
    [
        ([1, 2, 1, 1, 1, 1], "same on every row of a query"),
        # The id as the user wrote it, not numpy's repr (np.int64(0)).
        ([1, 2, 1, 1, 1, 1], r"query 0 has different weights \(1 and 2\)"),
        ([1, 1, 1, -1, -1, -1], "finite and >= 0"),
        ([0, 0, 0, 0, 0, 0], "zero for every query"),
        ([1, 1, 1], r"one weight per row"),
    ],
)
def test_metric_rejects_bad_weights(weight, message):
    with pytest.raises(ValueError, match=message):
        ndcg_score([1, 0, 0, 1, 2, 0], [3, 2, 1, 3, 2, 1], groups=[0, 0, 0, 1, 1, 1], sample_weight=weight)


def test_scorer_passes_weights_under_routing():
    X, y, qid = _data(30)
    weight = _query_weights(qid, 2)
    scorer = ndcg_scorer(5)
    with sklearn.config_context(enable_metadata_routing=True):
        # set_score_request replaces the scorer's requests: name both.
        scorer.set_score_request(groups=True, sample_weight=True)
        ranker = LambdaRankRanker(hidden_layer_sizes=(), max_iter=3, random_state=0)
        ranker.set_fit_request(sample_weight=False)
        result = cross_validate(
            ranker, X, y, cv=GroupKFold(3), scoring=scorer,
            params={"groups": qid, "sample_weight": weight}, return_estimator=True,
            return_indices=True,
        )
    for model, test, got in zip(result["estimator"], result["indices"]["test"], result["test_score"]):
        expected = ndcg_score(
            y[test], model.predict(X[test]), groups=qid[test], k=5, sample_weight=weight[test]
        )
        assert got == pytest.approx(expected, rel=1e-12)
        assert got != pytest.approx(ndcg_score(y[test], model.predict(X[test]), groups=qid[test], k=5))


# ----------------------------------------------------------------------------
# Rankers


@pytest.mark.parametrize("Ranker", RANKERS)
def test_unit_weights_train_the_unweighted_model(Ranker):
    X, y, qid = _data()
    params = dict(max_iter=5, random_state=0, batch_size=5)
    plain = Ranker(**params).fit(X, y, groups=qid)
    weighted = Ranker(**params).fit(X, y, groups=qid, sample_weight=np.ones(len(y)))
    assert_same_training(weighted.predict(X), plain.predict(X))
    # A common factor changes nothing either: the weights are relative, and
    # the penalty counts queries, not their total weight.
    scaled = Ranker(**params).fit(X, y, groups=qid, sample_weight=np.full(len(y), 7.0))
    assert_same_training(scaled.predict(X), plain.predict(X))
    # The fitted attributes are alike too: loss_curve_ holds Python floats
    # either way (it held numpy floats under weights).
    for fitted in (plain, weighted):
        assert {type(value) for value in fitted.loss_curve_ + [fitted.loss_]} == {float}


@pytest.mark.parametrize("Ranker", [RankNetRanker, LambdaRankRanker, ListNetRanker])
def test_a_common_factor_of_uneven_weights_changes_only_rounding(Ranker):
    """The weights are divided by the largest. A power of two scales every
    weight and the largest exactly, so their ratios, and the fit, keep every
    bit; 0.1 rounds w * 0.1 (for 9 of these 24 queries the ratio comes out
    one ulp off), so the fit may part in the last bits, no more. (Uniform
    weights, as in the test above, have ratios of exactly 1 for any factor:
    they cannot tell the two apart.)"""
    X, y, qid = _data()
    weight = _query_weights(qid, 3)
    params = dict(max_iter=4, random_state=0, batch_size=5)
    weighted = Ranker(**params).fit(X, y, groups=qid, sample_weight=weight)
    for power_of_two in (0.25, 8.0, 2.0**-40):
        scaled = Ranker(**params).fit(X, y, groups=qid, sample_weight=weight * power_of_two)
        np.testing.assert_array_equal(scaled.predict(X), weighted.predict(X))
        assert scaled.loss_curve_ == weighted.loss_curve_
    groups = group_rows(qid, len(qid))
    assert (query_weights(groups, weight * 0.1, relative=True) != query_weights(groups, weight, relative=True)).any()
    tenth = Ranker(**params).fit(X, y, groups=qid, sample_weight=weight * 0.1)
    assert_same_training(tenth.predict(X), weighted.predict(X))


@pytest.mark.parametrize("Ranker", RANKERS)
def test_one_weight_for_all_rows_is_the_unweighted_model(Ranker):
    """A scalar sample_weight, as scikit-learn's estimators take it, is every
    row's weight: in fit, partial_fit and score alike."""
    X, y, qid = _data()
    params = dict(max_iter=3, random_state=0, batch_size=5)
    plain = Ranker(**params).fit(X, y, groups=qid)
    scalar = Ranker(**params).fit(X, y, groups=qid, sample_weight=7.0)
    assert_same_training(scalar.predict(X), plain.predict(X))
    assert scalar.score(X, y, groups=qid, sample_weight=3) == scalar.score(X, y, groups=qid)
    plain.partial_fit(X, y, groups=qid)
    scalar.partial_fit(X, y, groups=qid, sample_weight=np.float32(2.0))
    assert_same_training(scalar.predict(X), plain.predict(X))
    with pytest.raises(ValueError, match="finite and >= 0"):
        Ranker(**params).fit(X, y, groups=qid, sample_weight=-1.0)


def _with_outlying_queries(X, y, qid, n_queries=6, seed=1):
    """The rows plus ``n_queries`` more, unlike the rest: features 50 times
    as spread, each row's features one value repeated (perfectly redundant,
    which would turn input_noise="auto" on), and rows enough to move the
    row-count thresholds of the "auto" values. They are the queries given
    weight 0 below, and the flag says which rows they are."""
    rng = np.random.default_rng(seed)
    extra_X, extra_y, extra_q = [], [], []
    for j in range(n_queries):
        n = 12
        extra_X.append(np.repeat(50 * rng.standard_normal((n, 1)), X.shape[1], axis=1))
        extra_y.append(rng.integers(0, 5, n).astype(float))
        extra_q.append(np.full(n, qid.max() + 1 + j))
    flag = np.r_[np.zeros(len(y), bool), np.ones(12 * n_queries, bool)]
    return np.vstack([X, *extra_X]), np.concatenate([y, *extra_y]), np.concatenate([qid, *extra_q]), flag


@pytest.mark.parametrize("feature_scaling", [None, "standard", "piecewise"])
@pytest.mark.parametrize(
    "Ranker, params",
    [
        (RankNetRanker, dict(solver="adam", batch_size=1000)),
        (RankNetRanker, dict(solver="lbfgs")),
        (LambdaRankRanker, dict(batch_size=1000)),
    ],
)
def test_weight_zero_is_leaving_the_query_out(Ranker, params, feature_scaling):
    """With one full batch per step, a weight-0 query adds nothing to the
    gradient and the mean is over the other queries; and the input
    scaling's statistics are those of the other queries' rows: the fit is
    the fit without them (queries unlike the others, so that statistics
    over all rows would differ)."""
    X, y, qid, dropped = _with_outlying_queries(*_data())
    weight = np.where(dropped, 0.0, 1.0)
    params = dict(params, hidden_layer_sizes=(4,), max_iter=8, random_state=0, feature_scaling=feature_scaling,
                  input_noise=0.0)
    weighted = Ranker(**params).fit(X, y, groups=qid, sample_weight=weight)
    without = Ranker(**params).fit(X[~dropped], y[~dropped], groups=qid[~dropped])
    assert_same_training(weighted.predict(X), without.predict(X))
    assert weighted.loss_curve_[-1] == pytest.approx(without.loss_curve_[-1], rel=1e-6)


@pytest.mark.parametrize("Ranker", [RankNetRanker, ListNetRanker])
def test_weight_zero_queries_stay_out_of_the_loss_sample(Ranker, monkeypatch):
    """loss_curve_ is read on a sample of whole queries within a budget of
    rows (10,000; 30 here, so that the data can stay small). Queries of
    weight 0 used to enter it: one drawn first, too long for the budget,
    was the whole sample, its weighted mean 0 / 0, every loss NaN, and the
    tol rule stopped the fit after its patience. Without them in the
    sample the fit is the fit without those queries: one minibatch of every
    query, to which a weight-0 query adds exact zeros, so the two differ at
    most by the order of their sums."""
    from sklearn_ranknet import _training

    monkeypatch.setattr(_training, "LOSS_SAMPLE_ROWS", 30)
    rng = np.random.default_rng(0)
    sizes = [8, 8, 8, 8, 40, 40, 40, 40]  # the last four weigh 0
    qid = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(len(qid), 3))
    y = (X[:, 0] > 0) + (X[:, 1] > 0.5) + 0.0
    weight = np.where(qid >= 4, 0.0, 1.0)
    kept = weight > 0
    params = dict(hidden_layer_sizes=(), feature_scaling=None, batch_size=8, max_iter=20,
                  n_iter_no_change=3, learning_rate_init=0.05, ema_momentum=0)
    for seed in range(4):  # most of them draw a long weight-0 query first
        weighted = Ranker(**params, random_state=seed).fit(X, y, groups=qid, sample_weight=weight)
        without = Ranker(**params, random_state=seed).fit(X[kept], y[kept], groups=qid[kept])
        assert np.isfinite(weighted.loss_curve_).all()
        assert len(weighted.loss_curve_) == len(without.loss_curve_)
        np.testing.assert_allclose(weighted.loss_curve_, without.loss_curve_, rtol=1e-9)
        assert_same_training(weighted.predict(X), without.predict(X))


@pytest.mark.parametrize("Ranker", RANKERS)
def test_weight_zero_queries_do_not_move_the_auto_values(Ranker):
    """Every value the defaults resolve from the data (input noise, the
    encoding's bins, the width, the penalty, the step, the lambdas'
    normalization) is read from the queries of positive weight: a fit with
    weight-0 queries resolves them as the fit without those queries does,
    though the left-out rows are redundant (noise on), far out (other bins)
    and many (other row-count thresholds)."""
    X, y, qid = _data(60)
    X, y, qid, dropped = _with_outlying_queries(X, y, qid, n_queries=800)  # 9,600 more rows: past 10,000
    weight = np.where(dropped, 0.0, 1.0)
    fits = [Ranker(max_iter=1, random_state=0).fit(X, y, groups=qid, sample_weight=weight),
            Ranker(max_iter=1, random_state=0).fit(X[~dropped], y[~dropped], groups=qid[~dropped])]
    every = Ranker(max_iter=1, random_state=0).fit(X, y, groups=qid)  # the same rows, all weighed
    resolved = [(f.input_noise_, [c.shape for c in f.coefs_], f._fit_state.l2 * 60, f._fit_state.optimizer.learning_rate,
                 getattr(f, "normalize_lambdas_", None)) for f in fits + [every]]
    assert resolved[0] == resolved[1]
    assert resolved[2] != resolved[0]  # the test's outlying queries do move them when weighed
    for a, b in zip(fits[0].bin_edges_, fits[1].bin_edges_):
        np.testing.assert_array_equal(a, b)


def test_integer_weight_is_repeating_the_query():
    """RankNet's objective with weight 2 on a query is the objective with
    the query given twice (as two queries), but for the penalty, which
    counts distinct queries: with alpha scaled by their ratio L-BFGS follows
    the same path."""
    X, y, qid = _data()
    twice = np.unique(qid)[:5]
    weight = np.where(np.isin(qid, twice), 2.0, 1.0)
    copy = np.isin(qid, twice)
    X2 = np.vstack([X, X[copy]])
    y2 = np.concatenate([y, y[copy]])
    qid2 = np.concatenate([qid, qid[copy] + qid.max() + 1])
    params = dict(
        solver="lbfgs", hidden_layer_sizes=(4,), max_iter=15, random_state=0, feature_scaling=None
    )
    weighted = RankNetRanker(**params).fit(X, y, groups=qid, sample_weight=weight)
    n_queries, n_repeated = len(np.unique(qid)), len(np.unique(qid2))
    alpha = RankNetRanker().alpha * n_repeated / n_queries
    repeated = RankNetRanker(**params, alpha=alpha).fit(X2, y2, groups=qid2)
    assert weighted.loss_ == pytest.approx(repeated.loss_, rel=1e-8)
    assert_same_training(weighted.predict(X), repeated.predict(X))


@pytest.mark.parametrize("Ranker", RANKERS)
def test_weights_change_the_fit(Ranker):
    X, y, qid = _data()
    params = dict(max_iter=5, random_state=0)
    plain = Ranker(**params).fit(X, y, groups=qid).predict(X)
    weighted = Ranker(**params).fit(X, y, groups=qid, sample_weight=_query_weights(qid, 0)).predict(X)
    assert np.abs(weighted - plain).max() > 1e-3 * np.ptp(plain)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_weights_that_vary_inside_a_query_are_refused(Ranker):
    X, y, qid = _data()
    weight = np.ones(len(y))
    weight[np.flatnonzero(qid == qid[0])[1]] = 2.0
    with pytest.raises(ValueError, match="same on every row of a query"):
        Ranker(max_iter=1).fit(X, y, groups=qid, sample_weight=weight)
    with pytest.raises(ValueError, match="same on every row of a query"):
        Ranker(max_iter=1).partial_fit(X, y, groups=qid, sample_weight=weight)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_score_is_the_weighted_mean_ndcg(Ranker):
    X, y, qid = _data()
    weight = _query_weights(qid, 3)
    ranker = Ranker(max_iter=2, random_state=0).fit(X, y, groups=qid)
    expected = ndcg_score(y, ranker.predict(X), groups=qid, k=10, sample_weight=weight)
    assert ranker.score(X, y, groups=qid, sample_weight=weight) == pytest.approx(expected, rel=1e-12)


def test_early_stopping_scores_validation_queries_by_weight():
    X, y, qid = _data(40)
    weight = _query_weights(qid, 4)
    ranker = LambdaRankRanker(
        early_stopping=True, max_iter=3, random_state=0, validation_fraction=0.25
    ).fit(X, y, groups=qid, sample_weight=weight)
    assert len(ranker.validation_scores_) == ranker.n_iter_
    # The split holds out weighted queries only (a query of weight 0 would
    # score nothing there): with weight on 3 queries of 40, one of them is
    # held out and the others train, whatever the seed.
    weighted = np.isin(qid, np.unique(qid)[:3])
    for seed in range(5):
        ranker = LambdaRankRanker(early_stopping=True, max_iter=2, random_state=seed, validation_fraction=0.1)
        ranker.fit(X, y, groups=qid, sample_weight=weighted.astype(float))
        assert len(ranker.validation_scores_) == 2
    with pytest.raises(ValueError, match="only 1 query with a positive sample_weight"):
        only = np.isin(qid, np.unique(qid)[:1])
        LambdaRankRanker(early_stopping=True, max_iter=2, random_state=0, validation_fraction=0.1).fit(
            X, y, groups=qid, sample_weight=only.astype(float)
        )
    # early_stopping="auto" counts the weighted queries too: on 10,000 rows
    # with weight on 5 queries there is nothing worth holding out, and the
    # default fit trains without a split instead of failing.
    X, y, qid = make_ranking(600, n_features=4, n_informative=2, random_state=0)
    assert len(y) >= 10_000
    five = np.isin(qid, np.unique(qid)[:5]).astype(float)
    ranker = LambdaRankRanker(hidden_layer_sizes=(4,), max_iter=2, random_state=0)
    ranker.fit(X, y, groups=qid, sample_weight=five)
    assert ranker.validation_scores_ is None


def test_split_validation_holds_out_weighted_queries_only():
    """Directly: whatever the seed, every held-out query has a positive
    weight, every query is on exactly one side, and without weights the
    split is the one drawn before weights were looked at."""
    from sklearn_ranknet._training import TrainingSet, split_validation

    X, y, qid = _data(40)
    weight = np.where(np.isin(qid, np.unique(qid)[::4]), 2.0, 0.0)
    make_objective = LambdaRankRanker()._objective_factory(None)
    for seed in range(5):
        data = TrainingSet.from_input(X, y, qid, make_objective, weight)
        train, val = split_validation(data, 0.3, np.random.RandomState(seed), make_objective)
        assert (val.weights > 0).all() and val.n_queries == int(np.ceil(0.3 * 10))
        assert train.n_queries + val.n_queries == data.n_queries
        unweighted = TrainingSet.from_input(X, y, qid, make_objective, None)
        _, val = split_validation(unweighted, 0.3, np.random.RandomState(seed), make_objective)
        shuffled = np.random.RandomState(seed).permutation(unweighted.n_queries)
        np.testing.assert_array_equal(val.y, unweighted.subset(np.sort(shuffled[:12]), make_objective).y)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_weights_near_the_float_maximum_train_the_unweighted_model(Ranker):
    # The weights are relative, so their scale never reaches a sum: 1e307
    # on each of 40 queries would overflow to inf (and the loss to nan).
    X, y, qid = _data()
    params = dict(max_iter=3, random_state=0, batch_size=5)
    plain = Ranker(**params).fit(X, y, groups=qid)
    huge = Ranker(**params).fit(X, y, groups=qid, sample_weight=np.full(len(y), 1e307))
    assert np.isfinite(huge.loss_curve_).all()
    assert_same_training(huge.predict(X), plain.predict(X))
    np.testing.assert_allclose(huge.loss_curve_, plain.loss_curve_, rtol=1e-12)


def test_metric_weights_near_the_float_maximum():
    X, y, qid = _data()
    assert len(np.unique(qid)) > 18  # 1e307 per query sums past the float maximum
    scores = X[:, 0]
    expected = ndcg_score(y, scores, groups=qid, k=10)
    got = ndcg_score(y, scores, groups=qid, k=10, sample_weight=np.full(len(y), 1e307))
    assert got == pytest.approx(expected, rel=1e-12)


def test_partial_fit_weighs_queries_within_a_call_not_the_call():
    """As in MLPRegressor.partial_fit: weights weigh a call's queries
    against each other; a factor common to the whole call changes nothing
    (documented), while weights that differ within it do."""
    X, y, qid = _data(30)
    first, second = qid < np.median(qid), qid >= np.median(qid)

    def streamed(weight_of_second):
        ranker = LambdaRankRanker(random_state=0, batch_size=4)
        ranker.partial_fit(X[first], y[first], groups=qid[first])
        return ranker.partial_fit(X[second], y[second], groups=qid[second], sample_weight=weight_of_second)

    plain = streamed(None).predict(X)
    assert_same_training(streamed(np.full(second.sum(), 1e-6)).predict(X), plain)
    uneven = np.where(qid[second] % 2 == 0, 1.0, 5.0)
    assert np.ptp(streamed(uneven).predict(X) - plain) > 1e-3 * np.ptp(plain)


# Found by a mutation audit of the suite (2026-11-27).

def test_query_weights_refuses_all_zero_weights():
    """relative=True divides by the largest weight: all zeros would make
    every query weight 0 / 0 = nan."""
    groups = group_rows([0, 0, 1, 1], 4)
    for relative in (False, True):
        with pytest.raises(ValueError, match="zero for every query"):
            query_weights(groups, [0.0, 0.0, 0.0, 0.0], relative=relative)


@pytest.mark.parametrize("Ranker", [RankNetRanker, LambdaRankRanker, ListNetRanker])
def test_fit_refuses_all_zero_weights_and_keeps_no_model(Ranker):
    X, y, qid = make_ranking(10, n_features=6, n_informative=4, random_state=0)
    X = StandardScaler().fit_transform(X)
    ranker = Ranker(hidden_layer_sizes=(), max_iter=2, random_state=0)
    with pytest.raises(ValueError, match="zero for every query"):
        ranker.fit(X, y, groups=qid, sample_weight=np.zeros(len(y)))
    assert not hasattr(ranker, "coefs_")


def test_complex_weights_are_refused_not_cast_to_their_real_parts():
    """np.asarray(..., dtype=float64) drops imaginary parts with only a
    ComplexWarning: weights of 1+5j trained and scored as 1."""
    X, y, qid = make_ranking(10, n_features=6, n_informative=4, random_state=0)
    weights = np.ones(len(y), dtype=complex)
    weights[qid == 0] = 1 + 5j
    with pytest.raises(ValueError, match="sample_weight must hold real numbers; got complex"):
        ndcg_score(y, X[:, 0], groups=qid, sample_weight=weights)
    ranker = LambdaRankRanker(hidden_layer_sizes=(), max_iter=2, random_state=0)
    with pytest.raises(ValueError, match="sample_weight must hold real numbers; got complex"):
        ranker.fit(X, y, groups=qid, sample_weight=weights)
    assert not hasattr(ranker, "coefs_")
