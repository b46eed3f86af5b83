"""Lambda kernels against the slow reference, finite differences and the
RankNet probability identities."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import LambdaRankRanker, _jit
from sklearn_ranknet._kernels import pair_lambdas as lambda_kernels
from sklearn_ranknet._kernels.pair_lambdas import LAMBDALOSS_MU
from sklearn_ranknet._objectives import (
    LambdaRankObjective,
    RankNetObjective,
    label_sorted_order,
)
from sklearn_ranknet.datasets import make_ranking
from tests._assertions import assert_gradient_is_the_cost_derivative, whole_gradient
from tests._reference_lambdas import (
    pair_lambdas,
    pair_weights,
    ranknet_weights,
    weighted_pair_lambdas,
)


def _random_queries(rng, n_queries, max_size, n_score_values=None):
    sizes = rng.randint(1, max_size + 1, size=n_queries)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    labels = rng.randint(0, 5, size=offsets[-1]).astype(float)
    labels[offsets[0] : offsets[1]] = 0.0  # one query without relevant documents
    if n_score_values is None:
        scores = rng.normal(scale=2.0, size=offsets[-1])
    else:  # few distinct values: many ties
        scores = rng.randint(0, n_score_values, size=offsets[-1]).astype(float)
    order = label_sorted_order(labels, offsets)
    return scores[order], labels[order], offsets


def _objective(kind, labels, offsets, sigma=1.0, **kwargs):
    if kind == "ranknet":
        return RankNetObjective(labels, offsets, sigma=sigma)
    return LambdaRankObjective(labels, offsets, sigma=sigma, **kwargs)


def _reference_kwargs(kind, kwargs):
    """pair_lambdas' keywords for an objective's."""
    if kind == "ranknet":
        return dict(weighting=None)
    weighting = kwargs.get("pair_weighting", "lambdarank")
    return dict(
        weighting=kwargs["metric"] if weighting == "lambdarank" else weighting,
        k=kwargs.get("k"), exponential=kwargs.get("gain") != "linear",
    )


def _check_query(grad, cost, scores, labels, sigma, kind, kwargs):
    """One query's lambdas and cost against the reference.

    Every pair's lambda and cost is found within a few ulp of its weight
    (lambda = sigma * weight * rho with rho <= 1; a cost near 0 is -log(f)
    with f near 1, within an ulp of f), and each output sums them: the error
    is a few ulp of the total weight, times a safety factor for the sums'
    order. 1e-12 of the total weight (sigma times it for the lambdas)."""
    reference = _reference_kwargs(kind, kwargs)
    if reference["weighting"] is None:
        weights = ranknet_weights(labels)
    else:
        weights = pair_weights(scores, labels, **reference)
    ref_grad, ref_cost = weighted_pair_lambdas(scores, weights, sigma=sigma)
    total = sum(weights.values())
    np.testing.assert_allclose(grad, ref_grad, rtol=0, atol=1e-12 * sigma * total)
    np.testing.assert_allclose(cost, ref_cost, rtol=0, atol=1e-12 * total)



CASES = [
    ("ranknet", {}),
    ("lambdarank", dict(metric="ndcg", k=None, gain="exponential")),
    ("lambdarank", dict(metric="ndcg", k=3, gain="exponential")),
    ("lambdarank", dict(metric="ndcg", k=None, gain="linear")),
    ("lambdarank", dict(metric="map", k=None, gain="exponential")),
    ("lambdarank", dict(metric="map", k=2, gain="exponential")),
    ("lambdarank", dict(metric="ndcg", k=None, gain="exponential", pair_weighting="ndcg_loss2")),
    ("lambdarank", dict(metric="ndcg", k=3, gain="linear", pair_weighting="ndcg_loss2")),
    ("lambdarank", dict(metric="ndcg", k=None, gain="linear", pair_weighting="ndcg_loss2++")),
    ("lambdarank", dict(metric="ndcg", k=3, gain="exponential", pair_weighting="ndcg_loss2++")),
    # k beyond every query's length: the same as k=None
    ("lambdarank", dict(metric="ndcg", k=20, gain="exponential", pair_weighting="ndcg_loss2++")),
]


@pytest.mark.parametrize("kind, kwargs", CASES)
@pytest.mark.parametrize("n_score_values", [None, 3])
@pytest.mark.parametrize("sigma", [1.0, 2.5])
def test_kernel_matches_reference(kind, kwargs, n_score_values, sigma):
    rng = np.random.RandomState(len(kwargs) + int(sigma * 10))
    scores, labels, offsets = _random_queries(rng, 25, 9, n_score_values)
    assert np.any(np.diff(offsets) == 1)  # single-document queries
    objective = _objective(kind, labels, offsets, sigma, **kwargs)
    grad, cost = whole_gradient(objective, scores, offsets)
    # Without the cost, short queries take another path (_short_query_lambdas).
    grad_alone, _ = whole_gradient(objective, scores, offsets, with_cost=False)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        for g in (grad, grad_alone):
            _check_query(g[lo:hi], cost[q], scores[lo:hi].tolist(), labels[lo:hi].tolist(), sigma, kind, kwargs)


@pytest.mark.parametrize("k", [None, 4, 16])
@pytest.mark.parametrize("n_score_values", [None, 4])
def test_short_and_long_query_paths_match_reference(k, n_score_values):
    """Query lengths on both sides of SHORT_QUERY, of SHORT_QUERY_PER_K * k
    and of the padding to LANES, with and without the cost (which always
    takes the general path)."""
    rng = np.random.RandomState(5)
    sizes = np.array([2, 3, 15, 16, 17, 33, 63, 64, 65, 90])
    assert sizes.max() > lambda_kernels.SHORT_QUERY >= 64
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    labels = rng.randint(0, 5, size=offsets[-1]).astype(float)
    labels = labels[label_sorted_order(labels, offsets)]
    if n_score_values is None:
        scores = rng.normal(scale=2.0, size=offsets[-1])
    else:
        scores = rng.randint(0, n_score_values, size=offsets[-1]).astype(float)
    kwargs = dict(metric="ndcg", k=k, gain="exponential")
    objective = _objective("lambdarank", labels, offsets, 1.5, **kwargs)
    grad, cost = whole_gradient(objective, scores, offsets)
    grad_alone, _ = whole_gradient(objective, scores, offsets, with_cost=False)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        for g in (grad, grad_alone):
            _check_query(
                g[lo:hi], cost[q], scores[lo:hi].tolist(), labels[lo:hi].tolist(), 1.5, "lambdarank", kwargs
            )


@pytest.mark.parametrize(
    "pair_weighting, k",
    # ("ndcg_loss2++", None) would take the reference's |delta NDCG| of every pair: slow
    [("ndcg_loss2", None), ("ndcg_loss2", 5), ("ndcg_loss2++", 5)],
)
@pytest.mark.parametrize("n_score_values", [None, 40])
def test_lambdaloss_on_long_queries_matches_reference(pair_weighting, k, n_score_values):
    """Queries longer than the sorts' small-query paths: the distance term
    needs the true rank of every document, also below k."""
    rng = np.random.RandomState(11)
    sizes = np.array([300, 150, 200])
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    labels = rng.randint(0, 5, size=offsets[-1]).astype(float)
    order = label_sorted_order(labels, offsets)
    labels = labels[order]
    if n_score_values is None:
        scores = rng.normal(scale=2.0, size=offsets[-1])
    else:
        scores = rng.randint(0, n_score_values, size=offsets[-1]).astype(float)
    kwargs = dict(metric="ndcg", k=k, gain="exponential", pair_weighting=pair_weighting)
    grad, cost = whole_gradient(_objective("lambdarank", labels, offsets, 1.5, **kwargs), scores, offsets)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        _check_query(
            grad[lo:hi], cost[q], scores[lo:hi].tolist(), labels[lo:hi].tolist(), 1.5, "lambdarank", kwargs
        )


@pytest.mark.parametrize("kind, kwargs", CASES)
def test_gradient_is_the_derivative_of_the_cost(kind, kwargs):
    """Central differences of the returned cost. For LambdaRank the weights
    are constant while the ranking does not change, so the cost is smooth
    around distinct scores."""
    rng = np.random.RandomState(3)
    scores, labels, offsets = _random_queries(rng, 6, 8)
    objective = _objective(kind, labels, offsets, 1.3, **kwargs)
    assert_gradient_is_the_cost_derivative(objective, scores, offsets)


@pytest.mark.parametrize("kind, kwargs", CASES[1:])
def test_pair_weights_are_what_multiplies_each_ranknet_pair(kind, kwargs):
    """While the ranking does not change, the weights are constants, so the
    mixed derivative d lambda_i / d s_j of a pair (i, j) is that of its one
    RankNet term times its weight: -w_ij sigma^2 rho (1 - rho). Read off the
    kernel by central differences, against the reference's weights."""
    rng = np.random.RandomState(9)
    n, sigma = 8, 1.3
    labels = np.array([3.0, 2.0, 2.0, 1.0, 1.0, 0.0, 0.0, 0.0])  # descending, with ties
    scores = 0.6 * rng.permutation(n) + 0.1 * rng.rand(n)  # gaps >= 0.5: fixed ranks
    offsets = np.array([0, n])
    objective = _objective(kind, labels, offsets, sigma, **kwargs)
    eps = 1e-5
    numeric = np.empty((n, n))
    for j in range(n):
        up, down = scores.copy(), scores.copy()
        up[j] += eps
        down[j] -= eps
        numeric[:, j] = (whole_gradient(objective, up, offsets)[0] - whole_gradient(objective, down, offsets)[0]) / (2 * eps)
    weights = pair_weights(scores.tolist(), labels.tolist(), **_reference_kwargs(kind, kwargs))
    expected = np.zeros((n, n))
    for (i, j), w in weights.items():
        rho = 1.0 / (1.0 + np.exp(sigma * (scores[i] - scores[j])))
        expected[i, j] = expected[j, i] = -w * sigma**2 * rho * (1.0 - rho)
    off_diagonal = ~np.eye(n, dtype=bool)
    assert np.count_nonzero(expected) > n
    np.testing.assert_allclose(
        numeric[off_diagonal], expected[off_diagonal], rtol=1e-6, atol=1e-8 * np.abs(expected).max()
    )


@pytest.mark.parametrize("k", [None, 4])
def test_ndcg_loss2_plus_plus_is_mu_ndcg_loss2_plus_lambdarank(k):
    """The three weightings visit the same pairs and the lambdas are linear
    in the weights."""
    rng = np.random.RandomState(10)
    scores, labels, offsets = _random_queries(rng, 30, 15, n_score_values=4)
    grads = {}
    for pair_weighting in ("lambdarank", "ndcg_loss2", "ndcg_loss2++"):
        objective = LambdaRankObjective(
            labels, offsets, sigma=1.0, metric="ndcg", k=k, gain="exponential", pair_weighting=pair_weighting
        )
        grads[pair_weighting] = whole_gradient(objective, scores, offsets)
    for part in (0, 1):  # gradient, cost
        combined = LAMBDALOSS_MU * grads["ndcg_loss2"][part] + grads["lambdarank"][part]
        scale = np.abs(combined).max()
        np.testing.assert_allclose(grads["ndcg_loss2++"][part], combined, rtol=0, atol=1e-13 * scale)


def test_default_pair_weighting_is_lambdarank():
    rng = np.random.RandomState(12)
    scores, labels, offsets = _random_queries(rng, 20, 30)
    kwargs = dict(sigma=1.0, metric="ndcg", k=5, gain="exponential")
    default = whole_gradient(LambdaRankObjective(labels, offsets, **kwargs), scores, offsets)
    explicit = whole_gradient(LambdaRankObjective(labels, offsets, pair_weighting="lambdarank", **kwargs), scores, offsets)
    np.testing.assert_array_equal(default[0], explicit[0])
    np.testing.assert_array_equal(default[1], explicit[1])
    assert LambdaRankRanker().pair_weighting == "lambdarank"


def test_every_pair_weighting_runs_the_one_compiled_kernel():
    """The weighting is a table and an int, not a specialization: a new
    user's first process compiles lambdarank_chunk once."""
    rng = np.random.RandomState(13)
    scores, labels, offsets = _random_queries(rng, 5, 10)
    variants = [("ndcg", "lambdarank"), ("map", "lambdarank"), ("ndcg", "ndcg_loss2"), ("ndcg", "ndcg_loss2++")]
    for metric, pair_weighting in variants:
        objective = LambdaRankObjective(
            labels, offsets, sigma=1.0, metric=metric, k=3, gain="exponential", pair_weighting=pair_weighting
        )
        for with_cost in (False, True):
            whole_gradient(objective, scores, offsets, with_cost=with_cost)
    assert len(lambda_kernels.lambdarank_chunk.signatures) == 1


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("pair_weighting", ["ndcg_loss2++", "ndcg_loss2"])
def test_lambdaloss_ranker_improves_training_ndcg(pair_weighting):
    X, y, qid = make_ranking(n_queries=40, max_docs=30, random_state=0)
    X = StandardScaler().fit_transform(X)
    ranker = LambdaRankRanker(
        hidden_layer_sizes=(8,), k=10, batch_size=8, pair_weighting=pair_weighting, random_state=0,
        warm_start=True, max_iter=1, learning_rate_init=1e-12,  # one epoch that moves nothing
    ).fit(X, y, groups=qid)
    initial = ranker.score(X, y, groups=qid)
    ranker.set_params(max_iter=30, learning_rate_init=0.01).fit(X, y, groups=qid)
    assert ranker.score(X, y, groups=qid) > initial + 0.2  # 0.62 -> 0.96 when written


@pytest.mark.parametrize("pair_weighting", ["ndcg_loss2", "ndcg_loss2++"])
def test_lambdaloss_with_map_raises_at_fit(pair_weighting):
    X, y, qid = make_ranking(n_queries=5, max_docs=10, random_state=0)
    ranker = LambdaRankRanker(metric="map", pair_weighting=pair_weighting, max_iter=1)
    with pytest.raises(ValueError, match="needs metric='ndcg'; got metric='map'"):
        ranker.fit(X, y, groups=qid)
    assert not hasattr(ranker, "coefs_")


@pytest.mark.parametrize("kind, kwargs", CASES)
def test_lambdas_sum_to_zero_and_vanish_without_label_differences(kind, kwargs):
    rng = np.random.RandomState(4)
    scores, labels, offsets = _random_queries(rng, 20, 10)
    labels[offsets[1] : offsets[2]] = 2.0  # a query whose labels are all equal
    objective = _objective(kind, labels, offsets, **kwargs)
    for with_cost in (True, False):  # without the cost, short queries take their own path
        grad, _ = whole_gradient(objective, scores, offsets, with_cost)
        for q in range(len(offsets) - 1):
            assert abs(grad[offsets[q] : offsets[q + 1]].sum()) < 1e-12
        assert np.all(grad[offsets[0] : offsets[2]] == 0.0)  # no relevant / all equal


@pytest.mark.parametrize("kind, kwargs", CASES)
@pytest.mark.parametrize("gap", [1e4, 1e6, 1e300])
def test_huge_score_gaps_stay_finite_and_exact(kind, kwargs, gap):
    """Two documents in the wrong order by a huge gap: each pair pushes with
    the full sigma * weight; in the right order, nothing. Without the cost
    too, where a short query must leave its own path for the exact one."""
    labels = np.array([2.0, 1.0, 0.0])
    offsets = np.array([0, 3])
    objective = _objective(kind, labels, offsets, **kwargs)
    wrong = np.array([-gap, 0.0, gap])
    grad, cost = whole_gradient(objective, wrong, offsets)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(cost))
    ref_grad, ref_cost = pair_lambdas(wrong.tolist(), labels.tolist(), **_reference_kwargs(kind, kwargs))
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-12)
    np.testing.assert_allclose(cost, [ref_cost], rtol=1e-12)
    grad_alone, _ = whole_gradient(objective, wrong, offsets, with_cost=False)
    np.testing.assert_allclose(grad_alone, ref_grad, rtol=1e-12)
    right_grad, right_cost = whole_gradient(objective, -wrong, offsets)
    assert np.all(np.abs(right_grad) < 1e-300) and right_cost[0] < 1e-300


@pytest.mark.parametrize("kind, kwargs", CASES)
def test_results_do_not_depend_on_the_number_of_threads(kind, kwargs, monkeypatch):
    monkeypatch.setattr(_jit, "SERIAL_BELOW_WORK", 0)  # threads even for small calls
    rng = np.random.RandomState(5)
    scores, labels, offsets = _random_queries(rng, 300, 40)
    objective = _objective(kind, labels, offsets, **kwargs)
    for with_cost in (True, False):  # without the cost, short queries take their own path
        results = [whole_gradient(objective, scores, offsets, with_cost, n_threads) for n_threads in (1, 2, 3)]
        for grad, cost in results[1:]:
            np.testing.assert_array_equal(grad, results[0][0])
            np.testing.assert_array_equal(cost, results[0][1])


@pytest.mark.parametrize("normalize", [False, True])
def test_batch_of_some_queries_equals_those_queries_of_thewhole_gradient(normalize):
    rng = np.random.RandomState(6)
    scores, labels, offsets = _random_queries(rng, 30, 12)
    objective = LambdaRankObjective(
        labels, offsets, sigma=1.0, metric="ndcg", k=5, gain="exponential", normalize=normalize
    )
    grad, cost = whole_gradient(objective, scores, offsets)
    queries = np.array([7, 2, 19])
    rows = np.concatenate([np.arange(offsets[q], offsets[q + 1]) for q in queries])
    batch_offsets = np.concatenate(([0], np.cumsum(np.diff(offsets)[queries])))
    batch_grad, batch_cost = objective.gradient(scores[rows], rows, queries, batch_offsets, with_cost=True)
    np.testing.assert_array_equal(batch_grad, grad[rows])
    np.testing.assert_array_equal(batch_cost, cost[queries])


@pytest.mark.parametrize("kwargs", [
    dict(metric="ndcg", k=None, gain="exponential"),
    dict(metric="ndcg", k=3, gain="linear", pair_weighting="ndcg_loss2++"),
    dict(metric="map", k=4, gain="exponential"),
])
def test_normalized_lambdas_scale_each_query_by_log2_1_plus_g_over_g(kwargs):
    # G, a query's summed |lambda|, becomes log2(1 + G): a query of large
    # lambdas is damped, one of small lambdas boosted (up to 1 / ln 2); a
    # query without lambdas stays 0; the costs do not change.
    rng = np.random.RandomState(8)
    scores, labels, offsets = _random_queries(rng, 40, 15)
    scores[offsets[5]:offsets[6]] *= 1e-3  # small gaps: G of order 1 and below
    plain, cost = whole_gradient(LambdaRankObjective(labels, offsets, sigma=1.0, **kwargs), scores, offsets)
    normed, normed_cost = whole_gradient(
        LambdaRankObjective(labels, offsets, sigma=1.0, normalize=True, **kwargs), scores, offsets
    )
    np.testing.assert_array_equal(normed_cost, cost)
    factors = []
    for q in range(len(offsets) - 1):
        part = slice(offsets[q], offsets[q + 1])
        summed = float(np.sum(np.abs(plain[part])))
        if summed == 0.0:
            assert np.all(normed[part] == 0.0)
            continue
        factor = math.log2(1.0 + summed) / summed
        factors.append(factor)
        # A product and a sum of positives: a few ulp of each element.
        np.testing.assert_allclose(normed[part], plain[part] * factor, rtol=1e-13, atol=0)
        np.testing.assert_allclose(np.sum(np.abs(normed[part])), math.log2(1.0 + summed), rtol=1e-12)
    assert min(factors) < 1.0 < max(factors) <= 1.0 / math.log(2.0)
    assert np.all(normed[offsets[0]:offsets[1]] == 0.0)  # the query without relevant documents


@pytest.mark.parametrize("pair_weighting", ["lambdarank", "ndcg_loss2++"])
def test_one_long_query_with_truncation_needs_no_pair_matrix(pair_weighting):
    """200,000 documents, k=30: O(n k) work, O(n) memory (an n x n float64
    matrix would need 320 GB)."""
    rng = np.random.RandomState(7)
    n = 200_000
    labels = np.sort(rng.randint(0, 5, size=n).astype(float))[::-1].copy()
    scores = rng.normal(size=n)
    offsets = np.array([0, n])
    objective = LambdaRankObjective(
        labels, offsets, sigma=1.0, metric="ndcg", k=30, gain="exponential", pair_weighting=pair_weighting
    )
    grad, cost = whole_gradient(objective, scores, offsets)
    assert np.all(np.isfinite(grad)) and np.isfinite(cost[0])
    assert abs(grad.sum()) < 1e-9 and np.count_nonzero(grad) > n // 2


@settings(max_examples=60, deadline=None)
@given(st.floats(-5, 5), st.floats(-5, 5), st.floats(-5, 5), st.floats(0.1, 1.0))
def test_pair_probabilities_compose(s_i, s_j, s_k, sigma):
    """Burges' identity for the model's pair probabilities:
    P_ik = P_ij P_jk / (1 + 2 P_ij P_jk - P_ij - P_jk).

    The identity's denominator cancels catastrophically when P_ij and P_jk
    sit near 0 and 1 (at a sigma gap of 21 it loses eight digits), so the
    scores stay where the formula itself is accurate to ~1e-12."""
    def p(a, b):
        """P(a ranks above b) = 1 / (1 + exp(-sigma (a - b))), read off the
        kernel: with b the better-labelled document, the worse one's lambda
        is sigma / (1 + exp(sigma (b - a)))."""
        offsets = np.array([0, 2])
        objective = RankNetObjective(np.array([1.0, 0.0]), offsets, sigma=sigma)
        grad, _ = whole_gradient(objective, np.array([b, a]), offsets, with_cost=False)
        return grad[1] / sigma

    p_ij, p_jk, p_ik = p(s_i, s_j), p(s_j, s_k), p(s_i, s_k)
    expected = p_ij * p_jk / (1 + 2 * p_ij * p_jk - p_ij - p_jk)
    assert p_ik == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=150), st.integers(1, 160))
def test_ranking_heads_equal_the_stable_sort(values, k):
    """Selection (small k) and the merge sort (long lists) rank like a stable
    descending sort, ties in input order."""
    from sklearn_ranknet._kernels.sort import rank_into, rank_order

    scores = np.array(values, dtype=float)  # few distinct values: many ties
    expected = np.argsort(-scores, kind="stable")
    np.testing.assert_array_equal(rank_order(scores), expected)
    order = np.empty(len(scores), dtype=np.int64)
    spare = np.empty(len(scores), dtype=np.int64)
    rank_into(scores, k, order, spare, np.empty(len(scores)))
    head = min(k, len(scores))
    np.testing.assert_array_equal(order[:head], expected[:head])


def test_vectorizable_exp_matches_libm_within_two_ulp():
    from sklearn_ranknet._kernels.pair_lambdas import _exp_nonpositive

    rng = np.random.RandomState(8)
    xs = np.concatenate([
        -np.abs(rng.normal(scale=s, size=2000)) for s in (1e-8, 1e-3, 1.0, 30.0, 300.0)
    ] + [[0.0, -0.0, -5e-324, -0.5 * np.log(2), -708.3, -708.4, -745.0, -745.2, -746.0, -1e4, -np.inf]])
    ours = np.array([_exp_nonpositive(x) for x in xs])
    reference = np.exp(xs)
    normal = reference >= np.finfo(float).tiny
    # Each step (the reduction, 13 Horner terms, one product) rounds once.
    np.testing.assert_allclose(ours[normal], reference[normal], rtol=4 * np.finfo(float).eps, atol=0)
    # Below the normal range the result is a subnormal or 0: absolute error.
    np.testing.assert_allclose(ours[~normal], reference[~normal], rtol=0, atol=2 * 5e-324)
    assert np.isnan(_exp_nonpositive(np.nan))


# Found by a mutation audit of the suite (2026-11-27).

KINDS = [
    ("ranknet", {}),
    ("lambdarank", dict(metric="ndcg", k=None, gain="exponential")),
    ("lambdarank", dict(metric="map", k=None, gain="exponential")),
    ("lambdarank", dict(metric="ndcg", k=None, gain="linear", pair_weighting="ndcg_loss2++")),
]


@pytest.mark.parametrize("kind, kwargs", KINDS)
@pytest.mark.parametrize("with_cost", [True, False])
@pytest.mark.parametrize("sigma", [1.0, 2.5])
def test_pairs_far_below_the_top_keep_full_precision(kind, kwargs, with_cost, sigma):
    """Two documents 730 below the query's best one: exp(sigma (s - max s))
    of both is subnormal (below exp(-708.4)), where a float keeps only a few
    significant digits, so the factorized rho = e_lo / (e_hi + e_lo) of
    their pair would be off by ~1e-6 relative. SAFE_SPREAD (in units of
    sigma * score) keeps such queries on the exact per-pair formula. Their pair's lambda is
    sigma w / (1 + e^0.5) ~ 0.38 w; every other pair contributes < e^-729.
    The kernel's error is then a few ulp of it: rtol 1e-12."""
    labels = np.array([2.0, 1.0, 0.0])
    offsets = np.array([0, 3])
    scores = np.array([0.0, -730.0, -730.5]) / sigma
    objective = _objective(kind, labels, offsets, sigma, **kwargs)
    grad, _ = whole_gradient(objective, scores, offsets, with_cost=with_cost)
    ref_grad, _ = pair_lambdas(scores.tolist(), labels.tolist(), sigma=sigma, **_reference_kwargs(kind, kwargs))
    assert abs(ref_grad[2]) > 0.01  # the pair (1, 2) carries a real lambda
    np.testing.assert_allclose(grad[1:], ref_grad[1:], rtol=1e-12, atol=0)
