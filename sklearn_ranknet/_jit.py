"""The one place where Numba's compilation flags and the thread policy live.

Every kernel in the package is compiled through :func:`jit`, and every kernel
that works query by query is run through :func:`over_queries`, so the
fastmath set, the on-disk cache and the threading rules are decided here and
nowhere else.

Threads
-------
Kernels are compiled serial and ``nogil``; :func:`over_queries` splits the
queries into chunks and hands the chunks to a Python thread pool. We chose
this over Numba's ``parallel=True`` layers after measuring them
(``docs/benchmarks.md``, "threads"):

- it is fork-safe: GNU OpenMP kills a forked child that runs a parallel
  region after its parent did (multiprocessing, Celery, gunicorn);
- idle pool threads sleep on a queue instead of spinning, so the BLAS
  products between two kernel calls keep their cores;
- serial kernels compile several times faster than ``parallel=True`` ones,
  which a new user's first process pays;
- several Python threads may call in at once: nothing global is changed
  (``numba.set_num_threads`` is per thread and never touched).

Each chunk allocates its own scratch space and every query writes only its
own outputs, so the kernels' results are bit-identical for any number of
threads. (The network's matrix products are BLAS's, which may round a wide
product differently on one thread and on several; see the user guide's
limitations.)
"""

import contextlib
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from joblib import cpu_count

# Fast-math without ``nnan`` and ``ninf``: those two let LLVM delete the
# NaN/inf checks that keep the kernels honest about bad scores.
FASTMATH = frozenset({"reassoc", "contract", "arcp", "nsz", "afn"})

# Numba's default "python" error model checks every float division for zero
# (to raise ZeroDivisionError), and that branch stops LLVM from vectorizing
# the pair loops. Kernels guard their own divisors instead.
ERROR_MODEL = "numpy"


# Reassociation lets LLVM rewrite (x - a) - b as x - (a + b). Code whose
# accuracy rests on the order of its operations (a Cody-Waite argument
# reduction) is compiled without it.
FASTMATH_IN_ORDER = FASTMATH - {"reassoc"}

# Numba compiles a C-ABI wrapper beside every function, for its ctypes
# address and for passing it as a first-class function into other compiled
# code; nothing here does either (kernels are called from Python or call each
# other directly), so leaving them out only saves compilation in a first
# process (not measured on its own: docs/benchmarks.md, "Cold start").
NO_CFUNC_WRAPPER = True


def jit(func=None, *, in_order=False, inline=False):
    """Compile a function with the package's Numba policy.

    Serial, ``nogil`` (so that :func:`over_queries` can run it on several
    threads), the package's fastmath set, and cached on disk so that a new
    process does not compile again. When no cache directory is writable the
    function is compiled without a cache instead of failing at import.

    Parameters
    ----------
    func : callable
        A Python function Numba can compile (``@jit``), or None when options
        are given (``@jit(in_order=True)``).
    in_order : bool, default=False
        Keep the order of floating-point operations (fastmath without
        ``reassoc``), for code whose accuracy depends on it.
    inline : bool, default=False
        Inline into the caller at Numba's IR level. Meant for a helper with
        one call site: as a function of its own, a helper is compiled to
        machine code by itself and then optimized again inside its caller,
        which a new user's first process pays twice; inlined, it is compiled
        once (and short queries run faster). Not for helpers with several
        callers: every call site types and lowers the body again. A large
        helper costs more to inline than a small one (Numba copies the
        inlined IR block by block, each copy with the whole variable
        scope): inline one only where the call costs its caller speed, as
        LambdaRank's query function does over long queries. The cold-start
        benchmark (``python -m benchmarks --only coldstart``) measures the
        compilation.

    Returns
    -------
    dispatcher : numba dispatcher, or a decorator when ``func`` is None
    """
    if func is None:
        return lambda f: jit(f, in_order=in_order, inline=inline)
    fastmath = FASTMATH_IN_ORDER if in_order else FASTMATH
    options = dict(nogil=True, fastmath=set(fastmath), error_model=ERROR_MODEL,
                   inline="always" if inline else "never", no_cfunc_wrapper=NO_CFUNC_WRAPPER)
    try:
        return numba.njit(cache=True, **options)(func)
    except RuntimeError as exc:  # numba: "no locator available for file"
        warnings.warn(
            f"Numba cannot cache {func.__qualname__} ({exc}); it will be "
            "compiled in every new process. Set NUMBA_CACHE_DIR to a "
            "writable directory to avoid this.",
            RuntimeWarning,
            stacklevel=2,
        )
        return numba.njit(cache=False, **options)(func)


# ---------------------------------------------------------------------------
# Threads

# Handing a chunk to a pool thread and waiting for it costs tens of
# microseconds: a call with less work than this (inner-loop steps: pairs, or
# rows times a sort's depth) runs on the calling thread. Set between the work
# at which two threads were slower than one and the work at which they were
# faster (the scale benchmark's long queries, docs/benchmarks.md).
SERIAL_BELOW_WORK = 500_000
# Chunks per thread: more than one so that a thread that drew short queries
# takes another chunk while a long one is still busy.
CHUNKS_PER_THREAD = 4

_pool = None
_pool_lock = threading.Lock()


def _forget_pool():
    # A forked child inherits the executor object but none of its threads.
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()




def _executor():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=cpu_count(), thread_name_prefix="sklearn_ranknet")
        return _pool


def effective_n_jobs(n_jobs):
    """Threads meant by ``n_jobs``, with scikit-learn's conventions.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` means 1; ``-1`` every core this process may use (as joblib
        counts them, cgroup limits included); ``-2`` all but one, and so on.
        Larger counts than the cores are capped.

    Returns
    -------
    n_threads : int, >= 1
    """
    if n_jobs is None:
        return 1
    cores = cpu_count()
    wanted = n_jobs if n_jobs > 0 else cores + 1 + n_jobs
    return min(max(int(wanted), 1), cores)


def query_chunks(offsets, n_chunks, work_per_query=None):
    """Split queries into at most ``n_chunks`` runs of consecutive queries of
    about equal work.

    Parameters
    ----------
    offsets : ndarray of shape (n_queries + 1,)
    n_chunks : int
    work_per_query : ndarray of shape (n_queries,), default=None
        Relative cost of each query; ``None`` uses its number of rows.

    Returns
    -------
    bounds : list of (first, last) query ranges, non-empty, in order.
    """
    n_queries = len(offsets) - 1
    if n_chunks <= 1 or n_queries <= 1:
        return [(0, n_queries)]
    work = np.diff(offsets) if work_per_query is None else work_per_query
    cumulative = np.cumsum(work, dtype=np.float64)
    targets = cumulative[-1] * np.arange(1, n_chunks) / n_chunks
    cuts = np.unique(np.concatenate(([0], np.searchsorted(cumulative, targets, side="right"), [n_queries])))
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def over_queries(kernel, args, offsets, n_threads, work, work_per_query=None):
    """Run ``kernel(*args, first, last)`` over every query, on up to
    ``n_threads`` threads.

    The kernel handles queries ``first:last`` and writes only their outputs
    (arrays inside ``args``). Calls with less than ``SERIAL_BELOW_WORK`` work
    run on the calling thread.

    Parameters
    ----------
    kernel : numba dispatcher
        Compiled ``nogil``, taking ``(*args, first, last)``.
    args : tuple
    offsets : ndarray of shape (n_queries + 1,)
    n_threads : int
        From :func:`effective_n_jobs`.
    work : int
        Rough number of inner-loop steps of the whole call.
    work_per_query : ndarray of shape (n_queries,), default=None
        For balancing the chunks; ``None`` balances rows.
    """
    n_queries = len(offsets) - 1
    if n_threads <= 1 or work < SERIAL_BELOW_WORK or n_queries <= 1:
        kernel(*args, 0, n_queries)
        return
    chunks = query_chunks(offsets, n_threads * CHUNKS_PER_THREAD, work_per_query)
    _share(lambda chunk: kernel(*args, *chunk), chunks, n_threads)


def map_blocks(func, blocks, n_threads):
    """``[func(block) for block in blocks]`` on up to ``n_threads`` threads.

    For numpy work that releases the GIL (matrix products, gathers). The
    results come back in the order of ``blocks`` whatever the threads did.
    """
    results = [None] * len(blocks)

    def run(indexed):
        results[indexed[0]] = func(indexed[1])

    if n_threads <= 1 or len(blocks) <= 1:
        for indexed in enumerate(blocks):
            run(indexed)
    else:
        _share(run, list(enumerate(blocks)), n_threads)
    return results


def _share(task, items, n_threads):
    """``task(item)`` for every item: ``n_threads - 1`` pool threads and the
    calling thread take items in turn until none is left (a pool thread that
    starts late finds nothing to do). Re-raises the first error."""
    pending = iter(items)
    lock = threading.Lock()

    def drain():
        while True:
            with lock:
                item = next(pending, None)
            if item is None:
                return
            task(item)

    futures = [_executor().submit(drain) for _ in range(min(n_threads, len(items)) - 1)]
    try:
        drain()
    finally:
        for future in futures:
            future.result()


# BLAS's thread count is process-wide, so the fits that ask for one thread
# share a single limit: the first to enter sets it, the last to leave lifts
# it. Two fits with their own threadpool_limits would restore each other's
# BLAS threads in the middle of a fit (a BaggingRanker fitting members on
# threads, or a web server's threads).
_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit = None
_blas_threads = 1


@contextlib.contextmanager
def _one_blas_thread():
    global _blas_users, _blas_limit, _blas_threads
    from threadpoolctl import ThreadpoolController

    with _blas_lock:
        if _blas_users == 0:
            blas = ThreadpoolController().select(user_api="blas")
            counts = [info["num_threads"] for info in blas.info()]
            _blas_threads = max(min(counts, default=1), 1)
            _blas_limit = blas.limit(limits=1)
        _blas_users += 1
        threads = _blas_threads
    try:
        yield threads
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limit.restore_original_limits()
                _blas_limit = None


def _forget_threads():
    """After fork: the child has none of the parent's threads, so neither
    its pool nor its fits in progress (it keeps whatever BLAS limit was in
    force, as threadpoolctl would)."""
    global _blas_lock, _blas_users, _blas_limit, _blas_threads
    _forget_pool()
    _blas_lock = threading.Lock()
    _blas_users, _blas_limit, _blas_threads = 0, None, 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads)


def single_threaded_blas():
    """A context in which BLAS runs on one thread: every fit trains in one.
    It yields the threads BLAS had before (those of the first fit to enter,
    when several are in progress), at least 1.

    Two reasons. OpenBLAS workers spin for a while after every product, and
    on a machine whose cores are busy (another process, or our own pool's
    kernel threads) they wait their turn and the fit waits with them: a
    default fit beside one busy process ran 2.6-3.1x slower with BLAS's
    threads than with one (docs/benchmarks.md, "A busy machine"). And a
    product's rounding depends on how BLAS splits it, so one thread makes a
    fit the same model on any core count (the Dask rankers' gathered fit on
    a worker gives the in-memory model to the bit). Safe to enter from
    several threads at once: the limit holds until the last leaves.

    The threads it yields are those a fit may give its own blocks of a
    product instead (``FitState.block_threads``): blocks fixed by the shapes, on the
    package's pool, whose idle threads sleep. Inside a joblib worker, or
    under the user's ``threadpool_limits``, that is the limit in force.
    """
    return _one_blas_thread()


def as_kernel_array(values, dtype=np.float64):
    """``values`` as the one array type kernels are compiled for.

    C-contiguous and writeable, of ``dtype``: a read-only or strided input
    (a joblib memmap, a column of a Fortran array) would otherwise make Numba
    compile a second copy of every kernel it reaches. Copies only when
    needed.
    """
    return np.require(values, dtype=dtype, requirements=("C", "W"))
