"""Input scaling fitted inside the ranker, so raw features need no scaler.

``feature_scaling="log1p"`` maps every feature value x to
sign(x) * log1p(|x|), then standardizes each feature with the mean and
standard deviation of the training rows; ``"standard"`` only standardizes;
``None`` leaves the inputs alone. The log keeps heavy-tailed counts (BM25
sums, click counts, document lengths) from swamping the rest, and maps 0
to 0, so sparse rows stay sparse (Qin et al., ICLR 2021, used the same
transform for their neural rankers).

Dense rows are standardized as they are gathered (each minibatch, or each
block of ``predict``, is a copy anyway), as (t - mean) * (1 / scale): a
multiplication by the reciprocal rather than a division per value, which
took about a third of the gather's time on one CPU measured. CSR rows are
not, since centring would densify them: for them the standardization is
folded into the first layer. With z = (t - mean) / scale for the transformed row t,

    z @ W + b = t @ (W / scale[:, None]) + (b - (mean / scale) @ W),

so the network runs on t with *effective* first-layer weights. Folding
cancels when a feature's mean dwarfs its spread, which float64 absorbs but
float32 may not: centring dense rows first avoids that. Either way the model's
own weights ``coefs_[0]`` are those of the standardized inputs, which is where
the L2 penalty and the initialization make sense, and ``X`` is never copied
as a whole.

``feature_scaling="piecewise"`` first *encodes* each feature into one input
per quantile bin (:class:`PiecewiseEncoding`), then standardizes those
inputs as above. The network sees more inputs than there are features, so
``coefs_[0]`` has one row per encoded input. The encoding maps 0 to 0, so
CSR rows are encoded into CSR rows and stay sparse.

CSR that is mostly filled is not worth keeping sparse: LETOR files load as
CSR (``load_letor``) although most of their entries are stored, and sparse
products and the numpy encoding of stored values cost several times the
dense ones. A CSR ``X`` with at least ``DENSE_BLOCKS_FROM`` of its entries
stored is therefore read as dense blocks (each minibatch, each block of
``predict``, densified after its rows are gathered), exactly as a dense
``X`` is: same code, same bits, no folding. A fit densifies such an ``X``
once instead when the copy is small enough (``_training.DENSE_COPY_BYTES``,
:meth:`~sklearn_ranknet._training.TrainingSet.densify`).
"""

import functools
import warnings

import numpy as np
import scipy.sparse as sp

from ._jit import jit
from ._missingness import missing_fill, missingness_evidence, telling_features, within_query_residuals

#: Options of ``feature_scaling``.
FEATURE_SCALINGS = ("log1p", "piecewise", "standard")
#: Quantile bins per feature of ``feature_scaling="piecewise"``: 8 below
#: ``PIECEWISE_LARGE_ROWS`` training rows, 4 from there on (see
#: :func:`piecewise_bins`). Chosen by cross-validation on training data
#: (User Guide, "Choosing"): more bins overfitted small data, and on large
#: data 4 ranked as well as 8 with half the first layer, the bulk of an
#: epoch's arithmetic.
PIECEWISE_BINS = 8
PIECEWISE_BINS_LARGE = 4
PIECEWISE_LARGE_ROWS = 50_000
#: Rows read to place the bin edges and to measure the encoded inputs'
#: means and scales: evenly spaced over the training rows when there are
#: more (quantiles and moments need few rows; HistGradientBoosting bins from
#: 200,000 too).
EDGE_SAMPLE_ROWS = 200_000
#: Share of stored entries from which a CSR ``X`` is read as dense blocks (see
#: :func:`stays_sparse`).
DENSE_BLOCKS_FROM = 0.1


def stays_sparse(X):
    """Whether rows of ``X`` reach the network as CSR (with input scaling,
    through a folded first layer), rather than as dense blocks (with input
    scaling, standardized as gathered; without, as they are).

    Only CSR with fewer than ``DENSE_BLOCKS_FROM`` of its entries stored
    stays sparse; denser CSR is gathered a block at a time and each block
    densified, which trains several times faster on LETOR-style data (the
    "inputs" benchmark; User Guide, "Performance") and gives the dense
    model's very bits.
    """
    if not sp.issparse(X):
        return False
    n_entries = X.shape[0] * X.shape[1]
    return X.nnz < DENSE_BLOCKS_FROM * n_entries


def gather_rows(X, index):
    """``X[index]``: dense for dense ``X`` and for CSR too dense to stay
    sparse (:func:`stays_sparse`), CSR otherwise."""
    rows = X[index]
    return sp.csr_matrix(rows).toarray() if sp.issparse(X) and not stays_sparse(X) else rows


def edge_sample(n_rows, rows=None, limit=None):
    """At most ``limit`` of ``n_rows`` items (of ``rows``, when given),
    evenly spaced: all of them up to that many. ``limit=None`` is
    :data:`EDGE_SAMPLE_ROWS` (read at call time), the rows the input
    scaling reads."""
    limit = EDGE_SAMPLE_ROWS if limit is None else limit
    sample = np.arange(0, n_rows, max(1, -(-n_rows // limit)))
    return sample if rows is None else np.asarray(rows)[sample]
#: Values (rows x features) read at a time when fitting the statistics or
#: predicting: bounds the temporary copies (~1 MB in float64).
BLOCK_VALUES = 2**17


def piecewise_bins(n_rows):
    """Quantile bins per feature for ``n_rows`` training rows (a size-aware
    default, as ``HistGradientBoostingRegressor(early_stopping="auto")``)."""
    return PIECEWISE_BINS if n_rows < PIECEWISE_LARGE_ROWS else PIECEWISE_BINS_LARGE


def block_rows(n_features):
    """Rows per block of about ``BLOCK_VALUES`` values."""
    return max(BLOCK_VALUES // max(n_features, 1), 16)


def signed_log1p(block):
    """sign(x) * log1p(|x|) of every stored value, in place; returns
    ``block`` (a dense array or a CSR matrix that the caller owns)."""
    values = block.data if sp.issparse(block) else block
    np.copysign(np.log1p(np.abs(values)), values, out=values)
    return block


class InputScaling:
    """A fitted input scaling: the elementwise transform (or the encoding)
    and the standardization statistics of its outputs, the network's inputs.

    Parameters
    ----------
    kind : {"log1p", "piecewise", "standard"}
    mean : ndarray of shape (n_inputs,)
        Mean of each transformed feature (each encoded input) over the
        training rows.
    scale : ndarray of shape (n_inputs,)
        Its standard deviation; 1 for a constant feature.
    encoding : PiecewiseEncoding or None
        The encoding of ``kind="piecewise"``; None otherwise.
    indicated : ndarray of shape (n_indicators,) or None
        The features (columns of ``X``) that had missing values (NaN) in the
        rows the scaling was fitted on (and whose missingness tells the
        labels, when they were given: see :meth:`fit`), increasing; each
        has one more input, its missing indicator (1 where the value is NaN), after the
        transformed features (or encoded inputs). ``mean`` and ``scale``
        end with the indicators' statistics. None: no indicator.
    imputed : ndarray of shape (n_indicators,) or None
        The value a missing value of each feature of ``indicated`` reads as
        (:func:`~._missingness.missing_fill`), in float64; NaN (or None for
        all): the feature's mean.

    Notes
    -----
    A missing value (NaN) of a feature with an indicator gives the feature's
    inputs those of its ``imputed`` value, and the indicator tells the
    network that the value was missing, so the first layer learns what a
    missing value means beyond that value (its weights on the indicator).
    Any other missing value (see :mod:`._missingness` for which features
    keep an indicator) gives every input of its feature the value 0 after
    standardization, that is the input's mean over the training rows that
    have the feature; so does a feature that had no NaN in training but
    has one at predict.
    """

    def __init__(self, kind, mean, scale, encoding=None, indicated=None, imputed=None):
        self.kind, self.mean, self.scale, self.encoding = kind, mean, scale, encoding
        self.indicated = np.zeros(0, dtype=np.int64) if indicated is None else np.asarray(indicated, dtype=np.int64)
        self.imputed = np.full(len(self.indicated), np.nan) if imputed is None else np.asarray(imputed, dtype=np.float64)

    @property
    def n_inputs(self):
        """Inputs of the network: the features, or their encoded inputs,
        then the missing indicators."""
        return len(self.mean)

    @property
    def n_transformed(self):
        """Inputs before the missing indicators."""
        return len(self.mean) - len(self.indicated)

    @functools.cached_property  # computed once: every minibatch reads it
    def inv_scale(self):
        """1 / scale, in the scale's dtype: dense rows are multiplied by it."""
        return 1.0 / self.scale

    @functools.cached_property
    def fill(self):
        """The network's inputs at a missing value, of shape (n_inputs,), in
        the mean's dtype: the standardized inputs of each indicated feature's
        ``imputed`` value, 0 elsewhere (the input's mean, and the indicators,
        which are never missing)."""
        fill = np.zeros(self.n_inputs)
        filled = np.isfinite(self.imputed)
        if filled.any():
            n_features = self.n_transformed if self.encoding is None else len(self.encoding.edges)
            row = np.zeros((1, n_features))
            row[0, self.indicated[filled]] = self.imputed[filled]
            if self.kind == "piecewise":
                encoding = self.encoding
                inputs = np.concatenate([np.arange(encoding.offsets[j], encoding.offsets[j + 1])
                                         for j in self.indicated[filled]])
                row = encoding.transform(row.astype(encoding.lower.dtype)).astype(np.float64)
            else:
                inputs = self.indicated[filled]
                if self.kind == "log1p":
                    signed_log1p(row)
            mean, scale = self.mean[inputs].astype(np.float64), self.scale[inputs].astype(np.float64)
            fill[inputs] = (row[0, inputs] - mean) / scale
        return fill.astype(self.mean.dtype)

    @classmethod
    def fit(cls, kind, X, rows=None, labels=None):
        """Statistics of the (transformed) rows ``X[rows]`` of a dense or CSR
        ``X``, read ``BLOCK_ROWS`` rows at a time, in float64, and returned in
        ``X``'s dtype. ``rows=None`` reads every row in order. With
        ``kind="piecewise"`` the bin edges are placed first, and both they
        and the encoded inputs' moments come from :func:`edge_sample` (the
        encoding costs ~1.5 us a row and feature).

        Each block's mean and variance are merged into the running ones with
        Chan et al.'s pairwise update (:func:`merge_moments`), which does not
        cancel the way ``E[x**2] - E[x]**2`` does when a feature's mean
        dwarfs its spread.

        ``labels``, ``(y, offsets)`` of the rows ``X[rows]`` listed query by
        query, keeps a missing indicator only for the features whose
        missingness tells the labels (:mod:`._missingness`), and reads their
        missing values as the present value labelled most alike, matched on
        the :func:`edge_sample` rows; without them, every feature with a
        missing value gets an indicator, and its missing values read as its
        mean.
        """
        encoding = None
        listed = rows
        n_rows = X.shape[0] if rows is None else len(rows)
        if kind == "piecewise":
            rows = edge_sample(n_rows, rows)
            encoding = PiecewiseEncoding.fit(X, rows, n_bins=piecewise_bins(n_rows))
        moments = feature_moments(kind, X, rows, encoding)
        telling = fill_from = None
        if labels is not None and not np.isscalar(moments[-1]):  # only data with NaN pays for it
            listed = np.arange(X.shape[0]) if listed is None else listed
            y, offsets = labels
            telling = telling_features(missingness_evidence(X, listed, y, offsets))
            sampled = edge_sample(n_rows)
            fill_from = (X, listed[sampled], within_query_residuals(y, offsets)[sampled])
        return cls.from_moments(kind, moments, X.dtype, encoding, telling, fill_from)

    @classmethod
    def from_moments(cls, kind, moments, dtype, encoding=None, telling=None, fill_from=None):
        """The scaling of ``(count, mean, squares, lowest, highest, missing)`` statistics (see
        :func:`feature_moments`; those of several row sets merge with
        :func:`merge_moments`), in ``dtype``. Features with a missing value
        among the counted rows get an indicator input (see the class), those
        of the boolean mask ``telling`` only, when given (see
        :func:`~._missingness.telling_features`). ``fill_from``, the
        arguments ``(X, rows, residuals)`` of
        :func:`~._missingness.missing_fill`, gives the indicated features'
        ``imputed`` values; without it they read as their means."""
        count, mean, squares, lowest, highest, missing = moments
        present = count - missing  # per input: the rows whose value it has
        scale = np.sqrt(squares / np.maximum(present, 1))
        overflowed = ~(np.isfinite(mean) & np.isfinite(scale))
        if encoding is not None:
            # Bins whose edges or width overflow X's dtype: their inputs are
            # NaN where (x - lower) overflows, which the moments above read
            # as missing values.
            n_edges = np.fromiter(map(len, encoding.edges), dtype=np.int64, count=len(encoding.edges))
            multi_valued = np.repeat(n_edges > 1, encoding._bins_per_feature)
            overflowed |= ~np.isfinite(encoding.lower) | (multi_valued & ~np.isfinite(encoding.width))
        if lowest is not None:
            # Rows are centred in X's dtype (x - mean, then times 1 / scale):
            # float32 values of both signs near its limit (3.4e38) give a
            # deviation past it, which float64 moments do not see. The rows
            # would turn into inf, the network's products into NaN, and the
            # fit would end in "non-finite weights" after numpy warnings.
            with np.errstate(over="ignore", invalid="ignore"):
                deviation = np.maximum(highest - mean, mean - lowest)
            overflowed |= ~(deviation <= np.finfo(dtype).max)
        if overflowed.any():
            # Values beyond ~1e154 square to inf (only raw features can).
            first = int(np.flatnonzero(overflowed)[0])
            # An encoded input names the column of X it encodes.
            feature = first if encoding is None else int(encoding.source[first])
            others = {
                "standard": '"piecewise" (quantile bins) or "log1p"',
                "piecewise": '"log1p"',
                "log1p": '"piecewise" (quantile bins)',
            }[kind]
            if np.dtype(dtype) == np.float64:
                where, remedy = "float64", f"Use feature_scaling={others}, or rescale the feature."
            else:  # float32 cannot hold what float64 overflows on: its own range was exceeded
                where = f"{np.dtype(dtype)}, the dtype of X"
                remedy = f"Give X as float64, use feature_scaling={others}, or rescale the feature."
            raise ValueError(
                f"feature_scaling={kind!r} cannot standardize feature {feature} of X: "
                f"its values reach so far that their scaled values, mean or variance overflow {where}. "
                f"{remedy}"
            )
        if lowest is not None:
            # Squared deviations that underflowed: read as constant below,
            # as a spread under the dtype's smallest normal number is.
            underflowed = (squares == 0.0) & (highest > lowest)
            if underflowed.any():
                _warn_flattened(
                    np.flatnonzero(underflowed).tolist(), "about 1e-154 (its variance underflows float64)",
                    'Rescale it, or use feature_scaling="piecewise".',
                )
        # Constant features are only centred, as StandardScaler does: a
        # spread within the rounding of count additions of the mean is 0.
        scale[scale <= np.maximum(present, 1) * np.finfo(np.float64).eps * np.abs(mean)] = 1.0
        # Rows are multiplied by 1 / scale, which a spread below the
        # smallest normal number of the dtype (or 0 once cast) would make
        # infinite: such a feature counts as constant too.
        flattened = (scale > 0.0) & (scale < np.finfo(dtype).tiny)
        if flattened.any() and encoding is None:  # the encoding warned when it placed its edges
            _warn_flattened(np.flatnonzero(flattened).tolist(), *_below_normal(dtype))
        scale[scale < np.finfo(dtype).tiny] = 1.0
        indicated, indicator_mean, indicator_scale = _indicator_moments(count, missing, encoding, telling)
        mean, scale = np.concatenate([mean, indicator_mean]), np.concatenate([scale, indicator_scale])
        imputed = None if fill_from is None else missing_fill(*fill_from, indicated)
        return cls(kind, mean.astype(dtype), scale.astype(dtype), encoding, indicated, imputed)

    def rows(self, X, index, dtype=None):
        """The rows of ``X`` at ``index`` as the network takes them: a new
        array (``X`` is never modified), transformed, and standardized when
        dense (and CSR too dense to stay sparse, a block at a time: see
        :func:`stays_sparse`), computed in ``X``'s dtype and stored in
        ``dtype`` (default: ``X``'s; a float32 network's rows are rounded
        once, after scaling)."""
        dtype = X.dtype if dtype is None else np.dtype(dtype)
        if sp.issparse(X) and not stays_sparse(X):  # then the dense path, fused below
            return self.rows(gather_rows(X, index), slice(None), dtype)
        if self.kind in ("standard", "piecewise") and _has_kernel_dtype(X):
            if not _gathers_in_one_pass(X, index):
                # Fortran order (a DataFrame's values), read-only (pandas 3,
                # a memory map), strided: the rows copied into C order first,
                # one pass over the raw rows, then the fused pass (numpy's six
                # passes over the wider encoded block took twice as long).
                X, index = np.require(X[index], requirements=["C", "W"]), slice(None)
            rows = np.arange(*index.indices(X.shape[0])) if isinstance(index, slice) else index
            block = np.empty((len(rows), self.n_inputs), dtype=dtype)
            # The kernels fill the transformed inputs (the first columns).
            if self.encoding is None:
                _gather_standardized(X, rows, self.mean, self.inv_scale, self.fill, block)
            else:
                e = self.encoding
                bounds = np.array([0, 1], dtype=X.dtype)
                _gather_encoded(X, rows, e.source, e.lower, e.inv_width, e.zero_level, bounds,
                                self.mean, self.inv_scale, self.fill, block)
            if len(self.indicated):
                indicators = np.isnan(X[np.ix_(rows, self.indicated)]).astype(X.dtype)
                first = self.n_transformed
                indicators -= self.mean[first:]
                indicators *= self.inv_scale[first:]
                block[:, first:] = indicators
            return block
        block = transformed_rows(self.kind, X, index, self.encoding, self.indicated)
        if sp.issparse(block):
            missing = np.isnan(block.data)
            if missing.any():
                # At the input's mean, which the folded first layer maps to
                # 0, plus the fill's deviation from it.
                if np.may_share_memory(block.data, X.data):
                    block = block.copy()
                inputs = block.indices[missing]
                block.data[missing] = self.mean[inputs] + self.fill[inputs] * self.scale[inputs]
            return block.astype(dtype, copy=False)
        if np.may_share_memory(block, X):
            block = block.copy()
        block -= self.mean
        block *= self.inv_scale
        missing = np.isnan(block)
        if missing.any():
            block[missing] = np.broadcast_to(self.fill, block.shape)[missing]
        return block.astype(dtype, copy=False)

    def network_params(self, X, coefs, intercepts):
        """The parameters to run on rows of ``X`` given by :meth:`rows`:
        the model's own for dense rows (already standardized), the first
        layer folded for CSR that stays sparse (:func:`stays_sparse`)."""
        if not stays_sparse(X):
            return coefs, intercepts
        W, b = coefs[0], intercepts[0]
        # In the network's precision, which may be narrower than X's.
        mean, scale = self.mean.astype(W.dtype, copy=False), self.scale.astype(W.dtype, copy=False)
        W_eff = W / scale[:, None]
        b_eff = b - (mean / scale) @ W
        return [W_eff, *coefs[1:]], [b_eff, *intercepts[1:]]

    def model_gradient(self, X, coef_grads, intercept_grads):
        """Gradients with respect to :meth:`network_params` -> gradients with
        respect to the model's own parameters, in place."""
        if stays_sparse(X):
            dtype = coef_grads[0].dtype
            mean, scale = self.mean.astype(dtype, copy=False), self.scale.astype(dtype, copy=False)
            coef_grads[0] /= scale[:, None]
            coef_grads[0] -= np.outer(mean / scale, intercept_grads[0])
        return coef_grads, intercept_grads


def _has_kernel_dtype(X):
    """Whether ``X`` is a 2-D array of a float dtype the gather kernels are
    compiled for."""
    return isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype in (np.float32, np.float64)


def _gathers_in_one_pass(X, index):
    """Whether :func:`_gather_standardized` takes ``X[index]``: the one array
    type it is compiled for (a read-only or strided ``X`` would compile a
    second copy; :meth:`InputScaling.rows` copies their rows into C order
    first, and CSR takes the numpy path)."""
    if not _has_kernel_dtype(X):
        return False
    if not (X.flags.c_contiguous and X.flags.writeable):
        return False
    if isinstance(index, slice):
        return index.step in (None, 1)
    return isinstance(index, np.ndarray) and index.dtype == np.int64 and index.flags.c_contiguous


@jit(in_order=True)
def _gather_standardized(X, rows, mean, inv_scale, fill, out):
    """``out[i] = (X[rows[i]] - mean) * inv_scale``: the gather and the
    standardization in one pass over the rows (numpy's gather, subtract
    and divide are three passes over a minibatch). Same operations in the same
    order, so the same bits as the numpy path (tested). A missing value
    (NaN) gives ``fill`` (see :attr:`InputScaling.fill`). ``out`` may be
    wider than ``X`` (its missing indicators come after): only its first
    columns are written."""
    for i in range(rows.shape[0]):
        source = X[rows[i]]
        for j in range(source.shape[0]):
            value = source[j]
            out[i, j] = (value - mean[j]) * inv_scale[j] if value == value else fill[j]


@jit(in_order=True)
def _gather_encoded(X, rows, source, lower, inv_width, zero_level, bounds, mean, inv_scale, fill, out):
    """``out[i] = (encoded(X[rows[i]]) - mean) * inv_scale``: the gather, the
    piecewise encoding and the standardization in one pass (numpy takes
    six passes over a block several times wider than the rows). The same
    operations in the same order as the numpy path, in X's dtype (``bounds``
    holds 0 and 1 in it), so the same bits (tested). A missing value (NaN)
    gives its inputs ``fill`` (see :attr:`InputScaling.fill`); only the
    first ``len(source)`` columns of ``out`` are written (its missing
    indicators come after)."""
    zero, one = bounds[0], bounds[1]
    for i in range(rows.shape[0]):
        source_row, encoded = X[rows[i]], out[i]
        # Gather first, then a loop without indirect loads, which LLVM
        # vectorizes (faster than one fused loop).
        for c in range(source.shape[0]):
            encoded[c] = source_row[source[c]]
        for c in range(source.shape[0]):
            value = encoded[c]
            fraction = (value - lower[c]) * inv_width[c]
            fraction = min(max(fraction, zero), one)
            encoded[c] = ((fraction - zero_level[c]) - mean[c]) * inv_scale[c] if value == value else fill[c]


def feature_moments(kind, X, rows=None, encoding=None):
    """``(count, mean, squares, lowest, highest, missing)`` of the transformed
    rows ``X[rows]`` (all rows with ``rows=None``) in float64: the number of
    rows, each feature's (each encoded input's) mean and its sum of squared
    deviations over the rows where it is not missing, read block by block,
    each feature's smallest and largest value (None for encoded inputs,
    which span [-1, 1]): a feature may vary by so little (below ~1e-154)
    that its squared deviations underflow to 0, and only its range tells it
    from a constant one; and the number of rows where each input is missing
    (NaN), an array, or the int 0 when none is."""
    n_rows = X.shape[0] if rows is None else len(rows)
    n_inputs = X.shape[1] if encoding is None else encoding.n_inputs
    moments = (0, np.zeros(n_inputs), np.zeros(n_inputs), None, None, 0)
    step = block_rows(n_inputs)
    if stays_sparse(X):
        # Each block also costs a pass over every input (its mean, squares
        # and extremes): blocks of enough rows that their stored values, not
        # those passes, set the time (wide CSR: thousands of rows, not 16).
        stored_per_row = max(X.nnz / max(X.shape[0], 1) * n_inputs / max(X.shape[1], 1), 1.0)
        step = max(step, int(max(BLOCK_VALUES, n_inputs) / stored_per_row))
    # Features whose values reach past ~1e154 overflow here: the moments
    # come out non-finite, and InputScaling.from_moments says so with a
    # remedy, so numpy's RuntimeWarnings would only be noise before it.
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for start in range(0, n_rows, step):
            stop = min(start + step, n_rows)
            block = transformed_rows(kind, X, slice(start, stop) if rows is None else rows[start:stop], encoding)
            extremes = (None, None) if encoding is not None else (_column_extreme(block, "min"),
                                                                   _column_extreme(block, "max"))
            mean, squares, missing = _mean_and_squares(block)
            moments = merge_moments(moments, (stop - start, mean, squares, *extremes, missing))
    return moments


def _column_extreme(block, which):
    """Each column's smallest or largest value (the implicit zeros of CSR
    included), missing values (NaN) left out; 0 for a column of NaN only."""
    values = block.data if sp.issparse(block) else block
    if not np.isnan(values).any():
        extreme = getattr(block, which)(axis=0)
        return np.asarray(extreme.toarray() if sp.issparse(extreme) else extreme, dtype=np.float64).ravel()
    pick = np.fmin if which == "min" else np.fmax  # (they skip NaN)
    if not sp.issparse(block):
        extreme = pick.reduce(np.asarray(block, dtype=np.float64), axis=0)
    else:
        present = ~np.isnan(block.data)
        extreme = np.full(block.shape[1], np.nan)
        pick.at(extreme, block.indices[present], block.data[present].astype(np.float64))
        implicit = np.bincount(block.indices, minlength=block.shape[1]) < block.shape[0]
        extreme[implicit] = pick(extreme[implicit], 0.0)
    extreme[np.isnan(extreme)] = 0.0
    return extreme


def merge_moments(a, b):
    """``(count, mean, squares, lowest, highest, missing)`` of the union of
    two sets of rows, from theirs (Chan, Golub and LeVeque's pairwise update,
    over the rows where each input is present; the extremes may be None, as
    for encoded inputs)."""
    (n_a, mean_a, squares_a, lowest_a, highest_a, missing_a) = a
    (n_b, mean_b, squares_b, lowest_b, highest_b, missing_b) = b
    if n_b == 0:
        return a
    count, missing = n_a + n_b, missing_a + missing_b
    delta = mean_b - mean_a
    if np.isscalar(missing) and missing == 0:
        total = count
        mean = mean_a + delta * (n_b / total)
        squares = squares_a + squares_b + delta**2 * (n_a * n_b / total)
    else:  # per input, over its present values; an input missing from both stays at 0
        present_a, present_b = n_a - missing_a, n_b - missing_b
        total = present_a + present_b
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = mean_a + np.where(total > 0, delta * (present_b / total), 0.0)
            squares = squares_a + squares_b + np.where(total > 0, delta**2 * (present_a * present_b / total), 0.0)
    lowest, highest = _extreme(np.minimum, lowest_a, lowest_b), _extreme(np.maximum, highest_a, highest_b)
    return count, mean, squares, lowest, highest, missing


def _extreme(pick, a, b):
    return b if a is None else a if b is None else pick(a, b)


def transformed_rows(kind, X, index, encoding=None, indicated=None):
    """``X[index]`` with the elementwise part of ``kind`` applied (on a copy:
    ``X`` is never modified), or encoded by ``encoding``, then the missing
    indicators of the features ``indicated`` (when given and not empty;
    see :func:`missing_indicators`); missing values stay NaN. CSR too dense
    to stay sparse is gathered dense (:func:`gather_rows`)."""
    block = gather_rows(X, index)
    indicators = missing_indicators(block, indicated) if indicated is not None and len(indicated) else None
    if kind == "piecewise":
        block = encoding.transform(block)
    elif kind == "log1p":
        stored = block.data if sp.issparse(block) else block
        if np.may_share_memory(stored, X.data if sp.issparse(X) else X):
            block = block.copy()
        signed_log1p(block)
    if indicators is None:
        return block
    if sp.issparse(block):
        return sp.hstack([block, indicators], format="csr")
    return np.hstack([block, indicators])


def missing_indicators(block, indicated):
    """1 where the value of feature ``indicated[j]`` of a dense or CSR row
    block is missing (NaN), 0 elsewhere: an array (or CSR for CSR) of shape
    (n_rows, len(indicated)) in the block's dtype."""
    if not sp.issparse(block):
        return np.isnan(block[:, indicated]).astype(block.dtype)
    columns = sp.csr_matrix(block)[:, indicated]
    columns.data = np.isnan(columns.data).astype(block.dtype)
    columns.eliminate_zeros()
    return columns


def _indicator_moments(count, missing, encoding, telling=None):
    """The features with a missing value among ``count`` rows (from the
    inputs' ``missing`` counts, see :func:`feature_moments`) and in the mask
    ``telling`` (when given), and the mean and standard deviation of their
    indicators (a share p of ones: p and sqrt(p (1 - p)); 1 where that is 0,
    as for a constant input)."""
    none = np.zeros(0)
    if np.isscalar(missing):
        return np.zeros(0, dtype=np.int64), none, none
    per_feature = np.asarray(missing) if encoding is None else np.asarray(missing)[encoding.offsets[:-1]]
    indicated = np.flatnonzero((per_feature > 0) if telling is None else (per_feature > 0) & telling)
    share = per_feature[indicated] / max(count, 1)
    scale = np.sqrt(share * (1.0 - share))
    scale[scale < np.finfo(np.float32).tiny] = 1.0
    return indicated, share, scale


def _mean_and_squares(block):
    """Column means and sums of squared deviations of a dense or CSR block,
    in float64, over each column's present (not NaN) values, and each
    column's number of NaN (the int 0 when the block has none)."""
    n = block.shape[0]
    values = block.data if sp.issparse(block) else block
    if np.isnan(values).any():
        return _mean_and_squares_with_missing(block)
    if sp.issparse(block):
        block = sp.csr_matrix(block, dtype=np.float64)
        mean = np.asarray(block.sum(axis=0)).ravel() / n
        # Stored values: (x - mean)^2; the n - nnz implicit zeros: mean^2 each.
        deviations = block.data - mean[block.indices]
        squares = np.bincount(block.indices, weights=deviations**2, minlength=block.shape[1])
        n_zero = n - np.bincount(block.indices, minlength=block.shape[1])
        return mean, squares + n_zero * mean**2, 0
    block = np.asarray(block, dtype=np.float64)
    mean = block.mean(axis=0)
    return mean, ((block - mean) ** 2).sum(axis=0), 0


def _mean_and_squares_with_missing(block):
    """:func:`_mean_and_squares` of a block that holds NaN."""
    n, n_columns = block.shape
    if sp.issparse(block):
        block = sp.csr_matrix(block, dtype=np.float64)
        present = ~np.isnan(block.data)
        columns, values = block.indices[present], block.data[present]
        missing = np.bincount(block.indices[~present], minlength=n_columns)
        count = n - missing
        mean = np.bincount(columns, weights=values, minlength=n_columns) / np.maximum(count, 1)
        squares = np.bincount(columns, weights=(values - mean[columns]) ** 2, minlength=n_columns)
        n_zero = n - np.bincount(block.indices, minlength=n_columns)  # stored NaN are no zeros
        return mean, squares + n_zero * mean**2, missing
    block = np.asarray(block, dtype=np.float64)
    absent = np.isnan(block)
    missing = absent.sum(axis=0)
    filled = np.where(absent, 0.0, block)
    mean = filled.sum(axis=0) / np.maximum(n - missing, 1)
    deviations = np.where(absent, 0.0, block - mean)
    return mean, (deviations**2).sum(axis=0), missing


class PiecewiseEncoding:
    """Each feature encoded piecewise-linearly over its quantile bins.

    A feature whose training quantiles give the distinct bin edges
    e_0 < e_1 < ... < e_m becomes m inputs, one per bin t = 1..m::

        u_t(x) = c_t(x) - c_t(0),   c_t(x) = clip((x - e_{t-1}) / (e_t - e_{t-1}), 0, 1)

    c_t fills up as x crosses bin t, so the first layer's weights on a
    feature's inputs make a piecewise-linear function of it, with a kink at
    every edge: the network gets the thresholds a tree would split at
    without having to learn them, and values beyond the training range
    are clipped to it. Subtracting c_t(0), a constant, changes nothing after
    standardization but maps 0 to 0, so sparse rows stay sparse. A feature
    with one distinct value keeps one input that is always 0 (nothing
    learnt from training can depend on it). Gorishniy, Rubachev and Babenko
    (NeurIPS 2022, "On Embeddings for Numerical Features in Tabular Deep
    Learning") call this the piecewise linear encoding.

    Parameters
    ----------
    edges : list of ndarray
        The distinct bin edges of each feature, increasing, in X's dtype.
    dtype : numpy dtype
        Float type of the encoded inputs.
    """

    def __init__(self, edges, dtype):
        self.edges = edges
        lower, width, bins = _bins_of(edges)
        self.source = np.repeat(np.arange(len(edges)), bins)
        self.offsets = np.concatenate([[0], np.cumsum(bins)])
        # Edges beyond float32's range (or an infinite width) come out
        # non-finite here, and fitting reports them as above.
        with np.errstate(over="ignore", invalid="ignore"):
            self.lower = lower.astype(dtype)
            self.width = width.astype(dtype)
            # Computed as the inputs are, so 0 encodes to exactly 0.
            self.zero_level = np.clip((0 - self.lower) * self.inv_width, 0, 1)

    @property
    def n_inputs(self):
        return len(self.lower)

    @functools.cached_property  # computed once: every minibatch reads it
    def inv_width(self):
        """1 / width, in its dtype (0 for a one-value feature's infinite
        bin): inputs are (x - lower) * inv_width, a multiplication per value
        instead of a division."""
        return 1.0 / self.width

    @functools.cached_property
    def _bins_per_feature(self):
        return np.diff(self.offsets)

    @classmethod
    def fit(cls, X, rows=None, n_bins=None):
        """Edges at the quantiles 0, 1/n_bins, ..., 1 of each feature over
        the rows ``X[rows]`` (at most ``EDGE_SAMPLE_ROWS`` of them, evenly
        spaced), duplicates removed. ``n_bins=None``: ``piecewise_bins`` of
        the number of rows."""
        n_rows = X.shape[0] if rows is None else len(rows)
        if n_bins is None:
            n_bins = piecewise_bins(n_rows)
        sample = edge_sample(n_rows, rows)
        levels = np.linspace(0.0, 1.0, n_bins + 1)
        # Values ~1e308 apart overflow np.quantile's interpolation into
        # non-finite edges, which fitting reports with a remedy (their
        # inputs' moments come out non-finite): numpy's warnings are noise.
        with np.errstate(over="ignore", invalid="ignore"):
            quantiles = np.array(list(_column_quantiles(X, sample, levels))).astype(X.dtype)
        edges = _distinct_edges_of_all(quantiles)
        # (Quantiles increase: more than one value iff the first and last differ.)
        one_edge = np.fromiter(map(len, edges), dtype=np.int64, count=len(edges)) == 1
        flattened = np.flatnonzero(one_edge & (quantiles[:, 0] != quantiles[:, -1])).tolist()
        if flattened:
            _warn_flattened(flattened, *_below_normal(X.dtype))
        return cls(edges, X.dtype)

    def transform(self, block):
        """Encoded rows of a dense or CSR block (a new array or matrix)."""
        if sp.issparse(block):
            block = sp.csr_matrix(block)
            if not block.has_canonical_format:  # a duplicate entry encodes as its sum
                block = block.copy()
                block.sum_duplicates()
            return self._transform_csr(block)
        encoded = np.take(block, self.source, axis=1)  # C order (block[:, source] is not)
        encoded -= self.lower
        encoded *= self.inv_width
        np.clip(encoded, 0, 1, out=encoded)
        encoded -= self.zero_level
        return encoded

    def _transform_csr(self, block):
        # Every stored value x of feature j becomes the inputs of j's bins,
        # in place of x, so row i's entries stay together.
        per_value = self._bins_per_feature[block.indices]
        value_of = np.repeat(np.arange(block.nnz), per_value)
        first_of_value = np.repeat(np.cumsum(per_value) - per_value, per_value)
        columns = self.offsets[block.indices][value_of] + (np.arange(len(value_of)) - first_of_value)
        values = block.data[value_of] - self.lower[columns]
        values *= self.inv_width[columns]
        np.clip(values, 0, 1, out=values)
        values -= self.zero_level[columns]
        indptr = np.concatenate([[0], np.cumsum(per_value)])[block.indptr]
        encoded = sp.csr_matrix((values, columns, indptr), shape=(block.shape[0], self.n_inputs))
        encoded.eliminate_zeros()  # most inputs of a value are 0
        return encoded


def _warn_flattened(features, limit, remedy):
    # Silently a constant input otherwise: every row would score the same.
    more = f" (and {len(features) - 1} more)" if len(features) > 1 else ""
    warnings.warn(
        f"Feature {features[0]}{more} of X varies only by less than {limit}, so the input "
        f"scaling reads it as constant. {remedy}",
        UserWarning,
        stacklevel=2,
    )


def _below_normal(dtype):
    """:func:`_warn_flattened`'s limit and remedy for a spread below the
    smallest normal number of ``dtype``."""
    remedy = "Rescale it." if np.dtype(dtype) == np.float64 else "Rescale it, or give X as float64."
    return f"{np.dtype(dtype)}'s smallest normal number ({np.finfo(dtype).tiny:g})", remedy


def _distinct_edges_of_all(quantiles):
    """:func:`_distinct_edges` of every row of ``quantiles`` (one row per
    feature, increasing), as a list of arrays: at once for the rows whose
    steps are all 0 or at least the smallest normal number (which keep
    exactly their distinct values), one by one for the others."""
    with np.errstate(over="ignore", invalid="ignore"):
        steps = np.diff(quantiles.astype(np.float64), axis=1)
    tiny = np.finfo(quantiles.dtype).tiny
    keep = np.concatenate([np.ones((len(quantiles), 1), dtype=bool), steps > 0], axis=1)
    kept = quantiles[keep]
    edges = np.split(kept, np.cumsum(keep.sum(axis=1))[:-1])
    for j in np.flatnonzero(~((steps == 0) | (steps >= tiny)).all(axis=1)):
        edges[j] = _distinct_edges(quantiles[j])
    return edges


def _distinct_edges(quantiles):
    """The increasing distinct values of ``quantiles``, where values closer
    than the dtype's smallest normal number to the previous one kept count
    as one: a narrower bin's reciprocal width would overflow (inputs are
    ``(x - lower) * (1 / width)``)."""
    values = np.unique(quantiles)
    tiny = np.finfo(values.dtype).tiny
    kept = values[:1].tolist()
    for value in values[1:]:
        if float(value) - kept[-1] >= tiny:
            kept.append(float(value))
    return np.array(kept, dtype=values.dtype)


def _bins_of(edges):
    """The bins between each feature's ``edges`` (a list of arrays), all
    features' in one go: lower edges and widths (float64), and each
    feature's number of bins. A feature with one value has one bin of
    infinite width (an input always 0)."""
    sizes = np.fromiter(map(len, edges), dtype=np.int64, count=len(edges))
    values = np.concatenate(edges).astype(np.float64) if len(edges) else np.zeros(0)
    bins = np.maximum(sizes - 1, 1)
    first_edge = np.cumsum(sizes) - sizes
    first_bin = np.cumsum(bins) - bins
    lower_at = np.repeat(first_edge, bins) + (np.arange(bins.sum()) - np.repeat(first_bin, bins))
    lower = values[lower_at]
    one_value = np.repeat(sizes < 2, bins)
    # Edges ~1e308 apart give an infinite width; the moments of such a
    # feature's inputs are then non-finite, which fitting reports.
    with np.errstate(over="ignore"):
        width = np.where(one_value, np.inf, values[np.minimum(lower_at + 1, len(values) - 1)] - lower)
    return lower, width, bins


def _column_quantiles(X, sample, levels):
    """The quantiles at ``levels`` of each column of ``X[sample]`` (dense or
    CSR; float64), one array per column, read a few columns at a time so
    that no copy of the sample's rows is made."""
    if sp.issparse(X):
        yield from _sparse_column_quantiles(X, sample, levels)
        return
    step = max(8, BLOCK_VALUES // max(len(sample), 1))
    for start in range(0, X.shape[1], step):
        block = X[sample, start:start + step].astype(np.float64)
        if not np.isnan(block).any():
            yield from np.quantile(block, levels, axis=0).T
            continue
        with warnings.catch_warnings():  # "All-NaN slice": such a column is read as 0
            warnings.simplefilter("ignore", RuntimeWarning)
            quantiles = np.nanquantile(block, levels, axis=0).T
        quantiles[np.isnan(quantiles)] = 0.0
        yield from quantiles


def _sparse_column_quantiles(X, sample, levels):
    """:func:`_column_quantiles` of CSR in time that follows its stored
    values, not rows times columns: np.quantile's very numbers (but for the
    sign of a zero, which np.quantile's interpolation may flip and no
    encoding reads).

    A column's sorted values are its negative stored values, then its zeros
    (implicit and stored), then its positive ones, so any order statistic is
    read off the sorted stored values. np.quantile interpolates between the
    two order statistics around ``level * (n - 1)``; where every order
    statistic near that position is one value (always at levels 0 and 1,
    and at every level inside a run of zeros, as in most columns of sparse
    data) that value is its result exactly, whatever the interpolation's
    rounding. Only the other columns, which store a share of their rows
    near some level, are padded with their zeros and given to np.quantile.
    """
    columns = sp.csc_matrix(X[sample])
    columns.sum_duplicates()
    n_rows, n_columns = len(sample), X.shape[1]
    starts, counts = columns.indptr[:-1], np.diff(columns.indptr)
    column_of = np.repeat(np.arange(n_columns), counts)
    order = np.lexsort((columns.data, column_of))  # within each column, by value
    values = columns.data[order].astype(np.float64)
    n_negative = np.bincount(column_of[values < 0], minlength=n_columns)
    n_implicit = n_rows - counts
    # Columns with missing values (NaN) take np.nanquantile, below.
    with_missing = np.bincount(column_of[np.isnan(values)], minlength=n_columns) > 0

    at = levels * (n_rows - 1)
    near = np.clip(np.floor(at).astype(np.int64)[:, None] + np.arange(-1, 3), 0, n_rows - 1).ravel()
    ends = np.flatnonzero((levels == 0.0) | (levels == 1.0))  # no interpolation there: min and max
    step = max(BLOCK_VALUES // near.size, 1)  # columns at a time, to bound the arrays below
    for first in range(0, n_columns, step):
        chunk = slice(first, min(first + step, n_columns))

        def order_statistic(position, chunk=chunk):  # (columns of the chunk, m) positions
            below = position < n_negative[chunk, None]
            above = position >= (n_negative[chunk] + n_implicit[chunk])[:, None]
            index = starts[chunk, None] + np.where(below, position, position - n_implicit[chunk, None])
            stored = values[np.clip(index, 0, max(len(values) - 1, 0))] if len(values) else 0.0
            return np.where(below | above, stored, 0.0)

        n_chunk = chunk.stop - chunk.start
        statistics = order_statistic(np.broadcast_to(near, (n_chunk, near.size)))
        statistics = statistics.reshape(n_chunk, len(levels), -1)
        quantiles = statistics[:, :, 0].copy()
        settled = (statistics == quantiles[:, :, None]).all(axis=2)
        quantiles[:, ends] = order_statistic(np.broadcast_to(np.rint(at[ends]).astype(np.int64), (n_chunk, len(ends))))
        settled[:, ends] = True
        settled[with_missing[chunk]] = False
        for j in np.flatnonzero(~settled.all(axis=1)):
            column = chunk.start + j
            stored = values[starts[column]:starts[column] + counts[column]]
            column_values = np.concatenate([stored, np.zeros(n_implicit[column])])
            if not with_missing[column]:
                quantiles[j] = np.quantile(column_values, levels)
            elif np.isnan(column_values).all():
                quantiles[j] = 0.0  # as for a dense column of NaN only
            else:
                quantiles[j] = np.nanquantile(column_values, levels)
        yield from quantiles
