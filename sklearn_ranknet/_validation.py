"""Checks on relevance labels shared by the metrics and the estimators."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import column_or_1d

MAX_EXPONENTIAL_LABEL = 30


LINEAR_GAIN_REMEDY = 'Use gain="linear" or rescale the labels.'


def check_relevance_labels(
    y, *, exponential_gain, as_gains=True, input_name="y_true", remedy=LINEAR_GAIN_REMEDY
):
    """Raise ValueError unless every label is >= 0 (and <= 30 when the gain
    is exponential). With ``as_gains``, the labels become NDCG gains that are
    summed: no positive label below the smallest normal float, none so large
    that a query's sum overflows. Without it (MAP, which only asks whether a
    label is > 0) any finite label >= 0 passes. ``y`` is a finite numeric
    array, already validated; ``remedy`` ends the message about labels above
    30."""
    if len(y) == 0:
        return
    lowest = y.min()
    if lowest < 0:
        raise ValueError(
            f"{input_name} holds negative relevance labels (smallest {lowest:g}); "
            "labels must be >= 0."
        )
    tiny = np.finfo(np.float64).tiny
    # Integer labels cannot be that small. Two comparisons rather than a
    # masked np.min(y, where=y > 0), which numpy does not vectorize: 0.8 ms
    # against 8 ms on 1,000,000 labels, which had doubled ndcg_score's time.
    if as_gains and y.dtype.kind == "f" and np.any((y > 0) & (y < tiny)):
        # Gains, DCGs and their reciprocals would lose their precision or
        # overflow: NDCG would be a wrong number, training would blow up.
        raise ValueError(
            f"{input_name} holds positive labels as small as {y[y > 0].min():g}, "
            f"below the smallest normal float ({tiny:g}), where gains lose their "
            "precision. Rescale the labels."
        )
    highest = y.max()
    if as_gains and highest > np.finfo(np.float64).max / len(y):
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
    stopping use NDCG's exponential gain) rescaling or another ranker; for
    any other estimator (a BaggingRanker's regressor), rescaling."""
    params = estimator.get_params()
    if "gain" in params:
        return LINEAR_GAIN_REMEDY
    if "early_stopping" not in params:
        return "Rescale the labels (e.g. ranks or bins 0..4)."
    return (
        f"{type(estimator).__name__} scores with that gain (score() and early "
        "stopping), so rescale the labels (e.g. ranks or bins 0..4), or use "
        'LambdaRankRanker or ListNetRanker with gain="linear".'
    )


def float_column(values, input_name):
    """``values`` as a 1-d float64 array (a single column is accepted), as
    scikit-learn's ``column_or_1d``, whose error names every input "y"."""
    try:
        shape = np.shape(values)
    except ValueError:  # numpy refuses nested sequences of unequal lengths, naming no input
        raise ValueError(f"{input_name} must be 1-d, one value per row; got nested sequences of unequal lengths.") from None
    if len(shape) == 0 or len(shape) > 2 or (len(shape) == 2 and shape[1] != 1):  # column_or_1d names a scalar "y"
        raise ValueError(
            f"{input_name} must be 1-d, one value per row; got an array of shape {shape}."
        )
    text = first_text(values)
    if text is not None:
        # As scikit-learn's metrics: text is not silently read as numbers.
        raise ValueError(f"{input_name} must hold numbers; got text (e.g. {shown(text)!r}).")
    kind = getattr(getattr(values, "dtype", None), "kind", None) or np.asarray(values).dtype.kind
    if kind == "c":
        raise ValueError(f"{input_name} must hold real numbers; got complex values.")
    if kind in "mM":
        # numpy would read them as counts of their unit, silently.
        raise ValueError(
            f"{input_name} must hold numbers; got {np.asarray(values).dtype} values. Convert them "
            "first, e.g. seconds since a reference time as floats."
        )
    column = column_or_1d(values, dtype=np.float64, input_name=input_name)
    # Integers from 2**53 on (int64, or Python ints held as objects) may
    # round onto one float; 2**53 + 1 rounds down to 2**53 itself.
    if kind in "iuO" and column.size and np.abs(column).max() >= 2.0**53:
        _check_integers_are_exact(values, column, input_name)
    return column


def _check_integers_are_exact(values, column, input_name):
    """float64 holds integers exactly only up to 2**53: past it, distinct
    integers may round to one float (rounding keeps their order otherwise),
    and rows that differ would tie."""
    try:
        n_distinct = len(np.unique(np.asarray(values).reshape(-1)))
    except TypeError:  # objects that do not sort: nothing to compare
        return
    if len(np.unique(column)) < n_distinct:
        raise ValueError(
            f"{input_name} holds integers of magnitude 2**53 = {2**53:,} or more that differ but "
            "are one number in float64, so their rows would tie. Subtract a common offset first "
            "(e.g. the smallest value), or convert to float64 yourself if those ties are "
            "acceptable."
        )


def first_text(values):
    """The first string (or bytes) ``values`` holds, None if it holds none:
    whether text arrives as a numpy string array, a list or an object array
    or pandas Series of str (which numpy would read as numbers)."""
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind is None:  # a list: numpy says what it holds
        values = np.asarray(values)
        kind = values.dtype.kind
    if kind in "USV":
        return np.ravel(values)[0] if np.size(values) else None
    if kind == "O":
        return next((v for v in np.ravel(np.asarray(values, dtype=object)) if isinstance(v, (str, bytes))), None)
    return None


def shown(value):
    """``value`` as an error message should show it: a numpy scalar as the
    Python value it holds (NumPy 2's repr would print ``np.int64(5)`` for a
    query id the user wrote as 5)."""
    return value.item() if isinstance(value, np.generic) else value


def check_finite_features(X, owner, feature_scaling="piecewise"):
    """A ValueError if the validated ``X`` (dense or CSR) holds an infinity,
    or NaN when ``feature_scaling`` is None. Missing values (NaN) are
    learned by the input scaling (``_inputs.InputScaling``), which a ranker
    without one does not have. scikit-learn's own message would point at
    HistGradientBoosting; this one says what the ranker does with missing
    values."""
    values = X.data if sp.issparse(X) else X
    if np.isfinite(values).all():
        return
    if np.isinf(values).any():
        raise ValueError(
            "Input X contains infinity or a value too large for its dtype; give finite features "
            f"(clip them, or replace the infinities with np.nan, which {owner} reads as missing)."
        )
    if feature_scaling is None:
        raise ValueError(
            f"Input X contains NaN. {owner} learns from missing values through its input scaling, "
            "and feature_scaling=None has none: use feature_scaling='piecewise' (the default), "
            "'standard' or 'log1p', or impute them first (e.g. "
            f"make_pipeline(SimpleImputer(add_indicator=True), {owner}(feature_scaling=None)))."
        )
