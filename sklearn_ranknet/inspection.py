"""Model inspection for rankers: permutation feature importance by query.

scikit-learn's :func:`sklearn.inspection.permutation_importance` scores the
whole input as one list. A ranking is judged query by query, so here the
scorer receives the query ids, and a feature's values are by default
shuffled among the documents of each query rather than across queries.
"""

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn import config_context
from sklearn.utils import Bunch, _safe_indexing, check_array, check_consistent_length, check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt, StrOptions, validate_params
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _check_sample_weight

from ._groups import QueryGroups, group_rows, query_of_row, query_weights
from ._metadata_columns import (
    check_width, column_position, merge_groups, metadata_columns, query_column_in_input, query_column_of,
    query_column_reader, query_ids_in,
)
from ._scorer_requests import groups_request
from ._validation import check_relevance_labels, float_column
from .metrics import ndcg_score

__all__ = ["permutation_importance"]

# The default scorer: mean NDCG@DEFAULT_K over queries, as the rankers' score.
DEFAULT_K = 10


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "groups": ["array-like", None],
        # A name or a list is refused in _check_scoring, with what to pass.
        "scoring": [callable, dict, str, list, tuple, None],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "permute": [StrOptions({"within_queries", "all_rows"})],
        "max_queries": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "sample_weight": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def permutation_importance(
    estimator,
    X,
    y,
    *,
    groups,
    scoring=None,
    n_repeats=5,
    permute="within_queries",
    max_queries=None,
    n_jobs=None,
    random_state=None,
    sample_weight=None,
):
    """Permutation importance of each feature for ranking, query by query.

    The fitted ``estimator`` is scored on ``X`` query by query (mean
    NDCG@10 by default): that is the baseline. Then one feature at a time,
    the feature's column is shuffled and the model scored again, ``n_repeats``
    times. The importance of the feature is the baseline minus the shuffled
    score: how much of the ranking quality is lost when the model can no
    longer use the feature (Breiman, 2001; Fisher et al., 2019). Only the
    column changes; the model is not refitted.

    Parameters
    ----------
    estimator : object
        A fitted estimator whose ``predict`` gives one score per row, higher
        ranked first: any ranker of this package, a
        :class:`~sklearn.pipeline.Pipeline` ending in one,
        :class:`~sklearn_ranknet.BaggingRanker`, or a regressor (such as
        :class:`~sklearn.linear_model.Ridge`) used as a pointwise ranker.
        With a custom ``scoring``, the scorer decides which of its methods
        is called.

    X : {ndarray, sparse matrix, DataFrame} of shape (n_samples, n_features)
        Rows to score, e.g. a held-out set of whole queries. A DataFrame
        keeps its column names and dtypes (a Pipeline that selects columns
        by name works), a sparse matrix stays sparse: each permuted copy of
        ``X`` rebuilds only the permuted column.

    y : array-like of shape (n_samples,)
        Graded relevance labels.

    groups : array-like of shape (n_samples,) or None
        Query id of each row: ints, strings or any sortable values, in any
        order; rows of one query need not be adjacent. Required, as the
        whole point is to score query by query. ``None`` takes them from the
        column of ``X`` named by the estimator's ``query_column`` (also at
        the end of a Pipeline); that column is then not permuted and its
        importance is 0. Otherwise ``None`` is an error (for one single
        list, pass ``groups=np.zeros(n_samples)``).

    scoring : callable, dict or None, default=None
        How a permuted ``X`` is scored (greater is better):

        - ``None``: mean NDCG@10 over queries,
          ``ndcg_score(y, estimator.predict(X), groups=groups, k=10)``, with
          gain ``2**y - 1`` (for a ranker trained with ``gain="linear"``,
          pass ``ndcg_scorer(10, gain="linear")``);
        - a scorer of this package, e.g. ``ndcg_scorer(5)`` or
          ``map_scorer()``, or any scikit-learn scorer (``make_scorer``) whose
          metric takes ``groups``. It is called with the query ids whether
          or not metadata routing is enabled (see Notes);
        - any callable ``scorer(estimator, X, y, groups=groups)`` (plus
          ``sample_weight=`` when ``sample_weight`` is given) returning a
          float, or a dict of floats for several metrics at once;
        - a dict ``{name: scorer}`` of the above, each returning one float,
          for several metrics.

        Unlike scikit-learn, a scorer's name (``"ndcg"``) or a list of
        names or scorers is refused: scikit-learn's named scorers score all
        rows as one list, and several metrics are given as a dict.

    n_repeats : int, default=5
        Number of times each feature is permuted.

    permute : {"within_queries", "all_rows"}, default="within_queries"
        Which values a feature's column is shuffled among:

        - ``"within_queries"``: each document gets the value of another
          document *of the same query*. Every query keeps its own set of
          values, so the query-level part of the feature is untouched and
          only the order it gives documents inside the query is broken.
          This measures what ranking uses a feature for, and the permuted
          rows stay realistic (see Notes).
        - ``"all_rows"``: a document may get the value of any row, of any
          query, as in :func:`sklearn.inspection.permutation_importance`.

    max_queries : int, float or None, default=None
        Score each repeat on a random subset of whole queries, to save
        time on large data: an int is a number of queries, a float in
        (0, 1] a fraction of them (at least one query). A new subset is
        drawn for each repeat, shared by all features, and the baseline is
        scored on that same subset; queries of weight 0 in ``sample_weight``
        are neither drawn nor counted. ``None`` uses every query. Unlike
        scikit-learn's ``max_samples`` it counts queries: a query is scored
        whole or not at all.
    n_jobs : int, default=None
        Number of features permuted in parallel (joblib). ``None`` means 1
        unless in a :obj:`joblib.parallel_backend` context; ``-1`` uses
        every processor. The result does not depend on ``n_jobs``.

    random_state : int, RandomState instance or None, default=None
        Seeds the permutations (and the query subsets of ``max_queries``).
        Each feature draws its permutations from its own generator, seeded
        from this one, so results are the same for every ``n_jobs``. Pass
        an int for reproducible output.

    sample_weight : array-like of shape (n_samples,), default=None
        Weight of each row's query, the same on every row of a query: the
        scores are weighted means over queries. Passed to the scorer.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch` or dict of such
        With the following attributes:

        importances_mean : ndarray of shape (n_features,)
            Mean importance of each feature over the repeats.
        importances_std : ndarray of shape (n_features,)
            Standard deviation of the importance over the repeats.
        importances : ndarray of shape (n_features, n_repeats)
            The importance of each feature at each repeat: the baseline
            score minus the score with the feature permuted.

        With several metrics (a dict ``scoring``, or a scorer that returns a
        dict) a dict ``{name: Bunch}``, one per metric.

    Raises
    ------
    ValueError
        If ``groups``, ``y`` or ``sample_weight`` do not have one entry per
        row of ``X``, if no query ids are given (neither ``groups`` nor a
        ``query_column``), if ``sample_weight`` varies within a query, if
        ``max_queries`` exceeds the number of queries, or if ``scoring`` is
        a scikit-learn scorer whose metric does not take ``groups``, a
        scorer's name, or a list or tuple.

    See Also
    --------
    sklearn.inspection.permutation_importance : The same for estimators
        scored on all rows at once.
    sklearn_ranknet.metrics.ndcg_scorer : A query-aware scorer.

    Notes
    -----
    **Why shuffle within queries.** A ranking only depends on the order of
    the scores inside each query: adding a constant to every score of a
    query changes no metric. Shuffling a feature across all rows mixes two
    things. It breaks the order the feature gives to the documents of a
    query, which is the importance for ranking. But it also replaces each
    query's typical level of the feature by values drawn from other queries,
    which adds the feature's between-query spread to the scores *inside*
    every query as noise: a feature with a large query-level component (how
    many documents match the query at all, the query's length) looks
    important even for a model whose ranking of the documents does not
    depend on it; and the permuted documents sit where no real document
    does, so the score measures how the model extrapolates. Shuffling
    within queries keeps each query's values, so neither happens: a feature
    that is constant within every query gets importance exactly 0 for any
    model, since permuting it changes nothing. Queries of one document are
    never changed by it.

    Use ``permute="all_rows"`` for the classic importance, e.g. to see a
    query-level feature that acts only by changing how the model uses other
    features (an interaction), which within-query shuffling cannot show.

    **Metadata routing.** Scikit-learn scorers receive extra arguments such
    as ``groups`` only while metadata routing is on, and otherwise raise.
    The query ids are an argument of this function rather than metadata
    travelling through a meta-estimator, so they are always given to a
    scikit-learn scorer, with routing enabled for that call only, whatever
    the global setting.

    References
    ----------
    L. Breiman, "Random Forests", Machine Learning, 45(1), 5-32, 2001.

    A. Fisher, C. Rudin and F. Dominici, "All Models are Wrong, but Many are
    Useful: Learning a Variable's Importance by Studying an Entire Class of
    Prediction Models Simultaneously", JMLR 20(177), 2019.

    Examples
    --------
    The first three of six features carry the relevance; the last column is
    a query-level feature (constant within each query), which cannot order
    documents and gets importance exactly 0:

    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> from sklearn_ranknet.inspection import permutation_importance
    >>> X, y, qid = make_ranking(n_queries=80, n_features=6, n_informative=3, random_state=0)
    >>> X[:, 5] = qid % 7
    >>> model = Ridge().fit(X, y)
    >>> result = permutation_importance(model, X, y, groups=qid, n_repeats=4, random_state=0)
    >>> result.importances.shape
    (6, 4)
    >>> sorted(int(i) for i in np.argsort(-result.importances_mean)[:3])
    [0, 1, 2]
    >>> result.importances[5]
    array([0., 0., 0., 0.])

    With the classic permutation across all rows the query-level column
    looks useful, though it never changes the order of a query's documents
    when the model is linear:

    >>> classic = permutation_importance(
    ...     model, X, y, groups=qid, permute="all_rows", random_state=0
    ... )
    >>> bool(classic.importances_mean[5] > 0)
    True
    """
    X = _check_features(X)
    n_samples, n_features = X.shape
    check_consistent_length(X, y)
    # An estimator that reads its query ids from a column of X: the ids come
    # from there, and that column is not a feature (never permuted). Behind
    # a Pipeline's transformers its place in this X is found by its effect
    # on the ids the ranker reads (see _columns_holding_ids): permuted across
    # queries (permute="all_rows"), it would give the scorer other ids than
    # ``groups``, and a scorer that reads them too would refuse the call.
    query_column = query_column_of(estimator)
    query_position = None
    held_ids = []
    if query_column is not None:
        if query_column_in_input(estimator) is not None:
            query_position = column_position(X, query_column)
            held_ids = [query_position]
            # As the rankers' score: an X without the metadata columns is named
            # by its width, before one of its features is compared with groups.
            # (The ranker that reads the column, e.g. a BaggingRanker's member,
            # knows the width; only the features' shape is compared.)
            reader = query_column_reader(estimator)
            features = np.empty((0, X.shape[1] - len(metadata_columns(reader))))
            check_width(features, reader)
        groups = merge_groups(groups, query_ids_in(estimator, X), query_column)
    if groups is None and n_samples > 1:
        raise ValueError(
            "permutation_importance scores query by query, so it needs the query "
            "id of every row: pass groups=<query id per row>, or an estimator whose "
            "query_column names the column of X that holds them. For one single "
            "list, say so with groups=np.zeros(n_samples)."
        )
    query_groups = group_rows(groups, n_samples)
    if groups is None:
        groups = np.zeros(n_samples, dtype=np.int64)
    elif query_column is not None and query_position is None:
        held_ids = _columns_holding_ids(estimator, X, query_groups)
    weights = None
    if sample_weight is not None:
        sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        weights = query_weights(query_groups, sample_weight)
    scorer = _check_scoring(scoring)
    if scoring is None:
        # Checked here for the advice: the metric's would name a gain
        # parameter, which this function does not have.
        check_relevance_labels(
            float_column(y, "y"), exponential_gain=True, input_name="y",
            remedy='Pass scoring=ndcg_scorer(10, gain="linear") or rescale the labels.',
        )

    # Draw everything from random_state here, in a fixed order, so that the
    # result does not depend on n_jobs: the query subsets (if any), then one
    # seed per feature for that feature's permutations.
    rng = check_random_state(random_state)
    subsets = _draw_query_subsets(query_groups, max_queries, n_repeats, rng, weights)
    seeds = rng.randint(np.iinfo(np.int32).max + 1, size=n_features)
    if subsets is None:
        views = [_View(X, y, groups, sample_weight, query_groups)]
    else:
        views = [_subset(X, y, groups, sample_weight, query_groups, queries) for queries in subsets]

    baselines = [scorer(estimator, view.X, view.y, view.groups, view.sample_weight) for view in views]
    permuted = Parallel(n_jobs=n_jobs)(
        delayed(_permuted_scores)(estimator, views, col, seeds[col], n_repeats, permute, scorer)
        for col in range(n_features)
        if col not in held_ids
    )
    for col in held_ids:  # importance 0 by definition (held_ids is sorted)
        permuted.insert(col, [baselines[r % len(baselines)] for r in range(n_repeats)])
    if isinstance(baselines[0], dict):
        return {
            name: _importances([b[name] for b in baselines], [[s[name] for s in row] for row in permuted])
            for name in baselines[0]
        }
    return _importances(baselines, permuted)


def _columns_holding_ids(estimator, X, query_groups):
    """The columns of ``X`` that the query ids read behind a Pipeline's
    transformers come from, in increasing order.

    Parameters
    ----------
    estimator : object
        A Pipeline (or a wrapper around one) whose ranker reads its query ids
        from its own input, after the transformers.
    X : {ndarray, sparse matrix, DataFrame} of shape (n_samples, n_features)
        The raw input of ``estimator``.
    query_groups : QueryGroups
        The queries of the rows of ``X``.

    Returns
    -------
    columns : list of int
        Each column whose values, swapped between the first rows of two
        queries, change the ids the ranker reads. Rows are transformed one
        by one by ColumnTransformer and its kin, so the two rows stand for
        all; with a single query no permutation can move an id.
    """
    if query_groups.n_queries < 2:
        return []
    offsets = query_groups.offsets
    rows = np.array([offsets[0], offsets[1]])
    if query_groups.order is not None:
        rows = query_groups.order[rows]
    pair = _safe_indexing(X, rows)
    ids = query_ids_in(estimator, pair)
    swap = np.array([1, 0])
    return [
        col for col in range(X.shape[1])
        if not np.array_equal(query_ids_in(estimator, _ColumnPermuter(pair, col).permuted(swap)), ids)
    ]


# --------------------------------------------------------------------------
# Scorers


def _check_scoring(scoring):
    """A callable ``score(estimator, X, y, groups, sample_weight)``."""
    if scoring is None:
        return _ndcg_at_10
    if isinstance(scoring, str):
        # scikit-learn users' habit; its named scorers ("ndcg" included)
        # score all rows as one list.
        raise ValueError(
            f"scoring={scoring!r} is a name of a scikit-learn scorer, which scores all rows as one "
            "list; permutation_importance scores query by query and takes a scorer object: "
            "scoring=ndcg_scorer(10) (mean NDCG@10, the default), ndcg_scorer(k), map_scorer(k) "
            "from sklearn_ranknet.metrics, or any callable scorer(estimator, X, y, groups=...)."
        )
    if isinstance(scoring, (list, tuple)):
        raise ValueError(
            f"scoring is a {type(scoring).__name__}; for several metrics pass a dict of scorers "
            "(from sklearn_ranknet.metrics), one result per name, e.g. "
            "scoring={'ndcg@10': ndcg_scorer(10), 'map': map_scorer()}."
        )
    if isinstance(scoring, dict):
        if not scoring:
            raise ValueError("scoring is an empty dict; give at least one scorer.")
        return _MultiMetric({name: _grouped(scorer, f"scoring[{name!r}]") for name, scorer in scoring.items()})
    return _grouped(scoring, "scoring")


def _ndcg_at_10(estimator, X, y, groups, sample_weight):
    return ndcg_score(y, estimator.predict(X), groups=groups, k=DEFAULT_K, sample_weight=sample_weight)


def _grouped(scorer, name):
    if not callable(scorer):
        raise TypeError(f"{name} must be a callable scorer; got {scorer!r}.")
    if not hasattr(scorer, "get_metadata_routing"):
        return _CallableScorer(scorer)
    # A scikit-learn scorer: it takes groups if its metric does (request
    # None: accepted but not requested) or if groups were requested (True or
    # an alias); not if its metric has no such parameter or it was refused.
    try:
        request = groups_request(scorer)
    except AttributeError:  # not a scorer's request (a router): just call it
        return _CallableScorer(scorer)
    if request is False:
        raise ValueError(
            f"{name} is a scikit-learn scorer that does not take `groups`, so it "
            "would score all rows as one list instead of query by query. Use "
            "sklearn_ranknet.metrics.ndcg_scorer or map_scorer, or a scorer whose "
            "metric takes `groups` (with routing on, "
            "`scorer.set_score_request(groups=True)`). For importances on all rows "
            "at once, use sklearn.inspection.permutation_importance."
        )
    return _RoutedScorer(scorer)


class _CallableScorer:
    """``scorer(estimator, X, y, groups=...)``, with ``sample_weight`` if
    given (as scikit-learn passes it)."""

    def __init__(self, scorer):
        self.scorer = scorer

    def __call__(self, estimator, X, y, groups, sample_weight):
        if sample_weight is None:
            return self.scorer(estimator, X, y, groups=groups)
        return self.scorer(estimator, X, y, groups=groups, sample_weight=sample_weight)


class _RoutedScorer(_CallableScorer):
    """A scikit-learn scorer: it takes ``groups`` only while routing is on
    (and raises otherwise), whatever it requested."""

    def __call__(self, estimator, X, y, groups, sample_weight):
        with config_context(enable_metadata_routing=True):
            return super().__call__(estimator, X, y, groups, sample_weight)


class _MultiMetric:
    def __init__(self, scorers):
        self.scorers = scorers

    def __call__(self, estimator, X, y, groups, sample_weight):
        scores = {name: scorer(estimator, X, y, groups, sample_weight) for name, scorer in self.scorers.items()}
        for name, score in scores.items():
            if isinstance(score, dict):
                raise ValueError(
                    f"scoring[{name!r}] returned a dict ({sorted(score)}); in a dict of scorers each "
                    "must return one float. Pass a scorer that returns a dict alone, as scoring=..., "
                    "or give each of its metrics a scorer of its own."
                )
        return scores


# --------------------------------------------------------------------------
# Data and permutations


class _View(NamedTuple):
    """The rows scored together: all of them, or a subset of whole queries."""

    X: object
    y: object
    groups: object
    sample_weight: np.ndarray | None
    query_groups: QueryGroups


def _check_features(X):
    if hasattr(X, "iloc"):  # a DataFrame: keep its columns and dtypes
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D; got {X.ndim} dimension(s).")
        return X
    # Formats without row indexing (COO, DIA, BSR, ...) become CSR: queries
    # are taken and permuted by rows.
    return check_array(X, accept_sparse=("csr", "csc"), dtype=None, ensure_all_finite="allow-nan")


def _draw_query_subsets(query_groups, max_queries, n_repeats, rng, weights=None):
    """Sorted query positions for each repeat, or None for all queries.

    Queries of weight 0 count for nothing in a weighted score, so they are
    neither drawn nor counted (a subset of them alone could not be scored).
    """
    candidates = np.arange(query_groups.n_queries) if weights is None else np.flatnonzero(weights)
    n_candidates = len(candidates)
    of_what = "queries in groups" if weights is None else "queries of nonzero weight"
    if max_queries is None:
        return None
    if isinstance(max_queries, Real) and not isinstance(max_queries, Integral):
        n_drawn = max(1, int(max_queries * n_candidates))
    elif max_queries > n_candidates:
        raise ValueError(f"max_queries={max_queries} is more than the {n_candidates} {of_what}.")
    else:
        n_drawn = int(max_queries)
    if n_drawn == n_candidates:
        return None
    return [
        np.sort(candidates[rng.choice(n_candidates, size=n_drawn, replace=False)])
        for _ in range(n_repeats)
    ]


def _subset(X, y, groups, sample_weight, query_groups, queries):
    """The rows of some queries, in their input order."""
    rows, _ = query_groups.rows_of(queries)
    rows = np.sort(rows)
    groups = _safe_indexing(groups, rows)
    return _View(
        X=_safe_indexing(X, rows),
        y=_safe_indexing(y, rows),
        groups=groups,
        sample_weight=None if sample_weight is None else sample_weight[rows],
        query_groups=group_rows(groups, len(rows)),
    )


def _source_rows(query_groups, u, permute):
    """The permutation of the rows given by the uniform draws ``u`` (one per
    input row): row i takes its value from row ``source[i]``.

    ``"all_rows"``: the rows sorted by ``u``. ``"within_queries"``: the rows
    of each query, in input order, take the values of the same rows sorted
    by ``u``. Both are uniformly random (``u`` has no ties, almost surely),
    and with a single query they are the same permutation.
    """
    if permute == "all_rows":
        return np.argsort(u, kind="stable")
    offsets = query_groups.offsets
    # Arranged positions sorted by (query, u): a permutation of each query's
    # segment. np.lexsort is stable.
    shuffled = np.lexsort((query_groups.arrange(u), query_of_row(offsets)))
    rows = np.arange(len(u)) if query_groups.order is None else query_groups.order
    source = np.empty(len(u), dtype=np.intp)
    source[rows] = rows[shuffled]
    return source


class _ColumnPermuter:
    """A private copy of ``X`` whose column ``col`` can be set to a
    permutation of the original column (thread-safe, and writable even when
    joblib hands ``X`` over as a read-only memory map)."""

    def __init__(self, X, col):
        self.col = col
        if hasattr(X, "iloc"):
            self.kind = "frame"
            self.work = X.copy()
            self.column = X.iloc[:, col]
            self.index = X.index
        elif sp.issparse(X):
            self.kind = "sparse"
            self.format = X.format
            csr = X.tocsr(copy=True)
            csr.sum_duplicates()
            self.column = csr[:, [col]].toarray().ravel()
            csr.data[csr.indices == col] = 0
            csr.eliminate_zeros()
            self.rest = csr  # X without the column
        else:
            self.kind = "dense"
            self.work = np.array(X, copy=True, order="K")
            self.column = self.work[:, col].copy()

    def permuted(self, source):
        """``X`` with ``X[i, col]`` replaced by ``X[source[i], col]``."""
        if self.kind == "dense":
            self.work[:, self.col] = self.column[source]
            return self.work
        if self.kind == "frame":
            self.work.isetitem(self.col, self.column.iloc[source].set_axis(self.index))
            return self.work
        values = self.column[source]
        rows = np.flatnonzero(values)  # NaN is kept: it is not 0
        column = type(self.rest)(
            (values[rows], (rows, np.full(len(rows), self.col))), shape=self.rest.shape
        )
        permuted = self.rest + column
        return permuted if self.format == "csr" else permuted.asformat(self.format)


def _permuted_scores(estimator, views, col, seed, n_repeats, permute, scorer):
    """The scores of ``n_repeats`` permutations of column ``col``, each
    drawn from this feature's own generator."""
    rng = np.random.RandomState(seed)
    scores = []
    permuter = None
    for repeat in range(n_repeats):
        view = views[repeat % len(views)]
        if permuter is None or len(views) > 1:
            permuter = _ColumnPermuter(view.X, col)
        source = _source_rows(view.query_groups, rng.random_sample(view.query_groups.n_samples), permute)
        scores.append(scorer(estimator, permuter.permuted(source), view.y, view.groups, view.sample_weight))
    return scores


def _importances(baselines, permuted):
    """Bunch of baseline minus permuted scores, shape (n_features, n_repeats);
    one baseline for every repeat, or one per repeat (query subsets)."""
    importances = np.asarray(baselines, dtype=np.float64) - np.asarray(permuted, dtype=np.float64)
    return Bunch(
        importances_mean=np.mean(importances, axis=1),
        importances_std=np.std(importances, axis=1),
        importances=importances,
    )
