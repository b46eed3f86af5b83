"""Gaussian input noise: how much (``input_noise="auto"``) and its draws.

``input_noise="auto"`` adds noise only where the features are redundant.

Noise of standard deviation s on standardized inputs acts, for a linear
scoring function, like a ridge penalty in the inputs' principal axes: a
direction along which the features vary together with variance lambda keeps
about lambda / (lambda + s**2) of its weight. Where many features measure the
same few things (BM25 of the body, the title and the anchor text; the same
count in several normalisations), the shared directions hold most of the
variance and survive the noise while the feature-by-feature idiosyncrasies a
small training set would overfit are damped. Where every column is a signal
of its own, there is no shared direction to keep and the noise only blurs
the signal.

Cross-validation found exactly that split (User Guide, "Choosing", the
"auto" values): noise raised held-out NDCG@10 on real learning-to-rank
features and on synthetic copies of a few latent features, and lowered it
on independent features. :func:`feature_redundancy` tells the two kinds
apart, so "auto" adds the noise only where it helped.

The draws come from a :class:`NoiseTable`: one set of normal values per fit
that every minibatch reads from a random offset.
"""

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata

from ._inputs import edge_sample

#: ``input_noise="auto"`` on redundant features (standardized units; a
#: ranker may take another level on features scaled within each query, see
#: ``_resolve.AutoRules.query_scaled``).
AUTO_INPUT_NOISE = 2.0
#: ``input_noise="auto"`` rises linearly from 0 to ``AUTO_INPUT_NOISE`` as
#: :func:`feature_redundancy` goes from the first to the second value.
AUTO_NOISE_REDUNDANCY = (1.5, 2.5)
#: Rows and (non-constant) features read by :func:`feature_redundancy`: a
#: rank correlation needs few rows, and the mean over feature pairs few
#: features; this bounds its cost (~0.1 s) whatever the shape of X.
REDUNDANCY_SAMPLE_ROWS = 2_000
REDUNDANCY_SAMPLE_FEATURES = 400
#: Values read at a time while looking for the features that vary.
REDUNDANCY_BLOCK_VALUES = 2**17
#: A fit's :class:`NoiseTable` holds the noise of this many of its largest
#: row blocks (fewer when it runs fewer steps).
NOISE_TABLE_BLOCKS = 2


def _sample_columns(X, rows):
    """Each feature's spread (max - min) over ``rows``, missing values (NaN)
    left out (-inf or NaN for a feature with none present), and a function
    giving the dense ``X[rows][:, columns]``. Wide data is never densified
    whole: CSR rows stay sparse, dense columns are read a block at a time
    (a copy of ``X[rows]`` would be as large as X on small data)."""
    # Only "spread > 0" is read, which a spread overflowing to inf answers
    # right: no RuntimeWarning for features beyond +-1e308 / 2.
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(X):
            sample = sp.csr_matrix(X[rows])
            missing = np.isnan(sample.data)
            highest, lowest = sample.copy(), sample.copy()
            highest.data[missing], lowest.data[missing] = -np.inf, np.inf
            spread = np.asarray(highest.max(axis=0).todense() - lowest.min(axis=0).todense()).ravel()
            return spread, lambda columns: sample[:, columns].toarray()
        width = max(1, REDUNDANCY_BLOCK_VALUES // len(rows))
        spread = np.concatenate([np.fmax.reduce(block, axis=0) - np.fmin.reduce(block, axis=0)
                                 for block in (X[rows, start:start + width] for start in range(0, X.shape[1], width))])
    return spread, lambda columns: X[np.ix_(rows, columns)]


def feature_redundancy(X, rows):
    """How many features, in effect, each feature shares its ordering with.

    With r_ij the Spearman correlation of features i and j over the rows,
    the redundancy is 1 + (p - 1) * mean(r_ij ** 2) over pairs i != j of the
    p non-constant features (at most ``REDUNDANCY_SAMPLE_FEATURES`` of them,
    evenly spaced; the mean reduced by 1 / (n_rows - 1), its expectation
    for independent features, so that a small sample does not look
    redundant).
    It is p / (effective rank) of the rank-correlation matrix: 1 for
    independent features, p when all are one feature in several monotone
    forms.
    Missing values (NaN) are left out of each pair's correlation (see
    :func:`_redundancy_with_missing_values`).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The training features, raw.
    rows : ndarray of shape (n_rows,)
        The training rows of X (indices), of which at most
        ``REDUNDANCY_SAMPLE_ROWS``, evenly spaced, are read.

    Returns
    -------
    redundancy : float
        At least 1.0; 1.0 when fewer than two features vary (or fewer than
        three rows are read).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ranknet._noise import feature_redundancy
    >>> rng = np.random.default_rng(0)
    >>> latent = rng.normal(size=(1000, 1))
    >>> copies = latent + 0.1 * rng.normal(size=(1000, 4))
    >>> round(feature_redundancy(copies, np.arange(1000)), 1)
    3.9
    >>> round(feature_redundancy(rng.normal(size=(1000, 4)), np.arange(1000)), 1)
    1.0
    """
    rows = edge_sample(len(rows), rows, limit=REDUNDANCY_SAMPLE_ROWS)
    n_rows = len(rows)
    if n_rows < 3:
        return 1.0
    spread, columns = _sample_columns(X, rows)
    varying = np.flatnonzero(spread > 0)
    n_varying = len(varying)
    if n_varying < 2:
        return 1.0
    chosen = edge_sample(n_varying, varying, limit=REDUNDANCY_SAMPLE_FEATURES)
    values = columns(chosen).astype(np.float64)
    if np.isnan(values).any():
        return _redundancy_with_missing_values(values)
    ranks = rankdata(values, axis=0)  # ties share their mean rank
    ranks -= ranks.mean(axis=0)
    ranks /= np.sqrt((ranks**2).mean(axis=0))
    correlation = ranks.T @ ranks / n_rows
    m = len(chosen)
    mean_square = ((correlation**2).sum() - np.trace(correlation**2)) / (m * (m - 1))
    # Over the chosen features, not all p: with thousands of sparse columns,
    # (p - 1) times the mean's sampling noise would be larger than the signal.
    # Under independence a Spearman correlation over n rows has mean 0 and
    # variance exactly 1 / (n - 1).
    return float(1.0 + (m - 1) * max(mean_square - 1.0 / (n_rows - 1), 0.0))


def _redundancy_with_missing_values(values):
    """:func:`feature_redundancy` of sampled columns that hold missing
    values (NaN): each feature ranked over its present values, and each
    pair's correlation that of those ranks over the rows where both are
    present (n_ij of them), less its mean 1 / (n_ij - 1) under independence.
    Pairs with fewer than three such rows, or a feature constant among
    them, take no part. (Read as constant, as before, every feature with a
    missing value dropped out: a sample with a NaN in each feature looked
    independent, and ``input_noise="auto"`` gave 0 on the Yahoo sample with
    10 % of its values missing, where it gives 2 on the complete sample;
    docs/benchmarks.md, "Missing values".)"""
    missing = np.isnan(values)
    present = (~missing).astype(np.float64)
    ranks = np.where(missing, 0.0, rankdata(values, axis=0, nan_policy="omit"))
    both = present.T @ present  # n_ij
    sums = ranks.T @ present  # [i, j]: feature i's ranks summed over the rows where both are present
    squares = (ranks**2).T @ present
    with np.errstate(divide="ignore", invalid="ignore"):
        covariance = ranks.T @ ranks - sums * sums.T / both
        spread = squares - sums**2 / both  # [i, j]: of feature i, over those rows
        square = covariance**2 / (spread * spread.T)
        excess = square - 1.0 / (both - 1.0)
    counted = (both >= 3) & (spread > 0) & (spread.T > 0)
    np.fill_diagonal(counted, False)
    m = values.shape[1]
    if not counted.any():
        return 1.0
    # Rounding can leave a hair above 1 where two features agree exactly.
    mean_excess = float(np.minimum(excess, 1.0)[counted].mean())
    return float(1.0 + (m - 1) * max(mean_excess, 0.0))


def auto_input_noise(X, rows, level=AUTO_INPUT_NOISE):
    """``input_noise="auto"`` for training rows ``rows`` of ``X``: 0 below
    the first value of :data:`AUTO_NOISE_REDUNDANCY`, ``level`` from the
    second, linear between."""
    low, high = AUTO_NOISE_REDUNDANCY
    share = np.clip((feature_redundancy(X, rows) - low) / (high - low), 0.0, 1.0)
    return float(level * share)


class NoiseTable:
    """The input noise of one fit: normal values drawn once, read by every
    minibatch block as a contiguous slice from a random offset.

    Drawing fresh normals for each gathered row took a large share of a
    small noisy fit; a slice costs nothing. Inside a block the values are
    independent draws. Across blocks the same values return, but shifted
    onto other rows and features, so what one row's feature receives from
    epoch to epoch is still a fresh draw from the table: as good as new
    noise for a regulariser (evolution strategies share one noise table
    between workers in the same way, Salimans et al., 2017).

    Parameters
    ----------
    level : float
        Standard deviation of the noise (``input_noise_``).
    size : int
        Values in the table: at least the largest block's rows times the
        network's inputs.
    dtype : numpy dtype
        The network's float type.
    seed : int
        Seeds the table's values.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ranknet._noise import NoiseTable
    >>> table = NoiseTable(0.5, size=1000, dtype=np.float64, seed=0)
    >>> table.block((20, 10), np.random.default_rng(1)).shape
    (20, 10)
    """

    def __init__(self, level, size, dtype, seed):
        self.values = np.random.default_rng(seed).standard_normal(size, dtype=dtype)
        self.values *= self.values.dtype.type(level)

    def block(self, shape, generator):
        """Noise of the given shape (a read-only view into the table), from
        an offset drawn with ``generator``."""
        n_values = int(np.prod(shape))
        if n_values > len(self.values):
            raise RuntimeError(  # the table is sized from the largest block: a bug
                f"A block of {n_values} values is larger than the noise table "
                f"({len(self.values)}); please report this."
            )
        start = int(generator.integers(len(self.values) - n_values + 1))
        view = self.values[start : start + n_values].reshape(shape)
        view.flags.writeable = False
        return view
