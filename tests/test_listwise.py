"""ListNet's softmax kernel against the slow reference and finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Ridge

from sklearn_ranknet import ListNetRanker, _jit
from sklearn_ranknet._objectives import ListNetObjective
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score
from tests._reference_listwise import softmax_cross_entropy
from tests._assertions import assert_gradient_is_the_cost_derivative, whole_gradient



def _random_queries(rng, n_queries, max_size, soft=False):
    sizes = rng.integers(1, max_size + 1, size=n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    labels = rng.uniform(0, 1, offsets[-1]) if soft else rng.integers(0, 5, offsets[-1]).astype(float)
    labels[offsets[0] : offsets[1]] = 0.0  # a query with no target
    scores = rng.normal(scale=3.0, size=offsets[-1])
    return scores, labels, offsets


@pytest.mark.parametrize("soft", [False, True])
@pytest.mark.parametrize("sigma", [1.0, 0.3])
def test_kernel_matches_reference(soft, sigma):
    rng = np.random.default_rng(int(soft) + int(10 * sigma))
    scores, labels, offsets = _random_queries(rng, 40, 12, soft)
    grad, cost = whole_gradient(ListNetObjective(labels, offsets, sigma=sigma), scores, offsets)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        ref_grad, ref_cost = softmax_cross_entropy(scores[lo:hi].tolist(), labels[lo:hi].tolist(), sigma)
        # Sums of at most 12 terms of size <= 1: a few ulps of 1.
        np.testing.assert_allclose(grad[lo:hi], ref_grad, rtol=0, atol=1e-14)
        np.testing.assert_allclose(cost[q], ref_cost, rtol=1e-13, atol=1e-13)


@given(
    scores=st.lists(st.floats(-50, 50), min_size=1, max_size=15),
    data=st.data(),
    sigma=st.floats(0.1, 4.0),
)
@settings(max_examples=200, deadline=None)
def test_kernel_matches_reference_on_any_query(scores, data, sigma):
    labels = data.draw(st.lists(st.integers(0, 4), min_size=len(scores), max_size=len(scores)))
    scores, labels = np.array(scores), np.array(labels, dtype=float)
    offsets = np.array([0, len(scores)])
    grad, cost = whole_gradient(ListNetObjective(labels, offsets, sigma=sigma), scores, offsets)
    ref_grad, ref_cost = softmax_cross_entropy(scores.tolist(), labels.tolist(), sigma)
    # Each gradient is sigma times a difference of numbers in [0, 1].
    np.testing.assert_allclose(grad, ref_grad, rtol=0, atol=1e-14 * sigma)
    # The cost sums terms up to sigma * 100 in size.
    np.testing.assert_allclose(cost[0], ref_cost, rtol=0, atol=1e-13 * (1 + sigma * 100))


def test_gradient_is_the_derivative_of_the_cost():
    rng = np.random.default_rng(3)
    scores, labels, offsets = _random_queries(rng, 6, 8)
    objective = ListNetObjective(labels, offsets, sigma=1.3)
    assert_gradient_is_the_cost_derivative(objective, scores, offsets)


def test_gradient_sums_to_zero_and_cost_is_minimal_at_the_target():
    rng = np.random.default_rng(4)
    scores, labels, offsets = _random_queries(rng, 30, 10)
    grad, cost = whole_gradient(ListNetObjective(labels, offsets, sigma=1.0), scores, offsets)
    for q in range(len(offsets) - 1):
        assert abs(grad[offsets[q] : offsets[q + 1]].sum()) < 1e-14
    assert np.all(grad[offsets[0] : offsets[1]] == 0.0) and cost[0] == 0.0
    # Scores equal to the log of positive targets (plus a constant): the
    # softmax is the target, so the gradient vanishes and the cost is the
    # target's entropy.
    labels = np.array([3.0, 1.0, 2.0])
    scores = np.log(labels / labels.sum()) + 7.0
    grad, cost = whole_gradient(ListNetObjective(labels, np.array([0, 3]), sigma=1.0), scores, np.array([0, 3]))
    target = labels / labels.sum()
    np.testing.assert_allclose(grad, 0.0, atol=1e-15)
    assert cost[0] == pytest.approx(-(target * np.log(target)).sum(), rel=1e-14)


@pytest.mark.parametrize("gap", [1e4, 1e300])
def test_huge_scores_stay_finite(gap):
    labels = np.array([2.0, 1.0, 0.0])
    offsets = np.array([0, 3])
    grad, cost = whole_gradient(ListNetObjective(labels, offsets, sigma=1.0), np.array([-gap, 0.0, gap]), offsets)
    assert np.all(np.isfinite(grad)) and np.isfinite(cost[0])
    np.testing.assert_allclose(grad, [-2 / 3, -1 / 3, 1.0], rtol=1e-15)


def test_results_do_not_depend_on_the_number_of_threads(monkeypatch):
    monkeypatch.setattr(_jit, "SERIAL_BELOW_WORK", 0)
    rng = np.random.default_rng(5)
    scores, labels, offsets = _random_queries(rng, 300, 40)
    objective = ListNetObjective(labels, offsets, sigma=1.0)
    results = []
    for n_threads in (1, 2, 3):
        results.append(whole_gradient(objective, scores, offsets, n_threads=n_threads))
    for grad, cost in results[1:]:
        np.testing.assert_array_equal(grad, results[0][0])
        np.testing.assert_array_equal(cost, results[0][1])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_ranker_learns_soft_labels():
    """Real-valued labels (click-through rates) are targets as they are."""
    X, y, qid = make_ranking(60, n_features=5, n_informative=3, noise=0.1, random_state=0)
    ctr = (y + np.random.default_rng(0).uniform(0, 0.5, len(y))) / 5.0
    ranker = ListNetRanker(
        hidden_layer_sizes=(), learning_rate_init=0.05, max_iter=50, random_state=0, gain="linear"
    ).fit(X, ctr, groups=qid)

    # The rates follow the grades: the ranking recovers the grades as well
    # as a least-squares fit of the grades does, far better than chance.
    learned = ndcg_score(y, ranker.predict(X), groups=qid, k=10)
    least_squares = ndcg_score(y, Ridge().fit(X, y).predict(X), groups=qid, k=10)
    random = ndcg_score(y, np.random.default_rng(1).normal(size=len(y)), groups=qid, k=10)
    assert learned > random + 0.05
    assert learned > least_squares - 0.02


def test_exponential_gain_targets_are_the_gains():
    """gain="exponential" is the linear objective on labels 2**y - 1."""
    rng = np.random.default_rng(6)
    scores, labels, offsets = _random_queries(rng, 20, 9)
    exponential = whole_gradient(ListNetObjective(labels, offsets, sigma=1.0, gain="exponential"), scores, offsets)
    on_gains = whole_gradient(ListNetObjective(2.0**labels - 1.0, offsets, sigma=1.0), scores, offsets)
    np.testing.assert_array_equal(exponential[0], on_gains[0])
    np.testing.assert_array_equal(exponential[1], on_gains[1])
