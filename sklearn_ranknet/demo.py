"""Train both rankers and a pointwise baseline; print NDCG@10, MAP and fit time.

Usage::

    python -m sklearn_ranknet.demo                       # synthetic make_ranking data
    python -m sklearn_ranknet.demo TRAIN TEST            # LETOR / SVMlight files
    python -m sklearn_ranknet.demo TRAIN TEST --n-features 300

LETOR files carry ``qid:`` fields or a LightGBM-style ``.query`` sidecar.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from . import LambdaRankRanker, RankNetRanker
from .datasets import load_letor, make_ranking
from .metrics import map_score, ndcg_score


def _load(args):
    if args.train is None:
        X_train, y_train, q_train = make_ranking(n_queries=300, random_state=0)
        X_test, y_test, q_test = make_ranking(n_queries=100, random_state=1)
        return "make_ranking (300 training queries, 100 test queries)", (
            X_train, y_train, q_train, X_test, y_test, q_test
        )
    if args.test is None:
        raise SystemExit("Give both a training and a test file.")
    train = load_letor(args.train, n_features=args.n_features)
    n_features = args.n_features or train[0].shape[1]
    test = load_letor(args.test, n_features=n_features)
    # StandardScaler needs dense input to centre the features.
    X_train, X_test = train[0].toarray(), test[0].toarray()
    return f"{args.train} / {args.test}", (X_train, train[1], train[2], X_test, test[1], test[2])


def _models(seed):
    return {
        "Ridge on labels (pointwise)": (make_pipeline(StandardScaler(), Ridge()), None),
        "RankNetRanker": (make_pipeline(StandardScaler(), RankNetRanker(random_state=seed)), "ranknetranker"),
        "LambdaRankRanker": (make_pipeline(StandardScaler(), LambdaRankRanker(random_state=seed)), "lambdarankranker"),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train", nargs="?", help="LETOR training file (default: synthetic data)")
    parser.add_argument("test", nargs="?", help="LETOR test file")
    parser.add_argument("--n-features", type=int, default=None, help="feature count of the files")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    name, (X_train, y_train, q_train, X_test, y_test, q_test) = _load(args)
    print(f"Data: {name}")
    print(f"  train {X_train.shape[0]} rows, {len(np.unique(q_train))} queries; "
          f"test {X_test.shape[0]} rows, {len(np.unique(q_test))} queries; "
          f"{X_train.shape[1]} features\n")
    print(f"{'model':<30}{'NDCG@10':>9}{'MAP':>8}{'fit (s)':>9}")
    for label, (model, step) in _models(args.seed).items():
        fit_params = {} if step is None else {f"{step}__groups": q_train}
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X_train, y_train, **fit_params)
        fit_time = time.perf_counter() - started
        scores = model.predict(X_test)
        ndcg = ndcg_score(y_test, scores, groups=q_test, k=10)
        ap = map_score(y_test, scores, groups=q_test)
        print(f"{label:<30}{ndcg:>9.4f}{ap:>8.4f}{fit_time:>9.2f}")
    print("\nNDCG@10: gain 2**label - 1, tied scores averaged, queries without a "
          "relevant document score 1. MAP: relevant means label > 0.")


if __name__ == "__main__":
    main()
