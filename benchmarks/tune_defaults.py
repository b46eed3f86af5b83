"""Defaults study: every default of the three rankers, chosen without any test set.

A study script, not a suite of ``python -m benchmarks``::

    python -m benchmarks.tune_defaults search [--estimator lambdarank|ranknet|listnet|all]
    python -m benchmarks.tune_defaults compare --estimator NAME --configs JSON [--fold-seeds 0,1,2]
        [--model-seeds 0,1,2,3,4] [--against-trees]
    python -m benchmarks.tune_defaults large [--configs JSON] [--problems mslr,noisy] [--seed 0]
    python -m benchmarks.tune_defaults peers [--sets yahoo,letor] [--fold-seeds 0,1,2] [--trees-only]
    python -m benchmarks.tune_defaults final [--seeds 5]

Selection data, raw features (no scaler: the rankers scale their own inputs):

- ``yahoo``: ``rank.train`` of the Yahoo! LTR sample (201 queries), ``GroupKFold(5,
  shuffle=True, random_state=0)`` by query, seeds 0 and 1: 10 paired held-out-fold scores;
- ``small``, ``noisy``: ``make_ranking(150)`` with noise 0.5 and 1.0, scored on a fresh
  1,000-query draw of the same problem (seeds 0 and 1);
- ``medium``: ``make_ranking(600, n_features=40, n_informative=15)``, scored on a fresh
  1,000-query draw (seed 0);
- ``letor`` (opt-in, ``--sets``): the same Yahoo folds as LETOR 4.0 ships its data (MQ2007,
  MQ2008): every feature min-max scaled within its query, labels capped at 2. Trees barely
  notice the change; a network's best number of epochs does (twelfth look);
- ``letor_sparse`` (opt-in): ``letor`` with Yahoo's grades folded as a sparsely judged
  collection grades: 0 and 1 -> 0, 2 -> 1, 3 and 4 -> 2 (``sparse_relevance``): 62 % of the
  training documents irrelevant and 14 % of the queries without a relevant one, where
  ``letor``'s cap at 2 leaves 21 % irrelevant (twentieth look);
- ``small_letor``, ``noisy_letor``, ``medium_letor`` (opt-in): the synthetic problems, training
  and held-out rows alike, in the same LETOR 4.0 form (thirteenth look);
- ``copies`` (opt-in): ``small`` with every feature observed five times, each copy with its
  own noise of one standard deviation (``copies_view``): redundant features of a known
  structure (thirteenth look); ``copies_letor`` the same in LETOR 4.0's form (twenty-first
  look: synthetic data on which every value of the scaled-data rule applies);
- ``letor_context``, ``letor_sparse_context`` (opt-in): those two views with each feature's
  mean over its query appended as a second column (``query_context_view``): how much a
  pointwise scorer gains from seeing its query's other documents (twenty-third look);
- ``letor_narrow``, ``letor_sparse_narrow`` (opt-in): those two views with only the
  ``NARROW_FEATURES`` (46) columns that hold the most nonzero values in each split's training
  rows (``narrow_view``): as few features as LETOR 4.0's MQ2007 and MQ2008 have, each present
  for most documents (twenty-fourth look);
- ``tiny``, ``tiny_yahoo`` (opt-in): 10, 20, 40 and 80 training queries, three draws each:
  ``make_ranking`` scored on a fresh 1,000-query draw, and random subsets of ``rank.train``
  scored on the rest of it (nineteenth look: below the sizes the defaults were chosen on);
- ``large`` (stage ``large``, finalists only): MSLR-shaped ``make_ranking(3000,
  n_features=136, n_informative=20, min_docs=20, max_docs=370)``, scored on a fresh
  1,000-query draw, against ``LGBMRanker()`` on the same data, with fit times; problem
  ``mslr`` has noise 0.5 (seeds 10 and 11), ``noisy`` noise 1.0 (seeds 12 and 13). Neither
  is the benchmark's draw (seeds 0 and 1). ``mslr150``, ``mslr400`` and ``mslr1000`` are the
  same shape with 150, 400 and 1,000 training queries (seeds 20 and 21): how a choice's gain
  and cost move with the number of rows. A configuration of ``large`` may fix the number of
  quantile bins of ``feature_scaling="piecewise"`` with the study-only key
  ``"piecewise_bins"`` (the rankers choose it from the number of rows; ``compare`` takes it
  too), and ``--seed`` sets the models' ``random_state``. A second study-only encoding key,
  ``"piecewise_extreme_steps": s``, adds two edges per feature, a fraction ``s`` of the
  outer bins' widths inside the lowest and the highest edge, so that the training minimum
  and maximum (every query's 0 and 1 in LETOR's form) get inputs of their own (twenty-fourth
  look). A third, ``"piecewise_jitter": seed``, moves each encoding's inner edges to the
  quantiles ``(t + u) / n_bins``, ``u`` drawn anew per encoding, so that a bag's members
  bend at different places (twenty-fifth look).

Study-only keys (``_study_variants.py``) change LambdaRank's objective, in ``compare`` and ``large`` alike
(none is a parameter of the package), from the seventeenth look: ``"query_weight_power": p`` scales
each query's pair weights by ``(W_mean / W_q) ** p``, where ``W_q`` is the query's summed pair
weight at its ideal ranking and ``W_mean`` the mean over the objective's queries (1: every query
weighs the same, as in RankNet's mean over pairs); ``"pair_weight_floor": b`` weighs each pair
``|dG| * (|d_a - d_b| + b)``, a RankNet-like term under the |delta NDCG| one. The twentieth
look's third key, ``"lambda_norm": true`` (each query's lambdas scaled as LightGBM's
``lambdarank_norm`` does), became the parameter ``normalize_lambdas`` in the twenty-second.
The twenty-third look's key ``"listnet_mix": w`` adds ``w`` times ListNet's softmax
cross-entropy gradient (the ranker's ``sigma`` and ``gain``) to LambdaRank's lambdas; the
costs, which the stopping rule reads, stay LambdaRank's. The twenty-fifth look's optimizer key
``"decoupled_decay": w`` (any ranker) shrinks the network's weights by ``1 - learning_rate * w``
after every Adam step, weight decay outside Adam's per-coordinate scaling (AdamW), to weigh
against ``alpha``'s L2 term, which goes through it; its noise key ``"raw_input_noise": s`` draws
each training step's input noise on the raw features (``s`` times each feature's standard
deviation) before the encoding, instead of on the encoded inputs (give a nonzero
``input_noise`` with it; ``n_jobs=1`` only). The twenty-sixth look's ``"feature_dropout": p``
drops each feature of each training row (all its encoded inputs) with probability ``p``, after
the input noise (dense inputs, the piecewise encoding and nonzero input noise only); its
``"predict_noise_draws": K`` scores each held-out row as the mean over ``K`` seeded draws of the
training's input noise instead of at the noise-free inputs, and ``"predict_expected_noise": true``
the exact expectation over that noise (one hidden ReLU layer).

``compare`` scores the given configurations (changes from the current defaults) on the
selection sets (``--sets``, the four above by default), through the same cache as ``search``,
with each one's paired Yahoo gain over the first; ``--fold-seeds 0,1,2`` draws the Yahoo folds
with several shuffles (15 folds, 30 paired fits: a tighter standard error; cache them in
another ``--out``); ``--model-seeds 0,1,2,3,4`` fits every split with those ``random_state``
values instead of the set's usual ones (``SEEDS``: 0 and 1 on most sets, a good draw on the
scaled views, twenty-second look), cached apart; with ``--no-yahoo`` it scores only the
``--sets`` given, and the paired gain is over the first of them (a study of one kind of data,
as the twenty-first look's of the views scaled within queries); with ``--against-trees`` it
also fits ``LGBMRanker()`` and ``XGBRanker()`` on the same splits and gives each configuration's
lead over the better of them, paired by split, with a standard error over splits (the seeds
sharing a split are not independent draws; twenty-fourth look). The paired gain's standard error
is over splits too (the splits' mean gains; before the twenty-fifth look it counted every fit as
independent, which understates it when several seeds share a split). ``peers`` scores ``LGBMRanker()``,
``XGBRanker()`` and ``BaggingRanker(LambdaRankRanker(), n_estimators=5)`` on the same folds and
seeds: the yardstick the defaults are measured against, without touching ``rank.test``.

Score: NDCG@10 (gain 2^rel - 1, ties in input order, empty query = 1). ``search`` is a
coordinate search from the current defaults: on each coordinate every value is tried with the
others fixed; the point moves to the best value (by the mean over the four data sets of the
gain over the current point) only if that mean gain is > 0.002, the Yahoo gain is > -1 paired
standard error, and no data set loses more than 0.01. Rounds repeat until one makes no move (at
most 3). Every evaluation is cached in ``OUT/tune_cache.json`` (keyed by estimator and
parameters), so runs resume. Warnings of every fit are counted. ``final`` is the only stage
that reads ``rank.test``, once, after the choice. One thread everywhere.
"""

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

from . import bench_quality
from ._harness import Harness, threads
from ._study_variants import study_variants

OUT = Path(__file__).resolve().parent / "results"
ESTIMATORS = {"lambdarank": "LambdaRankRanker", "ranknet": "RankNetRanker", "listnet": "ListNetRanker"}
MIN_GAIN, WORST_LOSS, MAX_ROUNDS = 0.002, 0.01, 3
DATASETS = ("yahoo", "small", "noisy", "medium")
#: Opt-in selection sets (``--sets``), beside DATASETS.
EXTRA_SETS = ("letor", "letor_sparse", "small_letor", "noisy_letor", "medium_letor", "copies", "copies_letor",
              "tiny", "tiny_yahoo", "letor_context", "letor_sparse_context", "letor_narrow",
              "letor_sparse_narrow")
#: Columns kept by ``narrow_view``: as many features as MQ2007 and MQ2008 have.
NARROW_FEATURES = 46
#: Training queries of the ``tiny`` and ``tiny_yahoo`` sets, three draws each.
TINY_QUERIES = (10, 20, 40, 80)
COORDINATES = {
    "tol": [{"tol": t} for t in (1e-3, 3e-3, 1e-2)],
    "learning_rate_init": [{"learning_rate_init": lr} for lr in (1e-3, 3e-3)],
    "alpha": [{"alpha": a} for a in (0.5, 1.5, 5.0, 15.0, 50.0)],
    "dropout": [{"dropout": d} for d in (0.0, 0.1, 0.3)],
    "input_noise": [{"input_noise": n} for n in (0.0, 0.3, 1.0)],
    "hidden_layer_sizes": [{"hidden_layer_sizes": h} for h in ((64,), (128,))],
    "sigma": [{"sigma": s} for s in (0.5, 1.0, 2.0)],
    "pair_weighting": [{"pair_weighting": w} for w in ("lambdarank", "ndcg_loss2++")],
    "feature_scaling": [{"feature_scaling": f} for f in ("standard", "piecewise")],
    "ema_momentum": [{"ema_momentum": m} for m in ("auto", 0.0, 0.999)],
}
ONLY = {"pair_weighting": "lambdarank"}


def defaults(estimator):
    import sklearn_ranknet

    params = getattr(sklearn_ranknet, ESTIMATORS[estimator])().get_params()
    return {k: v for k, v in params.items() if k not in ("random_state", "verbose", "n_jobs")}


def _key(estimator, params):
    return estimator + " " + json.dumps(params, sort_keys=True, default=list)


def _synthetic(n_queries, seed, **kwargs):
    from sklearn_ranknet.datasets import make_ranking

    return make_ranking(n_queries, random_state=seed, **kwargs)


def _per_query(ufunc, X, qid):
    """Each row's ``ufunc`` (``np.minimum``, ``np.maximum``, ``np.add``)
    over its query's rows, column by column, accumulated in row order;
    queries found by the package's grouping."""
    from sklearn_ranknet._groups import group_rows

    groups = group_rows(qid, len(X))
    query = groups.restore(np.repeat(np.arange(groups.n_queries), groups.sizes))
    start = {np.minimum: np.inf, np.maximum: -np.inf, np.add: 0.0}[ufunc]
    per_query = np.full((groups.n_queries, X.shape[1]), start)
    ufunc.at(per_query, query, X)
    return per_query[query]


def letor_view(X, y, qid):
    """The rows as LETOR 4.0 ships them (MQ2007, MQ2008): each feature
    min-max scaled within its query (0 where a query holds one value), and
    labels capped at 2 (relevance 0, 1, 2)."""
    X = np.asarray(X, dtype=float)
    low, high = _per_query(np.minimum, X, qid), _per_query(np.maximum, X, qid)
    varies = high > low
    return np.where(varies, (X - low) / np.where(varies, high - low, 1.0), 0.0), np.minimum(y, 2), qid


def sparse_relevance(X, y, qid):
    """The rows with Yahoo's five grades folded into three the way a sparsely
    judged collection grades them: 0 and 1 -> 0, 2 -> 1, 3 and 4 -> 2, so
    that most documents are irrelevant and some queries have no relevant
    document at all (``letor_view`` caps at 2 instead: most documents
    relevant)."""
    return X, np.array([0, 0, 1, 2, 2])[np.asarray(y, dtype=int)], qid


def query_context_view(X, y, qid):
    """The rows with, for every feature, its mean over the row's query
    appended: the context of the other documents that a pointwise scorer
    does not see (a query-level feature per column, computable at ranking
    time from the query's own documents)."""
    X = np.asarray(X, dtype=float)
    sizes = _per_query(np.add, np.ones((len(X), 1)), qid)
    return np.hstack([X, _per_query(np.add, X, qid) / sizes]), y, qid


def narrow_view(train, held_out, n_features=NARROW_FEATURES):
    """A split's training and held-out rows with only the ``n_features``
    columns that hold the most nonzero values in its training rows (ties
    to the lower column), in their original order."""
    counts = np.count_nonzero(np.asarray(train[0]), axis=0)
    kept = np.sort(np.argsort(-counts, kind="stable")[:n_features])
    return tuple((np.asarray(X)[:, kept], y, qid) for X, y, qid in (train, held_out))


def copies_view(X, y, qid, n_copies=5, spread=1.0, seed=0):
    """The rows with each feature observed ``n_copies`` times, each copy
    with its own Gaussian noise of standard deviation ``spread``: redundant
    features, as real learning-to-rank features are (several measures of
    the same match), with the same relevance."""
    rng = np.random.default_rng(seed)
    repeated = np.repeat(np.asarray(X, dtype=float), n_copies, axis=1)
    return repeated + spread * rng.standard_normal(repeated.shape), y, qid


def selection_data(fold_seeds=(0,), sets=DATASETS):
    """name -> list of (train, held_out) pairs, each (X, y, qid), for each
    name in ``sets``; the Yahoo folds of every shuffle in ``fold_seeds``."""
    from sklearn.model_selection import GroupKFold

    def yahoo_folds():  # read only when a set needs it
        X, y, q = bench_quality.load_data()["train"]
        return [tuple((X[i], y[i], q[i]) for i in fold) for seed in fold_seeds
                for fold in GroupKFold(5, shuffle=True, random_state=seed).split(X, y, groups=q)]

    medium = dict(n_features=40, n_informative=15)
    makers = {
        "yahoo": yahoo_folds,
        "letor": lambda: [tuple(letor_view(*part) for part in split) for split in yahoo_folds()],
        "letor_sparse": lambda: [tuple(letor_view(*sparse_relevance(*part)) for part in split)
                                 for split in yahoo_folds()],
        "small": lambda: [(_synthetic(150, 0), _synthetic(1000, 100))],
        "noisy": lambda: [(_synthetic(150, 1, noise=1.0), _synthetic(1000, 101, noise=1.0))],
        "medium": lambda: [(_synthetic(600, 2, **medium), _synthetic(1000, 102, **medium))],
    }
    makers["copies"] = lambda: [tuple(copies_view(*part, seed=i) for i, part in enumerate(split))
                                for split in makers["small"]()]
    makers["tiny"] = lambda: [(_synthetic(n, 300 + 10 * n + i), _synthetic(1000, 400))
                              for n in TINY_QUERIES for i in range(3)]

    def tiny_yahoo():  # random subsets of rank.train; the rest of it held out
        X, y, q = bench_quality.load_data()["train"]
        splits = []
        for n in TINY_QUERIES:
            for i in range(3):
                taken = np.isin(q, np.random.default_rng(1000 * n + i).choice(np.unique(q), n, replace=False))
                splits.append(((X[taken], y[taken], q[taken]), (X[~taken], y[~taken], q[~taken])))
        return splits
    makers["tiny_yahoo"] = tiny_yahoo
    for name in ("letor", "letor_sparse"):
        makers[name + "_context"] = (lambda name: lambda: [
            tuple(query_context_view(*part) for part in split) for split in makers[name]()])(name)
        makers[name + "_narrow"] = (lambda name: lambda: [narrow_view(*split) for split in makers[name]()])(name)
    for name in ("small", "noisy", "medium", "copies"):  # synthetic problems in LETOR 4.0's form too
        makers[name + "_letor"] = (lambda name: lambda: [
            tuple(letor_view(*part) for part in split) for split in makers[name]()])(name)
    return {name: makers[name]() for name in sets}


SEEDS = {"yahoo": (0, 1), "letor": (0, 1), "letor_sparse": (0, 1), "small": (0, 1), "noisy": (0, 1), "medium": (0,)}
SEEDS.update({name + "_letor": SEEDS[name] for name in ("small", "noisy", "medium")}, copies=(0, 1),
             copies_letor=(0, 1), tiny=(0,), tiny_yahoo=(0,), letor_context=(0, 1), letor_sparse_context=(0, 1),
             letor_narrow=(0, 1), letor_sparse_narrow=(0, 1))


def fit_score(estimator, params, seed, train, held_out):
    """Held-out NDCG@10, fit seconds, epochs and the number of warnings."""
    import sklearn_ranknet
    from sklearn_ranknet.metrics import ndcg_score

    params, variants = study_variants(params)
    model = getattr(sklearn_ranknet, ESTIMATORS[estimator])(random_state=seed, n_jobs=1, **params)
    with variants:  # a variant may change predict too
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            started = time.perf_counter()
            model.fit(train[0], train[1], groups=train[2])
            seconds = time.perf_counter() - started
        predicted = model.predict(held_out[0])
    score = ndcg_score(held_out[1], predicted, groups=held_out[2], k=10, ignore_ties=True)
    return {"ndcg10": score, "fit_s": seconds, "epochs": model.n_iter_, "warnings": len(caught)}


class Evaluator:
    """Scores of one configuration on every selection data set, cached on disk."""

    def __init__(self, out_dir, fold_seeds=(0,), sets=DATASETS, model_seeds=None):
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        self.path = Path(out_dir) / "tune_cache.json"
        self.cache = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.sets = tuple(sets)
        self.data = selection_data(fold_seeds, self.sets)
        self.model_seeds = None if model_seeds is None else tuple(model_seeds)

    def _entry(self, name):
        """A set's cache entry: its name, or with the models' seeds when
        they are not the set's usual ``SEEDS``."""
        if self.model_seeds is None:
            return name
        return f"{name} model seeds {','.join(map(str, self.model_seeds))}"

    def n_splits(self, name):
        """Number of train/held-out splits of a set (each fitted once per seed)."""
        return len(self.data[name])

    def __call__(self, estimator, params):
        """name -> scores of every set in ``self.sets``; a set missing from
        the cached entry is fitted and added to it."""
        key = _key(estimator, params)
        result = self.cache.setdefault(key, {})
        missing = [name for name in self.sets if self._entry(name) not in result]
        for name in missing:
            runs = [fit_score(estimator, params, seed, *split)
                    for split in self.data[name] for seed in self.model_seeds or SEEDS[name]]
            result[self._entry(name)] = {field: [r[field] for r in runs] for field in runs[0]}
        scores = {name: result[self._entry(name)] for name in self.sets}
        if missing:
            self.path.with_suffix(".tmp").write_text(json.dumps(self.cache, indent=1) + "\n")
            os.replace(self.path.with_suffix(".tmp"), self.path)
            summary = ", ".join(f"{n} {np.mean(scores[n]['ndcg10']):.4f}" for n in self.sets)
            print(f"  {key}: {summary}", flush=True)
        return scores


def compare(new, current, n_splits=None):
    """Per data set mean paired gain, the first set's (Yahoo's in ``search``)
    standard error, the mean gain. With the first set's ``n_splits`` (its
    fits are every split's seeds in a row), the standard error is over the
    splits' mean gains: seeds fitted on one split share its test queries,
    so counting them as independent understates it."""
    gains = {n: float(np.mean(np.subtract(new[n]["ndcg10"], current[n]["ndcg10"]))) for n in new}
    first = next(iter(new))
    d = np.subtract(new[first]["ndcg10"], current[first]["ndcg10"])
    _, se = mean_by_split(d, len(d) if n_splits is None else n_splits)
    return gains, se, float(np.mean(list(gains.values())))


def mean_by_split(differences, n_splits):
    """Mean and standard error over ``n_splits`` splits of per-fit paired
    ``differences`` listed split by split (a split's seeds in a row): each
    split's mean first, so that seeds sharing a split's test queries do not
    count as independent draws. The standard error is nan for one split."""
    per_split = np.reshape(differences, (n_splits, -1)).mean(axis=1)
    se = per_split.std(ddof=1) / np.sqrt(n_splits) if n_splits > 1 else np.nan  # one split: unknown
    return float(per_split.mean()), float(se)


def search(evaluate, estimator, log):
    point = defaults(estimator)
    for round_ in range(1, MAX_ROUNDS + 1):
        moved = False
        for name, values in COORDINATES.items():
            if ONLY.get(name, estimator) != estimator:
                continue
            current = evaluate(estimator, point)
            scored = [(change, compare(evaluate(estimator, {**point, **change}), current, evaluate.n_splits("yahoo")))
                      for change in values]
            change, (gains, se, mean_gain) = max(scored, key=lambda cs: cs[1][2])
            move = mean_gain > MIN_GAIN and gains["yahoo"] > -se and min(gains.values()) > -WORST_LOSS
            log.append({"estimator": estimator, "round": round_, "coordinate": name,
                        "best": json.dumps(change, default=list), "mean_gain": mean_gain,
                        **{f"gain_{n}": gains[n] for n in gains}, "se_yahoo": se, "moved": bool(move)})
            if move:
                point.update(change)
                moved = True
        if not moved:
            break
    return point


def summary_rows(evaluate, estimator, configurations):
    """Mean scores of each configuration, and its paired gain over the first
    configuration's on the first set."""
    rows = []
    first = evaluate(estimator, configurations[0][1])
    for i, (label, params) in enumerate(configurations):
        result = evaluate(estimator, params)
        row = {"estimator": estimator, "configuration": label}
        for n in result:
            row[n] = float(np.mean(result[n]["ndcg10"]))
        first_set = next(iter(result))
        gains, se, _ = compare(result, first, evaluate.n_splits(first_set))
        spread = f" ± {se:.4f}" if np.isfinite(se) else " (one split: no se)"
        row["first_gain"] = f"{gains[first_set]:+.4f}{spread}" if i else ""
        row["fit_s"] = float(np.median([s for n in result for s in result[n]["fit_s"]]))
        row["warnings"] = int(sum(sum(result[n]["warnings"]) for n in result))
        rows.append(row)
    return rows


#: Large problems: name -> (noise, training seed, held-out seed).
#: name -> (noise, training seed, held-out seed, training queries). The
#: smaller MSLR-shaped problems show how a choice's gain and cost move with
#: the number of rows (150 queries are about 18,000 rows, 3,000 about 350,000).
LARGE_PROBLEMS = {
    "mslr": (0.5, 10, 11, 3000), "noisy": (1.0, 12, 13, 3000),
    "mslr150": (0.5, 20, 21, 150), "mslr400": (0.5, 20, 21, 400), "mslr1000": (0.5, 20, 21, 1000),
}


def large(h, configurations, problems=("mslr",), seed=0):
    """The finalists and LightGBM on MSLR-shaped data, with fit times."""
    return [row for problem in problems for row in _large_problem(h, configurations, problem, seed)]


def _large_problem(h, configurations, problem, seed):
    import sklearn_ranknet
    from sklearn_ranknet.metrics import ndcg_score

    noise, train_seed, test_seed, n_queries = LARGE_PROBLEMS[problem]
    shape = dict(n_features=136, n_informative=20, min_docs=20, max_docs=370, noise=noise)
    X, y, q = _synthetic(n_queries, train_seed, **shape)
    Xt, yt, qt = _synthetic(1000, test_seed, **shape)
    rows = []
    for label, (name, params) in configurations.items():
        params, variants = study_variants(params)
        model = getattr(sklearn_ranknet, name)(random_state=seed, n_jobs=1, **params)
        with variants:  # a variant may change predict too
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                started = time.perf_counter()
                model.fit(X, y, groups=q)
                seconds = time.perf_counter() - started
            predicted = model.predict(Xt)
        score = ndcg_score(yt, predicted, groups=qt, k=10, ignore_ties=True)
        rows.append({"problem": problem, "rows": len(y), "model": label, "ndcg10": score, "fit_s": seconds,
                     "epochs": getattr(model, "n_iter_", None), "warnings": len(caught)})
        h.say(f"{problem} {label}: {score:.4f} in {seconds:.1f}s")
    lgb = h.peer("lightgbm")
    if lgb is not None:
        started = time.perf_counter()
        model = _fit_lightgbm(lgb, 0, X, y, q)
        seconds = time.perf_counter() - started
        score = ndcg_score(yt, model.predict(Xt), groups=qt, k=10, ignore_ties=True)
        rows.append({"problem": problem, "rows": len(y), "model": "LGBMRanker()", "ndcg10": score,
                     "fit_s": seconds, "epochs": 100, "warnings": 0})
    return rows




def _grouped(X, y, q):  # the tree rankers want each query's rows together
    order = np.argsort(q, kind="stable")
    return X[order], y[order], q[order]


def _fit_lightgbm(peer, seed, X, y, q):
    X, y, q = _grouped(X, y, q)
    return peer.LGBMRanker(random_state=seed, n_jobs=1, verbose=-1).fit(X, y, group=np.unique(q, return_counts=True)[1])


def _fit_xgboost(peer, seed, X, y, q):
    X, y, q = _grouped(X, y, q)
    return peer.XGBRanker(random_state=seed, n_jobs=1).fit(X, y, qid=q)


#: The tree rankers at their defaults: label -> (module, fit).
TREES = {"LGBMRanker()": ("lightgbm", _fit_lightgbm), "XGBRanker()": ("xgboost", _fit_xgboost)}


def tree_scores(h, data):
    """set -> {tree label -> held-out NDCG@10 on each split} of the tree
    rankers' defaults, which draw nothing: one fit per split."""
    from sklearn_ranknet.metrics import ndcg_score

    scores = {name: {} for name in data}
    for label, (module, fit) in TREES.items():
        peer = h.peer(module)
        if peer is None:
            continue
        for name, splits in data.items():
            scores[name][label] = np.array([
                ndcg_score(held[1], fit(peer, 0, *train).predict(held[0]), groups=held[2], k=10, ignore_ties=True)
                for train, held in splits])
    return scores


def lead_over_trees(result, trees):
    """set -> (best tree's label, mean lead, standard error) of a
    configuration's scores (``Evaluator`` results: every split's seeds in
    a row) over the tree ranker with the best mean on each set, paired by
    split: each split's mean over the seeds minus the tree's score there.
    The standard error is over splits, so seeds sharing a split are not
    counted as independent (nan with one split)."""
    leads = {}
    for name, tree in trees.items():
        if not tree:
            continue
        best = max(tree, key=lambda label: tree[label].mean())
        n_splits = len(tree[best])
        per_fit = np.reshape(result[name]["ndcg10"], (n_splits, -1)) - tree[best][:, None]
        leads[name] = (best, *mean_by_split(per_fit, n_splits))
    return leads


def peer_rows(h, sets=DATASETS, fold_seeds=(0,), trees_only=False):
    """Held-out NDCG@10 of the peers' defaults and (unless ``trees_only``)
    of a 5-member bagging of LambdaRank on the selection data, with the
    same splits and seeds."""
    from sklearn_ranknet.metrics import ndcg_score

    def bagging(peer, seed, X, y, q):
        member = peer.LambdaRankRanker(n_jobs=1)
        return peer.BaggingRanker(member, n_estimators=5, random_state=seed).fit(X, y, groups=q)

    models = {**TREES, "BaggingRanker(LambdaRankRanker(), n_estimators=5)": ("sklearn_ranknet", bagging)}
    if trees_only:
        del models["BaggingRanker(LambdaRankRanker(), n_estimators=5)"]
    data = selection_data(fold_seeds, sets)
    rows = []
    for label, (module, fit) in models.items():
        peer = h.peer(module)
        if peer is None:
            continue
        row = {"model": label}
        for name in sets:
            row[name] = float(np.mean([
                ndcg_score(held[1], fit(peer, seed, *train).predict(held[0]), groups=held[2], k=10,
                           ignore_ties=True)
                for train, held in data[name] for seed in SEEDS[name]]))
        h.say(f"{label}: " + ", ".join(f"{n} {row[n]:.4f}" for n in sets))
        rows.append(row)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["search", "compare", "large", "peers", "final"])
    parser.add_argument("--estimator", default="all", choices=[*ESTIMATORS, "all"])
    parser.add_argument("--configs", default="{}",
                        help='large: JSON {"label": ["LambdaRankRanker", {params}], ...}')
    parser.add_argument("--problems", default="mslr", help="large: comma-separated, of "
                        + ", ".join(LARGE_PROBLEMS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--fold-seeds", default="0",
                        help="search, compare, peers: the Yahoo folds' shuffles, e.g. 0,1,2")
    parser.add_argument("--seed", type=int, default=0, help="large: the models' random_state")
    parser.add_argument("--model-seeds", default=None,
                        help="compare: the models' random_state on every split, e.g. 0,1,2,3,4, "
                        "instead of each set's usual seeds (SEEDS)")
    parser.add_argument("--sets", default=",".join(DATASETS),
                        help="search, compare, peers: comma-separated selection sets, of "
                        + ", ".join(DATASETS + EXTRA_SETS) + " (search: yahoo always; compare and "
                        "peers: yahoo first unless --no-yahoo)")
    parser.add_argument("--no-yahoo", action="store_true",
                        help="compare, peers: only the --sets given (a study of one kind of data)")
    parser.add_argument("--against-trees", action="store_true",
                        help="compare: also each configuration's lead over the best tree ranker's "
                        "default, paired by split (standard error over splits)")
    parser.add_argument("--trees-only", action="store_true",
                        help="peers: only LGBMRanker() and XGBRanker(), not the bagged LambdaRank")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    sets = tuple(n for n in args.sets.split(",") if n != "yahoo")
    if not (args.no_yahoo and args.stage in ("compare", "peers")):
        sets = ("yahoo", *sets)
    if not set(sets) <= set(DATASETS + EXTRA_SETS):
        parser.error(f"--sets: unknown set in {args.sets!r}")
    fold_seeds = tuple(int(seed) for seed in args.fold_seeds.split(","))
    h = Harness(f"tune_{args.stage}", quick=False, out_dir=args.out, doc=__doc__)
    with threads(1):
        if args.stage == "search":
            evaluate, log = Evaluator(args.out, fold_seeds, sets), []
            names = list(ESTIMATORS) if args.estimator == "all" else [args.estimator]
            ends = {e: search(evaluate, e, log) for e in names}
            h.data["end"] = ends
            h.table("Coordinate search (gains: mean paired held-out NDCG@10 of the best value)", log, {
                "estimator": "estimator", "round": "round", "coordinate": "coordinate",
                "best value": "best", "mean gain": "mean_gain",
                **{f"{n} gain": f"gain_{n}" for n in sets}, "yahoo se": "se_yahoo", "moved": "moved"})
            rows = []
            for e in names:
                start = defaults(e)
                changes = {k: v for k, v in ends[e].items() if start.get(k) != v}
                rows += summary_rows(evaluate, e, [("current defaults", start),
                                                   (f"end point {json.dumps(changes, default=list)}", ends[e])])
            h.table("Start and end points (mean held-out NDCG@10)", rows, {
                "estimator": "estimator", "configuration": "configuration",
                **{n: n for n in sets}, "fit s (median)": "fit_s", "warnings": "warnings"})
        elif args.stage == "compare":
            if args.estimator == "all":
                parser.error("compare needs one --estimator")
            changes = {label: {k: tuple(v) if isinstance(v, list) else v for k, v in p.items()}
                       for label, p in json.loads(args.configs).items()}
            configurations = [(label, {**defaults(args.estimator), **p}) for label, p in changes.items()]
            model_seeds = None if args.model_seeds is None else [int(s) for s in args.model_seeds.split(",")]
            evaluate = Evaluator(args.out, fold_seeds, sets, model_seeds)
            rows = summary_rows(evaluate, args.estimator, configurations)
            if args.against_trees:
                trees = tree_scores(h, evaluate.data)
                for row, (_, params) in zip(rows, configurations):
                    for name, (best, lead, se) in lead_over_trees(evaluate(args.estimator, params), trees).items():
                        row[f"lead_{name}"] = f"{lead:+.4f} ± {se:.4f} ({best})"
            leads = [n for n in sets if any(f"lead_{n}" in row for row in rows)]
            h.table("Mean held-out NDCG@10 on the selection sets", rows, {
                "estimator": "estimator", "configuration": "configuration",
                **{n: n for n in sets}, "mean": lambda r: np.mean([r[n] for n in sets]),
                f"{sets[0]} gain over the first (± se)": "first_gain",
                **{f"{n} lead over the best tree (± se by split)": f"lead_{n}" for n in leads},
                "fit s (median)": "fit_s", "warnings": "warnings"})
        elif args.stage == "large":
            configs = {label: (name, {k: tuple(v) if isinstance(v, list) else v for k, v in p.items()})
                       for label, (name, p) in json.loads(args.configs).items()}
            if not configs:
                configs = {f"{n}()": (n, {}) for n in ESTIMATORS.values()}
            rows = large(h, configs, problems=args.problems.split(","), seed=args.seed)
            h.table(f"MSLR-shaped make_ranking, 1,000 queries held out, models seeded with {args.seed}", rows, {
                "problem": "problem", "training rows": "rows", "model": "model", "NDCG@10": "ndcg10", "fit s": "fit_s",
                "epochs": "epochs", "warnings": "warnings"})
        elif args.stage == "peers":
            h.table("Peers on the selection data (mean held-out NDCG@10)", peer_rows(h, sets, fold_seeds, args.trees_only), {
                "model": "model", **{n: n for n in sets},
                "mean": lambda r: np.mean([r[n] for n in sets])})
        else:
            import sklearn_ranknet

            (Xtr, ytr, qtr), (Xte, yte, qte) = bench_quality.load_data().values()
            rows = []
            for name in ESTIMATORS.values():
                scores = []
                for seed in range(args.seeds):
                    model = getattr(sklearn_ranknet, name)(random_state=seed, n_jobs=1)
                    scores.append(bench_quality.evaluate(yte, model.fit(Xtr, ytr, groups=qtr).predict(Xte), qte)["ndcg10"])
                rows.append({"model": f"{name}()", "ndcg10": np.mean(scores), "sd": np.std(scores, ddof=1)})
            h.table("rank.test NDCG@10 over seeds (after the choice)", rows, {
                "model": "model", "NDCG@10": "ndcg10", "sd": "sd"})
    h.write()


if __name__ == "__main__":
    main()
