"""Learning works: the rankers beat random and pointwise orderings on held-out
queries, each parameter reaches the objective it names, the training loop's
minibatches, steps and loss curve, and ``verbose`` output."""

import re

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet import _network, _training
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import map_score, ndcg_score

from ._data import FAST, RANKERS, SHORT_FIT, _random_map, _random_ndcg, _small, _train_test, _twenty_queries

# Most fits here use few epochs on purpose; the convergence warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.mark.parametrize("hidden", [(), (16,)], ids=["linear", "mlp16"])
@pytest.mark.parametrize("cls", RANKERS)
def test_rankers_learn_and_generalize(cls, hidden):
    X_train, y_train, q_train, X_test, y_test, q_test = _train_test()
    ranker = cls(hidden_layer_sizes=hidden, learning_rate_init=0.01, max_iter=30, random_state=0, **FAST)
    ranker.fit(X_train, y_train, groups=q_train)

    test_ndcg = ranker.score(X_test, y_test, groups=q_test)
    assert test_ndcg == pytest.approx(ndcg_score(y_test, ranker.predict(X_test), groups=q_test, k=10))
    random_ndcg = _random_ndcg(y_test, q_test)  # about 0.58
    assert test_ndcg > random_ndcg + 0.15

    if cls is LambdaRankRanker:
        ridge = Ridge().fit(X_train, y_train)  # pointwise regression on the labels
        ridge_ndcg = ndcg_score(y_test, ridge.predict(X_test), groups=q_test, k=10)  # about 0.82
        assert test_ndcg >= ridge_ndcg - 0.02

    loss = np.asarray(ranker.loss_curve_)
    assert len(loss) == ranker.n_iter_ <= 30
    assert np.isfinite(loss).all()
    assert loss[-1] < loss[0]


# ----------------------------------------------------------------------------
# What each parameter changes


@pytest.mark.parametrize(
    "cls, params",
    [
        (LambdaRankRanker, dict(metric="map")),
        (LambdaRankRanker, dict(metric="map", k=5)),
        (LambdaRankRanker, dict(k=5)),
        (LambdaRankRanker, dict(gain="linear", activation="tanh", hidden_layer_sizes=(8,))),
        (RankNetRanker, dict(solver="sgd")),
        (RankNetRanker, dict(solver="sgd", hidden_layer_sizes=(8,), activation="logistic", learning_rate_init=0.1)),
        (RankNetRanker, dict(solver="lbfgs")),
    ],
)
def test_other_configurations_fit_and_beat_random(cls, params):
    X_train, y_train, q_train, X_test, y_test, q_test = _train_test()
    ranker = cls(**{"learning_rate_init": 0.01, "max_iter": 20, "random_state": 0, **FAST, **params})
    ranker.fit(X_train, y_train, groups=q_train)
    scores = ranker.predict(X_test)
    assert np.isfinite(scores).all()
    assert ranker.score(X_test, y_test, groups=q_test) > _random_ndcg(y_test, q_test) + 0.1  # random ~0.58
    assert map_score(y_test, scores, groups=q_test) > _random_map(y_test, q_test) + 0.03  # random ~0.86
    assert ranker.loss_curve_[-1] < ranker.loss_curve_[0]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_k_beyond_any_query_is_all_pairs_even_past_int64():
    """k larger than the longest query means every pair, however large the
    int (the metrics cap it the same way); it once overflowed int64."""
    X, y, qid = make_ranking(12, max_docs=15, random_state=0)
    params = dict(hidden_layer_sizes=(), max_iter=3, random_state=0)
    every_pair = LambdaRankRanker(k=None, **params).fit(X, y, groups=qid)
    for k in (15, 10**30):
        capped = LambdaRankRanker(k=k, **params).fit(X, y, groups=qid)
        np.testing.assert_array_equal(capped.coefs_[0], every_pair.coefs_[0])


def test_listnet_trains_with_its_gain():
    # gain="linear" on labels y is gain="exponential" on labels log2(y + 1)
    # (2**log2(y + 1) - 1 = y up to one rounding): the same model up to
    # rounding amplified over a few steps; exponential gain on y is another.
    X, y, qid = _twenty_queries()
    quick = dict(**SHORT_FIT, early_stopping=False)
    linear = ListNetRanker(gain="linear", **quick).fit(X, y, groups=qid)
    exponential_of_log = ListNetRanker(gain="exponential", **quick).fit(X, np.log2(y + 1.0), groups=qid)
    exponential = ListNetRanker(gain="exponential", **quick).fit(X, y, groups=qid)
    for a, b in zip(linear.coefs_, exponential_of_log.coefs_):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    assert any(not np.allclose(a, b, rtol=1e-3) for a, b in zip(linear.coefs_, exponential.coefs_))


@pytest.mark.parametrize("cls", RANKERS)
def test_sigma_reaches_the_objective(cls):
    X, y, qid = _twenty_queries()
    quick = dict(**SHORT_FIT, early_stopping=False)
    a = cls(sigma=0.5, **quick).fit(X, y, groups=qid)
    b = cls(sigma=3.0, **quick).fit(X, y, groups=qid)
    assert any(not np.allclose(p, q, rtol=1e-3) for p, q in zip(a.coefs_, b.coefs_))


# ----------------------------------------------------------------------------
# The training loop: minibatches, steps, the loss curve


@pytest.mark.parametrize("solver", ["adam", "sgd"])
@pytest.mark.parametrize("Ranker", RANKERS)
def test_minibatch_steps_never_move_the_output_intercept(Ranker, solver):
    """Every ranking cost is invariant to one shift of all scores, so the
    output intercept's true gradient is 0; the steps keep it exactly at its
    initial value instead of following rounding noise (which Adam would
    blow up to full-size steps)."""
    X, y, qid = _small(20, max_docs=12)
    ranker = Ranker(hidden_layer_sizes=(4,), solver=solver, batch_size=4, random_state=0, n_jobs=1)
    ranker.partial_fit(X, y, groups=qid)
    first = ranker.intercepts_[-1].copy()
    for _ in range(3):
        ranker.partial_fit(X, y, groups=qid)
    np.testing.assert_array_equal(ranker.intercepts_[-1], first)
    fitted = Ranker(hidden_layer_sizes=(4,), solver=solver, batch_size=4, max_iter=4, random_state=0,
                    n_jobs=1).fit(X, y, groups=qid)
    once = Ranker(hidden_layer_sizes=(4,), solver=solver, batch_size=4, max_iter=1, random_state=0,
                  n_jobs=1).fit(X, y, groups=qid)
    np.testing.assert_array_equal(fitted.intercepts_[-1], once.intercepts_[-1])
    assert not np.array_equal(fitted.coefs_[-1], once.coefs_[-1])  # the rest did train


@pytest.mark.parametrize("Ranker", RANKERS)
def test_each_epoch_visits_every_query_once_in_a_new_random_order(Ranker, monkeypatch):
    """Minibatches are drawn from a fresh permutation of the training
    queries every epoch, not in the same (or the input) order."""
    seen = []
    step = _training._step

    def recording_step(model, state, train, positions, queries, offsets):
        seen.append(np.array(queries))
        return step(model, state, train, positions, queries, offsets)

    monkeypatch.setattr(_training, "_step", recording_step)
    X, y, qid = _small(20, max_docs=12)
    n_epochs, batch_size = 3, 4
    Ranker(hidden_layer_sizes=(), batch_size=batch_size, max_iter=n_epochs, early_stopping=False,
           n_iter_no_change=50, random_state=0, n_jobs=1).fit(X, y, groups=qid)
    steps_per_epoch = 20 // batch_size
    assert len(seen) == n_epochs * steps_per_epoch
    epochs = [np.concatenate(seen[e * steps_per_epoch:(e + 1) * steps_per_epoch]) for e in range(n_epochs)]
    for order in epochs:
        np.testing.assert_array_equal(np.sort(order), np.arange(20))  # every query once
    assert not np.array_equal(epochs[0], np.arange(20))
    assert all(not np.array_equal(a, b) for a, b in zip(epochs[:-1], epochs[1:]))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_loss_is_that_of_the_last_fit():
    """loss_ is the last entry of loss_curve_ whatever the solver, and a
    refit with another solver does not keep the L-BFGS fit's value."""
    X, y, qid = _small(10)
    ranker = RankNetRanker(hidden_layer_sizes=(4,), solver="lbfgs", max_iter=5, random_state=0, **FAST)
    ranker.fit(X, y, groups=qid)
    assert ranker.loss_ == pytest.approx(ranker.loss_curve_[-1], rel=1e-12)
    ranker.set_params(solver="adam").fit(X, y, groups=qid)
    assert ranker.loss_ == ranker.loss_curve_[-1]


@pytest.mark.parametrize("over", ["rows", "pairs", "both"])
def test_the_loss_sample_is_whole_queries_within_both_budgets(over, monkeypatch):
    """Directly: the queries loss_curve_ is read on hold at most
    LOSS_SAMPLE_ROWS rows and LOSS_SAMPLE_PAIRS pairs, whichever of the two
    the training queries exceed, and are whole queries of the set."""
    X, y, qid = _small(40, max_docs=20)
    make_objective = RankNetRanker()._objective_factory(None)
    data = _training.TrainingSet.from_input(X, y, qid, make_objective)
    work = data.objective.query_work
    sizes, pairs = np.diff(data.offsets), work(data.offsets)
    max_rows = sizes.sum() // 2 if over in ("rows", "both") else sizes.sum()
    max_pairs = pairs.sum() // 2 if over in ("pairs", "both") else pairs.sum()
    monkeypatch.setattr(_training, "LOSS_SAMPLE_ROWS", max_rows)
    monkeypatch.setattr(_training, "LOSS_SAMPLE_PAIRS", max_pairs)
    for seed in range(5):
        sample = _training._loss_sample(data, np.random.RandomState(seed), make_objective)
        assert 0 < sample.n_queries < data.n_queries
        assert np.diff(sample.offsets).sum() <= max_rows and work(sample.offsets).sum() <= max_pairs
        taken, rows_taken = np.unique(qid[sample.rows], return_counts=True)
        assert len(taken) == sample.n_queries
        np.testing.assert_array_equal(rows_taken, [np.sum(qid == q) for q in taken])  # whole queries


def test_a_query_longer_than_the_loss_budget_still_gives_a_loss(monkeypatch):
    """When no query fits the row budget, the loss is read on one whole
    query (over the budget), not on none: an empty sample made every entry
    of loss_curve_ the L2 penalty alone, or 0 / 0 under sample_weight."""
    monkeypatch.setattr(_training, "LOSS_SAMPLE_ROWS", 3)
    X, y, qid = _small(6, max_docs=15)
    assert np.unique(qid, return_counts=True)[1].min() > 3
    params = dict(hidden_layer_sizes=(), max_iter=3, random_state=0, **FAST)
    ranker = RankNetRanker(**params).fit(X, y, groups=qid)
    weighted = RankNetRanker(**params).fit(X, y, groups=qid, sample_weight=np.ones(len(y)))
    assert np.isfinite(weighted.loss_curve_).all()
    np.testing.assert_allclose(weighted.loss_curve_, ranker.loss_curve_, rtol=1e-12)
    # A query's RankNet cost is positive: the loss is more than the penalty.
    assert ranker.loss_curve_[-1] > _network.l2_penalty(ranker.coefs_, ranker._fit_state.l2) + 0.1


# ----------------------------------------------------------------------------
# verbose


_EPOCH_LINE = re.compile(r"^Epoch\s+(\d+)\s+loss (\S+)(?:\s+val NDCG@10 (\S+))?\s+(\d+\.\d+)s$")


@pytest.mark.parametrize("early_stopping", [True, False])
@pytest.mark.parametrize("cls", RANKERS)
def test_verbose_prints_epoch_loss_validation_and_time(cls, early_stopping, capsys):
    X, y, qid = _small(20)
    ranker = cls(
        verbose=True, early_stopping=early_stopping, validation_fraction=0.2, n_iter_no_change=2,
        max_iter=6, learning_rate_init=0.05, random_state=0, **FAST,
    ).fit(X, y, groups=qid)
    lines = capsys.readouterr().out.strip().splitlines()
    epoch_lines = [line for line in lines if line.startswith("Epoch")]
    assert len(epoch_lines) == ranker.n_iter_
    for i, line in enumerate(epoch_lines):
        match = _EPOCH_LINE.match(line)
        assert match, line
        epoch, loss, val, seconds = match.groups()
        assert int(epoch) == i + 1
        assert float(loss) == pytest.approx(ranker.loss_curve_[i], abs=1e-6)
        assert float(seconds) >= 0
        if early_stopping:
            assert float(val) == pytest.approx(ranker.validation_scores_[i], abs=1e-4)
        else:
            assert val is None
    others = [line for line in lines if not line.startswith("Epoch")]
    # Stopping early prints why; the sixth epoch may be both the last and
    # the one that runs out of patience.
    if ranker.n_iter_ < 6:
        assert others == ["No improvement for 2 epochs: stopping."]
    else:
        assert others in ([], ["No improvement for 2 epochs: stopping."])


def test_not_verbose_prints_nothing(capsys):
    X, y, qid = _small(10)
    RankNetRanker(max_iter=3, random_state=0, **FAST).fit(X, y, groups=qid)
    RankNetRanker(solver="lbfgs", max_iter=3, random_state=0, **FAST).fit(X, y, groups=qid)
    assert capsys.readouterr().out == ""


def test_verbose_lbfgs_prints_progress(capsys):
    X, y, qid = _small(10)
    RankNetRanker(solver="lbfgs", verbose=True, max_iter=3, random_state=0, **FAST).fit(X, y, groups=qid)
    assert "loss" in capsys.readouterr().out
