"""``input_noise="auto"``: the features' redundancy, against a slow reference,
and where the rankers resolve it."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata, spearmanr

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet import _noise
from sklearn_ranknet._resolve import SMALL_DATA_ROWS as AUTO_EARLY_STOPPING_ROWS
from sklearn_ranknet._noise import auto_input_noise, feature_redundancy
from sklearn_ranknet.datasets import make_ranking

RANKERS = [LambdaRankRanker, RankNetRanker, ListNetRanker]


def slow_redundancy(X):
    """1 + (p - 1) * (mean squared Spearman correlation over pairs
    - 1 / (n - 1)), pair by pair, on every row and every varying column."""
    X = np.asarray(X, dtype=float)
    columns = [j for j in range(X.shape[1]) if X[:, j].max() > X[:, j].min()]
    n, p = X.shape[0], len(columns)
    if p < 2 or n < 3:
        return 1.0
    squares = [spearmanr(X[:, i], X[:, j])[0] ** 2 for i in columns for j in columns if i != j]
    return 1.0 + (p - 1) * max(np.mean(squares) - 1.0 / (n - 1), 0.0)


def redundant(n_rows, n_latent, copies, spread, seed):
    """Each of ``n_latent`` signals observed ``copies`` times with noise."""
    rng = np.random.default_rng(seed)
    latent = np.repeat(rng.normal(size=(n_rows, n_latent)), copies, axis=1)
    return latent + spread * rng.normal(size=latent.shape)


def test_redundancy_matches_the_pairwise_spearman_reference():
    X = redundant(300, 3, 4, 0.7, seed=0)
    X[:, 5] = np.round(X[:, 5])  # ties share their mean rank in both
    X[:, 7] = 1.5  # a constant column counts for nothing
    assert feature_redundancy(X, np.arange(300)) == pytest.approx(slow_redundancy(X), rel=1e-12)


@pytest.mark.parametrize("n_rows", [4, 5, 6])
def test_redundancy_subtracts_the_null_mean_of_a_squared_rank_correlation(n_rows):
    """Over every ordering of a second column against the first (all equally
    likely when the two are independent), the squared Spearman correlation
    averages exactly 1 / (n - 1), the amount the redundancy subtracts; on a
    few rows that is far from 1 / n (a 4-row example looked redundant)."""
    first = np.arange(n_rows, dtype=float)
    orders = list(itertools.permutations(range(n_rows)))
    squares = [spearmanr(first, order)[0] ** 2 for order in orders]
    assert np.mean(squares) == pytest.approx(1 / (n_rows - 1), rel=1e-12)
    for order in orders[:: max(len(orders) // 40, 1)]:
        X = np.column_stack([first, order, np.square(order)])
        assert feature_redundancy(X, np.arange(n_rows)) == pytest.approx(slow_redundancy(X), rel=1e-12)


def test_redundancy_is_one_for_independent_features_and_p_for_copies():
    rng = np.random.default_rng(1)
    # Independent columns: the mean squared correlation is 1/(n-1) on average,
    # with a standard deviation of about sqrt(2)/n/sqrt(pairs), here ~1.4e-5;
    # times (p - 1) = 19 that is < 3e-4, so 0.01 is over 30 of them.
    assert feature_redundancy(rng.normal(size=(2000, 20)), np.arange(2000)) == pytest.approx(1.0, abs=0.01)
    # Monotone transforms of one column order the rows alike: r = 1.
    z = rng.normal(size=500)
    copies = np.column_stack([z, np.exp(z), z**3, np.arctan(z)])
    assert feature_redundancy(copies, np.arange(500)) == pytest.approx(1 + 3 * (1 - 1 / 499), rel=1e-12)


def test_redundancy_reads_only_the_given_rows_and_sparse_equals_dense():
    X = redundant(400, 2, 3, 0.5, seed=2)
    X[np.abs(X) < 0.5] = 0.0
    rows = np.arange(0, 400, 3)
    expected = slow_redundancy(X[rows])
    assert feature_redundancy(X, rows) == pytest.approx(expected, rel=1e-12)
    assert feature_redundancy(sp.csr_matrix(X), rows) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("X", [np.ones((10, 3)), np.arange(10.0)[:, None], np.zeros((2, 4)), np.zeros((0, 3))])
def test_redundancy_without_two_varying_features_is_one(X):
    assert feature_redundancy(X, np.arange(len(X))) == 1.0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), shift=st.floats(-1e3, 1e3), log_scale=st.floats(-3, 3))
def test_redundancy_ignores_monotone_maps_and_column_order(seed, shift, log_scale):
    X = redundant(120, 2, 3, 1.0, seed)
    rows = np.arange(120)
    base = feature_redundancy(X, rows)
    moved = X.copy()
    moved[:, 0] = shift + 10.0**log_scale * moved[:, 0]
    moved[:, 1] = np.exp(np.clip(moved[:, 1], -50, 50))
    assert base >= 1.0
    assert feature_redundancy(moved, rows) == pytest.approx(base, rel=1e-9)
    order = np.random.default_rng(seed).permutation(X.shape[1])
    assert feature_redundancy(X[:, order], rows) == pytest.approx(base, rel=1e-9)


def slow_redundancy_with_missing(X):
    """The redundancy of columns with missing values (NaN), pair by pair:
    each column ranked over its present values; each pair's Pearson
    correlation of those ranks over the rows where both are present (n of
    them), less 1 / (n - 1); pairs of fewer than three such rows, or with a
    column constant among them, left out."""
    X = np.asarray(X, dtype=float)
    columns = [j for j in range(X.shape[1])
               if (~np.isnan(X[:, j])).any() and np.nanmax(X[:, j]) > np.nanmin(X[:, j])]
    ranks = {j: rankdata(X[:, j], nan_policy="omit") for j in columns}
    excesses = []
    for i in columns:
        for j in columns:
            both = ~np.isnan(X[:, i]) & ~np.isnan(X[:, j])
            a, b = ranks[i][both], ranks[j][both]
            if i == j or both.sum() < 3 or a.max() == a.min() or b.max() == b.min():
                continue
            excesses.append(np.corrcoef(a, b)[0, 1] ** 2 - 1.0 / (both.sum() - 1))
    if len(columns) < 2 or not excesses:
        return 1.0
    return 1.0 + (len(columns) - 1) * max(np.mean(excesses), 0.0)


@pytest.mark.parametrize("seed", range(3))
def test_redundancy_with_missing_values_matches_the_pairwise_reference(seed):
    rng = np.random.default_rng(seed)
    X = redundant(300, 3, 3, 0.7, seed)
    X[rng.random(X.shape) < rng.uniform(0.05, 0.6)] = np.nan
    X[:, 2] = np.round(X[:, 2])  # ties share their mean rank in both
    X[:10, 4] = 3.0
    X[10:, 4] = np.nan  # present on 10 rows only, all equal: constant
    X[:, 6] = np.nan  # nothing present
    X[:, 7] = np.where(np.arange(300) < 150, np.nan, X[:, 7])
    X[:, 8] = np.where(np.arange(300) >= 150, np.nan, X[:, 8])  # never beside column 7
    expected = slow_redundancy_with_missing(X)
    assert feature_redundancy(X, np.arange(300)) == pytest.approx(expected, rel=1e-12)
    assert feature_redundancy(sp.csr_matrix(X), np.arange(300)) == pytest.approx(expected, rel=1e-12)


def test_missing_values_do_not_hide_redundant_features():
    """Features that order the rows alike stay redundant with values missing
    from every one of them (read as constant, they once all dropped out)."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=2000)
    copies = np.column_stack([z, np.exp(z), z**3, np.arctan(z)])
    complete = feature_redundancy(copies, np.arange(2000))
    assert complete == pytest.approx(1 + 3 * (1 - 1 / 1999), rel=1e-12)
    copies[rng.random(copies.shape) < 0.3] = np.nan
    # Each column is ranked among its own present rows, so two copies' ranks
    # on their rows in common agree up to those ranks' gaps: r just below 1.
    got = feature_redundancy(copies, np.arange(2000))
    assert got == pytest.approx(slow_redundancy_with_missing(copies), rel=1e-12)
    assert complete - 0.01 < got < complete
    independent = rng.normal(size=(2000, 20))
    independent[rng.random(independent.shape) < 0.3] = np.nan
    assert feature_redundancy(independent, np.arange(2000)) == pytest.approx(1.0, abs=0.02)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("Ranker", RANKERS)
def test_auto_noise_reads_redundant_features_with_missing_values(Ranker):
    _, y, qid = make_ranking(40, min_docs=5, max_docs=10, random_state=0)
    copies = redundant(len(y), 3, 4, 0.3, seed=3)
    copies[np.random.default_rng(5).random(copies.shape) < 0.2] = np.nan
    fitted = Ranker(max_iter=2, random_state=0).fit(copies, y, groups=qid)
    assert fitted.input_noise_ == _noise.AUTO_INPUT_NOISE


def test_auto_noise_ramps_with_redundancy(monkeypatch):
    low, high = _noise.AUTO_NOISE_REDUNDANCY
    for redundancy, expected in [(1.0, 0.0), (low, 0.0), ((low + high) / 2, _noise.AUTO_INPUT_NOISE / 2),
                                 (high, _noise.AUTO_INPUT_NOISE), (50.0, _noise.AUTO_INPUT_NOISE)]:
        monkeypatch.setattr(_noise, "feature_redundancy", lambda X, rows, r=redundancy: r)
        assert auto_input_noise(None, None) == pytest.approx(expected, rel=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("Ranker", RANKERS)
def test_auto_noise_is_added_to_small_redundant_data_only(Ranker):
    _, y, qid = make_ranking(40, min_docs=5, max_docs=10, random_state=0)
    copies = redundant(len(y), 3, 4, 0.3, seed=3)
    independent = np.random.default_rng(4).normal(size=copies.shape)
    quick = dict(max_iter=2, random_state=0)
    assert Ranker(**quick).fit(copies, y, groups=qid).input_noise_ == _noise.AUTO_INPUT_NOISE
    assert Ranker(**quick).fit(independent, y, groups=qid).input_noise_ == 0.0
    assert Ranker(**quick, input_noise=0.3).fit(copies, y, groups=qid).input_noise_ == 0.3
    assert Ranker(**quick).partial_fit(copies, y, groups=qid).input_noise_ == 0.0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_auto_noise_is_off_from_the_early_stopping_size_and_with_lbfgs():
    n_queries = AUTO_EARLY_STOPPING_ROWS // 10
    _, y, qid = make_ranking(n_queries, min_docs=10, max_docs=10, random_state=0)
    copies = redundant(len(y), 2, 3, 0.3, seed=5)
    assert len(y) == AUTO_EARLY_STOPPING_ROWS
    fitted = LambdaRankRanker(max_iter=1, hidden_layer_sizes=(), k=5).fit(copies, y, groups=qid)
    assert fitted.input_noise_ == 0.0
    small = slice(0, 200)
    lbfgs = RankNetRanker(solver="lbfgs", max_iter=2).fit(copies[small], y[small], groups=qid[small])
    assert lbfgs.input_noise_ == 0.0  # no error either: "auto" never asks L-BFGS for noise


def test_wide_sparse_noise_does_not_look_redundant():
    # 200,000 independent sparse columns: each pair's r**2 is mostly ~0 and
    # now and then large (rows in common), so its mean over the sampled pairs
    # is noisy; times all ~160,000 varying columns that noise read as 5.8 here.
    # Only the chosen features' count may multiply it.
    rng = np.random.default_rng(0)
    n_values = 1_000_000
    X = sp.csr_matrix((rng.random(n_values), (rng.integers(0, 5000, n_values),
                                               rng.integers(0, 200_000, n_values))), shape=(5000, 200_000))
    assert feature_redundancy(X, np.arange(5000)) < 1.5  # below any noise
    dense_block = X[:, :300].toarray()
    assert feature_redundancy(dense_block, np.arange(2000)) == pytest.approx(
        feature_redundancy(sp.csr_matrix(dense_block), np.arange(2000)), rel=1e-12)


# The noise table: drawn once per fit, read at random offsets


def test_noise_table_holds_normal_values_of_the_level():
    level, n = 0.7, 40_000
    for dtype in (np.float64, np.float32):
        values = _noise.NoiseTable(level, n, dtype, seed=3).values
        assert values.dtype == dtype and values.shape == (n,)
        # Four standard errors: of the mean, level / sqrt(n); of the sample
        # standard deviation, relatively 1 / sqrt(2 n).
        assert abs(values.mean()) < 4 * level / np.sqrt(n)
        assert abs(values.std() / level - 1) < 4 / np.sqrt(2 * n)
    same = _noise.NoiseTable(level, n, np.float64, seed=3).values
    np.testing.assert_array_equal(same, _noise.NoiseTable(level, n, np.float64, seed=3).values)
    assert not np.array_equal(same, _noise.NoiseTable(level, n, np.float64, seed=4).values)


def test_noise_table_blocks_are_read_only_slices_from_random_offsets():
    table = _noise.NoiseTable(1.0, 1000, np.float64, seed=0)
    starts = set()
    for seed in range(20):
        block = table.block((30, 10), np.random.default_rng(seed))
        assert block.shape == (30, 10) and not block.flags.writeable
        start = int(np.flatnonzero(table.values == block[0, 0])[0])
        np.testing.assert_array_equal(block.ravel(), table.values[start : start + 300])
        starts.add(start)
    assert len(starts) > 15  # 701 possible offsets: a repeat is rare
    whole = table.block((1000,), np.random.default_rng(0))
    np.testing.assert_array_equal(whole, table.values)
    with pytest.raises(RuntimeError, match="larger than the noise table"):
        table.block((1001,), np.random.default_rng(0))


@pytest.mark.parametrize("Ranker", RANKERS)
def test_fit_reads_fresh_noise_for_every_block_from_a_table_of_a_few_blocks(Ranker, monkeypatch):
    """Queries of unequal sizes and small row blocks (several per minibatch):
    every block finds its noise in the table, the table holds
    NOISE_TABLE_BLOCKS of the largest possible block, and the blocks read
    different parts of it (their values are uncorrelated)."""
    from sklearn_ranknet import _training

    monkeypatch.setattr(_training, "BLOCK_WORK", 64)  # blocks of 1,024 rows
    X, y, qid = make_ranking(60, n_features=6, n_informative=3, min_docs=40, max_docs=160, random_state=2)
    tables, blocks = [], []
    table_class, original_block = _noise.NoiseTable, _noise.NoiseTable.block

    def record_table(*args, **kwargs):
        tables.append(table_class(*args, **kwargs))
        return tables[-1]

    def record_block(self, shape, generator):
        blocks.append(original_block(self, shape, generator))
        return blocks[-1]

    monkeypatch.setattr(_training, "NoiseTable", record_table)
    monkeypatch.setattr(table_class, "block", record_block)
    ranker = Ranker(hidden_layer_sizes=(4,), max_iter=3, batch_size=16, input_noise=0.5, random_state=0)
    ranker.fit(X, y, groups=qid)
    assert len(tables) == 1
    # The table is sized by the block limit (1,024 rows) when a minibatch
    # can exceed it, as these can.
    n_inputs = blocks[0].shape[1]
    assert np.sort(np.bincount(qid))[-16:].sum() > 1024
    assert max(block.shape[0] for block in blocks) <= 1024
    assert len(tables[0].values) == _noise.NOISE_TABLE_BLOCKS * 1024 * n_inputs
    # Consecutive blocks side by side: an offset read twice would give a
    # correlation of 1; independent values give about 1 / sqrt(m).
    for first, second in zip(blocks, blocks[1:]):
        m = min(first.size, second.size)
        assert abs(np.corrcoef(first.ravel()[:m], second.ravel()[:m])[0, 1]) < 5 / np.sqrt(m)


def test_a_one_step_partial_fit_draws_only_the_noise_it_uses(monkeypatch):
    from sklearn_ranknet import _training

    X, y, qid = make_ranking(10, n_features=4, n_informative=2, random_state=3)
    sizes = []
    table_class = _noise.NoiseTable

    def record_table(level, size, dtype, seed):
        sizes.append(size)
        return table_class(level, size, dtype, seed)

    monkeypatch.setattr(_training, "NoiseTable", record_table)
    ranker = RankNetRanker(hidden_layer_sizes=(3,), batch_size=16, input_noise=0.5, random_state=0)
    ranker.partial_fit(X, y, groups=qid)
    assert sizes == [len(y) * ranker.coefs_[0].shape[0]]


def test_one_minibatch_per_epoch_still_gets_new_noise_every_epoch(monkeypatch):
    """With every query in one minibatch, a block is a whole epoch; the
    table is still several blocks long, so the epochs read different
    offsets instead of adding the same noise every time."""
    X, y, qid = make_ranking(10, n_features=4, n_informative=2, random_state=3)
    blocks = []
    original_block = _noise.NoiseTable.block

    def record_block(self, shape, generator):
        blocks.append(original_block(self, shape, generator))
        return blocks[-1]

    monkeypatch.setattr(_noise.NoiseTable, "block", record_block)
    RankNetRanker(hidden_layer_sizes=(3,), batch_size=16, input_noise=0.5, max_iter=4, random_state=0).fit(
        X, y, groups=qid
    )
    assert len(blocks) == 4 and all(block.shape[0] == len(y) for block in blocks)
    m = blocks[0].size
    for first, second in zip(blocks, blocks[1:]):
        assert abs(np.corrcoef(first.ravel(), second.ravel())[0, 1]) < 5 / np.sqrt(m)
