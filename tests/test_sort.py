"""Ranking one query (``sklearn_ranknet._kernels.sort``) and the metric kernels that
avoid a full ranking: against numpy's stable argsort, the slow references
of ``tests/_reference.py`` and an exact (rational) average precision.

Every path is reached on purpose: counting sort (n <= 128) and merge sort
(equal runs merged from both ends, unequal ones plainly); top-k selection
with and without the block-maximum prefilter, its kept rows ranked by
counting or by insertion; whole-list AP by counting pairs or by sorting the
smaller set, and its fall back to ranking when a relevant and an irrelevant
score tie; the ideal DCG by counting whole labels or by ranking others.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sklearn_ranknet._kernels import metrics as metric_kernels
from sklearn_ranknet._kernels import sort as sort_kernels
from sklearn_ranknet._kernels.sort import rank_into, rank_order
from sklearn_ranknet.metrics import ap_per_query, ndcg_per_query
from tests import _reference as ref

# scikit-learn's finiteness check sums the scores first; scores near the
# largest float overflow that sum (to inf - inf) before it checks them one
# by one.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")

EPS = np.finfo(np.float64).eps
MAX_FLOAT = np.finfo(np.float64).max
TINY = 5e-324  # the smallest subnormal

# Finite floats of every magnitude, signed zeros and the extremes.
finite_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, TINY, -TINY, 1e-300, MAX_FLOAT, -MAX_FLOAT, 1.0, -1.0]),
)


@st.composite
def tied_scores(draw, max_size=300, max_copies=6):
    """Scores of 1..max_size rows: distinct finite floats, each repeated up
    to ``max_copies`` times (a zero as 0.0 or -0.0, which tie), shuffled."""
    distinct = draw(st.lists(finite_floats, min_size=1, max_size=max_size, unique=True))
    scores = []
    for value in distinct:
        copies = draw(st.integers(1, max_copies))
        for _ in range(copies):
            scores.append(-value if value == 0.0 and draw(st.booleans()) else value)
    scores = scores[:max_size]
    seed = draw(st.integers(0, 2**32 - 1))
    np.random.default_rng(seed).shuffle(scores)
    return np.array(scores, dtype=np.float64)


def _one_query(labels):
    """Query ids saying "these rows are one query" (the metrics warn when
    several rows come without any)."""
    return np.zeros(len(labels))


def _stable_desc(values):
    return np.argsort(-np.asarray(values), kind="stable")


def _head(values, k):
    n = len(values)
    order = np.full(n, -1, dtype=np.int64)
    spare = np.full(n, -1, dtype=np.int64)
    keys = np.full(n, np.nan)  # scratch: what it held must not matter
    selected = rank_into(values, k, order, spare, keys)
    return order[: min(k, n)], selected


# --------------------------------------------------------------------------
# 1. Sorting and selection against numpy's stable argsort


@settings(max_examples=300, deadline=None)
@given(tied_scores())
@example(np.zeros(129))  # one tied block, merge sort
@example(np.array([0.0, -0.0] * 70))  # signed zeros tie
@example(np.arange(300.0))  # ascending: every merge takes the right run
def test_full_sort_is_the_stable_argsort(values):
    np.testing.assert_array_equal(rank_order(values), _stable_desc(values))


@pytest.mark.parametrize("n", [1, 2, 16, 17, 100, 128, 129, 200, 256, 257, 1000, 5000])
@pytest.mark.parametrize("distinct", [None, 3])
def test_full_sort_sizes(n, distinct):
    """Counting sort up to 128 rows; merge sort above, with equal runs merged
    from both ends and unequal (last) runs plainly."""
    rng = np.random.default_rng(n)
    values = rng.normal(size=n) if distinct is None else rng.integers(0, distinct, n) * 1.0
    np.testing.assert_array_equal(rank_order(values), _stable_desc(values))
    order, selected = _head(values, n)
    assert not selected
    np.testing.assert_array_equal(order, _stable_desc(values))


@settings(max_examples=300, deadline=None)
@given(tied_scores(), st.integers(1, 70))
def test_head_is_the_stable_head(values, k):
    order, selected = _head(values, k)
    np.testing.assert_array_equal(order, _stable_desc(values)[: min(k, len(values))])
    assert selected == (k < len(values) and k <= sort_kernels.SELECT_UP_TO)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=300), st.integers(1, 64))
def test_head_with_heavy_ties(values, k):
    values = np.array(values, dtype=np.float64)
    order, _ = _head(values, k)
    np.testing.assert_array_equal(order, _stable_desc(values)[: min(k, len(values))])


@pytest.mark.parametrize(
    "n,k",
    [
        (30, 10),  # n < 4k: no prefilter, insertion over every row
        (40, 10),  # prefilter; kept rows too many for the half of spare
        (100, 10),  # prefilter, ~25 kept rows ranked by counting
        (100, 1),
        (1000, 30),  # prefilter, ~75 kept rows selected by insertion
        (1000, 64),
        (5000, 5),
    ],
)
@pytest.mark.parametrize("kind", ["normal", "rounded", "constant", "ascending"])
def test_selection_paths(n, k, kind):
    rng = np.random.default_rng(n + k)
    values = {
        "normal": rng.normal(size=n),
        "rounded": np.round(rng.normal(size=n), 1),  # ties at the k-th value
        "constant": np.full(n, 2.5),  # every row kept
        "ascending": np.arange(n, dtype=np.float64),  # the head comes last
    }[kind]
    for _ in range(3):
        order, selected = _head(values, k)
        assert selected
        np.testing.assert_array_equal(order, _stable_desc(values)[:k])
        values = values[rng.permutation(n)]


@pytest.mark.parametrize("n,k", [(5, 2), (50, 10), (100, 100), (200, 10), (300, 300)])
def test_nan_scores_give_rows_in_range(n, k):
    """Diverged training may hand NaN scores to the LambdaRank kernels: the
    ranking is then meaningless but must name rows of the query."""
    rng = np.random.default_rng(n)
    values = rng.normal(size=n)
    values[rng.random(n) < 0.3] = np.nan
    values[0] = np.nan
    order, _ = _head(values, k)
    assert np.all((order >= 0) & (order < n))


# --------------------------------------------------------------------------
# 2. Average precision over the whole list, exactly


def exact_ap(labels, scores, ignore_ties):
    """AP over the whole list as a Fraction (None without relevant rows).

    AP is a sum over tied blocks, each block's terms depending only on its
    own ordering, so the mean over every ordering is the sum of each block's
    mean over the C(m, c) equally likely sets of positions of its c relevant
    rows: enumerated for blocks with up to 5000 such sets; for longer ones,
    by linearity of expectation, position p is relevant with probability
    c / m and then has p (c - 1) / (m - 1) relevant rows ahead of it in the
    block. ``ignore_ties``: the stable order.
    """
    relevant = [bool(label > 0) for label in labels]
    n_relevant = sum(relevant)
    if n_relevant == 0:
        return None
    if ignore_ties:
        blocks = [[i] for i in ref.stable_ranking(list(scores))]
    else:
        blocks = ref.tie_blocks(list(scores))
    total = Fraction(0)
    start = before = 0
    for block in blocks:
        m, c = len(block), sum(relevant[i] for i in block)
        if c and math.comb(m, c) <= 5000:
            block_sum = Fraction(0)
            placements = list(itertools.combinations(range(m), c))
            for positions in placements:
                for h, p in enumerate(positions):
                    block_sum += Fraction(before + h + 1, start + p + 1)
            total += block_sum / len(placements)
        elif c:
            for p in range(m):
                ahead = Fraction(p * (c - 1), m - 1)
                total += Fraction(c, m) * (before + 1 + ahead) / (start + p + 1)
        start += m
        before += c
    return total / n_relevant


def _ap_tolerance(n):
    # Our AP sums at most n terms, each a few roundings in [0, 1].
    return (n + 8) * EPS


def _assert_ap_exact(labels, scores):
    labels = np.asarray(labels, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    for ignore_ties in (False, True):
        expected = exact_ap(labels, scores, ignore_ties)
        _, values = ap_per_query(labels, scores, groups=_one_query(labels), ignore_ties=ignore_ties,
                                 empty_query_score=None)
        if expected is None:
            assert len(values) == 0
        else:
            assert abs(values[0] - float(expected)) <= _ap_tolerance(len(labels)), ignore_ties


@st.composite
def ap_queries(draw, max_size=300):
    scores = draw(tied_scores(max_size=max_size))
    n = len(scores)
    share = draw(st.sampled_from([0.0, 0.05, 0.2, 0.5, 0.8, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    labels = np.where(rng.random(n) < share, rng.choice([0.5, 1.0, 2.0, 4.0], n), 0.0)
    return labels, scores


@settings(max_examples=200, deadline=None)
@given(ap_queries())
def test_whole_list_ap_is_exact(query):
    _assert_ap_exact(*query)


@settings(max_examples=100, deadline=None)
@given(ap_queries())
def test_whole_list_ap_without_mixed_ties(query):
    """Ties only among relevant rows or among irrelevant ones change no
    precision term: both tie conventions give the stable-order value, on the
    counting path that never ranks the query."""
    labels, scores = query
    # Drop the irrelevant rows that tie a relevant one.
    relevant_scores = {float(s) for s, label in zip(scores, labels) if label > 0}
    keep = np.array([label > 0 or float(s) not in relevant_scores for s, label in zip(scores, labels)])
    labels, scores = labels[keep], scores[keep]
    one = _one_query(labels)
    _, averaged = ap_per_query(labels, scores, groups=one, ignore_ties=False, empty_query_score=None)
    _, stable = ap_per_query(labels, scores, groups=one, ignore_ties=True, empty_query_score=None)
    np.testing.assert_array_equal(averaged, stable)
    _assert_ap_exact(labels, scores)


@pytest.mark.parametrize("n", [2, 7, 100, 130, 300, 1000, 3000])
@pytest.mark.parametrize("share", [0.01, 0.2, 0.5, 0.8, 0.99])
@pytest.mark.parametrize("ties", [None, "within", "mixed"])
def test_whole_list_ap_paths(n, share, ties):
    """Counting pairs (either set as the counted side), sorting the smaller
    set (both large, e.g. 3000 rows half relevant), and the fall back to
    ranking when relevant and irrelevant scores tie."""
    rng = np.random.default_rng(n)
    labels = (rng.random(n) < share) * rng.integers(1, 5, n).astype(np.float64)
    scores = rng.normal(size=n)
    if ties == "within":  # ties inside each relevance class only
        scores = np.where(labels > 0, 2 * np.round(scores * 3), 2 * np.round(scores * 3) + 1)
    elif ties == "mixed":
        scores = np.round(scores * 3)
    _assert_ap_exact(labels, scores)


def test_whole_list_ap_perfect_and_worst():
    labels = np.array([0.0] * 60 + [1.0] * 40)
    # Relevant first (ties anywhere): every precision term is exactly 1.
    _, values = ap_per_query(labels, labels.copy(), groups=_one_query(labels), ignore_ties=False)
    assert values[0] == 1.0
    # Relevant last: term j is j / (60 + j).
    _, values = ap_per_query(labels, -labels, groups=_one_query(labels), ignore_ties=True)
    expected = sum(Fraction(j, 60 + j) for j in range(1, 41)) / 40
    assert abs(values[0] - float(expected)) <= _ap_tolerance(100)


def test_whole_list_ap_several_queries_and_kernel_scratch():
    """Queries of different lengths in one chunk reuse the chunk's scratch;
    a short query after a long one must not see the long one's rows."""
    rng = np.random.default_rng(3)
    sizes = [300, 5, 1, 150, 2, 300, 40]
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    labels = rng.integers(0, 2, offsets[-1]).astype(np.float64)
    scores = np.round(rng.normal(size=offsets[-1]), 1)
    values = np.empty(len(sizes))
    empty = np.empty(len(sizes), dtype=np.bool_)
    for ignore_ties in (False, True):
        pending = np.empty(len(sizes), dtype=np.bool_)
        k = max(sizes)
        metric_kernels.ap_whole_chunk(labels, scores, offsets, k, values, empty, pending, 0, len(sizes))
        assert pending.any()  # rounded scores tie: both kernels run
        metric_kernels.ap_ranked_chunk(labels, scores, offsets, k, ignore_ties, values, empty, pending, 0, len(sizes))
        for q in range(len(sizes)):
            lo, hi = offsets[q], offsets[q + 1]
            expected = exact_ap(labels[lo:hi], scores[lo:hi], ignore_ties)
            if expected is None:
                assert empty[q]
            else:
                assert not empty[q]
                assert abs(values[q] - float(expected)) <= _ap_tolerance(hi - lo)


# --------------------------------------------------------------------------
# 3. NDCG of long queries: counted ideal DCG, table gains, selected heads


def _ndcg_tolerance(n, k):
    # Two DCG sums of at most min(k, n) terms, one division; the reference
    # rounds as much again.
    top = n if k is None else min(k, n)
    return 8 * (top + 3) * EPS


LABEL_KINDS = {
    "small whole": lambda rng, n: rng.integers(0, 5, n).astype(np.float64),
    "fractional": lambda rng, n: rng.integers(0, 17, n) / 4.0,
    "whole up to 40": lambda rng, n: rng.integers(0, 41, n).astype(np.float64),
}


@pytest.mark.parametrize("n", [1, 3, 40, 100, 300])
@pytest.mark.parametrize("k", [1, 5, 10, 64, 65, None])
@pytest.mark.parametrize("labels_kind", list(LABEL_KINDS))
@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_ndcg_of_long_queries(n, k, labels_kind, gain):
    rng = np.random.default_rng(n * 7 + (k or 0))
    labels = LABEL_KINDS[labels_kind](rng, n)
    if gain == "exponential":
        labels = np.minimum(labels, 30.0)
    distinct = rng.normal(size=n)
    tied = np.round(distinct, 1)
    for scores, ties in ((distinct, (False, True)), (tied, (True,))):
        for ignore_ties in ties:
            _, values = ndcg_per_query(labels, scores, groups=_one_query(labels), k=k, gain=gain,
                                       ignore_ties=ignore_ties, empty_query_score=None)
            expected = ref.ndcg_query(list(labels), list(scores), k=k, gain=gain,
                                      ignore_ties=True, empty_value=None)
            if expected is None:
                assert len(values) == 0
            else:
                assert abs(values[0] - expected) <= _ndcg_tolerance(n, k)


@pytest.mark.parametrize("labels_kind", list(LABEL_KINDS))
@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_perfect_ranking_is_exactly_one(labels_kind, gain):
    """The ideal DCG (counted or ranked) and the DCG of a ranking go through
    one sum, so a perfect ranking scores 1.0 to the last bit: always in input
    order, and with ties averaged when the tied gains are whole numbers (their
    mean is then exact)."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 300, 40)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    labels = LABEL_KINDS[labels_kind](rng, len(groups))
    if gain == "exponential":
        labels = np.minimum(labels, 30.0)
    untied = labels + rng.random(len(groups)) * 0.1
    for k in (1, 10, 64, 65, None):
        for scores in (untied, labels):
            for ignore_ties in (True, False):
                if labels_kind == "fractional" and scores is labels and not ignore_ties:
                    continue
                _, values = ndcg_per_query(labels, scores, groups=groups, k=k, gain=gain,
                                           ignore_ties=ignore_ties, empty_query_score=None)
                assert np.all(values == 1.0), (k, ignore_ties)


def test_ideal_dcg_from_labels_matches_ranked_gains():
    rng = np.random.default_rng(0)
    n = 200
    discounts = metric_kernels.discount_table(n)
    order = np.empty(n, dtype=np.int64)
    spare = np.empty(n, dtype=np.int64)
    scratch = np.empty(n)
    counts = np.empty(metric_kernels.COUNTED_LABELS, dtype=np.int64)
    for labels in (rng.integers(0, 31, n) * 1.0, rng.integers(0, 121, n) / 4.0):  # counted, ranked
        for exponential in (True, False):
            table = metric_kernels.label_gains(np.arange(metric_kernels.COUNTED_LABELS, dtype=np.float64), exponential)
            gains = metric_kernels.label_gains(labels, exponential)
            for k in (1, 10, 64, 65, n):
                ours = metric_kernels.ideal_dcg_of_labels(labels, exponential, table, discounts, k, counts,
                                                     order, spare, scratch)
                top = min(k, n)
                expected = float(np.sort(gains)[::-1][:top] @ discounts[:top])
                assert ours == pytest.approx(expected, rel=2 * (min(k, n) + 2) * EPS, abs=0)
