"""Scale: time per epoch and peak memory on MSLR-WEB30K-sized data, and one 200,000-document query.

    python benchmarks/bench_scale.py [--quick] [--out benchmarks/results]

or from Python: ``from benchmarks import bench_scale; bench_scale.run(quick=True)``.

What is measured
----------------
Data: ``make_ranking`` shaped like MSLR-WEB30K: 136 features (20 informative), query lengths
in [20, 370] (right-skewed, mean about 120 documents), 10,000 queries, about 1.2 M rows
(``--quick``: 165 queries, about 20,000 rows). X is standardized once (float64), outside every
timer, by the process that generates it, and saved as .npy files in a temporary directory. The
smaller sizes of the scaling study (0.1 M and 0.3 M rows) are the first queries of the same
sample, so the query-length distribution is the same. The single-query case is one
``make_ranking`` query of 200,000 documents (``--quick``: 20,000), 136 features, standardized.

Every model is measured in its own fresh Python process ("child"), which (1) imports what it
needs, (2) warms up with a tiny fit of the same model (loads the Numba cache / compiles, so no
JIT memory or time is counted), (3) reads the rows it needs straight from the .npy file into one
array, (4) records its resident set size (VmRSS) -- the *baseline*, data included -- and
(5) runs the timed fit. Peak memory is the process's peak RSS after the fit
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, checked against VmHWM in /proc/self/status); the
*increment* is peak minus baseline, i.e. what the fit allocated on top of the data. The peak RSS
before the fit is recorded too, to show the peak really belongs to the fit. The parent process
never holds the big arrays: on Linux, a child started by fork/vfork + exec inherits the parent's
peak RSS in ``ru_maxrss`` (not in VmHWM), so a large parent would inflate every child's figure.

Ours (``n_jobs=None``, the default: the lambda kernels on one thread, as in scikit-learn, while
the forward/backward matrix products run on NumPy's BLAS and its own thread pool -- 2 threads
here, reported in the JSON; ``n_jobs=-1``, kernels on both cores, is a diagnostic below):
``LambdaRankRanker`` with ``hidden_layer_sizes=()`` (linear) and ``(64,)`` (the default), the
default with ``k=30`` (LightGBM's default truncation level), and ``RankNetRanker`` linear, all
with ``batch_size="auto"`` (32 queries), ``verbose=True`` and ``max_iter`` = a few epochs. The
fit prints the wall time of every epoch; *time per epoch* is the median of the epochs after the
first, *setup* = fit time minus the sum of the epoch times (validation, arranging X query by
query -- a copy of X -- and the objective's caches), and ``fit / n_iter_`` is given as well.

LightGBM: ``LGBMRanker(n_estimators=N, verbose=-1)`` with its defaults otherwise (lambdarank,
31 leaves, ``lambdarank_truncation_level=30``, all cores), ``group`` = query sizes. A callback
records the time after every boosting iteration; *time per iteration* is the median of the
differences, *setup* (Dataset construction: binning) = time to the first callback minus one
iteration. One epoch of a neural ranker (a pass over every query, one gradient step per 32
queries) and one boosting iteration (one tree on all rows) are different units of work: a
ranker needs tens to hundreds of either, and how many depends on the model.

Kernel memory: ``LambdaRankObjective(...).gradient`` alone on one query of n documents (labels
from the single-query set, standard normal scores, k=30, ``with_cost=True`` as in training). The
process's peak RSS is reset just before the call (``echo 5 > /proc/self/clear_refs``) and read
just after; the increment over VmRSS before the call is what the call allocated (an n x n float64
matrix would be 8 n^2 bytes: 320 GB at n = 200,000). Measured at three n to show the growth.
That process runs with glibc's mmap threshold fixed at 64 KiB from its start
(``MALLOC_MMAP_THRESHOLD_=65536``), so the call's buffers are fresh pages, not heap pages freed
earlier in the process (RSS would not show those: a first attempt measured 0 bytes that way).

Scaling: time per epoch of ``LambdaRankRanker()`` (default MLP, k=None) and per iteration of
LightGBM at 0.1 M, 0.3 M and 1.2 M rows; the slope of log(time) against log(rows) is the growth
exponent (1 = linear). The two smaller sizes are fitted in the same processes, after the
full-size fit (times only: their memory would not be a fresh-process figure).

Disturbance: "other processes' CPU" is the share of the machine's CPU capacity (from /proc/stat)
that processes other than the measuring one used during the fit -- the machine is shared, and
this says how disturbed a figure is; "own CPU / wall" is the measuring process's CPU time over
wall time (2.0 = both cores busy, spinning included). A run during which other processes used
more than 10 % of the CPU is discarded and run again (at most twice; the notes and the JSON list
the discarded runs), and the tables give the largest share among the runs kept. Repeats: every
configuration runs in ``repeats`` fresh processes and the medians are reported (per-epoch
figures are medians over all steady epochs of all runs).

Where the time goes: a cProfile of one ``fit(max_iter=1)`` of the default LambdaRank at full
size (BLAS forward/backward, the lambda kernel, gathering the minibatch rows); the lambda kernel
alone over one epoch's minibatches (313 calls of 32 queries at full size, no network in between,
on 1 and 2 threads, with and without the per-query cost); and the default model again with the
kernels on both cores (``n_jobs=-1``), alone and with ``OMP_WAIT_POLICY=passive`` (Numba's
OpenMP workers sleep instead of spinning between kernel calls) or ``OPENBLAS_NUM_THREADS=1``,
because then two thread pools -- Numba's and OpenBLAS's -- take turns on the same 2 cores in
every minibatch.
"""

import argparse
import bisect
import cProfile
import gc
import io
import json
import os
import pstats
import re
import resource
import subprocess
import sys
import tempfile
import time
import warnings
import zlib
from contextlib import redirect_stdout
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import machine_info, write_outputs  # noqa: E402
else:
    from ._common import machine_info, write_outputs

DATA = {"n_features": 136, "n_informative": 20, "min_docs": 20, "max_docs": 370}

# name -> (class, parameters); n_jobs=None (the default) unless the parameters say otherwise.
MODELS = {
    "LambdaRank MLP (64,)": ("LambdaRankRanker", {"hidden_layer_sizes": (64,)}),
    "LambdaRank MLP (64,) k=30": ("LambdaRankRanker", {"hidden_layer_sizes": (64,), "k": 30}),
    "LambdaRank linear": ("LambdaRankRanker", {"hidden_layer_sizes": ()}),
    "RankNet linear": ("RankNetRanker", {"hidden_layer_sizes": ()}),
    "LightGBM LGBMRanker": ("LGBMRanker", {}),
}
SCALE_OURS = "LambdaRank MLP (64,)"
# The default model again with the kernels' thread pool changed: (class, parameters, environment).
THREAD_DIAGNOSTICS = {
    "n_jobs=-1 (kernels on 2 threads; BLAS on 2)": (
        "LambdaRankRanker", {"hidden_layer_sizes": (64,), "n_jobs": -1}, {}
    ),
    "n_jobs=-1, OMP_WAIT_POLICY=passive": (
        "LambdaRankRanker", {"hidden_layer_sizes": (64,), "n_jobs": -1}, {"OMP_WAIT_POLICY": "passive"}
    ),
    "n_jobs=-1, OPENBLAS_NUM_THREADS=1": (
        "LambdaRankRanker", {"hidden_layer_sizes": (64,), "n_jobs": -1}, {"OPENBLAS_NUM_THREADS": "1"}
    ),
}
BOTH_POOLS = "n_jobs=-1 (kernels on 2 threads; BLAS on 2)"

CONFIGS = {
    "full": {
        "n_queries": 10_000,
        "scale_rows": (100_000, 300_000),  # plus all rows
        "epochs": 3,
        "lgb_iterations": 10,
        "repeats": 3,
        "single_docs": 200_000,
        "single_epochs": 2,
        "kernel_docs": (50_000, 100_000, 200_000),
        "profile": True,
        "single_models": ("LambdaRank linear k=30", "LambdaRank MLP (64,) k=30"),
        "thread_diagnostics": tuple(THREAD_DIAGNOSTICS),
    },
    "quick": {
        "n_queries": 165,
        "scale_rows": (5_000, 10_000),
        "epochs": 2,
        "lgb_iterations": 3,
        "repeats": 1,
        "single_docs": 20_000,
        "single_epochs": 2,
        "kernel_docs": (5_000, 10_000, 20_000),
        # The smoke test keeps every code path but the profile and the thread diagnostics,
        # which are measurements, not paths.
        "profile": False,
        "single_models": ("LambdaRank linear k=30",),
        "thread_diagnostics": (),
    },
}
LGBM = "LightGBM LGBMRanker"
SINGLE_MODELS = {
    "LambdaRank linear k=30": ("LambdaRankRanker", {"hidden_layer_sizes": (), "k": 30}),
    "LambdaRank MLP (64,) k=30": ("LambdaRankRanker", {"hidden_layer_sizes": (64,), "k": 30}),
}
KERNEL_K = 30
# A run during which other processes used more than this share of the machine's CPU is discarded
# and run again (at most MAX_RETRIES times; the last attempt is kept whatever happened).
DISTURBED = 0.10
MAX_RETRIES = 2
# glibc malloc settings of the kernel-memory process, from its start: a fixed mmap threshold (no
# dynamic raise after a large free), so that every buffer of 64 KiB or more is fresh memory that
# shows in RSS when touched and is returned when freed, instead of reusing heap pages freed
# earlier in the process (which RSS would not show).
KERNEL_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0"}
MB = 1024 * 1024


# ----------------------------------------------------------------------------------------------
# Helpers used inside the children


def _proc_status():
    """VmRSS and VmHWM of this process, in bytes."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    return out


def _cpu_snapshot():
    """(machine busy CPU seconds from /proc/stat, this process's CPU seconds, wall time)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    busy = (sum(fields[:8]) - fields[3] - fields[4]) / ticks  # all but idle and iowait
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return busy, usage.ru_utime + usage.ru_stime, time.perf_counter()


def _other_load(before, after):
    """Share of the machine's CPU capacity used by other processes between two snapshots."""
    busy, own, wall = (b - a for a, b in zip(before, after))
    return max(busy - own, 0.0) / (wall * os.cpu_count())


def _ru_maxrss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kB


def _reset_peak():
    """Reset the peak RSS of this process to its current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _load_rows(path, n_rows=None):
    """The first n_rows of a .npy array, read into one new array (no temporary copy)."""
    import numpy as np

    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        fmt = np.lib.format
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
        assert not fortran
        n = shape[0] if n_rows is None else min(n_rows, shape[0])
        per_row = int(np.prod(shape[1:], dtype=np.int64))
        return np.fromfile(f, dtype=dtype, count=n * per_row).reshape((n,) + tuple(shape[1:]))


def _blas_info():
    try:
        from threadpoolctl import threadpool_info

        return [
            {k: d.get(k) for k in ("user_api", "internal_api", "num_threads")} for d in threadpool_info()
        ]
    except Exception as exc:  # pragma: no cover - informational only
        return str(exc)


def _make_model(cls_name, params, max_iter, verbose=True):
    if cls_name == "LGBMRanker":
        from lightgbm import LGBMRanker

        return LGBMRanker(n_estimators=max_iter, verbose=-1, **params)
    import sklearn_ranknet

    cls = getattr(sklearn_ranknet, cls_name)
    return cls(max_iter=max_iter, random_state=0, verbose=verbose, **{"n_jobs": None, **params})


_EPOCH_LINE = re.compile(r"^Epoch\s+(\d+)\s.*\s([0-9.]+)s\s*$")


def _child_make_data(spec):
    import numpy as np

    from sklearn_ranknet.datasets import make_ranking

    out_dir = Path(spec["dir"])
    info = {}
    for name, n_queries, docs in (
        ("multi", spec["n_queries"], (DATA["min_docs"], DATA["max_docs"])),
        ("single", 1, (spec["single_docs"], spec["single_docs"])),
    ):
        t0 = time.perf_counter()
        X, y, groups = make_ranking(
            n_queries,
            n_features=DATA["n_features"],
            n_informative=DATA["n_informative"],
            min_docs=docs[0],
            max_docs=docs[1],
            random_state=0,
        )
        generated = time.perf_counter() - t0
        X -= X.mean(axis=0)
        X /= X.std(axis=0)
        np.save(out_dir / f"{name}_X.npy", X)
        np.save(out_dir / f"{name}_y.npy", y)
        np.save(out_dir / f"{name}_groups.npy", groups)
        sizes = np.bincount(groups)
        info[name] = {
            "n_rows": int(len(y)),
            "n_queries": int(len(sizes)),
            "n_features": int(X.shape[1]),
            "docs_per_query_mean": float(sizes.mean()),
            "docs_per_query_median": float(np.median(sizes)),
            "docs_per_query_max": int(sizes.max()),
            "label_shares": [round(float(s), 4) for s in np.bincount(y, minlength=5) / len(y)],
            "cumulative_rows": np.cumsum(sizes).tolist() if name == "multi" else None,
            "generate_s": generated,
        }
    return info


def _warm_up(cls_name, params):
    """A tiny fit of the same model: imports, Numba cache loading / compilation."""
    import numpy as np

    from sklearn_ranknet.datasets import make_ranking

    # Queries long enough that the lambda kernels take their parallel path (threads started).
    Xs, ys, gs = make_ranking(20, n_features=DATA["n_features"], min_docs=100, max_docs=300, random_state=1)
    with redirect_stdout(io.StringIO()):
        model = _make_model(cls_name, params, 1)
        if cls_name == "LGBMRanker":
            model.fit(Xs, ys, group=np.bincount(gs))
        else:
            model.fit(Xs, ys, groups=gs)


def _load(data_dir, which, n_rows):
    import numpy as np

    X = _load_rows(data_dir / f"{which}_X.npy", n_rows)
    y = np.load(data_dir / f"{which}_y.npy")[: len(X)]
    groups = np.load(data_dir / f"{which}_groups.npy")[: len(X)]
    return X, y, groups


def _timed_fit(cls_name, params, max_iter, X, y, groups):
    """Fit once; time per epoch / boosting iteration, setup, peak memory."""
    import numpy as np

    gc.collect()
    before = _proc_status()
    out = {
        "n_rows": int(len(X)),
        "n_queries": int(len(np.unique(groups))),
        "load_before": os.getloadavg()[0],
        "baseline_rss": before["VmRSS"],
        "peak_before_fit": max(before["VmHWM"], _ru_maxrss()),
    }
    model = _make_model(cls_name, params, max_iter)
    cpu_before = _cpu_snapshot()
    if cls_name == "LGBMRanker":
        stamps = []
        t0 = time.perf_counter()
        try:
            model.fit(
                X, y, group=np.bincount(groups), callbacks=[lambda env: stamps.append(time.perf_counter())]
            )
        except Exception as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"
            return out
        out["fit_s"] = time.perf_counter() - t0
        steps = np.diff(stamps)
        per_iter = float(np.median(steps)) if len(steps) else stamps[0] - t0
        out["n_iter"] = len(stamps)
        out["step_times_s"] = [stamps[0] - t0] + steps.tolist()  # the first includes Dataset construction
        out["per_step_s"] = per_iter
        out["setup_s"] = (stamps[0] - t0) - per_iter
        out["fit_per_iter_s"] = out["fit_s"] / len(stamps)
    else:
        printed = io.StringIO()
        t0 = time.perf_counter()
        with redirect_stdout(printed):
            model.fit(X, y, groups=groups)
        out["fit_s"] = time.perf_counter() - t0
        epochs = [float(m.group(2)) for m in map(_EPOCH_LINE.match, printed.getvalue().splitlines()) if m]
        out["n_iter"] = int(model.n_iter_)
        out["fit_per_iter_s"] = out["fit_s"] / model.n_iter_
        if len(epochs) == model.n_iter_:
            out["step_times_s"] = epochs
            out["per_step_s"] = float(np.median(epochs[1:] if len(epochs) > 1 else epochs))
            out["setup_s"] = out["fit_s"] - sum(epochs)
        else:  # verbose format not understood: fall back to fit / n_iter_
            out["step_times_s"] = []
            out["per_step_s"] = out["fit_per_iter_s"]
            out["setup_s"] = None
    cpu_after = _cpu_snapshot()
    out["other_cpu_share"] = _other_load(cpu_before, cpu_after)
    out["own_cpu_per_wall"] = (cpu_after[1] - cpu_before[1]) / (cpu_after[2] - cpu_before[2])
    after = _proc_status()
    out["peak_ru_maxrss"] = _ru_maxrss()
    out["peak_vmhwm"] = after["VmHWM"]
    out["load_after"] = os.getloadavg()[0]
    return out


def _child_fit(spec):
    """One model in a fresh process: one fit per size in spec["n_rows"] (only the first is a
    fresh-process memory figure; a profiled epoch may follow it), then optionally LightGBM on the
    single query and the lambda kernel alone over one epoch (both after every measurement)."""
    warnings.simplefilter("ignore")
    cls_name, params = spec["cls"], spec["params"]
    data = Path(spec["dir"])
    _warm_up(cls_name, params)
    out = {"fits": [], "blas": _blas_info()}
    for i, n_rows in enumerate(spec["n_rows"]):
        X, y, groups = _load(data, spec["data"], n_rows)
        fit = _timed_fit(cls_name, params, spec["max_iter"], X, y, groups)
        fit["fresh_process"] = i == 0
        out["fits"].append(fit)
        if i == 0 and spec.get("profile"):
            out["profile"] = _profile_fit(cls_name, params, X, y, groups)
        del X, y, groups
    if spec.get("lightgbm_single"):
        X, y, groups = _load(data, "single", None)
        out["lightgbm_single"] = _timed_fit("LGBMRanker", {}, 1, X, y, groups)
    if spec.get("kernel_epoch"):
        out["kernel_epoch"] = _kernel_epoch(data)
    return out


def _child_kernel(spec):
    import numpy as np

    from sklearn_ranknet._objectives import LambdaRankObjective, label_sorted_order

    data = Path(spec["dir"])
    y_all = np.load(data / "single_y.npy").astype(np.float64)
    rng = np.random.default_rng(0)

    def setup(n):
        offsets = np.array([0, n], dtype=np.int64)
        labels = y_all[:n][label_sorted_order(y_all[:n], offsets)]
        return labels, offsets, rng.standard_normal(n), np.arange(n), np.zeros(1, dtype=np.int64)

    def objective(labels, offsets):
        return LambdaRankObjective(labels, offsets, sigma=1.0, metric="ndcg", k=spec["k"], gain="exponential")

    labels, offsets, scores, rows, queries = setup(1000)  # warm-up: compile / load the cache
    objective(labels, offsets).gradient(scores, rows, queries, offsets, with_cost=True)
    gc.collect()
    out = {
        "malloc_env": {k: os.environ.get(k) for k in KERNEL_ENV},
        "resettable": _reset_peak(),
        "sizes": [],
        "load_before": os.getloadavg()[0],
    }
    for n in spec["docs"]:
        labels, offsets, scores, rows, queries = setup(n)
        gc.collect()
        base = _proc_status()["VmRSS"]
        _reset_peak()
        obj = objective(labels, offsets)
        built = _proc_status()
        gc.collect()
        base_call = _proc_status()["VmRSS"]
        _reset_peak()
        t0 = time.perf_counter()
        grad, cost = obj.gradient(scores, rows, queries, offsets, with_cost=True)
        first = time.perf_counter() - t0
        after = _proc_status()
        times = [first]
        for _ in range(2):
            t0 = time.perf_counter()
            obj.gradient(scores, rows, queries, offsets, with_cost=True)
            times.append(time.perf_counter() - t0)
        out["sizes"].append({
            "n_docs": n,
            "objective_init_increment": built["VmHWM"] - base,
            "gradient_increment": after["VmHWM"] - base_call,
            "gradient_peak_rss": after["VmHWM"],
            "gradient_s": float(np.median(times)),
            "output_bytes": int(grad.nbytes + cost.nbytes),
            "n_by_n_float64_bytes": 8 * n * n,
            "finite": bool(np.isfinite(grad).all()),
        })
        del obj, grad, cost
    return out


def _profile_fit(cls_name, params, X, y, groups):
    """cProfile of one fit(max_iter=1): where the time of an epoch goes."""
    model = _make_model(cls_name, params, 1, verbose=False)
    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    model.fit(X, y, groups=groups)
    profiler.disable()
    total = time.perf_counter() - t0
    stats = pstats.Stats(profiler)
    rows = []
    for (filename, line, func), (cc, nc, tt, ct, _callers) in stats.stats.items():
        rows.append({
            "function": f"{Path(filename).name}:{line}({func})" if line else func,
            "file": filename,
            "name": func,
            "ncalls": nc,
            "tottime": tt,
            "cumtime": ct,
        })

    def cum(file_end, name, key="cumtime"):
        return sum(r[key] for r in rows if r["file"].endswith(file_end) and r["name"] == name)

    epoch = cum("_base.py", "_fit_stochastic")
    parts = {
        "epoch (_fit_stochastic)": epoch,
        "forward (_network.forward: X @ W, relu, h @ w)": cum("_network.py", "forward"),
        "lambda kernel (LambdaRankObjective.gradient)": cum("_objectives.py", "gradient"),
        "backward (_network.backward: X.T @ delta, ...)": cum("_network.py", "backward"),
        "optimizer (Adam.update)": cum("_optim.py", "update"),
        "batch row indices (QueryGroups.rows_of)": cum("_groups.py", "rows_of"),
        "gather X[rows] + rest of _step (its own time)": cum("_base.py", "_step", "tottime"),
        "setup (_validate_training_data)": cum("_base.py", "_validate_training_data"),
    }
    rows.sort(key=lambda r: r["tottime"], reverse=True)
    return {
        "fit_s_under_profiler": total,
        "parts_s": parts,
        "top_tottime": [{k: r[k] for k in ("function", "ncalls", "tottime", "cumtime")} for r in rows[:15]],
        "load": os.getloadavg()[0],
    }


def _kernel_epoch(data):
    """The lambda kernel alone over one epoch's minibatches (32 whole queries each, shuffled),
    as the training loop calls it, without the network in between: k=None and k=30, with and
    without the per-query cost (training asks for it in every step, for ``loss_curve_``)."""
    import numpy as np

    from sklearn_ranknet._groups import QueryGroups
    from sklearn_ranknet._jit import kernel_threads
    from sklearn_ranknet._objectives import LambdaRankObjective, label_sorted_order

    y = np.load(data / "multi_y.npy").astype(np.float64)
    groups = np.load(data / "multi_groups.npy")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(groups))])
    y = y[label_sorted_order(y, offsets)]
    n_queries = len(offsets) - 1
    scores = np.random.default_rng(0).standard_normal(len(y))
    queries = QueryGroups(order=None, offsets=offsets, query_ids=np.arange(n_queries))
    shuffled = np.random.RandomState(0).permutation(n_queries)
    batches = []
    for start in range(0, n_queries, 32):
        qs = shuffled[start : start + 32]
        rows, offs = queries.rows_of(qs)
        batches.append((scores[rows], rows, qs, offs))
    out = {"n_batches": len(batches), "n_rows": int(len(y)), "cases": [], "load_before": os.getloadavg()[0]}
    for k in (None, 30):
        obj = LambdaRankObjective(y, offsets, sigma=1.0, metric="ndcg", k=k, gain="exponential")
        for n_threads in (1, 2):
            # The threads the estimators set around training (n_jobs); the objective keeps them.
            with kernel_threads(n_threads):
                obj.gradient(*batches[0], with_cost=True)  # warm-up
                obj.gradient(*batches[0], with_cost=False)
                for with_cost in (True, False):
                    times = []
                    for _ in range(3):
                        t0 = time.perf_counter()
                        for batch in batches:
                            obj.gradient(*batch, with_cost=with_cost)
                        times.append(time.perf_counter() - t0)
                    out["cases"].append(
                        {"k": k, "threads": n_threads, "with_cost": with_cost, "epoch_s": float(np.median(times))}
                    )
    return out


CHILDREN = {
    "make_data": _child_make_data,
    "fit": _child_fit,
    "kernel": _child_kernel,
}


# ----------------------------------------------------------------------------------------------
# Parent


def _run_child(spec):
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
        env=dict(os.environ, **spec.get("env", {})),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"child {spec['task']} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _package_state():
    """Git commit of the checkout and a fingerprint of the package sources (to tell whether the
    code under test changed while the benchmark ran)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        head = None
    stamps = sorted(
        (str(f.relative_to(root)), f.stat().st_mtime_ns) for f in (root / "sklearn_ranknet").glob("*.py")
    )
    return {"git_head": head, "sources_fingerprint": zlib.crc32(repr(stamps).encode())}


def _median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


def _summarize(runs):
    """Medians over the fresh processes of one configuration."""
    steady = []
    for r in runs:
        steps = r.get("step_times_s") or []
        steady.extend(steps[1:] if len(steps) > 1 else [r["per_step_s"]])
    return {
        "n_rows": runs[0]["n_rows"],
        "n_queries": runs[0]["n_queries"],
        "n_iter": runs[0]["n_iter"],
        "per_step_s": _median(steady),
        "first_step_s": _median([(r.get("step_times_s") or [None])[0] for r in runs]),
        "setup_s": _median([r["setup_s"] for r in runs]),
        "fit_s": _median([r["fit_s"] for r in runs]),
        "fit_per_iter_s": _median([r["fit_per_iter_s"] for r in runs]),
        "baseline_rss_mb": _median([r["baseline_rss"] for r in runs]) / MB,
        "peak_rss_mb": _median([r["peak_ru_maxrss"] for r in runs]) / MB,
        "peak_vmhwm_mb": _median([r["peak_vmhwm"] for r in runs]) / MB,
        "peak_before_fit_mb": _median([r["peak_before_fit"] for r in runs]) / MB,
        "increment_mb": _median([r["peak_ru_maxrss"] - r["baseline_rss"] for r in runs]) / MB,
        "load_average": [round(r["load_before"], 2) for r in runs] + [round(runs[-1]["load_after"], 2)],
        "other_cpu_share": max(r.get("other_cpu_share", 0.0) for r in runs),
        "own_cpu_per_wall": _median([r.get("own_cpu_per_wall") for r in runs]),
        "runs": runs,
    }


def _fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def _slope(points):
    import numpy as np

    rows = np.log([p[0] for p in points])
    times = np.log([p[1] for p in points])
    return float(np.polyfit(rows, times, 1)[0])


def _plot(path, scaling, have_lgbm):
    try:
        import matplotlib
    except ImportError:  # plots need the bench extra; the tables do not
        print(f"matplotlib is not installed (pip install '.[bench]'): no {path}")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    series = [(SCALE_OURS, f"ours: {SCALE_OURS}, s / epoch", "o-")]
    if have_lgbm:
        series.append((LGBM, "LightGBM LGBMRanker, s / boosting iteration", "s-"))
    for name, label, style in series:
        pts = scaling[name]
        rows = [p["n_rows"] for p in pts]
        ax.loglog(rows, [p["per_step_s"] for p in pts], style, label=label)
    ref = scaling[SCALE_OURS]
    r0, t0 = ref[0]["n_rows"], ref[0]["per_step_s"]
    r1 = ref[-1]["n_rows"]
    ax.loglog([r0, r1], [t0, t0 * r1 / r0], ":", color="gray", label="slope 1 (linear), through ours")
    ax.set_xlabel("rows (documents)")
    ax.set_ylabel("wall time (s)")
    ax.set_title("Time per epoch / per boosting iteration vs rows\n(different units of work)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(quick=False, out_dir="benchmarks/results"):
    cfg = CONFIGS["quick" if quick else "full"]
    started = time.perf_counter()
    code_before = _package_state()
    machine = machine_info()
    try:
        import lightgbm  # noqa: F401

        have_lgbm = True
    except ImportError:
        have_lgbm = False
        print("Note: lightgbm is not importable; the LightGBM parts are skipped.")
    models = {k: v for k, v in MODELS.items() if have_lgbm or v[0] != "LGBMRanker"}
    reps = cfg["repeats"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        print(f"[scale] generating data ({cfg['n_queries']} queries + one {cfg['single_docs']}-doc query) ...", flush=True)
        data = _run_child(
            {"task": "make_data", "dir": tmp, "n_queries": cfg["n_queries"], "single_docs": cfg["single_docs"]}
        )
        cumulative = data["multi"].pop("cumulative_rows")
        n_all = data["multi"]["n_rows"]
        # Prefixes of whole queries closest to each target size.
        scale_rows = []
        for target in cfg["scale_rows"]:
            i = bisect.bisect_left(cumulative, target)
            scale_rows.append(cumulative[min(i, len(cumulative) - 1)])
        scale_rows.append(n_all)

        def fit(name, n_rows, max_iter, which="multi", table=models, **extra):
            """``repeats`` fresh processes of one model; a list of sizes runs in each."""
            cls, params, *env = table[name]
            if env:
                extra["env"] = env[0]
            unit = "iterations" if cls == "LGBMRanker" else "epochs"
            children = []
            for rep in range(reps):
                for attempt in range(1 + MAX_RETRIES):
                    print(f"[scale] {name}: {which} {n_rows} rows, {max_iter} {unit} (run {rep + 1}/{reps})", flush=True)
                    child = _run_child({
                        "task": "fit", "dir": tmp, "data": which, "n_rows": n_rows,
                        "cls": cls, "params": params, "max_iter": max_iter,
                        **{k: v for k, v in extra.items() if rep == 0 or k == "env"},
                    })
                    other = max(f.get("other_cpu_share", 0.0) for f in child["fits"])
                    if other <= DISTURBED or attempt == MAX_RETRIES:
                        break
                    print(f"[scale]   other processes used {other:.0%} of the CPU: discarded, run again", flush=True)
                    discarded.append({"model": name, "data": which, "run": rep + 1, "other_cpu_share": other,
                                      "step_times_s": [f.get("step_times_s") for f in child["fits"]]})
                children.append(child)
            sizes = [_summarize([c["fits"][i] for c in children]) for i in range(len(n_rows))]
            return sizes, children[0]

        full, scaling, blas, profile, profile_both, lgbm_single, kernel_epoch = {}, {}, None, None, None, None, None
        discarded = []
        for name, (cls, _) in models.items():
            lightgbm = cls == "LGBMRanker"
            extra = {}
            if name == SCALE_OURS:
                extra["profile"] = cfg["profile"]
                extra["kernel_epoch"] = True
            if lightgbm:
                extra["lightgbm_single"] = True
            # The default model and LightGBM also time the smaller sizes of the scaling study, in
            # the same processes after the full-size fit (whose memory figure stays fresh).
            smaller = scale_rows[:-1] if name in (SCALE_OURS, LGBM) else []
            sizes, first = fit(name, [n_all] + smaller, cfg["lgb_iterations"] if lightgbm else cfg["epochs"], **extra)
            full[name] = sizes[0]
            if smaller:
                scaling[name] = sizes[1:] + sizes[:1]
            blas = blas or first["blas"]
            profile = first.get("profile", profile)
            lgbm_single = first.get("lightgbm_single", lgbm_single)
            kernel_epoch = first.get("kernel_epoch", kernel_epoch)
        threads = {}
        for name in cfg["thread_diagnostics"]:
            sizes, first = fit(name, [n_all], cfg["epochs"], table=THREAD_DIAGNOSTICS,
                               **({"profile": True} if name == BOTH_POOLS and cfg["profile"] else {}))
            threads[name] = sizes[0]
            if "profile" in first:
                profile_both = first["profile"]
        single = {}
        for name in cfg["single_models"]:
            single[name] = fit(name, [None], cfg["single_epochs"], which="single", table=SINGLE_MODELS)[0][0]
        print("[scale] lambda kernel alone: memory on one query, time over one epoch of minibatches ...", flush=True)
        kernel = _run_child({
            "task": "kernel", "dir": tmp, "docs": list(cfg["kernel_docs"]), "k": KERNEL_K, "env": KERNEL_ENV,
        })

    # ---------------------------------------------------------------- tables
    md = data["multi"]
    lines = [
        f"### 1. MSLR-WEB30K-shaped data: {md['n_rows']:,} rows, {md['n_queries']:,} queries "
        f"(mean {md['docs_per_query_mean']:.0f}, median {md['docs_per_query_median']:.0f}, max "
        f"{md['docs_per_query_max']} documents per query), {md['n_features']} features",
        "",
        "| model | unit | time per unit (s) | first unit (s) | setup (s) | fit / n_iter_ (s) | units | "
        "peak RSS (MB) | RSS after loading (MB) | increment (MB) | own CPU / wall | other processes' CPU (max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in full.items():
        unit = "boosting iteration" if models[name][0] == "LGBMRanker" else "epoch"
        lines.append(
            f"| {name} | {unit} | {_fmt(r['per_step_s'], '.3f')} | {_fmt(r['first_step_s'], '.3f')} | "
            f"{_fmt(r['setup_s'])} | {_fmt(r['fit_per_iter_s'], '.3f')} | {r['n_iter']} | "
            f"{r['peak_rss_mb']:.0f} | {r['baseline_rss_mb']:.0f} | {r['increment_mb']:.0f} | "
            f"{r['own_cpu_per_wall']:.2f} | {100 * r['other_cpu_share']:.0f} % |"
        )
    lines += [
        "",
        "### Scaling with rows (same query-length distribution: the first queries of the sample)",
        "",
        "| model | rows | queries | time per unit (s) | per million rows (s) | increment (MB) |",
        "|---|---|---|---|---|---|",
    ]
    slopes = {}
    for name, pts in scaling.items():
        unit = "iteration" if name == LGBM else "epoch"
        for p in pts:
            lines.append(
                f"| {name} ({unit}) | {p['n_rows']:,} | {p['n_queries']:,} | {p['per_step_s']:.3f} | "
                f"{p['per_step_s'] / p['n_rows'] * 1e6:.3f} | "
                + (f"{p['increment_mb']:.0f} |" if p["runs"][0]["fresh_process"] else "(not a fresh process) |")
            )
        slopes[name] = _slope([(p["n_rows"], p["per_step_s"]) for p in pts])
    sd = data["single"]
    lines += [
        "",
        f"### 2. One query of {sd['n_rows']:,} documents, {sd['n_features']} features",
        "",
        "| model | time per epoch (s) | first epoch (s) | setup (s) | epochs | peak RSS (MB) | "
        "RSS after loading (MB) | increment (MB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in single.items():
        lines.append(
            f"| {name} | {_fmt(r['per_step_s'], '.3f')} | {_fmt(r['first_step_s'], '.3f')} | {_fmt(r['setup_s'])} | "
            f"{r['n_iter']} | {r['peak_rss_mb']:.0f} | {r['baseline_rss_mb']:.0f} | {r['increment_mb']:.0f} |"
        )
    lines += [
        "",
        f"Lambda kernel alone (`LambdaRankObjective(k={KERNEL_K}).gradient`, one query, with_cost=True):",
        "",
        "| documents | gradient time (s) | memory of the call (MB) | bytes per document | building the "
        "objective (MB) | an n x n float64 matrix would be (GB) |",
        "|---|---|---|---|---|---|",
    ]
    for s in kernel["sizes"]:
        lines.append(
            f"| {s['n_docs']:,} | {s['gradient_s']:.4f} | {s['gradient_increment'] / MB:.1f} | "
            f"{s['gradient_increment'] / s['n_docs']:.0f} | {s['objective_init_increment'] / MB:.1f} | "
            f"{s['n_by_n_float64_bytes'] / 1e9:,.1f} |"
        )
    if lgbm_single is not None:
        lines += ["", f"LightGBM `LGBMRanker` on the same {sd['n_rows']:,}-document query: "
                  + (f"`{lgbm_single['error']}`" if "error" in lgbm_single
                     else f"trained ({lgbm_single['per_step_s']:.3f} s per iteration)")]
    default = full[SCALE_OURS]
    lines += [
        "",
        f"### Thread pools: `{SCALE_OURS}` at {md['n_rows']:,} rows with the kernels' threads changed",
        "",
        "Numba runs the lambda kernels on its OpenMP threading layer, NumPy the matrix products on "
        "OpenBLAS's own threads; with n_jobs=-1 on 2 cores the two pools alternate every minibatch.",
        "",
        "| configuration | time per epoch (s) | vs default | setup (s) | increment (MB) | own CPU / wall | "
        "other processes' CPU (max) |",
        "|---|---|---|---|---|---|---|",
    ] + [
        f"| {name} | {r['per_step_s']:.3f} | {r['per_step_s'] / default['per_step_s']:.2f} | "
        f"{_fmt(r['setup_s'])} | {r['increment_mb']:.0f} | {r['own_cpu_per_wall']:.2f} | "
        f"{100 * r['other_cpu_share']:.0f} % |"
        for name, r in [("default (n_jobs=None: kernels on 1 thread; BLAS on 2)", default), *threads.items()]
    ]
    lines += [
        "",
        f"Lambda kernel alone over one epoch of minibatches ({kernel_epoch['n_batches']} calls of 32 queries, "
        f"{kernel_epoch['n_rows']:,} rows, standard normal scores, no network in between):",
        "",
        "| k | kernel threads | with_cost=True (as training calls it) (s) | with_cost=False (s) | ratio |",
        "|---|---|---|---|---|",
    ]
    for k in (None, 30):
        for n_threads in (1, 2):
            case = {
                c["with_cost"]: c["epoch_s"] for c in kernel_epoch["cases"] if c["k"] == k and c["threads"] == n_threads
            }
            lines.append(
                f"| {k} | {n_threads} | {case[True]:.3f} | {case[False]:.3f} | {case[True] / case[False]:.1f} |"
            )
    if profile:
        columns = [("default n_jobs=None", profile)] + ([("n_jobs=-1", profile_both)] if profile_both else [])
        lines += [
            "",
            f"### Where an epoch goes: cProfile of `{SCALE_OURS}` fit(max_iter=1) on {md['n_rows']:,} rows "
            "(" + ", ".join(f"{n}: {p['fit_s_under_profiler']:.2f} s under the profiler" for n, p in columns) + ")",
            "",
            "| part | " + " | ".join(f"{n} (s) | share" for n, _ in columns) + " |",
            "|---|" + "---|---|" * len(columns),
        ]
        for key in profile["parts_s"]:
            cells = []
            for _, p in columns:
                v, epoch = p["parts_s"][key], p["parts_s"]["epoch (_fit_stochastic)"] or float("nan")
                cells.append(f"{v:.3f} | {'' if key.startswith('setup') else f'{100 * v / epoch:.0f} %'}")
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "Top 15 by own time (default n_jobs=None):",
            "",
            "| function | calls | tottime (s) | cumtime (s) |",
            "|---|---|---|---|",
        ] + [
            f"| `{r['function']}` | {r['ncalls']} | {r['tottime']:.3f} | {r['cumtime']:.3f} |"
            for r in profile["top_tottime"]
        ]

    # ---------------------------------------------------------------- verdicts
    verdicts = []
    s = slopes[SCALE_OURS]
    first, last = scaling[SCALE_OURS][0], scaling[SCALE_OURS][-1]
    per_m = [p["per_step_s"] / p["n_rows"] * 1e6 for p in (first, last)]
    growth = "linear" if 0.9 <= s <= 1.1 else ("sublinear" if s < 0.9 else "superlinear")
    verdicts.append(
        f"Growth with rows: our time per epoch ({SCALE_OURS}) grows as rows^{s:.2f} from {first['n_rows']:,} "
        f"to {last['n_rows']:,} rows ({per_m[0]:.2f} -> {per_m[1]:.2f} s per million rows): {growth}."
    )
    if have_lgbm:
        verdicts.append(
            f"LightGBM's time per boosting iteration grows as rows^{slopes[LGBM]:.2f} over the same sizes."
        )
        ours, lg = full[SCALE_OURS], full[LGBM]
        k30 = full.get("LambdaRank MLP (64,) k=30")
        verdicts.append(
            f"Per unit of work at {last['n_rows']:,} rows: one epoch of {SCALE_OURS} takes {ours['per_step_s']:.2f} s "
            + (f"({k30['per_step_s']:.2f} s with k=30), " if k30 else "")
            + f"one LightGBM boosting iteration {lg['per_step_s']:.2f} s "
            f"(epoch / iteration = {ours['per_step_s'] / lg['per_step_s']:.1f}x). These are different units: an "
            "epoch is a full pass with ~n_queries/32 Adam steps; an iteration adds one tree. Setup: ours "
            f"{_fmt(ours['setup_s'])} s, LightGBM {_fmt(lg['setup_s'])} s (binning)."
        )
        verdicts.append(
            f"Memory on top of the data at {last['n_rows']:,} rows: ours {ours['increment_mb']:.0f} MB "
            f"({SCALE_OURS}), LightGBM {lg['increment_mb']:.0f} MB; X itself is "
            f"{md['n_rows'] * md['n_features'] * 8 / MB:.0f} MB (float64)."
        )
    big = kernel["sizes"][-1]
    measured = [x for x in kernel["sizes"] if x["gradient_increment"] > 0]
    mem_slope = _slope([(x["n_docs"], x["gradient_increment"]) for x in measured]) if len(measured) > 1 else None
    linear_mem = (
        mem_slope is not None
        and mem_slope < 1.5
        and big["gradient_increment"] < 0.01 * big["n_by_n_float64_bytes"]
    )
    verdicts.append(
        f"Memory per query is {'O(n)' if linear_mem else 'NOT shown to be O(n)'}"
        + (f" (grows as n^{mem_slope:.2f})" if mem_slope is not None else "")
        + f": the kernel call on one {big['n_docs']:,}-document query allocates "
        f"{big['gradient_increment'] / MB:.1f} MB ({big['gradient_increment'] / big['n_docs']:.0f} bytes per document; "
        + ", ".join(f"{x['gradient_increment'] / MB:.1f} MB at {x['n_docs']:,}" for x in kernel["sizes"])
        + f"), against {big['n_by_n_float64_bytes'] / 1e9:,.0f} GB for one n x n float64 matrix."
        + ("" if kernel["resettable"] else " (peak RSS could not be reset: figures are upper bounds.)")
    )
    if BOTH_POOLS in threads:
        both = threads[BOTH_POOLS]
        ratio = both["per_step_s"] / default["per_step_s"]
        others = ", ".join(f"{n}: {r['per_step_s']:.2f} s" for n, r in threads.items() if n != BOTH_POOLS)
        verdicts.append(
            f"Finding (thread pools): an epoch of {SCALE_OURS} takes {default['per_step_s']:.2f} s with the default "
            f"n_jobs=None (kernels on one thread) and {both['per_step_s']:.2f} s with n_jobs=-1 ({ratio:.2f}x)"
            + (f"; {others}" if others else "") + ". "
            + ("With both pools on 2 threads, Numba's OpenMP workers and OpenBLAS's threads take turns on the 2 "
               "cores in every minibatch, and the pool that is not working keeps spinning."
               if ratio >= 1.15 else "No material difference here.")
        )
    cases = {(c["k"], c["threads"], c["with_cost"]): c["epoch_s"] for c in kernel_epoch["cases"]}
    verdicts.append(
        f"Finding (lambda kernel): over one epoch's {kernel_epoch['n_batches']} minibatches the kernel alone on one "
        f"thread takes {cases[(None, 1, True)]:.3f} s with the per-query cost that the training loop requests "
        f"every step, {cases[(None, 1, False)]:.3f} s without it (k=30: {cases[(30, 1, True)]:.3f} vs "
        f"{cases[(30, 1, False)]:.3f} s)."
    )
    elapsed = time.perf_counter() - started
    load_end = os.getloadavg()
    code_after = _package_state()
    code_note = f"Code under test: git {code_before['git_head']}" + (
        ", unchanged during the run."
        if code_after == code_before
        else f" -> {code_after['git_head']}: THE PACKAGE SOURCES CHANGED DURING THE RUN; figures may mix versions."
    )
    notes = [
        *(
            ("Method. " if i == 0 else "") + " ".join(paragraph.split())
            for i, paragraph in enumerate(__doc__.split("----------------\n")[1].strip().split("\n\n"))
        ),
        f"Settings: {cfg['epochs']} epochs per fit of ours ({cfg['single_epochs']} on the single query; one epoch = one "
        f"step there), {cfg['lgb_iterations']} LightGBM iterations, {reps} fresh process(es) per configuration; "
        f"n_jobs=None unless stated. Thread pools in a child (threadpoolctl): {json.dumps(blas)}.",
        "Note: our default k=None visits every pair of a query (O(n^2) per query); LightGBM's default "
        "lambdarank_truncation_level=30 visits pairs touching the top 30 (O(30 n)); the k=30 row is the "
        "like-for-like objective.",
        f"Load average (1 min) at start {machine['load_average_1min']:.2f}, at end {load_end[0]:.2f} "
        f"(per run in scale.json); whole benchmark {elapsed:.0f} s. {code_note}",
        f"Discarded runs (other processes above {DISTURBED:.0%} of the CPU): "
        + ("none." if not discarded else "; ".join(
            f"{d['model']} ({d['data']}) run {d['run']}: {d['other_cpu_share']:.0%}" for d in discarded) + "."),
    ] + verdicts
    result = {
        "quick": quick,
        "config": cfg,
        "data_params": DATA,
        "data": data,
        "full": full,
        "scaling": scaling,
        "slopes": slopes,
        "single_query": single,
        "lightgbm_single_query": lgbm_single,
        "kernel_memory": kernel,
        "profile": profile,
        "profile_n_jobs_-1": profile_both,
        "thread_diagnostics": threads,
        "kernel_epoch": kernel_epoch,
        "discarded_runs": discarded,
        "code": {"before": code_before, "after": code_after},
        "thread_pools": blas,
        "verdicts": verdicts,
        "elapsed_s": elapsed,
        "load_average_end": load_end,
        "machine": machine,
    }
    title = "Scale: MSLR-WEB30K-sized fits and a 200,000-document query" + (" (quick)" if quick else "")
    write_outputs(out_dir, "scale", result, title, lines, notes)
    _plot(out / "scale.png", scaling, have_lgbm)
    print(f"Wrote {out / 'scale.md'}, {out / 'scale.json'}, {out / 'scale.png'}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        spec = json.loads(args.child)
        print(json.dumps(CHILDREN[spec["task"]](spec)))
        return
    run(quick=args.quick, out_dir=args.out)


if __name__ == "__main__":
    main()
