"""Tests for sklearn_ranknet.datasets.make_clicks, the click simulator.

Structure is checked exactly (what each session shows, ids, ranks); the
random clicks are checked against the model's probabilities, with bounds of
five binomial standard deviations, and the cascade's examination against a
slow reference that walks each list.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_ranknet.datasets import make_clicks, make_ranking


def _problem(seed=0, n_queries=30):
    _, y, groups = make_ranking(n_queries=n_queries, min_docs=3, max_docs=25, random_state=seed)
    scores = np.random.default_rng(seed).standard_normal(len(y)) + 0.5 * y
    return y, groups, scores


def _expected_lists(y, groups, scores, k):
    """Slow reference: each query's top k rows by score, ties in input order."""
    lists = {}
    for query in np.unique(groups):
        rows = np.flatnonzero(groups == query)
        ranked = sorted(rows, key=lambda row: (-scores[row], row))
        lists[query] = ranked if k is None else ranked[:k]
    return lists


@pytest.mark.parametrize("k", [1, 5, 10, None])
@pytest.mark.parametrize("click_model", ["position_based", "cascade"])
def test_every_session_shows_the_top_k_of_its_query(k, click_model):
    y, groups, scores = _problem()
    n_sessions = 4
    log = make_clicks(y, groups, scores, n_sessions=n_sessions, k=k, click_model=click_model,
                      random_state=0)
    expected = _expected_lists(y, groups, scores, k)
    queries = np.unique(groups)
    assert np.array_equal(np.unique(log.sessions), np.arange(len(queries) * n_sessions))
    for session in range(len(queries) * n_sessions):
        mine = log.sessions == session
        query = queries[session // n_sessions]
        assert log.rows[mine].tolist() == list(expected[query])
        assert log.positions[mine].tolist() == list(range(1, mine.sum() + 1))
    # Ordered by query, session, rank.
    assert np.all(np.diff(log.sessions) >= 0)
    n_shown = sum(len(rows) for rows in expected.values())
    for name in ("rows", "sessions", "positions", "clicks", "examination", "attractiveness"):
        assert log[name].shape == (n_shown * n_sessions,)
    assert set(np.unique(log.clicks)) <= {0, 1}
    assert log.clicks.dtype == log.rows.dtype == log.positions.dtype == np.int64


def test_attractiveness_follows_the_grade_with_a_noise_floor():
    y, groups, scores = _problem()
    log = make_clicks(y, groups, scores, n_sessions=1, click_noise=0.2, max_label=5, random_state=0)
    grade = y[log.rows]
    assert np.allclose(log.attractiveness, 0.2 + 0.8 * (2.0**grade - 1) / (2.0**5 - 1), rtol=1e-14)
    top = make_clicks(y, groups, scores, n_sessions=1, random_state=0)  # max_label = 4 here
    assert y.max() == 4
    assert np.allclose(top.attractiveness[y[top.rows] == 4], 1.0)
    assert np.allclose(top.attractiveness[y[top.rows] == 0], 0.1)
    zero = make_clicks(np.zeros(5), None, np.arange(5.0), n_sessions=2, click_noise=0.3, random_state=0)
    assert np.allclose(zero.attractiveness, 0.3)


@pytest.mark.parametrize("eta", [0.0, 1.0, 2.0])
def test_position_based_clicks_happen_at_the_model_rate(eta):
    """Per (rank, grade) cell the click rate is (1/r)**eta * attractiveness."""
    y, groups, scores = _problem(seed=1)
    log = make_clicks(y, groups, scores, n_sessions=300, eta=eta, random_state=1)
    assert np.allclose(log.propensities, (1.0 / np.arange(1, 11)) ** eta, rtol=1e-15)
    assert np.allclose(log.examination, (1.0 / log.positions) ** eta, rtol=1e-15)
    grade = y[log.rows]
    checked = 0
    for rank in range(1, 11):
        for label in range(5):
            cell = (log.positions == rank) & (grade == label)
            n = cell.sum()
            if n < 200:
                continue
            p = log.examination[cell][0] * log.attractiveness[cell][0]
            assert abs(log.clicks[cell].mean() - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12
            checked += 1
    assert checked >= 20


def _cascade_reference(attractiveness):
    """Examination of each rank of one list: nothing above clicked."""
    examination, unclicked = [], 1.0
    for a in attractiveness:
        examination.append(unclicked)
        unclicked *= 1.0 - a
    return np.array(examination)


def test_cascade_stops_at_the_first_click():
    y, groups, scores = _problem(seed=2)
    log = make_clicks(y, groups, scores, n_sessions=50, click_model="cascade", random_state=2)
    ones = 0
    for session in np.unique(log.sessions):
        mine = log.sessions == session
        clicks = log.clicks[mine]
        assert clicks.sum() <= 1
        ones += clicks.sum()
        assert np.allclose(log.examination[mine], _cascade_reference(log.attractiveness[mine]),
                           rtol=1e-12, atol=0)
    assert ones > 0
    assert np.all(log.examination[log.positions == 1] == 1.0)


def test_cascade_first_click_rate_matches_the_model():
    # One query, fixed list: the click rate at each rank is examination * attractiveness.
    y = np.array([1, 0, 2, 0, 1, 0])
    scores = -np.arange(6.0)
    n_sessions = 20000
    log = make_clicks(y, None, scores, n_sessions=n_sessions, click_model="cascade", random_state=3)
    by_rank = log.clicks.reshape(n_sessions, 6).mean(axis=0)
    p = log.examination[:6] * log.attractiveness[:6]
    assert np.all(np.abs(by_rank - p) <= 5 * np.sqrt(p * (1 - p) / n_sessions))
    assert np.allclose(log.propensities, log.examination[:6], rtol=1e-15)


def test_randomized_logging_draws_lists_from_plackett_luce():
    scores = np.array([1.0, 0.0, -1.0])
    n_sessions = 20000
    log = make_clicks([0, 1, 2], None, scores, n_sessions=n_sessions, k=2, temperature=0.5,
                      random_state=4)
    first = log.rows[log.positions == 1]
    p_first = np.exp(scores / 0.5) / np.exp(scores / 0.5).sum()
    counts = np.bincount(first, minlength=3) / n_sessions
    assert np.all(np.abs(counts - p_first) <= 5 * np.sqrt(p_first * (1 - p_first) / n_sessions))
    # The second document is drawn from the rest: P(0 then 1) = p0 * p1 / (1 - p0).
    pairs = log.rows.reshape(n_sessions, 2)
    p01 = p_first[0] * p_first[1] / (1 - p_first[0])
    rate = np.mean((pairs[:, 0] == 0) & (pairs[:, 1] == 1))
    assert abs(rate - p01) <= 5 * np.sqrt(p01 * (1 - p01) / n_sessions)
    assert np.all(pairs[:, 0] != pairs[:, 1])


def test_reproducible_and_seeded():
    y, groups, scores = _problem()
    one = make_clicks(y, groups, scores, n_sessions=5, temperature=1.0, random_state=7)
    two = make_clicks(y, groups, scores, n_sessions=5, temperature=1.0, random_state=7)
    other = make_clicks(y, groups, scores, n_sessions=5, temperature=1.0, random_state=8)
    for name in one:
        assert np.array_equal(one[name], two[name])
    assert not np.array_equal(one.clicks, other.clicks)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), n_sessions=st.integers(1, 4), k=st.sampled_from([1, 3, None]))
def test_the_input_row_order_does_not_matter(seed, n_sessions, k):
    """Shuffled rows (with their ids) give the same log, mapped through the
    shuffle, when no scores tie."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    y = rng.integers(0, 5, n)
    groups = rng.integers(0, 4, n)
    scores = rng.permutation(n).astype(float)
    perm = rng.permutation(n)
    log = make_clicks(y, groups, scores, n_sessions=n_sessions, k=k, random_state=seed)
    shuffled = make_clicks(y[perm], groups[perm], scores[perm], n_sessions=n_sessions, k=k,
                           random_state=seed)
    assert np.array_equal(perm[shuffled.rows], log.rows)
    for name in ("sessions", "positions", "clicks", "examination", "attractiveness", "propensities"):
        assert np.array_equal(shuffled[name], log[name])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"scores": np.arange(4.0)}, "y has 5 rows but scores has 4"),
        ({"scores": [0.0, np.nan, 1.0, 2.0, 3.0]}, "finite"),
        ({"y": [0, 1, -1, 2, 0]}, "negative"),
        ({"y": [0, 1, 31, 2, 0]}, "at most 30"),
        ({"max_label": 1}, "above max_label=1"),
        ({"max_label": 2000}, r"'max_label' parameter of make_clicks must be a float in the range \[0.0, 30.0\]"),
        ({"n_sessions": 0}, "'n_sessions' parameter"),
        ({"n_sessions": 2.5}, "'n_sessions' parameter"),
        ({"k": 0}, "'k' parameter"),
        ({"eta": -1.0}, "'eta' parameter"),
        ({"click_noise": 1.5}, "'click_noise' parameter"),
        ({"click_model": "dbn"}, "'click_model' parameter"),
        ({"temperature": -0.1}, "'temperature' parameter"),
        ({"groups": [0, 0, 1]}, "groups has 3 entries"),
    ],
)
def test_bad_input_is_answered_clearly(kwargs, message):
    arguments = {"y": [0, 1, 2, 0, 1], "groups": [0, 0, 0, 1, 1], "scores": np.arange(5.0),
                 "n_sessions": 2}
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        make_clicks(**arguments)


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="empty"):
        make_clicks([], [], [], n_sessions=1)
