"""Quality: NDCG@1/3/5/10 and MAP of the three rankers, bare, bagged and tuned, against LightGBM and XGBoost.

``python -m benchmarks --only quality`` (``--quick``: a smoke test, see below).

Data, each with a training and a test split:

- Yahoo: the Yahoo! LTR sample beside the checkout (``../shared/data/yahoo-ltr-sample``, see
  its README), ``load_letor(path, n_features=300)`` densified: fit on ``rank.train`` (3,005
  rows, 201 queries), score on ``rank.test`` (768 rows, 50 queries). Skipped with a note when
  the sample is absent.
- MSLR-shaped: ``make_ranking(n, n_features=136, n_informative=20, min_docs=20,
  max_docs=370)``, 500 training queries (~60,000 rows, ``random_state=0``) and an
  independent draw of 1,000 test queries (``random_state=1``) of the same problem
  (``--quick``: 150 and 300 queries).

Models, each fitted on the training split only and scored once on the test split:

- ``LambdaRankRanker()``, ``RankNetRanker()``, ``ListNetRanker()``: library defaults, raw
  features (the rankers scale their own inputs), only ``random_state=seed`` and
  ``n_jobs=1``; seeds 0..4;
- ``BaggingRanker(<each of them>, n_estimators=5, random_state=seed)``: seeds 0..4 on Yahoo,
  0..1 on the MSLR-shaped data;
- the peers' defaults, ``LGBMRanker(verbose=-1)`` and ``XGBRanker()`` (``n_jobs=1``,
  deterministic: one fit each);
- ``LambdaRankRanker`` and ``LGBMRanker`` tuned: ``GridSearchCV(estimator, grid,
  cv=GroupKFold(3), scoring=ndcg_scorer(10))`` fitted with ``groups=`` under metadata routing
  on the training split only, refit on the whole of it, one seed; the grids (8 settings
  each) are listed in the results. LightGBM takes query sizes of rows sorted by query, so it
  is tuned through a small subclass that takes per-row ``groups`` (``LGBMRankerByQuery``).

Everything runs on one thread (``threads(1)``, ``n_jobs=1`` on every model). Numba compiles
in a small untimed fit of each ranker first.

Metrics (``sklearn_ranknet.metrics``) on the test split: NDCG@1, @3, @5, @10 with gain
2^rel - 1 and MAP (relevant = label > 0) over the whole list, ties in input order, a query
without relevant document scoring 1; mean and sample standard deviation over the seeds. Every
row states its median fit time (for a tuned row: the whole search, refit included) and the
warnings its fits emitted (all counted, ``warnings.simplefilter("always")``).

Targets (on each data set unless said otherwise): ``LambdaRankRanker()``'s mean NDCG@10 on
Yahoo >= the best peer default's + 0.01; ``RankNetRanker()`` and ``ListNetRanker()`` >= the
best peer default; ``BaggingRanker(LambdaRankRanker(), n_estimators=5)`` >= the tuned
LightGBM; no warning from the default fits (bare, bagged and peers).

``--quick``: seed 0 only, bagging of ``RankNetRanker()`` (the fastest) on Yahoo only, no tuned rows,
150 / 300 MSLR-shaped queries; its figures are not the benchmark's.
"""

import functools
import time
import warnings
from pathlib import Path

import numpy as np

from ._harness import threads

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "yahoo-ltr-sample"
MSLR_SHAPE = dict(n_features=136, n_informative=20, min_docs=20, max_docs=370)
RANKERS = ("LambdaRankRanker", "RankNetRanker", "ListNetRanker")
METRICS = {"ndcg1": "NDCG@1", "ndcg3": "NDCG@3", "ndcg5": "NDCG@5", "ndcg10": "NDCG@10", "map": "MAP"}
GRIDS = {
    "LambdaRankRanker": {"learning_rate_init": [1e-3, 3e-3], "hidden_layer_sizes": [(64,), (128,)],
                         "alpha": [1.5, 15.0]},
    "LGBMRanker": {"num_leaves": [15, 31], "learning_rate": [0.05, 0.1], "n_estimators": [100, 300]},
}
# Seeds of the bare, the bagged and the tuned rows: full run, --quick.
SEEDS = {"Yahoo": ((5, 5, 1), (1, 1, 0)), "MSLR-shaped": ((5, 2, 1), (1, 0, 0))}
LAMBDARANK_MARGIN = 0.01  # over the best peer default, on Yahoo


# ---------------------------------------------------------------------------
# Data


def load_data(data_dir=DATA):
    from sklearn_ranknet.datasets import load_letor

    return {part: (lambda X, y, q: (X.toarray(), y, q))(
        *load_letor(Path(data_dir) / f"rank.{part}", n_features=300)) for part in ("train", "test")}


def mslr_shaped(quick):
    from sklearn_ranknet.datasets import make_ranking

    n_train, n_test = (150, 300) if quick else (500, 1000)
    return {"train": make_ranking(n_train, **MSLR_SHAPE, random_state=0),
            "test": make_ranking(n_test, **MSLR_SHAPE, random_state=1)}


def by_query(X, y, qid):
    """The rows sorted by query id (LightGBM and XGBoost want each query's rows together)."""
    order = np.argsort(qid, kind="stable")
    return X[order], y[order], qid[order]


# ---------------------------------------------------------------------------
# Models


def ours(name, seed, **params):
    import sklearn_ranknet

    return getattr(sklearn_ranknet, name)(random_state=seed, n_jobs=1, **params)


def bagged(name, seed):
    from sklearn_ranknet import BaggingRanker

    return BaggingRanker(ours(name, None), n_estimators=5, random_state=seed)


@functools.cache
def lgbm_by_query(lgb):
    """``LGBMRanker`` taking per-row query ids in ``fit``, requested through metadata
    routing, so that GridSearchCV can split, fit and score it like our rankers."""

    class LGBMRankerByQuery(lgb.LGBMRanker):
        __metadata_request__fit = {"groups": True}
        __metadata_request__score = {"groups": True}

        def fit(self, X, y, groups=None):
            X, y, groups = by_query(X, y, np.asarray(groups))
            return super().fit(X, y, group=np.unique(groups, return_counts=True)[1])

        def score(self, X, y, groups=None):
            from sklearn_ranknet.metrics import ndcg_score

            return ndcg_score(y, self.predict(X), groups=groups, k=10)

    return LGBMRankerByQuery


def tuned(estimator, grid):
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from sklearn_ranknet.metrics import ndcg_scorer

    return GridSearchCV(estimator, grid, cv=GroupKFold(3), scoring=ndcg_scorer(10), error_score="raise")


def fit(model, X, y, qid):
    """Fit with each library's way of passing the queries."""
    import sklearn
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    if isinstance(model, GridSearchCV):
        with sklearn.config_context(enable_metadata_routing=True):
            return model.fit(X, y, groups=qid)
    if isinstance(model, Pipeline):
        return model.fit(X, y, **{f"{model.steps[-1][0]}__groups": qid})
    if type(model).__name__ == "LGBMRanker":
        X, y, qid = by_query(X, y, qid)
        return model.fit(X, y, group=np.unique(qid, return_counts=True)[1])
    if type(model).__name__ == "XGBRanker":
        X, y, qid = by_query(X, y, qid)
        return model.fit(X, y, qid=qid)
    return model.fit(X, y, groups=qid)


def plan(h, seeds):
    """(label, kind, makers): one maker per fit of each row."""
    n_bare, n_bagged, n_tuned = seeds
    rows = [(f"{name}()", "bare", [functools.partial(ours, name, s) for s in range(n_bare)])
            for name in RANKERS]
    if n_bagged:
        # A smoke test (--quick) bags only the fastest ranker: the three bagged rows were 3/4
        # of its time (LambdaRankRanker's alone 57 s of 125), and all take one code path.
        rows += [(f"BaggingRanker({name}(), n_estimators=5)", "bagged",
                  [functools.partial(bagged, name, s) for s in range(n_bagged)])
                 for name in (("RankNetRanker",) if h.quick else RANKERS)]
    lgb, xgb = h.peer("lightgbm"), h.peer("xgboost")
    if lgb is not None:
        rows.append(("LGBMRanker()", "peer", [lambda: lgb.LGBMRanker(n_jobs=1, verbose=-1)]))
    if xgb is not None:
        rows.append(("XGBRanker()", "peer", [lambda: xgb.XGBRanker(n_jobs=1)]))
    if n_tuned:
        rows.append(("LambdaRankRanker() tuned", "tuned", [
            lambda s=s: tuned(ours("LambdaRankRanker", s), GRIDS["LambdaRankRanker"])
            for s in range(n_tuned)]))
        if lgb is not None:
            rows.append(("LGBMRanker() tuned", "tuned", [
                lambda: tuned(lgbm_by_query(lgb)(n_jobs=1, verbose=-1), GRIDS["LGBMRanker"])]))
    return rows


# ---------------------------------------------------------------------------
# Measuring


def evaluate(y, scores, qid):
    from sklearn_ranknet.metrics import map_score, ndcg_score

    common = dict(groups=qid, ignore_ties=True, empty_query_score=1.0)
    return {**{f"ndcg{k}": ndcg_score(y, scores, k=k, gain="exponential", **common) for k in (1, 3, 5, 10)},
            "map": map_score(y, scores, **common)}


def fit_and_score(make, train, test):
    """One fresh model fitted on ``train``, scored on ``test``: metrics, seconds, warnings."""
    model = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = time.perf_counter()
        fit(model, *train)
        seconds = time.perf_counter() - started
    X, y, qid = test
    run = {**evaluate(y, model.predict(X), qid), "fit_s": seconds,
           "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]}
    if hasattr(model, "best_params_"):
        run.update(best=model.best_params_, cv_ndcg10=model.best_score_, refit_s=model.refit_time_)
    return run


def summarize(label, kind, runs):
    row = {"model": label, "kind": kind, "fits": len(runs), "runs": runs,
           "fit_s": float(np.median([r["fit_s"] for r in runs])),
           "warnings": sum(len(r["warnings"]) for r in runs)}
    for key in METRICS:
        values = [r[key] for r in runs]
        row[key] = float(np.mean(values))
        row[key + "_sd"] = float(np.std(values, ddof=1)) if len(values) > 1 else None
    if kind == "tuned":
        best = runs[0]
        row["tuning"] = (f"{best['best']}, CV NDCG@10 {best['cv_ndcg10']:.4f}, "
                         f"refit {best['refit_s']:.3g} s")
    return row


def warm_up(train):
    """Numba compiles each ranker's kernels outside the timers."""
    X, y, qid = train
    few = np.isin(qid, np.unique(qid)[:20])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in RANKERS:
            ours(name, 0, max_iter=1).fit(X[few], y[few], groups=qid[few])


def measure(h, name, data, seeds):
    rows = []
    for label, kind, makers in plan(h, seeds):
        h.say(f"{name}: {label}, {len(makers)} fit(s)")
        rows.append(summarize(label, kind, [fit_and_score(make, data["train"], data["test"])
                                            for make in makers]))
    return rows


# ---------------------------------------------------------------------------
# Reporting


def cell(key):
    def text(row):
        sd = row.get(key + "_sd")
        return f"{row[key]:.4f}" + ("" if sd is None else f" ± {sd:.4f}")
    return text


def table(h, title, rows):
    h.table(title, rows, {
        "model": "model", "fits": "fits", **{label: cell(key) for key, label in METRICS.items()},
        "fit s (median)": "fit_s", "warnings": "warnings",
        "tuned: best setting": lambda r: r.get("tuning", "")})


def described(data):
    return {part: f"{len(np.unique(q)):,} queries, {len(y):,} rows"
            for part, (X, y, q) in data.items()}


def targets(h, name, rows):
    by = {r["model"]: r for r in rows}

    def named(label):
        r = by[label]
        return f"{label} (n={r['fits']}, fit {r['fit_s']:.3g} s)"

    def versus(label, others, margin):
        """``label``'s mean NDCG@10 minus the best of ``others`` (those that ran)."""
        ran = [o for o in others if o in by]
        if label not in by or not ran:
            missing = ", ".join(m for m in (label, *others) if m not in by)
            h.target(f"{name}: {label} NDCG@10 minus max({', '.join(others)})", None, margin,
                     higher_is_better=True, reason=f"{missing} not run (--quick, or peer not installed)")
            return
        h.target(f"{name}: {named(label)} NDCG@10 minus max({', '.join(map(named, ran))})",
                 by[label]["ndcg10"] - max(by[o]["ndcg10"] for o in ran), margin, higher_is_better=True)

    peers = ["LGBMRanker()", "XGBRanker()"]
    if name == "Yahoo":
        versus("LambdaRankRanker()", peers, LAMBDARANK_MARGIN)
    versus("RankNetRanker()", peers, 0.0)
    versus("ListNetRanker()", peers, 0.0)
    versus("BaggingRanker(LambdaRankRanker(), n_estimators=5)", ["LGBMRanker() tuned"], 0.0)
    defaults = [r for r in rows if r["kind"] != "tuned"]
    h.target(f"{name}: warnings from the default fits ({sum(r['fits'] for r in defaults)} fits: "
             f"bare, bagged, peers)", sum(r["warnings"] for r in defaults), 0)


def warning_note(results):
    seen = {}
    for name, rows in results.items():
        for r in rows:
            for run in r["runs"]:
                for message in run["warnings"]:
                    seen.setdefault(message, set()).add(f"{name} {r['model']}")
    if not seen:
        return "No fit emitted a warning."
    return "Warnings emitted by the fits:\n\n" + "\n".join(
        f"- {message} (in {', '.join(sorted(where))})" for message, where in seen.items())


def run(h):
    h.quick_caveat = "quick run: one seed, small MSLR-shaped sample, no tuning"
    sets = {}
    if DATA.is_dir():
        sets["Yahoo"] = load_data()
    else:
        h.note(f"The Yahoo! LTR sample is not at {DATA}: its rows are skipped.")
        h.skipped.append("Yahoo! LTR sample not found")
    sets["MSLR-shaped"] = mslr_shaped(h.quick)
    h.note("Protocol: every model is fitted on the training split alone and scored once on the "
           "test split; nothing is chosen on a test split. Tuned rows: GridSearchCV(estimator, grid, "
           "cv=GroupKFold(3), scoring=ndcg_scorer(10)) fitted with groups= under metadata routing "
           "on the training split, refit on all of it. Grids (8 settings each): "
           + "; ".join(f"`{name}`: `{grid}`" for name, grid in GRIDS.items()) + "."
           + (" Quick run: the tuned rows are skipped, and only RankNetRanker is bagged, on Yahoo only."
              if h.quick else ""))

    results = {}
    with threads(1):
        warm_up(next(iter(sets.values()))["train"])
        for name, data in sets.items():
            results[name] = measure(h, name, data, SEEDS[name][h.quick])
    for name, rows in results.items():
        size = described(sets[name])
        table(h, f"{name}: trained on {size['train']}, tested on {size['test']} "
                 f"(mean ± sample std over the seeds)", rows)
        targets(h, name, rows)
    h.note(warning_note(results))

    def draw(*axes):
        colors = {"bare": "C0", "bagged": "C1", "peer": "C2", "tuned": "C3"}
        for ax, (name, rows) in zip(axes, results.items()):
            values = [r["ndcg10"] for r in rows]
            labels = [r["model"].replace("BaggingRanker(", "Bagging(").replace(", n_estimators=5)", " x5)")
                      + f" ({r['fit_s']:.2g} s)" for r in rows]
            ax.barh(labels, values, xerr=[r["ndcg10_sd"] or 0 for r in rows],
                    color=[colors[r["kind"]] for r in rows])
            ax.invert_yaxis()
            ax.set(xlim=(min(values) - 0.03, max(values) + 0.02), title=name,
                   xlabel="NDCG@10 on the test split (fit s per fit)")
    h.plot(draw, ncols=len(results), size=(7 * len(results), 0.45 * max(map(len, results.values())) + 1.5))
