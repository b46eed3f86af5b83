"""Checks on relevance labels shared by the metrics and the estimators."""

import numpy as np

MAX_EXPONENTIAL_LABEL = 30


def check_relevance_labels(y, *, exponential_gain, input_name="y_true"):
    """Raise ValueError unless every label is >= 0 (and <= 30 when the gain
    is exponential). ``y`` is a finite float array, already validated."""
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
            f"2**label - 1 allows at most {MAX_EXPONENTIAL_LABEL}. Use "
            'gain="linear" or rescale the labels.'
        )
