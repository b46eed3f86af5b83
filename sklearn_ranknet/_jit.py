"""The one place where Numba's compilation flags and thread policy live.

Every kernel in the package is compiled through :func:`jit`, so the fastmath
set, the on-disk cache and the threading rules are decided here and nowhere
else.
"""

import contextlib
import warnings

import numba

# Fast-math without ``nnan`` and ``ninf``: those two let LLVM delete the
# NaN/inf checks that keep the kernels honest about bad scores.
FASTMATH = frozenset({"reassoc", "contract", "arcp", "nsz", "afn"})

# Numba's default "python" error model checks every float division for zero
# (to raise ZeroDivisionError), and that branch stops LLVM from vectorizing
# the pair loops. Kernels guard their own divisors instead.
ERROR_MODEL = "numpy"


def jit(*, parallel=False):
    """Compile a function with the package's Numba policy.

    Parameters
    ----------
    parallel : bool, default=False
        Compile with ``parallel=True`` so that ``numba.prange`` loops run on
        several threads.

    Returns
    -------
    decorator : callable
        Turns a Python function into a Numba dispatcher. The compiled code is
        cached on disk so that a new process does not compile again; when no
        cache directory is writable the function is compiled without a cache
        instead of failing at import.
    """

    def decorate(func):
        options = dict(
            nogil=True, fastmath=set(FASTMATH), error_model=ERROR_MODEL, parallel=parallel
        )
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

    return decorate


# Waking the worker threads of a parallel region costs tens of microseconds
# on an idle machine and far more on a busy one, so a call with less work than
# this (inner-loop steps: pairs, or rows times a sort's depth) runs on one
# thread. Results never depend on the thread count.
SERIAL_BELOW_WORK = 200_000


@contextlib.contextmanager
def kernel_threads(n_jobs, work=None):
    """Run the enclosed kernels on ``n_jobs`` threads, then restore the count.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` keeps Numba's current setting (by default every core, or
        ``NUMBA_NUM_THREADS``). A positive value asks for that many threads
        and ``-1`` for all of them; values beyond what Numba was started with
        are capped. ``-2`` means all but one, and so on, as in joblib.
    work : int, default=None
        Rough number of inner-loop steps of the enclosed call; below
        ``SERIAL_BELOW_WORK`` it runs on one thread.

    Yields
    ------
    n_threads : int
        The number of threads in use inside the block.
    """
    previous = numba.get_num_threads()
    if work is not None and work < SERIAL_BELOW_WORK:
        n_jobs = 1
    if n_jobs is None:
        yield previous
        return
    available = numba.config.NUMBA_NUM_THREADS
    wanted = n_jobs if n_jobs > 0 else available + 1 + n_jobs
    wanted = min(max(wanted, 1), available)
    numba.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        numba.set_num_threads(previous)
