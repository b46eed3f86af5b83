"""scikit-learn's estimator checks, for both rankers."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_ranknet import LambdaRankRanker, RankNetRanker

# Small, seeded instances keep the checks fast. No expected failures.
ESTIMATORS = [
    RankNetRanker(max_iter=20, random_state=0),
    RankNetRanker(hidden_layer_sizes=(5,), solver="lbfgs", max_iter=20, random_state=0),
    LambdaRankRanker(max_iter=20, random_state=0),
    LambdaRankRanker(hidden_layer_sizes=(5,), metric="map", k=3, max_iter=20, random_state=0),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
