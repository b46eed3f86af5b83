"""Model selection: default fits, a grid search and a bag against LightGBM, where users start.

``python -m benchmarks --only selection`` (``--quick``: a smoke test, see below).

What users run is many fits on modest data: a default fit, a search, a bag. Each row is
measured side by side with LightGBM in the same run, on this machine, with every library at
its defaults (our rankers' ``n_jobs=None``: the kernels on one thread, BLAS on its own;
LightGBM on every core), after a warm-up that compiles our kernels.

1. **Default fits.** ``LambdaRankRanker()``, ``RankNetRanker()``, ``ListNetRanker()``
   (``random_state=0``) and ``LGBMRanker(verbose=-1)``, each fitted on a training split and
   scored once on a test split (NDCG@10, gain 2^rel - 1, ties in input order, a query without
   a relevant document scoring 1). Fit time: the median of 3 fits (1 for the largest data).
   Data:

   - Yahoo: the Yahoo! LTR sample beside the checkout (``rank.train`` / ``rank.test``);
   - LETOR-form: the same queries, cut to the 46 features that vary in the most training
     queries and min-max scaled within each query, as LETOR 4.0 ships its 46 features (a
     stand-in: no LETOR set is available here);
   - MSLR-shaped ``make_ranking(n, n_features=136, n_informative=20, min_docs=20,
     max_docs=370)`` with 50, 500 and 3,000 training queries (``random_state=0``) and an
     independent draw of 1,000 test queries (``random_state=1``).
2. **A search**, on Yahoo: ``GridSearchCV(LambdaRankRanker(random_state=0), {"alpha": [1, 5,
   20, 50], "hidden_layer_sizes": [(64,), (128,)]}, cv=GroupKFold(3), scoring=ndcg_scorer(10))``
   under metadata routing, refit included, and ``LambdaRankRankerCV`` over the same grid, folds,
   scorer and ``random_state`` (the settings of a fold trained in one pass), against LightGBM's
   8 settings (``num_leaves`` 15,
   31, 63, 127 x ``learning_rate`` 0.05, 0.1) x the same 3 folds in a plain loop, then a
   refit of its best: wall time of the whole search, and the test NDCG@10 of the refit model.
3. **A bag**, on Yahoo: ``BaggingRanker(LambdaRankRanker(), n_estimators=5)`` against one
   ``LambdaRankRanker()``.
4. **A new user's first process**: the cold-start suite's steps (import, a short fit of each
   ranker, NDCG and MAP) in a fresh process with an empty Numba cache, then in one that
   reuses it; the compilation is the difference.

``--quick``: MSLR-shaped data of 20 training and 100 test queries in place of every data set,
``max_iter=5`` everywhere, one fit per row, a 2 x 2 grid over 2 folds, a bag of 2, no first
process; its figures are not the benchmark's.
"""

import time
import warnings

import numpy as np

from .bench_coldstart import TARGET_S as COMPILE_TARGET_S
from .bench_coldstart import first_use
from .bench_quality import DATA, MSLR_SHAPE, by_query, evaluate, load_data

RANKERS = ("LambdaRankRanker", "RankNetRanker", "ListNetRanker")
SIZES = (50, 500, 3000)
GRID = {"alpha": [1.0, 5.0, 20.0, 50.0], "hidden_layer_sizes": [(64,), (128,)]}
LGBM_GRID = {"num_leaves": [15, 31, 63, 127], "learning_rate": [0.05, 0.1]}
QUICK_GRID = {"alpha": [1.0, 5.0], "hidden_layer_sizes": [(8,), (16,)]}
QUICK_LGBM_GRID = {"num_leaves": [7, 15], "learning_rate": [0.1]}
LETOR_FEATURES = 46


# ---------------------------------------------------------------------------
# Data


def letor_form(yahoo):
    """The Yahoo queries as LETOR 4.0 ships its features: the 46 columns that
    vary within the most training queries, min-max scaled within each query."""
    X, y, qid = yahoo["train"]
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    varying = np.zeros(X.shape[1])
    for a, b in zip(starts, np.r_[starts[1:], len(qid)]):
        varying += X[a:b].max(axis=0) > X[a:b].min(axis=0)
    columns = np.sort(np.argsort(-varying, kind="stable")[:LETOR_FEATURES])

    def scaled(X, qid):
        X = X[:, columns].copy()
        for q in np.unique(qid):
            rows = qid == q
            low, high = X[rows].min(axis=0), X[rows].max(axis=0)
            X[rows] = (X[rows] - low) / np.where(high > low, high - low, 1.0)
        return X

    return {part: (scaled(X, q), y, q) for part, (X, y, q) in yahoo.items()}


def mslr_shaped(n_train, n_test):
    from sklearn_ranknet.datasets import make_ranking

    return {"train": make_ranking(n_train, **MSLR_SHAPE, random_state=0),
            "test": make_ranking(n_test, **MSLR_SHAPE, random_state=1)}


def data_sets(h):
    if h.quick:
        return {"MSLR-shaped, 20 queries": mslr_shaped(20, 100)}
    sets = {}
    if DATA.is_dir():
        yahoo = load_data()
        sets["Yahoo"] = yahoo
        sets["LETOR-form (Yahoo, 46 features)"] = letor_form(yahoo)
    else:
        h.note(f"The Yahoo! LTR sample is not at {DATA}: its rows are skipped.")
        h.skipped.append("Yahoo! LTR sample not found")
    for n in SIZES:
        sets[f"MSLR-shaped, {n:,} queries"] = mslr_shaped(n, 1000)
    return sets


# ---------------------------------------------------------------------------
# Fitting


def ours(name, **params):
    import sklearn_ranknet

    return getattr(sklearn_ranknet, name)(random_state=0, **params)


def lgbm_fit(lgb, X, y, qid, **params):
    X, y, qid = by_query(X, y, qid)
    model = lgb.LGBMRanker(verbose=-1, **params)
    return model.fit(X, y, group=np.unique(qid, return_counts=True)[1])


def timed(fit):
    """(the fitted model, its fit's wall seconds, the warnings it gave)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = time.perf_counter()
        model = fit()
        seconds = time.perf_counter() - started
    return model, seconds, [f"{w.category.__name__}: {w.message}" for w in caught]


def test_ndcg(model, test):
    X, y, qid = test
    return evaluate(y, model.predict(X), qid)["ndcg10"]


def default_fits(h, lgb, name, data, quick_params):
    train, test = data["train"], data["test"]
    n_fits = 1 if h.quick or len(train[1]) > 100_000 else 3
    makers = {f"{ranker}()": (lambda ranker=ranker: ours(ranker, **quick_params).fit(
        train[0], train[1], groups=train[2])) for ranker in RANKERS}
    if lgb is not None:
        makers["LGBMRanker()"] = lambda: lgbm_fit(lgb, *train, **({"n_estimators": 5} if h.quick else {}))
    rows = []
    for label, make in makers.items():
        h.say(f"{name}: {label}, {n_fits} fit(s)")
        fits = [timed(make) for _ in range(n_fits)]
        rows.append({"data": name, "model": label, "rows": len(train[1]), "fits": n_fits,
                     "fit_s": float(np.median([s for _, s, _ in fits])),
                     "ndcg10": test_ndcg(fits[0][0], test), "warnings": sum(len(w) for *_, w in fits)})
    peer = next((r for r in rows if r["model"] == "LGBMRanker()"), None)
    for r in rows:
        r["x_lgbm"] = None if peer is None else r["fit_s"] / peer["fit_s"]
        r["ndcg10_minus_lgbm"] = None if peer is None else r["ndcg10"] - peer["ndcg10"]
    return rows


def our_search(data, grid, cv, quick_params):
    import sklearn
    from sklearn.model_selection import GridSearchCV

    from sklearn_ranknet.metrics import ndcg_scorer

    X, y, qid = data["train"]
    search = GridSearchCV(ours("LambdaRankRanker", **quick_params), grid, cv=cv, scoring=ndcg_scorer(10))
    with sklearn.config_context(enable_metadata_routing=True):
        return search.fit(X, y, groups=qid)


def our_cv_search(data, grid, cv, quick_params):
    from sklearn_ranknet import LambdaRankRankerCV
    from sklearn_ranknet.metrics import ndcg_scorer

    X, y, qid = data["train"]
    search = LambdaRankRankerCV(grid, cv=cv, scoring=ndcg_scorer(10), random_state=0, **quick_params)
    return search.fit(X, y, groups=qid)


def lgbm_search(lgb, data, grid, cv, quick_params):
    """LightGBM's search as a user writes it: a plain loop over the settings
    and the same folds, then a refit of the best on all the training rows.
    Returns the refit model, the best setting and its CV NDCG@10."""
    from sklearn.model_selection import ParameterGrid

    X, y, qid = data["train"]
    folds = list(cv.split(X, y, groups=qid))
    best, best_score = None, -np.inf
    for params in ParameterGrid(grid):
        scores = []
        for fit_rows, val_rows in folds:
            model = lgbm_fit(lgb, X[fit_rows], y[fit_rows], qid[fit_rows], **params, **quick_params)
            scores.append(test_ndcg(model, (X[val_rows], y[val_rows], qid[val_rows])))
        if np.mean(scores) > best_score:
            best, best_score = params, float(np.mean(scores))
    return lgbm_fit(lgb, X, y, qid, **best, **quick_params), best, best_score


def searches(h, lgb, name, data, quick_params):
    from sklearn.model_selection import GroupKFold, ParameterGrid

    cv = GroupKFold(2 if h.quick else 3)
    grid, lgbm_grid = (QUICK_GRID, QUICK_LGBM_GRID) if h.quick else (GRID, LGBM_GRID)
    label = f"{len(ParameterGrid(grid))} settings x {cv.get_n_splits()} folds"
    rows = []
    h.say(f"{name}: GridSearchCV(LambdaRankRanker()), {label}")
    search, seconds, caught = timed(lambda: our_search(data, grid, cv, quick_params))
    rows.append({"data": name, "search": f"GridSearchCV(LambdaRankRanker()), {label}", "wall_s": seconds,
                 "best": str(search.best_params_), "cv_ndcg10": float(search.best_score_),
                 "ndcg10": test_ndcg(search.best_estimator_, data["test"]), "warnings": len(caught)})
    h.say(f"{name}: LambdaRankRankerCV(), {label}")
    search, seconds, caught = timed(lambda: our_cv_search(data, grid, cv, quick_params))
    rows.append({"data": name, "search": f"LambdaRankRankerCV(), {label}", "wall_s": seconds,
                 "best": str(search.best_params_), "cv_ndcg10": float(search.best_score_),
                 "ndcg10": test_ndcg(search, data["test"]), "warnings": len(caught)})
    if lgb is not None:
        h.say(f"{name}: LightGBM's loop, {label}")
        lgbm_quick = {"n_estimators": 5} if h.quick else {}
        (model, best, cv_score), seconds, caught = timed(lambda: lgbm_search(lgb, data, lgbm_grid, cv, lgbm_quick))
        rows.append({"data": name, "search": f"LGBMRanker() loop, {label}", "wall_s": seconds,
                     "best": str(best), "cv_ndcg10": cv_score, "ndcg10": test_ndcg(model, data["test"]),
                     "warnings": len(caught)})
    for r in rows:
        r["x_lgbm"] = r["wall_s"] / rows[-1]["wall_s"] if lgb is not None else None
    return rows


def bag(h, name, data, quick_params):
    from sklearn_ranknet import BaggingRanker

    X, y, qid = data["train"]
    n = 2 if h.quick else 5
    h.say(f"{name}: one LambdaRankRanker(), then a bag of {n}")
    one, one_s, _ = timed(lambda: ours("LambdaRankRanker", **quick_params).fit(X, y, groups=qid))
    bagged, bag_s, _ = timed(lambda: BaggingRanker(ours("LambdaRankRanker", **quick_params), n_estimators=n,
                                                   random_state=0).fit(X, y, groups=qid))
    return [{"data": name, "model": "LambdaRankRanker()", "fit_s": one_s, "x_one": 1.0,
             "ndcg10": test_ndcg(one, data["test"])},
            {"data": name, "model": f"BaggingRanker(LambdaRankRanker(), n_estimators={n})", "fit_s": bag_s,
             "x_one": bag_s / one_s, "ndcg10": test_ndcg(bagged, data["test"])}]


def warm_up(data):
    """Numba compiles each ranker's kernels outside the timers."""
    X, y, qid = data["train"]
    few = np.isin(qid, np.unique(qid)[:10])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in RANKERS:
            ours(name, max_iter=1).fit(X[few], y[few], groups=qid[few])


# ---------------------------------------------------------------------------
# The suite


def run(h):
    import tempfile

    h.quick_caveat = "quick run: 20 training queries, max_iter=5, one fit per row"
    lgb = h.peer("lightgbm")
    quick_params = {"max_iter": 5} if h.quick else {}
    sets = data_sets(h)
    warm_up(next(iter(sets.values())))
    fits = [row for name, data in sets.items() for row in default_fits(h, lgb, name, data, quick_params)]
    search_set = "Yahoo" if "Yahoo" in sets else next(iter(sets))
    search_rows = searches(h, lgb, search_set, sets[search_set], quick_params)
    bag_rows = bag(h, search_set, sets[search_set], quick_params)
    first = None
    if not h.quick:
        h.say("a new user's first process: empty Numba cache, then the cache it filled")
        with tempfile.TemporaryDirectory() as cache:
            cold = h.fresh(first_use, env={"NUMBA_CACHE_DIR": cache})
            warm = h.fresh(first_use, env={"NUMBA_CACHE_DIR": cache})
        first = {"cold_s": sum(cold.values()), "warm_s": sum(warm.values())}
        first["compile_s"] = first["cold_s"] - first["warm_s"]

    h.table("Default fits: median wall seconds of the fit, test NDCG@10 (fit time: lower is better; "
            "NDCG: higher is better)", fits, {
                "data": "data", "training rows": "rows", "model": "model", "fits": "fits",
                "fit s": "fit_s", "x LightGBM's fit": "x_lgbm", "test NDCG@10": "ndcg10",
                "minus LightGBM's": "ndcg10_minus_lgbm", "warnings": "warnings"})
    h.table("A search: wall seconds of the whole search, refit included (lower is better); the refit "
            "model's test NDCG@10 (higher is better)", search_rows, {
                "data": "data", "search": "search", "wall s": "wall_s", "x LightGBM's loop": "x_lgbm",
                "best setting": "best", "CV NDCG@10": "cv_ndcg10", "test NDCG@10": "ndcg10",
                "warnings": "warnings"})
    h.table("A bag against one member: wall seconds of the fit (lower is better), test NDCG@10 "
            "(higher is better)", bag_rows, {
                "data": "data", "model": "model", "fit s": "fit_s", "x one member": "x_one",
                "test NDCG@10": "ndcg10"})
    if first is not None:
        h.table("A new user's first process (import, a short fit of each ranker, NDCG and MAP): "
                "seconds (lower is better)", [first], {
                    "empty cache s": "cold_s", "filled cache s": "warm_s", "compilation s": "compile_s"})
    h.data.update({"fits": fits, "searches": search_rows, "bag": bag_rows, "first_process": first})

    for r in fits:
        if r["model"] != "LGBMRanker()" and r["x_lgbm"] is not None:
            h.target(f"{r['data']}: {r['model']} fit / LightGBM's", r["x_lgbm"], 1.0, unit="x")
            h.target(f"{r['data']}: {r['model']} test NDCG@10 minus LightGBM's", r["ndcg10_minus_lgbm"], 0.0,
                     higher_is_better=True)
    for r in search_rows[:2]:  # GridSearchCV and the CV ranker
        if r["x_lgbm"] is not None:
            h.target(f"{r['data']}: {r['search']} / LightGBM's loop", r["x_lgbm"], 1.0, unit="x")
    h.target(f"{bag_rows[1]['model']} / one member", bag_rows[1]["x_one"], 2.0, unit="x")
    if first is not None:
        h.target("compilation in a new user's first process", first["compile_s"], COMPILE_TARGET_S, unit=" s")

    def draw(ax):
        for name in dict.fromkeys(r["data"] for r in fits):
            mine = [r for r in fits if r["data"] == name and r["x_lgbm"] is not None and r["model"] != "LGBMRanker()"]
            ax.plot([r["model"] for r in mine], [r["x_lgbm"] for r in mine], "o-", label=name)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set(yscale="log", ylabel="fit time / LightGBM's (lower is better)")
        ax.legend(fontsize=7)
    h.plot(draw, size=(7.0, 4.0))
