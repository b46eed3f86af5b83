"""Assertions shared by the test modules."""

import contextlib

import numpy as np
import scipy.sparse as sp


def assert_same_training(got, expected):
    """Scores of two fits that differ only in the order of floating-point
    sums (sparse vs dense products, rows of equal label swapped, queries
    summed in another order).

    Each score is exact to a few ulps (~1e-15 relative) per step, but every
    optimizer step passes the difference on, and over the tens of steps of
    these fits a network amplifies it by orders of magnitude (1e-10 was seen
    with another numpy build). 1e-6 of the scores' spread leaves four more
    orders of margin, while a real difference (a lost row, a query split in
    two, a wrong gradient) moves scores by more than 1e-3 of their spread.
    """
    scale = float(np.ptp(expected)) or 1.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * scale)


def whole_gradient(objective, scores, offsets, with_cost=True, n_threads=1):
    """An objective's gradient and per-query costs over every query at once."""
    return objective.gradient(
        scores, np.arange(len(scores)), np.arange(len(offsets) - 1), offsets, with_cost=with_cost,
        n_threads=n_threads,
    )


def assert_gradient_is_the_cost_derivative(objective, scores, offsets, eps=1e-6):
    """The returned gradient against central differences of the summed cost.

    With eps = 1e-6 the truncation error is O(eps^2 * third derivative) and
    the rounding error O(1e-16 * cost / eps) ~ 1e-10: both far inside
    rtol=1e-6, atol=1e-8 for costs of order 1."""
    grad, _ = whole_gradient(objective, scores, offsets)
    numeric = np.empty_like(scores)
    for i in range(len(scores)):
        up, down = scores.copy(), scores.copy()
        up[i] += eps
        down[i] -= eps
        cost_up = whole_gradient(objective, up, offsets)[1].sum()
        cost_down = whole_gradient(objective, down, offsets)[1].sum()
        numeric[i] = (cost_up - cost_down) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


#: The two ways CSR rows reach the network (``_inputs.stays_sparse``): kept
#: sparse with the first layer folded, or densified a block at a time. Which
#: one a CSR takes depends on its share of stored entries; tests of CSR
#: input run both by moving the threshold.
CSR_PATHS = {"folded": 2.0, "dense-blocks": 0.0}


def read_csr_as(monkeypatch, path):
    """Make every CSR input take ``path`` (a key of ``CSR_PATHS``)."""
    from sklearn_ranknet import _inputs

    monkeypatch.setattr(_inputs, "DENSE_BLOCKS_FROM", CSR_PATHS[path])


def csr_with_duplicate_entries(X):
    """Dense ``X`` as a CSR matrix that stores every nonzero twice, as 0.25 v
    and 0.75 v (scipy means the sum: ``toarray()`` gives ``X`` back), in
    sorted row order."""
    rows, columns = np.nonzero(X)
    values = X[rows, columns]
    rows, columns = np.repeat(rows, 2), np.repeat(columns, 2)
    values = np.column_stack([0.25 * values, 0.75 * values]).ravel()
    indptr = np.searchsorted(rows, np.arange(X.shape[0] + 1))
    return sp.csr_matrix((values, columns, indptr), shape=X.shape)


def pretend_blas_had(monkeypatch, n_threads):
    """Make every fit find BLAS at ``n_threads`` threads when it holds BLAS
    to one (``_jit.single_threaded_blas``), whatever this machine has."""
    from sklearn_ranknet import _jit

    @contextlib.contextmanager
    def one_blas_thread():
        yield n_threads

    monkeypatch.setattr(_jit, "_one_blas_thread", one_blas_thread)


def record_map_blocks(monkeypatch, module):
    """Record each call of ``module.map_blocks`` as (blocks, threads), and
    let it run: the list returned fills as the calls come."""
    seen = []
    map_blocks = module.map_blocks

    def recorded(func, blocks, n_threads):
        seen.append((len(blocks), n_threads))
        return map_blocks(func, blocks, n_threads)

    monkeypatch.setattr(module, "map_blocks", recorded)
    return seen
