"""The "auto" values: one resolver (sklearn_ranknet/_resolve.py), published
after fit as ``<parameter>_``, each the value that, passed explicitly, gives
the same fit."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _resolve
from sklearn_ranknet._resolve import LAMBDARANK, LISTNET, RANKNET, DataShape, auto_parameters, resolve
from sklearn_ranknet.datasets import make_ranking

from ._data import RANKERS

AUTO = {
    RankNetRanker: {"batch_size", "n_iter_no_change", "early_stopping", "input_noise", "ema_momentum", "precision"},
    ListNetRanker: {"batch_size", "learning_rate_init", "n_iter_no_change", "early_stopping", "input_noise",
                    "ema_momentum", "precision"},
    LambdaRankRanker: {"hidden_layer_sizes", "alpha", "batch_size", "learning_rate_init", "n_iter_no_change",
                       "early_stopping", "input_noise", "ema_momentum", "normalize_lambdas", "precision"},
}


def _fit(ranker, method, X, y, qid):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return getattr(ranker, method)(X, y, groups=qid)


def _query_scaled(X, qid):
    """X min-max scaled within each query (LETOR 4.0's form)."""
    X = X.copy()
    for q in np.unique(qid):
        rows = qid == q
        low, high = X[rows].min(axis=0), X[rows].max(axis=0)
        X[rows] = (X[rows] - low) / np.where(high > low, high - low, 1.0)
    return X


def _redundant(n_queries, seed):
    """Features that are noisy copies of two latent ones: input_noise="auto"
    adds noise to these."""
    X, y, qid = make_ranking(n_queries, n_features=2, n_informative=2, max_docs=15, random_state=seed)
    rng = np.random.RandomState(seed)
    copies = np.repeat(X, 4, axis=1) + 0.3 * rng.normal(size=(len(X), 8))
    return copies, y, qid


@pytest.mark.parametrize("cls", RANKERS)
def test_every_auto_parameter_is_published(cls):
    assert set(auto_parameters(cls._parameter_constraints)) == AUTO[cls]
    X, y, qid = make_ranking(20, n_features=4, n_informative=2, max_docs=10, random_state=0)
    ranker = _fit(cls(max_iter=2, random_state=0), "fit", X, y, qid)
    for name in AUTO[cls]:
        assert hasattr(ranker, f"{name}_"), name
    assert not any(hasattr(ranker, f"{name}_") for name in set(AUTO[LambdaRankRanker]) - AUTO[cls])


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("form", ["raw", "query_scaled", "large", "missing"])
def test_the_published_values_given_explicitly_give_the_same_model(cls, form, monkeypatch):
    """The definition of ``<parameter>_``, on small data (input noise on
    redundant features), on small data scaled within queries (LETOR's form,
    where LambdaRank and ListNet take other values), and on large data
    (early stopping, no average: the threshold moved below these rows)."""
    X, y, qid = _redundant(40, seed=1)
    if form == "query_scaled":
        X = _query_scaled(X, qid)
    if form == "missing":  # LambdaRank's alpha follows the share missing
        X[np.random.default_rng(0).random(X.shape) < 0.3] = np.nan
    if form == "large":
        monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y))
        monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    auto = _fit(cls(max_iter=15, random_state=0), "fit", X, y, qid)
    resolved = {name: getattr(auto, f"{name}_") for name in AUTO[cls]}
    explicit = _fit(cls(max_iter=15, random_state=0, **resolved), "fit", X, y, qid)
    np.testing.assert_array_equal(explicit.predict(X), auto.predict(X))
    assert explicit.n_iter_ == auto.n_iter_
    for name in AUTO[cls]:
        assert getattr(explicit, f"{name}_") == resolved[name], name
    assert auto.early_stopping_ == (form == "large")
    assert (auto.input_noise_ > 0) == (form != "large")  # the features are redundant
    if cls is LambdaRankRanker and form != "large":  # RankNet's width and minibatch on LETOR's form
        assert (auto.hidden_layer_sizes_, auto.batch_size_) == (((64,), 32) if form == "query_scaled" else ((128,), 16))


def test_lambdarank_takes_its_small_data_values_below_the_threshold_and_the_large_ones_from_it(monkeypatch):
    X, y, qid = make_ranking(30, n_features=4, n_informative=2, max_docs=12, random_state=0)
    small = _fit(LambdaRankRanker(max_iter=2, random_state=0), "fit", X, y, qid)
    assert (small.hidden_layer_sizes_, small.alpha_, small.batch_size_, small.learning_rate_init_) == (
        (128,), 5.0, 16, 6e-3)
    assert small.normalize_lambdas_ is True and small.early_stopping_ is False
    assert small.ema_momentum_ == _resolve.EMA_MOMENTUM and small.n_iter_no_change_ == _resolve.PATIENCE
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y))
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 30)
    monkeypatch.setattr(_resolve, "PATIENCE_LARGE_ROWS", len(y))
    large = _fit(LambdaRankRanker(max_iter=2, random_state=0), "fit", X, y, qid)
    assert (large.hidden_layer_sizes_, large.alpha_, large.learning_rate_init_) == ((64,), 15.0, 1e-3)
    assert large.normalize_lambdas_ is False and large.early_stopping_ is True
    assert large.ema_momentum_ == 0.0 and large.input_noise_ == 0.0
    assert large.n_iter_no_change_ == _resolve.PATIENCE_LARGE


@pytest.mark.parametrize("n_rows, n_queries, small", [
    (5_000, 40, True), (5_000, 400, True),  # few rows
    (50_000, 40, True), (50_000, _resolve.SMALL_DATA_QUERIES - 1, True),  # few queries
    (_resolve.SMALL_DATA_ROWS, _resolve.SMALL_DATA_QUERIES, False), (50_000, 400, False),
])
def test_data_is_small_below_either_threshold(n_rows, n_queries, small):
    """Small data takes the small values (step, width, penalty) and no early
    stopping; large data needs both many rows and, for LambdaRank and
    ListNet, many queries."""
    for cls, rules in ((LambdaRankRanker, LAMBDARANK), (ListNetRanker, LISTNET)):
        # distributed: the rows are not read, only the shape counts
        values = resolve(cls().get_params(), rules, DataShape(n_rows, n_queries), distributed=True)
        assert values.learning_rate_init == rules.learning_rate_init[0 if small else 1]
        assert values.early_stopping is not small
    ranknet = resolve(RankNetRanker().get_params(), RANKNET, DataShape(n_rows, n_queries), distributed=True)
    assert ranknet.early_stopping is not (n_rows < _resolve.SMALL_DATA_ROWS)  # its rules count rows only
    values = resolve(LambdaRankRanker().get_params(), LAMBDARANK, DataShape(n_rows, n_queries), distributed=True)
    assert (values.hidden_layer_sizes, values.alpha) == (
        (LAMBDARANK.hidden_layer_sizes[0], LAMBDARANK.alpha[0]) if small
        else (LAMBDARANK.hidden_layer_sizes[1], LAMBDARANK.alpha[1]))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_auto_alpha_grows_with_the_share_of_missing_values():
    X, y, qid = make_ranking(40, n_features=6, n_informative=3, random_state=0)
    rng = np.random.default_rng(1)
    X[rng.random(X.shape) < 0.4] = np.nan
    first = qid == qid[0]
    X[first] = np.nan  # in a query of weight 0: not counted
    weights = np.where(first, 0.0, 1.0)
    share = np.isnan(X[~first]).mean()
    assert 0.3 < share < 0.5
    small, large = LAMBDARANK.alpha
    fitted = LambdaRankRanker(max_iter=1).fit(X, y, groups=qid, sample_weight=weights)
    assert fitted.alpha_ == pytest.approx(small / (1 - share), rel=1e-14)
    X_complete = np.nan_to_num(X)
    assert LambdaRankRanker(max_iter=1).fit(X_complete, y, groups=qid).alpha_ == small  # exactly
    assert LambdaRankRanker(max_iter=1, alpha=2.0).fit(X, y, groups=qid).alpha_ == 2.0
    # partial_fit sees one batch, and keeps the size's value.
    assert LambdaRankRanker().partial_fit(X, y, groups=qid).alpha_ == large
    params = LambdaRankRanker().get_params()
    for given, used in [(0.0, 0.0), (0.5, 0.5), (0.95, _resolve.MISSING_SHARE_CAP)]:
        shape = DataShape(500, 40, missing_share=given)
        alpha = resolve(params, LAMBDARANK, shape, distributed=True).alpha
        assert alpha == pytest.approx(small / (1 - used), rel=1e-14)


def test_partial_fit_takes_the_large_data_values_and_goes_on_with_the_fit_step():
    X, y, qid = make_ranking(30, n_features=4, n_informative=2, max_docs=12, random_state=0)
    first = _fit(LambdaRankRanker(random_state=0), "partial_fit", X, y, qid)
    assert (first.hidden_layer_sizes_, first.alpha_, first.learning_rate_init_) == ((64,), 15.0, 1e-3)
    assert first.normalize_lambdas_ is False and first.input_noise_ == 0.0
    assert first.ema_momentum_ == _resolve.EMA_MOMENTUM  # no validation set
    fitted = _fit(LambdaRankRanker(max_iter=2, random_state=0), "fit", X, y, qid)
    assert fitted.learning_rate_init_ == 6e-3  # below 10,000 rows
    _fit(fitted, "partial_fit", X, y, qid)
    assert fitted.learning_rate_init_ == 6e-3  # the optimizer it resumed
    assert fitted.hidden_layer_sizes_ == (128,)  # the fitted width


def test_resolve_reads_only_the_shape_where_no_rule_needs_the_rows():
    """Without rows at hand (Dask, partial_fit) the rules that read them are
    off: no noise, no normalized lambdas, no scaled-within-queries values;
    on Dask no weight average either."""
    params = LambdaRankRanker().get_params()
    shape = DataShape(500, 40)  # no data: reading it would fail
    distributed = resolve(params, LAMBDARANK, shape, distributed=True)
    assert distributed.input_noise == 0.0 and distributed.normalize_lambdas is False
    assert distributed.ema_momentum == 0.0 and distributed.query_scaled is False
    assert distributed.hidden_layer_sizes == (128,) and distributed.alpha == 5.0  # the size still counts
    incremental = resolve(params, LAMBDARANK, shape, incremental=True)
    assert incremental.input_noise == 0.0 and incremental.early_stopping is False
    assert incremental.hidden_layer_sizes == (64,) and incremental.learning_rate_init == 1e-3
    for rules, cls in ((RANKNET, RankNetRanker), (LISTNET, ListNetRanker)):
        values = resolve(cls().get_params(), rules, shape, distributed=True)
        assert values.batch_size == 32 and values.hidden_layer_sizes == (64,)


def test_lbfgs_resolves_no_early_stopping_no_noise_and_no_average():
    X, y, qid = _redundant(30, seed=2)
    ranker = _fit(RankNetRanker(solver="lbfgs", max_iter=5, random_state=0), "fit", X, y, qid)
    assert ranker.early_stopping_ is False and ranker.input_noise_ == 0.0 and ranker.ema_momentum_ == 0.0


def test_a_fitted_width_is_kept_by_warm_start(monkeypatch):
    X, y, qid = make_ranking(30, n_features=4, n_informative=2, max_docs=12, random_state=0)
    ranker = _fit(LambdaRankRanker(max_iter=2, warm_start=True, random_state=0), "fit", X, y, qid)
    assert ranker.hidden_layer_sizes_ == (128,)
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", 1)  # "auto" would now take (64,)
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)
    _fit(ranker, "fit", X, y, qid)
    assert ranker.hidden_layer_sizes_ == (128,) and ranker.coefs_[0].shape[1] == 128
    assert ranker.alpha_ == 15.0  # the rules that do not shape the network follow the size
