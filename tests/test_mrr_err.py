"""Tests of MRR and ERR in ``sklearn_ranknet.metrics``.

The kernels are checked against the slow references of ``tests/_reference.py``
(brute force over tie orderings), against exact closed forms for tied blocks
too long to enumerate, against trec_eval (pytrec_eval) and ranx for MRR, then
invariance properties, bad input and the scorers inside model selection.

Peers for ERR: neither the installed ranx (0.3.21, the ``ranx>=0.3`` of the
``test`` extra: its metrics are hits, hit_rate, precision, recall, f1,
r-precision, mrr, map, dcg, ndcg, bpref and rbp) nor trec_eval defines ERR,
so ERR is checked against the cascade walked rank by rank (the reference),
hand-worked values of Chapelle et al.'s definition and an exact dynamic
program over tied blocks, not against a peer.
"""

import math
import subprocess
import sys
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest
import sklearn
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, GroupKFold

from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import (
    err_per_query, err_score, err_scorer, mrr_score, mrr_scorer, rr_per_query,
)
from tests import _reference as ref

# Single queries given without groups, and random data of one-row queries:
# the warnings are right, and tested in test_metrics.py and test_query_column.py.
pytestmark = [
    pytest.mark.filterwarnings("ignore:No groups were given:UserWarning"),
    pytest.mark.filterwarnings("ignore:Every one of the:UserWarning"),
]

# Float64 sums and products of a few dozen terms in [0, 1]: a few dozen ulp.
TOL = 1e-12

# name -> (mean function, per-query function, reference per query)
METRICS = {
    "mrr": (mrr_score, rr_per_query, ref.rr_query),
    "err": (err_score, err_per_query, ref.err_query),
}


def _ours(name, y, s, g, **kw):
    """(mean, ids, values) from the package; mean None when nothing is left
    to average (every query empty with empty_query_score=None)."""
    mean_func, per_query_func, _ = METRICS[name]
    weights = kw.pop("sample_weight", None)
    ids, values = per_query_func(y, s, groups=g, **kw)
    try:
        mean = mean_func(y, s, groups=g, sample_weight=weights, **kw)
    except ValueError:
        mean = None
    return mean, ids, values


def _reference(name, y, s, g, *, sample_weight=None, empty_query_score=1.0, **kw):
    """(mean, ids, values) from the reference; ERR's ``max_label=None`` is
    the largest label of every query together."""
    metric = METRICS[name][2]
    if name == "err" and kw.get("max_label") is None:
        kw["max_label"] = max(y)
    ids, values = ref.per_query(metric, y, s, g, empty_value=empty_query_score, **kw)
    if not values:
        return None, ids, values
    if sample_weight is None:
        return sum(values) / len(values), ids, values
    weight_of = dict(zip(g.tolist(), np.asarray(sample_weight).tolist()))
    weights = [weight_of[q] for q in ids]
    if sum(weights) == 0:
        return None, ids, values
    return sum(w * v for w, v in zip(weights, values)) / sum(weights), ids, values


def _random_queries(seed, n_queries=30, max_size=7):
    """Small interleaved queries, labels 0..4, scores from 3 values (many
    ties), some queries with nothing relevant."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_queries)
    groups = np.repeat(rng.permutation(n_queries) * 3 + 5, sizes)
    y = rng.integers(0, 5, len(groups)).astype(float)
    y[np.isin(groups, np.unique(groups)[:4])] = 0.0
    s = rng.choice(np.round(rng.normal(size=3), 3), len(groups))
    rows = rng.permutation(len(groups))
    return y[rows], s[rows], groups[rows]


# --------------------------------------------------------------------------
# 1. Against the references


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("empty_query_score", [1.0, 0.0, None])
@pytest.mark.parametrize("k", [None, 1, 2, 3, 5])
@pytest.mark.parametrize("ignore_ties", [False, True])
@pytest.mark.parametrize("name", list(METRICS))
def test_matches_reference(name, ignore_ties, k, empty_query_score, seed):
    y, s, g = _random_queries(seed)
    kw = dict(k=k, ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    mean, ids, values = _ours(name, y, s, g, **kw)
    ref_mean, ref_ids, ref_values = _reference(name, y, s, g, **kw)
    assert ids.tolist() == ref_ids
    np.testing.assert_allclose(values, ref_values, rtol=TOL, atol=0)
    assert mean == pytest.approx(ref_mean, rel=TOL)


@pytest.mark.parametrize("name", list(METRICS))
def test_the_data_has_ties_that_matter(name):
    y, s, g = _random_queries(0)
    _, _, averaged = _ours(name, y, s, g, ignore_ties=False)
    _, _, input_order = _ours(name, y, s, g, ignore_ties=True)
    assert np.abs(averaged - input_order).max() > 1e-3


@st.composite
def ranking_data(draw, max_size=6):
    """Contiguous queries 0, 1, ...: labels 0..4, integer scores 0..3 (many
    ties), and a weight per query, repeated on its rows."""
    n_queries = draw(st.integers(1, 4))
    y, s, g, w = [], [], [], []
    for q in range(n_queries):
        size = draw(st.integers(1, max_size))
        y += draw(st.lists(st.integers(0, 4), min_size=size, max_size=size))
        s += draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
        g += [q] * size
        w += [draw(st.integers(0, 3))] * size
    return np.array(y, dtype=float), np.array(s, dtype=float), np.array(g), np.array(w, dtype=float)


names = st.sampled_from(list(METRICS))
ks = st.sampled_from([None, 1, 2, 3, 5])
empty_scores = st.sampled_from([1.0, 0.0, None])
PROPERTY_SETTINGS = settings(max_examples=80, deadline=None)


@PROPERTY_SETTINGS
@given(ranking_data(), names, ks, st.booleans(), empty_scores, st.booleans(),
       st.sampled_from([None, 4]))
def test_matches_reference_on_random_queries(data, name, k, ignore_ties, empty_query_score, weighted,
                                             max_label):
    y, s, g, w = data
    kw = dict(k=k, ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    if name == "err":
        kw["max_label"] = max_label
    weights = w if weighted else None
    mean, ids, values = _ours(name, y, s, g, sample_weight=weights, **kw)
    ref_mean, ref_ids, ref_values = _reference(name, y, s, g, sample_weight=weights, **kw)
    assert ids.tolist() == ref_ids
    np.testing.assert_allclose(values, ref_values, rtol=TOL, atol=0)
    assert np.all((values >= 0.0) & (values <= 1.0))
    if ref_mean is None:
        assert mean is None
    else:
        assert mean == pytest.approx(ref_mean, rel=TOL)
        assert 0.0 <= mean <= 1.0


def test_a_whole_tied_query_of_seven():
    # 7 documents that all tie: the mean over 5040 orderings.
    y = [3, 0, 1, 0, 2, 0, 1]
    s = [0.5] * 7
    for k in (None, 1, 2, 3, 5):
        assert mrr_score(y, s, k=k) == pytest.approx(ref.rr_query(y, s, k=k), rel=TOL)
        for max_label in (None, 3, 4):
            expected = ref.err_query(y, s, k=k, max_label=3 if max_label is None else max_label)
            assert err_score(y, s, k=k, max_label=max_label) == pytest.approx(expected, rel=TOL)


# --------------------------------------------------------------------------
# 2. Worked examples and exact forms


def test_reciprocal_rank_by_hand():
    # first relevant document at rank 3; a query without one
    y = [0, 0, 2, 1, 0, 0, 0]
    s = [7, 6, 5, 4, 3, 2, 1]
    g = [1, 1, 1, 1, 2, 2, 2]
    assert rr_per_query(y, s, groups=g)[1].tolist() == [1 / 3, 1.0]
    assert rr_per_query(y, s, groups=g, k=2, empty_query_score=0.0)[1].tolist() == [0.0, 0.0]
    assert rr_per_query(y, s, groups=g, k=3)[1].tolist() == [1 / 3, 1.0]
    # one relevant among 4 tied after one document: ranks 2..5 equally likely
    y, s = [0, 0, 1, 0, 0], [9, 1, 1, 1, 1]
    assert mrr_score(y, s) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4, rel=TOL)
    assert mrr_score(y, s, k=3) == pytest.approx((1 / 2 + 1 / 3) / 4, rel=TOL)
    assert mrr_score(y, s, ignore_ties=True) == 1 / 3  # input order: the second of the block


def test_err_by_hand():
    # Chapelle et al.'s definition, grades 0..4 (max_label=4, stop chances
    # (2**g - 1) / 16), ranked 4, 0, 2, 1: 15/16 + (1/16)(3/16)/3 + (1/16)(13/16)(1/16)/4.
    y, s = [4, 0, 2, 1], [4, 3, 2, 1]
    expected = 15 / 16 + (1 / 16) * (3 / 16) / 3 + (1 / 16) * (13 / 16) * (1 / 16) / 4
    assert err_score(y, s, max_label=4) == pytest.approx(expected, rel=1e-15)
    assert err_score(y, s, max_label=4, k=1) == 15 / 16
    # a single document of the top grade: 1 - 2**-max_label, below 1
    assert err_score([3, 0], [1, 0], max_label=3) == 7 / 8
    # max_label None: the largest label over all queries, not per query; a
    # query whose best is grade 1 is not scored as if 1 were perfect
    _, values = err_per_query([1, 0, 3, 0], [1, 0, 1, 0], groups=[1, 1, 2, 2])
    assert values.tolist() == [1 / 8, 7 / 8]
    _, values = err_per_query([1, 0, 3, 0], [1, 0, 1, 0], groups=[1, 1, 2, 2], max_label=4)
    assert values.tolist() == [1 / 16, 7 / 16]


def test_max_label_zero_makes_every_query_empty():
    for empty in (1.0, 0.0):
        assert err_per_query([0, 0, 0], [1, 2, 3], groups=[1, 1, 2], max_label=0,
                             empty_query_score=empty)[1].tolist() == [empty, empty]
    assert err_score([0, 0], [1, 2], max_label=0) == 1.0


def _exact_rr(m_before, m, r, k):
    """E[1 / (p + J)] with P(J = j) = C(m - j, r - 1) / C(m, r), ranks past k
    counting 0: the definition, in exact fractions."""
    total = Fraction(0)
    for j in range(1, m - r + 2):
        if k is None or m_before + j <= k:
            total += Fraction(math.comb(m - j, r - 1), math.comb(m, r)) / (m_before + j)
    return total


@pytest.mark.parametrize("m,r", [(2, 1), (50, 1), (50, 49), (400, 3), (1000, 7), (1000, 1000)])
@pytest.mark.parametrize("k", [None, 1, 10, 300])
def test_rr_of_a_long_tied_block_is_the_exact_expectation(m, r, k):
    """A block far too long to enumerate, after 3 irrelevant documents:
    the probability recurrence against exact binomials (C(1000, 7) ~ 2e17
    would not survive float factorials)."""
    y = np.r_[np.zeros(3), np.ones(r), np.zeros(m - r)]
    s = np.r_[[9.0, 8.0, 7.0], np.zeros(m)]
    rows = np.random.default_rng(m + r).permutation(len(y))
    expected = float(_exact_rr(3, m, r, k))
    assert mrr_score(y[rows], s[rows], groups=np.zeros(len(y)), k=k) == pytest.approx(expected, rel=TOL)


def _exact_block_err(before, stops, counts, k):
    """A tied block's expected ERR share in exact fractions, by a dynamic
    program over how many documents of each grade the random order has
    placed: the next is of grade t with chance (left of t) / (left in all),
    and the chance of reading that far is the product of the placed
    documents' 1 - R, fixed by the counts."""

    @lru_cache(maxsize=None)
    def rest(placed):
        rank = before + sum(placed) + 1
        left = [c - p for c, p in zip(counts, placed)]
        if sum(left) == 0 or (k is not None and rank > k):
            return Fraction(0)
        total = Fraction(0)
        for t, n_left in enumerate(left):
            if n_left:
                after = placed[:t] + (placed[t] + 1,) + placed[t + 1:]
                total += Fraction(n_left, sum(left)) * (stops[t] / rank + (1 - stops[t]) * rest(after))
        return total

    return rest((0,) * len(counts))


@pytest.mark.parametrize("counts", [(1, 1, 1), (5, 0, 30), (10, 10, 10), (2, 40, 0), (0, 0, 25)])
@pytest.mark.parametrize("k", [None, 2, 7, 20])
def test_err_of_a_long_tied_block_is_the_exact_expectation(counts, k):
    """Two documents above (grades 1 and 0), then a block of up to 42 tied
    documents of grades 4, 2 and 0 (max_label 4): the elementary symmetric
    means against an exact dynamic program."""
    grades = (4, 2, 0)
    stops = [Fraction(2**g - 1, 16) for g in grades]
    y = np.r_[[1.0, 0.0], np.repeat(grades, counts)].astype(float)
    s = np.r_[[9.0, 8.0], np.zeros(sum(counts))]
    above = Fraction(1, 16)  # rank 1 is grade 1; rank 2 (grade 0) stops no one
    expected = above + (1 - above) * _exact_block_err(2, tuple(stops), counts, k)
    rows = np.random.default_rng(sum(counts)).permutation(len(y))
    value = err_score(y[rows], s[rows], groups=np.zeros(len(y)), k=k, max_label=4)
    assert value == pytest.approx(float(expected), rel=TOL)


# --------------------------------------------------------------------------
# 3. Peers: trec_eval and ranx, for MRR
#
# trec_eval's recip_rank is RR over the whole list (no cut-off), relevant
# meaning label >= 1 (integer labels here: our > 0), a query without a
# relevant document 0 (our empty_query_score=0.0); it breaks ties by
# document name, descending, so with names that descend in input order it
# is our ignore_ties=True even on tied scores (as test_metrics.py shows for
# NDCG and MAP). ranx's "mrr" / "mrr@k" (metrics/reciprocal_rank.py) is 1 /
# the first rank <= k whose document has a label >= 1 (rel_lvl=1), and sorts
# with an unstable argsort, so it only gets untied scores; its qrels hold
# only the queries with a relevant document (our empty_query_score=None).
# Both compute 1 / rank exactly as we do: the values agree to the bit.


def _peer_data(seed, tied):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 26, 60)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = (rng.random(len(groups)) < 0.15) * rng.integers(1, 5, len(groups))
    y[np.isin(groups, rng.choice(len(sizes), 8, replace=False))] = 0
    if tied:
        s = rng.integers(0, 4, len(groups)).astype(float)
    else:
        s = rng.permutation(len(groups)) / len(groups)
    rows = rng.permutation(len(groups))
    return y[rows], s[rows], groups[rows]


def _as_trec(y, s, groups):
    """qrels and run dicts; row i is document ``d{n - i}``: names descend in
    input order."""
    n = len(y)
    qrels, run = {}, {}
    for i, (label, score, q) in enumerate(zip(y.tolist(), s.tolist(), groups.tolist())):
        doc = f"d{n - i:06d}"
        qrels.setdefault(f"q{q}", {})[doc] = int(label)
        run.setdefault(f"q{q}", {})[doc] = float(score)
    return qrels, run


@pytest.mark.parametrize("seed,tied", [(0, True), (1, True), (2, False)])
def test_mrr_matches_trec_eval_recip_rank(seed, tied):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    y, s, groups = _peer_data(seed, tied)
    qrels, run = _as_trec(y, s, groups)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    ids, values = rr_per_query(y, s, groups=groups, ignore_ties=True, empty_query_score=0.0)
    expected = [theirs[f"q{q}"]["recip_rank"] for q in ids.tolist()]
    assert values.tolist() == expected
    if tied:  # the tie average is another number: the match is not one of untied data
        _, averaged = rr_per_query(y, s, groups=groups, empty_query_score=0.0)
        assert np.abs(averaged - expected).max() > 0.01


def test_mrr_matches_ranx_without_ties():
    ranx = pytest.importorskip("ranx")
    y, s, groups = _peer_data(3, tied=False)
    qrels, run = _as_trec(y, s, groups)
    judged = {q: docs for q, docs in qrels.items() if any(docs.values())}
    ranx_qrels, ranx_run = ranx.Qrels(judged), ranx.Run({q: run[q] for q in judged})
    for ignore_ties in (False, True):  # no ties: the same values
        for k in (None, 1, 3, 5, 10, 30):
            name = "mrr" if k is None else f"mrr@{k}"
            theirs = dict(zip(ranx_qrels.keys(), ranx.evaluate(ranx_qrels, ranx_run, name, return_mean=False)))
            ids, values = rr_per_query(y, s, groups=groups, k=k, ignore_ties=ignore_ties,
                                       empty_query_score=None)
            assert sorted(f"q{q}" for q in ids.tolist()) == sorted(judged)
            np.testing.assert_array_equal(values, [theirs[f"q{q}"] for q in ids.tolist()])
            mean = mrr_score(y, s, groups=groups, k=k, ignore_ties=ignore_ties, empty_query_score=None)
            assert mean == pytest.approx(ranx.evaluate(ranx_qrels, ranx_run, name), rel=TOL)


# --------------------------------------------------------------------------
# 4. Properties


def _within_query_shuffle(g, s, random, only_ties):
    """Row order shuffled inside each query (only among rows tied in score
    when ``only_ties``), queries moved around."""
    keys = list(zip(g.tolist(), s.tolist())) if only_ties else g.tolist()
    slots = {}
    for i, key in enumerate(keys):
        slots.setdefault(key, []).append(i)
    rows = np.arange(len(g))
    for positions in slots.values():
        shuffled = positions[:]
        random.shuffle(shuffled)
        rows[positions] = shuffled
    return rows


@PROPERTY_SETTINGS
@given(ranking_data(), names, ks, st.randoms(use_true_random=False))
def test_row_order_does_not_matter_when_ties_are_averaged(data, name, k, random):
    y, s, g, _ = data
    rows = np.arange(len(y))
    random.shuffle(rows)
    _, ids, values = _ours(name, y, s, g, k=k)
    _, ids2, values2 = _ours(name, y[rows], s[rows], g[rows], k=k)
    assert ids2.tolist() == ids.tolist()
    np.testing.assert_allclose(values2, values, rtol=TOL, atol=0)


@PROPERTY_SETTINGS
@given(ranking_data(), names, ks, st.randoms(use_true_random=False))
def test_shuffling_rows_within_tied_blocks_changes_nothing(data, name, k, random):
    y, s, g, _ = data
    rows = _within_query_shuffle(g, s, random, only_ties=True)
    _, _, values = _ours(name, y, s, g, k=k)
    _, _, values2 = _ours(name, y[rows], s[rows], g[rows], k=k)
    np.testing.assert_allclose(values2, values, rtol=TOL, atol=0)


@PROPERTY_SETTINGS
@given(ranking_data(), ks, st.booleans())
def test_a_perfect_ranking_has_reciprocal_rank_one(data, k, ignore_ties):
    y, _, g, _ = data
    _, _, values = _ours("mrr", y, y + 0.5, g, k=k, ignore_ties=ignore_ties)
    assert np.all(values == 1.0)


@PROPERTY_SETTINGS
@given(ranking_data(), ks, st.booleans(), st.sampled_from([None, 4]))
def test_the_ideal_ranking_has_the_largest_err(data, k, ignore_ties, max_label):
    y, s, g, _ = data
    kw = dict(k=k, max_label=max_label, ignore_ties=ignore_ties, empty_query_score=0.0)
    _, _, ideal = _ours("err", y, y, g, **kw)
    _, _, values = _ours("err", y, s, g, **kw)
    assert np.all(values <= ideal * (1 + TOL))
    assert np.all(values < 1.0)


@PROPERTY_SETTINGS
@given(ranking_data(), st.booleans())
def test_rr_at_k_is_rr_once_k_reaches_the_first_relevant_document(data, ignore_ties):
    y, s, g, _ = data
    for q in np.unique(g):
        yq, sq = y[g == q], s[g == q]
        if not np.any(yq > 0):
            continue
        best = sq[yq > 0].max()
        above = int(np.sum(sq > best))
        if ignore_ties:  # the rank of the first relevant document in input order
            tied = np.flatnonzero(sq == best)
            reach = above + int(np.argmax(yq[tied] > 0)) + 1
        else:  # the last rank the first relevant document may take
            reach = above + int(np.sum((sq == best) & (yq == 0))) + 1
        whole = mrr_score(yq, sq, groups=np.zeros(len(yq)), ignore_ties=ignore_ties)
        for k in (reach, reach + 1, reach + 5):
            assert mrr_score(yq, sq, groups=np.zeros(len(yq)), k=k, ignore_ties=ignore_ties) == whole
        if reach > 1:
            cut = mrr_score(yq, sq, groups=np.zeros(len(yq)), k=reach - 1, ignore_ties=ignore_ties)
            assert cut < whole


# --------------------------------------------------------------------------
# 5. Bad input

Y = [2.0, 0.0, 1.0]
S = [0.3, 0.2, 0.1]
ERR_FUNCTIONS = [err_score, err_per_query]
ALL_FUNCTIONS = [mrr_score, rr_per_query, *ERR_FUNCTIONS]


@pytest.mark.parametrize("func", ALL_FUNCTIONS)
@pytest.mark.parametrize(
    "y_true,y_score,kw,match",
    [
        ([1, 0, 1], [1, 2], {}, "y_true has 3 rows but y_score has 2; give one label and one score per row"),
        (Y, S, {"groups": [1, 1]}, "groups has 2 entries but the data has 3 rows"),
        ([2, np.nan, 1], S, {}, "y_true contains NaN"),
        (Y, [0.3, np.nan, 0.1], {}, "y_score contains NaN"),
        (Y, [0.3, np.inf, 0.1], {}, "y_score contains infinity"),
        ([2, -1, 1], S, {}, "negative relevance labels .* labels must be >= 0"),
        (Y, S, {"k": 0}, "'k' parameter .* must be an int in the range \\[1, inf\\)"),
        (Y, S, {"empty_query_score": 2.0}, "'empty_query_score' parameter"),
    ],
)
def test_bad_input(func, y_true, y_score, kw, match):
    with pytest.raises(ValueError, match=match):
        func(y_true, y_score, **{"groups": [0, 0, 0], **kw})


@pytest.mark.parametrize("func", ERR_FUNCTIONS)
def test_bad_max_label(func):
    with pytest.raises(ValueError, match=r"labels up to 2, above max_label=1\. .*set it to at least 2, or to None"):
        func(Y, S, groups=[0, 0, 0], max_label=1)
    for bad in (-1, -0.5, 31, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"'max_label' parameter .* must be a float in the range \[0(\.0)?, 30"):
            func(Y, S, groups=[0, 0, 0], max_label=bad)
    with pytest.raises(ValueError, match=r"labels up to 31, but exponential gain .* at most 30\. ERR's stop chance"):
        func([31, 0, 1], S, groups=[0, 0, 0])
    # a fractional top grade is a scale like any other
    assert func([1.5, 0, 1], S, groups=[0, 0, 0], max_label=1.5) is not None


@pytest.mark.parametrize("func", [mrr_score, err_score])
def test_nothing_to_average(func):
    with pytest.raises(ValueError, match="No query has a relevant document"):
        func([0, 0, 0, 0], [1, 2, 3, 4], groups=[1, 1, 2, 2], empty_query_score=None)


@pytest.mark.parametrize("func", ALL_FUNCTIONS)
def test_a_metric_called_as_a_scorer_names_the_scorer(func):
    scorer = "mrr_scorer" if func in (mrr_score, rr_per_query) else "err_scorer"
    with pytest.raises(TypeError, match=rf"is a metric, not a scorer.*scoring={scorer}\(\)"):
        func(Ridge(), np.zeros((3, 2)), Y)


def test_kernels_compile_once_whatever_the_input():
    """One signature per kernel: other dtypes, read-only memory, every k and
    both tie rules reach the same compiled code, and the helpers shared with
    NDCG and MAP (gain, the sorts, _tied_block) keep the signature those
    compile. A fresh process, so that the signatures are this test's alone."""
    code = r'''
import numpy as np, warnings
warnings.simplefilter("ignore")
from sklearn_ranknet._kernels import metrics, sort
from sklearn_ranknet.metrics import mrr_score, err_score, rr_per_query, err_per_query, ndcg_score, map_score
rng = np.random.default_rng(0)
y = rng.integers(0, 5, 300); q = np.repeat(np.arange(30), 10)
s = rng.normal(size=300); s.flags.writeable = False
for labels in (y, y.astype(np.int32), y.astype(float)):
    for scores in (s, s.astype(np.float32), np.round(s), s[::-1]):
        for k in (None, 1, 5, 10**6):
            for ignore_ties in (False, True):
                mrr_score(labels, scores, groups=q, k=k, ignore_ties=ignore_ties)
                rr_per_query(labels, scores, groups=q.astype(np.int32), k=k, ignore_ties=ignore_ties)
                err_score(labels, scores, groups=q, k=k, ignore_ties=ignore_ties)
                err_per_query(labels, scores, groups=q, k=k, max_label=4, ignore_ties=ignore_ties)
                ndcg_score(labels, scores, groups=q, k=k, ignore_ties=ignore_ties)
                map_score(labels, scores, groups=q, k=k, ignore_ties=ignore_ties)
err_score(y, s, groups=q, max_label=np.int64(4)); err_score(y, s, groups=q, max_label=np.float32(4.5))
many = {f"{m.__name__}.{n}": [str(x) for x in o.signatures] for m in (metrics, sort)
        for n, o in vars(m).items() if hasattr(o, "signatures") and len(o.signatures) > 1}
print(many, len(metrics.rr_chunk.signatures), len(metrics.err_chunk.signatures))
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "{} 1 1", out.stdout


# --------------------------------------------------------------------------
# 6. Scorers


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


SCORERS = {
    "mrr": (mrr_scorer, mrr_score, {"k": 5}),
    "err": (err_scorer, err_score, {"k": 10, "max_label": 4}),
}


def _ranking_data(seed=0, n_queries=24):
    rng = np.random.RandomState(seed)
    sizes = rng.randint(2, 12, size=n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    X = rng.normal(size=(len(qid), 5))
    # Noisy and sparse relevance (about 3 rows in 10), so that the first
    # relevant document is not always at the top.
    latent = X @ [1.0, -0.5, 0.3, 0.0, 0.0] + 1.5 * rng.normal(size=len(qid))
    y = np.digitize(latent, [1.0, 1.5, 2.0, 2.5]).astype(float)
    perm = rng.permutation(len(qid))
    return X[perm], y[perm], qid[perm]


@pytest.mark.parametrize("name", list(SCORERS))
def test_grid_search_scores_every_fold_query_by_query(routing, name):
    make, metric, kwargs = SCORERS[name]
    X, y, qid = _ranking_data()
    cv = GroupKFold(n_splits=3)
    search = GridSearchCV(Ridge(), {"alpha": [0.01, 100.0]}, cv=cv, scoring=make(**kwargs)).fit(X, y, groups=qid)
    for i, alpha in enumerate([0.01, 100.0]):
        expected, as_one_query = [], []
        for train, test in cv.split(X, y, groups=qid):
            s = Ridge(alpha=alpha).fit(X[train], y[train]).predict(X[test])
            expected.append(metric(y[test], s, groups=qid[test], **kwargs))
            as_one_query.append(metric(y[test], s, groups=np.zeros(len(test)), **kwargs))
        got = [search.cv_results_[f"split{j}_test_score"][i] for j in range(3)]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        assert not np.allclose(got, as_one_query)


def test_default_cut_offs_are_mrr_of_the_whole_list_and_err_at_10(routing):
    rng = np.random.RandomState(0)
    qid = np.repeat(np.arange(6), 30)
    X = rng.normal(size=(len(qid), 3))
    y = (rng.rand(len(qid)) < 0.1).astype(float) * rng.randint(1, 4, len(qid))
    model = Ridge().fit(X, y)
    s = model.predict(X)
    assert mrr_scorer()(model, X, y, groups=qid) == mrr_score(y, s, groups=qid)
    assert err_scorer()(model, X, y, groups=qid) == err_score(y, s, groups=qid, k=10)
    assert err_score(y, s, groups=qid, k=10) != err_score(y, s, groups=qid)


FAST = dict(hidden_layer_sizes=(4,), max_iter=4, random_state=0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", list(SCORERS))
def test_grid_search_with_routing_off_reads_the_query_column(name):
    make, _, kwargs = SCORERS[name]
    X, y, qid = make_ranking(n_queries=24, n_features=5, n_informative=3, max_docs=12, random_state=0)
    rows = np.random.default_rng(0).permutation(len(y))
    X, y, qid = X[rows], y[rows], qid[rows]
    with_column = np.column_stack([X, qid])
    grid = {"alpha": [1e-4, 1.0]}
    with sklearn.config_context(enable_metadata_routing=False):
        off = GridSearchCV(LambdaRankRanker(query_column=-1, **FAST), grid, cv=GroupKFold(3),
                           scoring=make(**kwargs), error_score="raise").fit(with_column, y, groups=qid)
        # with neither routing nor a column, an error that names both fixes
        with pytest.raises(ValueError, match=rf"{make.__name__} scores each query.*enable_metadata_routing=True"
                                             r".*query_column"):
            make(**kwargs)(Ridge().fit(X, y), X, y)
    with sklearn.config_context(enable_metadata_routing=True):
        on = GridSearchCV(LambdaRankRanker(**FAST), grid, cv=GroupKFold(3), scoring=make(**kwargs)).fit(
            X, y, groups=qid)
    np.testing.assert_allclose(off.cv_results_["mean_test_score"], on.cv_results_["mean_test_score"],
                               rtol=0, atol=1e-12)


def test_weighted_scorer_asks_for_the_weights(routing):
    X, y, qid = _ranking_data(seed=3)
    model = Ridge().fit(X, y)
    w = (qid % 3 + 1.0)
    for make, metric, kwargs in SCORERS.values():
        scorer = make(**kwargs).set_score_request(groups=True, sample_weight=True)
        expected = metric(y, model.predict(X), groups=qid, sample_weight=w, **kwargs)
        assert scorer(model, X, y, groups=qid, sample_weight=w) == expected
        assert expected != metric(y, model.predict(X), groups=qid, **kwargs)


def test_bad_scorer_arguments_fail_at_creation():
    with pytest.raises(ValueError, match="'k' parameter"):
        mrr_scorer(0)
    with pytest.raises(ValueError, match="'max_label' parameter"):
        err_scorer(max_label=-1)
    with pytest.raises(TypeError):
        mrr_scorer(max_label=4)  # MRR has no grades
    with pytest.raises(TypeError):
        err_scorer(gain="linear")  # ERR's gain is exponential
    with pytest.raises(TypeError, match="metadata routing"):
        err_scorer(groups=[0, 0])
    # the creation check holds no label above max_label=0
    assert "max_label=0" in repr(err_scorer(max_label=0))
