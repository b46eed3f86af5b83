"""Rankers, settings and small data sets shared by the tests of the rankers as
scikit-learn estimators: test_worked_example.py, test_learning.py,
test_persistence.py, test_routing_estimators.py, test_input_forms.py,
test_partial_fit.py, test_early_stopping.py and test_bad_input.py. The kernels
themselves are tested in test_lambdas.py, and scikit-learn's generic checks run
in test_common.py.

Tests named after a bug (early stopping at a best score of 0.0, warm start with
changed hyperparameters, failed fits leaving a model behind, ...) were strict
xfails until the bug was fixed."""

import functools

import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state

from sklearn_ranknet._resolve import hidden_layer_sizes
from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet import _network
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import map_score, ndcg_score

RANKERS = [RankNetRanker, LambdaRankRanker, ListNetRanker]
# The Numba kernels run on one thread in most tests: on a loaded machine the
# parallel region's thread start-up dominates on these tiny batches (see
# test_persistence.py::test_n_jobs_gives_identical_models for the threaded
# path).
FAST = dict(n_jobs=1)


@functools.lru_cache(maxsize=None)
def _train_test():
    """Two independent draws of the same make_ranking problem, standardized
    with the training statistics. Read-only: callers must not modify."""
    X_train, y_train, q_train = make_ranking(80, random_state=0)
    X_test, y_test, q_test = make_ranking(80, random_state=1)
    scaler = StandardScaler().fit(X_train)
    out = (scaler.transform(X_train), y_train, q_train, scaler.transform(X_test), y_test, q_test)
    for a in out:
        a.setflags(write=False)
    return out


def _small(n_queries=25, seed=0, max_docs=15):
    """Small standardized make_ranking data (fresh, writable arrays)."""
    X, y, qid = make_ranking(n_queries, max_docs=max_docs, random_state=seed)
    return StandardScaler().fit_transform(X), y, qid


def _random_ndcg(y, qid, n_draws=20, seed=0, k=10):
    rng = np.random.RandomState(seed)
    return float(np.mean([ndcg_score(y, rng.rand(len(y)), groups=qid, k=k) for _ in range(n_draws)]))


def _random_map(y, qid, n_draws=20, seed=0):
    rng = np.random.RandomState(seed)
    return float(np.mean([map_score(y, rng.rand(len(y)), groups=qid) for _ in range(n_draws)]))


def _initial_params(ranker, n_features):
    """The weights a fresh fit starts from: the first draws of
    check_random_state(random_state) (see BaseRanker._fit), for the fitted
    width of a fitted ranker."""
    rng = check_random_state(ranker.random_state)
    return _network.init_params(n_features, _widths(ranker), ranker.activation, rng)


def _widths(ranker):
    """The hidden layers of a fitted ranker, or those its parameter gives
    (for "auto", those of a fit on small data, as the tests' fits are)."""
    if hasattr(ranker, "coefs_"):
        return tuple(c.shape[1] for c in ranker.coefs_[:-1])
    if isinstance(ranker.hidden_layer_sizes, str):
        return ranker._AUTO.hidden_layer_sizes[0]
    return hidden_layer_sizes(ranker.hidden_layer_sizes)


# Short fits on twenty queries whose values float32 cannot hold exactly.
SHORT_FIT = dict(hidden_layer_sizes=(4,), max_iter=3, random_state=0)


def _twenty_queries(n_queries=20, random_state=0):
    X, y, qid = make_ranking(n_queries=n_queries, n_features=5, n_informative=4, min_docs=4, max_docs=10,
                             random_state=random_state)
    return X * 37.1 + 0.123456789, y, qid  # values float32 cannot hold exactly
