"""Cold start: the Numba compilation a new user's first process pays.

A fresh Python process with an EMPTY Numba cache (``NUMBA_CACHE_DIR`` set to a new temporary
directory) imports the package, makes ``make_ranking(n_queries=30)``, fits
``RankNetRanker(max_iter=2)``, ``LambdaRankRanker(max_iter=2)`` and
``ListNetRanker(max_iter=2)`` (ListNet since 2026-11-26; the figures before left it out) and
computes ``ndcg_score`` and ``map_score``, timing each step; then a second fresh process does the same
with the cache the first one filled (warm cache: a user's second process). Compilation = cold
minus warm, step by step and in total; the median of 3 such pairs (``--quick``: 1), each with
its own empty directory (a pair is measured again when the package's source files change
meanwhile: the warm process would recompile). Target: compilation <= 5 s. ``--quick`` (a smoke
test) runs one process on the package's usual cache only: compiling from cold takes ~15 s.
"""

import statistics
import tempfile

from ._harness import ROOT

STEPS = ("import", "make_ranking", "RankNetRanker fit", "LambdaRankRanker fit", "ListNetRanker fit",
         "metrics")
TARGET_S = 5.0


def first_use():
    """The steps of a first use, timed (runs in a fresh process)."""
    import time
    import warnings

    t = {"start": time.perf_counter()}
    from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
    from sklearn_ranknet.datasets import make_ranking
    from sklearn_ranknet.metrics import map_score, ndcg_score

    t["import"] = time.perf_counter()
    X, y, q = make_ranking(n_queries=30, random_state=0)
    t["make_ranking"] = time.perf_counter()
    warnings.simplefilter("ignore")  # ConvergenceWarning
    RankNetRanker(max_iter=2, random_state=0).fit(X, y, groups=q)
    t["RankNetRanker fit"] = time.perf_counter()
    model = LambdaRankRanker(max_iter=2, random_state=0).fit(X, y, groups=q)
    t["LambdaRankRanker fit"] = time.perf_counter()
    ListNetRanker(max_iter=2, random_state=0).fit(X, y, groups=q)
    t["ListNetRanker fit"] = time.perf_counter()
    s = model.predict(X)
    ndcg_score(y, s, groups=q, k=10), map_score(y, s, groups=q)
    t["metrics"] = time.perf_counter()
    times = [t["start"]] + [t[step] for step in STEPS]
    return {step: b - a for step, a, b in zip(STEPS, times, times[1:])}


def _source_stamp():
    return max(path.stat().st_mtime for path in (ROOT / "sklearn_ranknet").rglob("*.py"))


def run(h):
    runs = {"cold": [], "warm": []}
    for i in range(0 if h.quick else 3):
        for _attempt in range(3):  # again if someone edits the package meanwhile
            stamp = _source_stamp()
            with tempfile.TemporaryDirectory() as cache:
                pair = {state: h.fresh(first_use, env={"NUMBA_CACHE_DIR": cache}) for state in runs}
            if _source_stamp() == stamp:
                break
            h.say("the package's source changed during the pair: measured again")
        h.say(f"pair {i + 1}: cold {sum(pair['cold'].values()):.1f} s, "
              f"warm {sum(pair['warm'].values()):.1f} s")
        for state in runs:
            runs[state].append(pair[state])
    if h.quick:  # a smoke test: one process on the package's usual (warm) cache
        runs = {"cold": [], "warm": [h.fresh(first_use)]}
    rows = []
    for step in STEPS + ("total",):
        med = {state: statistics.median(sum(r.values()) if step == "total" else r[step]
                                        for r in results) if results else None
               for state, results in runs.items()}
        rows.append({"step": step, "cold_s": med["cold"], "warm_s": med["warm"],
                     "compile_s": med["cold"] - med["warm"] if runs["cold"] else None})
    h.table("A new process: empty Numba cache (cold) and the cache it filled (warm), "
            f"median of {len(runs['warm'])}", rows, {
                "step": "step", "cold cache s": "cold_s", "warm cache s": "warm_s",
                "cold - warm s": "compile_s"})
    h.data["runs"] = runs
    h.quick_caveat = "quick run: one warm process on the package's usual cache"
    h.target("compilation in a new user's first process (cold - warm, total)",
             rows[-1]["compile_s"], TARGET_S, unit=" s",
             reason="quick run: the cold process (~15 s of compiling) runs in the full run only")

    def draw(ax):
        for x, state in enumerate(("cold", "warm")):
            left = 0.0
            for i, step in enumerate(STEPS):
                width = next(r[f"{state}_s"] for r in rows if r["step"] == step) or 0.0
                ax.barh(state + " cache", width, left=left, color=f"C{i}", label=step if x == 0 else None)
                left += width
        ax.set(xlabel="seconds in a new process")
        ax.legend(fontsize=7)
    h.plot(draw, size=(7, 2.8))
