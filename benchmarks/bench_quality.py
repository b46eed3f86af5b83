"""Quality: NDCG@10 and MAP on the Yahoo! LTR sample against LightGBM and XGBoost defaults.

Data: the sample beside the checkout (``../shared/data/yahoo-ltr-sample``, see its README):
train on ``rank.train`` (3,005 rows, 201 queries), evaluate on ``rank.test`` (768 rows, 50
queries), loaded with ``load_letor(path, n_features=300)`` and densified. Nothing is tuned
on ``rank.test``: every model runs with its library defaults (seed and threads only).

Models: ``make_pipeline(StandardScaler(), LambdaRankRanker(random_state=seed))`` and the same
with ``RankNetRanker``, seeds 0..4 (``--quick``: seed 0); ``LGBMRanker(verbose=-1)`` with
``group=`` query sizes and ``XGBRanker()`` with ``qid=`` (deterministic: one fit each). All on
one thread (``n_jobs=1``, BLAS on one thread); fit times are for information.

Metrics (``sklearn_ranknet.metrics``) on ``rank.test``: NDCG@10 with gain 2^rel - 1 and MAP
(relevant = label > 0) over the whole list, ties in input order and a query without relevant
document scoring 1, as the README's reference figures; mean and sample standard deviation over
the seeds. Targets: LambdaRank's mean NDCG@10 >= each peer's; RankNet's within 0.01 of each.
"""

import time
import warnings
from pathlib import Path

import numpy as np

from ._harness import threads

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "yahoo-ltr-sample"
TARGETS = {"LambdaRankRanker": 0.0, "RankNetRanker": -0.01}  # margin over each peer


def load_data(data_dir=DATA):
    from sklearn_ranknet.datasets import load_letor

    return {part: (lambda X, y, q: (X.toarray(), y, q))(
        *load_letor(Path(data_dir) / f"rank.{part}", n_features=300)) for part in ("train", "test")}


def ours(name, seed, **params):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import sklearn_ranknet

    return make_pipeline(StandardScaler(), getattr(sklearn_ranknet, name)(random_state=seed, **params))


def fit(model, X, y, qid):
    """Fit with each library's way of passing the queries."""
    if hasattr(model, "steps"):
        return model.fit(X, y, **{f"{model.steps[-1][0]}__groups": qid})
    if type(model).__name__ == "LGBMRanker":
        return model.fit(X, y, group=np.unique(qid, return_counts=True)[1])  # rows sorted by query
    return model.fit(X, y, qid=qid)


def evaluate(y, scores, qid):
    from sklearn_ranknet.metrics import map_score, ndcg_score

    return {"ndcg10": ndcg_score(y, scores, groups=qid, k=10, ignore_ties=True),
            "map": map_score(y, scores, groups=qid, ignore_ties=True)}


def run(h):
    if not DATA.is_dir():
        h.note(f"The Yahoo! LTR sample is not at {DATA}: nothing measured.")
        h.skipped.append("Yahoo! LTR sample not found")
        return
    h.quick_caveat = "quick run: one seed"
    data = load_data()
    (Xtr, ytr, qtr), (Xte, yte, qte) = data["train"], data["test"]
    lgb, xgb = h.peer("lightgbm"), h.peer("xgboost")
    seeds = range(1 if h.quick else 5)
    models = {name: [lambda seed=seed, name=name: ours(name, seed) for seed in seeds]
              for name in TARGETS}
    if lgb is not None:
        models["LGBMRanker"] = [lambda: lgb.LGBMRanker(n_jobs=1, verbose=-1)]
    if xgb is not None:
        models["XGBRanker"] = [lambda: xgb.XGBRanker(n_jobs=1)]
    rows = []
    with threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit(ours("LambdaRankRanker", 0, max_iter=1), Xtr, ytr, qtr)  # warm-up: Numba cache
        for name, makers in models.items():
            h.say(f"{name}: {len(makers)} fit(s)")
            runs = []
            for make in makers:
                model = make()
                t0 = time.perf_counter()
                fit(model, Xtr, ytr, qtr)
                runs.append({**evaluate(yte, model.predict(Xte), qte),
                             "fit_s": time.perf_counter() - t0})
            row = {"model": name, "fits": len(runs), "runs": runs,
                   "fit_s": float(np.median([r["fit_s"] for r in runs]))}
            for key in ("ndcg10", "map"):
                values = [r[key] for r in runs]
                row[key] = float(np.mean(values))
                row[key + "_sd"] = float(np.std(values, ddof=1)) if len(values) > 1 else None
            rows.append(row)
    h.table("rank.test, library defaults (mean over seeds, sample std)", rows, {
        "model": "model", "fits (seeds)": "fits", "NDCG@10": "ndcg10", "NDCG@10 sd": "ndcg10_sd",
        "MAP": "map", "MAP sd": "map_sd", "fit s (median)": "fit_s"})
    by_name = {r["model"]: r for r in rows}
    for name, margin in TARGETS.items():
        for peer in ("LGBMRanker", "XGBRanker"):
            what = f"{name}() NDCG@10 minus {peer}()'s"
            measured = by_name[name]["ndcg10"] - by_name[peer]["ndcg10"] if peer in by_name else None
            h.target(what, measured, margin, higher_is_better=True,
                     reason=f"{peer} not installed")

    def draw(ax):
        ax.barh([r["model"] for r in rows], [r["ndcg10"] for r in rows],
                xerr=[r["ndcg10_sd"] or 0 for r in rows])
        ax.set(xlim=(0.6, 0.8), xlabel="NDCG@10 on rank.test")
    h.plot(draw, size=(7, 3))
