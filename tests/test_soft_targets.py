"""RankNet with soft pair targets sigmoid(y_i - y_j)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_ranknet import RankNetRanker, _jit
from sklearn_ranknet._objectives import RankNetObjective, label_sorted_order
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score
from tests._reference_lambdas import pair_lambdas, soft_ranknet_lambdas
from tests._assertions import assert_gradient_is_the_cost_derivative, whole_gradient



def _queries(rng, n_queries, max_size, score_scale=2.0):
    sizes = rng.integers(1, max_size + 1, n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    labels = np.round(rng.uniform(0, 3, offsets[-1]), 1)  # real-valued, with ties
    scores = rng.normal(scale=score_scale, size=offsets[-1])
    order = label_sorted_order(labels, offsets)
    return scores[order], labels[order], offsets


@pytest.mark.parametrize("sigma", [0.5, 2.0])
@pytest.mark.parametrize("score_scale", [2.0, 1e3])  # the factorized and the exact path
def test_kernel_matches_reference(sigma, score_scale):
    rng = np.random.default_rng(int(sigma * 10) + int(score_scale))
    scores, labels, offsets = _queries(rng, 30, 10, score_scale)
    grad, cost = whole_gradient(RankNetObjective(labels, offsets, sigma=sigma, soft_targets=True), scores, offsets)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        ref_grad, ref_cost = soft_ranknet_lambdas(scores[lo:hi].tolist(), labels[lo:hi].tolist(), sigma=sigma)
        # Means of at most 45 pair terms of size <= sigma (gradient) and
        # <= sigma * |score gap| (cost).
        np.testing.assert_allclose(grad[lo:hi], ref_grad, rtol=0, atol=1e-13 * sigma)
        spread = sigma * np.ptp(scores[lo:hi]) + 1.0
        np.testing.assert_allclose(cost[q], ref_cost, rtol=0, atol=1e-13 * spread)


@given(st.data())
@settings(max_examples=100, deadline=None)
def test_kernel_matches_reference_on_any_query(data):
    n = data.draw(st.integers(1, 12))
    scores = np.array(data.draw(st.lists(st.floats(-30, 30), min_size=n, max_size=n)))
    labels = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 4.0]), min_size=n, max_size=n)))
    order = np.argsort(-labels, kind="stable")
    scores, labels, offsets = scores[order], labels[order], np.array([0, n])
    grad, cost = whole_gradient(RankNetObjective(labels, offsets, sigma=1.0, soft_targets=True), scores, offsets)
    ref_grad, ref_cost = soft_ranknet_lambdas(scores.tolist(), labels.tolist())
    np.testing.assert_allclose(grad, ref_grad, rtol=0, atol=1e-13)
    np.testing.assert_allclose(cost[0], ref_cost, rtol=0, atol=1e-13 * (1 + np.ptp(scores)))


def test_gradient_is_the_derivative_of_the_cost():
    rng = np.random.default_rng(3)
    scores, labels, offsets = _queries(rng, 6, 8)
    objective = RankNetObjective(labels, offsets, sigma=1.3, soft_targets=True)
    assert_gradient_is_the_cost_derivative(objective, scores, offsets)


def test_far_apart_labels_are_hard_targets():
    """sigmoid(y_i - y_j) -> 1 as the labels part: labels 0 and 40 give the
    hard-target gradient to rounding (exp(-40) ~ 4e-18)."""
    rng = np.random.default_rng(4)
    scores, labels, offsets = _queries(rng, 20, 8)
    labels = np.where(labels > 1.5, 40.0, 0.0)
    order = label_sorted_order(labels, offsets)
    scores, labels = scores[order], labels[order]
    soft, soft_cost = whole_gradient(RankNetObjective(labels, offsets, sigma=1.0, soft_targets=True), scores, offsets)
    hard, hard_cost = whole_gradient(RankNetObjective(labels, offsets, sigma=1.0), scores, offsets)
    np.testing.assert_allclose(soft, hard, rtol=0, atol=1e-15)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        assert hard_cost[q] == pytest.approx(pair_lambdas(scores[lo:hi].tolist(), labels[lo:hi].tolist())[1], abs=1e-12)


def test_results_do_not_depend_on_the_number_of_threads(monkeypatch):
    monkeypatch.setattr(_jit, "SERIAL_BELOW_WORK", 0)
    rng = np.random.default_rng(5)
    scores, labels, offsets = _queries(rng, 300, 40)
    objective = RankNetObjective(labels, offsets, sigma=1.0, soft_targets=True)
    results = []
    for n_threads in (1, 2, 3):
        results.append(whole_gradient(objective, scores, offsets, n_threads=n_threads))
    for grad, cost in results[1:]:
        np.testing.assert_array_equal(grad, results[0][0])
        np.testing.assert_array_equal(cost, results[0][1])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_ranker_learns_from_click_rates():
    X, y, qid = make_ranking(60, n_features=5, n_informative=3, noise=0.1, random_state=0)
    rates = 2.0 * y + np.random.default_rng(0).uniform(0, 0.5, len(y))  # real-valued, grade order
    params = dict(hidden_layer_sizes=(), learning_rate_init=0.05, max_iter=30, random_state=0)
    soft = RankNetRanker(pair_targets="soft", **params).fit(X, rates, groups=qid)
    random = ndcg_score(y, np.random.default_rng(1).normal(size=len(y)), groups=qid, k=10)
    assert ndcg_score(y, soft.predict(X), groups=qid, k=10) > random + 0.05
    hard = RankNetRanker(**params).fit(X, rates, groups=qid)
    assert not np.allclose(soft.predict(X), hard.predict(X))
