"""A validation set of the user's choosing: ``fit(X_val=, y_val=,
groups_val=, sample_weight_val=)``, as scikit-learn's
``HistGradientBoostingRegressor`` names them and LightGBM's ``eval_set``
does the job. Early stopping scores it each epoch instead of holding
queries out of the training data, at any size."""

from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import _check_feature_names, check_array

from ._fit_checks import labels_differ
from ._metadata_columns import metadata_columns, merge_groups, split_columns
from ._validation import check_finite_features, check_relevance_labels, float_column


@dataclass
class ValidationInput:
    """The validation data as given, without the metadata columns of X."""

    X: object
    y: object
    groups: object
    sample_weight: object


def validation_input(ranker, X_val, y_val, groups_val, sample_weight_val):
    """The ranker's validation data (:class:`ValidationInput`), or None
    without ``X_val``; a ValueError for a validation set the fit would not
    use or could not score query by query."""
    if X_val is None and y_val is None:
        for name, value in (("groups_val", groups_val), ("sample_weight_val", sample_weight_val)):
            if value is not None:
                raise ValueError(f"{name} is given without X_val and y_val; give all of them, or none.")
        return None
    if y_val is None or X_val is None:
        given, missing = ("X_val", "y_val") if y_val is None else ("y_val", "X_val")
        raise ValueError(f"{given} is given, but {missing} is not; give both.")
    if ranker.early_stopping is False:
        raise ValueError(
            "X_val and y_val are given while early_stopping=False: the validation set is "
            'what early stopping scores. Set early_stopping=True (or "auto"), or leave them out.'
        )
    if ranker.solver == "lbfgs":
        raise ValueError(
            'X_val and y_val are scored by early stopping, which needs a stochastic solver ("adam" '
            'or "sgd"); L-BFGS stops on its own tolerance (tol).'
        )
    columns = metadata_columns(ranker)
    query_column = columns.get("query_column")
    X_val, query_ids = split_columns(X_val, query_column, columns.get("position_column"))[:2]
    groups_val = merge_groups(groups_val, query_ids, query_column)
    return ValidationInput(X_val, y_val, groups_val, sample_weight_val)


def validation_set(ranker, given, dtype, exponential_gain, remedy):
    """``given`` (a :class:`ValidationInput`) validated against the
    ``ranker`` being fitted (its ``n_features_in_``), in ``dtype`` (the
    training rows'; None keeps its own), arranged as a ``TrainingSet`` (of
    no objective: it is only scored)."""
    from ._base import _summed_duplicates  # the one canonical-CSR rule
    from ._training import TrainingSet

    # The names predict checks: a DataFrame X_val must have the training X's columns.
    _check_feature_names(ranker, given.X, reset=False)
    X = check_array(given.X, accept_sparse="csr", dtype=(np.float64, np.float32), ensure_all_finite=False,
                    input_name="X_val")
    check_finite_features(X, type(ranker).__name__, ranker.feature_scaling)
    if X.shape[1] != ranker.n_features_in_:
        raise ValueError(
            f"X_val has {X.shape[1]} features, but the training X has {ranker.n_features_in_}; "
            "give the validation rows the training rows' columns."
        )
    X = _summed_duplicates(X)
    if dtype is not None:
        X = X.astype(dtype, copy=False)
    y = float_column(given.y, "y_val")
    if len(y) != X.shape[0]:
        raise ValueError(f"y_val has {len(y)} labels but X_val has {X.shape[0]} rows; give one per row.")
    if not np.isfinite(y).all():
        raise ValueError("y_val holds NaN or infinite labels; give finite relevance labels.")
    check_relevance_labels(y, exponential_gain=exponential_gain, input_name="y_val", remedy=remedy)
    groups = given.groups
    if groups is None and len(y) > 1:
        raise ValueError(
            f"X_val has {len(y)} rows but no query ids: give groups_val=<query id per row> (or keep "
            "them in the query_column), or early stopping would score all rows as one query."
        )
    if groups is not None and np.ndim(groups) == 1 and len(groups) != len(y):
        raise ValueError(f"groups_val has {len(groups)} ids but X_val has {len(y)} rows; give one per row.")
    validation = TrainingSet.from_input(X, y, groups, None, given.sample_weight, names=("groups_val", "sample_weight_val"))
    differ = labels_differ(validation)
    if validation.weights is not None:
        differ &= validation.weights > 0
    if not differ.any():
        # Every query would score empty_query_score (or 1) at every epoch,
        # and early stopping would stop after n_iter_no_change epochs.
        raise ValueError(
            "The validation set holds no query (of positive weight) with two documents of different "
            "relevance, so its score cannot change from one epoch to the next and early stopping "
            "could not judge the fit. Check that groups_val holds query ids (not an id per row) and "
            "that y_val holds the graded labels."
        )
    return validation
