"""How many epochs a small-data default fit needs, on training data only
(issue 52: a fit stopped sooner would be a faster fit).

    python studies/epochs.py yahoo              # the Yahoo sample's rank.train
    python studies/epochs.py letor              # its LETOR-form view (46 features)
    python studies/epochs.py mslr50             # make_ranking(50), MSLR-shaped
    python studies/epochs.py yahoo default max16 twin20   # some rules only

``GroupKFold(3)`` over the training split, two seeds; each rule prints the
mean fold NDCG@10 of ``LambdaRankRanker`` and the epochs each fit ran.
The rules:

- ``default``: the shipped rule (the training objective must improve by
  ``tol``);
- ``maxN``: exactly N epochs;
- ``twinNN``: a first fit holds out NN % of its queries and scores the
  weight average on them after every epoch (early stopping, patience as
  shipped); a second fit trains on all the fold's rows for the epochs of
  the first fit's best score. Printed as "epochs of the first + of the
  second".

Needs ``../shared/data`` beside the repository for the Yahoo sets.
"""

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import GroupKFold

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_quality import evaluate, load_data  # noqa: E402
from benchmarks.bench_selection import letor_form, mslr_shaped  # noqa: E402
from sklearn_ranknet import LambdaRankRanker  # noqa: E402
from sklearn_ranknet._resolve import EMA_MOMENTUM  # noqa: E402

RULES = ["default", "max8", "max16", "max24", "max32", "max48", "twin10", "twin20"]
SEEDS = [0, 1]
# Patience large enough that a fixed-epoch fit runs every epoch it is given.
NEVER = 10_000


def training_set(name):
    if name == "yahoo":
        return load_data()["train"]
    if name == "letor":
        return letor_form(load_data())["train"]
    return mslr_shaped(int(name.removeprefix("mslr")), 1)["train"]


def fit(rule, X, y, q, seed):
    """(the fitted ranker, the epochs it cost)"""
    if rule == "default":
        model = LambdaRankRanker(random_state=seed).fit(X, y, q)
        return model, model.n_iter_
    if rule.startswith("max"):
        model = LambdaRankRanker(random_state=seed, max_iter=int(rule[3:]), n_iter_no_change=NEVER)
        return model.fit(X, y, q), int(rule[3:])
    fraction = int(rule.removeprefix("twin")) / 100
    probe = LambdaRankRanker(random_state=seed, early_stopping=True, validation_fraction=fraction,
                             ema_momentum=EMA_MOMENTUM).fit(X, y, q)
    best = int(np.argmax(probe.validation_scores_)) + 1
    model = LambdaRankRanker(random_state=seed, max_iter=best, n_iter_no_change=NEVER).fit(X, y, q)
    return model, f"{probe.n_iter_}+{best}"


def main(name, rules):
    X, y, q = training_set(name)
    for rule in rules:
        scores, costs = [], []
        for seed in SEEDS:
            for train, test in GroupKFold(3).split(X, y, q):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # ConvergenceWarning of the fixed-epoch fits
                    model, cost = fit(rule, X[train], y[train], q[train], seed)
                scores.append(evaluate(y[test], model.predict(X[test]), q[test])["ndcg10"])
                costs.append(cost)
        print(f"{name} {rule}: NDCG@10 {np.mean(scores):.4f}, epochs {costs}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or RULES)
