"""The background compilation started by ``import sklearn_ranknet`` (``_warmup.py``).

Each test runs a fresh Python, so that the process's compiled signatures,
threads and fork state are its own. No timings are asserted: the cold-start
benchmark measures them (``python -m benchmarks --only coldstart``).
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 900  # catches a hang (a deadlocked fork child, a thread never stopped)

PRELUDE = """
import sys, threading, warnings
from numba.core.registry import CPUDispatcher

def compiled():
    return {f"{name}.{attr}": set(map(str, obj.signatures))
            for name, module in list(sys.modules.items()) if name.startswith("sklearn_ranknet")
            for attr, obj in list(vars(module).items())
            if isinstance(obj, CPUDispatcher) and obj.__module__ == name}

def warmup_threads():
    return [t for t in threading.enumerate() if t.name == "sklearn_ranknet-warmup"]
"""


def run(code, env=None, check=True):
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)], cwd=ROOT,
        env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def test_the_warmup_compiles_what_a_first_use_needs():
    """After the warm-up, default fits of the three rankers (early stopping
    on and off), score(), ndcg_score and map_score compile nothing new."""
    out = run("""
        import numpy as np
        from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _warmup
        from sklearn_ranknet.datasets import make_ranking
        from sklearn_ranknet.metrics import map_score, ndcg_score
        assert _warmup.running() or _warmup.wait(0)
        assert _warmup.wait(600)
        from collections import Counter
        listed = Counter(f"{d.__module__}.{d.__name__}" for d, _ in _warmup.signatures())
        after_warmup = compiled()
        assert all(len(after_warmup[name]) == n for name, n in listed.items()), after_warmup
        warnings.simplefilter("ignore")
        X, y, q = make_ranking(n_queries=60, random_state=0)
        for cls in (LambdaRankRanker, RankNetRanker, ListNetRanker):
            for params in ({}, {"early_stopping": True}):
                model = cls(max_iter=3, random_state=0, **params).fit(X, y, groups=q)
            model.score(X, y, groups=q)
        s = model.predict(X)
        ndcg_score(y, s, groups=q, k=10), ndcg_score(y, s, groups=q), map_score(y, s, groups=q)
        new = {k: v - after_warmup.get(k, set()) for k, v in compiled().items()}
        print({k: sorted(v) for k, v in new.items() if v})
    """)
    assert out.stdout.strip() == "{}", out.stdout
    assert out.stderr == ""


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_switched_off_it_starts_no_thread_and_compiles_nothing(value):
    out = run("""
        import sklearn_ranknet
        from sklearn_ranknet import _warmup
        print(_warmup.running(), len(warmup_threads()), {k: v for k, v in compiled().items() if v})
    """, env={"SKLEARN_RANKNET_WARMUP": value})
    assert out.stdout.split() == ["False", "0", "{}"], out.stdout


def test_on_by_default_it_runs_in_a_thread_of_its_own():
    out = run("""
        import sklearn_ranknet
        from sklearn_ranknet import _warmup
        print(_warmup.enabled(), len(warmup_threads()) + _warmup.wait(0) > 0)
        _warmup.wait()
        print(len(warmup_threads()))
    """, env={"SKLEARN_RANKNET_WARMUP": "1"})
    assert out.stdout.split() == ["True", "True", "0"], out.stdout


def test_a_forked_child_calls_kernels_while_the_parent_compiles(tmp_path):
    """An empty cache, so that the warm-up is compiling when the process
    forks: the child, which has no warm-up thread, compiles and runs the
    kernels it calls (a child that inherited Numba's compiler lock held would
    hang here), and so does the parent."""
    out = run("""
        import os
        import numpy as np
        from sklearn_ranknet import RankNetRanker, _warmup
        from sklearn_ranknet.metrics import map_score, ndcg_score
        warnings.simplefilter("ignore")  # ConvergenceWarning
        y, s, q = [2, 1, 0, 1, 0], [0.1, 0.2, 0.3, 0.05, 0.4], [0, 0, 0, 1, 1]
        was_running = _warmup.running()
        pid = os.fork()
        if pid == 0:
            ok = not _warmup.running() and not warmup_threads()
            ok &= abs(ndcg_score(y, s, groups=q) - ndcg_score(y, s, groups=q, k=None)) == 0
            model = RankNetRanker(hidden_layer_sizes=(), max_iter=2).fit(np.eye(5), y, groups=q)
            ok &= np.isfinite(model.predict(np.eye(5))).all() and 0 < map_score(y, s, groups=q) <= 1
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print(was_running, os.waitstatus_to_exitcode(status), round(ndcg_score(y, s, groups=q), 6))
    """, env={"NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    was_running, child, value = out.stdout.split()
    assert child == "0", out.stderr
    assert 0 < float(value) <= 1
    assert out.stderr == ""


def test_exit_during_a_compile_is_clean(tmp_path):
    """A script that imports and exits at once, with an empty cache: the
    interpreter stops the thread (it waits for the signature in progress)
    and exits without a word."""
    out = run("import sklearn_ranknet; print('done')", env={"NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    assert out.stdout == "done\n" and out.stderr == ""


@pytest.mark.parametrize("cache", ["unusable", "empty"])
def test_silent_when_the_cache_cannot_be_written(tmp_path, cache):
    """Saving to the cache fails (every save raises; with an empty cache the
    warm-up compiles and meets it at every signature), or NUMBA_CACHE_DIR
    cannot be created (under a regular file, which holds even for root):
    the warm-up says nothing, and the kernels still run."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache_dir = blocker / "cache" if cache == "unusable" else tmp_path / "cache"
    out = run("""
        from numba.core import caching
        def refuse(self, *args, **kwargs):
            raise PermissionError("read-only cache")
        real = caching.Cache.save_overload
        caching.Cache.save_overload = refuse
        from sklearn_ranknet import _warmup
        from sklearn_ranknet.metrics import ndcg_score
        assert _warmup.wait(600)
        caching.Cache.save_overload = real
        print(round(ndcg_score([2, 1, 0], [0.1, 0.2, 0.3], groups=[0, 0, 0], gain="linear"), 6))
    """, env={"NUMBA_CACHE_DIR": str(cache_dir)})
    expected = (1 / np.log2(3) + 2 / 2) / (2 + 1 / np.log2(3))
    assert abs(float(out.stdout) - expected) < 1e-6, out.stdout
    assert out.stderr == ""


@pytest.mark.parametrize("cache", ["default", "empty"])
def test_results_are_the_same_with_and_without_the_warmup(tmp_path, cache):
    """With an empty cache the warm-up also starts its helper process, whose
    kernels this process may load, depending on who gets there first
    (test_a_helper_fills_the_cache_that_this_process_then_loads makes sure)."""
    code = """
        import hashlib
        import numpy as np
        from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _warmup
        from sklearn_ranknet.datasets import make_ranking
        from sklearn_ranknet.metrics import map_score, ndcg_score
        warnings.simplefilter("ignore")
        X, y, q = make_ranking(n_queries=40, random_state=0)
        digest = hashlib.sha256()
        for cls in (LambdaRankRanker, RankNetRanker, ListNetRanker):
            s = cls(max_iter=5, random_state=0).fit(X, y, groups=q).predict(X)
            digest.update(s.tobytes())
            digest.update(np.float64([ndcg_score(y, s, groups=q, k=10), map_score(y, s, groups=q)]).tobytes())
        print(_warmup.enabled(), digest.hexdigest())
    """
    cache_env = {} if cache == "default" else {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    on = run(code, env={"SKLEARN_RANKNET_WARMUP": "1", **cache_env}).stdout.split()
    off = run(code, env={"SKLEARN_RANKNET_WARMUP": "0"}).stdout.split()
    assert on[0] == "True" and off[0] == "False"
    assert on[1] == off[1]


def _worker_state():
    from sklearn_ranknet import _warmup

    return _warmup.enabled(), _warmup.running()


def test_worker_processes_start_no_warmup():
    """loky workers (joblib's default processes, as in GridSearchCV(n_jobs=2))
    compile only what they call."""
    from joblib import Parallel, delayed

    states = Parallel(n_jobs=2, backend="loky")(delayed(_worker_state)() for _ in range(2))
    assert states == [(False, False)] * 2


def test_kernels_are_compiled_without_c_wrappers():
    """``_jit.jit`` leaves out Numba's C-ABI (cfunc) wrapper, which nothing
    of the package uses; a first process compiles less without it."""
    from sklearn_ranknet import _jit
    from sklearn_ranknet._kernels import metrics, pair_lambdas

    assert _jit.NO_CFUNC_WRAPPER
    for kernel in (metrics.ndcg_chunk, pair_lambdas.lambdarank_chunk, pair_lambdas._pair_rho):
        assert kernel.targetoptions["no_cfunc_wrapper"] is True


def test_the_helper_compiles_the_far_end_of_the_list_once_per_kernel():
    from sklearn_ranknet import _warmup

    items = _warmup.signatures()
    share = _warmup.helper_signatures(items)
    dispatchers = [d for d, _ in items]
    assert share and all(item in items for item in share)
    # from the far end: MAP's kernel first
    assert share[0] == items[-1]
    assert [items.index(item) for item in share] == sorted((items.index(item) for item in share), reverse=True)
    # never a kernel whose other signature this process may be saving meanwhile
    assert all(dispatchers.count(d) == 1 for d, _ in share)
    assert len(share) == sum(dispatchers.count(d) == 1 for d in dispatchers)


def test_a_helper_fills_the_cache_that_this_process_then_loads(tmp_path):
    """With an empty cache a helper process starts; what it compiled, this
    process loads from the cache instead of compiling (a hit on every one of
    its signatures)."""
    out = run("""
        from sklearn_ranknet import _warmup
        share = _warmup.helper_signatures()
        print(_warmup._cache_is_cold(share))
        helper = _warmup._start_helper()
        print(helper.wait(600))
        print(_warmup._cache_is_cold(share), _warmup._start_helper())
        for dispatcher, argtypes in share:
            dispatcher.compile(argtypes)
        print(all(sum(d.stats.cache_hits.values()) == 1 and not d.stats.cache_misses for d, _ in share))
    """, env={"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "SKLEARN_RANKNET_WARMUP": "0"})
    assert out.stdout.split() == ["True", "0", "False", "None", "True"], out.stdout
    assert out.stderr == ""


def test_no_helper_when_told_so_or_when_it_cannot_help(tmp_path):
    """"thread" keeps the warm-up in the process; a program that embeds
    Python (its sys.executable is not an interpreter) and a single core start
    no helper either."""
    out = run("""
        from sklearn_ranknet import _warmup
        helper = _warmup._current.helper
        print(helper is None, _warmup._cache_is_cold(_warmup.helper_signatures()))
        print(_warmup._runs_python("/usr/bin/uwsgi"), _warmup._runs_python(""),
              _warmup._runs_python(sys.executable))
        _warmup._usable_cores = lambda: 1
        import os
        os.environ["SKLEARN_RANKNET_WARMUP"] = "1"
        print(_warmup._start_helper())
    """, env={"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "SKLEARN_RANKNET_WARMUP": "thread"})
    assert out.stdout.split() == ["True", "True", "False", "False", "True", "None"], out.stdout


def test_the_helper_ends_with_its_parent(tmp_path):
    """A parent that exits at once stops and reaps its helper; a parent that
    dies without its exit hooks (os._exit) leaves a helper that stops by
    itself, at the latest after the signature it is compiling."""
    import time

    for ending in ("sys.exit(0)", "os._exit(0)"):
        cache = tmp_path / ending[:2]
        out = run(f"""
            import os
            from sklearn_ranknet import _warmup
            print(_warmup._current.helper.pid, flush=True)
            {ending}
        """, env={"NUMBA_CACHE_DIR": str(cache)})
        pid = int(out.stdout)
        deadline = time.monotonic() + (0 if ending.startswith("sys") else 300)
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(pid), ending
        assert out.stderr == ""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not reaped: its parent is gone, init reaps it soon) is not alive
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def test_the_users_warnings_are_untouched_while_the_warmup_compiles(tmp_path):
    """Python's warnings state is the process's, not a thread's, and Numba's
    type inference swaps it (``warnings.catch_warnings(record=True)``, many
    times a compile). From the warm-up thread that raced with the user's
    threads: a warning caught in a block went into Numba's list instead, and
    a block's state could be restored after the block had ended, after which
    no warning showed at all. An empty cache, so that the thread compiles
    while this process catches warnings."""
    out = run("""
        import time
        from sklearn_ranknet import _warmup
        lost = blocks = 0
        ends = time.monotonic() + 3.0
        while _warmup.running() and time.monotonic() < ends:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                warnings.warn("caught", UserWarning)
            blocks += 1
            lost += [str(w.message) for w in caught] != ["caught"]
        print(lost, blocks > 0)
        warnings.warn("shown after the blocks", UserWarning)
    """, env={"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "SKLEARN_RANKNET_WARMUP": "thread"})
    assert out.stdout.split() == ["0", "True"], out.stdout
    assert "shown after the blocks" in out.stderr, out.stderr


def test_no_warmup_where_numba_collects_warnings_elsewhere():
    """A Numba without ``WarningsFixer.catch_warnings`` (the warm-up could not
    keep its compiles out of the process's warnings): no warm-up starts, and
    each kernel compiles when first called, as with the warm-up off."""
    out = run("""
        from numba.core import errors
        errors.WarningsFixer = type("Elsewhere", (), {})
        from sklearn_ranknet import _warmup
        print(_warmup._current is None, len(warmup_threads()))
    """)
    assert out.stdout.split() == ["True", "0"], out.stdout
