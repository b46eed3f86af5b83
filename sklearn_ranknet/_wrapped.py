"""The way from a fitted meta-estimator to the ranker inside it.

Scorers and ``BaggingRanker.score`` need a property of the ranker that does
the ranking (its ``query_column``, its ``gain``) when they are handed the
estimator a user built around it: a Pipeline, a fitted search, a
TransformedTargetRegressor, a bag. This module is the one place that knows how
to look inside each of them.
"""


def wrapped_chain(estimator):
    """Yield ``estimator``, then each estimator it wraps, outermost first.

    Steps into a Pipeline's last step, a fitted search's ``best_estimator_``,
    a fitted TransformedTargetRegressor's ``regressor_`` and a fitted
    BaggingRanker's first member (its members are alike but for their seeds),
    and stops at an estimator that wraps none of these. A caller stops early
    once it has found what it looks for; a Pipeline is yielded before its last
    step, so a caller can send X through the steps before it.

    Parameters
    ----------
    estimator : estimator instance
        Fitted or not; an unfitted search or bag is yielded and not entered.

    Yields
    ------
    estimator : estimator instance
        ``estimator`` itself first, the innermost estimator last.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_ranknet import LambdaRankRanker
    >>> pipe = make_pipeline(StandardScaler(), LambdaRankRanker())
    >>> [type(e).__name__ for e in wrapped_chain(pipe)]
    ['Pipeline', 'LambdaRankRanker']
    """
    for _ in range(100):  # nested meta-estimators; never a cycle
        yield estimator
        if hasattr(estimator, "steps"):
            estimator = estimator.steps[-1][1]
        elif hasattr(estimator, "best_estimator_"):
            estimator = estimator.best_estimator_
        elif hasattr(estimator, "regressor_"):
            estimator = estimator.regressor_
        elif _is_fitted_bag(estimator):
            estimator = estimator.estimators_[0]
        else:
            return


def _is_fitted_bag(estimator):
    # Duck-typed (BaggingRanker's module imports this one). Other ensembles'
    # estimators_ may be arrays and their members need not be rankers, so only
    # an ensemble that itself takes a query_column, as BaggingRanker does, is
    # entered.
    return hasattr(estimator, "query_column") and len(getattr(estimator, "estimators_", ())) > 0
