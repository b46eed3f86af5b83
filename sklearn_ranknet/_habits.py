"""Answers to what users of LightGBM's and XGBoost's rankers write by habit:
their keyword arguments of ``fit``, and query ids left among the features.

``LGBMRanker.fit`` and ``XGBRanker.fit`` take ``group=`` (query sizes, in
row order) and XGBoost ``qid=`` (an id per row); here ``groups=`` takes an id
per row, in any order. And a DataFrame that still holds its id column,
passed with ``groups=df["qid"]``, would train on the ids as a feature.
"""

import warnings

import numpy as np
import scipy.sparse as sp

#: Keyword arguments of the peers' ``fit``, and what to give here instead.
PEER_KEYWORDS = {
    "group": (
        "groups=<query id per row>. LightGBM's and XGBoost's group= takes the size of each "
        "query, in row order; the ids of such sizes are np.repeat(np.arange(len(sizes)), sizes)"
    ),
    "qid": "groups=qid: XGBoost's qid= holds a query id per row, which is what groups= takes",
    "eval_set": (
        "X_val=, y_val= and groups_val= (one validation set, which early stopping scores; "
        "HistGradientBoostingRegressor's names)"
    ),
}
#: Rows compared before a whole column is: most columns differ from the ids
#: in their first rows.
_FIRST_ROWS = 64


def refuse_unexpected_keywords(owner, method, unexpected):
    """Raise the TypeError Python would for ``unexpected`` keyword arguments
    of ``owner.method``, naming this package's spelling when the argument is
    one of LightGBM's or XGBoost's (:data:`PEER_KEYWORDS`)."""
    if not unexpected:
        return
    name = next(iter(unexpected))
    message = f"{owner}.{method}() got an unexpected keyword argument {name!r}"
    if name in PEER_KEYWORDS:
        message += f"; give {PEER_KEYWORDS[name]}"
    raise TypeError(message + ".")


def warn_if_a_column_holds_the_groups(X, groups, feature_names, stacklevel):
    """Warn when a column of ``X`` (dense, the features a fit trains on)
    equals ``groups`` row for row: the query ids left among the features,
    which ranks by the id (and never generalizes to new queries).
    ``feature_names`` (``feature_names_in_`` or None) names the column."""
    if groups is None or sp.issparse(X) or X.ndim != 2 or X.shape[0] < 2:
        return
    ids = np.asarray(groups)
    if ids.dtype.kind not in "biuf" or ids.shape != (X.shape[0],) or np.all(ids == ids[0]):
        return
    first = min(_FIRST_ROWS, X.shape[0])
    candidates = np.flatnonzero(np.all(X[:first] == ids[:first, None], axis=0))
    for column in candidates:
        if np.array_equal(X[:, column], ids):
            name = repr(feature_names[column]) if feature_names is not None else f"{column} (counted from 0)"
            warnings.warn(
                f"Column {name} of X equals groups row for row: the query ids are among the "
                "features, and the ranker would rank by them. Drop the column from X, or keep it "
                "there and name it with query_column (the ranker then reads the ids from it "
                "and drops it from the features).",
                UserWarning,
                stacklevel=stacklevel,
            )
            return
