"""Input scaling fitted inside the ranker, so raw features need no scaler.

``feature_scaling="log1p"`` maps every feature value x to
sign(x) * log1p(|x|), then standardizes each feature with the mean and
standard deviation of the training rows; ``"standard"`` only standardizes;
``None`` leaves the inputs alone. The log keeps heavy-tailed counts (BM25
sums, click counts, document lengths) from swamping the rest, and maps 0
to 0, so sparse rows stay sparse (Qin et al., ICLR 2021, used the same
transform for their neural rankers).

Dense rows are standardized as they are gathered (each minibatch, or each
block of ``predict``, is a copy anyway). CSR rows are not, since centring
would densify them: for them the standardization is folded into the first
layer. With z = (t - mean) / scale for the transformed row t,

    z @ W + b = t @ (W / scale[:, None]) + (b - (mean / scale) @ W),

so the network runs on t with *effective* first-layer weights. Folding
cancels when a feature's mean dwarfs its spread, which float64 absorbs but
float32 may not: centring dense rows first avoids that. Either way the model's
own weights ``coefs_[0]`` are those of the standardized inputs, which is where
the L2 penalty and the initialization make sense, and ``X`` is never copied
as a whole.
"""

import numpy as np
import scipy.sparse as sp

from ._jit import jit

#: Options of ``feature_scaling``.
FEATURE_SCALINGS = ("log1p", "standard")
#: Values (rows x features) read at a time when fitting the statistics or
#: predicting: bounds the temporary copies (~1 MB in float64).
BLOCK_VALUES = 2**17


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
    """A fitted input scaling: the elementwise transform and the
    standardization statistics of the transformed features.

    Parameters
    ----------
    kind : {"log1p", "standard"}
    mean : ndarray of shape (n_features,)
        Mean of each transformed feature over the training rows.
    scale : ndarray of shape (n_features,)
        Its standard deviation; 1 for a constant feature.
    """

    def __init__(self, kind, mean, scale):
        self.kind, self.mean, self.scale = kind, mean, scale

    @classmethod
    def fit(cls, kind, X, rows=None):
        """Statistics of the (transformed) rows ``X[rows]`` of a dense or CSR
        ``X``, read ``BLOCK_ROWS`` rows at a time, in float64, and returned in
        ``X``'s dtype. ``rows=None`` reads every row in order.

        Each block's mean and variance are merged into the running ones with
        Chan et al.'s pairwise update (:func:`merge_moments`), which does not
        cancel the way ``E[x**2] - E[x]**2`` does when a feature's mean
        dwarfs its spread.
        """
        return cls.from_moments(kind, feature_moments(kind, X, rows), X.dtype)

    @classmethod
    def from_moments(cls, kind, moments, dtype):
        """The scaling of ``(count, mean, squares)`` statistics (see
        :func:`feature_moments`; those of several row sets merge with
        :func:`merge_moments`), in ``dtype``."""
        count, mean, squares = moments
        scale = np.sqrt(squares / max(count, 1))
        # Constant features are only centred, as StandardScaler does: a
        # spread within the rounding of count additions of the mean is 0.
        scale[scale <= max(count, 1) * np.finfo(np.float64).eps * np.abs(mean)] = 1.0
        scale[scale == 0.0] = 1.0
        return cls(kind, mean.astype(dtype), scale.astype(dtype))

    def rows(self, X, index):
        """The rows of ``X`` at ``index`` as the network takes them: a new
        array (``X`` is never modified), transformed, and standardized when
        dense."""
        if self.kind == "standard" and _gathers_in_one_pass(X, index):
            rows = np.arange(*index.indices(X.shape[0])) if isinstance(index, slice) else index
            block = np.empty((len(rows), X.shape[1]), dtype=X.dtype)
            _gather_standardized(X, rows, self.mean, self.scale, block)
            return block
        block = transformed_rows(self.kind, X, index)
        if sp.issparse(block):
            return block
        if np.may_share_memory(block, X):
            block = block.copy()
        block -= self.mean
        block /= self.scale
        return block

    def network_params(self, X, coefs, intercepts):
        """The parameters to run on rows of ``X`` given by :meth:`rows`:
        the model's own for dense rows (already standardized), the first
        layer folded for CSR rows."""
        if not sp.issparse(X):
            return coefs, intercepts
        W, b = coefs[0], intercepts[0]
        W_eff = W / self.scale[:, None]
        b_eff = b - (self.mean / self.scale) @ W
        return [W_eff, *coefs[1:]], [b_eff, *intercepts[1:]]

    def model_gradient(self, X, coef_grads, intercept_grads):
        """Gradients with respect to :meth:`network_params` -> gradients with
        respect to the model's own parameters, in place."""
        if sp.issparse(X):
            coef_grads[0] /= self.scale[:, None]
            coef_grads[0] -= np.outer(self.mean / self.scale, intercept_grads[0])
        return coef_grads, intercept_grads


def _gathers_in_one_pass(X, index):
    """Whether :func:`_gather_standardized` takes ``X[index]``: the one array
    type it is compiled for (a read-only or strided ``X`` would compile a
    second copy; those, and CSR, take the numpy path)."""
    if not isinstance(X, np.ndarray) or X.dtype not in (np.float32, np.float64):
        return False
    if not (X.flags.c_contiguous and X.flags.writeable and X.ndim == 2):
        return False
    if isinstance(index, slice):
        return index.step in (None, 1)
    return isinstance(index, np.ndarray) and index.dtype == np.int64 and index.flags.c_contiguous


@jit(in_order=True)
def _gather_standardized(X, rows, mean, scale, out):
    """``out[i] = (X[rows[i]] - mean) / scale``: the gather and the
    standardization in one pass over the rows (numpy's gather, subtract
    and divide are three passes over a minibatch; the one pass took about
    60 % of their time on MSLR-shaped rows). Same operations in the same
    order, so the same bits as the numpy path (tested)."""
    for i in range(rows.shape[0]):
        source = X[rows[i]]
        for j in range(source.shape[0]):
            out[i, j] = (source[j] - mean[j]) / scale[j]


def feature_moments(kind, X, rows=None):
    """``(count, mean, squares)`` of the transformed rows ``X[rows]`` (all
    rows with ``rows=None``) in float64: the number of rows, each feature's
    mean and its sum of squared deviations, read block by block."""
    n_rows = X.shape[0] if rows is None else len(rows)
    moments = (0, np.zeros(X.shape[1]), np.zeros(X.shape[1]))
    step = block_rows(X.shape[1])
    for start in range(0, n_rows, step):
        stop = min(start + step, n_rows)
        block = transformed_rows(kind, X, slice(start, stop) if rows is None else rows[start:stop])
        moments = merge_moments(moments, (stop - start, *_mean_and_squares(block)))
    return moments


def merge_moments(a, b):
    """``(count, mean, squares)`` of the union of two sets of rows, from
    theirs (Chan, Golub and LeVeque's pairwise update)."""
    (n_a, mean_a, squares_a), (n_b, mean_b, squares_b) = a, b
    if n_b == 0:
        return a
    total = n_a + n_b
    delta = mean_b - mean_a
    mean = mean_a + delta * (n_b / total)
    squares = squares_a + squares_b + delta**2 * (n_a * n_b / total)
    return total, mean, squares


def transformed_rows(kind, X, index):
    """``X[index]`` with the elementwise part of ``kind`` applied (on a copy:
    ``X`` is never modified)."""
    block = X[index]
    if kind == "log1p":
        stored = block.data if sp.issparse(block) else block
        if np.may_share_memory(stored, X.data if sp.issparse(X) else X):
            block = block.copy()
        signed_log1p(block)
    return block


def _mean_and_squares(block):
    """Column means and sums of squared deviations of a dense or CSR block,
    in float64."""
    n = block.shape[0]
    if sp.issparse(block):
        block = sp.csr_matrix(block, dtype=np.float64)
        mean = np.asarray(block.sum(axis=0)).ravel() / n
        # Stored values: (x - mean)^2; the n - nnz implicit zeros: mean^2 each.
        deviations = block.data - mean[block.indices]
        squares = np.bincount(block.indices, weights=deviations**2, minlength=block.shape[1])
        n_zero = n - np.bincount(block.indices, minlength=block.shape[1])
        return mean, squares + n_zero * mean**2
    block = np.asarray(block, dtype=np.float64)
    mean = block.mean(axis=0)
    return mean, ((block - mean) ** 2).sum(axis=0)
