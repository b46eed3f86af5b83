"""Input forms: sparse and dense, pandas, any query ids in any order, float32
and float64 rows, extreme values, degenerate queries, and the "auto" values
that follow the size and form of the data."""

import copy
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _resolve
from sklearn_ranknet._resolve import DataShape, resolve
from sklearn_ranknet.datasets import make_ranking

from ._assertions import CSR_PATHS, assert_same_training, csr_with_duplicate_entries, read_csr_as
from ._data import FAST, RANKERS, SHORT_FIT, _initial_params, _random_ndcg, _small, _twenty_queries

# Most fits here use few epochs on purpose; the convergence warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


#: The tests that follow float64 arithmetic exactly (the initial weights
#: and the penalty's shrinkage) train in float64; "auto" would train these
#: float64 rows in float32 (tests/test_precision.py).
FLOAT64 = dict(precision="float64")


@pytest.mark.parametrize("csr_path", list(CSR_PATHS))
@pytest.mark.parametrize("hidden", [(), (6,)], ids=["linear", "mlp"])
@pytest.mark.parametrize("cls", RANKERS)
def test_sparse_input_gives_the_dense_model(cls, hidden, csr_path, monkeypatch):
    read_csr_as(monkeypatch, csr_path)
    X, y, qid = _small(15)
    X[np.random.RandomState(0).rand(*X.shape) < 0.7] = 0.0
    kwargs = dict(hidden_layer_sizes=hidden, max_iter=10, learning_rate_init=0.01, random_state=0, **FAST)
    dense = cls(**kwargs).fit(X, y, groups=qid)
    sparse = cls(**kwargs).fit(sp.csr_matrix(X), y, groups=qid)
    assert_same_training(sparse.predict(X), dense.predict(X))
    # One product per layer, no training: rounding of a few ulps per term,
    # far below 1e-10 of the largest score.
    scale = np.abs(dense.predict(X)).max()
    np.testing.assert_allclose(dense.predict(sp.csr_matrix(X)), dense.predict(X), rtol=0, atol=1e-10 * scale)
    assert sparse.score(sp.csr_array(X), y, groups=qid) == pytest.approx(dense.score(X, y, groups=qid), abs=1e-6)


@pytest.mark.parametrize("feature_scaling", ["piecewise", "standard", "log1p"])
def test_csr_with_duplicate_entries_is_the_matrix_it_sums_to(feature_scaling):
    """A CSR matrix that stores a column twice in a row means their sum; the
    input scaling reads stored values one by one, so it must see the sum."""
    X, y, qid = _small(15)
    X[np.random.RandomState(0).rand(*X.shape) < 0.7] = 0.0
    duplicated = csr_with_duplicate_entries(X)
    assert not duplicated.has_canonical_format
    np.testing.assert_allclose(duplicated.toarray(), X, rtol=1e-15)
    kwargs = dict(hidden_layer_sizes=(6,), max_iter=5, random_state=0, feature_scaling=feature_scaling, **FAST)
    dense = LambdaRankRanker(**kwargs).fit(X, y, groups=qid)
    from_duplicates = LambdaRankRanker(**kwargs).fit(duplicated, y, groups=qid)
    # 0.25 v + 0.75 v may differ from v by an ulp: the same training up to
    # rounding, not a model of other inputs.
    assert_same_training(from_duplicates.predict(X), dense.predict(X))
    assert_same_training(dense.predict(duplicated), dense.predict(X))
    assert not duplicated.has_canonical_format  # the caller's matrix is left as it was


@pytest.mark.parametrize("cls", RANKERS)
def test_dataframe_sets_feature_names(cls):
    X, y, qid = _small(10)
    columns = [f"feature_{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns)
    ranker = cls(max_iter=3, random_state=0, **FAST).fit(frame, pd.Series(y), groups=pd.Series(qid))
    np.testing.assert_array_equal(ranker.feature_names_in_, columns)
    assert ranker.n_features_in_ == X.shape[1]
    on_array = cls(max_iter=3, random_state=0, **FAST).fit(X, y, groups=qid)
    assert not hasattr(on_array, "feature_names_in_")
    # Same model up to BLAS round-off (the frame's values are Fortran-ordered).
    assert_same_training(ranker.predict(frame), on_array.predict(X))
    with pytest.raises(ValueError, match="feature names"):
        ranker.predict(frame.rename(columns={"feature_0": "other"}))


@pytest.mark.parametrize("cls", RANKERS)
def test_query_id_dtype_does_not_matter(cls):
    # 40 queries > the default batch of 32: minibatches are drawn from the
    # queries in sorted-id order, so ids that sort like the ints give the
    # very same model.
    X, y, qid = _small(40)
    kwargs = dict(hidden_layer_sizes=(5,), max_iter=8, learning_rate_init=0.01, random_state=0,
                  batch_size=len(np.unique(qid)), **FAST)
    ints = cls(**kwargs).fit(X, y, groups=qid).predict(X)
    for ids in (
        np.array([f"query-{q:03d}" for q in qid]),
        np.array([f"query-{q:03d}" for q in qid], dtype=object),
        qid.astype(float) * 0.5 - 3.0,
        list(qid + 10_000),
        np.array([b"q%03d" % q for q in qid]),
        pd.Series(pd.Categorical([f"c{q:03d}" for q in qid])),
        np.datetime64("2024-01-01") + qid.astype("timedelta64[D]"),
        pd.Series(list(zip(qid, ["x"] * len(qid)))).to_numpy(),  # tuples
    ):
        np.testing.assert_array_equal(cls(**kwargs).fit(X, y, groups=ids).predict(X), ints)


@pytest.mark.parametrize("cls", RANKERS)
def test_string_ids_sorting_differently_give_the_same_model_in_one_batch(cls):
    # str(q) sorts "10" before "2": the queries come in another order. With
    # one minibatch per epoch only the floating-point summation order changes.
    X, y, qid = _small(25)
    kwargs = dict(hidden_layer_sizes=(5,), max_iter=8, learning_rate_init=0.01, random_state=0,
                  batch_size=len(np.unique(qid)), **FAST)
    ints = cls(**kwargs).fit(X, y, groups=qid).predict(X)
    strings = cls(**kwargs).fit(X, y, groups=qid.astype(str)).predict(X)
    assert_same_training(strings, ints)


def _shuffle_keeping_ties(y, qid, rng):
    """A random row permutation that interleaves the queries and moves rows
    of different labels, but keeps rows with the same (query, label) in
    their input order."""
    perm = rng.permutation(len(y))
    key = qid.astype(np.int64) * 1000 + y.astype(np.int64)
    for value in np.unique(key):
        perm[key[perm] == value] = np.flatnonzero(key == value)
    return perm


@pytest.mark.parametrize("hidden", [(), (6,)], ids=["linear", "mlp"])
@pytest.mark.parametrize("cls", RANKERS)
def test_row_order_does_not_matter(cls, hidden):
    X, y, qid = _small(40)
    rng = np.random.RandomState(1)
    kwargs = dict(hidden_layer_sizes=hidden, max_iter=10, learning_rate_init=0.01, random_state=0, **FAST)
    reference = cls(**kwargs).fit(X, y, groups=qid).predict(X)

    # Rows are arranged by query id, then by descending label (stable), so a
    # shuffle that keeps equally labelled rows of a query in order arranges
    # to the very same training set: the model is bit-identical.
    perm = _shuffle_keeping_ties(y, qid, rng)
    assert not np.array_equal(perm, np.sort(perm))
    model = cls(**kwargs).fit(X[perm], y[perm], groups=qid[perm])
    np.testing.assert_array_equal(model.predict(X), reference)

    # Any shuffle: equally labelled rows of a query may swap places, which
    # changes nothing but the order of floating-point sums.
    perm = rng.permutation(len(y))
    model = cls(**kwargs).fit(X[perm], y[perm], groups=qid[perm])
    assert_same_training(model.predict(X), reference)


@pytest.mark.parametrize(
    "cls, params",
    [
        (RankNetRanker, dict(solver="lbfgs", max_iter=30)),
        (RankNetRanker, dict(solver="lbfgs", hidden_layer_sizes=(8,), max_iter=30)),
        (RankNetRanker, dict(max_iter=10)),
        (RankNetRanker, dict(solver="sgd", max_iter=10)),
        (LambdaRankRanker, dict(max_iter=10)),
        (LambdaRankRanker, dict(hidden_layer_sizes=(8,), max_iter=10)),
        (LambdaRankRanker, dict(metric="map", k=3, max_iter=10)),
    ],
)
def test_features_around_one_million(cls, params):
    X, y, qid = make_ranking(15, max_docs=15, random_state=0)
    X = 1e6 + 1e3 * X  # values ~1e6, spread ~1e3..1e5: score spreads far beyond exp's range
    ranker = cls(random_state=0, **FAST, **params).fit(X, y, groups=qid)
    scores = ranker.predict(X)
    assert np.isfinite(scores).all()
    assert all(np.isfinite(p).all() for p in ranker.coefs_ + ranker.intercepts_)
    assert np.isfinite(ranker.loss_curve_).all()
    assert 0.0 <= ranker.score(X, y, groups=qid) <= 1.0


def _degenerate_queries(rng, n_queries=8, size=4, n_features=4, cls=None):
    """Queries whose documents all share one label, plus single-document
    queries: no pair has different labels anywhere. For ListNet, whose
    target is the labels' distribution, the shared label is 0 (no target)."""
    qid = np.r_[np.repeat(np.arange(n_queries), size), np.arange(n_queries, 2 * n_queries)]
    shared = np.zeros(n_queries, dtype=int) if cls is ListNetRanker else rng.randint(0, 4, n_queries)
    y = np.r_[np.repeat(shared, size), rng.randint(0, 4, n_queries)]
    X = rng.normal(size=(len(y), n_features))
    return X, y, qid


@pytest.mark.parametrize("n_queries, size, method, expected_alpha", [
    (8, 4, "fit", 5.0),  # 40 rows
    (400, 25, "fit", 15.0),  # 10,400 rows
    (8, 4, "partial_fit", 15.0),  # a size not known in advance
])
def test_lambdarank_auto_alpha_follows_the_training_rows(n_queries, size, method, expected_alpha):
    # The degenerate queries' only gradient is the penalty's (see below), so
    # W <- (1 - lr * alpha / n_queries) W each epoch shows which alpha "auto"
    # took.
    X, y, qid = _degenerate_queries(np.random.RandomState(1), n_queries=n_queries, size=size)
    n_trained = len(np.unique(qid))
    lr, epochs = 1e-3, 2
    ranker = LambdaRankRanker(
        solver="sgd", momentum=0.0, learning_rate_init=lr, max_iter=epochs, hidden_layer_sizes=(3,),
        batch_size=n_trained, early_stopping=False, ema_momentum=0.0, input_noise=0.0, random_state=0,
        **FAST, **FLOAT64,
    )
    assert ranker.alpha == "auto"
    for _ in range(epochs if method == "partial_fit" else 1):
        getattr(ranker, method)(X, y, groups=qid)
    coefs, _ = _initial_params(ranker, ranker.coefs_[0].shape[0])
    for got, start in zip(ranker.coefs_, coefs):
        np.testing.assert_allclose(got, (1 - lr * expected_alpha / n_trained) ** epochs * start, rtol=1e-12)


SMALL_DATA_STEP = {LambdaRankRanker: 6e-3, ListNetRanker: 3e-3}


@pytest.mark.parametrize("cls", [LambdaRankRanker, ListNetRanker])
@pytest.mark.parametrize("n_queries, method, large, expected", [
    (100, "fit", False, SMALL_DATA_STEP), (100, "fit", True, 1e-3), (20, "partial_fit", False, 1e-3),
])
def test_auto_learning_rate_follows_the_size_of_the_training_data(cls, n_queries, method, large, expected,
                                                                  monkeypatch):
    """The degenerate queries' only gradient is the penalty's, so with plain
    SGD one step takes W <- (1 - step * alpha / n_queries) W: the weights
    show which step "auto" took. ``large``: the same queries counted as
    large data (both thresholds moved below them)."""
    if large:
        monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", 1)
        monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)
    if isinstance(expected, dict):
        expected = expected[cls]
    X, y, qid = _degenerate_queries(np.random.RandomState(1), n_queries=n_queries // 2, size=3, cls=cls)
    n_trained = len(np.unique(qid))
    assert n_trained == n_queries
    ranker = cls(
        solver="sgd", momentum=0.0, alpha=1.0, max_iter=1, hidden_layer_sizes=(3,), batch_size=n_trained,
        early_stopping=False, ema_momentum=0.0, input_noise=0.0, random_state=0, **FAST, **FLOAT64,
    )
    assert ranker.learning_rate_init == "auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("ignore", "(partial_)?fit found no query", UserWarning)
        getattr(ranker, method)(X, y, groups=qid)
    coefs, _ = _initial_params(ranker, ranker.coefs_[0].shape[0])
    for got, start in zip(ranker.coefs_, coefs):
        np.testing.assert_allclose(got, (1 - expected * 1.0 / n_trained) * start, rtol=1e-12)
    explicit = {**ranker.get_params(), "learning_rate_init": 0.5}
    assert resolve(explicit, ranker._AUTO, DataShape(10, 10), incremental=True).learning_rate_init == 0.5


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("n_queries", [10, 20, 40])
def test_default_fits_on_a_few_dozen_queries_end_without_a_warning(cls, n_queries):
    """With "auto"'s larger step below 100 queries, the default fits end on
    the stopping rule, not on max_iter (ListNet and LambdaRank warned on 10-30
    queries with the smaller one)."""
    X, y, qid = make_ranking(n_queries, random_state=n_queries)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranker = cls(random_state=0).fit(X, y, groups=qid)
    assert not caught, [str(w.message) for w in caught]
    assert ranker.n_iter_ < ranker.max_iter


@pytest.mark.parametrize(
    "cls, params",
    [
        (RankNetRanker, dict(solver="adam")),
        (RankNetRanker, dict(solver="lbfgs")),
        (LambdaRankRanker, dict(hidden_layer_sizes=(5,))),
        (LambdaRankRanker, dict(metric="map", k=2)),
    ],
)
def test_no_label_differing_pair_leaves_weights_unchanged_without_l2(cls, params):
    X, y, qid = _degenerate_queries(np.random.RandomState(0))
    ranker = cls(alpha=0.0, max_iter=5, random_state=0, **FAST, **FLOAT64, **params).fit(X, y, groups=qid)
    coefs, intercepts = _initial_params(ranker, ranker.coefs_[0].shape[0])  # network inputs
    for got, start in zip(ranker.coefs_ + ranker.intercepts_, coefs + intercepts):
        np.testing.assert_array_equal(got, start)
    assert np.all(np.asarray(ranker.loss_curve_) == 0.0)


@pytest.mark.parametrize("cls", RANKERS)
def test_no_label_differing_pair_only_shrinks_weights(cls):
    # Plain gradient descent (SGD without momentum), one minibatch per epoch:
    # the only gradient is (alpha / n_queries) * W (the penalty is weighed
    # against the sum of the query costs), so W <- (1 - lr * alpha / n) W
    # each epoch and the (unpenalized) intercepts do not move.
    X, y, qid = _degenerate_queries(np.random.RandomState(1), cls=cls)
    n_queries = len(np.unique(qid))
    lr, alpha, epochs = 0.1, 0.5 * n_queries, 4
    ranker = cls(
        solver="sgd", momentum=0.0, learning_rate_init=lr, alpha=alpha, max_iter=epochs,
        hidden_layer_sizes=(3,), ema_momentum=0.0, random_state=0, **FAST, **FLOAT64,
    ).fit(X, y, groups=qid)
    coefs, intercepts = _initial_params(ranker, ranker.coefs_[0].shape[0])  # network inputs
    for got, start in zip(ranker.coefs_, coefs):
        np.testing.assert_allclose(got, (1 - lr * alpha / n_queries) ** epochs * start, rtol=1e-12)
    for got, start in zip(ranker.intercepts_, intercepts):
        np.testing.assert_array_equal(got, start)


@pytest.mark.parametrize("cls", RANKERS)
def test_degenerate_queries_contribute_zero_gradient(cls):
    # Adding all-equal-label and single-document queries to a data set only
    # dilutes the minibatch mean (the gradient is divided by the number of
    # queries), so with plain gradient descent on one minibatch a step size
    # scaled by n_all / n_real gives the same model.
    X, y, qid = _small(12, seed=3)
    Xd, yd, qd = _degenerate_queries(np.random.RandomState(2), n_features=X.shape[1], cls=cls)
    n_real, n_all = len(np.unique(qid)), len(np.unique(qid)) + len(np.unique(qd))
    kwargs = dict(
        solver="sgd", momentum=0.0, alpha=0.0, max_iter=5, hidden_layer_sizes=(), sigma=1.0,
        random_state=0, feature_scaling=None,  # the added rows would move the statistics
        batch_size=n_all, **FAST,
    )
    real = cls(learning_rate_init=0.1, **kwargs).fit(X, y, groups=qid)
    mixed = cls(learning_rate_init=0.1 * n_all / n_real, **kwargs).fit(
        np.r_[X, Xd], np.r_[y, yd], groups=np.r_[qid, qd + 1000]
    )
    assert_same_training(mixed.predict(X), real.predict(X))
    assert mixed.score(X, y, groups=qid) > _random_ndcg(y, qid)


@pytest.mark.parametrize("feature_scaling", ["piecewise", "standard", "log1p", None])
def test_float32_rows_score_as_their_float64_values_on_a_float64_model(feature_scaling):
    # predict reads float32 rows as float64 (exactly) on a float64 model, so
    # they score bit for bit as the same values given in float64.
    X, y, qid = _twenty_queries()
    ranker = RankNetRanker(**SHORT_FIT, feature_scaling=feature_scaling).fit(X, y, groups=qid)
    X32 = (X * 1.37).astype(np.float32)
    np.testing.assert_array_equal(ranker.predict(X32), ranker.predict(X32.astype(np.float64)))


@pytest.mark.parametrize("feature_scaling", ["piecewise", "standard", None])
def test_partial_fit_reads_float64_rows_in_the_models_float32(feature_scaling):
    # "A model keeps the precision it was first fitted in": float64 rows
    # given to a float32 model train as those rows cast to float32.
    X, y, qid = _twenty_queries()
    model = RankNetRanker(**SHORT_FIT, feature_scaling=feature_scaling).fit(X.astype(np.float32), y, groups=qid)
    wide = copy.deepcopy(model).partial_fit(X, y, groups=qid)
    narrow = copy.deepcopy(model).partial_fit(X.astype(np.float32), y, groups=qid)
    for a, b in zip(wide.coefs_ + wide.intercepts_, narrow.coefs_ + narrow.intercepts_):
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, b)


def test_lambdarank_on_small_query_scaled_data_takes_ranknets_minibatch():
    # The docstring: on small data scaled within each query "auto" takes
    # RankNet's settings: 32 queries a minibatch (RankNet's "auto") and its
    # width (the step is the one of every small-data fit).
    assert LambdaRankRanker._AUTO.query_scaled["batch_size"] == RankNetRanker._AUTO.batch_size == 32
    assert LambdaRankRanker._AUTO.query_scaled["hidden_layer_sizes"] == RankNetRanker().hidden_layer_sizes
    assert "learning_rate_init" not in LambdaRankRanker._AUTO.query_scaled
    from tests.test_query_scaled import _fit, _letor_like

    X, y, qid = _letor_like(n_queries=120)
    one_epoch = dict(max_iter=1, random_state=0, early_stopping=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = _fit(LambdaRankRanker(**one_epoch), "fit", X, y, qid)
        explicit = _fit(LambdaRankRanker(batch_size=32, **one_epoch), "fit", X, y, qid)
    assert auto._fit_state.optimizer.t == explicit._fit_state.optimizer.t == -(-120 // 32)  # steps of one epoch
    np.testing.assert_array_equal(auto.predict(X), explicit.predict(X))
