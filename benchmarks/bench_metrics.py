"""Benchmark of the ranking metrics: sklearn-ranknet against ranx, pytrec_eval
and a per-query loop over scikit-learn's ``ndcg_score``.

Run it as a script::

    python benchmarks/bench_metrics.py [--quick] [--out benchmarks/results]

or from Python (the ``python -m benchmarks`` runner does this)::

    from benchmarks import bench_metrics
    results = bench_metrics.run(quick=True, out_dir="benchmarks/results")

What is measured
----------------
Data: ``n_docs`` documents in ``n_queries`` queries of *variable* length
(at least 2 documents, mean ``n_docs / n_queries`` = 100, roughly exponential
above the minimum, as in LETOR/MSLR data), graded labels 0..4 drawn with
probabilities ``LABEL_PROBS`` (most documents irrelevant, so a few short
queries have no relevant document at all), float64 uniform random scores,
all from one fixed seed. Full: 1,000,000 documents in 10,000 queries;
``--quick``: 100,000 in 1,000.

Each system computes NDCG@10 and, separately, MAP over the full list (MAP@None)
on the same data:

1. ours: ``ndcg_score(y, s, groups=qid, k=10)`` and ``map_score(y, s,
   groups=qid)``, with ``ignore_ties=False`` (default) and ``True``. Timed: the
   whole public call, validation and grouping included, on a sorted int64
   ``qid`` array and float64 ``y`` and ``s``.
2. ranx: ``Qrels``/``Run`` built outside the timer; timed: ``evaluate(qrels,
   run, "ndcg_burges@10")`` (exponential gain, like ours by default) and
   ``evaluate(qrels, run, "map")``, with ``save_results_in_run=False``.
3. pytrec_eval: ``RelevanceEvaluator`` built outside the timer; timed:
   ``evaluate(run)`` on a dict of dicts of str, plus the mean over queries.
4. scikit-learn: a Python loop over queries calling
   ``sklearn.metrics.ndcg_score(y_q[None], s_q[None], k=10)`` (NDCG only).

Every system is warmed up once (JIT compilation), then timed with
``time.perf_counter``; the median of several repetitions is the headline
figure, with the fastest repetition and the median process CPU time beside it
(on a shared machine CPU time of single-threaded calls is the steadier
figure). The numba-based systems (ours, ranx) are timed with
``numba.set_num_threads(1)`` and with numba's default thread count, and a
compute-bound ``prange`` probe measures how much parallel speed-up the machine
could give at that moment.

The agreement check compares per-query values where the definitions match,
and a breakdown times each stage of our call (validation, grouping, gains,
kernel) on its own. Targets are printed next to the figures, never tuned for.
"""

import argparse
import gc
import importlib
import importlib.metadata
import importlib.util
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common  # noqa: E402
else:
    from . import _common


SEED = 20240601
FULL = {"n_docs": 1_000_000, "n_queries": 10_000}
QUICK = {"n_docs": 100_000, "n_queries": 1_000}
MIN_QUERY_SIZE = 2  # sklearn.metrics.ndcg_score refuses one-document queries
LABEL_PROBS = (0.50, 0.25, 0.15, 0.07, 0.03)  # labels 0, 1, 2, 3, 4
K = 10
# Repetitions after the warm-up call (medians are reported): at least REPS,
# more for fast calls until MIN_TIMED_S seconds are timed, at most MAX_REPS.
REPS = {"ours": 7, "ranx": 5, "pytrec_eval": 3, "sklearn": 1}
MIN_TIMED_S = {"full": 1.0, "quick": 0.3}
MAX_REPS = 101
_TIMING = {"min_timed_s": MIN_TIMED_S["full"]}  # set by run()
SKLEARN_BUDGET_S = 120.0  # run the sklearn loop on every query if it fits
SKLEARN_SUBSET_S = 30.0  # otherwise time a random subset of about this long
DEFAULT_OUT = Path(__file__).resolve().parent / "results"

TARGETS = (
    "ours faster than ranx (same metric, same numba thread count)",
    "ours at least 10x faster than pytrec_eval",
)


# --------------------------------------------------------------------------
# Data


def make_data(n_docs, n_queries, seed=SEED):
    """Synthetic ranking data, query by query, with a sorted int64 ``qid``.

    Query sizes: ``MIN_QUERY_SIZE`` plus a uniformly random composition of the
    remaining documents into ``n_queries`` parts (sizes are then roughly
    exponential with the requested mean). Scores are float64 uniform on
    [0, 1); any two scores of one query that would collide once rounded to
    float32 (trec_eval stores scores as C ``float``) are redrawn, so every
    system sees the same strict ranking and no tie-breaking rule matters.
    """
    rng = np.random.default_rng(seed)
    spare = n_docs - MIN_QUERY_SIZE * n_queries
    if spare < 0:
        raise ValueError("too few documents for the minimum query size")
    cuts = np.sort(rng.integers(0, spare + 1, size=n_queries - 1))
    sizes = MIN_QUERY_SIZE + np.diff(np.concatenate(([0], cuts, [spare])))
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    y = rng.choice(len(LABEL_PROBS), size=n_docs, p=LABEL_PROBS).astype(np.float64)
    s = rng.random(n_docs)

    redrawn = 0
    for _ in range(100):
        dup = _within_query_duplicates(s.astype(np.float32), qid)
        if len(dup) == 0:
            break
        s[dup] = rng.random(len(dup))
        redrawn += len(dup)
    else:  # pragma: no cover - astronomically unlikely
        raise RuntimeError("could not make the scores distinct in float32")

    has_relevant = np.add.reduceat(y > 0, offsets[:-1]) > 0
    return {
        "y": y,
        "s": s,
        "qid": qid,
        "offsets": offsets,
        "sizes": sizes,
        "n_empty_queries": int((~has_relevant).sum()),
        "n_scores_redrawn_for_float32": redrawn,
        "n_float64_ties_within_queries": len(_within_query_duplicates(s, qid)),
    }


def _within_query_duplicates(values, qid):
    """Rows whose value equals another row's value in the same query."""
    order = np.lexsort((values, qid))
    v, q = values[order], qid[order]
    same = (q[1:] == q[:-1]) & (v[1:] == v[:-1])
    return order[1:][same]


def describe_data(data):
    sizes = data["sizes"]
    labels, counts = np.unique(data["y"], return_counts=True)
    return {
        "n_docs": int(sizes.sum()),
        "n_queries": len(sizes),
        "query_sizes": (
            f"variable: min {sizes.min()}, mean {sizes.mean():.1f}, median "
            f"{int(np.median(sizes))}, max {sizes.max()} (at least "
            f"{MIN_QUERY_SIZE} + a random composition of the rest, roughly "
            "exponential)"
        ),
        "labels": {str(int(lab)): int(c) for lab, c in zip(labels, counts)},
        "label_probs": list(LABEL_PROBS),
        "scores": "float64 uniform [0, 1), distinct within each query even in float32",
        "qid": "numpy int64, sorted by query (rows of a query are contiguous)",
        "y_dtype": str(data["y"].dtype),
        "seed": SEED,
        "n_empty_queries": data["n_empty_queries"],
        "n_scores_redrawn_for_float32": data["n_scores_redrawn_for_float32"],
        "n_float64_ties_within_queries": data["n_float64_ties_within_queries"],
    }


def peer_inputs(data):
    """The dict-of-dicts input of ranx and pytrec_eval (str ids, int labels)."""
    offsets, n_queries = data["offsets"], len(data["sizes"])
    width = len(str(n_queries - 1))
    query_names = [f"q{q:0{width}d}" for q in range(n_queries)]
    doc_names = [f"d{i}" for i in range(len(data["y"]))]
    labels = data["y"].astype(np.int64).tolist()
    scores = data["s"].tolist()
    qrel, run = {}, {}
    for q, name in enumerate(query_names):
        lo, hi = offsets[q], offsets[q + 1]
        docs = doc_names[lo:hi]
        qrel[name] = dict(zip(docs, labels[lo:hi]))
        run[name] = dict(zip(docs, scores[lo:hi]))
    return query_names, qrel, run


# --------------------------------------------------------------------------
# Timing


def time_call(func, reps, warmup=None):
    """Warm up once, then time at least ``reps`` calls; median and all times.

    Fast calls are repeated until ``MIN_TIMED_S`` seconds have been timed (at
    most ``MAX_REPS`` calls; 1 s, or 0.3 s with ``--quick``) so that their
    median is not at the mercy of one scheduler hiccup. As in ``timeit``,
    garbage is collected once before the series and the collector is off
    while it runs.
    """
    (warmup or func)()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        times, cpu_times, value = [], [], None
        while len(times) < reps or (
            sum(times) < _TIMING["min_timed_s"] and len(times) < MAX_REPS
        ):
            start, cpu_start = time.perf_counter(), time.process_time()
            value = func()
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
    finally:
        if was_enabled:
            gc.enable()
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "cpu_median_s": statistics.median(cpu_times),
        "times_s": times,
        "reps": len(times),
        "value": _as_float(value),
    }


def _as_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------
# Systems


def bench_ours(data, n_threads):
    from sklearn_ranknet.metrics import map_score, ndcg_score

    y, s, qid = data["y"], data["s"], data["qid"]
    rows = []
    for ignore_ties in (False, True):
        for metric, func in (
            (f"NDCG@{K}", lambda: ndcg_score(y, s, groups=qid, k=K, ignore_ties=ignore_ties)),
            ("MAP", lambda: map_score(y, s, groups=qid, ignore_ties=ignore_ties)),
        ):
            result = time_call(func, REPS["ours"])
            rows.append(
                {
                    "system": "ours",
                    "variant": f"ignore_ties={ignore_ties}",
                    "metric": metric,
                    "threads": n_threads,
                    "reference": not ignore_ties,
                    "call": (
                        f"ndcg_score(y, s, groups=qid, k={K}, ignore_ties={ignore_ties})"
                        if metric.startswith("NDCG")
                        else f"map_score(y, s, groups=qid, ignore_ties={ignore_ties})"
                    ),
                    **result,
                }
            )
    return rows


def ranx_objects(qrel, run):
    import ranx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qrels = ranx.Qrels(qrel)
        start = time.perf_counter()
        ranx_run = ranx.Run(run)
        build_s = time.perf_counter() - start
    return qrels, ranx_run, build_s


def bench_ranx(qrels, ranx_run, n_threads):
    """Time ``ranx.evaluate`` and, for reference, ranx's metric kernel alone.

    ranx 0.3.21's ``evaluate`` keeps no result cache: every call converts the
    Qrels and the Run to numba typed lists and recomputes the metric;
    ``save_results_in_run=False`` only skips writing the per-query values into
    ``run.scores``. The Run is sorted by score when it is built (outside the
    timer), so ``evaluate`` itself never sorts.
    """
    import numba
    import ranx
    from ranx.metrics import metric_switch

    rows = []
    qrels_tl, run_tl = qrels.to_typed_list(), ranx_run.to_typed_list()
    for metric, name, kernel_args in (
        (f"NDCG@{K}", f"ndcg_burges@{K}", ("ndcg_burges", K)),
        ("MAP", "map", ("map", 0)),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumbaTypeSafetyWarning from ranx

            def evaluate():
                return ranx.evaluate(qrels, ranx_run, name, save_results_in_run=False)

            result = time_call(evaluate, REPS["ranx"])
            kernel = metric_switch(kernel_args[0])

            def kernel_only():
                return np.mean(kernel(qrels_tl, run_tl, kernel_args[1], 1))

            kernel_result = time_call(kernel_only, REPS["ranx"])
        if numba.get_num_threads() != n_threads:
            raise RuntimeError("ranx changed numba's thread count")
        rows.append(
            {
                "system": "ranx",
                "variant": "evaluate",
                "metric": metric,
                "threads": n_threads,
                "call": f'ranx.evaluate(qrels, run, "{name}", save_results_in_run=False)',
                **result,
            }
        )
        rows.append(
            {
                "system": "ranx",
                "variant": "metric kernel only (info)",
                "metric": metric,
                "threads": n_threads,
                "info": True,
                "call": (
                    f'ranx.metrics.metric_switch("{kernel_args[0]}")(qrels_tl, run_tl, '
                    f"{kernel_args[1]}, 1) on pre-converted typed lists"
                ),
                **kernel_result,
            }
        )
    return rows


def bench_pytrec_eval(qrel, run):
    import pytrec_eval

    rows = []
    for metric, measures, keys in (
        (f"NDCG@{K}", {f"ndcg_cut.{K}"}, [f"ndcg_cut_{K}"]),
        ("MAP", {"map"}, ["map"]),
        (f"NDCG@{K} + MAP", {f"ndcg_cut.{K}", "map"}, [f"ndcg_cut_{K}", "map"]),
    ):
        evaluator = pytrec_eval.RelevanceEvaluator(qrel, measures)

        def evaluate():
            per_query = evaluator.evaluate(run)
            means = [np.mean([v[key] for v in per_query.values()]) for key in keys]
            return means[0] if len(means) == 1 else None

        result = time_call(evaluate, REPS["pytrec_eval"])
        rows.append(
            {
                "system": "pytrec_eval",
                "variant": "one call, both measures" if len(keys) > 1 else "evaluate",
                "metric": metric,
                "threads": "serial",
                "info": len(keys) > 1,
                "call": f"RelevanceEvaluator(qrel, {sorted(measures)}).evaluate(run) + mean",
                **result,
            }
        )
    return rows


def sklearn_loop(y, s, offsets, queries):
    from sklearn.metrics import ndcg_score as sk_ndcg_score

    values = np.empty(len(queries))
    for i, q in enumerate(queries):
        lo, hi = offsets[q], offsets[q + 1]
        values[i] = sk_ndcg_score(y[None, lo:hi], s[None, lo:hi], k=K)
    return values


def bench_sklearn(data):
    """Per-query loop over sklearn.metrics.ndcg_score, extrapolated if slow."""
    y, s, offsets = data["y"], data["s"], data["offsets"]
    n_queries = len(offsets) - 1
    rng = np.random.default_rng(SEED + 1)
    sklearn_loop(y, s, offsets, [0])  # warm-up
    pilot = rng.choice(n_queries, size=min(200, n_queries), replace=False)
    start = time.perf_counter()
    sklearn_loop(y, s, offsets, pilot)
    per_query = (time.perf_counter() - start) / len(pilot)
    if per_query * n_queries <= SKLEARN_BUDGET_S:
        queries = np.arange(n_queries)
    else:
        n_sub = max(200, int(SKLEARN_SUBSET_S / per_query))
        queries = np.sort(rng.choice(n_queries, size=n_sub, replace=False))
    values = {}

    def loop():
        values["last"] = sklearn_loop(y, s, offsets, queries)
        return values["last"].mean()

    result = time_call(loop, REPS["sklearn"], warmup=lambda: None)
    n_docs_timed = int((offsets[queries + 1] - offsets[queries]).sum())
    extrapolated = len(queries) < n_queries
    row = {
        "system": "sklearn",
        "variant": "per-query loop",
        "metric": f"NDCG@{K}",
        "threads": "serial",
        "call": f"[sklearn.metrics.ndcg_score(y_q[None], s_q[None], k={K}) for q] + mean",
        **result,
    }
    if extrapolated:
        row["min_s"] = row["min_s"] * n_queries / len(queries)
        row["cpu_median_s"] = row["cpu_median_s"] * n_queries / len(queries)
        row["measured_s"] = row["median_s"]
        row["measured_queries"] = len(queries)
        row["measured_docs"] = n_docs_timed
        row["median_s"] = row["median_s"] * n_queries / len(queries)
        row["extrapolated"] = (
            f"timed on {len(queries)} of {n_queries} random queries "
            f"({n_docs_timed} documents, {row['measured_s']:.2f} s) and "
            "extrapolated linearly in the number of queries"
        )
    return row, queries, values["last"]


# --------------------------------------------------------------------------
# Agreement check


def agreement(data, query_names, qrel, run, qrels, ranx_run, sk_queries, sk_values):
    """Per-query values of every system where the definitions match.

    ``qrel``/``run`` are None when pytrec_eval is not installed, ``qrels``/
    ``ranx_run`` when ranx is not; those peers are then left out.
    """
    from sklearn_ranknet.metrics import ap_per_query, ndcg_per_query

    y, s, qid = data["y"], data["s"], data["qid"]
    n_queries = len(query_names)

    def ours(func, **kwargs):
        ids, values = func(y, s, groups=qid, empty_query_score=0.0, **kwargs)
        if not np.array_equal(ids, np.arange(n_queries)):
            raise RuntimeError("unexpected query ids from our per-query function")
        return values

    peer = {}  # (peer, metric) -> per-query values in query order
    peer_empty = {}
    empty = np.ones(n_queries, dtype=bool)
    empty[np.unique(qid[y > 0])] = False
    if qrel is not None:
        import pytrec_eval

        trec = pytrec_eval.RelevanceEvaluator(qrel, {f"ndcg_cut.{K}", "map"}).evaluate(run)
        missing = [name for name in query_names if name not in trec]
        peer_empty["pytrec_eval_missing_queries"] = len(missing)
        for key, metric in ((f"ndcg_cut_{K}", "ndcg_linear"), ("map", "map")):
            values = np.array([trec[name][key] if name in trec else np.nan for name in query_names])
            peer[("pytrec_eval", metric)] = values
            peer_empty[f"pytrec_eval_{metric}"] = sorted(set(values[empty].tolist()))
    if qrels is not None:
        import ranx

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rx = ranx.evaluate(
                qrels,
                ranx_run,
                [f"ndcg@{K}", f"ndcg_burges@{K}", "map"],
                return_mean=False,
                save_results_in_run=False,
            )
        position = {name: i for i, name in enumerate(ranx_run.get_query_ids())}
        rx_order = np.array([position[name] for name in query_names])
        for key, metric in ((f"ndcg@{K}", "ndcg_linear"), (f"ndcg_burges@{K}", "ndcg_exp"),
                            ("map", "map")):
            peer[("ranx", metric)] = rx[key][rx_order]
            peer_empty[f"ranx_{metric}"] = sorted(set(rx[key][rx_order][empty].tolist()))
    if sk_values is not None:
        subset = None if len(sk_queries) == n_queries else sk_queries
        peer[("sklearn", "ndcg_linear")] = (sk_values, subset)

    checks = []

    def check(name, ours_values, metric, note, extra=None):
        entry = {"metric": name, "note": note, "ours_mean": float(ours_values.mean())}
        worst = 0.0
        found = {p: v for (p, m), v in peer.items() if m == metric}
        found.update(extra or {})
        for name_, values in found.items():
            values, subset = values if isinstance(values, tuple) else (values, None)
            mine = ours_values if subset is None else ours_values[subset]
            diff = float(np.max(np.abs(mine - values)))
            entry[f"{name_}_mean"] = float(np.mean(values))
            entry[f"{name_}_max_abs_diff"] = diff
            if subset is not None:
                entry[f"{name_}_ours_mean_on_subset"] = float(mine.mean())
                entry[f"{name_}_n_queries"] = len(subset)
            worst = max(worst, diff)
        entry["max_abs_diff"] = worst if found else None
        entry["empty_queries_ours"] = float(ours_values[empty].mean()) if empty.any() else None
        checks.append(entry)

    ours_exp = ours(ndcg_per_query, k=K, gain="exponential")
    check(
        f"NDCG@{K}, linear gain",
        ours(ndcg_per_query, k=K, gain="linear"),
        "ndcg_linear",
        f'ours gain="linear", empty_query_score=0.0; pytrec_eval ndcg_cut.{K}; '
        f'ranx "ndcg@{K}" (Jarvelin, linear); sklearn ndcg_score(k={K})',
    )
    check(
        f"NDCG@{K}, exponential gain",
        ours_exp,
        "ndcg_exp",
        f'ours gain="exponential", empty_query_score=0.0; ranx "ndcg_burges@{K}" (2^rel - 1)',
    )
    check(
        "MAP (full list)",
        ours(ap_per_query),
        "map",
        'ours empty_query_score=0.0; pytrec_eval "map"; ranx "map"',
    )
    check(
        f"NDCG@{K}, ours ignore_ties=True vs False",
        ours_exp,
        None,
        "no ties in the data, so both tie rules must agree",
        extra={"ours_ignore_ties": ours(ndcg_per_query, k=K, ignore_ties=True)},
    )
    return checks, peer_empty


# --------------------------------------------------------------------------
# Breakdown of our call


def breakdown_ours(data, n_threads_default):
    """Where the time of our ``ndcg_score`` / ``map_score`` call goes.

    Every function of ``sklearn_ranknet._kernels`` is wrapped (in this process
    only, for one call) to record the calls the public function makes, with
    their arguments and the numba thread count in force. Each recorded call
    is then re-timed alone, next to the other stages (input validation,
    grouping, label range check) and the whole call. Nothing depends on the
    kernels' signatures, which change as the package evolves. Returns
    ``{"error": ...}`` instead of failing the benchmark.
    """
    try:
        return _breakdown(data, n_threads_default)
    except Exception as exc:  # noqa: BLE001 - private modules may have moved
        return {"error": f"{type(exc).__name__}: {exc}"}


def _record_calls(module, func):
    """Call ``func()`` once with every function of ``module`` wrapped to
    record ``(name, args, kwargs, numba threads, seconds)``; restore them."""
    import inspect

    import numba
    from numba.core.dispatcher import Dispatcher

    calls, originals = [], {}

    def wrap(name, original):
        def recorder(*args, **kwargs):
            threads = numba.get_num_threads()
            start = time.perf_counter()
            out = original(*args, **kwargs)
            calls.append({"name": name, "func": original, "args": args, "kwargs": kwargs,
                          "threads": threads, "s": time.perf_counter() - start,
                          "jit": isinstance(original, Dispatcher)})
            return out

        return recorder

    for name, obj in vars(module).items():
        if name.startswith("__"):
            continue
        if isinstance(obj, Dispatcher) or (
            inspect.isfunction(obj) and obj.__module__ == module.__name__
        ):
            originals[name] = obj
    try:
        for name, obj in originals.items():
            setattr(module, name, wrap(name, obj))
        func()
    finally:
        for name, obj in originals.items():
            setattr(module, name, obj)
    return calls


def _breakdown(data, n_threads_default):
    import numba
    from sklearn.utils import assert_all_finite, column_or_1d

    from sklearn_ranknet import _groups, _kernels
    from sklearn_ranknet.metrics import map_score, ndcg_score

    y, s, qid = data["y"], data["s"], data["qid"]
    n = len(y)
    reps = REPS["ours"]

    def validation():
        a = column_or_1d(y, dtype=np.float64, input_name="y_true")
        b = column_or_1d(s, dtype=np.float64, input_name="y_score")
        assert_all_finite(a, input_name="y_true")
        assert_all_finite(b, input_name="y_score")

    common = [
        ("input validation (column_or_1d, assert_all_finite)", validation),
        ("grouping (_groups.group_rows, sorted int64 ids)", lambda: _groups.group_rows(qid, n)),
        ("label range check (min, max)", lambda: (y.min(), y.max())),
    ]
    wholes = {
        f"NDCG@{K}": lambda: ndcg_score(y, s, groups=qid, k=K),
        "MAP": lambda: map_score(y, s, groups=qid),
    }
    thread_counts = sorted({1, n_threads_default})
    out = {"threads": thread_counts}
    for metric, whole in wholes.items():
        serial = []
        for name, func in common:
            try:
                serial.append({"stage": name, "median_s": time_call(func, reps)["median_s"]})
            except Exception as exc:  # noqa: BLE001
                serial.append({"stage": name, "median_s": None,
                               "error": f"{type(exc).__name__}: {exc}"})
        by_threads = {}
        for n_threads in thread_counts:
            numba.set_num_threads(n_threads)
            whole()  # compiled and warm before recording
            calls = _record_calls(_kernels, whole)
            total = time_call(whole, reps)["median_s"]
            stages = []
            for call in calls:
                numba.set_num_threads(call["threads"])
                t = time_call(lambda c=call: c["func"](*c["args"], **c["kwargs"]), reps)
                numba.set_num_threads(n_threads)
                kind = "kernel" if call["jit"] else "helper"
                stages.append({
                    "stage": f"{kind} _kernels.{call['name']} (ran on {call['threads']} thread(s))",
                    "median_s": t["median_s"],
                    "jit": call["jit"],
                    "threads_used": call["threads"],
                })
            accounted = sum(st["median_s"] for st in stages) + sum(
                st["median_s"] or 0.0 for st in serial
            )
            by_threads[str(n_threads)] = {
                "whole_call_s": total,
                "kernel_calls": stages,
                "kernel_s": sum(st["median_s"] for st in stages if st["jit"]),
                "rest_s": total - accounted,
            }
        numba.set_num_threads(n_threads_default)
        out[metric] = {"serial_stages": serial, "by_threads": by_threads}
    return out


# --------------------------------------------------------------------------
# Environment


def environment(command):
    return _common.environment(command)


def parallel_flags(with_ranx=True):
    """Whether the timed numba kernels are compiled with parallel=True."""

    def flag(module, name):
        try:
            dispatcher = getattr(importlib.import_module(module), name)
            return bool(dispatcher.targetoptions.get("parallel", False))
        except Exception:  # noqa: BLE001 - renamed or not installed
            return None

    flags = {
        "ours ndcg_per_query": flag("sklearn_ranknet._kernels", "ndcg_per_query"),
        "ours ap_per_query": flag("sklearn_ranknet._kernels", "ap_per_query"),
    }
    if with_ranx:
        flags["ranx _ndcg_parallel"] = flag("ranx.metrics.ndcg", "_ndcg_parallel")
        flags["ranx _average_precision_parallel"] = flag(
            "ranx.metrics.average_precision", "_average_precision_parallel"
        )
        flags["ranx to_typed_list (Run conversion)"] = flag(
            "ranx.data_structures.common", "to_typed_list"
        )
    return flags


def parallel_probe(n_threads, reps=5):
    """How much faster a purely compute-bound numba ``prange`` loop runs on
    ``n_threads`` than on 1, right now. On a shared machine other processes
    may hold the cores; then no parallel code can scale, ours or ranx's, and
    the thread comparison says nothing about the kernels."""
    import numba

    @numba.njit(parallel=True, cache=False)
    def spin(n):
        out = np.zeros(64)
        for t in numba.prange(64):
            acc = 0.0
            for i in range(n):
                acc += np.sqrt(i + t)
            out[t] = acc
        return out

    spin(10)
    previous = numba.get_num_threads()
    timings = {}
    try:
        for threads in (1, n_threads):
            numba.set_num_threads(threads)
            times = []
            for _ in range(reps):
                start = time.perf_counter()
                spin(400_000)
                times.append(time.perf_counter() - start)
            timings[threads] = statistics.median(times)
    finally:
        numba.set_num_threads(previous)
    return {"threads": n_threads, "t_1_thread_s": timings[1],
            "t_n_threads_s": timings[n_threads], "speedup": timings[1] / timings[n_threads]}


# --------------------------------------------------------------------------
# Derived figures and reports


def add_ratios(rows, n_docs, default_threads):
    """docs/s, and how many times faster our reference call is."""
    ref = {
        (r["metric"], r["threads"]): r["median_s"]
        for r in rows
        if r["system"] == "ours" and r.get("reference")
    }
    ref[(f"NDCG@{K} + MAP", default_threads)] = ref[(f"NDCG@{K}", default_threads)] + ref[
        ("MAP", default_threads)
    ]
    ref[(f"NDCG@{K} + MAP", 1)] = ref[(f"NDCG@{K}", 1)] + ref[("MAP", 1)]
    for r in rows:
        docs = r.get("measured_docs", n_docs)
        r["docs_per_s"] = docs / r.get("measured_s", r["median_s"])
        if r["threads"] == "serial":
            ours_default = ref[(r["metric"], default_threads)]
            r["speedup_vs_ours_default_threads"] = r["median_s"] / ours_default
            r["speedup_vs_ours_1_thread"] = r["median_s"] / ref[(r["metric"], 1)]
        else:
            r["speedup_vs_ours_same_threads"] = r["median_s"] / ref[(r["metric"], r["threads"])]


def evaluate_targets(rows, default_threads):
    def find(system, metric, threads, variant=None):
        for r in rows:
            if (
                r["system"] == system
                and r["metric"] == metric
                and r["threads"] == threads
                and (variant is None or r["variant"] == variant)
                and not r.get("info")
            ):
                return r
        return None

    out = []
    for metric in (f"NDCG@{K}", "MAP"):
        for threads in sorted({1, default_threads}):
            peer = find("ranx", metric, threads, "evaluate")
            where = f"{metric}, {threads} thread(s)"
            if peer is None:
                out.append(_not_evaluated(TARGETS[0], where, "ranx"))
                continue
            ratio = peer["speedup_vs_ours_same_threads"]
            out.append(_target_line(TARGETS[0], where, ratio, 1.0))
        peer = find("pytrec_eval", metric, "serial")
        if peer is None:
            out.append(_not_evaluated(TARGETS[1], metric, "pytrec_eval"))
            continue
        for key, label in (
            ("speedup_vs_ours_default_threads", f"ours on {default_threads} threads"),
            ("speedup_vs_ours_1_thread", "ours on 1 thread"),
        ):
            out.append(_target_line(TARGETS[1], f"{metric}, {label}", peer[key], 10.0))
        ours_1 = find("ours", metric, 1, "ignore_ties=False")
        out.append(
            _target_line(
                TARGETS[1],
                f"{metric}, ours on 1 thread, on CPU time instead of wall time (load-insensitive)",
                peer["cpu_median_s"] / ours_1["cpu_median_s"],
                10.0,
            )
        )
    return out


def _not_evaluated(target, where, peer):
    return {"target": target, "where": where, "ratio": None, "needed": None, "met": None,
            "verdict": f"not evaluated: {peer} is not installed"}


def _target_line(target, where, ratio, needed):
    met = ratio > needed if needed == 1.0 else ratio >= needed
    if met:
        verdict = f"MET: ours is {ratio:.1f}x faster"
    elif ratio >= 1.0:
        verdict = (
            f"MISSED: ours is only {ratio:.2f}x faster, short of {needed:g}x "
            f"by a factor {needed / ratio:.2f}"
        )
    else:
        verdict = f"MISSED: ours is {1 / ratio:.2f}x slower (needs {needed:g}x faster)"
    return {"target": target, "where": where, "ratio": ratio, "needed": needed, "met": met,
            "verdict": verdict}


def _fmt_s(t):
    return f"{t:.4f}" if t < 1 else f"{t:.3f}" if t < 10 else f"{t:.1f}"


def _fmt_rate(r):
    return f"{r / 1e6:.2f} M" if r >= 1e6 else f"{r / 1e3:.1f} k"


def results_table(rows, default_threads):
    head = (
        "| system | variant | metric | threads | median s | min s | CPU s | reps | docs/s "
        "| t / t(ours) | value returned |\n|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        if r["threads"] == "serial":
            ratio = (
                f"{r['speedup_vs_ours_default_threads']:.1f}x (vs ours@{default_threads}t), "
                f"{r['speedup_vs_ours_1_thread']:.1f}x (vs ours@1t)"
            )
        elif r["system"] == "ours" and r.get("reference"):
            ratio = "1 (reference)"
        else:
            ratio = f"{r['speedup_vs_ours_same_threads']:.2f}x"
        value = "" if r["value"] is None else f"{r['value']:.6f}"
        time_cell = _fmt_s(r["median_s"]) + (" (extrapolated)" if r.get("extrapolated") else "")
        lines.append(
            f"| {r['system']} | {r['variant']} | {r['metric']} | {r['threads']} | "
            f"{time_cell} | {_fmt_s(r['min_s'])} | {_fmt_s(r['cpu_median_s'])} | {r['reps']} | "
            f"{_fmt_rate(r['docs_per_s'])} | "
            f"{ratio} | {value} |"
        )
    return "\n".join(lines)


def agreement_table(checks):
    lines = [
        "| metric | ours | pytrec_eval | ranx | sklearn | largest per-query abs diff | definitions |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        def cell(peer):
            if f"{peer}_mean" not in c:
                return "-"
            text = f"{c[peer + '_mean']:.10f} (max diff {c[peer + '_max_abs_diff']:.1e})"
            if f"{peer}_n_queries" in c:
                text += (
                    f" on {c[peer + '_n_queries']} queries, ours there "
                    f"{c[peer + '_ours_mean_on_subset']:.10f}"
                )
            return text

        sk = cell("sklearn")
        if "ours_ignore_ties_mean" in c:
            sk = (
                f"ignore_ties=True: {c['ours_ignore_ties_mean']:.10f} "
                f"(max diff {c['ours_ignore_ties_max_abs_diff']:.1e})"
            )
        diff = "-" if c["max_abs_diff"] is None else f"{c['max_abs_diff']:.2e}"  # no peer installed
        lines.append(
            f"| {c['metric']} | {c['ours_mean']:.10f} | {cell('pytrec_eval')} | {cell('ranx')} | "
            f"{sk} | {diff} | {c['note']} |"
        )
    return "\n".join(lines)


def breakdown_table(breakdown):
    if "error" in breakdown:
        return f"Breakdown unavailable: {breakdown['error']}"
    parts = []
    for metric in (f"NDCG@{K}", "MAP"):
        b = breakdown[metric]
        for n_threads, t in b["by_threads"].items():
            whole = t["whole_call_s"]
            parts += [
                f"**{metric}**, numba set to {n_threads} thread(s): whole call "
                f"{_fmt_s(whole)} s (median of each stage timed alone)",
                "",
                "| stage | median s | share of the call |",
                "|---|---|---|",
            ]
            for st in b["serial_stages"] + t["kernel_calls"]:
                v = st["median_s"]
                parts.append(
                    f"| {st['stage']} | n/a | n/a |" if v is None
                    else f"| {st['stage']} | {v:.5f} | {100 * v / whole:.1f}% |"
                )
            parts.append(
                f"| rest: validate_params decorators, Python glue, timing noise | "
                f"{t['rest_s']:.5f} | {100 * t['rest_s'] / whole:.1f}% |"
            )
            parts.append("")
    return "\n".join(parts)


def write_markdown(path, result):
    env, d = result["environment"], result["data"]
    lines = [
        f"# Ranking metrics benchmark ({result['mode']})",
        "",
        f"- date: {env['date']}",
        f"- command: `{env['command']}`",
        f"- git commit: {env['git_commit']}",
        f"- machine: {env['machine']['cpu_model']}, os.cpu_count()={env['machine']['os_cpu_count']}, "
        f"{env['machine']['platform']}, Python {env['machine']['python']}, numba default threads "
        f"{env['machine']['numba_default_threads']} (threading layer "
        f"{env['machine']['numba_threading_layer']})",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()),
        f"- data: {d['n_docs']:,} documents in {d['n_queries']:,} queries; sizes {d['query_sizes']}; "
        f"labels 0..4 with probabilities {d['label_probs']} (counts {d['labels']}); {d['scores']} "
        f"({d['n_scores_redrawn_for_float32']} scores redrawn, {d['n_float64_ties_within_queries']} "
        f"float64 ties left); qid {d['qid']}; y dtype {d['y_dtype']}; "
        f"{d['n_empty_queries']} queries without a relevant document; seed {d['seed']}",
        "",
        "## Timings",
        "",
        result["tables"]["results"],
        "",
        "`median s` (wall clock) is the headline figure; `min s` (the fastest repetition) and "
        "`CPU s` (median process CPU time, all threads summed) are shown because the machine may "
        "be shared: for single-threaded rows CPU time is close to what an idle machine would "
        "show. `t / t(ours)`: how many times longer than our default call "
        "(`ignore_ties=False`) on the same metric; for ranx and ours at the same numba "
        "thread count, for the serial peers against ours on the default threads and on 1 thread. "
        "Values above 1 mean ours is faster. `value returned` is the mean each timed call "
        "returned: ours uses exponential gain and empty_query_score=1.0 by default, "
        "pytrec_eval and sklearn linear gain, so those differ by definition "
        "(see the agreement check).",
        "",
        "## Targets",
        "",
    ]
    lines += [f"- {t['target']} [{t['where']}]: **{t['verdict']}**" for t in result["targets"]]
    lines += ["", "## Agreement (per query, same definitions)", ""]
    lines += [result["tables"]["agreement"], ""]
    lines += [
        "Queries without a relevant document: "
        + json.dumps(result["agreement"]["peer_empty_query_values"]),
        "",
        "## Where our time goes",
        "",
        result["tables"]["breakdown"],
        "",
        "## Notes",
        "",
    ]
    lines += [f"- {n}" for n in result["notes"]]
    Path(path).write_text("\n".join(lines) + "\n")


def write_plot(path, rows):
    try:
        import matplotlib
    except ImportError:  # plots need the bench extra; the tables do not
        print(f"matplotlib is not installed (pip install '.[bench]'): no {path}")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    metrics_ = [f"NDCG@{K}", "MAP"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
    for ax, metric in zip(axes, metrics_):
        sel = [r for r in rows if r["metric"] == metric]
        labels = [
            f"{r['system']} {r['variant']}, "
            + (f"{r['threads']} thr" if r["threads"] != "serial" else "serial")
            + (" (extrap.)" if r.get("extrapolated") else "")
            for r in sel
        ]
        colors = {"ours": "tab:blue", "ranx": "tab:orange", "pytrec_eval": "tab:green",
                  "sklearn": "tab:red"}
        times = [r["median_s"] for r in sel]
        bars = ax.barh(range(len(sel)), times, color=[colors[r["system"]] for r in sel],
                       hatch=None)
        for bar, r in zip(bars, sel):
            if r.get("info"):
                bar.set_alpha(0.45)
        ax.set_yticks(range(len(sel)), labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("median seconds (log scale)")
        ax.set_title(metric)
        for i, t in enumerate(times):
            ax.text(t, i, f" {_fmt_s(t)}", va="center", fontsize=7)
    n_docs = rows[0]["docs_per_s"] * rows[0]["median_s"]
    fig.suptitle(f"Ranking metrics on {n_docs:,.0f} documents (lower is better; faded: info rows)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------
# Entry points


def run(quick=False, out_dir=DEFAULT_OUT, command=None):
    """Run the benchmark, print a Markdown table, write metrics.{json,md,png}.

    Parameters
    ----------
    quick : bool, default=False
        100,000 documents in 1,000 queries instead of 1,000,000 in 10,000.
    out_dir : str or Path or None, default="benchmarks/results"
        Where to write the files; ``None`` writes nothing.
    command : str, default=None
        The command line to record; by default the ``run(...)`` call.

    Returns
    -------
    result : dict
        Everything written to ``metrics.json``.
    """
    import numba

    wall = time.perf_counter()
    size = QUICK if quick else FULL
    _TIMING["min_timed_s"] = MIN_TIMED_S["quick" if quick else "full"]
    command = command or f"bench_metrics.run(quick={quick}, out_dir={str(out_dir)!r})"
    default_threads = numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(default_threads)

    load_log = []

    def say(message):
        load = os.getloadavg()[0]
        load_log.append({"at_s": round(time.perf_counter() - wall, 1), "stage": message,
                         "load_1min": load})
        print(f"[bench_metrics {time.perf_counter() - wall:6.1f} s, load {load:.2f}] {message}",
              flush=True)

    have = {name: importlib.util.find_spec(name) is not None for name in ("ranx", "pytrec_eval")}
    skipped = [name for name, ok in have.items() if not ok]
    if skipped:
        say(f"not installed, skipped: {', '.join(skipped)} (pip install '.[bench]')")

    say(f"data: {size['n_docs']:,} documents, {size['n_queries']:,} queries")
    data = make_data(**size)
    query_names, qrel, run_dict = peer_inputs(data)
    qrels = ranx_run = ranx_build_s = None
    if have["ranx"]:
        say("ranx Qrels and Run")
        qrels, ranx_run, ranx_build_s = ranx_objects(qrel, run_dict)

    rows, probes = [], []
    for n_threads in sorted({1, default_threads}):
        numba.set_num_threads(n_threads)
        say(f"ours{' and ranx' if have['ranx'] else ''} on {n_threads} numba thread(s)")
        rows += bench_ours(data, n_threads)
        if have["ranx"]:
            rows += bench_ranx(qrels, ranx_run, n_threads)
        if n_threads > 1:
            probes.append(parallel_probe(n_threads))
    numba.set_num_threads(default_threads)
    if have["pytrec_eval"]:
        say("pytrec_eval")
        rows += bench_pytrec_eval(qrel, run_dict)
    else:
        qrel = run_dict = None
    say("sklearn per-query loop")
    sk_row, sk_queries, sk_values = bench_sklearn(data)
    rows.append(sk_row)
    order = {"ours": 0, "ranx": 1, "pytrec_eval": 2, "sklearn": 3}
    metric_order = {f"NDCG@{K}": 0, "MAP": 1}
    rows.sort(key=lambda r: (metric_order.get(r["metric"], 2), order[r["system"]],
                             str(r["threads"]), r["variant"]))
    add_ratios(rows, size["n_docs"], default_threads)

    say("agreement check")
    checks, peer_empty = agreement(
        data, query_names, qrel, run_dict, qrels, ranx_run, sk_queries, sk_values
    )
    say("breakdown of our call")
    breakdown = breakdown_ours(data, default_threads)
    if default_threads > 1:
        probes.append(parallel_probe(default_threads))
    targets = evaluate_targets(rows, default_threads)
    flags = parallel_flags(have["ranx"])

    def speedup(system, metric, variant):
        t = {r["threads"]: r["median_s"] for r in rows
             if r["system"] == system and r["metric"] == metric and r["variant"] == variant}
        if not t:
            return "n/a"
        return f"{t[1] / t[default_threads]:.2f}x" if default_threads != 1 else "1x"

    notes = [
        f"Query lengths vary (min {data['sizes'].min()}, mean {data['sizes'].mean():.0f}, "
        f"max {data['sizes'].max()}); at least {MIN_QUERY_SIZE} documents because "
        "sklearn.metrics.ndcg_score rejects one-document queries.",
        "Timing: one warm-up call each (JIT compilation), then the median of the listed "
        f"repetitions with time.perf_counter (at least the listed minimum, more for fast calls "
        f"until {_TIMING['min_timed_s']:g} s is timed, at most {MAX_REPS}); gc.collect() before each "
        "series and the garbage collector off during it, as timeit does.",
        "ours: the whole public call (parameter validation, input checks, grouping, kernel, "
        "mean) on numpy float64 y and s and a sorted int64 qid.",
    ]
    if skipped:
        notes.append(f"Not installed, so not measured: {', '.join(skipped)}.")
    if have["ranx"]:
        notes.append(
            f"ranx: Qrels and Run built outside the timer (building the Run from the dict, which "
            f"sorts each query by score, took {ranx_build_s:.2f} s once, not counted). Timed: "
            "ranx.evaluate(..., save_results_in_run=False), which converts Qrels and Run to numba "
            "typed lists and recomputes on every call (ranx 0.3.21 has no result cache). NDCG uses "
            f"ranx's \"ndcg_burges@{K}\" (gain 2^rel - 1, like our default); ranx's \"ndcg\" is "
            "Jarvelin's linear gain and is used in the agreement check. MAP is ranx's \"map\" (k=0: "
            "full list; AP divides by the number of relevant documents). "
            "'metric kernel only' rows time ranx's numba kernel on pre-converted typed lists "
            "(info, not a user-facing call). ranx's conversion of the Run to typed lists "
            "(data_structures.common.to_typed_list) is compiled without parallel=True, so that "
            "part of evaluate is serial whatever the thread count."
        )
    if have["pytrec_eval"]:
        notes.append(
            "pytrec_eval: RelevanceEvaluator built outside the timer, evaluate(run) + mean timed. "
            "trec_eval stores scores as C float (float32), and breaks ties by docno, so the scores "
            "were made distinct within each query in float32. Queries without a relevant document "
            "are kept and score 0 for ndcg_cut and map. Serial C; the 'one call, both measures' "
            "row evaluates both in one call and is compared with our NDCG + MAP times."
        )
    notes += [
        "sklearn: Python loop over queries of sklearn.metrics.ndcg_score(y_q[None], s_q[None], "
        f"k={K}) (linear gain, tie-averaged, 0 for queries without relevant documents)"
        + (f"; {sk_row['extrapolated']}." if sk_row.get("extrapolated") else "; all queries timed."),
        "Compiled with parallel=True (numba prange over queries): "
        + ", ".join(f"{k}: {v}" for k, v in flags.items())
        + f". Speed-up from 1 to {default_threads} threads: ours NDCG@{K} "
        f"{speedup('ours', f'NDCG@{K}', 'ignore_ties=False')}, ours MAP "
        f"{speedup('ours', 'MAP', 'ignore_ties=False')}, ranx evaluate NDCG@{K} "
        f"{speedup('ranx', f'NDCG@{K}', 'evaluate')}, ranx evaluate MAP "
        f"{speedup('ranx', 'MAP', 'evaluate')}, ranx kernel NDCG@{K} "
        f"{speedup('ranx', f'NDCG@{K}', 'metric kernel only (info)')}, ranx kernel MAP "
        f"{speedup('ranx', 'MAP', 'metric kernel only (info)')}.",
    ]
    say("done")
    if probes:
        worst = min(p["speedup"] for p in probes)
        notes.append(
            f"Parallel capacity probe (a compute-bound numba prange loop, 1 vs {default_threads} "
            "threads, run right after the threaded timings and after the breakdown): speed-up "
            + ", ".join(f"{p['speedup']:.2f}x" for p in probes)
            + (
                f". Near 1x means the machine had about one free core at the time: no parallel "
                "code could scale, so the thread comparison of ours and ranx measures the "
                "machine, not the kernels."
                if worst < 0.75 * default_threads
                else "."
            )
        )
    busiest = max(entry["load_1min"] for entry in load_log)
    cpus = os.cpu_count() or 1
    contended = (
        min(p["speedup"] for p in probes) < 0.75 * default_threads
        if probes
        else busiest > cpus  # the load average counts this benchmark too
    )
    notes.append(
        f"Machine load (1-minute load average, which counts this benchmark itself) during the "
        f"run: {load_log[0]['load_1min']:.2f} at the start, {busiest:.2f} at most, on {cpus} CPUs"
        + (
            ". Other processes were competing for the CPUs, so the multi-threaded timings "
            "(which need every core) are the least reliable figures here; CPU s of the "
            "single-threaded rows is the steadier figure."
            if contended
            else "; the parallel probe found the cores free."
            if probes
            else "."
        )
    )
    if "error" not in breakdown:
        for metric in (f"NDCG@{K}", "MAP"):
            b = breakdown[metric]
            for n_threads, t in b["by_threads"].items():
                used = sorted({c["threads_used"] for c in t["kernel_calls"] if c["jit"]})
                notes.append(
                    f"Our {metric} call with numba set to {n_threads} thread(s): the numba "
                    f"kernel(s) ran on {', '.join(map(str, used)) or '?'} thread(s) and take "
                    f"{100 * t['kernel_s'] / t['whole_call_s']:.0f}% of "
                    f"{_fmt_s(t['whole_call_s'])} s; everything around them (validation, "
                    f"grouping, helpers, mean) {100 * (1 - t['kernel_s'] / t['whole_call_s']):.0f}%."
                )

    env = environment(command)
    result = {
        "suite": "metrics",
        "mode": "quick" if quick else "full",
        # the same facts in the flat shape the other suites use
        "machine": {
            "date": env["date"][:10],
            "cpu": env["machine"]["cpu_model"],
            "cores": env["machine"]["os_cpu_count"],
            "load_average_1min": load_log[0]["load_1min"],
            "platform": env["machine"]["platform"],
            "python": env["machine"]["python"],
            "versions": env["versions"],
            "command": command,
        },
        "environment": env,
        "data": describe_data(data),
        "settings": {"k": K, "min_reps": REPS, "min_timed_s": _TIMING["min_timed_s"],
                     "max_reps": MAX_REPS, "sklearn_budget_s": SKLEARN_BUDGET_S,
                     "default_threads": default_threads},
        "rows": rows,
        "targets": targets,
        "agreement": {"checks": checks, "peer_empty_query_values": peer_empty},
        "breakdown": breakdown,
        "parallel_flags": flags,
        "ranx_run_build_s": ranx_build_s,
        "peers_installed": have,
        "load_log": load_log,
        "parallel_probe": probes,
        "notes": notes,
    }
    result["tables"] = {
        "results": results_table(rows, default_threads),
        "agreement": agreement_table(checks),
        "breakdown": breakdown_table(breakdown),
    }
    result["wall_time_s"] = time.perf_counter() - wall

    print()
    print(result["tables"]["results"])
    print()
    print("Targets:")
    for t in targets:
        print(f"- {t['target']} [{t['where']}]: {t['verdict']}")
    print()
    print("Agreement (per query, same definitions):")
    print(result["tables"]["agreement"])
    print("Queries without a relevant document:", json.dumps(peer_empty))
    print()
    print("Where our time goes:")
    print(result["tables"]["breakdown"])
    print("Notes:")
    for n in notes:
        print(f"- {n}")

    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / "metrics.json.tmp"
        tmp.write_text(json.dumps(result, indent=2, default=_json_default) + "\n")
        os.replace(tmp, out / "metrics.json")
        write_markdown(out / "metrics.md", result)
        try:
            write_plot(out / "metrics.png", rows)
        except Exception as exc:  # noqa: BLE001 - the plot is optional
            print(f"[bench_metrics] no plot: {exc}", file=sys.stderr)
        print(f"\n[bench_metrics] wrote {out / 'metrics.json'}, metrics.md, metrics.png "
              f"in {result['wall_time_s']:.1f} s", flush=True)
    return result


_json_default = _common.json_default


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="100,000 documents in 1,000 queries")
    parser.add_argument("--out", default=None,
                        help="output directory (default: benchmarks/results, or "
                        "benchmarks/results/quick with --quick, as python -m benchmarks does)")
    args = parser.parse_args(argv)
    out = args.out or (DEFAULT_OUT / "quick" if args.quick else DEFAULT_OUT)
    command = "python " + " ".join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    run(quick=args.quick, out_dir=out, command=command)


if __name__ == "__main__":
    main()
