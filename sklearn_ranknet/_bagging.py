"""BaggingRanker: the average of several rankers fitted with different seeds.

scikit-learn's ensembles that would do this (``VotingRegressor``,
``StackingRegressor``, ``BaggingRegressor``) either refuse estimators that
are not regressors or know nothing of queries: they would pass no query ids
to the members and bootstrap single rows. This meta-estimator fits clones of
a ranker with their own seeds, optionally on a bootstrap sample of whole
queries, passes ``groups`` (and ``sample_weight``) on to them, and averages
their scores.
"""

import threading
import time
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._indexing import _safe_indexing
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metadata_routing import (
    UNUSED,
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
    has_fit_parameter,
    validate_data,
)

from ._base import BaseRanker, score_by_query
from ._stack import can_stack, fit_together
from ._groups import group_rows, query_of_row, query_weights
from ._habits import refuse_unexpected_keywords
from ._lambdarank import LambdaRankRanker
from ._metadata_columns import (
    METADATA_COLUMN_CONSTRAINT, column_of, estimator_features, features_and_metadata, merge_groups,
    query_column_of, query_ids_in,
)
from ._wrapped import wrapped_chain

_MAX_SEED = np.iinfo(np.int32).max


class BaggingRanker(BaseEstimator):
    """Average of rankers fitted with different seeds, optionally on bootstrapped queries.

    Each of the ``n_estimators`` members is a clone of ``estimator`` whose
    every ``random_state`` parameter (nested ones too, e.g. inside a
    Pipeline) is set to its own seed drawn from ``random_state``; it is fitted
    with the query ids (and weights) on all queries or, with
    ``bootstrap=True``, on a bootstrap sample of whole queries. Members
    of this package's rankers train together, as networks of one pass
    (:ref:`searching`). ``predict`` is the mean of the members' scores. On
    small data the spread between
    seeds is often larger than the difference between settings, and
    averaging removes most of it.

    Read more in the :ref:`User Guide <bagging>`.

    Parameters
    ----------
    estimator : object, default=None
        The ranker to fit several times: anything with ``fit(X, y,
        groups=...)`` and ``predict(X)``, e.g. a ranker of this package or a
        Pipeline ending in one. ``None`` means ``LambdaRankRanker()``.
    n_estimators : int, default=5
        Number of members.
    bootstrap : bool, default=False
        Train each member on a bootstrap sample of whole queries, as many as
        there are of positive weight, drawn with replacement from those; a
        query drawn twice becomes two queries. Without ``groups`` every
        member gets all rows.
    n_jobs : int, default=None
        Members predicted, and fitted one by one, at the same time, on
        threads (members of this package's rankers train together instead:
        :ref:`searching`). ``None`` means 1, ``-1`` every core; the result
        does not depend on it.
    random_state : int, RandomState instance or None, default=None
        Draws the seed of every member, which sets the member's
        ``random_state`` parameters and its bootstrap sample. An int gives
        the same members on every fit.
    query_column : str, int or None, default=None
        A column of ``X`` that holds the query ids, as the rankers'
        ``query_column``: the members get the other features, with the ids
        as ``groups``. Set it here or on ``estimator``, not both; only here
        with ``bootstrap=True``. See :ref:`routing_off`.
    position_column : str, int or None, default=None
        For a click log: a column of ``X`` that holds the position each row
        was shown at, as the rankers' ``position_column``: the members get
        the other features, with the positions as ``positions``. Set it
        here or on ``estimator``, not both. See :ref:`clicks`.
    verbose : bool, default=False
        Print a line as each member is fitted: its number, fit time and
        epochs (members trained in one pass: the pass's time, then a line
        per member). The members' own ``verbose`` prints their epochs.

    Attributes
    ----------
    estimator_ : object
        The unfitted template the members were cloned from.
    estimators_ : list of objects
        The fitted members.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during ``fit``. Defined only when X has
        feature names that are all strings; the members are fitted on
        arrays.

    See Also
    --------
    LambdaRankRanker : The default member.
    sklearn.ensemble.BaggingRegressor : The same idea for regressors, with
        bootstrap samples of rows.

    Notes
    -----
    Members receive ``groups`` and, when given, ``sample_weight``; with
    metadata routing on, what they request. With routing off a Pipeline
    cannot take ``groups``: turn routing on to bag a Pipeline with query ids.
    Unlike ``BaggingRegressor``, there is no ``max_samples``,
    ``max_features``, ``bootstrap_features``, ``oob_score`` or
    ``warm_start``; instead of ``warm_start``, with an int ``random_state`` a
    larger ``n_estimators`` gives the members of a smaller one, followed by
    new ones. ``score`` is the mean NDCG@10 over queries, not R².

    Examples
    --------
    >>> from sklearn_ranknet import BaggingRanker, LambdaRankRanker
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=20, max_docs=10, random_state=0)
    >>> ranker = BaggingRanker(
    ...     LambdaRankRanker(hidden_layer_sizes=(), max_iter=5),
    ...     n_estimators=3, bootstrap=True, random_state=0,
    ... )
    >>> ranker = ranker.fit(X, y, groups=qid)
    >>> len(ranker.estimators_)
    3
    >>> ranker.predict(X[:3]).shape
    (3,)
    >>> bool(0.0 <= ranker.score(X, y, groups=qid) <= 1.0)
    True
    """

    # As the rankers: ask for ``groups`` by default under metadata routing.
    # ``sample_weight``, ``positions`` and ``propensities`` are only passed on to the members,
    # who request them themselves.
    __metadata_request__fit = {
        "groups": True, "sample_weight": UNUSED, "positions": UNUSED, "propensities": UNUSED,
        "X_val": UNUSED, "y_val": UNUSED, "groups_val": UNUSED, "sample_weight_val": UNUSED,
    }
    __metadata_request__score = {"groups": True}

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "n_jobs": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Integral, None, -1, closed="right"),
            None,
        ],
        "random_state": ["random_state"],
        "query_column": METADATA_COLUMN_CONSTRAINT,
        "position_column": METADATA_COLUMN_CONSTRAINT,
        "verbose": ["verbose"],
    }

    def __init__(
        self, estimator=None, n_estimators=5, *, bootstrap=False, n_jobs=None, random_state=None,
        query_column=None, position_column=None, verbose=False,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.query_column = query_column
        self.position_column = position_column
        self.verbose = verbose

    def _get_estimator(self):
        return LambdaRankRanker() if self.estimator is None else self.estimator

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(
        self, X, y, groups=None, sample_weight=None, positions=None, propensities=None, *, X_val=None, y_val=None,
        groups_val=None, sample_weight_val=None, **unexpected,
    ):
        """Fit ``n_estimators`` clones of the estimator.

        A call that raises leaves the ensemble as it was before it: unfitted,
        or with the members it had.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors of (query, document) pairs. A DataFrame sets
            ``feature_names_in_``; the members get its values. Members other
            than this package's rankers (which never write into it) get a
            read-only view, so that a step working in place (e.g.
            ``StandardScaler(copy=False)`` in a Pipeline) copies it instead of
            changing it for the caller and the other members.
        y : array-like of shape (n_samples,)
            Graded relevance of each row.
        groups : array-like of shape (n_samples,), default=None
            Query id of each row, of any sortable type and in any order.
            ``None`` treats all rows as one query (and the members warn).
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row (constant within a query), passed on to the
            members' ``fit``; bootstrap samples take the weights of their
            rows, and never draw a query of weight 0.
        positions : array-like of shape (n_samples,), default=None
            For a click log (``y`` the clicks, ``groups`` the sessions): the
            1-based rank each row was shown at, passed on to the members'
            ``fit``, which then learn position propensities (see
            :ref:`clicks`); bootstrap samples draw whole sessions.
        propensities : array-like of shape (n_positions,), default=None
            Known propensities of the ranks, passed on to the members with
            ``positions`` (see the rankers' ``fit``).
        X_val, y_val, groups_val, sample_weight_val : array-likes, default=None
            A validation set for the members' early stopping, as in the
            rankers' ``fit``: every member gets it whole (X_val without
            this ensemble's ``query_column``, whose ids become
            ``groups_val``).
        **unexpected : dict
            No other keyword argument is taken. LightGBM's and XGBoost's
            (``group=``, ``qid=``, ``eval_set=``) get a ``TypeError`` that
            names what to give instead.

        Returns
        -------
        self : object
            The fitted ensemble.
        """
        refuse_unexpected_keywords(type(self).__name__, "fit", unexpected)
        fitted = ("estimator_", "estimators_", "n_features_in_", "feature_names_in_")
        before = {name: self.__dict__[name] for name in fitted if name in self.__dict__}
        try:
            validation = {"X_val": X_val, "y_val": y_val, "groups_val": groups_val,
                          "sample_weight_val": sample_weight_val}
            return self._fit(X, y, groups, sample_weight, positions, propensities, validation)
        except BaseException:
            # As the rankers: the ensemble it had, or none (no half-fitted
            # ensemble may pass check_is_fitted). _fit replaces the members
            # only at its end and never changes the old ones.
            for name in fitted:
                self.__dict__.pop(name, None)
            self.__dict__.update(before)
            raise

    def _fit(self, X, y, groups, sample_weight, positions=None, propensities=None, validation=None):
        X, groups, positions = features_and_metadata(X, groups, positions, self)
        validation = dict(validation or {})
        if validation.get("X_val") is not None:  # the members get it without this ensemble's columns
            validation["X_val"], validation["groups_val"], _ = features_and_metadata(
                validation["X_val"], validation["groups_val"], None, self)
        template = self._get_estimator()
        for parameter, holds, argument in (
            ("query_column", "query ids", "groups"), ("position_column", "positions", "positions"),
        ):
            member_column = column_of(template, parameter)
            if getattr(self, parameter) is not None and member_column is not None:
                raise ValueError(
                    f"Both BaggingRanker and its estimator have a {parameter}. Set it "
                    "on the BaggingRanker only: its members get the features without "
                    f"the column, and the {holds} as {argument}."
                )
            if isinstance(member_column, str):
                raise ValueError(
                    f"The estimator's {parameter}={member_column!r} names a column, but "
                    "BaggingRanker hands its members the values of X, without column "
                    f"names. Set {parameter}={member_column!r} on the BaggingRanker "
                    "instead (and None on the estimator): its members then get the "
                    f"features and the {holds} as {argument}."
                )
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=None, ensure_all_finite=False, reset=True,
        )
        n_samples = _num_samples(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
        fit_params = self._member_fit_params(template, groups, sample_weight, positions, propensities, validation)
        if self.bootstrap and query_column_of(template) is not None:
            # A member would read the original ids from its column, not the
            # sample's (where a query drawn twice is two queries).
            raise ValueError(
                "bootstrap=True draws whole queries, so BaggingRanker must hand its "
                "members the query ids of their sample, but the estimator reads them "
                f"from X (query_column={query_column_of(template)!r}). Set query_column "
                "on the BaggingRanker instead of on its estimator."
            )
        # The bootstrap needs the queries whether or not members receive them.
        query_groups = group_rows(groups, n_samples) if self.bootstrap and groups is not None else None
        drawable = None
        if query_groups is not None:
            # A query the members weigh 0 adds nothing to their fit: never
            # draw it, or a sample might hold nothing else.
            weights = query_weights(query_groups, fit_params.get("sample_weight"))
            drawable = np.arange(query_groups.n_queries) if weights is None else np.flatnonzero(weights)

        rng = check_random_state(self.random_state)
        # All seeds are drawn before dispatch: members do not depend on n_jobs.
        # int(): validate_params takes n_estimators=True (a bool is an
        # Integral) as the rankers take max_iter=True, but randint refuses it.
        seeds = rng.randint(_MAX_SEED, size=int(self.n_estimators))
        progress = _Progress(len(seeds)) if self.verbose else None
        members = _fit_members_together(template, seeds, X, y, fit_params, query_groups, drawable, progress)
        if members is None:
            shared = _protected_rows(X, template)
            members = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(_fit_member)(template, seed, shared, y, fit_params, query_groups, drawable, progress)
                for seed in seeds
            )
        self.estimator_ = template
        self.estimators_ = members
        return self

    def _member_fit_params(self, template, groups, sample_weight, positions=None, propensities=None,
                           validation=None):
        """What each member's ``fit`` gets besides X and y, for all rows (and
        the validation set, which every member gets whole)."""
        passed = (
            ("groups", groups), ("sample_weight", sample_weight), ("positions", positions),
            ("propensities", propensities), *(validation or {}).items(),
        )
        if _routing_enabled():
            # Only what was passed: a member that declines sample_weight
            # (set_fit_request(sample_weight=False)) must still fit unweighted.
            given = {name: value for name, value in passed if value is not None}
            routed = process_routing(self, "fit", **given)
            return dict(routed["estimator"]["fit"])
        params = {}
        for name, value in passed:
            if value is None:
                continue
            if not has_fit_parameter(template, name):
                raise ValueError(
                    f"{type(template).__name__}.fit does not take {name}, so "
                    f"BaggingRanker cannot pass {name} on to it. For a Pipeline "
                    "(or any estimator that takes fit parameters by other names), "
                    "turn on metadata routing with "
                    "sklearn.set_config(enable_metadata_routing=True): the ranker "
                    f"inside then receives {name} if it requests it."
                )
            params[name] = value
        return params

    def predict(self, X):
        """Mean of the members' scores.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors, with the columns seen in ``fit`` (and the
            ``query_column`` when it is set, which is dropped). Read-only
            to the members, as in :meth:`fit`.

        Returns
        -------
        scores : ndarray of shape (n_samples,), float64
            Higher means ranked higher within its query.
        """
        check_is_fitted(self, "estimators_")
        return self._predict_features(estimator_features(self, X))

    def _predict_features(self, X):
        X = validate_data(self, X, accept_sparse="csr", dtype=None, ensure_all_finite=False, reset=False)
        X = _protected_rows(X, self.estimator_)
        # As many members at a time as there are threads, so that memory
        # holds that many score vectors, not one per member; summed in the
        # members' order whatever the threads did.
        n_at_once = effective_n_jobs(self.n_jobs)
        scores = np.zeros(_num_samples(X), dtype=np.float64)
        for start in range(0, len(self.estimators_), n_at_once):
            members = self.estimators_[start:start + n_at_once]
            for member_score in Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(member.predict)(X) for member in members
            ):
                scores += member_score
        scores /= len(self.estimators_)
        return scores

    def score(self, X, y, groups=None, sample_weight=None):
        """Mean NDCG@10 over queries of the ranking given by ``predict(X)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors, as in :meth:`predict`.
        y : array-like of shape (n_samples,)
            Graded relevance labels.
        groups : array-like of shape (n_samples,), default=None
            Query id of each row. Needed (here or in ``query_column``) for
            more than one row: without query ids the score would be that of
            one query made of all rows, so that is an error.
        sample_weight : array-like of shape (n_samples,), default=None
            Query weights, constant within each query: a weighted mean over
            queries, as in the rankers' ``score``.

        Returns
        -------
        score : float
            Mean NDCG@10 by query, with the members' ``gain`` (2**label - 1
            when they have none); tied scores averaged.
        """
        check_is_fitted(self, "estimators_")
        if self.query_column is None and query_column_of(self) is not None:
            # The members' query column: the ids, or a check of groups= against
            # them, as the members' own score makes (ids that split the rows
            # otherwise, e.g. coarser ones a GroupKFold splits by, would give
            # the NDCG of merged queries).
            groups = merge_groups(groups, query_ids_in(self, X), query_column_of(self))
        return score_by_query(self, X, y, groups, sample_weight, _scoring_step(self.estimators_[0]))

    def get_metadata_routing(self):
        """Metadata routing of this object: ``fit`` params go to the members.

        See scikit-learn's metadata routing user guide.

        Returns
        -------
        routing : MetadataRouter
        """
        return (
            MetadataRouter(owner=self)
            .add_self_request(self)
            .add(
                estimator=self._get_estimator(),
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        member = get_tags(self._get_estimator())
        tags.input_tags.sparse = member.input_tags.sparse
        tags.input_tags.allow_nan = member.input_tags.allow_nan
        tags.target_tags.required = True
        tags.target_tags.positive_only = True
        return tags


def _fit_members_together(template, seeds, X, y, fit_params, query_groups, drawable, progress=None):
    """The members trained as networks of one pass (``_stack.py``), or None
    when they cannot be: members that are not this package's rankers, or
    whose fits do not stack (L-BFGS, standardized CSR that stays sparse).

    Each member is the clone ``_fit_member`` would fit, seeded the same way;
    a bootstrap sample becomes the multiplicity of each query instead of a
    copy of its rows. The members share the minibatch order, the noise
    draws and the input scaling (fitted on all rows), so they differ from
    members fitted one by one in those draws (User Guide, "Bagging")."""
    if (
        not isinstance(template, BaseRanker) or template.solver == "lbfgs"
        or set(fit_params) - {"groups", "sample_weight"} or template.position_column is not None
    ):  # (a click-log fit is several fits in turns)
        return None
    members, runs, counts = [], [], []
    for seed in seeds:
        rng = np.random.RandomState(seed)
        member = clone(template)
        _set_random_states(member, rng)
        multiplicity = None
        if query_groups is not None:
            drawn = drawable[rng.randint(len(drawable), size=len(drawable))]
            multiplicity = np.bincount(drawn, minlength=query_groups.n_queries)
        run = member._plan_new_fit(X, y, fit_params.get("groups"), fit_params.get("sample_weight"))
        members.append(member)
        runs.append(run)
        counts.append(multiplicity)
    if not can_stack(runs):
        return None
    started = time.perf_counter()
    errors = fit_together(runs, counts)
    failed = next((error for error in errors if error is not None), None)
    if failed is not None:  # as the member's own fit would have
        raise failed
    for member, run in zip(members, runs):
        member._publish(run.published_model, run.history, run.options.resolved)
    if progress is not None:
        progress.together(members, time.perf_counter() - started)
    return members


def _fit_member(template, seed, X, y, fit_params, query_groups, drawable, progress=None):
    """Clone, seed and fit one member; with ``query_groups``, on a bootstrap
    sample of whole queries: as many draws as there are ``drawable`` query
    positions, with replacement."""
    rng = np.random.RandomState(seed)
    member = clone(template)
    _set_random_states(member, rng)
    if query_groups is not None:
        drawn = drawable[rng.randint(len(drawable), size=len(drawable))]
        rows, offsets = query_groups.rows_of(drawn)
        fit_params = {
            # (The validation set is no sample: it goes to every member whole.)
            name: _safe_indexing(value, rows) if _is_per_row(value, len(y)) and not name.endswith("_val") else value
            for name, value in fit_params.items()
        }
        if "groups" in fit_params:
            # One id per draw: a query drawn twice is two queries.
            fit_params["groups"] = query_of_row(offsets)
        X, y = _safe_indexing(X, rows), y[rows]
    started = time.perf_counter()
    member.fit(X, y, **fit_params)
    if progress is not None:
        progress.fitted(member, time.perf_counter() - started)
    # The optimizer's moments and the weight average serve a later
    # partial_fit, which a bag never makes: without them a member keeps its
    # weights only (a fifth of the memory with Adam's defaults).
    for inner in wrapped_chain(member):
        state = inner.__dict__.get("_fit_state")
        if state is not None:
            state.optimizer = state.weight_average = None
    return member


class _Progress:
    """``verbose``'s lines: one per member as it is fitted (members fitted
    in threads finish in any order), or, for members trained in one pass,
    the pass and then each member."""

    def __init__(self, n_members):
        self.n_members, self.done = n_members, 0
        self.lock = threading.Lock()

    def fitted(self, member, seconds):
        with self.lock:
            self.done += 1
            print(f"BaggingRanker: member {self.done} of {self.n_members} fitted in {seconds:.1f} s"
                  f"{_epochs(member)}", flush=True)

    def together(self, members, seconds):
        print(f"BaggingRanker: {len(members)} members trained in one pass in {seconds:.1f} s", flush=True)
        for i, member in enumerate(members, 1):
            print(f"BaggingRanker: member {i} of {len(members)}{_epochs(member)}", flush=True)


def _epochs(member):
    """", 41 epochs" (and the best validation score) for a ranker; "" else."""
    ranker = next((inner for inner in wrapped_chain(member) if hasattr(inner, "n_iter_")), None)
    if ranker is None:
        return ""
    best = getattr(ranker, "best_validation_score_", None)
    return f", {ranker.n_iter_} epochs" + ("" if best is None else f", best validation NDCG@10 {best:.4f}")


def _protected_rows(X, template):
    """``X`` as the members get it: a read-only view, unless they are rankers
    of this package, which never write into their input.

    Every member gets the same array (the caller's, or a view of it: a
    DataFrame's values), so a member that works in place, such as a Pipeline
    with ``StandardScaler(copy=False)``, would change the caller's ``X`` and
    the rows of the members after it: the next one would fit its scaler on
    rows already scaled, and ``predict`` would scale them again. scikit-learn
    transformers copy a read-only input before writing into it (their
    ``force_writeable``); any other writer gets numpy's read-only error
    instead of a silent change. The package's rankers get ``X`` as it is, as
    a read-only array would cost them a copy of every minibatch's rows (see
    ``_inputs._gathers_in_one_pass``). A bootstrap sample is a copy per
    member, and writable.
    """
    if isinstance(template, BaseRanker):
        return X
    if sp.issparse(X):
        # A new matrix over read-only views of the same three arrays.
        parts = []
        for part in (X.data, X.indices, X.indptr):
            view = part.view()
            view.flags.writeable = False
            parts.append(view)
        return type(X)(tuple(parts), shape=X.shape, copy=False)
    view = X.view()
    view.flags.writeable = False
    return view


def _set_random_states(estimator, rng):
    """Set every ``random_state`` parameter, nested ones too, to an int
    drawn from ``rng`` (in the sorted order of their names)."""
    seeds = {
        name: int(rng.randint(_MAX_SEED))
        for name in sorted(estimator.get_params(deep=True))
        if name == "random_state" or name.endswith("__random_state")
    }
    if seeds:
        estimator.set_params(**seeds)


def _is_per_row(value, n_samples):
    if value is None or np.isscalar(value) or not hasattr(value, "__len__"):
        return False
    try:
        return _num_samples(value) == n_samples
    except TypeError:
        return False


def _scoring_step(estimator):
    """The estimator whose NDCG gain a member scores with (``gain``,
    exponential when it has none): the member, or the ranker it wraps (see
    :func:`wrapped_chain`), however deep."""
    for inner in wrapped_chain(estimator):
        if hasattr(inner, "gain"):
            return inner
    return inner
