"""Compiling a first fit's kernels in the background, from the import on.

A new user's first process compiles every Numba kernel it calls, seconds of
it (``docs/benchmarks.md``, "Cold start"). So ``import sklearn_ranknet``
starts one daemon thread that compiles, in a fixed order (:func:`signatures`:
what every fit needs first, then LambdaRank, NDCG, RankNet, ListNet and
MAP), the kernel signatures that a default fit of each ranker and the NDCG
and MAP metrics need on float64 data, while the user's script goes on (reads
its data, builds its pipeline). With a warm cache the thread only loads the
cached kernels. Nothing else changes: the kernels and their results are the
same, and the cache is filled as by the calls themselves.

Numba compiles one function at a time per process, whatever the thread, so
when the cache is cold (and the machine has a second core) the import also
starts a *helper process* that compiles the same list from its far end
(MAP, ListNet, RankNet, NDCG: :func:`helper_signatures`) into the same
on-disk cache, at a lower priority. The two meet in the middle: a kernel the
helper has saved is loaded from the cache, by the thread or by the call that
needs it, in milliseconds. The helper writes nothing but cache files, is
stopped when this process exits, and stops itself when its parent is gone.
It compiles only kernels that the list holds one signature of, so that it
never saves another signature of a function while this process saves one
(Numba numbers a function's cache entries without locking; a collision
would only cost a later process a compilation, but it is avoided).

A call that needs a kernel the thread has not compiled yet compiles it
itself, first: the thread waits while any other thread is in Numba's
compiler, so a call waits at most for the one signature in progress (a call
on that very signature waits for it on Numba's compiler lock, then finds it
compiled). Numba compiles one function at a time per process, so the thread
saves the user the compilation that overlaps their own work, not more.

Set the environment variable ``SKLEARN_RANKNET_WARMUP=0`` (or ``false``,
``no``, ``off``) before the import to switch it off: then no thread is
started and each kernel is compiled when first called, as before.
``SKLEARN_RANKNET_WARMUP=thread`` keeps the thread and starts no helper
process.

Where it does not run, and how it stays out of the way:

- worker processes (multiprocessing, loky and Dask workers, whose parent
  started them) and ``NUMBA_DISABLE_JIT=1`` start no thread: a worker
  compiles only what it calls;
- the helper process starts only when the cache holds none of its
  kernels' entries yet (a first process), with at least two usable cores,
  and when ``sys.executable`` is a Python interpreter (not an embedding
  program such as a uWSGI server);
- it prints nothing: an error (a cache directory that cannot be written
  after all, a kernel that no longer takes the listed types) skips that
  signature silently, and the call that needs it compiles it and reports;
- ``os.fork`` waits for the signature in progress and holds Numba's
  compiler lock across the fork, so a child never inherits that lock from a
  thread it does not have; the child compiles what it calls itself (the
  warm-up does not go on in the child). ``subprocess`` does not wait (it
  runs no fork hooks);
- it leaves the process's warnings alone: Numba's type inference collects a
  compile's warnings with ``warnings.catch_warnings(record=True)``, many
  times a compile, and Python's warnings state is the process's, not a
  thread's. From the warm-up thread that raced with the user's threads (a
  warning caught in a user's block went into Numba's list, and a block's
  state could be restored after the block had ended, after which no warning
  showed at all), so the thread compiles with that collection skipped
  (:func:`_leave_warnings_alone`); with a Numba whose collection is not
  where this expects it, no warm-up starts;
- at interpreter exit an ``atexit`` hook stops the thread and waits for the
  signature in progress (LLVM must not be compiling while the interpreter
  tears down): a script that exits at once with an empty cache waits that
  long (at most the longest signature, LambdaRank's kernel, a few seconds);
  it first stops the helper process (what the helper has saved stays in
  the cache; the signature it was compiling is lost).
"""

import atexit
import contextlib
import functools
import os
import subprocess
import sys
import threading
from pathlib import Path

ENVIRONMENT_VARIABLE = "SKLEARN_RANKNET_WARMUP"
_OFF = frozenset({"0", "false", "no", "off"})
_THREAD_ONLY = "thread"
# The helper's niceness: the user's own work (a fit's BLAS threads) comes
# first, the helper gets what is left of the cores.
_HELPER_NICENESS = 10
# How long the exit hook waits for the stopped helper to be gone.
_HELPER_EXIT_WAIT_S = 5.0
# The longest wait at exit for the signature in progress: a compile that
# takes longer is stuck, and the interpreter may as well go on.
_EXIT_WAIT_S = 60.0
# While another thread is in Numba's compiler, check again this often (it
# also wakes us when it leaves).
_POLL_S = 0.05


# Set in the warm-up thread: Numba's warning collection skips it.
_in_warmup = threading.local()


def _leave_warnings_alone():
    """Make Numba's per-compile warning collection
    (``numba.core.errors.WarningsFixer.catch_warnings``) a pass-through in
    the warm-up thread, once per process (module docstring). Other threads
    collect as before: their compiles run where their own warnings are.
    False when this Numba has no such method."""
    try:
        from numba.core.errors import WarningsFixer
    except ImportError:
        return False
    collect = getattr(WarningsFixer, "catch_warnings", None)
    if collect is None:
        return False
    if getattr(collect, "skips_the_warmup", False):
        return True

    @functools.wraps(collect)
    @contextlib.contextmanager
    def catch_warnings(self, *args, **kwargs):
        if getattr(_in_warmup, "active", False):
            yield  # a warning from our kernels' compiles (there is none) shows as any other
        else:
            with collect(self, *args, **kwargs):
                yield

    catch_warnings.skips_the_warmup = True
    WarningsFixer.catch_warnings = catch_warnings
    return True


def signatures():
    """The warm-up's ``(dispatcher, argument types)``, in the order compiled.

    The signatures a default fit of each ranker, ``ndcg_score`` and
    ``map_score`` compile on float64 inputs, whose networks train in float32
    (``precision="auto"``; the kernels' array type is
    :func:`._jit.as_kernel_array`'s: C-contiguous, writeable). Not listed:
    the ranked AP pass (``map_score`` needs it only for AP@k or tied scores),
    the soft-target RankNet kernel, the standard-scaling gather and the
    other float32 and float64 variants, which only non-default options or
    inputs compile.
    """
    from numba import types

    from . import _inputs, _network, _optim
    from ._kernels import listwise, metrics, pair_lambdas

    f8, i8, b1 = types.float64, types.int64, types.boolean
    F, F2, I, B = types.float64[::1], types.float64[:, ::1], types.int64[::1], types.boolean[::1]
    S, S2 = types.float32[::1], types.float32[:, ::1]
    return [
        # Every fit: the rows of a minibatch (scaled in float64, stored in
        # float32), the network's last layers and Adam in float32
        # (precision="auto").
        (_inputs._gather_encoded, (F2, I, I, F, F, F, F, F, F, F, S2)),
        (_network._last_hidden_forward, (S2, S, S, S, i8, S)),
        (_network._last_hidden_backward, (S2, S, S, i8, S2, S, S)),
        (_optim._adam_step, (S, S, S, S, f8, f8, f8, f8, f8)),
        # LambdaRank's and ListNet's label gains, LambdaRank's lambdas.
        (metrics.label_gains, (F, b1)),
        (pair_lambdas.lambdarank_chunk, (F, F, I, F, I, I, F, F, i8, i8, b1, f8, b1, F, F, i8, i8)),
        # predict and score: the rows and the last layer in float64 (after
        # the fit's own kernels, which a first fit waits for).
        (_inputs._gather_encoded, (F2, I, I, F, F, F, F, F, F, F, F2)),
        (_network._last_hidden_forward, (F2, F, F, F, i8, F)),
        # NDCG: score(), early stopping and ndcg_score.
        (metrics.ndcg_chunk, (F, F, I, b1, F, i8, b1, F, B, i8, i8)),
        (pair_lambdas.ranknet_chunk, (F, F, I, f8, b1, F, F, i8, i8)),
        (listwise.softmax_chunk, (F, F, I, f8, b1, F, F, i8, i8)),
        # map_score over whole lists.
        (metrics.ap_whole_chunk, (F, F, I, i8, F, B, B, i8, i8)),
    ]


def helper_signatures(items=None):
    """The helper process's share of :func:`signatures`, in the order it
    compiles them: from the far end of the list, the kernels that the list
    holds one signature of."""
    items = signatures() if items is None else items
    counts = {}
    for dispatcher, _ in items:
        counts[dispatcher] = counts.get(dispatcher, 0) + 1
    return [(dispatcher, argtypes) for dispatcher, argtypes in reversed(items) if counts[dispatcher] == 1]


def _mode():
    return os.environ.get(ENVIRONMENT_VARIABLE, "1").strip().lower()


def enabled():
    """Whether this process starts the warm-up at import (see the module
    docstring)."""
    if _mode() in _OFF:
        return False
    import multiprocessing

    import numba

    return multiprocessing.parent_process() is None and not numba.config.DISABLE_JIT


class _Warmup:
    """One warm-up: its thread, and a count of the other threads in Numba's
    compiler (fed by Numba's compiler-lock events) that it waits on."""

    def __init__(self, items, helper=None):
        from numba.core import event

        self.items = items
        self.helper = helper  # the helper process (subprocess.Popen), or None
        self.cond = threading.Condition()
        self.others = 0  # other threads inside Numba's compiler lock
        self.stopping = False
        self.holding_for_fork = False
        self.thread = threading.Thread(target=self._run, name="sklearn_ranknet-warmup", daemon=True)
        self.listener = _OthersCompiling(self)
        event.register("numba:compiler_lock", self.listener)

    def start(self):
        self.thread.start()

    def _run(self):
        _in_warmup.active = True
        try:
            for dispatcher, argtypes in self.items:
                with self.cond:
                    while self.others > 0 and not self.stopping:
                        self.cond.wait(_POLL_S)
                    if self.stopping:
                        return
                try:
                    dispatcher.compile(argtypes)
                except Exception:  # the call that needs it compiles it and raises
                    pass
            if self.helper is not None:
                # Reaped as soon as it is done; and wait() waits for it too, so
                # that nothing compiles behind a benchmark's back.
                self.helper.wait()
        except BaseException:  # never a traceback from this thread
            pass
        finally:
            self._unregister()

    def _unregister(self):
        from numba.core import event

        try:
            event.unregister("numba:compiler_lock", self.listener)
        except (KeyError, ValueError):
            pass

    def stop_helper(self, timeout):
        helper = self.helper
        if helper is None or helper.poll() is not None:
            return
        try:
            helper.terminate()
            helper.wait(timeout)
        except Exception:  # already gone, or stuck: the interpreter goes on
            pass

    def stop(self, timeout):
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(timeout)


def _other_thread_event(warmup):
    return threading.get_ident() != warmup.thread.ident


class _OthersCompiling:
    """A Numba event listener: counts the threads other than the warm-up's
    between entering and leaving Numba's compiler lock."""

    def __new__(cls, warmup):
        from numba.core import event

        class Listener(event.Listener):
            def on_start(self, _event):
                if _other_thread_event(warmup):
                    with warmup.cond:
                        warmup.others += 1

            def on_end(self, _event):
                if _other_thread_event(warmup):
                    with warmup.cond:
                        warmup.others = max(warmup.others - 1, 0)
                        if warmup.others == 0:
                            warmup.cond.notify_all()

        return Listener()


def _usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _runs_python(executable):
    # An embedding program (uWSGI, a GUI application) sets sys.executable to
    # itself: starting it would not run our code.
    return bool(executable) and Path(executable).name.lower().startswith("python")


def _cache_is_cold(items):
    """True when Numba's cache holds no valid entry of any of these
    kernels (their sources unchanged since). Reads each function's cache
    index, which is Numba's own business: any surprise there answers
    False, and no helper starts."""
    try:
        return not any(dispatcher._cache._cache_file._load_index() for dispatcher, _ in items)
    except Exception:
        return False


def _helper_wanted(items):
    return (_mode() != _THREAD_ONLY and _usable_cores() >= 2 and _runs_python(sys.executable)
            and _cache_is_cold(items))


def _start_helper():
    """Start the helper process (see the module docstring); None when
    there is no reason to, or it cannot start."""
    try:
        if not _helper_wanted(helper_signatures()):
            return None
        # The helper imports this very package, wherever the parent found it.
        package_parent = str(Path(__file__).resolve().parents[1])
        code = (f"import sys; sys.path.insert(0, {package_parent!r}); "
                f"from sklearn_ranknet._warmup import _helper_main; _helper_main({os.getpid()})")
        return subprocess.Popen(
            [sys.executable, "-c", code], env={**os.environ, ENVIRONMENT_VARIABLE: "0"},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=True,
        )
    except Exception:
        return None


def _helper_main(parent):
    """The helper process: compile :func:`helper_signatures` into the
    cache while the parent lives, quietly."""
    if hasattr(os, "nice"):
        try:
            os.nice(_HELPER_NICENESS)
        except OSError:
            pass
    for dispatcher, argtypes in helper_signatures():
        if os.getppid() != parent:
            return
        try:
            dispatcher.compile(argtypes)
        except Exception:
            pass


_current = None


def start():
    """Start the warm-up unless it is switched off or already running (called
    by ``sklearn_ranknet/__init__.py``). Returns whether a thread started."""
    global _current
    if _current is not None or not enabled() or not _leave_warnings_alone():
        return False
    helper = None
    try:
        from numba.core import entrypoints

        # Numba loads third-party extensions at its first compile: here, on
        # the importing thread, rather than as imports from the warm-up.
        entrypoints.init_all()
        helper = _start_helper()
        warmup = _Warmup(signatures(), helper=helper)
        warmup.start()
    except Exception:
        if helper is not None:
            helper.terminate()
        return False
    _current = warmup
    return True


def wait(timeout=None):
    """Wait until the warm-up, and its helper process if one started, have
    finished (or ``timeout`` seconds); returns True when no warm-up is
    running any more. For tests and benchmarks."""
    warmup = _current
    if warmup is None:
        return True
    warmup.thread.join(timeout)
    return not warmup.thread.is_alive()


def running():
    """Whether a warm-up thread is alive in this process."""
    return _current is not None and _current.thread.is_alive()


@atexit.register
def _stop_at_exit():
    warmup = _current
    if warmup is not None:
        warmup.stop_helper(_HELPER_EXIT_WAIT_S)
        warmup.stop(_EXIT_WAIT_S)


def _before_fork():
    warmup = _current
    if warmup is None or not warmup.thread.is_alive():
        return
    from numba.core.compiler_lock import global_compiler_lock

    # Entering the lock counts as another thread compiling: the warm-up
    # starts nothing new, and the signature in progress finishes first.
    global_compiler_lock.acquire()
    warmup.holding_for_fork = True


def _after_fork_in_parent():
    warmup = _current
    if warmup is not None and warmup.holding_for_fork:
        from numba.core.compiler_lock import global_compiler_lock

        warmup.holding_for_fork = False
        global_compiler_lock.release()


def _after_fork_in_child():
    # The child has no warm-up thread, and its warm-up's condition lock may
    # have been held by that thread at the fork: leave it alone. Unregister
    # the listener first (releasing the compiler lock triggers it).
    global _current
    warmup, _current = _current, None
    if warmup is None:
        return
    warmup._unregister()
    if warmup.helper is not None:
        # The parent's helper, not ours: never wait for it, stop it, or warn
        # about it (a Popen still running warns when collected).
        warmup.helper.returncode = 0
    if warmup.holding_for_fork:
        from numba.core.compiler_lock import global_compiler_lock

        global_compiler_lock.release()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
