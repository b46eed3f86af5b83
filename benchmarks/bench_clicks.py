"""Clicks: rankers trained on simulated click logs, raw and position-debiased, against LightGBM's and XGBoost's debiased LambdaMART.

``python -m benchmarks --only clicks`` (``--quick``: a smoke test, see below).

Data: the Yahoo! LTR sample beside the checkout (``../shared/data/yahoo-ltr-sample``, see its
README; the suite is skipped with a note when it is absent), ``load_letor(path,
n_features=300)`` densified. Clicks are simulated on ``rank.train`` (201 queries); every model
is scored once on the **true labels** of ``rank.test`` (50 queries).

For each seed (0, 1, 2):

- the logging ranker: ``LambdaRankRanker(random_state=seed)`` fitted on the labels of 5 % of
  the training queries (10 queries, drawn with the seed): a weak ranker;
- its click log: ``make_clicks(y, groups, logger scores, n_sessions=..., click_model=...,
  eta=..., max_label=4, random_state=seed)`` on the training queries, each session showing
  the logger's top 10 (no randomization, ``temperature=0``), in four settings: the
  position-based model at eta = 1 with 10 and with 100 sessions per query, at eta = 2 with
  100, and the cascade model with 100.

Models, fitted on the click log (``X[log.rows]``, ``log.clicks``, the sessions as query ids):

- ``raw``: each ranker's defaults on the clicks, ``fit(X, clicks, sessions)``;
- ``debiased``: the same with ``positions=log.positions``;
- ``LambdaRankRanker true propensities``: the same with the truth given,
  ``propensities=log.propensities`` (no estimate): what the correction itself can do, so that
  the estimate's share of a miss can be told from the correction's;
- ``LightGBM position``: ``lgb.train({"objective": "lambdarank", "verbose": -1,
  "num_threads": 1, "seed": seed}, lgb.Dataset(X, clicks, group=session sizes,
  position=positions - 1), num_boost_round=100)``, LightGBM's own position-bias model
  (``LGBMRanker.fit`` does not take ``position``); ``LightGBM raw`` without ``position``;
- ``XGBoost unbiased``: ``XGBRanker(lambdarank_unbiased=True, n_jobs=1, random_state=seed)``
  on the sessions as ``qid`` (the log is ordered by session, then rank, as XGBoost reads
  positions);
- ``ceiling``: each ranker's defaults on the true labels of all training rows (the documents
  the logger never showed included).

Metrics on the test split, true labels: NDCG@10 (gain 2^rel - 1) and ERR@10 (max_label 4),
means over the seeds. "Gap closed" = (debiased - raw) / (ceiling - raw) of the means. The
propensity estimate of the debiased ``LambdaRankRanker`` is compared with the truth
(``log.propensities``, relative to rank 1): the largest ``|estimate / truth - 1|`` at ranks
2-10, worst seed, beside the clicks at each rank (any estimate of a rank's propensity counts
them: its relative noise is at least ``1 / sqrt(clicks)``). Every model runs on one thread
(``threads(1)``).

Targets, in each position-based setting with 100 sessions (the cascade is reported, its
examination is not a function of the rank): debiased ``LambdaRankRanker`` NDCG@10 >= both
peers' debiased models'; gap closed >= 0.5; propensities at ranks 2-10 within 20 % of the
truth.

``--quick``: seed 0, one setting (eta = 1, 10 sessions, held to the targets), ``LambdaRankRanker``
only; its figures are not the benchmark's.
"""

import time
from pathlib import Path

import numpy as np

from ._harness import threads

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "yahoo-ltr-sample"
SETTINGS = (
    {"name": "PBM eta=1, 10 sessions", "click_model": "position_based", "eta": 1.0, "n_sessions": 10},
    {"name": "PBM eta=1, 100 sessions", "click_model": "position_based", "eta": 1.0, "n_sessions": 100},
    {"name": "PBM eta=2, 100 sessions", "click_model": "position_based", "eta": 2.0, "n_sessions": 100},
    {"name": "cascade, 100 sessions", "click_model": "cascade", "eta": 1.0, "n_sessions": 100},
)
RANKERS = ("LambdaRankRanker", "ListNetRanker", "RankNetRanker")
LOGGER_SHARE = 0.05
TARGET_GAP = 0.5
TARGET_PROPENSITY_ERROR = 0.2


def load_data(data_dir=DATA):
    from sklearn_ranknet.datasets import load_letor

    return {part: (lambda X, y, q: (X.toarray(), y, q))(
        *load_letor(Path(data_dir) / f"rank.{part}", n_features=300)) for part in ("train", "test")}


def click_log(train, setting, seed):
    """The weak logger and the click log it collects on the training queries."""
    from sklearn_ranknet import LambdaRankRanker
    from sklearn_ranknet.datasets import make_clicks

    X, y, groups = train
    queries = np.unique(groups)
    rng = np.random.default_rng(seed)
    few = np.isin(groups, rng.choice(queries, max(1, round(LOGGER_SHARE * len(queries))), replace=False))
    logger = LambdaRankRanker(random_state=seed, n_jobs=1).fit(X[few], y[few], groups[few])
    log = make_clicks(y, groups, logger.predict(X), n_sessions=setting["n_sessions"],
                      click_model=setting["click_model"], eta=setting["eta"], max_label=4, random_state=seed)
    return logger, log


def evaluate(test, scores):
    from sklearn_ranknet.metrics import err_score, ndcg_score

    _, y, groups = test
    return {"ndcg10": ndcg_score(y, scores, groups=groups, k=10),
            "err10": err_score(y, scores, groups=groups, k=10, max_label=4)}


def timed(fit):
    start = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - start


def models(h, rankers, log, X_log, seed):
    """(label, fit) pairs on the click log; each fit returns a model with ``predict``."""
    import sklearn_ranknet

    made = []
    for name in rankers:
        ranker = getattr(sklearn_ranknet, name)
        made.append((f"{name} raw", lambda r=ranker: r(random_state=seed, n_jobs=1).fit(X_log, log.clicks, log.sessions)))
        made.append((f"{name} debiased", lambda r=ranker: r(random_state=seed, n_jobs=1).fit(
            X_log, log.clicks, log.sessions, positions=log.positions)))
        if name == "LambdaRankRanker":  # the estimate's share of what debiasing can do here
            made.append((f"{name} true propensities", lambda r=ranker: r(random_state=seed, n_jobs=1).fit(
                X_log, log.clicks, log.sessions, positions=log.positions, propensities=log.propensities)))
    lgb = h.peer("lightgbm")
    if lgb is not None:
        sizes = np.bincount(log.sessions)
        params = {"objective": "lambdarank", "verbose": -1, "num_threads": 1, "seed": seed}
        made.append(("LightGBM raw", lambda: lgb.train(params, lgb.Dataset(X_log, log.clicks, group=sizes),
                                                       num_boost_round=100)))
        made.append(("LightGBM position", lambda: lgb.train(
            params, lgb.Dataset(X_log, log.clicks, group=sizes, position=log.positions - 1), num_boost_round=100)))
    xgb = h.peer("xgboost")
    if xgb is not None:
        made.append(("XGBoost unbiased", lambda: xgb.XGBRanker(
            lambdarank_unbiased=True, n_jobs=1, random_state=seed).fit(X_log, log.clicks, qid=log.sessions)))
    return made


def run_setting(h, data, setting, seeds, rankers):
    import sklearn_ranknet

    rows = {}
    worst_error = 0.0
    estimates = []
    clicks_by_rank = []
    for seed in seeds:
        logger, log = click_log(data["train"], setting, seed)
        clicks_by_rank.append(np.bincount(log.positions, weights=log.clicks)[1:])
        X_log = data["train"][0][log.rows]
        truth = log.propensities / log.propensities[0]
        fitted = models(h, rankers, log, X_log, seed)
        X, y, groups = data["train"]
        fitted += [(f"{name} ceiling", lambda r=getattr(sklearn_ranknet, name): r(random_state=seed, n_jobs=1).fit(
            X, y, groups)) for name in rankers]
        fitted.append(("logger", lambda: logger))
        for label, fit in fitted:
            model, seconds = timed(fit)
            scores = evaluate(data["test"], model.predict(data["test"][0]))
            row = rows.setdefault(label, {"model": label, "fit_s": [], **{k: [] for k in scores}})
            row["fit_s"].append(seconds)
            for key, value in scores.items():
                row[key].append(value)
            if label == "LambdaRankRanker debiased":
                ratio = model.position_propensities_ / truth
                estimates.append({"seed": seed, "estimate": model.position_propensities_.tolist(),
                                  "truth": truth.tolist()})
                worst_error = max(worst_error, float(np.max(np.abs(ratio[1:] - 1))))
        h.say(f"{setting['name']}, seed {seed}: {len(fitted)} models")
    summary = []
    for row in rows.values():
        summary.append({"model": row["model"], "ndcg10": np.mean(row["ndcg10"]),
                        "ndcg10_sd": np.std(row["ndcg10"], ddof=1) if len(row["ndcg10"]) > 1 else None,
                        "err10": np.mean(row["err10"]), "fit_s": float(np.median(row["fit_s"]))})
    by_model = {row["model"]: row for row in summary}
    for name in rankers:
        raw, deb, ceil = (by_model[f"{name} {kind}"]["ndcg10"] for kind in ("raw", "debiased", "ceiling"))
        by_model[f"{name} debiased"]["gap_closed"] = (deb - raw) / (ceil - raw) if ceil != raw else None
        known = by_model.get(f"{name} true propensities")
        if known is not None:
            known["gap_closed"] = (known["ndcg10"] - raw) / (ceil - raw) if ceil != raw else None
    h.data.setdefault("propensities", {})[setting["name"]] = estimates
    return summary, worst_error, np.mean(clicks_by_rank, axis=0)


def targets(h, setting, summary, worst_error):
    if setting["click_model"] != "position_based" or (setting["n_sessions"] < 100 and not h.quick):
        return
    by_model = {row["model"]: row for row in summary}
    ours = by_model["LambdaRankRanker debiased"]
    peers = [by_model[p]["ndcg10"] for p in ("LightGBM position", "XGBoost unbiased") if p in by_model]
    name = setting["name"]
    h.target(f"{name}: debiased LambdaRankRanker NDCG@10 minus the best debiased peer's",
             ours["ndcg10"] - max(peers) if peers else None, 0.0, higher_is_better=True,
             reason="no peer installed")
    h.target(f"{name}: share of the raw-to-ceiling NDCG@10 gap closed by debiasing LambdaRankRanker",
             ours["gap_closed"], TARGET_GAP, higher_is_better=True)
    h.target(f"{name}: largest |estimate / truth - 1| of the propensities at ranks 2-10 (worst seed)",
             worst_error, TARGET_PROPENSITY_ERROR)


def run(h):
    if not DATA.is_dir():
        h.note(f"The Yahoo! LTR sample is not at {DATA}: the suite is skipped.")
        h.target("clicks suite", None, 0.0, reason="no data")
        return
    data = load_data()
    seeds = (0,) if h.quick else (0, 1, 2)
    settings = SETTINGS[:1] if h.quick else SETTINGS
    rankers = RANKERS[:1] if h.quick else RANKERS
    columns = {"model": "model", "NDCG@10 (true labels)": "ndcg10", "sd": "ndcg10_sd", "ERR@10": "err10",
               "gap closed": "gap_closed", "fit (median s)": "fit_s"}
    with threads(1):
        for setting in settings:
            summary, worst_error, clicks = run_setting(h, data, setting, seeds, rankers)
            h.table(f"{setting['name']} ({len(seeds)} seed{'s' if len(seeds) > 1 else ''})", summary, columns)
            if setting["click_model"] == "position_based":
                h.note(f"{setting['name']}: largest |estimate / truth - 1| of LambdaRankRanker's propensities "
                       f"at ranks 2-10, worst seed: {worst_error:.3f}.")
                # Any estimate of a rank's propensity counts that rank's
                # clicks: its relative standard deviation is at least
                # 1 / sqrt(clicks).
                h.note(f"{setting['name']}: clicks at ranks 1-{len(clicks)}, mean over seeds: "
                       f"{', '.join(str(int(round(c))) for c in clicks)}; the counting noise alone, "
                       f"1 / sqrt(clicks), is {1 / np.sqrt(clicks[-1]):.2f} of the propensity at rank "
                       f"{len(clicks)}.")
            targets(h, setting, summary, worst_error)
    estimates = h.data["propensities"]

    def draw(ax):
        for name, runs in estimates.items():
            if not runs or "cascade" in name:
                continue
            ranks = np.arange(1, len(runs[0]["truth"]) + 1)
            line, = ax.plot(ranks, runs[0]["truth"], "--", alpha=0.6)
            for run in runs:
                ax.plot(ranks, run["estimate"], "o-", color=line.get_color(), alpha=0.7,
                        label=name if run is runs[0] else None)
        ax.set(xlabel="rank", ylabel="examination propensity (rank 1 = 1)", yscale="log",
               title="LambdaRankRanker's estimate (dots) against the truth (dashes)")
        ax.legend(fontsize=8)

    h.plot(draw)
