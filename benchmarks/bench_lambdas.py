"""Throughput of the lambda kernels: sklearn-ranknet against LightGBM's
``lambdarank`` objective and a vectorized NumPy implementation.

Run it as a script::

    python benchmarks/bench_lambdas.py [--quick] [--out benchmarks/results]

or from Python::

    from benchmarks import bench_lambdas
    results = bench_lambdas.run(quick=True, out_dir="benchmarks/results")

What is measured
----------------
Data, one block per query length L in 10, 100, 1,000, 10,000: every query has
exactly L documents, ``docs_per_pass // L`` queries (full: 1,000,000
documents, so 100,000 x 10, 10,000 x 100, 1,000 x 1,000, 100 x 10,000;
``--quick``: 50,000 documents). Labels are drawn uniformly from 0..4
(independently, so about 80% of the pairs of a query have different labels),
then arranged query by query and sorted descending inside each query
(``label_sorted_order``, the layout the objectives expect). Scores are iid
standard normal, drawn after the arrangement (they are independent of the
labels, so the arrangement biases nothing). sigma = 1, exponential gain.

The unit is the *label-differing pair*: a pass over all queries does
``sum_q (L^2 - sum_c n_qc^2) / 2`` of them. For the truncated variant (k=30)
the unit is the label-differing pairs with at least one document in the
current top 30 (by score), and the table also gives documents/s and the
number of pairs visited (all pairs with one document in the top 30, equal
labels included, ``T L - T (T + 1) / 2`` per query with ``T = min(30, L)``).

Systems, each at 1 and 2 threads:

1. ours: ``RankNetObjective.gradient`` and ``LambdaRankObjective.gradient``
   (metric="ndcg", gain="exponential", k=None and k=30), gradient only
   (``with_cost=False``), on every query (rows = queries = arange); threads
   through ``sklearn_ranknet._jit.kernel_threads``. Objectives are built
   outside the timer (they cache per-fit constants such as 1 / ideal DCG).
2. LightGBM ``objective="lambdarank"``: one boosting iteration
   (``Booster.update()``) on the same labels, with the same scores as
   ``init_score`` and the scores as the only feature; ``num_leaves=2``,
   ``max_bin=15``, ``min_data_in_leaf`` = a tenth of the rows,
   ``learning_rate=1e-6`` (the scores, hence the top-30 sets, stay those of
   ours), ``lambdarank_truncation_level`` = L (every pair) or 30,
   ``num_threads`` 1 or 2, ``metric="None"``, ``verbose=-1``. The first
   iteration (which also sets up buffers) is excluded; the figure is the
   median time of single later iterations. The same Booster settings with
   ``objective="regression"`` (O(n) gradients) time what an iteration costs
   besides the objective (a one-split tree on 1 feature, score update);
   "tree-subtracted" = lambdarank iteration - regression iteration.
   LightGBM refuses queries of more than 10,000 rows ("Number of rows 10001
   exceeds upper limit of 10000 for a query"); 10,000 itself is accepted.
3. NumPy: the same RankNet and LambdaRank-NDCG lambdas with n x n matrices
   by broadcasting, stacked over a chunk of equal-length queries (B, n, n);
   LambdaRank builds only the rows of the top min(k, n) ranks (B, T, n).
   2 threads: the chunks are spread over a 2-worker thread pool (NumPy's
   ufuncs and reductions release the GIL). Checked against ours to 1e-10 on
   a few queries of every length before anything is timed.

Slow systems do not run every query: LightGBM runs the first queries up to
``lgb_pair_budget`` label-differing pairs per iteration and NumPy up to
``numpy_element_budget`` matrix entries per pass (an even number of queries,
so that 2 threads split them evenly). Every ratio compares the same queries:
ours is timed again on exactly each subset. The full n x n NumPy cases at
L = 10,000 are skipped: one 10,000 x 10,000 float64 matrix is 800 MB and
the computation needs four of them at once.

Timing: every case is warmed up (JIT compilation; LightGBM's first
iteration), then timed in rounds: in each round every case of the block
(query length, threads) runs once or a few times (fast calls repeat up to
about ``round_target_s``), the order of the cases rotating from round to
round, so that all systems see the same machine load. Reported: the median
of all timed calls (full: 5 rounds; NumPy cases slower than ``SLOW_S`` per
call: 3 rounds; quick: 3 rounds). The process CPU time of each call is
recorded (CPU time / wall time shows whether 2 threads really ran), and
/proc/stat gives the CPU time other processes used during each block.

Diagnostics (info rows, not compared): a fork/join probe (our RankNet on 2
queries of 2 documents: the fixed cost of a parallel call), our per-query
sort alone (``_kernels.rank_order`` on every query: how much of LambdaRank
is sorting), and, in the full run only, a fresh process per thread setting
(default; ``OMP_WAIT_POLICY=passive``; ``NUMBA_THREADING_LAYER=workqueue``)
timing the probe, one of our passes and a LightGBM iteration at 1 and 2
threads, to explain what 2 threads do on a shared machine.
"""

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common  # noqa: E402
else:
    from . import _common


SEED = 20240611
LENGTHS = (10, 100, 1_000, 10_000)
N_LABELS = 5  # labels 0..4, uniform
SIGMA = 1.0
K = 30
THREADS = (1, 2)
TOLERANCE = 1e-10  # NumPy vs ours, max absolute difference
LGB_MAX_QUERY_ROWS = 10_000  # LightGBM's limit (DCGCalculator::kMaxPosition)
LGB_LEARNING_RATE = 1e-6
LGB_MAX_BIN = 15
NUMPY_MAX_MATRIX_BYTES = 256e6  # one n x n float64 matrix above this: skip
NUMPY_CHUNK_ELEMENTS = 2_000_000  # B * rows * n per NumPy chunk
SLOW_S = 2.0  # NumPy calls slower than this get SLOW_ROUNDS rounds
SLOW_ROUNDS = 3
MAX_CALLS_PER_ROUND = 10
UNRELIABLE_FACTOR = 3.0  # see derive_lgb_objective_rows
TARGET_RATIO = 5.0
MODES = {
    "full": {
        "docs_per_pass": 1_000_000,
        "rounds": 5,
        "round_target_s": 0.25,
        "max_calls_per_round": MAX_CALLS_PER_ROUND,
        "lgb_pair_budget": 1.6e8,
        "numpy_element_budget": 1e8,
        "check_queries": 3,
    },
    "quick": {
        "docs_per_pass": 50_000,
        "rounds": 3,
        "round_target_s": 0.0,
        "max_calls_per_round": 1,
        "lgb_pair_budget": 5e6,
        "numpy_element_budget": 5e6,
        "check_queries": 2,
    },
}
DEFAULT_OUT = Path(__file__).resolve().parent / "results"
VARIANTS = ("RankNet", "LambdaRank NDCG", f"LambdaRank NDCG@{K}")
TARGET = (
    f"our lambda pass at least {TARGET_RATIO:g}x LightGBM's (label-differing pairs/s, "
    "equal threads, same queries)"
)


def variant_k(variant, length):
    """Truncation of a variant at query length ``length`` (None: RankNet)."""
    if variant == "RankNet":
        return None
    return length if variant == "LambdaRank NDCG" else K


# --------------------------------------------------------------------------
# Data


def make_data(length, n_queries, seed=SEED):
    """Equal-length queries, labels sorted descending inside each query."""
    from sklearn_ranknet._objectives import label_sorted_order

    rng = np.random.default_rng([seed, length])
    n = length * n_queries
    offsets = np.arange(n_queries + 1, dtype=np.int64) * length
    y = rng.integers(0, N_LABELS, size=n).astype(np.float64)
    y = y[label_sorted_order(y, offsets)]
    s = rng.standard_normal(n)
    return {
        "length": length,
        "n_queries": n_queries,
        "offsets": offsets,
        "y": y,
        "s": s,
        "rows": np.arange(n, dtype=np.int64),
        "queries": np.arange(n_queries, dtype=np.int64),
        "pairs": pair_counts(y.reshape(n_queries, length), s.reshape(n_queries, length)),
    }


def pair_counts(y2, s2):
    """Per-query pair counts: label-differing pairs, and for k=30 the pairs
    visited (one document in the top K by score) and the label-differing
    ones among them."""
    n_queries, length = y2.shape
    rows = np.arange(n_queries)
    labels = y2.astype(np.int64)
    counts = np.stack([(labels == c).sum(axis=1) for c in range(N_LABELS)], axis=1)
    differing = (length * length - (counts**2).sum(axis=1)) // 2
    top = min(K, length)
    ranked = np.take_along_axis(labels, np.argsort(-s2, axis=1, kind="stable"), axis=1)
    seen = np.zeros_like(counts)
    top_differing = np.zeros(n_queries, dtype=np.int64)
    for a in range(top):
        lab = ranked[:, a]
        seen[rows, lab] += 1
        same_below = counts[rows, lab] - seen[rows, lab]
        top_differing += (length - 1 - a) - same_below
    visited = top * length - top * (top + 1) // 2
    return {
        "differing": differing,
        "top_differing": top_differing,
        "top_visited": np.full(n_queries, visited, dtype=np.int64),
    }


def unit_pairs(data, variant, m):
    """Label-differing pairs of ``variant`` in the first ``m`` queries."""
    key = "top_differing" if variant.endswith(f"@{K}") else "differing"
    return int(data["pairs"][key][:m].sum())


def subset_size(per_query, budget, n_queries):
    """Most leading queries whose total ``per_query`` fits ``budget``; even
    unless every query fits, so that two threads split them evenly."""
    total = np.cumsum(per_query)
    m = int(np.searchsorted(total, budget, side="right"))
    if m >= n_queries:
        return n_queries
    return m - (m % 2)


# --------------------------------------------------------------------------
# Systems


def ours_objectives(data):
    from sklearn_ranknet._objectives import LambdaRankObjective, RankNetObjective

    y, offsets = data["y"], data["offsets"]
    return {
        "RankNet": RankNetObjective(y, offsets, sigma=SIGMA),
        "LambdaRank NDCG": LambdaRankObjective(
            y, offsets, sigma=SIGMA, metric="ndcg", k=None, gain="exponential"
        ),
        f"LambdaRank NDCG@{K}": LambdaRankObjective(
            y, offsets, sigma=SIGMA, metric="ndcg", k=K, gain="exponential"
        ),
    }


def ours_call(objective, data, m):
    """``objective.gradient`` on the first ``m`` queries (all: the whole pass)."""
    n = int(data["offsets"][m])
    s, rows = data["s"][:n], data["rows"][:n]
    queries, offsets = data["queries"][:m], data["offsets"][: m + 1]

    def call():
        return objective.gradient(s, rows, queries, offsets, with_cost=False)

    return call


def numpy_constants(data, ks):
    """What NumPy may precompute outside the timer, as ours does: gains,
    1 / ideal DCG@k per query, and per k the constant |d_a - d_b| [b > a]
    (for the effective truncations ``ks`` only)."""
    length, n_queries = data["length"], data["n_queries"]
    y2 = data["y"].reshape(n_queries, length)
    gains = np.exp2(y2) - 1.0
    discounts = 1.0 / np.log2(np.arange(length, dtype=np.float64) + 2.0)
    out = {"gains": gains, "norms": {}, "pair_discount": {}}
    ideal_order = -np.sort(-gains, axis=1)
    for k in set(ks):
        d = discounts.copy()
        d[k:] = 0.0
        ideal = ideal_order @ d
        out["norms"][k] = np.divide(1.0, ideal, out=np.zeros_like(ideal), where=ideal > 0)
        top = min(k, length)
        upper = np.arange(length)[None, :] > np.arange(top)[:, None]
        out["pair_discount"][k] = np.abs(d[:top, None] - d[None, :]) * upper
    return out


def numpy_ranknet(s, y, sigma, out):
    """RankNet lambdas of a (B, n) block of queries, written into ``out``.

    R_ij = [y_i > y_j] / (1 + exp(sigma (s_i - s_j))); document i gets
    sigma / P (sum_j R_ji - sum_j R_ij), P = label-differing pairs.
    """
    r = s[:, :, None] - s[:, None, :]
    r *= sigma
    np.exp(r, out=r)
    r += 1.0
    np.reciprocal(r, out=r)
    above = y[:, :, None] > y[:, None, :]
    r *= above
    n_pairs = np.count_nonzero(above, axis=(1, 2))
    np.subtract(r.sum(axis=1), r.sum(axis=2), out=out)
    out *= np.divide(sigma, n_pairs, out=np.zeros(len(s)), where=n_pairs > 0)[:, None]


def numpy_lambdarank(s, gains, norms, pair_discount, sigma, out):
    """LambdaRank-NDCG lambdas of a (B, n) block of queries, into ``out``.

    In score order, the pair of ranks a < b (a in the top T) weighs
    |g_a - g_b| |d_a - d_b|; L_ab = sign(g_a - g_b) w_ab rho(hi, lo) with
    rho(hi, lo) = 1 / (1 + exp(sigma (s_hi - s_lo))); rank a gets -sum_b L_ab,
    rank b gets +sum_a L_ab, all times sigma / ideal DCG@k.
    """
    top = pair_discount.shape[0]
    order = np.argsort(-s, axis=1, kind="stable")
    ss = np.take_along_axis(s, order, axis=1)
    gs = np.take_along_axis(gains, order, axis=1)
    dg = gs[:, :top, None] - gs[:, None, :]
    sign = np.sign(dg)
    weight = np.abs(dg, out=dg)
    weight *= pair_discount
    z = ss[:, :top, None] - ss[:, None, :]
    z *= sign
    z *= sigma
    np.exp(z, out=z)
    z += 1.0
    np.divide(weight, z, out=z)
    z *= sign
    g = z.sum(axis=1)
    g[:, :top] -= z.sum(axis=2)
    g *= (sigma * norms)[:, None]
    np.put_along_axis(out, order, g, axis=1)


def numpy_call(variant, data, consts, m, n_threads, pool):
    """The NumPy pass over the first ``m`` queries, in chunks, on 1 thread or
    spread over ``pool``."""
    length, n_queries = data["length"], data["n_queries"]
    s2 = data["s"].reshape(n_queries, length)
    y2 = data["y"].reshape(n_queries, length)
    k = variant_k(variant, length)
    rows_per_query = length if k is None else min(k, length)
    per_chunk = max(1, NUMPY_CHUNK_ELEMENTS // (rows_per_query * length))
    if n_threads > 1:  # at least one chunk per thread
        per_chunk = max(1, min(per_chunk, math.ceil(m / n_threads)))
    chunks = [(lo, min(lo + per_chunk, m)) for lo in range(0, m, per_chunk)]
    if k is None:

        def work(out, lo, hi):
            numpy_ranknet(s2[lo:hi], y2[lo:hi], SIGMA, out[lo:hi])

    else:
        k = min(k, length)
        gains, norms = consts["gains"], consts["norms"][k]
        pair_discount = consts["pair_discount"][k]

        def work(out, lo, hi):
            numpy_lambdarank(s2[lo:hi], gains[lo:hi], norms[lo:hi], pair_discount, SIGMA,
                             out[lo:hi])

    def call():
        out = np.empty((m, length))
        if n_threads == 1:
            for lo, hi in chunks:
                work(out, lo, hi)
        else:
            list(pool.map(lambda c: work(out, *c), chunks))
        return out.ravel()

    return call, len(chunks)


def fork_join_probe_data():
    """Two queries of two documents: a parallel call with next to no work,
    whose time is the cost of starting and joining the threads."""
    from sklearn_ranknet._objectives import RankNetObjective

    y = np.array([1.0, 0.0, 1.0, 0.0])
    offsets = np.array([0, 2, 4], dtype=np.int64)
    data = {"s": np.array([0.3, -0.2, 0.1, 0.5]), "rows": np.arange(4, dtype=np.int64),
            "queries": np.arange(2, dtype=np.int64), "offsets": offsets}
    return RankNetObjective(y, offsets, sigma=SIGMA), data


_SORT_DRIVER = []


def rank_order_call(data):
    """The per-query sort inside our LambdaRank kernel alone
    (``_kernels.rank_order`` on every query, serial), or None if that
    private helper has moved."""
    try:
        from numba import njit

        from sklearn_ranknet._kernels import rank_order
    except ImportError:
        return None
    if not _SORT_DRIVER:

        @njit(nogil=True)
        def sort_all(scores, offsets):
            first = 0
            for q in range(len(offsets) - 1):
                first += rank_order(scores[offsets[q] : offsets[q + 1]])[0]
            return first

        _SORT_DRIVER.append(sort_all)
    sort_all = _SORT_DRIVER[0]
    s, offsets = data["s"], data["offsets"]
    return lambda: sort_all(s, offsets)


def lgb_booster(data, m, objective, truncation, n_threads):
    """A LightGBM Booster on the first ``m`` queries, ready for update()."""
    import lightgbm as lgb

    length = data["length"]
    n = int(data["offsets"][m])
    s, y = data["s"][:n], data["y"][:n]
    params = {
        "objective": objective,
        "num_leaves": 2,
        "max_bin": LGB_MAX_BIN,
        "min_data_in_leaf": max(20, n // 10),
        "learning_rate": LGB_LEARNING_RATE,
        "num_threads": n_threads,
        "metric": "None",
        "verbose": -1,
        "force_col_wise": True,
        "deterministic": True,
        "seed": SEED,
    }
    if objective == "lambdarank":
        params["lambdarank_truncation_level"] = truncation
        params["sigmoid"] = SIGMA
    dataset = lgb.Dataset(
        s[:, None].copy(),
        label=y,
        group=np.full(m, length) if objective == "lambdarank" else None,
        init_score=s,
        params={"max_bin": LGB_MAX_BIN, "verbose": -1},
        free_raw_data=True,
    )
    return lgb.Booster(params=params, train_set=dataset), params


def lgb_tree_summary(booster):
    """Number of trees and how many have a split (two leaves)."""
    trees = booster.dump_model()["tree_info"]
    return {"trees": len(trees), "trees_with_split": sum(t["num_leaves"] > 1 for t in trees)}


# --------------------------------------------------------------------------
# Agreement check


def check_numpy(data, objectives, consts, n_check):
    """Max |NumPy - ours| on the first ``n_check`` queries, every variant
    NumPy runs at this length; raises if above TOLERANCE."""
    length = data["length"]
    out = []
    for variant in VARIANTS:
        if numpy_skip_reason(variant, length):
            continue
        m = min(n_check, data["n_queries"])
        ours = ours_call(objectives[variant], data, m)()[0]
        call, _ = numpy_call(variant, data, consts, m, 1, None)
        theirs = call()
        diff = float(np.max(np.abs(ours - theirs)))
        out.append({
            "length": length, "variant": variant, "queries": m,
            "max_abs_diff": diff, "max_abs_grad": float(np.max(np.abs(ours))),
        })
        if not diff <= TOLERANCE:
            raise RuntimeError(
                f"NumPy {variant} disagrees with ours at L={length}: max |diff| = {diff:.3g}"
            )
    return out


def numpy_skip_reason(variant, length):
    k = variant_k(variant, length)
    rows = length if k is None else min(k, length)
    if rows * length * 8 > NUMPY_MAX_MATRIX_BYTES:
        return (
            f"skipped: one {rows:,} x {length:,} float64 matrix is "
            f"{rows * length * 8 / 1e6:,.0f} MB and the pass needs four at once"
        )
    return None


# --------------------------------------------------------------------------
# Timing


def _machine_cpu():
    """(busy seconds of all CPUs, steal seconds) from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq) / hz, steal / hz


def _own_cpu():
    t = os.times()
    return t.user + t.system


def _helper_threads_cpu():
    """CPU seconds of every thread of this process but the main one (OpenMP
    workers, the NumPy pool), or None where /proc is missing."""
    try:
        hz = os.sysconf("SC_CLK_TCK")
        total = 0
        for tid in os.listdir("/proc/self/task"):
            if int(tid) == os.getpid():
                continue
            try:
                with open(f"/proc/self/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:  # thread ended meanwhile
                continue
            total += int(fields[11]) + int(fields[12])
        return total / hz
    except (OSError, ValueError):
        return None


class Case:
    """One timed thing in a block: a callable plus what it counts."""

    def __init__(self, system, variant, threads, queries, docs, pairs, call, **info):
        self.system, self.variant, self.threads = system, variant, threads
        self.queries, self.docs, self.pairs = queries, docs, pairs
        self.call = call
        self.info = info
        self.times, self.cpu = [], []
        self.calls_per_round = 1
        self.rounds = None
        self.warmup_s = None

    def timed(self):
        c0, t0 = time.process_time(), time.perf_counter()
        self.call()
        t1, c1 = time.perf_counter(), time.process_time()
        return t1 - t0, c1 - c0


def run_block(cases, rounds, round_target_s, max_calls, say):
    """Warm up every case, then time them in rotating rounds."""
    for case in cases:
        start = time.perf_counter()
        case.call()  # JIT compilation / LightGBM's first iteration
        case.warmup_s = time.perf_counter() - start
        if max_calls > 1:
            estimate, cpu = case.timed()  # kept as the first sample
            case.times.append(estimate)
            case.cpu.append(cpu)
        else:
            estimate = case.warmup_s
        case.calls_per_round = int(min(max_calls,
                                       max(1, math.ceil(round_target_s / max(estimate, 1e-9)))))
        slow = case.system == "NumPy" and estimate > SLOW_S
        case.rounds = min(rounds, SLOW_ROUNDS) if slow else rounds
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    machine0, own0, wall0 = _machine_cpu(), _own_cpu(), time.perf_counter()
    helpers0 = _helper_threads_cpu()
    try:
        for r in range(rounds):
            shift = r % len(cases)
            for case in cases[shift:] + cases[:shift]:
                if r >= case.rounds:
                    continue
                for _ in range(case.calls_per_round):
                    wall, cpu = case.timed()
                    case.times.append(wall)
                    case.cpu.append(cpu)
            say(f"  round {r + 1}/{rounds} done")
    finally:
        if gc_was_enabled:
            gc.enable()
    wall = time.perf_counter() - wall0
    machine1, own1 = _machine_cpu(), _own_cpu()
    helpers1 = _helper_threads_cpu()
    usage = {"wall_s": wall, "own_cpu_s": own1 - own0}
    if helpers0 is not None and helpers1 is not None:
        # Threads that ended during the block are missed; none should.
        usage["helper_threads_cpu_s"] = max(0.0, helpers1 - helpers0)
    if machine0 and machine1:
        usage["others_cores"] = max(0.0, (machine1[0] - machine0[0]) - (own1 - own0)) / wall
        usage["steal_cores"] = (machine1[1] - machine0[1]) / wall
    return usage


def case_row(case, length):
    median = statistics.median(case.times)
    ratios = [c / w for c, w in zip(case.cpu, case.times) if w > 0]
    row = {
        "length": length,
        "system": case.system,
        "variant": case.variant,
        "threads": case.threads,
        "queries": case.queries,
        "docs": case.docs,
        "pairs": case.pairs,
        "median_s": median,
        "min_s": min(case.times),
        "times_s": case.times,
        "calls": len(case.times),
        "rounds": case.rounds,
        "calls_per_round": case.calls_per_round,
        "warmup_s": case.warmup_s,
        "cpu_per_wall": statistics.median(ratios) if ratios else None,
        "pairs_per_s": case.pairs / median if case.pairs else None,
        "ns_per_pair": 1e9 * median / case.pairs if case.pairs else None,
        "docs_per_s": case.docs / median,
    }
    row.update(case.info)
    return row


# --------------------------------------------------------------------------
# One query length


def bench_length(length, mode, say):
    import numba

    from sklearn_ranknet._jit import kernel_threads

    cfg = MODES[mode]
    n_queries = cfg["docs_per_pass"] // length
    say(f"L={length:,}: {n_queries:,} queries, building data and objectives")
    data = make_data(length, n_queries)
    objectives = ours_objectives(data)
    consts = numpy_constants(data, [
        min(variant_k(v, length), length) for v in VARIANTS[1:]
        if not numpy_skip_reason(v, length)
    ])
    pairs = data["pairs"]
    probe_objective, probe_data = fork_join_probe_data()

    # Which queries each slow system runs.
    lgb_m, lgb_skip = {}, {}
    for variant in VARIANTS[1:]:
        per_query = pairs["top_differing" if variant.endswith(f"@{K}") else "differing"]
        m = subset_size(per_query, cfg["lgb_pair_budget"], n_queries)
        if length > LGB_MAX_QUERY_ROWS:
            lgb_skip[variant] = f"LightGBM refuses queries over {LGB_MAX_QUERY_ROWS:,} rows"
        elif m == 0:
            lgb_skip[variant] = (
                f"skipped: one query has {int(per_query[0]):,} pairs, over this mode's "
                f"budget of {cfg['lgb_pair_budget']:.3g} per iteration"
            )
        else:
            lgb_m[variant] = m
    np_m, np_skip = {}, {}
    for variant in VARIANTS:
        reason = numpy_skip_reason(variant, length)
        k = variant_k(variant, length)
        elements = length * (length if k is None else min(k, length))
        m = subset_size(np.full(n_queries, elements), cfg["numpy_element_budget"], n_queries)
        if reason:
            np_skip[variant] = reason
        elif m == 0:
            np_skip[variant] = "skipped: one query is over this mode's NumPy budget"
        else:
            np_m[variant] = m

    say(f"L={length:,}: checking NumPy against ours")
    with kernel_threads(1):
        checks = check_numpy(data, objectives, consts, cfg["check_queries"])

    rows, usage, lgb_trees = [], {}, []
    for n_threads in THREADS:
        cases = []
        with kernel_threads(n_threads) as got:
            if got != n_threads:
                raise RuntimeError(f"numba gives {got} threads, not {n_threads}")
            # ours: the whole pass, plus every subset a slower system runs
            for variant in VARIANTS:
                sizes = {n_queries: "all queries"}
                if variant in lgb_m:
                    sizes.setdefault(lgb_m[variant], "same queries as LightGBM")
                if variant in np_m:
                    sizes.setdefault(np_m[variant], "same queries as NumPy")
                for m, role in sizes.items():
                    cases.append(Case(
                        "ours", variant, n_threads, m, int(data["offsets"][m]),
                        unit_pairs(data, variant, m), ours_call(objectives[variant], data, m),
                        role=role,
                    ))
            # fork/join probe: a near-empty parallel call (2 queries of 2 documents)
            cases.append(Case(
                "ours", "fork/join probe", n_threads, 2, 4, 0,
                ours_call(probe_objective, probe_data, 2), role="probe",
            ))
            sort_call = rank_order_call(data) if n_threads == 1 else None
            if sort_call is not None:
                cases.append(Case(
                    "ours", "rank_order only", 1, n_queries, int(data["offsets"][-1]), 0,
                    sort_call, role="sort probe",
                ))
            # LightGBM
            boosters = []
            reg_sizes = sorted(set(lgb_m.values()))
            for variant, m in lgb_m.items():
                truncation = length if variant == "LambdaRank NDCG" else K
                booster, params = lgb_booster(data, m, "lambdarank", truncation, n_threads)
                boosters.append((variant, m, booster))
                cases.append(Case(
                    "LightGBM", variant, n_threads, m, int(data["offsets"][m]),
                    unit_pairs(data, variant, m), booster.update,
                    role="lambdarank iteration",
                    lgb_truncation_level=truncation, lgb_params=params,
                ))
            for m in reg_sizes:
                booster, params = lgb_booster(data, m, "regression", None, n_threads)
                boosters.append(("regression", m, booster))
                cases.append(Case(
                    "LightGBM", "regression (tree + update only)", n_threads, m,
                    int(data["offsets"][m]), 0, booster.update, role="regression iteration",
                    lgb_params=params,
                ))
            # NumPy
            pool = ThreadPoolExecutor(max_workers=n_threads) if n_threads > 1 else None
            for variant, m in np_m.items():
                call, n_chunks = numpy_call(variant, data, consts, m, n_threads, pool)
                cases.append(Case(
                    "NumPy", variant, n_threads, m, int(data["offsets"][m]),
                    unit_pairs(data, variant, m), call, role="vectorized", chunks=n_chunks,
                ))
            say(f"L={length:,}, {n_threads} thread(s): timing {len(cases)} cases")
            try:
                usage[n_threads] = run_block(cases, cfg["rounds"], cfg["round_target_s"],
                                             cfg["max_calls_per_round"], say)
            finally:
                if pool is not None:
                    pool.shutdown()
            if numba.get_num_threads() != n_threads:
                raise RuntimeError("something changed numba's thread count during the block")
            usage[n_threads]["load_1min_after"] = os.getloadavg()[0]
        for variant, m, booster in boosters:
            lgb_trees.append({"threads": n_threads, "variant": variant, "queries": m,
                              **lgb_tree_summary(booster)})
        del boosters
        rows += [case_row(case, length) for case in cases]
    derive_lgb_objective_rows(rows, length)
    add_ratios(rows, length)
    return {
        "length": length,
        "n_queries": n_queries,
        "docs": int(data["offsets"][-1]),
        "pairs_per_pass": {v: unit_pairs(data, v, n_queries) for v in VARIANTS},
        "visited_pairs_per_pass_k30": int(pairs["top_visited"].sum()),
        "lgb_skipped": lgb_skip,
        "numpy_skipped": np_skip,
        "numpy_check": checks,
        "lgb_trees": lgb_trees,
        "usage": {str(t): u for t, u in usage.items()},
        "rows": rows,
    }


def derive_lgb_objective_rows(rows, length):
    """LightGBM lambdarank iteration minus the regression iteration on the
    same queries and threads: an estimate of the objective alone.

    Flagged unreliable when the regression iteration on more threads takes
    over ``UNRELIABLE_FACTOR`` times its 1-thread time: then it measures
    waiting for threads to be scheduled, not tree building, and subtracting
    it removes an arbitrary part of the lambdarank iteration's own waiting.
    """
    for row in [r for r in rows if r["length"] == length and r["system"] == "LightGBM"
                and r["role"] == "lambdarank iteration"]:
        n_threads = row["threads"]
        reg = next(r for r in rows if r["length"] == length and r["threads"] == n_threads
                   and r["role"] == "regression iteration" and r["queries"] == row["queries"])
        reg1 = next(r for r in rows if r["length"] == length and r["threads"] == 1
                    and r["role"] == "regression iteration" and r["queries"] == row["queries"])
        slowdown = reg["median_s"] / reg1["median_s"]
        t = row["median_s"] - reg["median_s"]
        rows.append({
            "unreliable": (
                f"the {n_threads}-thread regression iteration took {slowdown:.0f}x its "
                "1-thread time (thread scheduling latency, not tree work)"
            ) if slowdown > UNRELIABLE_FACTOR else None,
            **{k: row[k] for k in ("length", "system", "variant", "threads", "queries",
                                   "docs", "pairs")},
            "role": "tree-subtracted",
            "median_s": t if t > 0 else None,
            "tree_share": reg["median_s"] / row["median_s"],
            "pairs_per_s": row["pairs"] / t if t > 0 else None,
            "ns_per_pair": 1e9 * t / row["pairs"] if t > 0 else None,
            "docs_per_s": row["docs"] / t if t > 0 else None,
            "cpu_per_wall": None,
        })


def add_ratios(rows, length):
    """ours / this (pairs/s) on the same queries and threads."""
    for row in rows:
        if row["system"] == "ours" or not row.get("pairs_per_s"):
            continue
        ours = next((r for r in rows if r["system"] == "ours" and r["length"] == length
                     and r["variant"] == row["variant"] and r["threads"] == row["threads"]
                     and r["queries"] == row["queries"]), None)
        if ours is not None:
            row["ours_ratio"] = ours["pairs_per_s"] / row["pairs_per_s"]


# --------------------------------------------------------------------------
# Report


def _eng(x, unit=""):
    if x is None:
        return "n/a"
    for factor, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(x) >= factor:
            return f"{x / factor:.3g}{suffix}{unit}"
    return f"{x:.3g} {unit}".rstrip()


def _fmt_s(t):
    if t is None:
        return "n/a"
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def _label(row):
    if row["role"] == "probe":
        return "ours fork/join probe: 2 queries x 2 docs (info)"
    if row["role"] == "sort probe":
        return "ours rank_order alone, every query, serial (info)"
    if row["system"] == "LightGBM":
        if row["role"] == "regression iteration":
            return "LightGBM regression iteration (tree + update, info)"
        if row["role"] == "tree-subtracted":
            mark = " (unreliable, see notes)" if row.get("unreliable") else ""
            return f"LightGBM {row['variant']}, tree-subtracted{mark}"
        return f"LightGBM {row['variant']}, whole iteration"
    if row["system"] == "ours":
        suffix = "" if row["role"] == "all queries" else f" ({row['role']})"
        return f"ours {row['variant']}{suffix}"
    return f"NumPy {row['variant']}"


def block_table(block, n_threads):
    rows = [r for r in block["rows"] if r["threads"] == n_threads]
    order = {"ours": 0, "LightGBM": 1, "NumPy": 2}
    variant_order = {v: i for i, v in enumerate(VARIANTS)}
    role_order = {"all queries": 0, "same queries as LightGBM": 1, "same queries as NumPy": 2,
                  "lambdarank iteration": 0, "tree-subtracted": 1, "regression iteration": 2,
                  "vectorized": 0, "sort probe": 3, "probe": 4}
    rows.sort(key=lambda r: (variant_order.get(r["variant"], 9), order[r["system"]],
                             role_order[r["role"]]))
    lines = [
        "| system | queries x docs | pairs | median time (calls) | pairs/s | ns/pair "
        "| docs/s | ours / this | CPU/wall |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        calls = f" ({r['calls']})" if "calls" in r else ""
        lines.append(
            f"| {_label(r)} | {r['queries']:,} x {r['length']:,} | "
            f"{_eng(r['pairs']) if r['pairs'] else '-'} | {_fmt_s(r['median_s'])}{calls} | "
            f"{_eng(r['pairs_per_s']) if r['pairs'] else '-'} | "
            f"{(format(r['ns_per_pair'], '.3g') if r.get('ns_per_pair') else '-')} | "
            f"{_eng(r['docs_per_s']) if r.get('docs_per_s') else '-'} | "
            f"{(format(r['ours_ratio'], '.3g') + 'x') if r.get('ours_ratio') else ''} | "
            f"{(format(r['cpu_per_wall'], '.2f')) if r.get('cpu_per_wall') is not None else ''} |"
        )
    return "\n".join(lines)


def summary(blocks):
    """Ratios ours / LightGBM (whole iteration and tree-subtracted) and
    ours / NumPy, and the 1 -> 2 thread speed-ups of ours."""
    out = []
    for block in blocks:
        for variant in VARIANTS:
            for n_threads in THREADS:
                rows = [r for r in block["rows"] if r["variant"] == variant
                        and r["threads"] == n_threads]
                ours = next(r for r in rows if r["system"] == "ours" and r["role"] == "all queries")
                entry = {"length": block["length"], "variant": variant, "threads": n_threads,
                         "ours_pairs_per_s": ours["pairs_per_s"]}
                for key, system, role in (("lgb_raw", "LightGBM", "lambdarank iteration"),
                                          ("lgb_tree_subtracted", "LightGBM", "tree-subtracted"),
                                          ("numpy", "NumPy", "vectorized")):
                    r = next((r for r in rows if r["system"] == system and r["role"] == role), None)
                    entry[key] = r.get("ours_ratio") if r else None
                    entry[key + "_pairs_per_s"] = r["pairs_per_s"] if r else None
                    if r and r.get("unreliable"):
                        entry[key + "_unreliable"] = r["unreliable"]
                out.append(entry)
    return out


def speedups(blocks):
    out = []
    for block in blocks:
        for r1 in block["rows"]:
            if r1["threads"] != 1 or "times_s" not in r1:
                continue
            r2 = next((r for r in block["rows"] if r["threads"] == 2
                       and r["system"] == r1["system"] and r["variant"] == r1["variant"]
                       and r["role"] == r1["role"] and r["queries"] == r1["queries"]), None)
            if r2 is None:
                continue
            out.append({
                "length": block["length"], "system": r1["system"], "variant": r1["variant"],
                "role": r1["role"], "queries": r1["queries"],
                "speedup": r1["median_s"] / r2["median_s"],
                "cpu_per_wall_1": r1["cpu_per_wall"], "cpu_per_wall_2": r2["cpu_per_wall"],
                "others_cores_2": block["usage"]["2"].get("others_cores"),
                "others_cores_1": block["usage"]["1"].get("others_cores"),
                "per_query_us_1": 1e6 * r1["median_s"] / r1["queries"],
            })
    return out


def summary_table(entries):
    lines = [
        "| L | objective | threads | ours pairs/s | ours / LightGBM (iteration) | "
        "ours / LightGBM (tree-subtracted) | ours / NumPy |",
        "|---|---|---|---|---|---|---|",
    ]

    def ratio(x):
        return "n/a" if x is None else f"{x:.3g}x"

    for e in entries:
        lines.append(
            f"| {e['length']:,} | {e['variant']} | {e['threads']} | "
            f"{_eng(e['ours_pairs_per_s'])} | {ratio(e['lgb_raw'])} | "
            f"{ratio(e['lgb_tree_subtracted'])}"
            f"{' (unreliable)' if e.get('lgb_tree_subtracted_unreliable') else ''} | "
            f"{ratio(e['numpy'])} |"
        )
    return "\n".join(lines)


def evaluate_target(entries):
    """The 5x target on every LambdaRank comparison with LightGBM; judged on
    the tree-subtracted ratio (the harder one), the whole-iteration ratio
    alongside."""
    lines, met, total = [], 0, 0
    for e in entries:
        if e["variant"] == "RankNet" or e["lgb_raw"] is None:
            continue
        total += 1
        strict = e["lgb_tree_subtracted"]
        ok = strict is not None and strict >= TARGET_RATIO
        met += ok
        caveat = e.get("lgb_tree_subtracted_unreliable")
        lines.append(
            f"- L={e['length']:,}, {e['variant']}, {e['threads']} thread(s): "
            f"{'MET' if ok else 'NOT MET'}: "
            f"{'n/a' if strict is None else f'{strict:.3g}x'} tree-subtracted, "
            f"{e['lgb_raw']:.3g}x whole iteration (needed {TARGET_RATIO:g}x)"
            + (f"; the tree-subtracted figure is unreliable: {caveat}" if caveat else "")
        )
    head = f"Target: {TARGET}. Met in {met} of {total} comparisons (tree-subtracted ratio)."
    return head, lines


def thread_notes(spd, blocks):
    """What the 1 -> 2 thread speed-ups of ours say, with the evidence:
    process CPU time per wall second, other processes' CPU use (/proc/stat),
    and the fork/join probe (a parallel call with next to no work)."""
    notes = []
    ours = [s for s in spd if s["system"] == "ours" and s["role"] == "all queries"]
    lines = ", ".join(
        f"L={s['length']:,} {s['variant']} {s['speedup']:.2f}x (CPU/wall {s['cpu_per_wall_1']:.2f}"
        f" -> {s['cpu_per_wall_2']:.2f})" for s in ours)
    notes.append(f"Speed-up of ours from 1 to 2 threads, full pass (process CPU seconds per "
                 f"wall second on 1 -> 2 threads): {lines}.")
    probes = [(b["length"], {r["threads"]: r["median_s"] for r in b["rows"]
                             if r.get("role") == "probe"}) for b in blocks]
    if probes:
        p1 = statistics.median(p[1][1] for p in probes)
        p2 = statistics.median(p[1][2] for p in probes)
        p2_max = max(p[1][2] for p in probes)
        notes.append(
            f"Fork/join probe (our RankNet on 2 queries of 2 documents, timed in every block "
            f"next to the real cases): median {1e6 * p1:.0f} us on 1 thread, "
            f"{1e3 * p2:.2f} ms on 2 threads (up to {1e3 * p2_max:.2f} ms in one block). Every "
            "2-thread call waits for its second thread to be scheduled before the work can "
            "finish; " + (
                "with other processes on the CPUs that wait is of the order of a scheduler time "
                "slice, which swamps short calls: 2 threads can then be much slower than 1."
                if p2 > 20 * p1 else "here that wait is small.")
        )
    helpers = [b["usage"]["1"].get("helper_threads_cpu_s") for b in blocks]
    if all(h is not None for h in helpers):
        own = sum(b["usage"]["1"]["own_cpu_s"] for b in blocks)
        notes.append(
            f"Check that 1 thread means 1 thread: in the 1-thread blocks, threads other than "
            f"the main one used {sum(helpers):.2f} CPU-seconds of our {own:.1f} "
            "(/proc/self/task). LightGBM's num_threads is process-wide (the last Booster "
            "created or reset sets it for every Booster), so each block creates all its "
            "Boosters with its own thread count."
        )
    others = [b["usage"]["2"].get("others_cores") for b in blocks]
    others = [o for o in others if o is not None]
    if others:
        notes.append(
            f"During the 2-thread blocks other processes used {min(others):.2f} to "
            f"{max(others):.2f} of the {os.cpu_count()} CPUs on average (from /proc/stat, "
            "minus our own CPU time)."
        )
    slow = [s for s in ours if s["speedup"] < 1.3]
    fine = [s for s in ours if s["speedup"] >= 1.3]
    if fine:
        notes.append(
            f"Where a second CPU was free, ours scaled {min(s['speedup'] for s in fine):.2f}x to "
            f"{max(s['speedup'] for s in fine):.2f}x on 2 threads ({len(fine)} of {len(ours)} "
            "cases)."
        )
    if slow:
        parts = [
            f"L={s['length']:,} {s['variant']} {s['speedup']:.2f}x (CPU/wall on 2 threads "
            f"{s['cpu_per_wall_2']:.2f}, other processes "
            + (f"{s['others_cores_2']:.2f}" if s["others_cores_2"] is not None else "n/a")
            + " CPUs during that block)"
            for s in slow
        ]
        msg = (f"{len(slow)} of {len(ours)} of our full-pass cases gained less than 1.3x from a "
               "second thread: " + "; ".join(parts) + ".")
        starved = [s for s in slow if s["cpu_per_wall_2"] is not None
                   and s["cpu_per_wall_2"] < 1.5]
        if len(starved) == len(slow):
            msg += (" In every one of them our process got less than 1.5 CPU-seconds per "
                    "wall-second on 2 threads: the second thread found no free CPU because "
                    "other processes were running. That is machine load, not the kernel.")
        else:
            msg += (f" In {len(slow) - len(starved)} of them both threads did run (CPU/wall "
                    ">= 1.5) and the speed-up was still small: a limit inside the computation "
                    "(memory bandwidth, per-query overhead), not only load.")
        msg += (" The kernel shares no state between queries (prange over equal-length "
                "queries, split evenly between the threads), and every pass has at least 100 "
                "queries, so too few queries is not the cause.")
        notes.append(msg)
    per_query = [s for s in ours if s["length"] == min(LENGTHS)]
    if per_query:
        notes.append(
            "Per-query cost of ours at L=10 on 1 thread: "
            + ", ".join(f"{s['variant']} {s['per_query_us_1'] * 1e3:.0f} ns/query"
                        for s in per_query)
            + " (45 pairs per query: the small-query regime, where fixed per-query work "
            "dominates)."
        )
    shares = []
    for b in blocks:
        sort = next((r for r in b["rows"] if r.get("role") == "sort probe"), None)
        if sort is None:
            continue
        for variant in VARIANTS[1:]:
            r = next(r for r in b["rows"] if r["system"] == "ours" and r["threads"] == 1
                     and r["role"] == "all queries" and r["variant"] == variant)
            shares.append(f"L={b['length']:,} {variant} {100 * sort['median_s'] / r['median_s']:.0f}%")
    if shares:
        notes.append(
            "Share of our 1-thread LambdaRank pass that the per-query score sort alone would "
            "take (_kernels.rank_order on every query, timed separately in the same rounds): "
            + ", ".join(shares) + ". The truncated pass does O(n k) pair work but an "
            "O(n log n) sort per query, so at k=30 it is bound by the sort, and pairs/s is "
            "not the right yardstick there (documents/s is)."
        )
    return notes


def thread_environment_note(entries):
    ok = [e for e in entries if "error" not in e]
    if not ok:
        return "Thread-environment probe failed: " + "; ".join(e.get("error", "")[:200]
                                                             for e in entries)
    parts = []
    for e in ok:
        m = e["medians_s"]
        parts.append(
            f"{e['environment']}: fork/join {_fmt_s(m['fork/join probe|2'])} on 2 threads vs "
            f"{_fmt_s(m['fork/join probe|1'])} on 1; 1 -> 2 thread speed-up of our L=1,000 "
            "LambdaRank pass "
            f"{m['ours LambdaRank NDCG, L=1,000|1'] / m['ours LambdaRank NDCG, L=1,000|2']:.2f}x, "
            "of a LightGBM regression iteration "
            f"{m['LightGBM regression iteration|1'] / m['LightGBM regression iteration|2']:.2f}x"
        )
    return (
        "Thread environments (fresh process each, same cases at 1 and 2 threads; see the "
        "table): " + "; ".join(parts) + ". By default libgomp (used by Numba's OpenMP layer "
        "and by LightGBM) makes waiting threads spin; on a machine with more runnable "
        "threads than CPUs the spinning thread holds a CPU that the thread it waits for needs, "
        "so every parallel region can cost a scheduler time slice. Sleeping waits "
        "(OMP_WAIT_POLICY=passive) or Numba's workqueue layer avoid that under load (the "
        "workqueue layer only for Numba; LightGBM always uses libgomp), but on a quiet machine "
        "they cost a thread wake-up (tens of microseconds) per parallel region where "
        "spinning costs a few; compare the rows and their load. None of them gives a "
        "speed-up when no second CPU is free."
    )


def environment(command):
    return _common.environment(command)


def method_notes(cfg, blocks):
    skipped = []
    for b in blocks:
        for v, why in b["lgb_skipped"].items():
            skipped.append(f"LightGBM {v} at L={b['length']:,}: {why}")
        for v, why in b["numpy_skipped"].items():
            skipped.append(f"NumPy {v} at L={b['length']:,}: {why}")
    shares = [r["tree_share"] for b in blocks for r in b["rows"]
              if r.get("role") == "tree-subtracted" and r["threads"] == 1]
    trees = [t for b in blocks for t in b["lgb_trees"]]
    split_ok = all(t["trees_with_split"] == t["trees"] for t in trees)
    notes = [
        "Pairs: label-differing pairs per pass (for @30: label-differing pairs with at least "
        "one document in the current top 30). ns/pair and pairs/s are wall-clock figures of "
        "the whole call, not per thread. Our full-list LambdaRank visits every pair, equal "
        "labels included (weight 0; about 1.25x the counted pairs with 5 uniform labels); "
        "RankNet visits only label-differing pairs.",
        "LightGBM timing: each case is one Booster; warm-up = its first update() (buffers, "
        "initial scores); then single update() calls, timed one by one with "
        "time.perf_counter in the rotating rounds, median reported: the per-iteration time "
        "(time of N iterations - time of 1) / (N - 1), but as a median, robust to load spikes. "
        "An iteration = the lambdarank gradients and hessians of every query + a one-split "
        "tree on the 1 feature (15 bins) + adding the tree to the scores. The same Booster with "
        "objective='regression' estimates the non-objective part; it was "
        + (f"{100 * min(shares):.1f}% to {100 * max(shares):.1f}% of a 1-thread lambdarank "
           "iteration" if shares else "not measured")
        + ". 'Tree-subtracted' subtracts it; the truth is between the two figures, and the "
        "target is judged on the tree-subtracted (harder) ratio. On 2 threads the "
        "regression iteration mostly measures waiting for the second thread (see the "
        "fork/join probe), so 2-thread tree-subtracted figures are marked unreliable. "
        + ("Every LightGBM tree had one split (two leaves)." if split_ok else
           "Some LightGBM trees had no split: " + json.dumps(trees)),
        "The work is comparable, not identical: LightGBM also computes a hessian per pair, "
        "normalizes each query's lambdas (lambdarank_norm=true: a rescaling by "
        "log2(1 + sum) / sum and a division of each pair's |delta NDCG| by 0.01 + |s_i - s_j|), "
        "takes the sigmoid from a lookup table, skips equal-label pairs with a branch, sorts "
        "each query by score (ours sorts for LambdaRank too), and stores float32 gradients. "
        "Ours computes float64 gradients only (no hessian), exact logistic via "
        "exp(s_i) factorization. LightGBM has no RankNet objective, so RankNet is compared "
        "with NumPy only.",
        "NumPy: chunks of equal-length queries stacked into (B, n, n) arrays "
        f"(about {NUMPY_CHUNK_ELEMENTS:,} entries per chunk; for @30 only the top-30 rows, "
        "(B, 30, n)); precomputed outside the timer, as ours caches them: gains, "
        "1 / ideal DCG@k, the |d_a - d_b| [b > a] matrix. A per-query Python loop would be "
        "slower at small L (per-call overhead); the stacked form is the strongest plain "
        f"NumPy we know. Agreement with ours before timing: max |diff| <= "
        f"{max(c['max_abs_diff'] for b in blocks for c in b['numpy_check']):.2g} "
        f"(tolerance {TOLERANCE:g}) on the first {cfg['check_queries']} queries of every "
        "length and variant NumPy runs.",
        f"Repetitions: warm-up, then {cfg['rounds']} rotating rounds (NumPy cases slower than "
        f"{SLOW_S:g} s per call: {min(cfg['rounds'], SLOW_ROUNDS)}); fast calls repeat within "
        f"a round up to about {cfg['round_target_s']:g} s (at most "
        f"{cfg['max_calls_per_round']}); "
        + ("the first timed call after warm-up is included; " if cfg["max_calls_per_round"] > 1
           else "")
        + "medians of all timed calls.",
        f"Subsets: LightGBM runs the first queries up to {cfg['lgb_pair_budget']:.3g} "
        f"pairs per iteration, NumPy up to {cfg['numpy_element_budget']:.3g} matrix entries "
        "per pass (even counts); ours is timed again on exactly those queries, rows "
        "'same queries as ...', and every ratio uses those.",
    ] + [f"Skipped: {s}." for s in skipped]
    return notes


def write_markdown(path, result):
    env = result["environment"]
    lines = [
        f"# Lambda kernels: throughput ({result['mode']})",
        "",
        f"- date: {env['date']}",
        f"- command: `{env['command']}`",
        f"- machine: {env['machine']['cpu_model']}, {env['machine']['os_cpu_count']} CPUs "
        f"({env['machine']['cpus_available']} available to this process), "
        f"{env['machine']['platform']}, Python {env['machine']['python']}; numba threading "
        f"layer {env['machine']['numba_threading_layer']}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()),
        f"- git commit: {env['git_commit']} (plus uncommitted working-tree changes, if any)",
        f"- load average (1, 5, 15 min): start {result['load_start']}, end "
        f"{result['load_end']}; wall time {result['wall_time_s']:.0f} s",
        f"- data: equal-length queries, labels uniform on 0..{N_LABELS - 1}, scores iid "
        f"N(0, 1), sigma {SIGMA:g}, exponential gain; {MODES[result['mode']]['docs_per_pass']:,} "
        "documents per pass",
        "",
        "## Target",
        "",
        result["target"]["head"],
        "",
        *result["target"]["lines"],
        "",
        "## Ratios",
        "",
        "ours / other = ratio of label-differing pairs per second on the same queries and "
        "threads (> 1: ours faster).",
        "",
        result["tables"]["summary"],
        "",
        "## Per query length and thread count",
        "",
    ]
    for block in result["blocks"]:
        for n_threads in THREADS:
            u = block["usage"][str(n_threads)]
            others = u.get("others_cores")
            lines += [
                f"### L = {block['length']:,} documents per query, {n_threads} thread(s)",
                "",
                f"{block['n_queries']:,} queries, {block['docs']:,} documents; label-differing "
                "pairs per pass: " + ", ".join(
                    f"{v} {_eng(p)}" for v, p in block["pairs_per_pass"].items())
                + f"; pairs visited at k={K}: {_eng(block['visited_pairs_per_pass_k30'])}. "
                + (f"Other processes used {others:.2f} CPUs on average during this block; "
                   if others is not None else "")
                + f"load average after it: {u['load_1min_after']:.2f}.",
                "",
                result["tables"]["blocks"][f"{block['length']}/{n_threads}"],
                "",
            ]
    if result["tables"].get("thread_environments"):
        lines += [
            "## Why 2 threads may not beat 1: the same cases under other thread settings",
            "",
            "Each environment is a fresh process (the variables are read when the threading "
            "runtimes start); inside it 1 and 2 threads alternate over the rounds. Medians; "
            f"the fork/join probe is the median of {PROBE_CALLS} calls per round. "
            "(x) = 1-thread time / 2-thread time. Not tuning: the main tables above use the "
            "default environment for every system.",
            "",
            result["tables"]["thread_environments"],
            "",
        ]
    lines += ["## Notes", ""] + [f"- {n}" for n in result["notes"]] + [""]
    Path(path).write_text("\n".join(lines))


def write_plot(path, blocks):
    try:
        import matplotlib
    except ImportError:  # plots need the bench extra; the tables do not
        print(f"matplotlib is not installed (pip install '.[bench]'): no {path}")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    styles = {
        ("ours", "all queries"): ("tab:blue", "-", "ours"),
        ("LightGBM", "lambdarank iteration"): ("tab:red", "--", "LightGBM iteration"),
        ("LightGBM", "tree-subtracted"): ("tab:orange", ":", "LightGBM tree-subtracted"),
        ("NumPy", "vectorized"): ("tab:green", "-.", "NumPy"),
    }
    markers = {1: "o", 2: "s"}
    for ax, variant in zip(axes, VARIANTS):
        for (system, role), (color, ls, name) in styles.items():
            for n_threads in THREADS:
                pts = [(b["length"], r["pairs_per_s"]) for b in blocks for r in b["rows"]
                       if r["system"] == system and r["role"] == role
                       and r["variant"] == variant and r["threads"] == n_threads
                       and r.get("pairs_per_s")]
                if pts:
                    x, y = zip(*sorted(pts))
                    ax.plot(x, y, color=color, linestyle=ls, marker=markers[n_threads],
                            alpha=1.0 if n_threads == 1 else 0.6,
                            label=f"{name}, {n_threads} thread{'s' if n_threads > 1 else ''}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(variant)
        ax.set_xlabel("documents per query")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("label-differing pairs / s")
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("Lambda pass throughput (higher is better; same machine, same rounds)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------
# Entry points


def run(quick=False, out_dir=DEFAULT_OUT, command=None):
    """Run the benchmark, print the tables, write lambdas.{json,md,png}.

    Parameters
    ----------
    quick : bool, default=False
        50,000 documents per pass, smaller LightGBM/NumPy budgets, 3 rounds of
        one call each.
    out_dir : str or Path or None, default="benchmarks/results"
        Where to write the files; ``None`` writes nothing.
    command : str, default=None
        The command line to record; by default the ``run(...)`` call.

    Returns
    -------
    result : dict
        Everything written to ``lambdas.json``.
    """
    mode = "quick" if quick else "full"
    cfg = MODES[mode]
    command = command or f"bench_lambdas.run(quick={quick}, out_dir={str(out_dir)!r})"
    wall = time.perf_counter()
    load_start = [round(x, 2) for x in os.getloadavg()]
    log = []

    def say(message):
        load = os.getloadavg()[0]
        log.append({"at_s": round(time.perf_counter() - wall, 1), "stage": message,
                    "load_1min": load})
        print(f"[bench_lambdas {time.perf_counter() - wall:6.1f} s, load {load:.2f}] {message}",
              flush=True)

    say(f"mode {mode}, load average {load_start}")
    blocks = [bench_length(length, mode, say) for length in LENGTHS]
    environments = [] if quick else thread_environments(cfg["rounds"], say)
    entries = summary(blocks)
    spd = speedups(blocks)
    head, target_lines = evaluate_target(entries)
    notes = method_notes(cfg, blocks) + thread_notes(spd, blocks)
    if environments:
        notes.append(thread_environment_note(environments))
    busiest = max(e["load_1min"] for e in log)
    one = [r for b in blocks for r in b["rows"] if r["threads"] == 1 and r.get("cpu_per_wall")
           and r.get("pairs_per_s") and r["length"] == 1_000
           and r["role"] in ("all queries", "lambdarank iteration")
           and r["variant"] == "LambdaRank NDCG"]
    if one:
        notes.append(
            "Absolute rates are wall-clock under load: on 1 thread our process got about "
            f"{statistics.median(r['cpu_per_wall'] for r in one):.2f} CPU-seconds per "
            "wall-second, so a free core would give roughly 1 / that much more, for every "
            "system alike; per CPU-second at L=1,000 (LambdaRank NDCG, 1 thread): "
            + ", ".join(f"{r['system']} {_eng(r['pairs_per_s'] / r['cpu_per_wall'])} pairs"
                        for r in one)
            + ". The ratios do not need this correction."
        )
    notes.append(
        "On 2 threads each call pays a fixed wait (the fork/join probe), which weighs more "
        "on the faster, shorter call: under this load the 2-thread ratios understate ours."
    )
    notes.append(
        f"Machine load: 1-minute load average {load_start[0]:.2f} at the start, {busiest:.2f} "
        f"at most, on {os.cpu_count()} CPUs. The 2-thread figures need both CPUs and are the "
        "least reliable here; the rotating rounds give every system the same conditions, so "
        "the ratios are more trustworthy than the absolute rates."
    )
    result = {
        "suite": "lambdas",
        "mode": mode,
        "environment": environment(command),
        "settings": {k: v for k, v in cfg.items()} | {
            "lengths": LENGTHS, "k": K, "sigma": SIGMA, "labels": f"uniform 0..{N_LABELS - 1}",
            "seed": SEED, "lgb_learning_rate": LGB_LEARNING_RATE, "lgb_max_bin": LGB_MAX_BIN,
            "numpy_chunk_elements": NUMPY_CHUNK_ELEMENTS, "slow_s": SLOW_S,
            "slow_rounds": SLOW_ROUNDS, "tolerance": TOLERANCE},
        "load_start": load_start,
        "blocks": blocks,
        "summary": entries,
        "speedups": spd,
        "thread_environments": environments,
        "target": {"text": TARGET, "head": head, "lines": target_lines},
        "notes": notes,
        "log": log,
    }
    result["load_end"] = [round(x, 2) for x in os.getloadavg()]
    result["tables"] = {
        "summary": summary_table(entries),
        "blocks": {f"{b['length']}/{t}": block_table(b, t) for b in blocks for t in THREADS},
        "thread_environments": thread_environment_table(environments) if environments else None,
    }
    result["wall_time_s"] = time.perf_counter() - wall

    for b in blocks:
        for t in THREADS:
            print(f"\nL = {b['length']:,}, {t} thread(s)")
            print(result["tables"]["blocks"][f"{b['length']}/{t}"])
    print("\n" + result["tables"]["summary"])
    if environments:
        print("\n" + result["tables"]["thread_environments"])
    print("\n" + head)
    print("\n".join(target_lines))
    print("\nNotes:")
    for n in notes:
        print("- " + n)

    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "lambdas.json").write_text(json.dumps(result, indent=1, default=_json_default))
        write_markdown(out / "lambdas.md", result)
        write_plot(out / "lambdas.png", blocks)
        print(f"\nwrote {out / 'lambdas.json'}, {out / 'lambdas.md'}, {out / 'lambdas.png'}")
    print(f"wall time {result['wall_time_s']:.1f} s")
    return result


def _json_default(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


# --------------------------------------------------------------------------
# Thread environment probe (why 2 threads may not beat 1)

THREAD_ENVIRONMENTS = (
    ("default (OpenMP layer, libgomp spin-waits)", {}),
    ("OMP_WAIT_POLICY=passive", {"OMP_WAIT_POLICY": "passive"}),
    ("NUMBA_THREADING_LAYER=workqueue", {"NUMBA_THREADING_LAYER": "workqueue"}),
)
PROBE_LENGTH, PROBE_QUERIES, PROBE_LGB_ROWS, PROBE_CALLS = 1_000, 200, 100_000, 20


def thread_probe(rounds):
    """In this process: a near-empty parallel call (fork/join probe), our
    full-pair LambdaRank pass on 200 queries of 1,000 documents, and a
    LightGBM regression iteration on 100,000 rows, each at 1 and 2 threads,
    interleaved over ``rounds`` rounds. Returns medians."""
    import numba

    from sklearn_ranknet._jit import kernel_threads

    data = make_data(PROBE_LENGTH, PROBE_QUERIES)
    objective = ours_objectives(data)["LambdaRank NDCG"]
    probe_objective, probe_data = fork_join_probe_data()
    calls = {"fork/join probe": ours_call(probe_objective, probe_data, 2),
             "ours LambdaRank NDCG, L=1,000": ours_call(objective, data, PROBE_QUERIES)}
    lgb_data = make_data(10, PROBE_LGB_ROWS // 10)
    # LightGBM's num_threads is process-wide (the last Booster created or
    # reset sets it for all), so one Booster is reset before each call.
    booster = lgb_booster(lgb_data, PROBE_LGB_ROWS // 10, "regression", None, 1)[0]
    times = {(name, t): [] for name in [*calls, "LightGBM regression iteration"]
             for t in THREADS}
    for t in THREADS:
        with kernel_threads(t):
            for call in calls.values():
                call()
        booster.reset_parameter({"num_threads": t})
        booster.update()
    for _ in range(rounds):
        for t in THREADS:
            with kernel_threads(t):
                for name, call in calls.items():
                    for _ in range(PROBE_CALLS if name == "fork/join probe" else 1):
                        start = time.perf_counter()
                        call()
                        times[(name, t)].append(time.perf_counter() - start)
            booster.reset_parameter({"num_threads": t})
            start = time.perf_counter()
            booster.update()
            times[("LightGBM regression iteration", t)].append(time.perf_counter() - start)
    return {
        "numba_threading_layer": numba.threading_layer(),
        "medians_s": {f"{name}|{t}": statistics.median(v) for (name, t), v in times.items()},
        "load_1min": os.getloadavg()[0],
    }


def thread_environments(rounds, say):
    """Run :func:`thread_probe` in a fresh process per environment (the
    variables are read when the threading runtimes start)."""
    out = []
    for label, extra in THREAD_ENVIRONMENTS:
        say(f"thread probe: {label}")
        env = {**os.environ, **extra}
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--thread-probe", str(rounds)],
            env=env, capture_output=True, text=True, timeout=600,
        )
        entry = {"environment": label, "variables": extra}
        try:
            entry.update(json.loads(proc.stdout.strip().splitlines()[-1]))
        except (IndexError, json.JSONDecodeError):
            entry["error"] = (proc.stderr or proc.stdout)[-2000:]
        out.append(entry)
    return out


def thread_environment_table(entries):
    names = ("fork/join probe", "ours LambdaRank NDCG, L=1,000", "LightGBM regression iteration")
    lines = [
        "| environment | numba layer | " + " | ".join(f"{n}: 1 thread / 2 threads" for n in names)
        + " | load |",
        "|---|---|" + "---|" * len(names) + "---|",
    ]
    for e in entries:
        if "error" in e:
            lines.append(f"| {e['environment']} | error | " + " | " * len(names))
            continue
        m = e["medians_s"]
        cells = [f"{_fmt_s(m[f'{n}|1'])} / {_fmt_s(m[f'{n}|2'])} "
                 f"({m[f'{n}|1'] / m[f'{n}|2']:.2f}x)" for n in names]
        lines.append(f"| {e['environment']} | {e['numba_threading_layer']} | "
                     + " | ".join(cells) + f" | {e['load_1min']:.2f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="50,000 documents per pass, smaller budgets, 3 single-call "
                             "rounds, no thread-environment probe (about 20 s)")
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help="output directory (default: benchmarks/results)")
    parser.add_argument("--thread-probe", type=int, metavar="ROUNDS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.thread_probe:
        print(json.dumps(thread_probe(args.thread_probe)))
        return
    command = "python benchmarks/bench_lambdas.py" + (" --quick" if args.quick else "") + (
        f" --out {args.out}" if args.out != str(DEFAULT_OUT) else "")
    run(quick=args.quick, out_dir=args.out, command=command)


if __name__ == "__main__":
    main()
