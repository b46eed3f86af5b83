"""Tests of the query-aware ranking metrics in ``sklearn_ranknet.metrics``.

The fast kernels are checked against the slow references of
``tests/_reference.py`` (brute force over tie orderings), against printed
worked examples, against scikit-learn's ``ndcg_score`` and against
LightGBM's own ``ndcg@k`` / ``map@k`` evaluation; then invariance
properties, grouping, input validation and numerical extremes.
"""

import math
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score
from sklearn.metrics import ndcg_score as sklearn_ndcg_score

from sklearn_ranknet import rank_within_groups
from sklearn_ranknet.metrics import (
    ap_per_query, err_per_query, err_score, map_score, mrr_score, ndcg_per_query, ndcg_score, rr_per_query,
)
from tests import _reference as ref

# Most tests here score one query and pass no groups on purpose: the warning
# that says so (tested where it is meant, with pytest.warns) is noise for them.
pytestmark = pytest.mark.filterwarnings("ignore:No groups were given.*:UserWarning")

TOL = 1e-12

# name -> (mean function, per-query function, fixed kwargs, reference per query)
METRICS = {
    "ndcg-exp": (ndcg_score, ndcg_per_query, {"gain": "exponential"}, ref.ndcg_query),
    "ndcg-lin": (ndcg_score, ndcg_per_query, {"gain": "linear"}, ref.ndcg_query),
    "map": (map_score, ap_per_query, {}, ref.ap_query),
    "mrr": (mrr_score, rr_per_query, {}, ref.rr_query),
    # max_label fixed: the reference scores one query at a time, and None
    # is the largest label of all queries (tested in test_mrr_err.py).
    "err": (err_score, err_per_query, {"max_label": 4}, ref.err_query),
}
METRIC_NAMES = list(METRICS)
# The metrics whose best ranking scores 1 (ERR is not normalized).
NORMALIZED_NAMES = [name for name in METRIC_NAMES if name != "err"]
K_VALUES = [None, 1, 3, 5, 1000]


def _ours(name, y, s, groups=None, **kw):
    """(mean, ids, values) of metric ``name`` from the package."""
    mean_func, per_query_func, fixed, _ = METRICS[name]
    ids, values = per_query_func(y, s, groups=groups, **fixed, **kw)
    try:
        mean = mean_func(y, s, groups=groups, **fixed, **kw)
    except ValueError:
        mean = None  # every query empty with empty_query_score=None
    return mean, ids, values


def _reference(name, y, s, groups=None, *, k=None, ignore_ties=False, empty_query_score=1.0):
    """(mean, ids, values) of metric ``name`` from the pure-Python reference."""
    _, _, fixed, metric = METRICS[name]
    kw = dict(fixed, k=k, ignore_ties=ignore_ties, empty_value=empty_query_score)
    ids, values = ref.per_query(metric, y, s, groups, **kw)
    mean = ref.mean_over_queries(metric, y, s, groups, **kw)
    return mean, ids, values


def _random_queries(seed, n_queries=25, max_size=7, max_label=4, n_score_values=3,
                    interleave=True):
    """Small queries with many ties: labels 0..max_label, scores drawn from a
    few distinct values, a single-document query, all-zero queries, query ids
    that are neither contiguous nor sorted, rows of queries interleaved."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_queries)
    sizes[0] = 1  # a single-document query
    sizes[1] = max(sizes[1], 2)
    score_values = np.round(rng.normal(size=n_score_values), 3)
    ids = rng.permutation(n_queries) * 3 + 5
    y, s, g = [], [], []
    for q, size in enumerate(sizes):
        labels = rng.integers(0, max_label + 1, size)
        if q == 1 or rng.random() < 0.2:
            labels[:] = 0  # a query with nothing to find
        if q == 2:
            labels[0] = max(labels[0], 1)  # at least one query is not empty
        y.extend(labels)
        s.extend(rng.choice(score_values, size))
        g.extend([ids[q]] * size)
    y, s, g = np.array(y, dtype=float), np.array(s), np.array(g)
    if interleave:
        rows = rng.permutation(len(y))
        y, s, g = y[rows], s[rows], g[rows]
    return y, s, g


# --------------------------------------------------------------------------
# 1. Kernels against the brute-force references


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("empty_query_score", [1.0, 0.0, None])
@pytest.mark.parametrize("k", K_VALUES)
@pytest.mark.parametrize("ignore_ties", [False, True])
@pytest.mark.parametrize("name", METRIC_NAMES)
def test_matches_reference(name, ignore_ties, k, empty_query_score, seed):
    y, s, g = _random_queries(seed)
    kw = dict(k=k, ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    mean, ids, values = _ours(name, y, s, g, **kw)
    ref_mean, ref_ids, ref_values = _reference(name, y, s, g, **kw)

    assert ids.tolist() == ref_ids
    np.testing.assert_allclose(values, ref_values, rtol=0, atol=TOL)
    assert mean == pytest.approx(ref_mean, abs=TOL)
    assert mean == pytest.approx(np.mean(values), abs=TOL)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_reference_sees_ties(name):
    # The test data really has ties that matter: averaging over them differs
    # from input order for some query, so both code paths are exercised.
    y, s, g = _random_queries(0)
    _, _, averaged = _ours(name, y, s, g, ignore_ties=False)
    _, _, input_order = _ours(name, y, s, g, ignore_ties=True)
    assert np.max(np.abs(np.asarray(averaged) - input_order)) > 1e-3


def test_tie_average_of_a_whole_tied_query():
    # 7 documents that all tie: the expectation over 5040 orderings.
    y = [3, 0, 1, 0, 2, 0, 1]
    s = [0.5] * 7
    for name in METRIC_NAMES:
        for k in K_VALUES:
            mean, _, _ = _ours(name, y, s, k=k)
            ref_mean, _, _ = _reference(name, y, s, k=k)
            assert mean == pytest.approx(ref_mean, abs=TOL)


def test_tie_averaged_ap_by_hand():
    # One relevant and one irrelevant document tie at the top: AP is 1 or
    # 1/2 with equal chance; then one relevant document at rank 3.
    y = [0, 1, 1]
    s = [2.0, 2.0, 1.0]
    expected = 0.5 * (1 + 2 / 3) / 2 + 0.5 * (1 / 2 + 2 / 3) / 2
    assert map_score(y, s) == pytest.approx(expected, abs=TOL)
    # in input order the irrelevant document comes first
    assert map_score(y, s, ignore_ties=True) == pytest.approx((1 / 2 + 2 / 3) / 2, abs=TOL)


# --------------------------------------------------------------------------
# 2. Worked examples from the literature


def test_worked_example_ndcg_linear():
    # The relevance list 3, 2, 3, 0, 1, 2 in rank order (the running example of
    # the "Discounted cumulative gain" article): NDCG 0.961 with linear gain.
    labels = [3, 2, 3, 0, 1, 2]
    scores = [6, 5, 4, 3, 2, 1]
    dcg = 3 + 2 / math.log2(3) + 3 / math.log2(4) + 0 + 1 / math.log2(6) + 2 / math.log2(7)
    ideal = 3 + 3 / math.log2(3) + 2 / math.log2(4) + 2 / math.log2(5) + 1 / math.log2(6)
    value = ndcg_score(labels, scores, gain="linear")
    assert value == pytest.approx(0.961, abs=1e-3)
    assert value == pytest.approx(dcg / ideal, abs=TOL)
    assert ref.dcg(labels, None, "linear") == pytest.approx(dcg, abs=TOL)


def test_worked_example_average_precision():
    # 7 documents with the relevant ones at ranks 1, 2, 4 and 7:
    # AP = (1/1 + 2/2 + 3/4 + 4/7) / 4 = 0.8304.
    labels = [1, 1, 0, 1, 0, 0, 1]
    scores = [7, 6, 5, 4, 3, 2, 1]
    value = map_score(labels, scores)
    assert value == pytest.approx(0.8304, abs=1e-3)
    assert value == pytest.approx((1 / 1 + 2 / 2 + 3 / 4 + 4 / 7) / 4, abs=TOL)
    # with a cutoff: two hits in the top 3, divided by min(3, 4)
    assert map_score(labels, scores, k=3) == pytest.approx((1 + 1) / 3, abs=TOL)


# --------------------------------------------------------------------------
# 3. Conformance with scikit-learn's ndcg_score, query by query


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [None, 1, 2, 3, 5, 20])
def test_matches_sklearn_per_query(k, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 13, 60)  # sklearn needs at least 2 documents
    groups = np.repeat(np.arange(len(sizes)), sizes)
    n = len(groups)
    y = rng.integers(0, 5, n).astype(float)
    y[groups % 7 == 0] = 0.0  # some queries with nothing to find
    y[groups % 11 == 1] *= 0.37  # some non-integer grades
    s = rng.choice(np.round(rng.normal(size=4), 2), n)  # many ties
    ids, values = ndcg_per_query(
        y, s, groups=groups, k=k, gain="linear", ignore_ties=False, empty_query_score=0.0
    )
    assert ids.tolist() == list(range(len(sizes)))
    for q in ids:
        rows = groups == q
        expected = sklearn_ndcg_score([y[rows]], [s[rows]], k=k, ignore_ties=False)
        assert values[q] == pytest.approx(expected, abs=TOL)
    # the empty queries are the ones sklearn scores 0
    assert np.all(values[ids % 7 == 0] == 0.0)


# --------------------------------------------------------------------------
# 4. Conformance with LightGBM's own evaluation
#
# LightGBM evaluates its metrics on the current training scores, which, before
# any tree is added, are exactly the Dataset's ``init_score``. So a Booster
# built on a Dataset whose init_score holds our scores, with no call to
# update(), evaluates exactly the given scores: ``eval_train()`` returns
# LightGBM's mean over queries of ndcg@k and map@k for them. (Checked: the
# values agree with ours to 1e-12, and change with the scores.)
#
# LightGBM breaks ties in input order, so it is compared with
# ignore_ties=True. Its defaults match ours: gain 2**label - 1 (label_gain),
# discount 1/log2(rank + 1), a query whose ideal DCG is 0 scores 1 for ndcg,
# and for map a query with no relevant document scores 1 as well: MapMetric
# counts npos (labels > 0.5) per query and writes 1.0 when npos == 0, else
# sum of precision@r over relevant ranks r <= k divided by min(npos, k)
# (src/metric/map_metric.hpp); see test_lightgbm_empty_queries_score_one.
# LightGBM's lambdarank requires integer labels, so "> 0.5" and our "> 0"
# agree on everything it accepts.

EVAL_AT = (1, 3, 5, 10)


def _lightgbm_eval(lgb, y, scores, sizes, eval_at=EVAL_AT):
    dataset = lgb.Dataset(
        np.zeros((len(y), 1)),
        label=y,
        group=sizes,
        init_score=scores,
        params={"verbose": -1},
    )
    booster = lgb.Booster(
        params={
            "objective": "lambdarank",
            "metric": ["ndcg", "map"],
            "eval_at": list(eval_at),
            "verbose": -1,
            "num_threads": 1,
        },
        train_set=dataset,
    )
    return {result[1]: result[2] for result in booster.eval_train()}


def _lightgbm_data(seed, max_label=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 16, 40)  # many queries shorter than k = 10
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.integers(0, max_label + 1, len(groups)).astype(float)
    y[np.isin(groups, rng.choice(len(sizes), 6, replace=False))] = 0.0
    if seed % 2:
        s = rng.integers(-2, 3, len(groups)).astype(float)  # heavy ties
    else:
        s = np.round(rng.normal(size=len(groups)), 1)  # some ties
    return y, s, groups, sizes


@pytest.mark.parametrize("seed,max_label", [(0, 4), (1, 4), (2, 1), (3, 30)])
def test_matches_lightgbm_mean(seed, max_label):
    lgb = pytest.importorskip("lightgbm")
    y, s, groups, sizes = _lightgbm_data(seed, max_label)
    theirs = _lightgbm_eval(lgb, y, s, sizes)
    for k in EVAL_AT:
        ours_ndcg = ndcg_score(y, s, groups=groups, k=k, ignore_ties=True)
        ours_map = map_score(y, s, groups=groups, k=k, ignore_ties=True)
        assert ours_ndcg == pytest.approx(theirs[f"ndcg@{k}"], abs=TOL)
        assert ours_map == pytest.approx(theirs[f"map@{k}"], abs=TOL)


def test_matches_lightgbm_per_query():
    lgb = pytest.importorskip("lightgbm")
    y, s, groups, sizes = _lightgbm_data(1)
    some_queries = [0, 1, 2, 3, 5, 8, 13, 21]
    for k in EVAL_AT:
        _, ndcg_values = ndcg_per_query(y, s, groups=groups, k=k, ignore_ties=True)
        _, ap_values = ap_per_query(y, s, groups=groups, k=k, ignore_ties=True)
        for q in some_queries:
            rows = groups == q
            theirs = _lightgbm_eval(lgb, y[rows], s[rows], [rows.sum()], eval_at=(k,))
            assert ndcg_values[q] == pytest.approx(theirs[f"ndcg@{k}"], abs=TOL)
            assert ap_values[q] == pytest.approx(theirs[f"map@{k}"], abs=TOL)


def test_lightgbm_evaluates_the_given_scores():
    # Guard against LightGBM silently ignoring init_score: reversing the
    # scores must change its value, in step with ours.
    lgb = pytest.importorskip("lightgbm")
    y = np.array([3.0, 0.0, 1.0, 0.0, 2.0])
    s = np.array([0.1, 0.9, 0.3, 0.7, 0.2])
    for scores in (s, -s):
        theirs = _lightgbm_eval(lgb, y, scores, [5], eval_at=(3,))
        assert theirs["ndcg@3"] == pytest.approx(ndcg_score(y, scores, k=3), abs=TOL)
        assert theirs["map@3"] == pytest.approx(map_score(y, scores, k=3), abs=TOL)
    forward = _lightgbm_eval(lgb, y, s, [5], eval_at=(3,))
    backward = _lightgbm_eval(lgb, y, -s, [5], eval_at=(3,))
    assert abs(forward["ndcg@3"] - backward["ndcg@3"]) > 0.1


def test_lightgbm_empty_queries_score_one():
    # A query without any relevant document: LightGBM scores it 1.0 for both
    # ndcg and map, as our default empty_query_score=1.0 does.
    lgb = pytest.importorskip("lightgbm")
    y = np.zeros(4)
    s = np.array([0.4, 0.3, 0.2, 0.1])
    theirs = _lightgbm_eval(lgb, y, s, [4], eval_at=(1, 3))
    assert theirs == {"ndcg@1": 1.0, "ndcg@3": 1.0, "map@1": 1.0, "map@3": 1.0}
    assert ndcg_score(y, s, k=1) == 1.0
    assert map_score(y, s, k=3) == 1.0


# --------------------------------------------------------------------------
# 4b. Conformance with trec_eval (pytrec_eval) and ranx
#
# Both rank by score with their own tie rules. trec_eval breaks ties by
# document name, descending (checked: with names that descend in input order
# it agrees with ignore_ties=True on heavily tied scores, and not with the
# tie average); ranx sorts with an unstable argsort, so it only gets untied
# scores. Both use the linear gain for "ndcg" (ranx: "ndcg_burges" is
# 2**rel - 1), relevant means label >= 1 (integer labels here, so the same as
# our > 0), and both divide AP@k by R, every relevant document of the query,
# where DESIGN.md divides by min(k, R): ours times min(k, R) / R is theirs.
# trec_eval scores a query without a relevant document 0 (our
# empty_query_score=0.0); ranx's qrels only hold queries with one.
#
# Tolerance: a DCG sums at most MAX_SIZE terms, each rounded (gain times a
# discount that each side computes with its own log2), so each DCG is good
# to about 2 * MAX_SIZE ulp of itself, and a ratio of two to twice that;
# values are at most 1.

EXTERNAL_MAX_SIZE = 25
EXTERNAL_TOL = 4 * EXTERNAL_MAX_SIZE * np.finfo(np.float64).eps
EXTERNAL_KS = (1, 3, 5, 10, 30)


def _external_data(seed, tied):
    """Interleaved queries of 1..25 documents, integer labels 0..4 (some
    queries with none relevant), scores with heavy ties or none."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, EXTERNAL_MAX_SIZE + 1, 60)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.integers(0, 5, len(groups))
    y[np.isin(groups, rng.choice(len(sizes), 8, replace=False))] = 0
    if tied:
        s = rng.integers(0, 4, len(groups)).astype(float)
    else:
        s = rng.permutation(len(groups)) / len(groups)
    rows = rng.permutation(len(groups))
    return y[rows], s[rows], groups[rows]


def _as_trec(y, s, groups):
    """qrels and run dicts; row i is document ``d{n - i}``, so that names
    descend in input order and trec_eval's tie rule is ours with
    ignore_ties=True."""
    n = len(y)
    qrels, run = {}, {}
    for i, (label, score, q) in enumerate(zip(y.tolist(), s.tolist(), groups.tolist())):
        doc = f"d{n - i:06d}"
        qrels.setdefault(f"q{q}", {})[doc] = int(label)
        run.setdefault(f"q{q}", {})[doc] = float(score)
    return qrels, run


def _cut_ap_by_r(ap_at_k, y, groups, ids, k):
    """AP@k divided by min(k, R) (ours) turned into AP@k divided by R."""
    n_relevant = np.array([np.count_nonzero(y[groups == q] > 0) for q in ids])
    return ap_at_k * np.minimum(k, n_relevant) / np.maximum(n_relevant, 1)


@pytest.mark.parametrize("seed,tied", [(0, True), (1, True), (2, False)])
def test_matches_trec_eval_per_query(seed, tied):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    y, s, groups = _external_data(seed, tied)
    qrels, run = _as_trec(y, s, groups)
    cuts = ",".join(map(str, EXTERNAL_KS))
    measures = {"ndcg", "map", f"ndcg_cut.{cuts}", f"map_cut.{cuts}"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    kw = dict(groups=groups, ignore_ties=True, empty_query_score=0.0)

    def check(measure, ids, values):
        expected = np.array([theirs[f"q{q}"][measure] for q in ids.tolist()])
        np.testing.assert_allclose(values, expected, rtol=0, atol=EXTERNAL_TOL, err_msg=measure)

    ids, values = ndcg_per_query(y, s, gain="linear", **kw)
    assert len(ids) == len(theirs)
    check("ndcg", ids, values)
    check("map", *ap_per_query(y, s, **kw))
    for k in EXTERNAL_KS:
        check(f"ndcg_cut_{k}", *ndcg_per_query(y, s, k=k, gain="linear", **kw))
        ids, values = ap_per_query(y, s, k=k, **kw)
        check(f"map_cut_{k}", ids, _cut_ap_by_r(values, y, groups, ids, k))


def test_trec_eval_tie_rule_is_not_the_tie_average():
    # Guard for the comparison above: on tied scores the two conventions
    # differ, so the match is not one of untied data.
    pytrec_eval = pytest.importorskip("pytrec_eval")
    y, s, groups = _external_data(0, tied=True)
    qrels, run = _as_trec(y, s, groups)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)
    ids, values = ndcg_per_query(y, s, groups=groups, gain="linear", empty_query_score=0.0)
    expected = np.array([theirs[f"q{q}"]["ndcg"] for q in ids.tolist()])
    assert np.abs(values - expected).max() > 0.01


@pytest.mark.parametrize("seed", [3])
def test_matches_ranx_without_ties(seed):
    ranx = pytest.importorskip("ranx")
    y, s, groups = _external_data(seed, tied=False)
    qrels, run = _as_trec(y, s, groups)
    judged = {q: docs for q, docs in qrels.items() if any(docs.values())}
    ranx_qrels, ranx_run = ranx.Qrels(judged), ranx.Run({q: run[q] for q in judged})
    kw = dict(groups=groups, empty_query_score=None)  # queries ranx holds

    for ignore_ties in (False, True):  # no ties: the same values
        for k in (None, *EXTERNAL_KS):
            at = "" if k is None else f"@{k}"
            for gain, name in (("linear", "ndcg"), ("exponential", "ndcg_burges")):
                theirs = ranx.evaluate(ranx_qrels, ranx_run, name + at, return_mean=False)
                ids, values = ndcg_per_query(y, s, k=k, gain=gain, ignore_ties=ignore_ties, **kw)
                assert [f"q{q}" for q in ids.tolist()] == sorted(judged, key=lambda q: int(q[1:]))
                # ranx lists queries in its own order: by name
                expected = dict(zip(ranx_qrels.keys(), theirs))
                expected = np.array([expected[f"q{q}"] for q in ids.tolist()])
                np.testing.assert_allclose(values, expected, rtol=0, atol=EXTERNAL_TOL)
                mean = ndcg_score(y, s, k=k, gain=gain, ignore_ties=ignore_ties, **kw)
                assert mean == pytest.approx(
                    ranx.evaluate(ranx_qrels, ranx_run, name + at), rel=0, abs=EXTERNAL_TOL
                )
            theirs = dict(zip(ranx_qrels.keys(), ranx.evaluate(ranx_qrels, ranx_run, "map" + at, return_mean=False)))
            ids, values = ap_per_query(y, s, k=k, ignore_ties=ignore_ties, **kw)
            if k is not None:
                values = _cut_ap_by_r(values, y, groups, ids, k)
            expected = np.array([theirs[f"q{q}"] for q in ids.tolist()])
            np.testing.assert_allclose(values, expected, rtol=0, atol=EXTERNAL_TOL)


def test_exponential_gain_is_sklearn_on_transformed_labels():
    """scikit-learn's ndcg_score has the linear gain only, but linear gain
    on labels 2**y - 1 is exponential gain on y: an independent check of the
    exponential gain with tie averaging, k cutting through tied blocks, and
    fractional labels (gains of fractional labels: 2**y - 1, a few ulp)."""
    rng = np.random.default_rng(8)
    sizes = rng.integers(2, 40, 50)
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.integers(0, 6, len(groups)).astype(float)
    y[groups % 5 == 2] *= 0.41  # fractional labels
    y[groups % 9 == 0] = 0.0  # nothing to find: sklearn scores 0
    s = rng.integers(0, 5, len(groups)).astype(float)  # heavy ties
    for k in (None, 1, 2, 7, 20):
        ids, values = ndcg_per_query(y, s, groups=groups, k=k, empty_query_score=0.0)
        for q in ids.tolist():
            rows = groups == q
            expected = sklearn_ndcg_score([2.0 ** y[rows] - 1.0], [s[rows]], k=k)
            assert values[q] == pytest.approx(expected, rel=0, abs=4 * 40 * np.finfo(float).eps)


# --------------------------------------------------------------------------
# 5. Properties (hypothesis)


@st.composite
def ranking_data(draw, labels=st.integers(0, 4), scores=st.integers(-3, 3), max_size=8):
    """Contiguous queries 0, 1, ...; small integer scores, so many ties."""
    n_queries = draw(st.integers(1, 5))
    y, s, g = [], [], []
    for q in range(n_queries):
        size = draw(st.integers(1, max_size))
        y += draw(st.lists(labels, min_size=size, max_size=size))
        s += draw(st.lists(scores, min_size=size, max_size=size))
        g += [q] * size
    return np.array(y, dtype=float), np.array(s, dtype=float), np.array(g)


metric_names = st.sampled_from(METRIC_NAMES)
ks = st.sampled_from([None, 1, 2, 3, 10])
empty_scores = st.sampled_from([1.0, 0.0, 0.5])
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)


def _assert_in_unit_interval(name, data, k, ignore_ties, empty_query_score):
    y, s, g = data
    mean, _, values = _ours(name, y, s, g, k=k, ignore_ties=ignore_ties,
                            empty_query_score=empty_query_score)
    assert np.all(values >= 0.0) and np.all(values <= 1.0), values.tolist()
    assert 0.0 <= mean <= 1.0


@PROPERTY_SETTINGS
@given(ranking_data(), ks, st.booleans(), empty_scores)
def test_map_in_unit_interval(data, k, ignore_ties, empty_query_score):
    _assert_in_unit_interval("map", data, k, ignore_ties, empty_query_score)


@PROPERTY_SETTINGS
@given(ranking_data(), st.sampled_from(["ndcg-exp", "ndcg-lin"]), ks, st.booleans(), empty_scores)
# BUG: NDCG of a query whose equal labels tie in score is 1.0000000000000002
# (the tie-averaged DCG and the ideal DCG round differently), above the
# documented range [0, 1]. Shown by this example before any random search.
@example((np.array([3.0, 3.0, 3.0]), np.zeros(3), np.zeros(3, dtype=int)),
         "ndcg-lin", None, False, 1.0)
def test_ndcg_in_unit_interval(data, name, k, ignore_ties, empty_query_score):
    _assert_in_unit_interval(name, data, k, ignore_ties, empty_query_score)


@PROPERTY_SETTINGS
@given(ranking_data(), metric_names, ks, st.booleans(), st.randoms(use_true_random=False))
def test_invariant_to_query_order(data, name, k, ignore_ties, random):
    # Moving whole queries around (each query's rows kept in their order)
    # changes nothing, with or without tie averaging.
    y, s, g = data
    query_order = list(np.unique(g))
    random.shuffle(query_order)
    rows = np.concatenate([np.flatnonzero(g == q) for q in query_order])
    kw = dict(k=k, ignore_ties=ignore_ties)
    mean, ids, values = _ours(name, y, s, g, **kw)
    mean2, ids2, values2 = _ours(name, y[rows], s[rows], g[rows], **kw)
    assert ids2.tolist() == ids.tolist()
    np.testing.assert_array_equal(values2, values)
    assert mean2 == pytest.approx(mean, abs=TOL)


@PROPERTY_SETTINGS
@given(ranking_data(), metric_names, ks, st.randoms(use_true_random=False))
def test_invariant_to_row_permutation_when_ties_are_averaged(data, name, k, random):
    # Only for ignore_ties=False: with ignore_ties=True tied documents are
    # ranked in input order, so shuffling the rows of a query reorders its
    # ties and changes the value (test_input_order_decides_ties_when_ignored).
    y, s, g = data
    rows = list(range(len(y)))
    random.shuffle(rows)
    mean, ids, values = _ours(name, y, s, g, k=k, ignore_ties=False)
    mean2, ids2, values2 = _ours(name, y[rows], s[rows], g[rows], k=k, ignore_ties=False)
    assert ids2.tolist() == ids.tolist()
    np.testing.assert_allclose(values2, values, rtol=0, atol=TOL)
    assert mean2 == pytest.approx(mean, abs=TOL)


def test_input_order_decides_ties_when_ignored():
    y = np.array([0.0, 2.0])
    s = np.array([1.0, 1.0])
    for name in METRIC_NAMES:
        first, _, _ = _ours(name, y, s, ignore_ties=True)
        swapped, _, _ = _ours(name, y[::-1], s[::-1], ignore_ties=True)
        assert first < swapped
        assert swapped == 1.0 or name not in NORMALIZED_NAMES
        averaged, _, _ = _ours(name, y, s, ignore_ties=False)
        assert first < averaged < swapped


ORDER_PRESERVING = {
    "identity": lambda x: x,
    "affine": lambda x: 3.0 * x - 7.0,
    "cube": lambda x: x**3 + x,
    "exp": np.exp,
}


@PROPERTY_SETTINGS
@given(ranking_data(), st.sampled_from(NORMALIZED_NAMES), ks, st.booleans(),
       st.sampled_from(list(ORDER_PRESERVING)))
def test_perfect_ranking_scores_one(data, name, k, ignore_ties, transform):
    y, _, g = data
    scores = ORDER_PRESERVING[transform](y)
    mean, _, values = _ours(name, y, scores, g, k=k, ignore_ties=ignore_ties)
    np.testing.assert_allclose(values, 1.0, rtol=0, atol=TOL)
    assert mean == pytest.approx(1.0, abs=TOL)
    if name in ("map", "mrr"):  # every precision term, and 1 / 1, is exactly 1
        assert np.all(values == 1.0)


@PROPERTY_SETTINGS
@given(ranking_data(), metric_names, ks, st.booleans(), st.randoms(use_true_random=False))
def test_invariant_to_query_ids_and_interleaving(data, name, k, ignore_ties, random):
    # New ids that sort in another order (strings: "q10" < "q2"), and rows of
    # different queries interleaved, each query's rows keeping their order.
    y, s, g = data
    new_id = {q: f"q{(7 * q + 3) % 13}" for q in np.unique(g).tolist()}
    slots = g.tolist()
    random.shuffle(slots)  # which query each output row belongs to
    queue = {q: list(np.flatnonzero(g == q)) for q in new_id}
    rows = np.array([queue[q].pop(0) for q in slots])
    g2 = np.array([new_id[q] for q in g[rows].tolist()])
    kw = dict(k=k, ignore_ties=ignore_ties)
    mean, ids, values = _ours(name, y, s, g, **kw)
    mean2, ids2, values2 = _ours(name, y[rows], s[rows], g2, **kw)
    by_id = dict(zip(ids2.tolist(), values2.tolist()))
    assert sorted(by_id) == ids2.tolist()
    assert [by_id[new_id[q]] for q in ids.tolist()] == values.tolist()
    assert mean2 == pytest.approx(mean, abs=TOL)


MONOTONE = {
    "affine": lambda x: 1e6 * x + 7.0,
    "cube": lambda x: x**3,
    "exp": np.exp,
    "arctan": np.arctan,
    "negate-reciprocal-shift": lambda x: -1.0 / (x + 10.0),
}


@PROPERTY_SETTINGS
@given(ranking_data(), metric_names, ks, st.booleans(), st.sampled_from(list(MONOTONE)))
def test_invariant_to_monotone_transform_of_scores(data, name, k, ignore_ties, transform):
    # Scores are small integers, so each transform keeps them distinct (and
    # ties tied) in floating point too.
    y, s, g = data
    kw = dict(k=k, ignore_ties=ignore_ties)
    mean, _, values = _ours(name, y, s, g, **kw)
    mean2, _, values2 = _ours(name, y, MONOTONE[transform](s), g, **kw)
    np.testing.assert_array_equal(values2, values)
    assert mean2 == mean


# Weighted means. np.average sums n terms twice (weights, and weights times
# values in [0, 1]): each sum is good to n ulp of itself, so a mean of values
# in [0, 1] to about 2n ulp, whatever the order of the terms.


def _weighted_mean_tol(n_queries):
    return 4 * (n_queries + 1) * np.finfo(np.float64).eps


def _weighted(name, y, s, g, w, **kw):
    """The weighted mean, or the ValueError's class name when nothing is
    left to average (every query empty with empty_query_score=None, or
    every query left weighing 0)."""
    mean_func, _, fixed, _ = METRICS[name]
    try:
        return mean_func(y, s, groups=g, sample_weight=w, **fixed, **kw)
    except ValueError:
        return "ValueError"


query_weight_values = st.integers(0, 5)


@PROPERTY_SETTINGS
@given(ranking_data(), ranking_data(), st.data(), metric_names, ks, st.booleans(),
       st.sampled_from([1.0, 0.0, None]))
def test_a_query_weighing_zero_changes_nothing(data, extra, draw, name, k, ignore_ties,
                                               empty_query_score):
    y, s, g = data
    n_queries = len(np.unique(g))
    per_query = np.array(draw.draw(st.lists(query_weight_values, min_size=n_queries,
                                            max_size=n_queries)), dtype=float)
    w = per_query[g]
    # The queries of ``extra`` (as long, k-cut and tied as any) join with
    # new ids, their rows interleaved with the others, all weighing 0.
    # Each query's rows keep their order (with ignore_ties=True it ranks ties).
    y2, s2, g2 = extra
    all_ids = np.r_[g, g2 + 100]
    rows = np.random.default_rng(len(all_ids)).permutation(len(all_ids))
    for q in np.unique(all_ids):
        slots = np.flatnonzero(all_ids[rows] == q)
        rows[slots] = np.sort(rows[slots])
    kw = dict(k=k, ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    before = _weighted(name, y, s, g, w, **kw)
    after = _weighted(name, np.r_[y, y2][rows], np.r_[s, s2][rows], all_ids[rows],
                      np.r_[w, np.zeros(len(y2))][rows], **kw)
    if before == "ValueError" or after == "ValueError":
        assert before == after
    else:
        assert after == pytest.approx(before, rel=0, abs=_weighted_mean_tol(n_queries))


@PROPERTY_SETTINGS
@given(ranking_data(), st.data(), metric_names, ks, st.booleans(), st.sampled_from([1.0, None]),
       st.sampled_from([1e-200, 1e-3, 7.0, 1e200]))
def test_scaling_sample_weight_changes_nothing(data, draw, name, k, ignore_ties,
                                               empty_query_score, factor):
    # Integer weights times a factor stay normal floats: each ratio to the
    # largest weight is off by a few ulp, each sum by n ulp.
    y, s, g = data
    n_queries = len(np.unique(g))
    per_query = np.array(draw.draw(st.lists(query_weight_values, min_size=n_queries,
                                            max_size=n_queries)), dtype=float)
    kw = dict(k=k, ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    plain = _weighted(name, y, s, g, per_query[g], **kw)
    scaled = _weighted(name, y, s, g, factor * per_query[g], **kw)
    if plain == "ValueError" or scaled == "ValueError":
        assert plain == scaled
    else:
        assert scaled == pytest.approx(plain, rel=0, abs=_weighted_mean_tol(n_queries))


@PROPERTY_SETTINGS
@given(ranking_data(), st.data(), metric_names, ks, st.booleans(), st.sampled_from([1.0, None]))
def test_an_integer_weight_is_repeating_the_query(data, draw, name, k, ignore_ties,
                                                  empty_query_score):
    y, s, g = data
    n_queries = len(np.unique(g))
    per_query = draw.draw(st.lists(st.integers(0, 3), min_size=n_queries, max_size=n_queries))
    copies = [np.flatnonzero(g == q) for q in range(n_queries) for _ in range(per_query[q])]
    kw = dict(k=k, ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    weighted = _weighted(name, y, s, g, np.array(per_query, dtype=float)[g], **kw)
    if not copies:  # every weight 0: refused
        assert weighted == "ValueError"
        return
    rows = np.concatenate(copies)
    repeated_ids = np.repeat(np.arange(len(copies)), [len(c) for c in copies])
    repeated = _weighted(name, y[rows], s[rows], repeated_ids, None, **kw)
    if weighted == "ValueError" or repeated == "ValueError":
        assert weighted == repeated
    else:
        assert weighted == pytest.approx(repeated, rel=0, abs=_weighted_mean_tol(len(copies)))


@PROPERTY_SETTINGS
@given(ranking_data(), metric_names, st.booleans(), st.sampled_from([1.0, 0.0, None]),
       st.sampled_from([0, 1, 7, 2**40]))
def test_k_at_least_the_longest_query_is_the_whole_list(data, name, ignore_ties,
                                                         empty_query_score, beyond):
    y, s, g = data
    k = int(np.bincount(g).max()) + beyond
    kw = dict(ignore_ties=ignore_ties, empty_query_score=empty_query_score)
    mean, ids, values = _ours(name, y, s, g, k=k, **kw)
    whole_mean, whole_ids, whole_values = _ours(name, y, s, g, k=None, **kw)
    np.testing.assert_array_equal(ids, whole_ids)
    np.testing.assert_array_equal(values, whole_values)
    assert mean == whole_mean


# --------------------------------------------------------------------------
# 6. Groups


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_string_query_ids(name):
    y, s, g = _random_queries(3, interleave=False)
    names = np.array([f"query-{q:03d}" for q in g])
    mean, ids, values = _ours(name, y, s, g)
    mean2, ids2, values2 = _ours(name, y, s, names)
    assert ids2.tolist() == [f"query-{q:03d}" for q in ids.tolist()]
    np.testing.assert_array_equal(values2, values)
    assert mean2 == mean
    ref_mean, _, _ = _reference(name, y, s, names)
    assert mean2 == pytest.approx(ref_mean, abs=TOL)


@pytest.mark.parametrize("ignore_ties", [False, True])
@pytest.mark.parametrize("name", METRIC_NAMES)
def test_interleaved_unsorted_ids(name, ignore_ties):
    y = np.array([2, 0, 1, 0, 3, 1, 0, 2, 1.0])
    s = np.array([0.1, 0.5, 0.5, 0.9, 0.3, 0.5, 0.2, 0.2, 0.4])
    g = np.array([30, 7, 30, 12, 7, 30, 12, 7, 30])
    mean, ids, values = _ours(name, y, s, g, ignore_ties=ignore_ties)
    assert ids.tolist() == [7, 12, 30]
    for q, value in zip(ids, values):
        rows = g == q  # the query alone, rows in input order
        alone, _, _ = _ours(name, y[rows], s[rows], ignore_ties=ignore_ties)
        assert value == alone
    ref_mean, _, _ = _reference(name, y, s, g, ignore_ties=ignore_ties)
    assert mean == pytest.approx(ref_mean, abs=TOL)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_groups_none_is_one_query(name):
    y, s, _ = _random_queries(4, n_queries=3, max_size=4)
    for ignore_ties in (False, True):
        mean, ids, values = _ours(name, y, s, None, ignore_ties=ignore_ties)
        mean2, _, values2 = _ours(name, y, s, np.full(len(y), "one"), ignore_ties=ignore_ties)
        assert len(ids) == 1 and len(values) == 1
        assert mean == values[0] == mean2 == values2[0]
        ref_mean, _, _ = _reference(name, y, s, None, ignore_ties=ignore_ties)
        assert mean == pytest.approx(ref_mean, abs=TOL)


@pytest.mark.parametrize("name", NORMALIZED_NAMES)
def test_single_document_queries(name):
    y = np.array([2.0, 0.0, 1.0])
    s = np.array([-5.0, 3.0, 0.0])
    g = np.array([1, 2, 3])
    for k in K_VALUES:
        for ignore_ties in (False, True):
            kw = dict(k=k, ignore_ties=ignore_ties)
            _, ids, values = _ours(name, y, s, g, **kw)
            assert values.tolist() == [1.0, 1.0, 1.0]  # default: empty scores 1
            _, _, values = _ours(name, y, s, g, empty_query_score=0.0, **kw)
            assert values.tolist() == [1.0, 0.0, 1.0]
            _, ids, values = _ours(name, y, s, g, empty_query_score=None, **kw)
            assert ids.tolist() == [1, 3] and values.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("label", [1.0, 2.5, 30.0])
@pytest.mark.parametrize("name", NORMALIZED_NAMES)
def test_all_equal_labels_score_one(name, label):
    rng = np.random.default_rng(5)
    for size in (2, 3, 6, 20):
        y = np.full(size, label)
        for s in (rng.normal(size=size), np.zeros(size), rng.integers(0, 2, size)):
            for k in K_VALUES:
                for ignore_ties in (False, True):
                    value, _, _ = _ours(name, y, s, k=k, ignore_ties=ignore_ties)
                    assert value == pytest.approx(1.0, abs=TOL)


def test_mixed_type_query_ids_are_not_merged():
    # BUG: np.asarray([1, "1"]) turns the int 1 into the string "1", so two
    # different queries silently become one. group_rows promises a ValueError
    # for ids that cannot be compared; it should raise (or keep two queries).
    y = [1.0, 0.0]
    s = [0.0, 1.0]
    try:
        ids, values = ndcg_per_query(y, s, groups=[1, "1"])
    except ValueError:
        return
    assert len(ids) == 2, f"ids {ids!r} merged two queries: values {values!r}"


# --------------------------------------------------------------------------
# 7. Bad input

ALL_FUNCTIONS = [ndcg_score, map_score, ndcg_per_query, ap_per_query, mrr_score, rr_per_query,
                 err_score, err_per_query]
NDCG_FUNCTIONS = [ndcg_score, ndcg_per_query]
Y = [2.0, 0.0, 1.0]
S = [0.3, 0.2, 0.1]


@pytest.mark.parametrize("func", ALL_FUNCTIONS)
@pytest.mark.parametrize(
    "y_true,y_score,groups,match",
    [
        ([1, 0, 1], [1, 2], None, "y_true has 3 rows but y_score has 2"),
        ([1, 0], [1, 2, 3], None, "y_true has 2 rows but y_score has 3"),
        (Y, S, [1, 1], "groups has 2 entries but the data has 3 rows"),
        (Y, S, [1, 1, 2, 2], "groups has 4 entries"),
        ([2, np.nan, 1], S, None, "y_true contains NaN"),
        ([2, np.inf, 1], S, None, "y_true contains infinity"),
        (Y, [0.3, np.nan, 0.1], None, "y_score contains NaN"),
        (Y, [0.3, np.inf, 0.1], None, "y_score contains infinity"),
        (Y, [0.3, -np.inf, 0.1], None, "y_score contains infinity"),
        (Y, S, np.array([1.0, np.nan, 1.0]), "groups contains NaN"),
        ([2, -1, 1], S, None, "negative relevance labels"),
        ([], [], None, "empty"),
        ([], [], [], "empty"),
        # Text is refused, as scikit-learn's metrics refuse it, not read as numbers.
        (["2", "0", "1"], S, None, "y_true must hold numbers; got text \\(e.g. '2'\\)"),
        (Y, np.array(["0.3", "0.2", "0.1"]), None, "y_score must hold numbers; got text"),
        (np.array([2, None, 1], dtype=object), S, None, "y_true contains NaN"),
        (np.array([2, "0", 1], dtype=object), S, None, "y_true must hold numbers; got text \\(e.g. '0'\\)"),
        # Timestamps 1 ns apart: numpy reads them as float64 counts, which tie
        # (or reverse) past 2**53; refused, not ranked by rounded values.
        (Y, np.array([3, 2, 1], dtype="datetime64[ns]"), None, "y_score must hold numbers; got datetime64"),
        (Y, np.array([1, 2, 3], dtype="timedelta64[s]"), None, "y_score must hold numbers; got timedelta64"),
        (Y, np.array([2**53 + 2, 2**53 + 1, 2**53], dtype=np.int64), None, "y_score holds integers of magnitude 2\\*\\*53"),
        # Inputs numpy or scikit-learn would refuse without naming them.
        ([[2], [0, 1], [1]], S, None, "y_true must be 1-d, one value per row; got nested sequences of unequal"),
        (Y, [[0.3], [0.2, 0.1], [0.1]], None, "y_score must be 1-d, one value per row; got nested sequences"),
        (Y, np.array(S) + 1j, None, "y_score must hold real numbers; got complex values"),
    ],
)
def test_bad_input(func, y_true, y_score, groups, match):
    with pytest.raises(ValueError, match=match):
        func(y_true, y_score, groups=groups)


@pytest.mark.parametrize("func", [ndcg_score, map_score, ndcg_per_query, ap_per_query])
def test_integer_scores_beyond_2_53_rank_exactly_while_float64_keeps_them_apart(func):
    """Integers past 2**53 that float64 still holds apart rank as they are
    (rounding keeps their order): only a tie made by rounding is refused."""
    big = np.array([2**62, 2**60, 2**61], dtype=np.int64)
    np.testing.assert_array_equal(np.asarray(func(Y, big)), np.asarray(func(Y, np.array([3.0, 1.0, 2.0]))))


@pytest.mark.parametrize("func", [ndcg_score, map_score, ndcg_per_query, ap_per_query])
def test_text_in_a_pandas_series_is_refused_as_in_an_array(func):
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="y_true must hold numbers; got text"):
        func(pd.Series(["2", "0", "1"]), S)
    with pytest.raises(ValueError, match="y_score must hold numbers; got text"):
        func(Y, pd.Series(["0.3", "0.2", "0.1"], dtype=object))


@pytest.mark.parametrize("func", [ndcg_score, map_score])
@pytest.mark.parametrize(
    "weights",
    [["a", "a", "a"], [{"w": 1}] * 3, [[1.0], 1.0, 1.0]],
    ids=["text", "dicts", "ragged"],
)
def test_weights_that_are_not_numbers_are_named_in_the_error(func, weights):
    # numpy's own complaint ("could not convert string to float: 'a'",
    # "float() argument must be ... not 'dict'", a TypeError) named no input:
    # y_true, y_score and groups are all converted too.
    with pytest.raises(ValueError, match="^sample_weight must hold one number per row"):
        func(Y, S, groups=[0, 0, 0], sample_weight=weights)


@pytest.mark.parametrize("func", NDCG_FUNCTIONS)
def test_labels_above_30_need_linear_gain(func):
    with pytest.raises(ValueError, match="at most 30"):
        func([31, 0, 1], S)
    with pytest.raises(ValueError, match="at most 30"):
        func([30.5, 0, 1], S, gain="exponential")
    linear = func([31, 0, 1], S, gain="linear")
    exponential = func([30, 0, 1], S)
    for result in (linear, exponential):
        values = np.atleast_1d(result if np.isscalar(result) else result[1])
        assert np.all(np.isfinite(values)) and np.all((0 < values) & (values <= 1))
    # MAP has no gain, so it takes any label: relevant at ranks 1 and 3
    assert map_score([31, 0, 1], S) == pytest.approx((1 + 2 / 3) / 2, abs=TOL)


def _values(result):
    """The value(s) of a mean (a float) or a per-query function ((ids, values))."""
    return np.atleast_1d(result if np.isscalar(result) else result[1])


@pytest.mark.parametrize("func", NDCG_FUNCTIONS)
@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_subnormal_labels_are_refused_as_gains(func, gain):
    # 5e-324 as a linear gain: the ideal DCG loses its digits and NDCG came
    # out as 1.0 where ~0.96 is right.
    with pytest.raises(ValueError, match="as small as 4.94066e-324, below the smallest normal"):
        func([5e-324, 0, 5e-324], S, gain=gain)
    tiny = np.finfo(np.float64).tiny  # the smallest label allowed: exact gains
    np.testing.assert_allclose(
        _values(func([tiny, 0, 2 * tiny], S, gain="linear")),
        _values(func([1, 0, 2], S, gain="linear")), rtol=1e-12,
    )
    # MAP only asks whether a label is > 0
    assert map_score([5e-324, 0, 5e-324], S) == map_score([1, 0, 1], S)


@pytest.mark.parametrize("func", [map_score, ap_per_query])
def test_map_takes_any_finite_positive_label(func):
    """MAP only asks whether a label is > 0 and sums no labels, so labels
    too large to sum as gains (1e308 over 3 rows) are still relevant
    documents, as the docstring promises (finite and >= 0)."""
    y_huge = [1e308, 0.0, np.finfo(np.float64).max]
    np.testing.assert_array_equal(_values(func(y_huge, S)), _values(func([1, 0, 1], S)))


@pytest.mark.parametrize("func", [*ALL_FUNCTIONS, rank_within_groups])
def test_two_column_input_is_named_in_the_error(func):
    two_columns = np.c_[S, S]
    if func is rank_within_groups:
        with pytest.raises(ValueError, match=r"scores must be 1-d.*shape \(3, 2\)"):
            func(two_columns, [1, 1, 1])
        return
    with pytest.raises(ValueError, match=r"y_score must be 1-d.*shape \(3, 2\)"):
        func(Y, two_columns)
    with pytest.raises(ValueError, match=r"y_true must be 1-d"):
        func(np.c_[Y, Y], S)
    np.testing.assert_array_equal(_values(func(np.c_[Y], np.c_[S])), _values(func(Y, S)))  # one column is fine


@pytest.mark.parametrize("func", ALL_FUNCTIONS)
@pytest.mark.parametrize("k", [0, -1])
def test_k_must_be_positive(func, k):
    with pytest.raises(ValueError, match="'k' parameter"):
        func(Y, S, k=k)


@pytest.mark.parametrize("func", NDCG_FUNCTIONS)
def test_unknown_gain(func):
    with pytest.raises(ValueError, match="'gain' parameter"):
        func(Y, S, gain="log")


@pytest.mark.parametrize("func", [ndcg_score, map_score])
def test_nothing_to_average(func):
    with pytest.raises(ValueError, match="No query has a relevant document"):
        func([0, 0, 0, 0], [1, 2, 3, 4], groups=[1, 1, 2, 2], empty_query_score=None)


@pytest.mark.parametrize("func", [ndcg_per_query, ap_per_query])
def test_per_query_all_empty_left_out(func):
    ids, values = func([0, 0, 0, 0], [1, 2, 3, 4], groups=[1, 1, 2, 2], empty_query_score=None)
    assert len(ids) == 0 and len(values) == 0


@pytest.mark.parametrize("func", ALL_FUNCTIONS)
def test_k_beyond_int64(func):
    # BUG: validation accepts any int >= 1, but a k that does not fit in an
    # int64 reaches the Numba kernel and raises OverflowError ("int too big
    # to convert") instead of meaning "the whole list" (or a ValueError).
    expected = func(Y, S, k=sys.maxsize)  # fits in an int64: the whole list
    try:
        result = func(Y, S, k=2**64)
    except ValueError:
        return
    if isinstance(result, tuple):
        result, expected = result[1], expected[1]
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("ignore_ties", [False, True])
def test_huge_linear_labels_do_not_give_nan(ignore_ties):
    # BUG: labels are only bounded for exponential gain; with linear gain two
    # labels near 1e308 overflow the DCG sums to inf and NDCG becomes
    # inf / inf = NaN. It should return a value in [0, 1] (or raise).
    y = [1.7e308, 1.7e308, 1.0]
    s = [1.0, 1.0, 3.0]
    try:
        value = ndcg_score(y, s, gain="linear", ignore_ties=ignore_ties)
    except ValueError:
        return
    assert 0.0 <= value <= 1.0, value


# --------------------------------------------------------------------------
# 8. Numerical extremes


def _extreme_cases():
    tiny = np.nextafter(0.0, 1.0)  # the smallest subnormal
    above_one = np.nextafter(1.0, 2.0)
    yield "near 1e300", [1e300, 1e300, 9.99e299, -1e300, 1.7e308, -1.7e308]
    yield "1e-300 apart", [0.0, 1e-300, 2e-300, 1e-300, -1e-300, 3e-300]
    yield "subnormal", [0.0, tiny, 2 * tiny, tiny, -tiny, 3 * tiny]
    yield "adjacent floats", [1.0, above_one, np.nextafter(above_one, 2.0), above_one,
                              np.nextafter(1.0, 0.0), 2.0]
    yield "signed zeros tie", [0.0, -0.0, 1.0, 0.5, -1.0, 2.0]


# The small-integer scores that rank exactly like each extreme case.
_EQUIVALENT = {
    "near 1e300": [3, 3, 2, 1, 4, 0],
    "1e-300 apart": [1, 2, 3, 2, 0, 4],
    "subnormal": [1, 2, 3, 2, 0, 4],
    "adjacent floats": [1, 2, 3, 2, 0, 4],
    "signed zeros tie": [1, 1, 3, 2, 0, 4],
}


EXTREME_CASES = list(_extreme_cases())


@pytest.mark.parametrize("case,scores", EXTREME_CASES, ids=[case for case, _ in EXTREME_CASES])
@pytest.mark.parametrize("name", METRIC_NAMES)
def test_extreme_scores_rank_like_small_ones(name, case, scores):
    y = np.array([3.0, 0.0, 1.0, 2.0, 0.0, 1.0])
    equivalent = np.array(_EQUIVALENT[case], dtype=float)
    for k in K_VALUES:
        for ignore_ties in (False, True):
            kw = dict(k=k, ignore_ties=ignore_ties)
            value, _, _ = _ours(name, y, np.array(scores), **kw)
            expected, _, _ = _ours(name, y, equivalent, **kw)
            assert math.isfinite(value)
            assert value == expected
            ref_value, _, _ = _reference(name, y, scores, **kw)
            assert value == pytest.approx(ref_value, abs=TOL)


@pytest.mark.parametrize("ignore_ties", [False, True])
def test_labels_up_to_30_exponential(ignore_ties):
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 8, 30)
    g = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.integers(0, 31, len(g)).astype(float)
    y[rng.random(len(g)) < 0.3] = 30.0
    s = rng.integers(0, 4, len(g)).astype(float)
    for k in K_VALUES:
        kw = dict(k=k, ignore_ties=ignore_ties)
        mean, _, values = _ours("ndcg-exp", y, s, g, **kw)
        assert np.all(np.isfinite(values)) and math.isfinite(mean)
        assert np.all((values >= 0.0) & (values <= 1.0))
        _, _, ref_values = _reference("ndcg-exp", y, s, g, **kw)
        np.testing.assert_allclose(values, ref_values, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("k", [1, 5, 10, 64, 65, 200, None])
def test_long_queries_with_heavy_ties_match_sklearn(k):
    """Queries of up to 150 documents and 4 distinct scores: ties straddle
    the k-th rank, which the top-k selection must complete by a scan."""
    rng = np.random.RandomState(11)
    sizes = rng.randint(2, 151, size=40)
    groups = np.repeat(np.arange(40), sizes)
    y_true = rng.randint(0, 5, size=len(groups)).astype(float)
    y_score = rng.randint(0, 4, size=len(groups)).astype(float)
    ids, ours = ndcg_per_query(
        y_true, y_score, groups=groups, k=k, gain="linear", empty_query_score=0.0
    )
    for q, value in zip(ids, ours):
        rows = groups == q
        expected = sklearn_ndcg_score([y_true[rows]], [y_score[rows]], k=k)
        assert value == pytest.approx(expected, abs=1e-12)


# Found by a mutation audit of the suite (2026-11-27).

def test_ap_of_a_long_balanced_query_matches_sklearn():
    """A query of 1000 relevant and 1000 irrelevant documents, untied
    scores: 1e6 pairs, so ap_whole_list sorts one set and binary-searches
    it (COUNT_PAIRS_PER_STEP) instead of counting every pair. Without ties
    sklearn's average_precision_score is AP: sums of 1000 terms in [0, 1],
    a few hundred ulp at most."""
    rng = np.random.default_rng(0)
    n = 2000
    y = np.zeros(n)
    y[rng.permutation(n)[: n // 2]] = 1.0
    s = rng.permutation(n).astype(float) + 0.5 * y  # distinct, informative
    s += rng.normal(scale=300.0, size=n)
    assert len(np.unique(s)) == n
    expected = average_precision_score(y, s)
    assert map_score(y, s, groups=np.zeros(n)) == pytest.approx(expected, rel=0, abs=1e-12)


@pytest.mark.parametrize("n_half", [1000, 1500])
def test_ap_of_a_long_query_with_one_mixed_tie(n_half):
    """n_half relevant documents ranked first (distinct scores) except the
    last one, which ties with the best irrelevant one; n_half irrelevant
    below. Both orders of the tie are equally likely, so AP = (n_half - 1
    + (1 + n_half / (n_half + 1)) / 2) / n_half. Long enough for the binary
    search path, which must notice the tie."""
    n = 2 * n_half
    y = np.r_[np.ones(n_half), np.zeros(n_half)]
    s = -np.arange(n, dtype=float)
    s[n_half] = s[n_half - 1]  # the last relevant ties with the first irrelevant
    expected = (n_half - 1 + (1.0 + n_half / (n_half + 1.0)) / 2.0) / n_half
    rows = np.random.default_rng(1).permutation(n)  # row order does not matter
    value = map_score(y[rows], s[rows], groups=np.zeros(n))
    assert value == pytest.approx(expected, rel=0, abs=1e-13)
    assert value < 1.0 - 1e-7  # the tie costs 1 / (4 n_half (n_half + 1))


@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_tied_equal_fractional_labels_never_score_above_one(gain):
    """A block of m tied documents of one fractional label: the tie-averaged
    gain (g + ... + g) / m can round an ulp above g (e.g. 0.05 linear, m = 3;
    0.02 exponential, m = 3), and the DCG an ulp above the ideal DCG. NDCG
    stays in [0, 1], within a few ulp of 1."""
    values = []
    for label in np.round(np.arange(0.01, 1.0, 0.01), 2):
        for m in range(2, 8):
            y = [label] * m + [0.0]
            s = [1.0] * m + [0.0]
            values.append(ndcg_per_query(y, s, groups=np.zeros(m + 1), gain=gain)[1][0])
            values.append(ndcg_score(y, s, groups=np.zeros(m + 1), gain=gain))
    values = np.array(values)
    assert np.all(values <= 1.0), values.max() - 1.0
    assert np.all(values >= 1.0 - 1e-15)


def test_exponential_gain_of_tiny_fractional_labels_keeps_its_precision():
    """2**y - 1 for y near 0 cancels catastrophically if computed as such
    (relative error ~1e-16 / y); expm1 keeps it to an ulp. Two documents
    in the wrong order: NDCG = (g1 + g2 d2) / (g2 + g1 d2), d2 = 1 / log2(3),
    g = expm1(y ln 2) exactly as math computes it."""
    y1, y2 = 1e-9, 3e-9
    g1, g2 = math.expm1(y1 * math.log(2.0)), math.expm1(y2 * math.log(2.0))
    d2 = 1.0 / math.log2(3.0)
    expected = (g1 + g2 * d2) / (g2 + g1 * d2)
    _, values = ndcg_per_query([y1, y2], [1.0, 0.0], groups=[0, 0], gain="exponential")
    assert values[0] == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("ignore_ties", [False, True])
def test_linear_labels_at_and_past_the_counted_range_match_reference(ignore_ties):
    """Whole labels below 32 read their gain from a table; 32 and above
    (linear gain only) must not (there is no entry 32)."""
    y = np.array([32.0, 0.0, 31.0, 33.0, 32.0, 5.0])
    s = np.array([0.1, 0.9, 0.5, 0.2, 0.2, 0.7])
    for k in (None, 2, 4):
        _, values = ndcg_per_query(y, s, groups=np.zeros(6), k=k, gain="linear", ignore_ties=ignore_ties)
        expected = ref.ndcg_query(list(y), list(s), k=k, gain="linear", ignore_ties=ignore_ties)
        assert values[0] == pytest.approx(expected, rel=0, abs=1e-12)
