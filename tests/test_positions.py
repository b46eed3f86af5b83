"""Tests for position-debiased training: ``fit(X, clicks, sessions,
positions=...)`` and its parts in ``_positions.py``.

The merged log is checked against a slow reference that keys each session
by its rows' values; the propensity estimate against rates built from known
propensities (exact expectations, which its Poisson model fits exactly);
the fit against a direct fit on the corrected click rates it says it
trains on; routing in GridSearchCV and BaggingRanker; and bad input.
"""

import warnings
from collections import defaultdict

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import config_context
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet._positions import MIN_PROPENSITY, MergedLog, estimate_propensities, row_identities
from sklearn_ranknet.datasets import make_clicks, make_ranking
from sklearn_ranknet.metrics import ndcg_scorer

RANKERS = [LambdaRankRanker, ListNetRanker, RankNetRanker]
# Short fits (max_iter) keep the suite fast; their convergence is not tested here.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _click_log(n_queries=40, n_sessions=20, temperature=0.0, eta=1.0, seed=0, k=10):
    X, y, groups = make_ranking(n_queries=n_queries, n_features=8, n_informative=6, random_state=seed)
    scores = X[:, :2].sum(axis=1)  # a weak logger, of the features alone
    log = make_clicks(y, groups, scores, n_sessions=n_sessions, temperature=temperature, eta=eta, k=k,
                      max_label=4, random_state=seed)
    return X[log.rows], log


# ----------------------------------------------------------------------
# The merged log


def _reference_merge(X, clicks, sessions, positions, weights=None):
    """Slow reference: {(session's rows and positions): {position: (clicks, weight)}}
    with each row keyed by its values."""
    weights = np.ones(len(clicks)) if weights is None else np.asarray(weights, dtype=float)
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    by_session = defaultdict(list)
    for row in range(len(clicks)):
        by_session[sessions[row]].append(row)
    merged = {}
    for rows in by_session.values():
        rows = sorted(rows, key=lambda row: positions[row])
        key = tuple((tuple(dense[row] + 0.0), int(positions[row])) for row in rows)
        entry = merged.setdefault(key, {"weight": 0.0, "clicks": defaultdict(float)})
        entry["weight"] += weights[rows[0]]
        for row in rows:
            entry["clicks"][int(positions[row])] += weights[row] * clicks[row]
    return {
        key: (entry["weight"], {p: c / entry["weight"] for p, c in entry["clicks"].items()})
        for key, entry in merged.items()
    }


def _as_reference(X, log):
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    out = {}
    for lst in range(log.n_lists):
        entries = np.flatnonzero(log.lists == lst)
        key = tuple((tuple(dense[log.rows[e]] + 0.0), int(log.positions[e])) for e in entries)
        assert key not in out, "two lists of the merged log show the same rows at the same positions"
        out[key] = (log.weights[lst], {int(log.positions[e]): log.rates[e] for e in entries})
    return out


def _assert_same_merge(expected, got):
    assert expected.keys() == got.keys()
    for key in expected:
        assert_allclose(got[key][0], expected[key][0], rtol=1e-12)
        assert got[key][1].keys() == expected[key][1].keys()
        for p in expected[key][1]:
            assert_allclose(got[key][1][p], expected[key][1][p], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("temperature", [0.0, 2.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_merged_log_matches_a_slow_reference(temperature, sparse):
    X, log = _click_log(n_queries=15, n_sessions=6, temperature=temperature)
    X = sp.csr_matrix(X) if sparse else X
    clicks = log.clicks.astype(float)
    merged = MergedLog.of(X, clicks, log.sessions, log.positions)
    _assert_same_merge(_reference_merge(X, clicks, log.sessions, log.positions), _as_reference(X, merged))
    if temperature == 0:  # one list per query: every session shows the same
        assert merged.n_lists == 15
        assert_array_equal(merged.weights, 6)


def test_merged_log_weighs_sessions_by_their_weights():
    X, log = _click_log(n_queries=10, n_sessions=5)
    session_weight = np.random.default_rng(1).uniform(0.5, 2.0, log.sessions.max() + 1)
    weights = session_weight[log.sessions]
    clicks = log.clicks.astype(float)
    merged = MergedLog.of(X, clicks, log.sessions, log.positions, weights)
    _assert_same_merge(_reference_merge(X, clicks, log.sessions, log.positions, weights), _as_reference(X, merged))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_merged_log_does_not_depend_on_row_order(seed):
    X, log = _click_log(n_queries=6, n_sessions=4, temperature=1.0)
    order = np.random.default_rng(seed).permutation(len(log.clicks))
    clicks = log.clicks.astype(float)
    one = _as_reference(X, MergedLog.of(X, clicks, log.sessions, log.positions))
    other = _as_reference(X[order], MergedLog.of(X[order], clicks[order], log.sessions[order], log.positions[order]))
    _assert_same_merge(one, other)


@pytest.mark.parametrize("sparse", [False, True])
def test_row_identities_are_equal_exactly_for_equal_rows(sparse):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 3)).astype(float)  # many repeats
    X[5] = -0.0 * X[5]  # -0.0 and 0.0 are one value
    ids = row_identities(sp.csr_matrix(X) if sparse else X)
    for i in range(len(X)):
        for j in range(len(X)):
            assert (ids[i] == ids[j]) == bool(np.all(X[i] == X[j]))


# ----------------------------------------------------------------------
# The propensity estimate


def _exact_log(theta, beta, n_lists=60, seed=0):
    """Lists of every position 1..len(theta) whose rates are the Poisson
    model's means exactly: theta[p] * 0.3 * exp(beta * z)."""
    rng = np.random.default_rng(seed)
    n_positions = len(theta)
    positions = np.tile(np.arange(1, n_positions + 1), n_lists)
    z = rng.standard_normal(len(positions))
    z = (z - z.mean()) / z.std()
    rates = theta[positions - 1] * 0.3 * np.exp(beta * z)
    log = MergedLog(
        rows=np.arange(len(positions)), rates=rates, positions=positions,
        lists=np.repeat(np.arange(n_lists), n_positions), weights=rng.integers(1, 5, n_lists).astype(float),
    )
    return log, z


@pytest.mark.parametrize("beta", [0.0, 0.4, 1.0])
def test_estimate_recovers_known_propensities(beta):
    theta = (1.0 / np.arange(1, 11)) ** 1.5
    log, z = _exact_log(theta, beta)
    # Any affine map of the scores: they are standardized.
    estimate = estimate_propensities(log, 3.0 * z - 7.0, len(theta))
    assert_allclose(estimate, theta, rtol=1e-6)


def test_estimate_floors_and_fills_positions():
    theta = np.array([1.0, 0.5, 0.0, 0.25])  # position 3 is never clicked
    log, z = _exact_log(theta, 0.0)
    estimate = estimate_propensities(log, z, 5)  # position 5 is never shown
    assert_allclose(estimate[[0, 1, 3]], theta[[0, 1, 3]], rtol=1e-6)
    assert estimate[2] == MIN_PROPENSITY
    assert estimate[4] == estimate[3]


# ----------------------------------------------------------------------
# Fitting on a click log


def _direct_fit(Ranker, X, log, propensities):
    """What a click-log fit says it trains: the ranker (max_iter=20, seed 0)
    on the merged log's rates divided by ``propensities``, with gain 'label'
    and each list weighed by its sessions (ListNet: times its corrected
    clicks)."""
    merged = MergedLog.of(X, log.clicks.astype(float), log.sessions, log.positions)
    labels = merged.debiased_labels(propensities)
    weights = merged.weights
    params = {"max_iter": 20, "random_state": 0}
    if Ranker is ListNetRanker:
        weights = weights * np.bincount(merged.lists, weights=labels)
    if Ranker is not RankNetRanker:
        params["gain"] = "linear"
    return Ranker(**params).fit(X[merged.rows], labels, merged.lists, sample_weight=weights[merged.lists])


@pytest.mark.parametrize("Ranker", RANKERS)
def test_fit_trains_on_the_clicks_corrected_by_its_propensities(Ranker):
    """The fitted model is a fit on the merged log's click rates divided by
    position_propensities_ (see _direct_fit)."""
    X, log = _click_log(n_queries=30, n_sessions=10)
    ranker = Ranker(max_iter=20, random_state=0).fit(X, log.clicks, log.sessions, positions=log.positions)
    theta = ranker.position_propensities_
    assert theta.shape == (10,) and theta[0] == 1.0 and np.all(theta >= MIN_PROPENSITY)
    assert_allclose(ranker.predict(X), _direct_fit(Ranker, X, log, theta).predict(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("Ranker", RANKERS)
def test_known_propensities_are_used_instead_of_estimated(Ranker):
    X, log = _click_log(n_queries=30, n_sessions=10)
    known = np.concatenate([2.0 / np.arange(1, 11), [7.0]])  # only ratios matter; rank 11 unused
    ranker = Ranker(max_iter=20, random_state=0)
    ranker.fit(X, log.clicks, log.sessions, positions=log.positions, propensities=known)
    assert_array_equal(ranker.position_propensities_, known[:10])
    assert_allclose(ranker.predict(X), _direct_fit(Ranker, X, log, known[:10]).predict(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "propensities, message",
    [
        (np.ones(9), "positions go down to 10"),
        (np.r_[1.0, 0.0, np.ones(8)], "finite and > 0"),
        (np.r_[1.0, np.nan, np.ones(8)], "finite and > 0"),
        (np.r_[1.0, -0.5, np.ones(8)], "finite and > 0"),
        (np.ones((10, 1)), "1-d array"),
        (np.array(["a"] * 10), "1-d array of numbers"),
    ],
)
def test_bad_known_propensities_are_refused_clearly(propensities, message):
    X, log = _click_log(n_queries=5, n_sessions=3)
    with pytest.raises(ValueError, match=message):
        LambdaRankRanker(max_iter=3).fit(X, log.clicks, log.sessions, positions=log.positions,
                                         propensities=propensities)


def test_propensities_need_positions():
    X, log = _click_log(n_queries=5, n_sessions=3)
    with pytest.raises(ValueError, match="need positions"):
        LambdaRankRanker(max_iter=3).fit(X, log.clicks, log.sessions, propensities=np.ones(10))


def test_fit_on_one_position_has_nothing_to_correct():
    """Sessions of one document each: nothing to correct (propensities
    [1]), and nothing to rank within a list either, which fit says once, in
    a click log's terms (not "pass query ids, not an id per row")."""
    X, log = _click_log(n_queries=30, n_sessions=10, k=1)
    ranker = LambdaRankRanker(max_iter=20, random_state=0)
    with pytest.warns(UserWarning, match="no session of the click log that showed two documents") as caught:
        ranker.fit(X, log.clicks, log.sessions, positions=log.positions)
    assert not [w for w in caught if "an id per row" in str(w.message)]
    # Named at the caller's line, as fit's own warnings are.
    assert {w.filename for w in caught if "session" in str(w.message)} == {__file__}
    assert_array_equal(ranker.position_propensities_, [1.0])


def test_a_debiased_fit_warns_once_not_once_per_refit():
    X, log = _click_log(n_queries=10, n_sessions=3)
    with pytest.warns(Warning) as caught:
        LambdaRankRanker(max_iter=2, random_state=0).fit(X, log.clicks, log.sessions, positions=log.positions)
    messages = [str(w.message) for w in caught if "max_iter" in str(w.message) or "converge" in str(w.message)]
    assert len(messages) == 1, messages


@pytest.mark.parametrize("Ranker", RANKERS)
@pytest.mark.parametrize("eta", [0.0, 1.0])
def test_fit_estimates_the_position_bias(Ranker, eta):
    """On a randomized log from a known model, the estimate at ranks 2-5
    within 50 % of the truth. The bound is wide because the estimate leans
    on the ranker, fitted on a small log (a few hundred clicks per rank);
    what it catches is an estimate that misses the bias (all ones would be
    5 times the truth at rank 5 for eta=1) or reads it backwards."""
    X, log = _click_log(n_queries=60, n_sessions=40, temperature=1.0, eta=eta, k=5)
    ranker = Ranker(max_iter=30, random_state=0).fit(X, log.clicks, log.sessions, positions=log.positions)
    assert_allclose(ranker.position_propensities_, log.propensities, rtol=0.5)


def test_fit_without_positions_has_no_propensities():
    X, y, groups = make_ranking(n_queries=5, n_features=4, n_informative=3, random_state=0)
    assert LambdaRankRanker(max_iter=3).fit(X, y, groups).position_propensities_ is None


def test_positions_are_routed_like_sample_weight():
    X, log = _click_log(n_queries=30, n_sessions=8)
    grid = {"alpha": [1e-4, 1e-2]}
    with config_context(enable_metadata_routing=True):
        ranker = LambdaRankRanker(max_iter=10, random_state=0).set_fit_request(positions=True)
        search = GridSearchCV(ranker, grid, cv=GroupKFold(2), scoring=ndcg_scorer(10))
        search.fit(X, log.clicks, groups=log.sessions, positions=log.positions)
        assert search.best_estimator_.position_propensities_.shape == (10,)
        # Not requested: scikit-learn refuses to drop it silently.
        unrequested = GridSearchCV(LambdaRankRanker(max_iter=10), grid, cv=GroupKFold(2), scoring=ndcg_scorer(10))
        with pytest.raises(ValueError, match="positions"):
            unrequested.fit(X, log.clicks, groups=log.sessions, positions=log.positions)


@pytest.mark.parametrize("routing", [False, True])
@pytest.mark.parametrize("bootstrap", [False, True])
def test_bagging_passes_positions_to_its_members(routing, bootstrap):
    X, log = _click_log(n_queries=20, n_sessions=5)
    with config_context(enable_metadata_routing=routing):
        member = LambdaRankRanker(max_iter=5)
        if routing:
            member = member.set_fit_request(positions=True)
        bag = BaggingRanker(member, n_estimators=2, bootstrap=bootstrap, random_state=0)
        bag.fit(X, log.clicks, log.sessions, positions=log.positions)
    for fitted in bag.estimators_:
        assert fitted.position_propensities_.shape == (10,)
    if not bootstrap:
        expected = clone(member).set_params(random_state=bag.estimators_[0].random_state)
        with config_context(enable_metadata_routing=routing):
            expected.fit(X, log.clicks, log.sessions, positions=log.positions)
        assert_allclose(bag.estimators_[0].predict(X), expected.predict(X), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c, p: (c, p[:-1]), "positions has"),
        (lambda c, p: (c, np.where(p == 3, 0, p)), "1-based"),
        (lambda c, p: (c, np.where(p == 3, -2, p)), "1-based"),
        (lambda c, p: (c, np.where(p == 3, 2.5, p)), "whole numbers"),
        (lambda c, p: (c, np.where(p == 3, np.nan, p)), "whole numbers"),
        (lambda c, p: (c, p.astype(str)), "whole numbers"),
        (lambda c, p: (c, np.where(p == 3, 10**12, p)), "holds only"),
        (lambda c, p: (np.where(c == 1, 2, c), p), "click log"),
        (lambda c, p: (np.where(c == 1, 0.5, c), p), "click log"),
        (lambda c, p: (np.zeros_like(c), p), "no click"),
        (lambda c, p: (c, np.where(p == 3, 2, p)), "two rows at position 2"),
        (lambda c, p: (c, np.c_[p, p]), r"positions must be 1-d, one rank per row; got an array of shape \("),
        # The propensities are relative to position 1: the log must show it and hold a click there.
        (lambda c, p: (c, p + 1), "No row of the click log was shown at position 1 .the shallowest is 2."),
        (lambda c, p: (np.where(p == 1, 0, c), p), "holds no click at position 1"),
    ],
)
def test_bad_click_logs_are_refused_clearly(change, message):
    X, log = _click_log(n_queries=5, n_sessions=3)
    clicks, positions = change(log.clicks, log.positions)
    ranker = LambdaRankRanker(max_iter=3)
    with pytest.raises(ValueError, match=message):
        ranker.fit(X, clicks, log.sessions, positions=positions)
    assert not hasattr(ranker, "coefs_")  # left unfitted


@pytest.mark.parametrize("known", [False, True])
def test_cv_ranker_fits_its_folds_and_refit_on_the_click_log(known):
    from sklearn_ranknet import LambdaRankRankerCV

    X, log = _click_log(n_queries=20, n_sessions=6)
    extra = {"propensities": 1.0 / np.arange(1, 11)} if known else {}
    grid = {"alpha": [1e-4, 1e-1]}
    cv = LambdaRankRankerCV(grid, cv=2, max_iter=5, random_state=0)
    cv.fit(X, log.clicks, log.sessions, positions=log.positions, **extra)
    assert np.isfinite(cv.cv_results_["mean_test_score"]).all()
    # The refit is the ranker's own fit on the click log, with the best setting.
    best = LambdaRankRanker(max_iter=5, random_state=0, **cv.best_params_)
    best.fit(X, log.clicks, log.sessions, positions=log.positions, **extra)
    assert_allclose(cv.position_propensities_, best.position_propensities_, rtol=1e-12)
    assert_allclose(cv.predict(X), best.predict(X), rtol=1e-12, atol=1e-12)
    # Each fold's fit is the ranker's fit on the fold's sessions.
    train, test = next(GroupKFold(2).split(X, log.clicks, log.sessions))
    fold = LambdaRankRanker(max_iter=5, random_state=0, alpha=1e-4)
    fold.fit(X[train], log.clicks[train], log.sessions[train], positions=log.positions[train], **extra)
    assert cv.cv_results_["split0_test_score"][0] == pytest.approx(
        fold.score(X[test], log.clicks[test], log.sessions[test]), rel=1e-12)


def test_known_propensities_need_no_click_at_position_1():
    X, log = _click_log(n_queries=5, n_sessions=3)
    known = 1.0 / np.arange(1, 12)
    for clicks, positions in ((np.where(log.positions == 1, 0, log.clicks), log.positions),
                              (log.clicks, log.positions + 1)):
        ranker = LambdaRankRanker(max_iter=3, random_state=0)
        ranker.fit(X, clicks, log.sessions, positions=positions, propensities=known[:positions.max()])
        assert_array_equal(ranker.position_propensities_, known[:positions.max()])


def test_positions_as_one_column_are_positions():
    X, log = _click_log(n_queries=5, n_sessions=3)
    flat = LambdaRankRanker(max_iter=3, random_state=0).fit(X, log.clicks, log.sessions, positions=log.positions)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*column-vector")
        column = LambdaRankRanker(max_iter=3, random_state=0).fit(
            X, log.clicks, log.sessions, positions=log.positions[:, None])
    assert_array_equal(column.predict(X), flat.predict(X))


def test_cv_ranker_refuses_bad_click_logs():
    from sklearn_ranknet import LambdaRankRankerCV

    X, log = _click_log(n_queries=5, n_sessions=3)
    with pytest.raises(ValueError, match="positions has"):
        LambdaRankRankerCV(cv=2, max_iter=3).fit(X, log.clicks, log.sessions, positions=log.positions[:-1])
    with pytest.raises(ValueError, match="need positions"):
        LambdaRankRankerCV(cv=2, max_iter=3).fit(X, log.clicks, log.sessions, propensities=np.ones(10))
    with pytest.raises(ValueError, match="No row of the click log was shown at position 1"):
        LambdaRankRankerCV(cv=2, max_iter=3).fit(X, log.clicks, log.sessions, positions=log.positions + 1)


@pytest.mark.parametrize("sparse", [False, True])
def test_fit_on_a_click_log_does_not_depend_on_its_row_order_or_session_ids(sparse):
    X, log = _click_log(n_queries=15, n_sessions=5, temperature=1.0, seed=1)  # clicks at rank 1 (seed 0 has none)
    X = sp.csr_matrix(X) if sparse else X
    order = np.random.default_rng(3).permutation(len(log.clicks))
    renamed = (log.sessions * 7919 + 11)[order]  # other ids, another order
    one = LambdaRankRanker(max_iter=5, random_state=0).fit(X, log.clicks, log.sessions, positions=log.positions)
    other = LambdaRankRanker(max_iter=5, random_state=0).fit(
        X[order], log.clicks[order], renamed, positions=log.positions[order])
    assert_array_equal(one.position_propensities_, other.position_propensities_)
    assert_allclose(one.predict(X), other.predict(X), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------
# The position column: positions that travel in X (routing off)


def _with_columns(X, log, kind="array"):
    """``X`` with the session ids in column 0 and the positions in column 2,
    as an array, a DataFrame (columns "qid", "f0", "pos", ...) or CSR."""
    X_log = np.insert(np.insert(X, 0, log.sessions, axis=1), 2, log.positions, axis=1)
    if kind == "sparse":
        return sp.csr_matrix(X_log)
    if kind == "frame":
        pd = pytest.importorskip("pandas")
        names = ["qid", "f0", "pos"] + [f"f{i}" for i in range(1, X.shape[1])]
        return pd.DataFrame(X_log, columns=names)
    return X_log


@pytest.mark.parametrize("Ranker", RANKERS)
@pytest.mark.parametrize("kind", ["array", "frame", "sparse"])
def test_position_column_fits_as_positions_do(Ranker, kind):
    """The column is read as ``positions=`` and dropped from the features:
    the fit, its propensities, predict and score are those of a fit on the
    features with positions= and groups=."""
    X, log = _click_log(n_queries=20, n_sessions=5)
    X_log = _with_columns(X, log, kind)
    columns = {"query_column": "qid", "position_column": "pos"} if kind == "frame" else {
        "query_column": 0, "position_column": 2}
    ranker = Ranker(max_iter=5, random_state=0, **columns).fit(X_log, log.clicks)
    direct = Ranker(max_iter=5, random_state=0).fit(X, log.clicks, log.sessions, positions=log.positions)
    assert_array_equal(ranker.position_propensities_, direct.position_propensities_)
    assert ranker.n_features_in_ == X.shape[1]
    assert_allclose(ranker.predict(X_log), direct.predict(X), rtol=1e-12, atol=1e-12)
    assert ranker.score(X_log, log.clicks) == pytest.approx(direct.score(X, log.clicks, log.sessions), rel=1e-12)
    # positions= equal to the column are accepted too.
    again = Ranker(max_iter=5, random_state=0, **columns).fit(X_log, log.clicks, positions=log.positions)
    assert_array_equal(again.position_propensities_, direct.position_propensities_)


def test_a_click_log_fit_keeps_the_feature_names():
    pd = pytest.importorskip("pandas")
    X, log = _click_log(n_queries=10, n_sessions=3)
    frame = _with_columns(X, log, "frame")
    ranker = LambdaRankRanker(max_iter=3, query_column="qid", position_column="pos").fit(frame, log.clicks)
    assert list(ranker.feature_names_in_) == [c for c in frame.columns if c not in ("qid", "pos")]
    features = pd.DataFrame(X, columns=ranker.feature_names_in_)
    plain = LambdaRankRanker(max_iter=3).fit(features, log.clicks, log.sessions, positions=log.positions)
    assert_array_equal(plain.feature_names_in_, ranker.feature_names_in_)
    with pytest.raises(ValueError, match="feature names"):
        plain.predict(features[features.columns[::-1]])  # names checked, as after any fit


def test_grid_search_with_routing_off_reads_the_columns():
    """With routing off, GridSearchCV hands the ranker X and y only: every
    fold's fit still learns from the click log (positions and sessions in
    X), as a search with routed metadata does."""
    X, log = _click_log(n_queries=20, n_sessions=5)
    X_log = _with_columns(X, log)
    grid = {"alpha": [1e-4, 1e-1]}
    ranker = LambdaRankRanker(max_iter=5, random_state=0, query_column=0, position_column=2)
    search = GridSearchCV(ranker, grid, cv=GroupKFold(2)).fit(X_log, log.clicks, groups=log.sessions)
    with config_context(enable_metadata_routing=True):
        routed = LambdaRankRanker(max_iter=5, random_state=0).set_fit_request(positions=True)
        expected = GridSearchCV(routed, grid, cv=GroupKFold(2), scoring=ndcg_scorer(10))
        expected.fit(X, log.clicks, groups=log.sessions, positions=log.positions)
    assert_allclose(search.cv_results_["mean_test_score"], expected.cv_results_["mean_test_score"], rtol=1e-12)
    assert_allclose(search.predict(X_log), expected.predict(X), rtol=1e-12, atol=1e-12)


def test_cv_ranker_reads_the_position_column():
    from sklearn_ranknet import LambdaRankRankerCV

    X, log = _click_log(n_queries=20, n_sessions=5)
    grid = {"alpha": [1e-4, 1e-1]}
    cv = LambdaRankRankerCV(grid, cv=2, max_iter=5, random_state=0, query_column=0, position_column=2)
    cv.fit(_with_columns(X, log), log.clicks)
    expected = LambdaRankRankerCV(grid, cv=2, max_iter=5, random_state=0)
    expected.fit(X, log.clicks, log.sessions, positions=log.positions)
    assert_allclose(cv.cv_results_["mean_test_score"], expected.cv_results_["mean_test_score"], rtol=1e-12)
    assert_array_equal(cv.position_propensities_, expected.position_propensities_)
    with pytest.raises(ValueError, match="position_column"):
        LambdaRankRankerCV({"position_column": [2]}, cv=2).fit(_with_columns(X, log), log.clicks)


@pytest.mark.parametrize("on", ["ensemble", "member"])
def test_bagging_reads_the_position_column(on):
    X, log = _click_log(n_queries=20, n_sessions=5)
    X_log = _with_columns(X, log)
    # The member's column is counted in its own input, without the query column.
    member = LambdaRankRanker(max_iter=5, position_column=1 if on == "member" else None)
    bag = BaggingRanker(member, n_estimators=2, random_state=0, query_column=0,
                        position_column=2 if on == "ensemble" else None)
    bag.fit(X_log, log.clicks)
    expected = BaggingRanker(LambdaRankRanker(max_iter=5), n_estimators=2, random_state=0)
    expected.fit(X, log.clicks, log.sessions, positions=log.positions)
    assert_allclose(bag.predict(X_log), expected.predict(X), rtol=1e-12, atol=1e-12)


def test_bagging_refuses_a_position_column_on_both_or_by_name():
    X, log = _click_log(n_queries=5, n_sessions=3)
    X_log = _with_columns(X, log)
    both = BaggingRanker(LambdaRankRanker(position_column=2), query_column=0, position_column=2)
    with pytest.raises(ValueError, match="Both BaggingRanker and its estimator have a position_column"):
        both.fit(X_log, log.clicks)
    named = BaggingRanker(LambdaRankRanker(position_column="pos"), query_column="qid")
    with pytest.raises(ValueError, match="position_column='pos' names a column.*on the BaggingRanker"):
        named.fit(_with_columns(X, log, "frame"), log.clicks)


def test_position_column_bad_input_is_refused_clearly():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, log = _click_log(n_queries=5, n_sessions=3)
    X_log = _with_columns(X, log)
    with pytest.raises(ValueError, match="are the same column of X"):
        LambdaRankRanker(query_column=0, position_column=-X_log.shape[1]).fit(X_log, log.clicks)
    with pytest.raises(ValueError, match="positions and the position column of X .* differ"):
        LambdaRankRanker(query_column=0, position_column=2).fit(X_log, log.clicks, positions=log.positions + 1)
    # A scaler in front rewrites the positions; the message says so.
    pipe = make_pipeline(StandardScaler(), LambdaRankRanker(query_column=0, position_column=2))
    with pytest.raises(ValueError, match=r"The position column of X \(position_column=2\) must hold whole.*scaler"):
        pipe.fit(X_log, log.clicks)
    with pytest.raises(ValueError, match=r"position column of X \(position_column=2\) must hold 1-based"):
        LambdaRankRanker(query_column=0, position_column=2).fit(np.where(X_log == X_log[0, 2], 0, X_log)[:, :3],
                                                                 log.clicks)
    with pytest.raises(ValueError, match="X holds only the query column and the position column"):
        LambdaRankRanker(query_column=0, position_column=1).fit(X_log[:, [0, 2]], log.clicks)
    fitted = LambdaRankRanker(max_iter=3, query_column=0, position_column=2).fit(X_log, log.clicks)
    with pytest.raises(ValueError, match="expects 10: the query-id column, the position column and the 8 features"):
        fitted.predict(X_log[:, 1:])
    with pytest.raises(ValueError, match="partial_fit does not learn from click logs"):
        LambdaRankRanker(max_iter=3, position_column=2).partial_fit(X_log, log.clicks, log.sessions)
    with pytest.raises(ValueError, match="position_column"):
        LambdaRankRanker(position_column=1.5).fit(X_log, log.clicks)


def test_permutation_importance_holds_the_position_column():
    from sklearn_ranknet.inspection import permutation_importance

    X, log = _click_log(n_queries=10, n_sessions=3)
    X_log = _with_columns(X, log)
    ranker = LambdaRankRanker(max_iter=3, random_state=0, query_column=0, position_column=2).fit(X_log, log.clicks)
    result = permutation_importance(ranker, X_log, log.clicks, groups=None, n_repeats=2, random_state=0)
    assert result.importances.shape == (X_log.shape[1], 2)
    assert_array_equal(result.importances[[0, 2]], 0.0)  # not features: predict drops them
