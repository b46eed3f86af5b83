"""The package's one Numba policy: cache fallback and thread handling."""

import subprocess
import sys

import numba
import numpy as np
import pytest
from joblib import cpu_count

from sklearn_ranknet import _jit
from sklearn_ranknet._jit import query_chunks


def test_compiles_without_a_cache_when_no_cache_directory_is_writable(monkeypatch):
    real_njit = numba.njit

    def njit_without_locator(*args, cache=False, **kwargs):
        if cache:  # what numba raises when every cache locator fails
            raise RuntimeError("cannot cache function 'f': no locator available for file 'x'")
        return real_njit(*args, **kwargs)

    monkeypatch.setattr(_jit.numba, "njit", njit_without_locator)
    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        @_jit.jit
        def double(x):
            return 2.0 * x

    assert double(np.float64(1.5)) == 3.0


def test_package_imports_and_runs_with_an_unusable_cache_dir(tmp_path):
    """NUMBA_CACHE_DIR under a regular file cannot be created; numba falls
    back to another locator and the package still computes."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = (
        "from sklearn_ranknet.metrics import ndcg_score;"
        "print(ndcg_score([2, 1, 0], [0.1, 0.2, 0.3], gain='linear'))"
    )
    env = {"NUMBA_CACHE_DIR": str(blocker / "cache"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert abs(float(out.stdout) - (1 / np.log2(3) + 2 / 2) / (2 + 1 / np.log2(3))) < 1e-12


def test_fastmath_keeps_nan_and_inf_checks():
    assert not {"nnan", "ninf", "fast"} & _jit.FASTMATH


@pytest.mark.parametrize(
    "n_jobs, expected",
    [(None, 1), (1, 1), (2, min(2, cpu_count())), (-1, cpu_count()), (10_000, cpu_count()), (-10_000, 1)],
)
def test_effective_n_jobs_follows_scikit_learn(n_jobs, expected):
    assert _jit.effective_n_jobs(n_jobs) == expected


@pytest.mark.parametrize("n_chunks", [1, 2, 3, 7, 50])
def test_query_chunks_cover_every_query_once_in_order(n_chunks):
    sizes = np.random.RandomState(0).randint(1, 30, size=20)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    chunks = _jit.query_chunks(offsets, n_chunks)
    assert len(chunks) <= n_chunks
    covered = [q for first, last in chunks for q in range(first, last)]
    assert covered == list(range(20))
    assert all(last > first for first, last in chunks)


def test_over_queries_runs_every_chunk_and_raises_a_chunks_error():
    offsets = np.arange(0, 101, dtype=np.int64)
    seen = np.zeros(100, dtype=np.int64)

    def kernel(out, first, last):
        out[first:last] += 1

    _jit.over_queries(kernel, (seen,), offsets, n_threads=2, work=10**9)
    np.testing.assert_array_equal(seen, 1)

    def failing(out, first, last):
        if first > 0:
            raise FloatingPointError("chunk failed")

    with pytest.raises(FloatingPointError, match="chunk failed"):
        _jit.over_queries(failing, (seen,), offsets, n_threads=2, work=10**9)


def test_as_kernel_array_gives_one_array_type():
    read_only = np.arange(6.0)[::2]
    read_only.flags.writeable = False
    out = _jit.as_kernel_array(read_only)
    assert out.flags.c_contiguous and out.flags.writeable and out.dtype == np.float64
    fresh = np.arange(3.0)
    assert _jit.as_kernel_array(fresh) is fresh  # no copy when already right


def test_every_kernel_is_compiled_once_whatever_the_input():
    """One signature per kernel: inputs of other dtypes, layouts, read-only
    memory and int widths are converted before they reach Numba, so a new
    user's first process compiles each kernel once. Runs in a fresh process
    so that the signatures seen are this test's alone."""
    code = r'''
import numpy as np, scipy.sparse as sp, warnings
warnings.simplefilter("ignore")
from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _inputs, _optim
from sklearn_ranknet._kernels import listwise, metrics, pair_lambdas, sort
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score, map_score, ndcg_per_query, ap_per_query
X, y, q = make_ranking(20, max_docs=30, random_state=0)
read_only = np.asfortranarray(X); read_only.flags.writeable = False
c_read_only = X.copy(); c_read_only.flags.writeable = False
fortran = np.asfortranarray(X)
y32 = y.astype(np.int32); q32 = q.astype(np.int32)
for cls in (LambdaRankRanker, RankNetRanker, ListNetRanker):
    for data in (X, read_only, c_read_only, fortran, X.astype(np.float32), sp.csr_matrix(X)):
        for params in ({}, {"early_stopping": True}, {"n_jobs": 2}):
            cls(hidden_layer_sizes=(4,), max_iter=2, **params).fit(data, y32, groups=q32)
        for scaling in ("piecewise", "standard"):  # the fused gathers of _inputs, in fit and predict
            cls(hidden_layer_sizes=(4,), max_iter=2, feature_scaling=scaling).fit(data, y, groups=q).predict(data)
LambdaRankRanker(hidden_layer_sizes=(), max_iter=2, k=3, metric="map").fit(X, y, groups=q)
RankNetRanker(hidden_layer_sizes=(4,), max_iter=2, precision="float64").fit(X, y, groups=q)
LambdaRankRanker(hidden_layer_sizes=(), max_iter=2, gain="linear").fit(X, y, groups=q)
RankNetRanker(hidden_layer_sizes=(), max_iter=2, solver="lbfgs").fit(X, y, groups=q)
RankNetRanker(hidden_layer_sizes=(), max_iter=2, pair_targets="soft").fit(X, y32, groups=q)
for weighting in ("ndcg_loss2", "ndcg_loss2++"):
    LambdaRankRanker(hidden_layer_sizes=(), max_iter=2, k=3, pair_weighting=weighting).fit(X, y, groups=q)
scores = X[:, 0].copy(); scores.flags.writeable = False
for labels in (y, y32, y.astype(float)):
    for s in (scores, scores.astype(np.float32), X[:, 1], np.round(scores)):
        for k in (None, 1, 5, 10**6):
            ndcg_score(labels, s, groups=q, k=k); map_score(labels, s, groups=q32, k=k)
            ndcg_per_query(labels, s, groups=q, k=k, ignore_ties=True, gain="linear")
            ap_per_query(labels, s, groups=q, k=k, ignore_ties=True)
many = {}
for module in (metrics, pair_lambdas, listwise, sort):
    for name, obj in vars(module).items():
        if hasattr(obj, "signatures") and len(obj.signatures) > 1:
            many[f"{module.__name__}.{name}"] = [str(s) for s in obj.signatures]
# Adam's pass compiles once per float dtype of the network, both fitted above.
if sorted(str(s[0].dtype) for s in _optim._adam_step.signatures) != ["float32", "float64"]:
    many["_optim._adam_step"] = [str(s) for s in _optim._adam_step.signatures]
# The fused gathers of rows compile once per pair of X's dtype and the
# network's (Fortran-ordered, read-only and strided X are copied into C order
# a block at a time before they reach them): float64 rows also feed a
# float32 network (precision="auto"), stored in float32 as they are scaled.
for name in ("_gather_standardized", "_gather_encoded"):
    pairs = sorted((str(s[0].dtype), str(s[-1].dtype)) for s in getattr(_inputs, name).signatures)
    if pairs != [("float32", "float32"), ("float64", "float32"), ("float64", "float64")]:
        many[f"_inputs.{name}"] = [str(s) for s in getattr(_inputs, name).signatures]
print(many)
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "{}", out.stdout


def test_map_compiles_the_ranked_pass_only_when_a_query_needs_it():
    """``map_score`` over the whole list of untied scores (the usual call)
    is answered by the whole-list pass; the ranked AP@k pass is compiled
    (or loaded from the cache) only by a call that cuts a query at k or
    ties a relevant with an irrelevant score. Fresh process: the
    dispatchers' signatures are this test's alone."""
    code = r'''
import numpy as np
from sklearn_ranknet._kernels import metrics as metric_kernels
from sklearn_ranknet.metrics import map_score
rng = np.random.default_rng(0)
y, s, q = rng.integers(0, 3, 60).astype(float), rng.normal(size=60), np.repeat(np.arange(6), 10)
map_score(y, s, groups=q)
seen = [len(metric_kernels.ap_whole_chunk.signatures), len(metric_kernels.ap_ranked_chunk.signatures)]
map_score(y, s, groups=q, k=3)
seen.append(len(metric_kernels.ap_ranked_chunk.signatures))
print(seen)
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[1, 0, 1]", out.stdout


# Found by a mutation audit of the suite, second round (2026-11-27).

@pytest.mark.parametrize("n_queries, n_chunks", [(4, 2), (8, 4), (12, 3), (100, 4)])
def test_equal_queries_split_into_equal_chunks(n_queries, n_chunks):
    # Queries of equal work divide evenly: every chunk holds n / n_chunks.
    offsets = np.arange(0, 5 * n_queries + 1, 5)
    chunks = query_chunks(offsets, n_chunks)
    assert chunks == [(i * n_queries // n_chunks, (i + 1) * n_queries // n_chunks) for i in range(n_chunks)]


def test_chunks_cover_the_queries_in_order_and_balance_the_work():
    rng = np.random.RandomState(0)
    sizes = rng.randint(1, 50, size=200)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    for n_chunks in (2, 3, 8):
        chunks = query_chunks(offsets, n_chunks)
        assert chunks[0][0] == 0 and chunks[-1][1] == len(sizes)
        assert all(a[1] == b[0] for a, b in zip(chunks[:-1], chunks[1:]))
        work = [sizes[a:b].sum() for a, b in chunks]
        # Each cut is off its target by less than one query.
        assert max(work) - sizes.sum() / n_chunks < 2 * sizes.max()
