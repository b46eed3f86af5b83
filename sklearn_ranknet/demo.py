"""Train the three rankers and a pointwise baseline; print NDCG@10, MAP and fit time.

Usage::

    python -m sklearn_ranknet.demo                       # synthetic make_ranking data
    python -m sklearn_ranknet.demo TRAIN TEST            # LETOR / SVMlight files
    python -m sklearn_ranknet.demo TRAIN TEST --n-features 300
    python -m sklearn_ranknet.demo TRAIN TEST --zero-based   # feature ids from 0

LETOR files carry ``qid:`` fields or a LightGBM-style ``.query`` sidecar.
"""

import argparse
import re
import time

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from . import LambdaRankRanker, ListNetRanker, RankNetRanker
from ._groups import group_rows
from .datasets import load_letor, make_ranking
from ._validation import check_relevance_labels
from .metrics import map_score, ndcg_score


def _load(args, parser):
    if args.train is None:
        X_train, y_train, q_train = make_ranking(n_queries=300, random_state=0)
        X_test, y_test, q_test = make_ranking(n_queries=100, random_state=1)
        return "make_ranking (300 training queries, 100 test queries)", (
            X_train, y_train, q_train, X_test, y_test, q_test
        )
    if args.test is None:
        parser.error("give both a training and a test file.")
    # Both files numbered the same way (load_letor's "auto" decides per
    # file, and a test file without id 0 would shift every column).
    zero_based = args.zero_based
    loaded = []
    for training, path in ((True, args.train), (False, args.test)):
        try:
            loaded.append(load_letor(path, n_features=args.n_features, zero_based=zero_based))
        except (OSError, ValueError) as error:
            hint, message = "", str(error)
            if "index 0" in message or "zero_based" in message:
                hint = " (its feature ids start at 0: pass --zero-based)"
            # The library's advice names a parameter; here it is a file.
            message = message.replace("pass query_path= to give the query sizes",
                                      "give every row a qid: field, or the query sizes in that file")
            # scikit-learn's message names its parameter, not the option.
            too_small = re.search(r"n_features was set to (\d+), but input file contains (\d+) features", message)
            if too_small:
                needed = int(too_small[2])
                message = (f"it holds {needed} features (feature ids up to {needed - zero_based}), "
                           f"more than --n-features {too_small[1]}; pass --n-features {needed} or more.")
            parser.error(f"cannot read {path}{hint}: {message}")
        _check_rows(path, *loaded[-1][:2], parser)
        _check_queries(path, *loaded[-1][1:], parser, training=training)
    train, test = loaded
    # Ids the other file does not hold are columns of zeros there: both
    # matrices as wide as the wider one.
    width = max(train[0].shape[1], test[0].shape[1])
    for X in (train[0], test[0]):
        X.resize((X.shape[0], width))
    # The rankers take the CSR as it is; the baseline's StandardScaler needs
    # dense input to centre the features.
    return f"{args.train} / {args.test}", (*train, *test)


def _check_rows(path, X, y, parser):
    """A file's values as the rankers and the metrics need them, checked
    here so that a bad file is a usage error, not a traceback mid-run."""
    values = X.data if hasattr(X, "data") else X
    if not np.isfinite(values).all():
        # The Ridge baseline needs finite values; the rankers would learn NaN (not inf) as missing.
        parser.error(f"{path}: a feature value is NaN or infinite; the demo's Ridge baseline needs finite features.")
    if not np.isfinite(y).all():
        parser.error(f"{path}: a label is NaN or infinite; labels are relevance grades (e.g. 0 to 4).")
    try:  # the rankers' own check, with advice for a file rather than a parameter
        check_relevance_labels(y, exponential_gain=True, input_name=path,
                               remedy="Rescale them to a few grades (e.g. 0 to 4).")
    except ValueError as error:
        parser.error(str(error))


def _check_queries(path, y, groups, parser, *, training):
    """Refuse a file none of whose queries holds two documents of different
    labels: trained on, the rankers learn nothing (a warning per ranker,
    then numbers from their random initialization); tested on, any scores
    rank every query perfectly and every model prints 1.0000."""
    queries = group_rows(groups, len(y))
    arranged = y if queries.order is None else y[queries.order]
    starts = queries.offsets[:-1]  # a loaded file's queries are never empty
    if np.any(np.minimum.reduceat(arranged, starts) < np.maximum.reduceat(arranged, starts)):
        return
    consequence = ("the rankers have nothing to learn from it" if training
                   else "any scores rank them perfectly and every model would score 1")
    parser.error(f"{path}: no query holds two documents of different labels (every query has a "
                 f"single row, or all its labels equal), so {consequence}.")


def _seed(text):
    """--seed: what random_state takes, an integer in [0, 2**32)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}.") from None
    if not 0 <= seed < 2**32:
        raise argparse.ArgumentTypeError(f"must be in [0, 2**32); got {seed}.")
    return seed


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else X


def _models(seed):
    """label -> (model, whether its fit takes groups). The rankers scale
    their own inputs: no scaler in front of them."""
    baseline = make_pipeline(FunctionTransformer(_dense, accept_sparse=True), StandardScaler(), Ridge())
    return {
        "Ridge on labels (pointwise)": (baseline, False),
        "RankNetRanker": (RankNetRanker(random_state=seed), True),
        "LambdaRankRanker": (LambdaRankRanker(random_state=seed), True),
        "ListNetRanker": (ListNetRanker(random_state=seed), True),
    }


def main(argv=None):
    summary = __doc__.splitlines()[0] if __doc__ else None  # None under python -OO
    parser = argparse.ArgumentParser(prog="python -m sklearn_ranknet.demo", description=summary)
    parser.add_argument("train", nargs="?", help="LETOR training file (default: synthetic data)")
    parser.add_argument("test", nargs="?", help="LETOR test file")
    parser.add_argument("--n-features", type=int, default=None,
                        help="feature count of the files (default: the largest feature id in either)")
    parser.add_argument("--zero-based", action="store_true",
                        help="the files number their features from 0 (default: from 1, as LETOR, MSLR-WEB and Yahoo)")
    parser.add_argument("--seed", type=_seed, default=0, help="random_state of the rankers (default: 0)")
    args = parser.parse_args(argv)

    if args.n_features is not None and args.n_features < 1:
        parser.error(f"--n-features must be at least 1; got {args.n_features}.")
    name, (X_train, y_train, q_train, X_test, y_test, q_test) = _load(args, parser)
    print(f"Data: {name}")
    print(f"  train {X_train.shape[0]} rows, {len(np.unique(q_train))} queries; "
          f"test {X_test.shape[0]} rows, {len(np.unique(q_test))} queries; "
          f"{X_train.shape[1]} features\n")
    print(f"{'model':<30}{'NDCG@10':>9}{'MAP':>8}{'fit (s)':>9}", flush=True)
    for label, (model, takes_groups) in _models(args.seed).items():
        fit_params = {"groups": q_train} if takes_groups else {}
        started = time.perf_counter()
        try:
            model.fit(X_train, y_train, **fit_params)
            fit_time = time.perf_counter() - started
            scores = model.predict(X_test)
        except MemoryError:
            # Most often a width far beyond the data: a mistyped --n-features
            # or a stray huge feature id (the baseline densifies X, the
            # rankers' first layer holds a weight per feature and unit).
            source = ("--n-features" if args.n_features is not None
                      else "the largest feature id in the files")
            parser.error(f"{label} ran out of memory on {X_train.shape[0]} rows of "
                         f"{X_train.shape[1]} features (the width set by {source}). "
                         "Check that width, or give fewer rows.")
        ndcg = ndcg_score(y_test, scores, groups=q_test, k=10)
        ap = map_score(y_test, scores, groups=q_test)
        # Flushed: piped (demo ... | tee log), each line shows as its model ends.
        print(f"{label:<30}{ndcg:>9.4f}{ap:>8.4f}{fit_time:>9.2f}", flush=True)
    print("\nNDCG@10: gain 2**label - 1, tied scores averaged, queries without a "
          "relevant document score 1. MAP: relevant means label > 0.")


if __name__ == "__main__":
    main()
