"""Query-aware ranking metrics and scorers for model selection.

Every function takes one relevance label and one score per row, plus
``groups``: the query id of each row. The metric is computed query by query
and averaged over queries.

Conventions
-----------
- **Gain** (NDCG): ``gain="exponential"`` uses ``2**label - 1`` (LightGBM,
  XGBoost); ``"linear"`` uses ``label`` (scikit-learn, trec_eval).
- **Discount**: ``1 / log2(rank + 1)`` with ranks starting at 1 (NDCG; RR
  and ERR discount by ``1 / rank``).
- **Ties** in ``y_score``: ``ignore_ties=False`` gives the expected value over
  every ordering of the tied documents, so the result does not depend on the
  input order (for every metric). ``ignore_ties=True`` ranks tied documents
  in input order (LightGBM, XGBoost) and is faster.
- **Empty queries**: a query whose ideal DCG is 0 (for AP, RR and ERR: with
  no label > 0) scores ``empty_query_score``: 1.0 by default (LightGBM,
  XGBoost), 0.0 as in scikit-learn and trec_eval, or ``None`` to leave such
  queries out of the mean.
- **MAP**: a document is relevant when its label is > 0. AP@k sums the
  precision at each relevant rank up to k and divides by ``min(k, R)``, where
  R is the number of relevant documents of the query.
- **MRR**: relevant means label > 0, as for MAP. RR@k is 1 / the rank of
  the first relevant document, 0 when it is below rank k.
- **ERR** (the cascade model of Chapelle et al., 2009): the document at
  rank r stops the user with chance ``R = (2**label - 1) / 2**max_label``,
  and ERR@k is ``sum over r <= k of R_r * prod_{i < r} (1 - R_i) / r``.
  ``max_label=None`` is the largest label of ``y_true``, over all queries.
  ERR is not normalized: it is below 1 even for an ideal ranking.
- ``k=None`` means the whole list.
- Labels must be finite and >= 0 (a positive label no smaller than the
  smallest normal float, 2.2e-308); with exponential gain they must be <= 30
  (LightGBM's limit: ``2**label`` would swamp every other grade).
"""

import functools
import sys
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn import config_context
from sklearn.metrics._scorer import _Scorer  # what make_scorer builds
from sklearn.utils import assert_all_finite
from sklearn.utils._param_validation import Interval, StrOptions, validate_params
from sklearn.utils.metadata_routing import _routing_enabled

from ._kernels import metrics as metric_kernels
from ._groups import group_rows, query_weights
from ._jit import as_kernel_array, effective_n_jobs, over_queries
from ._metadata_columns import merge_groups, query_column_of, query_ids_in
from ._validation import MAX_EXPONENTIAL_LABEL, check_relevance_labels, float_column

__all__ = [
    "ndcg_score",
    "map_score",
    "mrr_score",
    "err_score",
    "ndcg_per_query",
    "ap_per_query",
    "rr_per_query",
    "err_per_query",
    "ndcg_scorer",
    "map_scorer",
    "mrr_scorer",
    "err_scorer",
]

_COMMON_CONSTRAINTS = {
    "y_true": ["array-like"],
    "y_score": ["array-like"],
    "groups": ["array-like", None],
    "k": [Interval(Integral, 1, None, closed="left"), None],
    "ignore_ties": ["boolean"],
    "empty_query_score": [Interval(Real, 0, 1, closed="both"), None],
}
_MEAN_CONSTRAINTS = {"sample_weight": ["array-like", None]}
_NDCG_CONSTRAINTS = {
    **_COMMON_CONSTRAINTS,
    "gain": [StrOptions({"exponential", "linear"})],
}
# Merged here, not inside the decorators: Sphinx's source reader (viewcode's
# [source] links) fails on a ``{**a, **b}`` written in a decorator.
_NDCG_MEAN_CONSTRAINTS = {**_NDCG_CONSTRAINTS, **_MEAN_CONSTRAINTS}
_MAP_MEAN_CONSTRAINTS = {**_COMMON_CONSTRAINTS, **_MEAN_CONSTRAINTS}
_MRR_MEAN_CONSTRAINTS = {**_COMMON_CONSTRAINTS, **_MEAN_CONSTRAINTS}
# Labels are at most 30 (the exponential gain's limit), so a scale's top
# grade is too; 2**max_label must stay a float.
_ERR_CONSTRAINTS = {
    **_COMMON_CONSTRAINTS,
    "max_label": [Interval(Real, 0, MAX_EXPONENTIAL_LABEL, closed="both"), None],
}
_ERR_MEAN_CONSTRAINTS = {**_ERR_CONSTRAINTS, **_MEAN_CONSTRAINTS}


def _refused_as_a_scorer(scorer_name, what_it_is):
    """Say so when a metric or a scorer factory is given where a scorer goes
    (``scoring=ndcg_score`` or ``scoring=ndcg_scorer`` for
    ``scoring=ndcg_scorer()``): a search calls it as ``scorer(estimator, X,
    y)``. scikit-learn names that mistake for its own metrics only (by their
    module); here Python's complaint about positional arguments reached the
    user, in a search only as nan scores and a warning about a failed score.
    """

    def decorate(function):
        @functools.wraps(function)
        def checked(*args, **kwargs):
            name = function.__name__
            if args and hasattr(args[0], "fit"):
                raise TypeError(
                    f"{name} {what_it_is}, and scoring= calls scorer(estimator, X, y). Pass "
                    f"scoring={scorer_name}() (or {scorer_name}(k=5)), not scoring={name}."
                )
            if name == scorer_name and len(args) >= 2:
                # make_scorer(ndcg_scorer) calls it with (y_true, y_pred).
                raise TypeError(
                    f"{name} {what_it_is}; it takes only k and keyword options, but was called "
                    f"with {len(args)} positional arguments, as make_scorer({name}) calls its "
                    f"function with (y_true, y_pred). {name}() is already a scorer: pass "
                    f"scoring={name}() (or {name}(k=5)) without make_scorer."
                )
            return function(*args, **kwargs)

        return checked

    return decorate


def _is_a_metric(scorer_name):
    return _refused_as_a_scorer(
        scorer_name, "is a metric, not a scorer: it takes (y_true, y_score, groups=...)"
    )


# --------------------------------------------------------------------------
# Per-query values


@_is_a_metric("ndcg_scorer")
@validate_params(_NDCG_CONSTRAINTS, prefer_skip_nested_validation=True)
def ndcg_per_query(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    gain="exponential",
    ignore_ties=False,
    empty_query_score=1.0,
):
    """NDCG@k of each query, for significance tests and error analysis.

    Takes the same arguments as :func:`ndcg_score` (but ``sample_weight``,
    which only weighs the mean); ``ndcg_score`` is the mean of the values
    returned here.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Graded relevance of each row, finite and >= 0; at most 30 with
        ``gain="exponential"``.
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row, in any order; ``None`` is one query (and
        warns when there is more than one row).
    k : int, default=None
        Only the top ``k`` ranks count; ``None`` uses every rank.
    gain : {"exponential", "linear"}, default="exponential"
        ``2**label - 1`` or ``label``.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents; if True, they are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Value of a query whose ideal DCG is 0; ``None`` leaves such queries
        out.

    Returns
    -------
    query_ids : ndarray of shape (n_queries,)
        The sorted query ids (as ``np.unique(groups)``). With
        ``empty_query_score=None`` the queries with ideal DCG 0 are left out.
    values : ndarray of shape (n_queries,)
        NDCG@k of each query in ``query_ids``, in [0, 1].

    Examples
    --------
    >>> from sklearn_ranknet.metrics import ndcg_per_query
    >>> ids, values = ndcg_per_query(
    ...     [2, 0, 1, 0, 0], [0.9, 0.5, 0.1, 0.3, 0.3], groups=["a", "a", "a", "b", "b"]
    ... )
    >>> ids.tolist(), values.round(3).tolist()
    (['a', 'b'], [0.964, 1.0])
    """
    query_groups, values, empty = _ndcg_values(y_true, y_score, groups, k, gain, ignore_ties)
    return _fill_empty(query_groups.query_ids, values, empty, empty_query_score)


def _ndcg_values(y_true, y_score, groups, k, gain, ignore_ties):
    """NDCG@k of every query and which queries are empty."""
    y_true, y_score, query_groups = _check_targets(y_true, y_score, groups)
    check_relevance_labels(y_true, exponential_gain=gain == "exponential")
    values, empty = _grouped_ndcg_values(query_groups, y_true, y_score, k, gain, ignore_ties)
    return query_groups, values, empty


def _grouped_ndcg_values(query_groups, y_true, y_score, k, gain, ignore_ties):
    """NDCG@k of every query of already validated float64 labels and scores,
    grouped by ``query_groups``; and which queries are empty. For callers
    that score the same queries again and again (early stopping)."""
    longest = int(query_groups.sizes.max())
    values, empty = _outputs(query_groups)
    _per_query(
        metric_kernels.ndcg_chunk,
        query_groups,
        _arranged(query_groups, y_true),
        _arranged(query_groups, y_score),
        gain == "exponential",
        metric_kernels.discount_table(longest),
        _cap(k, longest),
        ignore_ties,
        values,
        empty,
    )
    return values, empty


@_is_a_metric("map_scorer")
@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def ap_per_query(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    ignore_ties=False,
    empty_query_score=1.0,
):
    """Average precision AP@k of each query.

    Takes the same arguments as :func:`map_score` (but ``sample_weight``,
    which only weighs the mean); ``map_score`` is the mean of the values
    returned here.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance of each row, finite and >= 0; any positive label counts as
        relevant.
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row, in any order; ``None`` is one query (and
        warns when there is more than one row).
    k : int, default=None
        Only the top ``k`` ranks count (AP@k); ``None`` uses every rank.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents; if True, they are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Value of a query with no relevant document; ``None`` leaves such
        queries out.

    Returns
    -------
    query_ids : ndarray of shape (n_queries,)
        The sorted query ids (as ``np.unique(groups)``). With
        ``empty_query_score=None`` the queries with no relevant document are
        left out.
    values : ndarray of shape (n_queries,)
        AP@k of each query in ``query_ids``, in [0, 1].

    Examples
    --------
    Query 7 ties an irrelevant and a relevant document at ranks 2-3, so its
    AP averages both orders, (1 + 2/3) / 2 and (1 + 2/2) / 2; query 8 has no
    relevant document and scores ``empty_query_score``:

    >>> from sklearn_ranknet.metrics import ap_per_query
    >>> ids, values = ap_per_query([1, 0, 1, 0, 0], [3, 2, 2, 2, 1], groups=[7, 7, 7, 8, 8])
    >>> ids.tolist(), values.round(4).tolist()
    ([7, 8], [0.9167, 1.0])
    """
    query_groups, values, empty = _ap_values(y_true, y_score, groups, k, ignore_ties)
    return _fill_empty(query_groups.query_ids, values, empty, empty_query_score)


def _ap_values(y_true, y_score, groups, k, ignore_ties):
    """AP@k of every query and which queries have no relevant document."""
    y_true, y_score, query_groups = _check_targets(y_true, y_score, groups)
    check_relevance_labels(y_true, exponential_gain=False, as_gains=False)  # relevant: > 0
    k = _cap(k, int(query_groups.sizes.max()))
    labels, scores = _arranged(query_groups, y_true), _arranged(query_groups, y_score)
    values, empty = _outputs(query_groups)
    pending = np.empty(query_groups.n_queries, dtype=np.bool_)
    _per_query(metric_kernels.ap_whole_chunk, query_groups, labels, scores, k, values, empty, pending)
    if pending.any():  # AP@k, or tied relevant and irrelevant scores
        _per_query(metric_kernels.ap_ranked_chunk, query_groups, labels, scores, k, ignore_ties,
                   values, empty, pending, only=pending)
    return query_groups, values, empty


@_is_a_metric("mrr_scorer")
@validate_params(_COMMON_CONSTRAINTS, prefer_skip_nested_validation=True)
def rr_per_query(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    ignore_ties=False,
    empty_query_score=1.0,
):
    """Reciprocal rank RR@k of each query.

    Takes the same arguments as :func:`mrr_score` (but ``sample_weight``,
    which only weighs the mean); ``mrr_score`` is the mean of the values
    returned here.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance of each row, finite and >= 0; any positive label counts as
        relevant.
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row, in any order; ``None`` is one query (and
        warns when there is more than one row).
    k : int, default=None
        RR@k is 0 when the first relevant document is below rank ``k``;
        ``None`` uses every rank.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents; if True, they are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Value of a query with no relevant document; ``None`` leaves such
        queries out.

    Returns
    -------
    query_ids : ndarray of shape (n_queries,)
        The sorted query ids (as ``np.unique(groups)``). With
        ``empty_query_score=None`` the queries with no relevant document are
        left out.
    values : ndarray of shape (n_queries,)
        RR@k of each query in ``query_ids``, in [0, 1].

    Raises
    ------
    ValueError
        On inputs of different lengths, NaN or infinite values, or negative
        labels.

    See Also
    --------
    mrr_score : The mean over queries.
    ap_per_query : Average precision, which counts every relevant document.

    Examples
    --------
    Query 7 ranks an irrelevant document first, then ties a relevant and an
    irrelevant one at ranks 2-3: its RR averages both orders, (1/2 + 1/3) /
    2; query 8 has no relevant document and scores ``empty_query_score``:

    >>> from sklearn_ranknet.metrics import rr_per_query
    >>> ids, values = rr_per_query([0, 1, 0, 0, 0], [3, 2, 2, 2, 1], groups=[7, 7, 7, 8, 8])
    >>> ids.tolist(), values.round(4).tolist()
    ([7, 8], [0.4167, 1.0])
    >>> rr_per_query([0, 1, 0, 0, 0], [3, 2, 2, 2, 1], groups=[7, 7, 7, 8, 8], k=1)[1].tolist()
    [0.0, 1.0]
    """
    query_groups, values, empty = _rr_values(y_true, y_score, groups, k, ignore_ties)
    return _fill_empty(query_groups.query_ids, values, empty, empty_query_score)


def _rr_values(y_true, y_score, groups, k, ignore_ties):
    """RR@k of every query and which queries have no relevant document."""
    y_true, y_score, query_groups = _check_targets(y_true, y_score, groups)
    check_relevance_labels(y_true, exponential_gain=False, as_gains=False)  # relevant: > 0
    values, empty = _outputs(query_groups)
    _per_query(
        metric_kernels.rr_chunk,
        query_groups,
        _arranged(query_groups, y_true),
        _arranged(query_groups, y_score),
        _cap(k, int(query_groups.sizes.max())),
        ignore_ties,
        values,
        empty,
    )
    return query_groups, values, empty


@_is_a_metric("err_scorer")
@validate_params(_ERR_CONSTRAINTS, prefer_skip_nested_validation=True)
def err_per_query(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    max_label=None,
    ignore_ties=False,
    empty_query_score=1.0,
):
    """Expected reciprocal rank ERR@k of each query.

    Takes the same arguments as :func:`err_score` (but ``sample_weight``,
    which only weighs the mean); ``err_score`` is the mean of the values
    returned here.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Graded relevance of each row, finite, >= 0 and at most
        ``max_label`` (and 30).
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row, in any order; ``None`` is one query (and
        warns when there is more than one row).
    k : int, default=None
        Only the top ``k`` ranks count; ``None`` uses every rank.
    max_label : float in [0, 30] or None, default=None
        The top grade of the label scale: a document of that grade stops
        the user with chance ``1 - 2**-max_label``. ``None`` uses the
        largest label in ``y_true``, over all queries; fix it (e.g.
        ``max_label=4`` for grades 0-4) where values of different calls are
        compared, as :func:`err_score` says.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents; if True, they are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Value of a query with no label > 0; ``None`` leaves such queries
        out.

    Returns
    -------
    query_ids : ndarray of shape (n_queries,)
        The sorted query ids (as ``np.unique(groups)``). With
        ``empty_query_score=None`` the queries with no label > 0 are left
        out.
    values : ndarray of shape (n_queries,)
        ERR@k of each query in ``query_ids``, in [0, 1).

    Raises
    ------
    ValueError
        On inputs of different lengths, NaN or infinite values, negative
        labels, labels above 30 or above ``max_label``.

    See Also
    --------
    err_score : The mean over queries, and the definition.
    rr_per_query : The reciprocal rank of the first relevant document.

    Examples
    --------
    Grades 0-2 (``max_label=2``: stop chances 0, 1/4 and 3/4). Query 1 ranks
    its grade-2 document first, then ties a grade-1 and a grade-0 document:
    after rank 1 the user reads on with chance 1/4 and stops at rank 2 or 3
    with chance 1/4, so its ERR is 3/4 + (1/4) (1/4) (1/2 + 1/3) / 2:

    >>> from sklearn_ranknet.metrics import err_per_query
    >>> ids, values = err_per_query(
    ...     [2, 1, 0, 0, 0], [0.9, 0.5, 0.5, 0.3, 0.3], groups=[1, 1, 1, 2, 2]
    ... )
    >>> ids.tolist(), values.round(4).tolist()
    ([1, 2], [0.776, 1.0])
    >>> err_per_query([2, 1, 0], [0.9, 0.5, 0.5], groups=[1, 1, 1], max_label=4)[1].round(4).tolist()
    [0.2087]
    """
    query_groups, values, empty = _err_values(y_true, y_score, groups, k, max_label, ignore_ties)
    return _fill_empty(query_groups.query_ids, values, empty, empty_query_score)


_ERR_LABEL_REMEDY = (
    "ERR's stop chance (2**label - 1) / 2**max_label is exponential in the label: rescale "
    "the labels (e.g. grades 0..4)."
)


def _err_values(y_true, y_score, groups, k, max_label, ignore_ties):
    """ERR@k of every query and which queries have no label > 0."""
    y_true, y_score, query_groups = _check_targets(y_true, y_score, groups)
    check_relevance_labels(y_true, exponential_gain=True, remedy=_ERR_LABEL_REMEDY)
    values, empty = _outputs(query_groups)
    _per_query(
        metric_kernels.err_chunk,
        query_groups,
        _arranged(query_groups, y_true),
        _arranged(query_groups, y_score),
        2.0 ** _top_grade(y_true, max_label),
        _cap(k, int(query_groups.sizes.max())),
        ignore_ties,
        values,
        empty,
    )
    return query_groups, values, empty


def _top_grade(y_true, max_label):
    """ERR's ``max_label`` as a float: the largest label when None (over all
    queries, so that a query of weak labels is not scored as if its best
    were perfect), else checked to hold every label."""
    highest = float(y_true.max())
    if max_label is None:
        return highest
    if highest > max_label:
        raise ValueError(
            f"y_true holds labels up to {highest:g}, above max_label={max_label:g}. max_label is "
            f"the top grade of the label scale (e.g. 4 for grades 0-4): set it to at least "
            f"{highest:g}, or to None to use the largest label."
        )
    return float(max_label)


# --------------------------------------------------------------------------
# Means over queries


@_is_a_metric("ndcg_scorer")
@validate_params(_NDCG_MEAN_CONSTRAINTS, prefer_skip_nested_validation=True)
def ndcg_score(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    gain="exponential",
    ignore_ties=False,
    empty_query_score=1.0,
    sample_weight=None,
):
    """Normalized discounted cumulative gain, averaged over queries.

    For each query, the DCG@k of the documents ranked by ``y_score`` is
    divided by the DCG@k of the ideal ranking (by ``y_true``). DCG@k is
    ``sum over ranks r <= k of gain(label at r) / log2(r + 1)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Graded relevance of each row, finite and >= 0 (e.g. 0 = bad ...
        4 = perfect). At most 30 with ``gain="exponential"``.
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row: ints, strings or any sortable values, in any
        order; rows of one query need not be adjacent. ``None`` treats all
        rows as one query, and warns when there is more than one row; ids
        that make every row a query of its own (document ids) warn too.
    k : int, default=None
        Only the top ``k`` ranks count (NDCG@k). ``None`` uses every rank.
    gain : {"exponential", "linear"}, default="exponential"
        ``2**label - 1`` or ``label``.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents. If True, tied documents are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Score of a query whose ideal DCG is 0 (no document with a positive
        label). ``None`` leaves such queries out of the mean.
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each row's query, the same on every row of a query: the
        result is the weighted mean over queries. ``None`` weighs queries
        equally.

    Returns
    -------
    score : float
        Mean NDCG@k over queries, in [0, 1].

    Raises
    ------
    ValueError
        On inputs of different lengths, NaN or infinite values, negative
        labels, labels above 30 with exponential gain, or when
        ``empty_query_score=None`` leaves no query to average.

    See Also
    --------
    ndcg_per_query : The value of each query.
    ndcg_scorer : A scorer for GridSearchCV and cross_validate.

    Examples
    --------
    Two queries; in query 1 the documents labelled 3 and 2 tie at the top,
    so by default its NDCG is the mean over both orderings of the tie, while
    ``ignore_ties=True`` keeps the input order (which happens to be ideal):

    >>> from sklearn_ranknet.metrics import ndcg_score
    >>> y_true = [3, 2, 0, 0, 1, 1]
    >>> y_score = [0.5, 0.5, 0.1, 0.2, 0.9, 0.4]
    >>> groups = [1, 1, 1, 2, 2, 2]
    >>> round(ndcg_score(y_true, y_score, groups=groups), 4)
    0.9585
    >>> ndcg_score(y_true, y_score, groups=groups, ignore_ties=True)
    1.0
    >>> round(ndcg_score(y_true, y_score, groups=groups, k=1, gain="linear"), 4)
    0.9167
    """
    query_groups, values, empty = _ndcg_values(y_true, y_score, groups, k, gain, ignore_ties)
    return _mean_over_queries(query_groups, values, empty, empty_query_score, sample_weight)


@_is_a_metric("map_scorer")
@validate_params(_MAP_MEAN_CONSTRAINTS, prefer_skip_nested_validation=True)
def map_score(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    ignore_ties=False,
    empty_query_score=1.0,
    sample_weight=None,
):
    """Mean average precision (MAP@k) over queries.

    A document is relevant when its label is > 0. The average precision of
    a query, AP@k, is the sum of the precision at each rank ``r <= k`` that
    holds a relevant document, divided by ``min(k, R)`` where R is the number
    of relevant documents of the query.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance of each row, finite and >= 0; only ``> 0`` matters.
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` treats all rows as one
        query, and warns when there is more than one row; ids that make
        every row a query of its own (document ids) warn too.
    k : int, default=None
        Only the top ``k`` ranks count. ``None`` uses every rank.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents. If True, tied documents are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Score of a query with no relevant document. ``None`` leaves such
        queries out of the mean.
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each row's query, the same on every row of a query: the
        result is the weighted mean over queries. ``None`` weighs queries
        equally.

    Returns
    -------
    score : float
        Mean AP@k over queries, in [0, 1].

    Raises
    ------
    ValueError
        On inputs of different lengths, NaN or infinite values, negative
        labels, or when ``empty_query_score=None`` leaves no query to average.

    See Also
    --------
    ap_per_query : The value of each query.
    map_scorer : A scorer for GridSearchCV and cross_validate.

    Examples
    --------
    Relevant documents at ranks 1 and 3 give AP (1/1 + 2/3) / 2; the second
    query ties a relevant and an irrelevant document at the top, so its AP
    is the mean of 1 and 1/2:

    >>> from sklearn_ranknet.metrics import map_score
    >>> y_true = [1, 0, 1, 0, 1]
    >>> y_score = [0.9, 0.8, 0.7, 0.5, 0.5]
    >>> groups = ["q1", "q1", "q1", "q2", "q2"]
    >>> round(map_score(y_true, y_score, groups=groups), 4)
    0.7917
    >>> round(map_score(y_true, y_score, groups=groups, ignore_ties=True), 4)
    0.6667
    """
    query_groups, values, empty = _ap_values(y_true, y_score, groups, k, ignore_ties)
    return _mean_over_queries(query_groups, values, empty, empty_query_score, sample_weight)


@_is_a_metric("mrr_scorer")
@validate_params(_MRR_MEAN_CONSTRAINTS, prefer_skip_nested_validation=True)
def mrr_score(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    ignore_ties=False,
    empty_query_score=1.0,
    sample_weight=None,
):
    """Mean reciprocal rank (MRR@k) over queries.

    A document is relevant when its label is > 0. The reciprocal rank of a
    query, RR@k, is 1 / the rank of its first relevant document, or 0 when
    that rank is below ``k``. MRR suits queries with one right answer
    (navigational queries, question answering): only the first relevant
    document counts.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance of each row, finite and >= 0; only ``> 0`` matters.
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` treats all rows as one
        query, and warns when there is more than one row; ids that make
        every row a query of its own (document ids) warn too.
    k : int, default=None
        RR@k is 0 when the first relevant document is below rank ``k``.
        ``None`` uses every rank.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents: when the first relevant document ties with others, RR is
        the mean of 1 / its rank over their orderings. If True, tied
        documents are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Score of a query with no relevant document. ``None`` leaves such
        queries out of the mean.
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each row's query, the same on every row of a query: the
        result is the weighted mean over queries. ``None`` weighs queries
        equally.

    Returns
    -------
    score : float
        Mean RR@k over queries, in [0, 1].

    Raises
    ------
    ValueError
        On inputs of different lengths, NaN or infinite values, negative
        labels, or when ``empty_query_score=None`` leaves no query to average.

    See Also
    --------
    rr_per_query : The value of each query.
    mrr_scorer : A scorer for GridSearchCV and cross_validate.
    map_score : Mean average precision, which counts every relevant document.

    Examples
    --------
    The first relevant document of q1 is at rank 2; q2 ties its relevant
    document with an irrelevant one at the top, so its RR is the mean of 1
    and 1/2 (input order puts the relevant one first):

    >>> from sklearn_ranknet.metrics import mrr_score
    >>> y_true = [0, 1, 0, 1, 0, 0]
    >>> y_score = [0.9, 0.8, 0.7, 0.5, 0.5, 0.1]
    >>> groups = ["q1", "q1", "q1", "q2", "q2", "q2"]
    >>> mrr_score(y_true, y_score, groups=groups)
    0.625
    >>> mrr_score(y_true, y_score, groups=groups, ignore_ties=True)
    0.75
    >>> mrr_score(y_true, y_score, groups=groups, k=1)
    0.25
    """
    query_groups, values, empty = _rr_values(y_true, y_score, groups, k, ignore_ties)
    return _mean_over_queries(query_groups, values, empty, empty_query_score, sample_weight)


@_is_a_metric("err_scorer")
@validate_params(_ERR_MEAN_CONSTRAINTS, prefer_skip_nested_validation=True)
def err_score(
    y_true,
    y_score,
    *,
    groups=None,
    k=None,
    max_label=None,
    ignore_ties=False,
    empty_query_score=1.0,
    sample_weight=None,
):
    """Expected reciprocal rank (ERR@k) averaged over queries.

    The cascade model of Chapelle, Metzler, Zhang and Grinspan (CIKM 2009):
    a user reads the ranking from the top and stops at the document of rank
    r with chance ``R_r = (2**label - 1) / 2**max_label``, satisfied; ERR@k
    is the expected reciprocal of the rank where the user stops,
    ``sum over r <= k of R_r * prod_{i < r} (1 - R_i) / r`` (0 for not
    stopping). A relevant document counts less below a highly relevant one,
    which has probably ended the search already.

    ERR is not normalized: even an ideal ranking scores below 1 (one
    document of the top grade and nothing else relevant: ``1 -
    2**-max_label``), so compare ERR across rankings of the same queries.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Graded relevance of each row, finite and >= 0 (e.g. 0 = bad ...
        4 = perfect), at most ``max_label`` (and 30).
    y_score : array-like of shape (n_samples,)
        Predicted score of each row; higher ranks first. Finite.
    groups : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` treats all rows as one
        query, and warns when there is more than one row; ids that make
        every row a query of its own (document ids) warn too.
    k : int, default=None
        Only the top ``k`` ranks count (ERR@k). ``None`` uses every rank.
    max_label : float in [0, 30] or None, default=None
        The top grade of the label scale. ``None`` uses the largest label
        in ``y_true``, over all queries (not per query: a query whose best
        document is only fair is not scored as if it were perfect). Data
        that do not reach the top grade then score higher than they should,
        and in a cross-validated search folds may differ in their largest
        label: fix it there, e.g. ``max_label=4`` for grades 0-4.
    ignore_ties : bool, default=False
        If False, tied scores are averaged over every ordering of the tied
        documents. If True, tied documents are ranked in input order.
    empty_query_score : float in [0, 1] or None, default=1.0
        Score of a query with no label > 0. ``None`` leaves such queries
        out of the mean.
    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each row's query, the same on every row of a query: the
        result is the weighted mean over queries. ``None`` weighs queries
        equally.

    Returns
    -------
    score : float
        Mean ERR@k over queries, in [0, 1).

    Raises
    ------
    ValueError
        On inputs of different lengths, NaN or infinite values, negative
        labels, labels above 30 or above ``max_label``, or when
        ``empty_query_score=None`` leaves no query to average.

    See Also
    --------
    err_per_query : The value of each query.
    err_scorer : A scorer for GridSearchCV and cross_validate.
    ndcg_score : The other graded metric, normalized by the ideal ranking.

    Examples
    --------
    Grades 0-3. In query 1 the grade-3 and grade-2 documents tie at the top;
    by default ERR averages both orders, and ``ignore_ties=True`` keeps the
    input order, which happens to be the better one:

    >>> from sklearn_ranknet.metrics import err_score
    >>> y_true = [3, 2, 0, 0, 1, 1]
    >>> y_score = [0.5, 0.5, 0.1, 0.2, 0.9, 0.4]
    >>> groups = [1, 1, 1, 2, 2, 2]
    >>> round(err_score(y_true, y_score, groups=groups, max_label=3), 4)
    0.4766
    >>> round(err_score(y_true, y_score, groups=groups, max_label=3, ignore_ties=True), 4)
    0.5391
    >>> round(err_score(y_true, y_score, groups=groups, max_label=3, k=1), 4)
    0.375
    """
    query_groups, values, empty = _err_values(y_true, y_score, groups, k, max_label, ignore_ties)
    return _mean_over_queries(query_groups, values, empty, empty_query_score, sample_weight)


# --------------------------------------------------------------------------
# Validation


def _check_targets(y_true, y_score, groups):
    y_true = float_column(y_true, "y_true")
    y_score = float_column(y_score, "y_score")
    if len(y_true) != len(y_score):
        raise ValueError(
            f"y_true has {len(y_true)} rows but y_score has {len(y_score)}; "
            "give one label and one score per row."
        )
    if len(y_true) == 0:
        raise ValueError("y_true and y_score are empty; there is nothing to rank.")
    assert_all_finite(y_true, input_name="y_true")
    assert_all_finite(y_score, input_name="y_score")
    if groups is None and len(y_true) > 1:
        # Documented, and legitimate for a single ranked list; but on ranking
        # data it is the wrong number, so say so.
        warnings.warn(
            _no_groups_message(len(y_true)),
            UserWarning,
            stacklevel=6,  # past the two wrappers (_refused_as_a_scorer, validate_params), to the caller
        )
    query_groups = group_rows(groups, len(y_true))
    _warn_if_one_row_each(len(y_true), query_groups.n_queries, stacklevel=7)
    return y_true, y_score, query_groups


# The scorer that does for each metric what make_scorer(metric) cannot.
_SCORER_OF_METRIC = {
    "ndcg_score": "ndcg_scorer",
    "ndcg_per_query": "ndcg_scorer",
    "map_score": "map_scorer",
    "ap_per_query": "map_scorer",
    "mrr_score": "mrr_scorer",
    "rr_per_query": "mrr_scorer",
    "err_score": "err_scorer",
    "err_per_query": "err_scorer",
}


def _metric_and_caller():
    """The public metric that is running (a key of ``_SCORER_OF_METRIC``, or
    None) and the module of the code that called it, past this module's and
    ``validate_params``'s wrappers."""
    metric = None
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == __name__:
            if frame.f_code.co_name in _SCORER_OF_METRIC:
                metric = frame.f_code.co_name
        elif module != "sklearn.utils._param_validation":
            return metric, module
        frame = frame.f_back
    return metric, ""


def _no_groups_message(n_rows):
    """The warning for a metric given no groups over ``n_rows`` rows.

    Called by a scikit-learn scorer (``make_scorer(ndcg_score)`` given as
    ``scoring=``), "pass groups=" is advice the user cannot follow: such a
    scorer passes only ``y_true`` and the predictions, unless routing is on
    and it requests groups. Each fold was then scored as one query (NDCG@10
    0.08-0.17 against 0.61-0.66 by query on ``make_ranking(40)``) under a
    warning that named no way out.
    """
    metric, caller = _metric_and_caller()
    if metric is not None and caller == "sklearn.metrics._scorer":
        scorer = _SCORER_OF_METRIC[metric]
        return (
            f"{metric} got no groups from the scikit-learn scorer that calls it, so all "
            f"{n_rows} rows are scored as one query: make_scorer({metric}) passes only y "
            "and the predictions, unless metadata routing is on and the scorer requests "
            f"groups. Pass scoring={scorer}() instead (e.g. {scorer}(k=10)): it takes the "
            "query ids from routing or from the ranker's query_column, and refuses to "
            "score without them. Or "
            + ("" if _routing_enabled() else "turn routing on, ")
            + f"request the ids, make_scorer({metric}, ...).set_score_request(groups=True), "
            "and pass them: cross_validate(..., params={'groups': qid}) or "
            "GridSearchCV(...).fit(X, y, groups=qid)."
        )
    return (
        f"No groups were given, so all {n_rows} rows are scored as one "
        "query. Pass groups=<query id per row> to score query by query (for "
        "a single query, groups=numpy.zeros(n_rows) says so and silences "
        "this warning)."
    )


def _warn_if_one_row_each(n_rows, n_queries, stacklevel):
    if n_rows > 1 and n_queries == n_rows:
        # A one-document query is ranked perfectly by any score: the mean
        # says nothing of the scores.
        warnings.warn(
            f"Every one of the {n_rows} queries holds a single row, so any "
            "scores rank them perfectly. groups should hold query ids, not an "
            "id per row (document).",
            UserWarning,
            stacklevel=stacklevel,
        )


def _arranged(query_groups, values):
    """``values`` query by query, as the metric kernels take them."""
    return as_kernel_array(query_groups.arrange(values))


def _outputs(query_groups):
    """The per-query ``values`` and ``empty`` flags a metric kernel fills."""
    return np.empty(query_groups.n_queries), np.empty(query_groups.n_queries, dtype=np.bool_)


def _per_query(kernel, query_groups, labels, scores, *args, only=None):
    """Run a metric kernel over every query (or the queries where ``only``
    is True, as the work to share out), on every core for large inputs.
    ``args`` are the kernel's options and outputs."""
    sizes = query_groups.sizes
    sort_work = sizes * np.log2(sizes + 1)  # inner-loop steps of a sort
    if only is not None:
        sort_work = sort_work * only
    over_queries(kernel, (labels, scores, query_groups.offsets, *args), query_groups.offsets,
                 effective_n_jobs(-1), int(sort_work.sum()), sort_work)


def _cap(k, longest):
    """k for the kernels: None or anything past the longest query is the
    whole list (and must fit in an int64)."""
    return longest if k is None else min(int(k), longest)


def _fill_empty(query_ids, values, empty, empty_query_score):
    if empty_query_score is None:
        keep = ~empty
        return query_ids[keep], values[keep]
    values[empty] = empty_query_score
    return query_ids, values


def _mean_over_queries(query_groups, values, empty, empty_query_score, sample_weight):
    """The (weighted) mean of per-query values, empty queries filled or left
    out as ``empty_query_score`` says."""
    weights = query_weights(query_groups, sample_weight)
    if empty_query_score is None:
        values = values[~empty]
        weights = None if weights is None else weights[~empty]
    else:
        values[empty] = empty_query_score
    if len(values) == 0:
        raise ValueError(
            "No query has a relevant document, and empty_query_score=None "
            "leaves such queries out, so there is nothing to average. Give "
            "empty_query_score a value (1.0 or 0.0) to score them."
        )
    if weights is None:
        return float(np.mean(values))
    if not weights.any():
        raise ValueError(
            "sample_weight is zero for every query left in the mean; nothing to average."
        )
    # Relative to the largest: weights near float's limit would overflow
    # their sum (a NaN mean); the mean only depends on their ratios.
    return float(np.average(values, weights=weights / weights.max()))


# --------------------------------------------------------------------------
# Scorers

_ROUTING_HELP = (
    "{name} scores each query separately, so it needs the query id of every "
    "row, and none arrived: without them every fold would be scored as if it "
    "were one single query. Two fixes. (1) Turn on metadata routing with "
    "`sklearn.set_config(enable_metadata_routing=True)` and pass the ids where "
    "you fit: `GridSearchCV(...).fit(X, y, groups=qid)` or "
    "`cross_validate(..., params={{'groups': qid}})`. (2) With routing off, keep "
    "the ids in a column of X and name it with the ranker's `query_column` "
    "parameter; the scorer then reads them from there."
)

# Routing on, and still no ids: the scorer did not ask for them, or its
# caller had none to give.
_ROUTED_HELP = (
    "{name} scores each query separately, so it needs the query id of every "
    "row, and none arrived although metadata routing is on: without them every "
    "fold would be scored as if it were one single query. Either the scorer "
    "does not request groups (set_score_request replaces its requests: "
    "`{name}(...).set_score_request(groups=True, sample_weight=True)` asks for "
    "both), or its caller passed none: pass them where you fit, "
    "`GridSearchCV(...).fit(X, y, groups=qid)` or "
    "`cross_validate(..., params={{'groups': qid}})`. scikit-learn's "
    "`permutation_importance` passes no ids to its scorer: use "
    "`sklearn_ranknet.inspection.permutation_importance`."
)


def _missing_groups(name):
    return ValueError((_ROUTED_HELP if _routing_enabled() else _ROUTING_HELP).format(name=name))


def _ndcg_by_query(y_true, y_pred, *, groups=None, sample_weight=None, **kwargs):
    if groups is None and len(y_true) > 1:
        raise _missing_groups("ndcg_scorer")
    return ndcg_score(y_true, y_pred, groups=groups, sample_weight=sample_weight, **kwargs)


def _map_by_query(y_true, y_pred, *, groups=None, sample_weight=None, **kwargs):
    if groups is None and len(y_true) > 1:
        raise _missing_groups("map_scorer")
    return map_score(y_true, y_pred, groups=groups, sample_weight=sample_weight, **kwargs)


def _mrr_by_query(y_true, y_pred, *, groups=None, sample_weight=None, **kwargs):
    if groups is None and len(y_true) > 1:
        raise _missing_groups("mrr_scorer")
    return mrr_score(y_true, y_pred, groups=groups, sample_weight=sample_weight, **kwargs)


def _err_by_query(y_true, y_pred, *, groups=None, sample_weight=None, **kwargs):
    if groups is None and len(y_true) > 1:
        raise _missing_groups("err_scorer")
    return err_score(y_true, y_pred, groups=groups, sample_weight=sample_weight, **kwargs)


class _QueryScorer(_Scorer):
    """A scorer that takes the query ids from ``X`` when none were routed.

    The estimator's (or its last Pipeline step's) ``query_column`` says where
    they are; the estimator itself drops that column when it predicts. Ids
    routed as well must split the rows as the column does (as in the
    estimator's own ``score``): coarser ones, e.g. the users a
    ``GroupKFold`` splits by, would score merged queries.
    """

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        # Asked first without X: reading the ids sends X through a
        # Pipeline's transformers, work wasted when no step reads a column.
        query_column = query_column_of(estimator)
        if query_column is not None:
            kwargs["groups"] = merge_groups(kwargs.get("groups"), query_ids_in(estimator, X), query_column)
        return super()._score(method_caller, estimator, X, y_true, **kwargs)


def _grouped_scorer(score_func, check_func, metric_kwargs):
    if "groups" in metric_kwargs:
        raise TypeError(
            "groups cannot be fixed in a scorer: it differs from fold to fold "
            "and arrives through metadata routing."
        )
    if "sample_weight" in metric_kwargs:
        raise TypeError(
            "sample_weight cannot be fixed in a scorer: it differs from fold to "
            "fold. Request it through metadata routing instead: "
            "scorer.set_score_request(groups=True, sample_weight=True)."
        )
    # Fail now, not in the middle of a search, on a bad k, gain or typo.
    check_func([1.0, 0.0], [1.0, 0.0], groups=[0, 0], **metric_kwargs)
    scorer = _QueryScorer(score_func, 1, metric_kwargs, response_method="predict")
    # set_score_request is public but only callable while routing is on; the
    # request it records stays with the scorer whatever the global setting.
    with config_context(enable_metadata_routing=True):
        scorer.set_score_request(groups=True)
    return scorer


@_refused_as_a_scorer("ndcg_scorer", "makes a scorer and is not one itself")
def ndcg_scorer(k=10, **metric_kwargs):
    """A scorer of mean NDCG@k by query, for GridSearchCV and cross_validate.

    The scorer asks for ``groups`` through scikit-learn's metadata routing,
    so each fold is scored query by query, with routing on
    (``sklearn.set_config(enable_metadata_routing=True)``). With routing off,
    it reads the query ids from the column of ``X`` that the estimator's
    ``query_column`` names (also through a Pipeline, to its last step). When
    neither gives ids for more than one row it raises an error that names
    both fixes, rather than scoring a whole fold as one query; when both do,
    they must split the rows into the same queries (ids routed for a
    ``GroupKFold`` over users would score merged queries: the error says to
    stop routing them to the scorer).

    Parameters
    ----------
    k : int or None, default=10
        Truncation of NDCG@k; ``None`` uses the whole list.
    **metric_kwargs
        ``gain``, ``ignore_ties`` and ``empty_query_score``, as in
        :func:`ndcg_score`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, groups=...)``, greater is better (passing
        ``groups=`` in a direct call needs routing on, as every scikit-learn
        scorer's extra arguments do; with routing off, the ids come from
        ``query_column``). Usable as
        ``scoring=`` alone or in a dict of several scorers. For a weighted
        mean over queries, ask for the weights too:
        ``scorer.set_score_request(groups=True, sample_weight=True)`` (the
        call replaces the scorer's requests, so name ``groups`` again).

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GridSearchCV, GroupKFold
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> from sklearn_ranknet.metrics import ndcg_scorer
    >>> X, y, qid = make_ranking(n_queries=30, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(
    ...         Ridge(), {"alpha": [0.1, 10.0]}, cv=GroupKFold(3), scoring=ndcg_scorer(10)
    ...     ).fit(X, y, groups=qid)
    >>> bool(0.0 <= search.best_score_ <= 1.0)
    True
    """
    return _grouped_scorer(_ndcg_by_query, ndcg_score, {"k": k, **metric_kwargs})


@_refused_as_a_scorer("map_scorer", "makes a scorer and is not one itself")
def map_scorer(k=None, **metric_kwargs):
    """A scorer of MAP@k by query, for GridSearchCV and cross_validate.

    Requests ``groups`` through metadata routing, or reads them from the
    estimator's ``query_column``, like :func:`ndcg_scorer`.

    Parameters
    ----------
    k : int or None, default=None
        Truncation of AP@k; ``None`` uses the whole list.
    **metric_kwargs
        ``ignore_ties`` and ``empty_query_score``, as in :func:`map_score`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, groups=...)``, greater is better; a direct
        call with ``groups=`` needs routing on, as in :func:`ndcg_scorer`.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GroupKFold, cross_validate
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> from sklearn_ranknet.metrics import map_scorer, ndcg_scorer
    >>> X, y, qid = make_ranking(n_queries=30, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     result = cross_validate(
    ...         Ridge(), X, y, cv=GroupKFold(3), params={"groups": qid},
    ...         scoring={"map": map_scorer(), "ndcg@5": ndcg_scorer(5)},
    ...     )
    >>> sorted(key for key in result if key.startswith("test_"))
    ['test_map', 'test_ndcg@5']
    """
    return _grouped_scorer(_map_by_query, map_score, {"k": k, **metric_kwargs})


@_refused_as_a_scorer("mrr_scorer", "makes a scorer and is not one itself")
def mrr_scorer(k=None, **metric_kwargs):
    """A scorer of MRR@k by query, for GridSearchCV and cross_validate.

    Requests ``groups`` through metadata routing, or reads them from the
    estimator's ``query_column``, like :func:`ndcg_scorer`.

    Parameters
    ----------
    k : int or None, default=None
        Truncation of RR@k; ``None`` uses the whole list.
    **metric_kwargs
        ``ignore_ties`` and ``empty_query_score``, as in :func:`mrr_score`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, groups=...)``, greater is better; a direct
        call with ``groups=`` needs routing on, as in :func:`ndcg_scorer`.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GridSearchCV, GroupKFold
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> from sklearn_ranknet.metrics import mrr_scorer
    >>> X, y, qid = make_ranking(n_queries=30, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(
    ...         Ridge(), {"alpha": [0.1, 10.0]}, cv=GroupKFold(3), scoring=mrr_scorer(k=10)
    ...     ).fit(X, y, groups=qid)
    >>> bool(0.0 <= search.best_score_ <= 1.0)
    True
    """
    return _grouped_scorer(_mrr_by_query, mrr_score, {"k": k, **metric_kwargs})


def _check_err_options(y_true, y_score, *, groups, **options):
    """err_scorer's options checked at creation, on labels of 0, which every
    ``max_label`` holds (the labels of :func:`_grouped_scorer`'s check, 1 and
    0, would refuse ``max_label=0``)."""
    err_per_query(np.zeros(len(y_true)), y_score, groups=groups, **options)


@_refused_as_a_scorer("err_scorer", "makes a scorer and is not one itself")
def err_scorer(k=10, **metric_kwargs):
    """A scorer of mean ERR@k by query, for GridSearchCV and cross_validate.

    Requests ``groups`` through metadata routing, or reads them from the
    estimator's ``query_column``, like :func:`ndcg_scorer`.

    Parameters
    ----------
    k : int or None, default=10
        Truncation of ERR@k; ``None`` uses the whole list.
    **metric_kwargs
        ``max_label``, ``ignore_ties`` and ``empty_query_score``, as in
        :func:`err_score`. Give ``max_label`` (e.g. 4 for grades 0-4): left
        to None, it is each fold's largest label, and folds that differ in
        it are scored on different scales.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, groups=...)``, greater is better; a direct
        call with ``groups=`` needs routing on, as in :func:`ndcg_scorer`.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GroupKFold, cross_validate
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> from sklearn_ranknet.metrics import err_scorer, mrr_scorer
    >>> X, y, qid = make_ranking(n_queries=30, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     result = cross_validate(
    ...         Ridge(), X, y, cv=GroupKFold(3), params={"groups": qid},
    ...         scoring={"err@10": err_scorer(10, max_label=y.max()), "mrr": mrr_scorer()},
    ...     )
    >>> sorted(key for key in result if key.startswith("test_"))
    ['test_err@10', 'test_mrr']
    """
    return _grouped_scorer(_err_by_query, _check_err_options, {"k": k, **metric_kwargs})
