"""Ranking quality of sklearn-ranknet's estimators on real data, next to
LightGBM, XGBoost and a pointwise Ridge baseline.

Run it as a script::

    python benchmarks/bench_quality.py [--quick] [--seeds 5] [--out benchmarks/results]

or from Python::

    from benchmarks import bench_quality
    result = bench_quality.run(quick=True, out_dir="benchmarks/results")

What is measured
----------------
Data: the Yahoo! LTR sample beside the checkout (``../shared/data/yahoo-ltr-sample``,
see its README): train on ``rank.train`` (3,005 rows, 201 queries), evaluate on
``rank.test`` (768 rows, 50 queries). Loaded with ``load_letor(path,
n_features=300)`` and densified. Nothing is tuned on ``rank.test``: every model
runs with its library defaults (only seeds and thread counts are set).

Models, each fitted once per seed (``random_state=seed``, seeds 0..n-1):

* ``LambdaRank``: ``make_pipeline(StandardScaler(), LambdaRankRanker())``, the
  package defaults (one hidden layer of 64 ReLU units, 100 epochs);
* ``LambdaRank linear``: the same with ``hidden_layer_sizes=()``, a linear
  scoring function;
* ``RankNet`` and ``RankNet linear``: the same with ``RankNetRanker``;
* ``LightGBM``: ``LGBMRanker()`` (100 trees) with ``group=`` query sizes, rows
  already sorted by query in the file; ``verbose=-1`` only silences the log;
* ``XGBoost``: ``XGBRanker()`` (objective ``rank:ndcg``) with ``qid=``;
* ``Ridge``: ``make_pipeline(StandardScaler(), Ridge())`` regressing the
  labels, a pointwise baseline (deterministic).

Our pipelines get their query ids as ``pipe.fit(X, y, <step>__groups=qid)``
with metadata routing off (the step name is read from the pipeline).

Metrics on ``rank.test`` (``sklearn_ranknet.metrics``): NDCG@1/3/5/10 with gain
``2**rel - 1``, tied scores in input order (``ignore_ties=True``) and a query
with no relevant document scoring 1, as the reference figures in the data
README; NDCG@10 with ties averaged (``ignore_ties=False``, the package
default) as a check that ties do not matter; MAP over the whole list
(relevant = label > 0, ties in input order). Every figure is the mean ± sample
standard deviation (ddof=1) over the seeds.

Fit time: wall-clock seconds of the ``fit`` call (pipeline included), after
one untimed warm-up fit of every model (Numba compilation / cache loading is
not counted), inside ``threadpoolctl.threadpool_limits(1)`` (BLAS on one
thread), ``numba.set_num_threads(1)`` for the whole run (restored at the end)
plus ``n_jobs=1`` for our rankers, and ``n_jobs=1`` for LightGBM and XGBoost.
The global Numba setting matters: ``n_jobs`` only covers the training loop,
while the metric kernels and the per-query constants built when ``fit``
validates its data run on Numba's default thread count, and on a busy 2-core
machine each such parallel call was measured at ~30 ms instead of ~0.3 ms on
one thread. The machine is shared, so times are indicative; the 1-minute
load average is recorded.

Learning curves: test NDCG@10 against epoch for our four models. The ranker
is trained one epoch per ``partial_fit`` call on the scaled training data
(scaler fitted once on ``rank.train``, as in the pipeline) and ``rank.test``
is scored after every epoch. With a stochastic solver and no early stopping
this replays exactly the epochs of ``fit`` (same initialisation, same query
shuffles, same optimizer state); the benchmark checks that the curve's
predictions after ``n_iter_`` epochs equal those of the timed ``fit``. The
curve only *monitors* ``rank.test``; nothing is selected on it. It is drawn in
``quality_curve.png`` (mean over seeds, band = min..max) with the peers' final
test NDCG@10 as horizontal lines.

``--quick`` runs one seed and 60 curve epochs (the timed fits still use the
real defaults), in well under 30 s on an idle 2-core machine.

Outputs in ``--out``: ``quality.json`` (everything), ``quality.md`` (tables,
targets, environment, the command) and ``quality_curve.png``.
"""

import argparse
import importlib.util
import json
import os
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


DEFAULT_OUT = Path(__file__).resolve().parent / "results"
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "yahoo-ltr-sample"
N_FEATURES = 300
QUICK_CURVE_EPOCHS = 60
KS = (1, 3, 5, 10)
# README reference figures (NDCG@10, ignore_ties=True) for a sanity check.
README_NDCG10 = {"LightGBM": 0.736, "XGBoost": 0.746}

OURS = ("LambdaRank", "LambdaRank linear", "RankNet", "RankNet linear")
# Peers come with the bench extra; without one, its rows and targets are skipped.
PEER_MODULES = {"LightGBM": "lightgbm", "XGBoost": "xgboost"}
PEERS = tuple(p for p, module in PEER_MODULES.items() if importlib.util.find_spec(module))
MISSING_PEERS = tuple(p for p in PEER_MODULES if p not in PEERS)
BASELINES = ("Ridge",)
MODELS = OURS + PEERS + BASELINES

TARGETS = (
    # (our model, required margin over each peer)
    ("LambdaRank", 0.0),  # LambdaRank defaults >= both peers
    ("RankNet", -0.01),  # RankNet defaults within 0.01 of both peers
)


# --------------------------------------------------------------------------
# Data and models


def load_data(data_dir=DEFAULT_DATA):
    from sklearn_ranknet.datasets import load_letor

    data_dir = Path(data_dir)
    out = {}
    for part in ("train", "test"):
        X, y, qid = load_letor(data_dir / f"rank.{part}", n_features=N_FEATURES)
        out[part] = (X.toarray(), y, qid)
    return out


def make_model(name, seed):
    """The estimator for ``name``; ours and Ridge are pipelines."""
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_ranknet import LambdaRankRanker, RankNetRanker

    if name in OURS:
        cls = LambdaRankRanker if name.startswith("LambdaRank") else RankNetRanker
        kwargs = {"hidden_layer_sizes": ()} if name.endswith("linear") else {}
        return make_pipeline(StandardScaler(), cls(random_state=seed, n_jobs=1, **kwargs))
    if name == "LightGBM":
        import lightgbm

        return lightgbm.LGBMRanker(random_state=seed, n_jobs=1, verbose=-1)
    if name == "XGBoost":
        import xgboost

        return xgboost.XGBRanker(random_state=seed, n_jobs=1)
    if name == "Ridge":
        return make_pipeline(StandardScaler(), Ridge())
    raise ValueError(name)


def fit_model(name, model, X, y, qid):
    """Fit with each library's way of passing the queries."""
    if name in OURS:
        step = model.steps[-1][0]  # "lambdarankranker" / "ranknetranker"
        return model.fit(X, y, **{f"{step}__groups": qid})
    if name == "LightGBM":
        if np.any(np.diff(qid) < 0):
            raise ValueError("LightGBM needs rows sorted by query")
        _, sizes = np.unique(qid, return_counts=True)
        return model.fit(X, y, group=sizes)
    if name == "XGBoost":
        return model.fit(X, y, qid=qid)
    return model.fit(X, y)


def evaluate(y, scores, qid):
    from sklearn_ranknet.metrics import map_score, ndcg_score

    out = {f"ndcg@{k}": ndcg_score(y, scores, groups=qid, k=k, ignore_ties=True) for k in KS}
    out["ndcg@10 tie-avg"] = ndcg_score(y, scores, groups=qid, k=10, ignore_ties=False)
    out["map"] = map_score(y, scores, groups=qid, ignore_ties=True)
    return out


def effective_params(name, model):
    est = model.steps[-1][1] if hasattr(model, "steps") else model
    params = est.get_params()
    if name in ("LightGBM", "XGBoost"):  # only what was set
        params = {k: v for k, v in params.items() if v is not None}
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()
            if isinstance(v, (int, float, str, bool, tuple, list, type(None)))}


# --------------------------------------------------------------------------
# Learning curves


def learning_curve(name, seed, data, n_epochs):
    """Test (and train) NDCG@10 after each epoch, one ``partial_fit`` per epoch."""
    from sklearn.base import clone
    from sklearn.preprocessing import StandardScaler

    from sklearn_ranknet.metrics import ndcg_score

    Xtr, ytr, qtr = data["train"]
    Xte, yte, qte = data["test"]
    pipe = make_model(name, seed)
    scaler = StandardScaler().fit(Xtr)
    ranker = clone(pipe.steps[-1][1])
    Ztr, Zte = scaler.transform(Xtr), scaler.transform(Xte)
    test, train, test_scores = [], [], []
    for _ in range(n_epochs):
        ranker.partial_fit(Ztr, ytr, groups=qtr)
        s = ranker.predict(Zte)
        test_scores.append(s)
        test.append(ndcg_score(yte, s, groups=qte, k=10, ignore_ties=True))
        train.append(ndcg_score(ytr, ranker.predict(Ztr), groups=qtr, k=10, ignore_ties=True))
    return {"test_ndcg@10": test, "train_ndcg@10": train}, test_scores


def _run_models(data, n_seeds, quick, say):
    """Timed fits and test metrics of every model and seed, then the curves."""
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    Xtr, ytr, qtr = data["train"]
    Xte, yte, qte = data["test"]
    per_seed = {name: [] for name in MODELS}
    fit_times = {name: [] for name in MODELS}
    epochs = {}
    params = {}
    convergence = {name: 0 for name in OURS}
    final_scores = {}
    curves = {name: [] for name in OURS}
    curve_check = []
    with threadpool_limits(1):
        # Warm-up: Numba compilation / cache loading and library start-up are not timed.
        for name in MODELS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make_model(name, 0)
                if name in OURS:
                    model.steps[-1][1].set_params(max_iter=2)
                fit_model(name, model, Xtr, ytr, qtr)
        say("warm-up done")
        for seed in range(n_seeds):
            for name in MODELS:
                model = make_model(name, seed)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", ConvergenceWarning)
                    started = time.perf_counter()
                    fit_model(name, model, Xtr, ytr, qtr)
                    elapsed = time.perf_counter() - started
                if name in OURS:
                    convergence[name] += any(issubclass(w.category, ConvergenceWarning)
                                             for w in caught)
                    epochs.setdefault(name, []).append(int(model.steps[-1][1].n_iter_))
                scores = model.predict(Xte)
                final_scores[(name, seed)] = scores
                record = evaluate(yte, scores, qte)
                record["fit_s"] = elapsed
                per_seed[name].append(record)
                fit_times[name].append(elapsed)
                params.setdefault(name, effective_params(name, model))
            say(f"seed {seed}: " + ", ".join(
                f"{n} {per_seed[n][-1]['ndcg@10']:.4f}" for n in MODELS))
            for name in OURS:
                n_iter = epochs[name][-1]
                n_epochs = QUICK_CURVE_EPOCHS if quick else max(
                    n_iter, params[name]["max_iter"])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    curve, test_scores = learning_curve(name, seed, data, n_epochs)
                curves[name].append(curve)
                if n_iter <= n_epochs:
                    same = bool(np.allclose(test_scores[n_iter - 1], final_scores[(name, seed)],
                                            rtol=1e-9, atol=1e-9))
                    curve_check.append({"model": name, "seed": seed, "epoch": n_iter,
                                        "curve_equals_fit": same})
            say(f"seed {seed}: curves done")
    return per_seed, fit_times, epochs, params, convergence, curves, curve_check


# --------------------------------------------------------------------------
# Environment


def environment(command):
    env = _common.environment(command)
    env["threads"] = ("threadpool_limits(1) for BLAS/OpenMP; numba.set_num_threads(1) for the "
                      "whole run and n_jobs=1 for our rankers; n_jobs=1 for LightGBM and XGBoost")
    return env


# --------------------------------------------------------------------------
# Summaries and reports


def _mean_std(values):
    values = np.asarray(values, dtype=float)
    std = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    return float(values.mean()), std


def summarise(per_seed):
    """{model: {metric: {"mean", "std", "values"}}} from per-seed records."""
    summary = {}
    for name, runs in per_seed.items():
        keys = [k for k in runs[0] if isinstance(runs[0][k], (int, float))]
        summary[name] = {}
        for key in keys:
            values = [r[key] for r in runs]
            mean, std = _mean_std(values)
            summary[name][key] = {"mean": mean, "std": std, "values": values}
    return summary


def evaluate_targets(summary):
    out = []
    for ours, margin in TARGETS:
        if ours not in summary:
            continue
        ours_mean = summary[ours]["ndcg@10"]["mean"]
        for peer in PEERS:
            if peer not in summary:
                continue
            peer_mean = summary[peer]["ndcg@10"]["mean"]
            needed = peer_mean + margin
            gap = ours_mean - needed
            rule = (f"{ours} defaults >= {peer}" if margin == 0
                    else f"{ours} defaults within {-margin:.2f} of {peer}")
            met = gap >= 0
            seeds_met = sum(v >= needed for v in summary[ours]["ndcg@10"]["values"])
            verdict = (
                f"MET: {ours_mean:.4f} vs {peer} {peer_mean:.4f} (needed >= {needed:.4f}, "
                f"margin {gap:+.4f})" if met else
                f"MISSED by {-gap:.4f}: {ours_mean:.4f} vs {peer} {peer_mean:.4f} "
                f"(needed >= {needed:.4f})"
            )
            n = len(summary[ours]["ndcg@10"]["values"])
            out.append({"rule": rule, "ours": ours, "peer": peer, "ours_ndcg@10": ours_mean,
                        "peer_ndcg@10": peer_mean, "needed": needed, "gap": gap, "met": met,
                        "seeds_meeting": seeds_met, "n_seeds": n,
                        "verdict": f"{verdict}; {seeds_met}/{n} seeds individually meet it"})
    return out


def results_table(summary, fit_times, epochs):
    cols = [f"ndcg@{k}" for k in KS] + ["ndcg@10 tie-avg", "map"]
    head = ("| model | " + " | ".join(c.upper().replace("NDCG", "NDCG") for c in cols)
            + " | fit s (median) | epochs |")
    lines = [head, "|" + "---|" * (len(cols) + 3)]
    for name in MODELS:
        if name not in summary:
            continue
        cells = [f"{summary[name][c]['mean']:.4f} ± {summary[name][c]['std']:.4f}" for c in cols]
        ep = epochs.get(name)
        ep = "" if ep is None else f"{np.mean(ep):.0f}" if len(set(ep)) == 1 else \
            f"{np.mean(ep):.0f} ({min(ep)}..{max(ep)})"
        lines.append(f"| {name} | " + " | ".join(cells)
                     + f" | {np.median(fit_times[name]):.2f} | {ep} |")
    return "\n".join(lines)


def write_markdown(path, result):
    env = result["environment"]
    m = env["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v)
    lines = [
        "# Ranking quality on the Yahoo! LTR sample",
        "",
        f"- Date: {env['date']}",
        f"- Command: `{env['command']}`",
        f"- Machine: {m['cpu_model']}, {m['os_cpu_count']} cores (shared; 1-min load "
        f"{m['load_1min_at_start']:.2f} at start), {m['platform']}, Python {m['python']}",
        f"- Threads: {env['threads']}",
        f"- Versions: {versions}",
        f"- Git commit: {env['git_commit']}"
        + (" (package files modified in the working tree)" if env["package_tree_modified"]
           else ""),
        f"- Seeds: {result['seeds']} (mean ± sample std over seeds); curve epochs: "
        f"{result['curve_epochs']}; wall time {result['wall_time_s']:.0f} s",
        "",
        "Train on rank.train (3,005 rows, 201 queries), evaluate on rank.test (768 rows, 50 "
        "queries). NDCG gain 2^rel-1, a query without relevant document scores 1; NDCG@k and "
        "MAP with ties in input order, as the README reference figures; `tie-avg` averages "
        "over tied scores (package default). Every model with its library defaults (seed and "
        "threads only); ours inside `make_pipeline(StandardScaler(), ...)`.",
        "",
        result["tables"]["results"],
        "",
        "## Targets (test NDCG@10, mean over seeds)",
        "",
    ]
    lines += [f"- {t['rule']}: **{t['verdict']}**" for t in result["targets"]]
    lines += ["", "Peers against the README reference figures (NDCG@10): " + "; ".join(
        f"{k} {v['measured']:.4f} (README {v['readme']:.3f})"
        for k, v in result["readme_check"].items())]
    lines += ["", "## Learning curves", "",
              "![test NDCG@10 against epoch](quality_curve.png)", ""]
    lines += [result["tables"]["curve"], ""]
    lines += ["## Notes", ""] + [f"- {n}" for n in result["notes"]] + [""]
    Path(path).write_text("\n".join(lines))


def curve_table(curves, marks):
    lines = ["| model | " + " | ".join(f"epoch {e}" for e in marks) + " | best epoch (mean curve) |",
             "|" + "---|" * (len(marks) + 2)]
    for name, c in curves.items():
        mean = np.mean([r["test_ndcg@10"] for r in c], axis=0)
        cells = [f"{mean[e - 1]:.4f}" if e <= len(mean) else "" for e in marks]
        best = int(np.argmax(mean)) + 1
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {best} ({mean[best - 1]:.4f}) |")
    return "\n".join(lines)


def write_plot(path, curves, summary):
    try:
        import matplotlib
    except ImportError:  # plots need the bench extra; the tables do not
        print(f"matplotlib is not installed (pip install '.[bench]'): no {path}")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharex=True)
    colors = dict(zip(OURS, ("tab:blue", "tab:cyan", "tab:red", "tab:orange")))
    for ax, key, title in ((axes[0], "test_ndcg@10", "rank.test (held out, monitored only)"),
                           (axes[1], "train_ndcg@10", "rank.train")):
        for name, runs in curves.items():
            values = np.array([r[key] for r in runs])
            epochs = np.arange(1, values.shape[1] + 1)
            ax.plot(epochs, values.mean(0), color=colors[name], label=name, lw=1.5)
            if len(values) > 1:
                ax.fill_between(epochs, values.min(0), values.max(0), color=colors[name],
                                alpha=0.15, lw=0)
        if key == "test_ndcg@10":
            for peer, style in (("LightGBM", "--"), ("XGBoost", ":"), ("Ridge", "-.")):
                if peer in summary:
                    v = summary[peer]["ndcg@10"]["mean"]
                    ax.axhline(v, color="k" if peer != "Ridge" else "grey", ls=style, lw=1,
                               label=f"{peer} final ({v:.3f})")
        ax.set_title(f"NDCG@10 on {title}")
        ax.set_xlabel("epoch")
        ax.set_ylabel("NDCG@10 (ties in input order)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower right")
    n = len(next(iter(curves.values())))
    fig.suptitle(f"sklearn-ranknet defaults on the Yahoo LTR sample: mean over {n} seed(s), "
                 "band = min..max")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------
# Entry points


def run(quick=False, out_dir=DEFAULT_OUT, seeds=5, data_dir=DEFAULT_DATA, command=None):
    """Run the benchmark, print the tables, write quality.{json,md} and the plot.

    Parameters
    ----------
    quick : bool, default=False
        One seed and ``QUICK_CURVE_EPOCHS`` curve epochs.
    out_dir : str or Path or None, default="benchmarks/results"
        Where to write the files; ``None`` writes nothing.
    seeds : int, default=5
        Number of seeds (0..seeds-1); ``quick`` forces 1.
    data_dir : str or Path
        Folder holding rank.train / rank.test and their .query files.
    command : str, default=None
        The command line to record; by default the ``run(...)`` call.

    Returns
    -------
    result : dict
        Everything written to ``quality.json``.
    """
    import numba

    wall = time.perf_counter()
    n_seeds = 1 if quick else int(seeds)
    command = command or (f"bench_quality.run(quick={quick}, out_dir={str(out_dir)!r}, "
                          f"seeds={seeds})")
    env = environment(command)

    def say(message):
        print(f"[bench_quality {time.perf_counter() - wall:6.1f} s, load "
              f"{os.getloadavg()[0]:.2f}] {message}", flush=True)

    data = load_data(data_dir)
    Xtr, ytr, qtr = data["train"]
    Xte, yte, qte = data["test"]
    say(f"data: train {Xtr.shape} {len(np.unique(qtr))} queries, "
        f"test {Xte.shape} {len(np.unique(qte))} queries")

    numba_threads_before = numba.get_num_threads()
    numba.set_num_threads(1)  # also covers kernels outside the rankers' n_jobs (metrics)
    try:
        per_seed, fit_times, epochs, params, convergence, curves, curve_check = _run_models(
            data, n_seeds, quick, say)
    finally:
        numba.set_num_threads(numba_threads_before)

    summary = summarise(per_seed)
    targets = evaluate_targets(summary)
    for peer in MISSING_PEERS:
        print(f"{peer} is not installed (pip install '.[bench]'): its row and targets are skipped")
    readme_check = {p: {"measured": summary[p]["ndcg@10"]["mean"], "readme": README_NDCG10[p]}
                    for p in PEERS}
    n_epochs_curve = len(next(iter(curves.values()))[0]["test_ndcg@10"])
    marks = [e for e in (1, 5, 10, 20, 50, 100, 150, 200) if e <= n_epochs_curve]
    notes = [
        "Fit times are wall-clock medians over seeds on a shared 2-core machine; compare "
        "orders of magnitude, not small differences.",
        f"Curve check (partial_fit replay equals the timed fit after n_iter_ epochs): "
        + (f"{sum(c['curve_equals_fit'] for c in curve_check)}/{len(curve_check)} identical"
           if curve_check else "not applicable (curves shorter than the fits)"),
        "Our rankers hit max_iter without meeting the loss-based stopping rule in "
        + ", ".join(f"{n}: {convergence[n]}/{n_seeds}" for n in OURS) + " fits "
        "(ConvergenceWarning; expected with the defaults).",
        "LightGBM and XGBoost with default parameters are deterministic on this data: "
        "their seed does not change the result (std 0). Ridge is deterministic.",
    ]
    if quick:
        notes.append(f"--quick: 1 seed, curves cut at {QUICK_CURVE_EPOCHS} epochs; not "
                     "for drawing conclusions.")
    result = {
        "benchmark": "bench_quality",
        "environment": env,
        "quick": bool(quick),
        "seeds": list(range(n_seeds)),
        "curve_epochs": n_epochs_curve,
        "curve_method": "partial_fit one epoch at a time on StandardScaler(train)-scaled data; "
                        "rank.test and rank.train NDCG@10 (ties in input order) after each epoch",
        "data": {"dir": str(data_dir), "train": list(Xtr.shape), "test": list(Xte.shape),
                 "train_queries": int(len(np.unique(qtr))),
                 "test_queries": int(len(np.unique(qte)))},
        "models": {name: params.get(name) for name in MODELS},
        "summary": summary,
        "per_seed": per_seed,
        "epochs": epochs,
        "max_iter_reached": convergence,
        "targets": targets,
        "readme_check": readme_check,
        "curves": curves,
        "curve_check": curve_check,
        "notes": notes,
    }
    result["tables"] = {"results": results_table(summary, fit_times, epochs),
                        "curve": curve_table(curves, marks)}
    result["wall_time_s"] = time.perf_counter() - wall

    print()
    print(result["tables"]["results"])
    print()
    print("Targets (test NDCG@10, mean over seeds):")
    for t in targets:
        print(f"- {t['rule']}: {t['verdict']}")
    print()
    print("Test NDCG@10 by epoch (mean over seeds):")
    print(result["tables"]["curve"])
    for n in notes:
        print(f"- {n}")

    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / "quality.json.tmp"
        tmp.write_text(json.dumps(result, indent=2, default=_json_default) + "\n")
        os.replace(tmp, out / "quality.json")
        write_markdown(out / "quality.md", result)
        try:
            write_plot(out / "quality_curve.png", curves, summary)
        except Exception as exc:  # noqa: BLE001 - the plot is optional
            print(f"[bench_quality] no plot: {exc}", file=sys.stderr)
        print(f"\n[bench_quality] wrote {out / 'quality.json'}, quality.md, quality_curve.png "
              f"in {time.perf_counter() - wall:.1f} s", flush=True)
    return result


_json_default = _common.json_default


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"1 seed, {QUICK_CURVE_EPOCHS} curve epochs (< 30 s)")
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds (default 5)")
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help="output directory (default: benchmarks/results)")
    parser.add_argument("--data", default=str(DEFAULT_DATA),
                        help="folder with rank.train/rank.test (default: "
                             "../shared/data/yahoo-ltr-sample beside the checkout)")
    args = parser.parse_args(argv)
    command = "python " + " ".join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    run(quick=args.quick, out_dir=args.out, seeds=args.seeds, data_dir=args.data,
        command=command)


if __name__ == "__main__":
    main()
