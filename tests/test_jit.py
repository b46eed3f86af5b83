"""The package's one Numba policy: cache fallback and thread handling."""

import subprocess
import sys

import numba
import numpy as np
import pytest

from sklearn_ranknet import _jit


def test_compiles_without_a_cache_when_no_cache_directory_is_writable(monkeypatch):
    real_njit = numba.njit

    def njit_without_locator(*args, cache=False, **kwargs):
        if cache:  # what numba raises when every cache locator fails
            raise RuntimeError("cannot cache function 'f': no locator available for file 'x'")
        return real_njit(*args, **kwargs)

    monkeypatch.setattr(_jit.numba, "njit", njit_without_locator)
    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        @_jit.jit()
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


@pytest.mark.parametrize("n_jobs", [1, -1, None, 10_000, -10_000])
def test_kernel_threads_sets_then_restores(n_jobs):
    before = numba.get_num_threads()
    available = numba.config.NUMBA_NUM_THREADS
    with _jit.kernel_threads(n_jobs) as used:
        assert numba.get_num_threads() == used
        assert 1 <= used <= available
        if n_jobs == 1:
            assert used == 1
        if n_jobs in (-1, 10_000):
            assert used == available
        if n_jobs is None:
            assert used == before
    assert numba.get_num_threads() == before


def test_kernel_threads_restores_after_an_error():
    before = numba.get_num_threads()
    with pytest.raises(ZeroDivisionError):
        with _jit.kernel_threads(1):
            1 / 0
    assert numba.get_num_threads() == before
