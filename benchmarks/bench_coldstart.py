"""Cold start: the Numba compilation a new user's first process pays.

A fresh Python process with an EMPTY Numba cache (``NUMBA_CACHE_DIR`` set to a new temporary
directory) runs a first use, timing each step; then a second fresh process does the same with
the cache the first one filled (warm cache: a user's second process). Compilation added =
cold minus warm, step by step and in total. Two first uses:

- ``make_ranking`` (the figure since 2026-11-26): import the package, make
  ``make_ranking(n_queries=30)``, fit ``RankNetRanker(max_iter=2)``, ``LambdaRankRanker(max_iter=2)``
  and ``ListNetRanker(max_iter=2)``, compute ``ndcg_score`` and ``map_score``;
- ``Yahoo sample`` (a script that reads its data first): the same after reading the Yahoo LTR
  sample's train and test files with ``load_letor`` (``make_ranking(n_queries=200)`` when the sample
  is not beside the checkout), the metrics on the test file.

Each runs with the background warm-up off (``SKLEARN_RANKNET_WARMUP=0``: every kernel compiled when
first called, as before 2026-12-02), as a thread only (``SKLEARN_RANKNET_WARMUP=thread``: ``import
sklearn_ranknet`` starts a thread that compiles the kernels of a first fit, the default of 2026-12-02)
and on (the default: the thread, and with an empty cache a helper process that compiles the far end
of the same list; ``sklearn_ranknet/_warmup.py``), side by side: the six pairs of one round run one
after the other, the median of 3 rounds (a pair is measured again when
the package's source files change meanwhile: the warm process would recompile). Besides the wall
times, each cold process records Numba's compile events: the compilation done in the process (all
threads, outermost compiles only; the helper process's own compilation is not counted there) and the
part done on the user's own thread. Time to result = the
process's wall time from the import to the metrics. Target: compilation added <= 5 s. ``--quick``
(a smoke test) runs warm processes on the package's usual cache only.
"""

import statistics
import tempfile

from ._harness import ROOT

STEPS = ("import", "make_ranking", "RankNetRanker fit", "LambdaRankRanker fit", "ListNetRanker fit",
         "metrics")
LOADING_STEPS = ("import", "load data", "RankNetRanker fit", "LambdaRankRanker fit", "ListNetRanker fit",
                 "metrics")
SCENARIOS = {"make_ranking": STEPS, "Yahoo sample": LOADING_STEPS}
YAHOO = ROOT.parent / "shared" / "data" / "yahoo-ltr-sample"
WARMUP = {"off": "0", "thread": "thread", "on": "1"}
TARGET_S = 5.0


def _compile_recorder():
    """A Numba event listener that keeps (thread, start/end, time) of every compile."""
    import threading
    import time

    from numba.core import event

    class Recorder(event.Listener):
        def __init__(self):
            self.events = []

        def on_start(self, _event):
            self.events.append((threading.get_ident(), 1, time.perf_counter()))

        def on_end(self, _event):
            self.events.append((threading.get_ident(), -1, time.perf_counter()))

        def seconds(self, thread=None):
            """Seconds spent in outermost compiles (of ``thread``, or all)."""
            depth, since, total = {}, {}, 0.0
            for ident, step, t in list(self.events):
                if thread is not None and ident != thread:
                    continue
                if step > 0 and depth.get(ident, 0) == 0:
                    since[ident] = t
                depth[ident] = depth.get(ident, 0) + step
                if step < 0 and depth[ident] == 0:
                    total += t - since[ident]
            return total

    recorder = Recorder()
    event.register("numba:compile", recorder)
    return recorder


def _first_use(data="make_ranking"):
    import threading
    import time
    import warnings

    t = {"start": time.perf_counter()}
    recorder = _compile_recorder()
    from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _warmup
    from sklearn_ranknet.datasets import load_letor, make_ranking
    from sklearn_ranknet.metrics import map_score, ndcg_score

    t["import"] = time.perf_counter()
    warmup_running = _warmup.running()
    if data == "make_ranking":
        X, y, q = make_ranking(n_queries=30, random_state=0)
        X_test, y_test, q_test = X, y, q
        steps = STEPS
    elif YAHOO.is_dir():
        X, y, q = load_letor(YAHOO / "rank.train")
        X_test, y_test, q_test = load_letor(YAHOO / "rank.test", n_features=X.shape[1])
        steps = LOADING_STEPS
    else:
        X, y, q = make_ranking(n_queries=200, random_state=0)
        X_test, y_test, q_test = make_ranking(n_queries=50, random_state=1)
        steps = LOADING_STEPS
    t[steps[1]] = time.perf_counter()
    warnings.simplefilter("ignore")  # ConvergenceWarning
    RankNetRanker(max_iter=2, random_state=0).fit(X, y, groups=q)
    t["RankNetRanker fit"] = time.perf_counter()
    model = LambdaRankRanker(max_iter=2, random_state=0).fit(X, y, groups=q)
    t["LambdaRankRanker fit"] = time.perf_counter()
    ListNetRanker(max_iter=2, random_state=0).fit(X, y, groups=q)
    t["ListNetRanker fit"] = time.perf_counter()
    s = model.predict(X_test)
    ndcg_score(y_test, s, groups=q_test, k=10), map_score(y_test, s, groups=q_test)
    t["metrics"] = time.perf_counter()
    times = [t["start"]] + [t[step] for step in steps]
    return {"steps": {step: b - a for step, a, b in zip(steps, times, times[1:])},
            "compile_s": recorder.seconds(), "compile_user_thread_s": recorder.seconds(threading.get_ident()),
            "warmup_running_after_import": warmup_running, "yahoo": YAHOO.is_dir()}


def first_use():
    """The steps of the make_ranking first use, timed (runs in a fresh process)."""
    return _first_use("make_ranking")["steps"]


def first_use_measured(data="make_ranking"):
    """A first use's steps, timed, and the compilation its process did."""
    return _first_use(data)


def _source_stamp():
    return max(path.stat().st_mtime for path in (ROOT / "sklearn_ranknet").rglob("*.py"))


def _pair(h, data, warmup):
    for _attempt in range(3):  # again if someone edits the package meanwhile
        stamp = _source_stamp()
        with tempfile.TemporaryDirectory() as cache:
            env = {"NUMBA_CACHE_DIR": cache, "SKLEARN_RANKNET_WARMUP": WARMUP[warmup]}
            pair = {state: h.fresh(first_use_measured, env=env, data=data) for state in ("cold", "warm")}
        if _source_stamp() == stamp:
            return pair
        h.say("the package's source changed during the pair: measured again")
    return pair


def run(h):
    configs = [(data, warmup) for data in SCENARIOS for warmup in WARMUP]
    runs = {config: [] for config in configs}
    for i in range(0 if h.quick else 3):
        for data, warmup in configs:
            pair = _pair(h, data, warmup)
            runs[data, warmup].append(pair)
            h.say(f"round {i + 1}, {data}, warm-up {warmup}: cold {sum(pair['cold']['steps'].values()):.1f} s, "
                  f"warm {sum(pair['warm']['steps'].values()):.1f} s, compiled {pair['cold']['compile_s']:.1f} s "
                  f"({pair['cold']['compile_user_thread_s']:.1f} s on the user's thread)")
    if h.quick:  # a smoke test: warm processes on the package's usual cache
        for data, warmup in configs:
            runs[data, warmup].append({"warm": h.fresh(first_use_measured, data=data,
                                                       env={"SKLEARN_RANKNET_WARMUP": WARMUP[warmup]})})

    def median(config, state, value):
        values = [value(pair[state]) for pair in runs[config] if state in pair]
        return statistics.median(values) if values else None

    summary = []
    for data, warmup in configs:
        total = lambda r: sum(r["steps"].values())  # noqa: E731
        row = {"first use": data, "warm-up": warmup, "cold_s": median((data, warmup), "cold", total),
               "warm_s": median((data, warmup), "warm", total),
               "compiled_s": median((data, warmup), "cold", lambda r: r["compile_s"]),
               "user_thread_s": median((data, warmup), "cold", lambda r: r["compile_user_thread_s"])}
        row["added_s"] = None if row["cold_s"] is None else row["cold_s"] - row["warm_s"]
        summary.append(row)
    for row in summary:
        off = next(r for r in summary if r["first use"] == row["first use"] and r["warm-up"] == "off")
        row["x_off"] = None if row["added_s"] is None else row["added_s"] / off["added_s"]
    h.table(f"A first process: time to result with an empty Numba cache (cold) and the cache it filled "
            f"(warm), the compilation added (cold - warm), and the compilation the cold process did, in "
            f"all and on the user's thread; median of {max(len(r) for r in runs.values())} (lower is better)",
            summary, {"first use": "first use", "warm-up": "warm-up", "cold s": "cold_s", "warm s": "warm_s",
                      "compilation added s": "added_s", "x warm-up off": "x_off", "compiled s": "compiled_s",
                      "compiled on the user's thread s": "user_thread_s"})
    for data, steps in SCENARIOS.items():
        rows = []
        for step in steps:
            row = {"step": step}
            for warmup in WARMUP:
                for state in ("cold", "warm"):
                    row[f"{warmup}_{state}"] = median((data, warmup), state, lambda r, s=step: r["steps"][s])
                row[f"{warmup}_added"] = (None if row[f"{warmup}_cold"] is None
                                          else row[f"{warmup}_cold"] - row[f"{warmup}_warm"])
            rows.append(row)
        h.table(f"{data}: the steps, seconds (lower is better)", rows, {
            "step": "step", **{f"{warmup}: {state}": f"{warmup}_{state}" for warmup in WARMUP
                               for state in ("cold", "warm", "added")}})
    if not YAHOO.is_dir():
        h.note("The Yahoo sample is not beside the checkout: its first use read make_ranking(n_queries=200).")
    h.data["runs"] = {f"{data}, warm-up {warmup}": pairs for (data, warmup), pairs in runs.items()}
    h.quick_caveat = "quick run: warm processes on the package's usual cache"
    reason = "quick run: the cold processes (~15 s of compiling each) run in the full run only"
    for row in summary:
        if row["warm-up"] == "on":
            h.target(f"compilation added to a new user's first process ({row['first use']}, warm-up on, "
                     "cold - warm)", row["added_s"], TARGET_S, unit=" s", reason=reason)

    def draw(ax):
        labels = [f"{r['first use']}\nwarm-up {r['warm-up']}" for r in summary]
        for i, key in enumerate(("warm_s", "added_s")):
            ax.barh(labels, [r[key] or 0.0 for r in summary],
                    left=[r["warm_s"] or 0.0 for r in summary] if key == "added_s" else None,
                    color=f"C{i}", label={"warm_s": "warm cache", "added_s": "compilation added"}[key])
        ax.axvline(TARGET_S, color="grey", ls=":")
        ax.set(xlabel="seconds to result in a new process")
        ax.legend(fontsize=7)
    h.plot(draw, size=(7, 3.2))
