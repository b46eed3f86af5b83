"""scikit-learn's estimator checks, for every ranker."""

import inspect
import os
import subprocess
import sys

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_ranknet import (
    BaggingRanker, LambdaRankRanker, LambdaRankRankerCV, ListNetRanker, ListNetRankerCV, RankNetRanker,
    RankNetRankerCV,
)
from sklearn_ranknet._docstrings import sections, with_shared_entries

# Small, seeded instances keep the checks fast.
ESTIMATORS = [
    RankNetRanker(max_iter=20, random_state=0),
    RankNetRanker(hidden_layer_sizes=(5,), solver="lbfgs", max_iter=20, random_state=0),
    RankNetRanker(pair_targets="soft", dropout=0.2, input_noise=0.1, max_iter=20, random_state=0),
    LambdaRankRanker(max_iter=20, random_state=0),
    LambdaRankRanker(hidden_layer_sizes=(5,), metric="map", k=3, ema_momentum=0.9, max_iter=20, random_state=0),
    LambdaRankRanker(pair_weighting="ndcg_loss2++", k=5, feature_scaling=None, max_iter=20, random_state=0),
    ListNetRanker(max_iter=20, random_state=0),
    ListNetRanker(hidden_layer_sizes=(5,), solver="lbfgs", max_iter=20, random_state=0),
    BaggingRanker(LambdaRankRanker(max_iter=5, random_state=0), n_estimators=2, random_state=0),
    BaggingRanker(LambdaRankRanker(max_iter=5, random_state=0), n_estimators=2, bootstrap=True, random_state=0),
    LambdaRankRankerCV({"alpha": [1.0, 20.0]}, cv=2, max_iter=5, random_state=0),
    RankNetRankerCV({"solver": ["adam", "lbfgs"]}, cv=2, max_iter=5, random_state=0),
    ListNetRankerCV({"hidden_layer_sizes": [(4,), (8,)]}, cv=2, max_iter=5, random_state=0),
]


# sample_weight weighs whole queries, so it must be constant within a query
# (as in XGBoost's and LightGBM's rankers). These checks give every row its
# own weight inside the one query of groups=None; the rankers refuse that
# with a ValueError (tests/test_sample_weight.py checks the message).
_ROW_WEIGHT_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": "sample_weight is per query, not per row",
    "check_sample_weight_equivalence_on_sparse_data": "sample_weight is per query, not per row",
    "check_sample_weights_not_overwritten": "sample_weight is per query, not per row",
}


# score(X, y) without query ids would be one query's NDCG for all rows, the
# wrong number for ranking data, so the rankers raise (issue 9, "never a
# silent one-query number"; the message names both fixes). fit(X, y) only
# warns, so every other check still runs.
_NO_GROUPS_CHECKS = {
    "check_fit_score_takes_y": "score without groups or query_column is an error",
    "check_pipeline_consistency": "score without groups or query_column is an error",
}


def _expected_failed_checks(estimator):
    return {**_ROW_WEIGHT_CHECKS, **_NO_GROUPS_CHECKS}


# scikit-learn's checks fit and score without query ids, on data of their
# own: the rankers' warnings that say so are what these tests mean, and
# only noise in the run's summary (other warnings still show).
@pytest.mark.filterwarnings("ignore:.*got no groups.*:UserWarning")
@pytest.mark.filterwarnings("ignore:No groups were given.*:UserWarning")
@pytest.mark.filterwarnings("ignore:fit found no query with two documents.*:UserWarning")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator_class", sorted({type(e) for e in ESTIMATORS}, key=lambda c: c.__name__))
def test_docstring_documents_every_parameter_once(estimator_class):
    # The rankers' shared entries (_docstrings.SHARED_ENTRIES) are filled in
    # where their "[shared: ...]" lines stand; the CV rankers' docstrings are
    # built from the rankers'.
    _, parts = sections(estimator_class.__doc__)
    documented = [line.split(" : ")[0] for line in parts["Parameters"].splitlines() if line and not line[0].isspace()]
    parameters = [name for name in inspect.signature(estimator_class.__init__).parameters if name != "self"]
    assert sorted(documented) == sorted(parameters)
    assert "[shared:" not in estimator_class.__doc__
    attributes = parts["Attributes"]
    if estimator_class.__name__.endswith("Ranker") and estimator_class is not BaggingRanker:
        for name in ("query_column", "position_column"):
            assert name in documented
        for name in ("n_features_in_ :", "missing_fill_ :", "position_propensities_ :"):
            assert attributes.count(name) == 1, name


def test_a_shared_entries_line_must_be_there_and_known():
    class NoMarker:
        """Summary."""

    with pytest.raises(ValueError, match="no \\[shared: ...\\] line"):
        with_shared_entries(NoMarker)

    class Unknown:
        """Summary.

        Parameters
        ----------
        [shared: nothing of the kind]
        """

    with pytest.raises(KeyError, match="nothing of the kind"):
        with_shared_entries(Unknown)


def test_imports_and_fits_under_python_OO():
    # python -OO drops docstrings, which the rankers, the CV and Dask rankers
    # and the demo build theirs from: the package must import all the same.
    code = (
        "import importlib.util, warnings\n"
        "import sklearn_ranknet, sklearn_ranknet.demo\n"
        "from sklearn_ranknet import LambdaRankRanker, LambdaRankRankerCV\n"
        "from sklearn_ranknet.datasets import make_ranking\n"
        "if importlib.util.find_spec('distributed'):\n"
        "    import sklearn_ranknet.dask\n"
        "assert LambdaRankRanker.__doc__ is None and LambdaRankRankerCV.__doc__ is None\n"
        "X, y, q = make_ranking(10, n_features=4, n_informative=2, random_state=0)\n"
        "warnings.simplefilter('ignore')\n"
        "print(LambdaRankRanker(max_iter=1, random_state=0).fit(X, y, q).predict(X[:2]).shape)\n"
    )
    env = {**os.environ, "SKLEARN_RANKNET_WARMUP": "0"}
    done = subprocess.run([sys.executable, "-OO", "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "(2,)"
