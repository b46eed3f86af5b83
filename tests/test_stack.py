"""Networks trained together (``_stack.py``): each network of a stack is the
fit it would be alone, given the same draws.

A stack shares one random stream, its first network's, for the minibatch
order, the validation split and the loss sample. Networks seeded alike and
drawing nothing else (no dropout, no input noise) therefore train exactly as
their single fits; what differs is only where the first layer's products are
computed (one product over all first layers instead of one per network),
which BLAS may round differently: the comparisons allow for that rounding
over a few epochs (``rtol`` far above float64's 1e-16 per operation, far below
any difference a wrong gradient, step or penalty would make).
"""

import copy
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet import _bagging, _jit, _stack
from sklearn_ranknet._stack import can_stack, fit_together
from sklearn_ranknet.datasets import make_ranking

from ._assertions import pretend_blas_had, record_map_blocks

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

RTOL, ATOL = 1e-7, 1e-9
#: Explicit values, so that nothing resolves differently between a stack and
#: a fit whose data differ in weights only.
EXPLICIT = dict(
    alpha=5.0, batch_size=8, learning_rate_init=3e-3, input_noise=0.0, ema_momentum=0.99,
    n_iter_no_change=5, hidden_layer_sizes=(16,),
)


def _data(n_queries=40, n_features=8, seed=0):
    return make_ranking(n_queries, n_features=n_features, n_informative=4, max_docs=12, random_state=seed)


def _trained_together(rankers, X, y, groups, sample_weight=None, counts=None):
    runs = []
    for ranker in rankers:
        runs.append(ranker._plan_new_fit(X, y, groups, sample_weight))
    assert can_stack(runs)
    fit_together(runs, counts)
    for ranker, run in zip(rankers, runs):
        ranker._publish(run.published_model, run.history, run.options.resolved)
    return rankers


def _tolerance(model):
    """(rtol, atol) within which a stack's network equals its single fit.

    The two differ only in the rounding of the first-layer products: the
    stack's product has another shape, so BLAS may sum in another order. In
    float64 that stays far below RTOL. In float32 (eps 1.2e-7) a sum over
    n inputs in another order differs by about sqrt(n) * eps relative, a few
    times that per step through the rest of the network, compounded over the
    t_ optimizer steps (a float64 X trains in float32 by default:
    ``precision_``)."""
    if model.precision_ != "float32":
        return RTOL, ATOL
    rtol = 4 * model.t_ * np.sqrt(model.coefs_[0].shape[0]) * np.finfo(np.float32).eps
    return rtol, rtol * max(float(np.abs(c).max()) for c in model.coefs_)


def _assert_same_model(together, alone, X):
    assert together.n_iter_ == alone.n_iter_
    rtol, atol = _tolerance(alone)
    np.testing.assert_allclose(together.loss_curve_, alone.loss_curve_, rtol=rtol)
    for a, b in zip(together.coefs_ + together.intercepts_, alone.coefs_ + alone.intercepts_):
        assert a.shape == b.shape and a.flags.c_contiguous
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    np.testing.assert_allclose(together.predict(X), alone.predict(X), rtol=rtol, atol=atol)


@pytest.mark.parametrize("make_ranker, form", [
    (lambda: LambdaRankRanker(), "dense"),
    (lambda: RankNetRanker(), "dense"),
    (lambda: ListNetRanker(), "dense"),
    (lambda: LambdaRankRanker(), "csr"),
    (lambda: LambdaRankRanker(feature_scaling=None), "csr"),
    (lambda: LambdaRankRanker(feature_scaling=None), "sparse"),
    (lambda: LambdaRankRanker(), "float32"),
    (lambda: LambdaRankRanker(hidden_layer_sizes=(12, 6), activation="tanh"), "dense"),
    (lambda: LambdaRankRanker(hidden_layer_sizes=(), feature_scaling="standard"), "dense"),
    (lambda: LambdaRankRanker(solver="sgd", learning_rate_init=0.01), "dense"),
    (lambda: LambdaRankRanker(early_stopping=True, validation_fraction=0.25), "dense"),
    (lambda: LambdaRankRanker(k=5, sigma=2.0, metric="map"), "dense"),
], ids=["lambdarank", "ranknet", "listnet", "csr", "csr-unscaled", "sparse-unscaled", "float32", "deep-tanh", "linear",
        "sgd", "early-stopping", "map-k5"])
def test_a_stack_of_one_is_the_single_fit(make_ranker, form):
    X, y, groups = _data()
    if form == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) < 0.8, 0.0, X))
    elif form == "sparse":  # stays sparse: the stacked products are sparse ones
        X = sp.csr_matrix(np.where(np.random.RandomState(0).rand(*X.shape) < 0.05, X, 0.0))
    elif form == "float32":
        X = X.astype(np.float32)
    ranker = make_ranker().set_params(max_iter=6, input_noise=0.0, random_state=3, n_jobs=1)
    alone = clone(ranker).fit(X, y, groups)
    (together,) = _trained_together([clone(ranker)], X, y, groups)
    _assert_same_model(together, alone, X)
    assert together.t_ == alone.t_
    assert together.coefs_[0].dtype == alone.coefs_[0].dtype


def test_networks_of_a_stack_are_their_fits_alone_on_its_draws():
    # Every per-network setting differs: width, depth, activation, solver,
    # step, penalty, objective options, max_iter (a network that stops
    # leaves the stack while the others go on) and the stopping rule. Each
    # network is compared with itself trained alone from the stream the
    # stack drew from (its lead's, after the lead's initialization).
    X, y, groups = _data()
    common = dict(input_noise=0.0, n_jobs=1)
    rankers = [
        LambdaRankRanker(max_iter=8, alpha=1.0, random_state=7, **common),
        LambdaRankRanker(max_iter=3, alpha=50.0, hidden_layer_sizes=(8,), random_state=8, **common),
        LambdaRankRanker(max_iter=8, learning_rate_init=0.01, k=3, sigma=0.5, activation="tanh",
                         random_state=9, **common),
        LambdaRankRanker(max_iter=5, hidden_layer_sizes=(6, 4), solver="sgd", random_state=10, **common),
        LambdaRankRanker(max_iter=8, tol=1e9, n_iter_no_change=1, random_state=11, **common),
    ]
    together = [clone(r) for r in rankers]
    runs = [r._plan_new_fit(X, y, groups) for r in together]
    stream = copy.deepcopy(runs[0].state.random_state)
    fit_together(runs)
    for ranker, run in zip(together, runs):
        ranker._publish(run.published_model, run.history, run.options.resolved)
    for ranker, stacked in zip(rankers, together):
        alone = clone(ranker)
        run = alone._plan_new_fit(X, y, groups)
        run.state.random_state = copy.deepcopy(stream)
        fit_together([run])  # a stack of one is the single fit (test above)
        alone._publish(run.model, run.history, run.options.resolved)
        _assert_same_model(stacked, alone, X)
    assert [r.n_iter_ for r in together] == [8, 3, 8, 5, 3]  # patience 1: two epochs without the (impossible) gain
    # The lead drew as its single fit does.
    _assert_same_model(together[0], clone(rankers[0]).fit(X, y, groups), X)


def test_query_multiplicities_weigh_queries_as_a_bootstrap_sample():
    # A query drawn c times counts c times: the stack's network equals a
    # single fit weighing each query by c, with the penalty of a sample of
    # sum(c) queries (a single fit counts the queries of positive weight).
    X, y, groups = _data()
    n_queries = len(np.unique(groups))
    counts = np.random.RandomState(0).poisson(1.0, n_queries)
    counts[:2] = 0
    params = dict(EXPLICIT, feature_scaling=None, max_iter=6, random_state=1, n_jobs=1)
    (together,) = _trained_together([LambdaRankRanker(**params)], X, y, groups, counts=[counts])
    row_weights = counts[np.searchsorted(np.unique(groups), groups)].astype(float)
    alpha = params["alpha"] * np.count_nonzero(counts) / counts.sum()
    alone = LambdaRankRanker(**dict(params, alpha=alpha)).fit(X, y, groups, sample_weight=row_weights)
    _assert_same_model(together, alone, X)


def test_random_networks_draw_their_own_dropout_and_share_the_noise():
    # With dropout and noise the networks are no longer their single fits
    # (the stream hands each its own seeds), but they stay distinct and
    # finite, and the lead network still is its single fit's twin when
    # alone in the stack.
    X, y, groups = _data()
    ranker = LambdaRankRanker(dropout=0.2, input_noise=0.5, max_iter=4, random_state=2, n_jobs=1)
    together = _trained_together([clone(ranker), clone(ranker).set_params(input_noise=1.0)], X, y, groups)
    first, second = (r.predict(X) for r in together)
    assert np.isfinite(first).all() and np.isfinite(second).all()
    assert not np.allclose(first, second)


def test_folded_sparse_inputs_and_lbfgs_do_not_stack():
    X, y, groups = _data()
    kept = np.random.RandomState(0).rand(*X.shape) < 0.05
    csr = sp.csr_matrix(np.where(kept, X, 0.0))  # sparse enough to stay sparse (stays_sparse)
    standard = LambdaRankRanker(feature_scaling="standard", max_iter=2)
    assert not can_stack([standard._plan_new_fit(csr, y, groups)])
    assert can_stack([standard._plan_new_fit(X, y, groups)])
    assert not can_stack([RankNetRanker(solver="lbfgs", max_iter=2)._plan_new_fit(X, y, groups)])
    runs = [LambdaRankRanker(batch_size=b, max_iter=2)._plan_new_fit(X, y, groups) for b in (8, 16)]
    assert not can_stack(runs)  # one minibatch order for all


# ----------------------------------------------------------------------------
# BaggingRanker trains its members together


def _spy(monkeypatch):
    calls = []

    def recording(runs, counts=None):
        calls.append((len(runs), counts))
        return fit_together(runs, counts)

    monkeypatch.setattr(_bagging, "fit_together", recording)
    return calls


def test_bagging_trains_its_members_in_one_pass(monkeypatch):
    X, y, groups = _data()
    calls = _spy(monkeypatch)
    template = LambdaRankRanker(max_iter=4, input_noise=0.0, n_jobs=1)
    bag = BaggingRanker(template, n_estimators=3, random_state=0).fit(X, y, groups)
    assert [n for n, _ in calls] == [3]
    # The first member draws the shared order from its own seed: it is the
    # seeded clone fitted alone.
    alone = clone(template).set_params(random_state=bag.estimators_[0].random_state).fit(X, y, groups)
    _assert_same_model(bag.estimators_[0], alone, X)
    members = [m.predict(X) for m in bag.estimators_]
    assert not np.allclose(members[0], members[1])
    np.testing.assert_allclose(bag.predict(X), np.mean(members, axis=0), rtol=1e-12)
    for member in bag.estimators_:
        assert member._fit_state.optimizer is None and member._fit_state.weight_average is None


def test_bagging_bootstrap_hands_the_stack_the_multiplicities_of_its_draws(monkeypatch):
    X, y, groups = _data(n_queries=20)
    sample_weight = np.where(groups == groups[0], 0.0, 1.0)  # never drawn
    calls = _spy(monkeypatch)
    bag = BaggingRanker(LambdaRankRanker(max_iter=2, n_jobs=1), n_estimators=4, bootstrap=True, random_state=0)
    bag.fit(X, y, groups, sample_weight=sample_weight)
    ((n_members, counts),) = calls
    assert n_members == 4
    first_query = np.searchsorted(np.unique(groups), groups[0])
    for c in counts:
        assert c.sum() == 19 and c[first_query] == 0  # one draw per query of positive weight
        assert c.max() >= 2  # 19 draws from 19 queries: some query repeats (19!/19**19 chance not)
    assert len({tuple(c) for c in counts}) == 4


def test_bagging_falls_back_to_one_fit_per_member(monkeypatch):
    X, y, groups = _data()
    calls = _spy(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bag = BaggingRanker(RankNetRanker(solver="lbfgs", max_iter=3), n_estimators=2, random_state=0)
        bag.fit(X, y, groups)
    assert calls == []  # L-BFGS fits are fitted one by one
    assert len(bag.estimators_) == 2 and np.isfinite(bag.predict(X)).all()


@pytest.mark.parametrize("form", ["dense", "csr", "noise"])
def test_stacked_products_share_the_threads_blas_had_and_no_bit_changes(form, monkeypatch):
    """Over ``SHARE_FROM_MULTIPLY_ADDS`` the stacked products of the steps
    and of the scoring go, in column blocks, to the threads BLAS had before
    the fit (here as if 3), and the models are the one-thread models to the
    bit: the blocks are fixed by the widths whatever the threads."""
    seen = record_map_blocks(monkeypatch, _stack)
    monkeypatch.setattr(_stack, "SHARE_FROM_MULTIPLY_ADDS", 0)
    monkeypatch.setattr(_stack, "MIN_COLUMN_BLOCK", 4)  # widths 16 + 8 + 16: several blocks
    monkeypatch.setattr(_jit, "cpu_count", lambda: 3)
    X, y, groups = _data()
    if form == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) < 0.8, 0.0, X))
    options = dict(input_noise=0.5, dropout=0.1) if form == "noise" else dict(input_noise=0.0)
    options.update(early_stopping=True, validation_fraction=0.25, batch_size=8)  # the stack scores too
    predictions = []
    for had in (1, 3):
        pretend_blas_had(monkeypatch, had)
        rankers = [
            LambdaRankRanker(max_iter=4, random_state=1, **options),
            LambdaRankRanker(max_iter=3, hidden_layer_sizes=(8,), random_state=2, **options),
            RankNetRanker(max_iter=4, random_state=3, **options),
        ]
        together = _trained_together(rankers, X, y, groups)
        predictions.append([r.predict(X) for r in together])
        assert {threads for n_blocks, threads in seen if n_blocks >= 2} == {had}
        seen.clear()
    for threaded, serial in zip(*predictions):
        np.testing.assert_array_equal(threaded, serial)


def test_small_stacks_stay_on_one_thread(monkeypatch):
    seen = record_map_blocks(monkeypatch, _stack)
    pretend_blas_had(monkeypatch, 2)
    X, y, groups = _data()  # 8 features, widths 16: far below the threshold
    _trained_together([LambdaRankRanker(max_iter=2, random_state=i) for i in range(3)], X, y, groups)
    assert seen and {threads for n_blocks, threads in seen} == {1}


@pytest.mark.parametrize("start, width, expected", [
    (0, 100, 1), (0, 511, 1), (0, 512, 2), (7, 640, 2), (0, 1023, 2), (0, 1024, 4), (3, 5000, 4),
])
def test_column_blocks_tile_the_columns_by_width_alone(start, width, expected):
    blocks = _stack._column_blocks(slice(start, start + width))
    assert len(blocks) == expected
    assert blocks[0].start == start and blocks[-1].stop == start + width
    assert all(a.stop == b.start for a, b in zip(blocks[:-1], blocks[1:]))
    sizes = [b.stop - b.start for b in blocks]
    assert max(sizes) - min(sizes) <= 1 and (expected == 1 or min(sizes) >= _stack.MIN_COLUMN_BLOCK)
