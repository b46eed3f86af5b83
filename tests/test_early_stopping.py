"""Early stopping: held-out queries, the best epoch kept, patience, and the
"auto" values that follow the number of training rows."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils import check_random_state

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet import _network, _resolve
from sklearn_ranknet.metrics import ndcg_score

from ._data import FAST, RANKERS, SHORT_FIT, _initial_params, _small, _train_test, _twenty_queries, _widths

# Most fits here use few epochs on purpose; the convergence warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _validation_rows(ranker, qid, n_features):
    """Reproduce BaseRanker._split_validation: after the weight
    initialization, permutation(n_queries) of the sorted query ids, the
    first ceil(validation_fraction * n_queries) are held out."""
    rng = check_random_state(ranker.random_state)
    _network.init_params(n_features, _widths(ranker), ranker.activation, rng)
    query_ids = np.unique(qid)
    n_val = int(np.ceil(ranker.validation_fraction * len(query_ids)))
    held_out = query_ids[rng.permutation(len(query_ids))[:n_val]]
    return np.isin(qid, held_out)


@pytest.mark.parametrize("hidden", [(), (16,)], ids=["linear", "mlp16"])
@pytest.mark.parametrize("cls", RANKERS)
def test_early_stopping_holds_out_queries_and_keeps_the_best(cls, hidden):
    X, y, qid, _, _, _ = _train_test()
    ranker = cls(
        hidden_layer_sizes=hidden, early_stopping=True, validation_fraction=0.25, n_iter_no_change=5,
        learning_rate_init=0.05, max_iter=200, random_state=0, **FAST,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # it stops, not runs out
        ranker.fit(X, y, groups=qid)
    scores = ranker.validation_scores_
    assert len(scores) == ranker.n_iter_ == len(ranker.loss_curve_)
    assert ranker.n_iter_ < 200
    assert ranker.n_iter_ >= ranker.n_iter_no_change + 1
    assert ranker.best_validation_score_ == max(scores)
    assert np.argmax(scores) < len(scores) - 1  # the last epoch is not the best: weights were restored

    # The returned weights are the best epoch's, measured on whole held-out queries.
    val = _validation_rows(ranker, qid, ranker.coefs_[0].shape[0])  # one row per network input
    assert 0 < len(np.unique(qid[val])) == int(np.ceil(0.25 * len(np.unique(qid))))
    recomputed = ndcg_score(y[val], ranker.predict(X[val]), groups=qid[val], k=10)
    assert recomputed == pytest.approx(ranker.best_validation_score_, rel=0, abs=1e-12)


def test_early_stopping_needs_several_queries():
    X, y, _ = _small(3)
    for groups in (np.zeros(len(y)), None):
        ranker = LambdaRankRanker(early_stopping=True, max_iter=3, **FAST)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # groups=None warns too
            with pytest.raises(ValueError, match=r"early_stopping.*only 1 query.*validation_fraction"):
                ranker.fit(X, y, groups=groups)
    # Too few queries for the validation fraction is the same error.
    ranker = LambdaRankRanker(early_stopping=True, validation_fraction=0.6, max_iter=3, **FAST)
    with pytest.raises(ValueError, match="only 2 queries"):
        ranker.fit(X[:10], y[:10], groups=np.r_[np.zeros(5), np.ones(5)])


@pytest.mark.parametrize("cls", RANKERS)
def test_auto_early_stopping_follows_the_number_of_rows(cls, monkeypatch):

    X, y, qid = _small(20)
    kwargs = dict(early_stopping="auto", hidden_layer_sizes=(), max_iter=2, random_state=0, **FAST)
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y) + 1)
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    assert cls(**kwargs).fit(X, y, groups=qid).validation_scores_ is None
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y))
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    ranker = cls(**kwargs).fit(X, y, groups=qid)
    assert len(ranker.validation_scores_) == ranker.n_iter_ == 2
    # partial_fit never holds queries out.
    assert cls(**kwargs).partial_fit(X, y, groups=qid).validation_scores_ is None
    # Nor does "auto" when too few queries would be held out: no error.
    few = np.isin(qid, np.unique(qid)[:10])  # 10 queries: one to hold out
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", 1)
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    assert cls(**kwargs).fit(X[few], y[few], groups=qid[few]).validation_scores_ is None


@pytest.mark.parametrize("cls", [RankNetRanker, ListNetRanker])
def test_lbfgs_refuses_early_stopping_but_auto_is_off(cls):
    X, y, qid = _small(10)
    with pytest.raises(ValueError, match="early_stopping needs a stochastic solver"):
        cls(solver="lbfgs", early_stopping=True, max_iter=2).fit(X, y, groups=qid)
    ranker = cls(solver="lbfgs", early_stopping="auto", max_iter=2).fit(X, y, groups=qid)
    assert ranker.validation_scores_ is None


def _stuck_validation_problem(relevant_ranked_first):
    """20 queries of 12 documents on one feature x, one relevant document
    each, placed first or last by the initial linear model. With a step size
    of 1e-12 the ranking never changes, so validation NDCG@10 stays at 1.0
    (relevant first) or at exactly 0.0 (relevant at rank 12)."""
    n_queries, n_docs = 20, 12
    kwargs = dict(max_iter=60, learning_rate_init=1e-12, early_stopping=True, n_iter_no_change=3,
                  random_state=0, feature_scaling="standard", **FAST)  # scores linear in x
    ranker = LambdaRankRanker(**kwargs)
    w = _initial_params(ranker, 1)[0][0][0, 0]
    x = np.arange(n_docs, dtype=float)
    relevant = np.argmax(w * x) if relevant_ranked_first else np.argmin(w * x)
    X = np.tile(x, n_queries)[:, None]
    y = np.tile(np.arange(n_docs) == relevant, n_queries).astype(float)
    qid = np.repeat(np.arange(n_queries), n_docs)
    return ranker, X, y, qid


def test_early_stopping_patience():
    ranker, X, y, qid = _stuck_validation_problem(relevant_ranked_first=True)
    ranker.fit(X, y, groups=qid)
    assert ranker.validation_scores_ == [1.0] * 5
    # epoch 1 sets the best; epochs 2..5 do not improve: 4 > n_iter_no_change=3
    assert ranker.n_iter_ == 5 and ranker.best_validation_score_ == 1.0


@pytest.mark.parametrize("cls", RANKERS)
def test_auto_patience_follows_the_training_rows(cls, monkeypatch):
    # n_iter_no_change="auto": AUTO_PATIENCE epochs below
    # AUTO_PATIENCE_LARGE_ROWS training rows, AUTO_PATIENCE_LARGE from there.
    # A huge tol: epoch 1 sets the best and no later epoch improves, so a fit
    # runs patience + 2 epochs.

    X, y, qid = _small(20)
    kwargs = dict(tol=1e9, max_iter=50, hidden_layer_sizes=(), random_state=0, **FAST)
    assert cls().n_iter_no_change == "auto"
    assert _resolve.PATIENCE_LARGE != _resolve.PATIENCE
    monkeypatch.setattr(_resolve, "PATIENCE_LARGE_ROWS", len(y) + 1)
    assert cls(**kwargs).fit(X, y, groups=qid).n_iter_ == _resolve.PATIENCE + 2
    monkeypatch.setattr(_resolve, "PATIENCE_LARGE_ROWS", len(y))
    assert cls(**kwargs).fit(X, y, groups=qid).n_iter_ == _resolve.PATIENCE_LARGE + 2
    # An explicit patience is kept whatever the size.
    assert cls(n_iter_no_change=4, **kwargs).fit(X, y, groups=qid).n_iter_ == 6


def test_auto_width_follows_the_training_rows(monkeypatch):
    # LambdaRankRanker's hidden_layer_sizes="auto": the small-data width
    # below AUTO_EARLY_STOPPING_ROWS training rows, the large-data one from
    # there and in partial_fit; warm_start and partial_fit keep the fitted one.

    def widths(ranker):
        return tuple(c.shape[1] for c in ranker.coefs_[:-1])

    X, y, qid = _small(20)
    small, large = LambdaRankRanker._AUTO.hidden_layer_sizes
    assert LambdaRankRanker().hidden_layer_sizes == "auto" and small != large
    kwargs = dict(max_iter=1, early_stopping=False, random_state=0, **FAST)
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y) + 1)
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    ranker = LambdaRankRanker(**kwargs).fit(X, y, groups=qid)
    assert widths(ranker) == small
    assert widths(LambdaRankRanker(**kwargs).partial_fit(X, y, groups=qid)) == large
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y))
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    assert widths(LambdaRankRanker(**kwargs).fit(X, y, groups=qid)) == large
    # Continued fits keep the network they have, whatever the rows now say.
    ranker.set_params(warm_start=True).fit(X, y, groups=qid)
    assert widths(ranker) == small
    assert widths(ranker.partial_fit(X, y, groups=qid)) == small
    # Only LambdaRank offers "auto"; a wrong string is refused by name.
    for ranker in (RankNetRanker(hidden_layer_sizes="auto"), LambdaRankRanker(hidden_layer_sizes="wide")):
        with pytest.raises(InvalidParameterError, match="hidden_layer_sizes"):
            ranker.fit(X, y, groups=qid)


@pytest.mark.parametrize("early_stopping", [False, True])
def test_auto_lambda_normalization_follows_the_training_rows(monkeypatch, early_stopping):
    # normalize_lambdas="auto" is on below AUTO_EARLY_STOPPING_ROWS training
    # rows, off from there and in partial_fit, and trains the model of the
    # value it resolves to (with early stopping, on the kept queries too).

    X, y, qid = _small(20)
    kwargs = dict(max_iter=3, early_stopping=early_stopping, validation_fraction=0.2, random_state=0, **FAST)

    def fitted(method="fit", **params):
        return getattr(LambdaRankRanker(**kwargs, **params), method)(X, y, groups=qid)

    assert LambdaRankRanker().normalize_lambdas == "auto"
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y) + 1)
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    auto, on, off = fitted(), fitted(normalize_lambdas=True), fitted(normalize_lambdas=False)
    assert auto.normalize_lambdas_ is on.normalize_lambdas_ is True and off.normalize_lambdas_ is False
    np.testing.assert_array_equal(auto.predict(X), on.predict(X))
    assert not np.array_equal(auto.predict(X), off.predict(X))
    assert fitted("partial_fit").normalize_lambdas_ is False
    assert fitted("partial_fit", normalize_lambdas=True).normalize_lambdas_ is True
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y))
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    large = fitted()  # the other large-data "auto" values too: compared at the same threshold
    assert large.normalize_lambdas_ is False
    np.testing.assert_array_equal(large.predict(X), fitted(normalize_lambdas=False).predict(X))


def test_early_stopping_patience_when_validation_score_is_zero():
    ranker, X, y, qid = _stuck_validation_problem(relevant_ranked_first=False)
    ranker.fit(X, y, groups=qid)
    assert ranker.best_validation_score_ == 0.0
    assert ranker.validation_scores_[:5] == [0.0] * 5
    assert ranker.n_iter_ == 5  # runs all 60 epochs instead


@pytest.mark.parametrize("cls", RANKERS)
def test_auto_early_stopping_never_holds_out_every_query(cls, monkeypatch):
    # validation_fraction=0.9 of 2 queries rounds up to both: "auto" must
    # leave early stopping off (one query at least is needed to train on).
    X, y, qid = _twenty_queries(n_queries=2)
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", 1)
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    ranker = cls(**SHORT_FIT, validation_fraction=0.9).fit(X, y, groups=qid)
    assert ranker.validation_scores_ is None
    assert ranker.n_iter_ == SHORT_FIT["max_iter"]
