"""Checks on relevance labels shared by the metrics and the estimators."""

import numpy as np

MAX_EXPONENTIAL_LABEL = 30


LINEAR_GAIN_REMEDY = 'Use gain="linear" or rescale the labels.'


def check_relevance_labels(y, *, exponential_gain, input_name="y_true", remedy=LINEAR_GAIN_REMEDY):
    """Raise ValueError unless every label is >= 0 (and <= 30 when the gain
    is exponential). ``y`` is a finite float array, already validated;
    ``remedy`` ends the message about labels above 30."""
    if len(y) == 0:
        return
    lowest = y.min()
    if lowest < 0:
        raise ValueError(
            f"{input_name} holds negative relevance labels (smallest {lowest:g}); "
            "labels must be >= 0."
        )
    highest = y.max()
    if highest > np.finfo(np.float64).max / len(y):
        raise ValueError(
            f"{input_name} holds labels up to {highest:g}: too large to sum "
            "without overflow. Rescale the labels."
        )
    if exponential_gain and highest > MAX_EXPONENTIAL_LABEL:
        raise ValueError(
            f"{input_name} holds labels up to {highest:g}, but exponential gain "
            f"2**label - 1 allows at most {MAX_EXPONENTIAL_LABEL}. {remedy}"
        )


def label_remedy(estimator):
    """What a ranker's user can do about labels above 30: the gain
    parameter where it has one; otherwise (RankNet, whose score and early
    stopping use NDCG's exponential gain) rescaling or another ranker."""
    if "gain" in estimator.get_params():
        return LINEAR_GAIN_REMEDY
    return (
        f"{type(estimator).__name__} scores with that gain (score() and early "
        "stopping), so rescale the labels (e.g. ranks or bins 0..4), or use "
        'LambdaRankRanker or ListNetRanker with gain="linear".'
    )
