"""The rankers with built-in cross-validation: ``LambdaRankRankerCV``,
``RankNetRankerCV`` and ``ListNetRankerCV``.

In the manner of ``RidgeCV`` and ``LogisticRegressionCV``: the ranker's own
parameters, plus a grid over some of them (``param_grid``), a splitter of
whole queries (``cv``) and a query-aware scorer (``scoring``). ``fit``
scores every setting on every fold, then refits the best setting on all the
data, and the estimator is that ranker (``alpha_``, ``coefs_``, ``predict``,
...), with ``cv_results_`` in ``GridSearchCV``'s format beside it.

What makes it faster than ``GridSearchCV`` over the ranker: on each fold the
settings train together as networks of one pass (``_stack.py``), sharing
every minibatch's gathered and encoded rows and one first-layer product.
Each fold's networks get their own input scaling, fitted on that fold's
training rows, as the separate fits of a search would: nothing of a fold's
held-out queries reaches its networks. Settings that cannot share a pass
(another ``batch_size``, ``feature_scaling`` or ``early_stopping``, L-BFGS)
form passes of their own.
"""

import time
import warnings
from numbers import Integral

import numpy as np
from scipy.stats import rankdata
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import GroupKFold, KFold, ParameterGrid, check_cv
from sklearn.utils._indexing import _safe_indexing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_sample_weight, _num_samples, check_X_y

from ._docstrings import sections, without_entries
from ._fit_checks import warn_if_no_groups
from ._habits import refuse_unexpected_keywords
from ._lambdarank import LambdaRankRanker
from ._listnet import ListNetRanker
from ._metadata_columns import features_and_metadata
from ._positions import check_click_log, check_propensities_can_be_estimated, check_propensities_have_positions
from ._ranknet import RankNetRanker
from ._scorer_requests import metadata_taken
from ._stack import can_stack, fit_together
from ._validation import float_column, shown
from ._validation_set import validation_input

#: The grid when ``param_grid`` is None: the penalty, over the span of the
#: rankers' defaults ("auto": 5 and 15; RankNet 1.5, ListNet 15).
DEFAULT_GRID = {"alpha": [1.0, 5.0, 20.0, 50.0]}
#: Folds when ``cv`` is None.
DEFAULT_FOLDS = 5
#: Parameters of the CV rankers that are not the ranker's.
_OWN = ("param_grid", "cv", "scoring")


def _never(self):
    return False


class _RankerCV:
    """What the CV rankers add to their ranker: the search in ``fit``."""

    _ranker_class = None
    # The refit is a new ranker: a CV ranker never continues a fit.
    warm_start = False

    def _store(self, arguments):
        # __init__ only stores its arguments, as scikit-learn asks.
        for name, value in arguments.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    def _ranker(self, **settings):
        """A new ranker of this estimator's parameters, ``settings`` over
        them (a clone, as GridSearchCV's: a RandomState instance is copied,
        so that every fit starts from the same stream)."""
        params = {name: value for name, value in self.get_params(deep=False).items() if name not in _OWN}
        return clone(clone(self._ranker_class(**params)).set_params(**settings))

    def fit(
        self, X, y, groups=None, sample_weight=None, positions=None, propensities=None, *, X_val=None,
        y_val=None, groups_val=None, sample_weight_val=None, **unexpected,
    ):
        """Score every setting of ``param_grid`` on every fold, then fit the
        best one on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors of (query, document) pairs, as in the ranker's
            ``fit``.
        y : array-like of shape (n_samples,)
            Graded relevance of each row.
        groups : array-like of shape (n_samples,), default=None
            Query id of each row: the folds hold whole queries. ``None``
            takes them from ``query_column``; without either, ``fit``
            raises (a fold of rows cut out of queries would score nothing
            meaningful).
        sample_weight : array-like of shape (n_samples,), default=None
            Query weights, as in the ranker's ``fit``: every fold's fits and
            the refit get them; a scorer gets them when it requests them
            (``set_score_request(sample_weight=True)``).
        positions : array-like of shape (n_samples,), default=None
            For a click log (``y`` the clicks, ``groups`` the sessions): the
            rank each row was shown at, as in the ranker's ``fit`` (see
            :ref:`clicks`). Every fold's fits and the refit get them, and
            fit one by one rather than together. The folds then score
            held-out *clicks*, which favour the logging ranker's order.
        propensities : array-like of shape (n_positions,), default=None
            Known propensities of the ranks, with ``positions``, as in the
            ranker's ``fit``.
        X_val, y_val, groups_val, sample_weight_val : array-like, default=None
            A validation set for early stopping, as in the ranker's ``fit``
            (with ``X``'s columns): every fold's fits and the refit stop on
            it, as ``GridSearchCV`` passes fit parameters to every fit. The
            folds still score their held-out queries. Fits with a
            validation set train one by one rather than together.
        **unexpected : dict
            No other keyword argument is taken. LightGBM's and XGBoost's
            (``group=``, ``qid=``, ``eval_set=``) get a ``TypeError`` that
            names what to give instead.

        Returns
        -------
        self : object
            The fitted ranker of the best setting.
        """
        refuse_unexpected_keywords(type(self).__name__, "fit", unexpected)
        self._validate_params()
        features, query_ids, positions = features_and_metadata(X, groups, positions, self)
        validation = validation_input(self, X_val, y_val, groups_val, sample_weight_val)
        # Arrays the folds can be cut from (the rankers validate each fold
        # as they validate any X; the refit gets X as it was given).
        features, y = check_X_y(features, y, accept_sparse="csr", dtype=None, ensure_all_finite=False)
        grid = self._grid()
        scorer = self._scorer()
        n_samples = _num_samples(features)
        grouped = query_ids is not None
        if not grouped:
            # As the rankers: all rows are one query (and a warning says so),
            # whose rows the folds share out.
            warn_if_no_groups(None, n_samples, "fit", stacklevel=2)
            query_ids = np.zeros(n_samples, dtype=np.int64)
        splitter = self._splitter(grouped)
        weights = None if sample_weight is None else _check_sample_weight(sample_weight, features)
        if positions is not None:
            # Checked whole, before folds are cut from them.
            clicks, positions = check_click_log(float_column(y, "y"), positions, n_samples, self.position_column)
            if propensities is None:
                check_propensities_can_be_estimated(clicks, positions)
        check_propensities_have_positions(positions, propensities)
        splits = list(splitter.split(features, y, query_ids if grouped else None))
        query_ids = np.asarray(query_ids)
        if not grid or not splits:
            empty = "param_grid holds no setting" if not grid else "cv gave no split"
            raise ValueError(f"No fits were performed: {empty}. Give at least one setting and one split.")
        if grouped:
            _warn_if_splits_cut_queries(splits, query_ids)
        # The fold rankers see arrays (the columns as ``features``): so does their validation set.
        fold_validation = None if validation is None else {
            "X_val": validation.X.to_numpy() if hasattr(validation.X, "iloc") else validation.X,
            "y_val": validation.y, "groups_val": validation.groups, "sample_weight_val": validation.sample_weight,
        }
        n_settings = len(grid)
        failures = {}  # id(fold ranker) -> the error its fit raised, as GridSearchCV's error_score=nan
        test_scores = np.empty((n_settings, len(splits)))
        fit_times = np.empty_like(test_scores)
        score_times = np.empty_like(test_scores)
        for fold, (train, test) in enumerate(splits):
            fold_fit = _FoldData(features, y, query_ids, weights, train, positions)
            fold_test = _FoldData(features, y, query_ids, weights, test)
            rankers = [self._ranker(query_column=None, position_column=None, **setting) for setting in grid]
            for indices, seconds in self._fit_fold(rankers, fold_fit, failures, propensities, fold_validation):
                fit_times[indices, fold] = seconds
            for i, ranker in enumerate(rankers):
                started = time.perf_counter()
                failed = id(ranker) in failures
                test_scores[i, fold] = np.nan if failed else _score(scorer, ranker, fold_test)
                score_times[i, fold] = time.perf_counter() - started
        _report_failures(failures, n_settings * len(splits))
        self.cv_results_ = _results(grid, test_scores, fit_times, score_times)
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = grid[self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.n_splits_ = len(splits)
        started = time.perf_counter()
        refit_groups = groups if grouped else query_ids  # warned once already
        click_log = {} if positions is None else {"positions": positions, "propensities": propensities}
        given_validation = {"X_val": X_val, "y_val": y_val, "groups_val": groups_val,
                            "sample_weight_val": sample_weight_val}
        best = self._ranker(**self.best_params_).fit(
            X, y, refit_groups, sample_weight, **click_log, **given_validation,
        )
        self.refit_time_ = time.perf_counter() - started
        params = best.get_params(deep=False)
        self.__dict__.update({k: v for k, v in best.__dict__.items() if k not in params})
        return self

    @available_if(_never)
    def partial_fit(self, X, y, groups=None, sample_weight=None):  # pragma: no cover
        """Not available: a search needs every query at once."""

    def _grid(self):
        grid = DEFAULT_GRID if self.param_grid is None else self.param_grid
        ranker_params = set(self._ranker_class().get_params(deep=False)) - {"warm_start", "query_column", "position_column"}
        for one in [grid] if isinstance(grid, dict) else grid:
            unknown = sorted(set(one) - ranker_params)
            if unknown:
                raise ValueError(
                    f"param_grid names {unknown}, which {self._ranker_class.__name__} does not take "
                    f"(or which a search cannot vary: warm_start, query_column, position_column). It takes: "
                    f"{sorted(ranker_params)}."
                )
        return list(ParameterGrid(grid))

    def _splitter(self, grouped):
        if self.cv is None or isinstance(self.cv, Integral):
            n_splits = DEFAULT_FOLDS if self.cv is None else int(self.cv)
            return GroupKFold(n_splits=n_splits) if grouped else KFold(n_splits=n_splits)
        return check_cv(self.cv)

    def _scorer(self):
        return None if self.scoring is None else check_scoring(self._ranker(), scoring=self.scoring)

    def _fit_fold(self, rankers, data, failures, propensities=None, validation=None):
        """Fit the rankers of one fold, in passes of networks that can
        share one; yields (ranker indices, seconds per ranker) per pass.
        A fit that raises is recorded in ``failures``. On a click log each
        ranker fits on its own (its fit is several fits in turns), and so
        does a fit on a validation set of the user's (``_stack.can_stack``)."""
        if data.positions is not None or validation is not None:
            click_log = {} if data.positions is None else {"positions": data.positions,
                                                           "propensities": propensities}
            for i, ranker in enumerate(rankers):
                started = time.perf_counter()
                try:
                    ranker.fit(data.X, data.y, data.groups, data.sample_weight, **click_log, **(validation or {}))
                except Exception as error:
                    failures[id(ranker)] = error
                yield [i], time.perf_counter() - started
            return
        started = time.perf_counter()
        runs = []
        for ranker in rankers:
            try:
                runs.append(ranker._plan_new_fit(data.X, data.y, data.groups, data.sample_weight))
            except Exception as error:
                failures[id(ranker)] = error
                runs.append(None)
        planned = (time.perf_counter() - started) / len(rankers)
        passes = []
        for i, run in enumerate(runs):
            if run is None:
                continue
            for members in passes:
                if can_stack([runs[members[0]], run]):
                    members.append(i)
                    break
            else:
                passes.append([i])
        for members in passes:
            started = time.perf_counter()
            if len(members) == 1 and not can_stack([runs[members[0]]]):
                only = rankers[members[0]]  # L-BFGS, or standardized sparse rows: the ranker's own fit
                try:
                    only.fit(data.X, data.y, data.groups, data.sample_weight)
                except Exception as error:
                    failures[id(only)] = error
            else:
                group = [runs[i] for i in members]
                errors = fit_together(group)
                for i, error in zip(members, errors):
                    if error is None:
                        rankers[i]._publish(runs[i].published_model, runs[i].history, runs[i].options.resolved)
                    else:
                        failures[id(rankers[i])] = error
            yield members, planned + (time.perf_counter() - started) / len(members)


def _report_failures(failures, n_fits):
    """As ``GridSearchCV`` with ``error_score=np.nan``: failed fits score
    NaN, with a warning naming their errors; all of them failing is an
    error."""
    if not failures:
        return
    summary = "\n".join(sorted({f"{type(e).__name__}: {e}" for e in failures.values()}))
    if len(failures) == n_fits:
        raise ValueError(f"All the {n_fits} fits failed. Their errors:\n{summary}")
    warnings.warn(
        f"{len(failures)} of the {n_fits} fits failed; their scores are NaN (ranked last). "
        f"Their errors:\n{summary}", FitFailedWarning, stacklevel=3,
    )


def _warn_if_splits_cut_queries(splits, query_ids):
    """Warn when a split of the user's puts rows of one query on both sides:
    the held-out rows then score documents ranked against ones the fit saw
    (and GroupKFold's splits never do it)."""
    for fold, (train, test) in enumerate(splits):
        shared = np.intersect1d(query_ids[np.asarray(train)], query_ids[np.asarray(test)])
        if len(shared):
            warnings.warn(
                f"Split {fold} of cv puts rows of {len(shared)} queries (e.g. {shown(shared[0])!r}) both in "
                "training and in testing: each fold should hold whole queries (a group splitter such "
                "as GroupKFold, given the query ids as groups).",
                UserWarning, stacklevel=4,
            )
            return


class _FoldData:
    """The rows ``index`` of the search's data."""

    def __init__(self, X, y, groups, sample_weight, index, positions=None):
        self.X = _safe_indexing(X, index)
        self.y, self.groups = y[index], groups[index]
        self.sample_weight = None if sample_weight is None else sample_weight[index]
        self.positions = None if positions is None else positions[index]


def _score(scorer, ranker, data):
    """A fitted fold ranker's score on held-out rows: the ranker's own
    ``score`` (mean NDCG@10 by query) without a scorer; a scorer gets the
    query ids (and weights) it takes (``_scorer_requests``)."""
    if scorer is None:
        return ranker.score(data.X, data.y, groups=data.groups)
    taken = metadata_taken(scorer)
    given = {"groups": data.groups, "sample_weight": data.sample_weight}
    kwargs = {name: given[name] for name in given if taken[name] and given[name] is not None}
    with config_context(enable_metadata_routing=True):
        return float(scorer(ranker, data.X, data.y, **kwargs))


def _results(grid, test_scores, fit_times, score_times):
    """``cv_results_`` in ``GridSearchCV``'s layout."""
    results = {
        "mean_fit_time": fit_times.mean(axis=1), "std_fit_time": fit_times.std(axis=1),
        "mean_score_time": score_times.mean(axis=1), "std_score_time": score_times.std(axis=1),
    }
    names = sorted({name for setting in grid for name in setting})
    for name in names:
        column = np.ma.MaskedArray(np.empty(len(grid), dtype=object), mask=True)
        for i, setting in enumerate(grid):
            if name in setting:
                column[i] = setting[name]
        results[f"param_{name}"] = column
    results["params"] = grid
    for fold in range(test_scores.shape[1]):
        results[f"split{fold}_test_score"] = test_scores[:, fold]
    mean = test_scores.mean(axis=1)
    results["mean_test_score"] = mean
    results["std_test_score"] = test_scores.std(axis=1)
    # As GridSearchCV: the best is rank 1, ties share the lower rank, and a
    # NaN score ranks last.
    finite = np.where(np.isnan(mean), -np.inf, mean)
    results["rank_test_score"] = rankdata(-finite, method="min").astype(np.int32)
    return results


def _cv_constraints(ranker_class):
    constraints = {k: v for k, v in ranker_class._parameter_constraints.items() if k != "warm_start"}
    return {
        **constraints,
        "param_grid": [dict, list, None],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
    }


_CV_PARAMETERS = """\
param_grid : dict or list of dicts, default=None
    Settings to compare, as ``GridSearchCV``'s ``param_grid``: names of this
    ranker's parameters and the values to try (any but ``warm_start``,
    ``query_column`` and ``position_column``); the parameters it does not name keep this
    estimator's values. ``None`` means ``{"alpha": [1.0, 5.0, 20.0, 50.0]}``.
cv : int, cross-validation generator or iterable, default=None
    How to split the queries: an int is ``GroupKFold(n_splits=cv)``,
    ``None`` is ``GroupKFold(5)``; a splitter (or an iterable of (train,
    test) index arrays) is given the query ids as its groups, and every
    fold should hold whole queries. Without query ids, all rows are one
    query (with a warning, as in ``fit`` of the ranker) and an int is
    ``KFold`` over its rows.
scoring : str, callable or None, default=None
    How to score a fold: ``None`` is the ranker's ``score`` (mean NDCG@10
    by query); a query-aware scorer such as ``ndcg_scorer(5)`` or
    ``map_scorer()`` gets the fold's query ids, as does a scikit-learn
    scorer whose metric takes ``groups`` (``make_scorer(ndcg_score, k=5)``)
    unless it refuses them (``set_score_request(groups=False)``), and a
    function ``scoring(estimator, X, y)`` that has a ``groups`` (or
    ``sample_weight``) parameter."""

_CV_ATTRIBUTES = """\
cv_results_ : dict of numpy (masked) ndarrays
    Every setting's scores and times, in ``GridSearchCV``'s layout
    (``params``, ``param_<name>``, ``split<i>_test_score``,
    ``mean_test_score``, ``std_test_score``, ``rank_test_score``,
    ``mean_fit_time``, ...). The settings of a fold train in one pass, so a
    setting's fit time is its share of that pass.
best_params_ : dict
    The setting of the best mean score, refitted on all the data.
best_score_ : float
    Its mean score over the folds.
best_index_ : int
    Its index in ``cv_results_["params"]``.
n_splits_ : int
    Number of folds.
refit_time_ : float
    Seconds of the refit on all the data."""


def _cv_docstring(ranker_class):
    if ranker_class.__doc__ is None:  # python -OO
        return None
    name = ranker_class.__name__
    _, parts = sections(ranker_class.__doc__)
    return "\n\n".join([
        f"{name} with built-in cross-validation over whole queries.",
        f"Scores every setting of ``param_grid`` on every fold of ``cv`` with ``scoring``, then "
        f"fits the best one on all the data: the fitted estimator is that {name}, with the "
        "search's ``cv_results_``, ``best_params_`` and ``best_score_`` beside it. On each fold "
        "the settings train together, as networks of one pass over the fold's rows, which costs "
        "a fraction of fitting them one by one (``GridSearchCV``). The networks differ from "
        "separate fits only in their random draws (minibatch order, noise); see "
        ":ref:`searching`.",
        "Parameters\n----------\n" + _CV_PARAMETERS + "\n" + without_entries(parts["Parameters"], {"warm_start"}),
        "Attributes\n----------\n" + _CV_ATTRIBUTES + "\n" + parts["Attributes"],
        f"See Also\n--------\n{name} : The ranker, for one setting.\n"
        "sklearn.model_selection.GridSearchCV : The general search, one fit per setting and fold.",
        "Examples\n--------\n" + _EXAMPLE.format(name=f"{name}CV"),
    ])


_EXAMPLE = """\
>>> from sklearn_ranknet import {name}
>>> from sklearn_ranknet.datasets import make_ranking
>>> X, y, qid = make_ranking(n_queries=60, random_state=0)
>>> search = {name}({{"alpha": [1.0, 20.0]}}, cv=3, hidden_layer_sizes=(16,), max_iter=10,
...                 random_state=0).fit(X, y, groups=qid)
>>> sorted(search.best_params_)
['alpha']
>>> search.cv_results_["mean_test_score"].shape
(2,)
>>> search.predict(X[:4]).shape
(4,)"""


class LambdaRankRankerCV(_RankerCV, LambdaRankRanker):
    __doc__ = _cv_docstring(LambdaRankRanker)
    _ranker_class = LambdaRankRanker
    _parameter_constraints = _cv_constraints(LambdaRankRanker)

    def __init__(
        self,
        param_grid=None,
        *,
        cv=None,
        scoring=None,
        hidden_layer_sizes='auto',
        activation='relu',
        solver='adam',
        alpha='auto',
        batch_size='auto',
        learning_rate_init='auto',
        max_iter=300,
        tol=0.003,
        n_iter_no_change='auto',
        early_stopping='auto',
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        verbose=False,
        sigma=1.0,
        n_jobs=None,
        feature_scaling='piecewise',
        dropout=0.0,
        input_noise='auto',
        ema_momentum='auto',
        precision='auto',
        query_column=None,
        position_column=None,
        metric='ndcg',
        k=None,
        gain='exponential',
        pair_weighting='lambdarank',
        normalize_lambdas='auto',
    ):
        self._store(locals())


class RankNetRankerCV(_RankerCV, RankNetRanker):
    __doc__ = _cv_docstring(RankNetRanker)
    _ranker_class = RankNetRanker
    _parameter_constraints = _cv_constraints(RankNetRanker)

    def __init__(
        self,
        param_grid=None,
        *,
        cv=None,
        scoring=None,
        hidden_layer_sizes=(64,),
        activation='relu',
        solver='adam',
        alpha=1.5,
        batch_size='auto',
        learning_rate_init=0.003,
        max_iter=300,
        tol=0.003,
        n_iter_no_change='auto',
        early_stopping='auto',
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        verbose=False,
        sigma=0.5,
        n_jobs=None,
        feature_scaling='piecewise',
        dropout=0.0,
        input_noise='auto',
        ema_momentum='auto',
        precision='auto',
        query_column=None,
        position_column=None,
        pair_targets='hard',
    ):
        self._store(locals())


class ListNetRankerCV(_RankerCV, ListNetRanker):
    __doc__ = _cv_docstring(ListNetRanker)
    _ranker_class = ListNetRanker
    _parameter_constraints = _cv_constraints(ListNetRanker)

    def __init__(
        self,
        param_grid=None,
        *,
        cv=None,
        scoring=None,
        hidden_layer_sizes=(64,),
        activation='relu',
        solver='adam',
        alpha=15.0,
        batch_size='auto',
        learning_rate_init='auto',
        max_iter=300,
        tol=0.003,
        n_iter_no_change='auto',
        early_stopping='auto',
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        verbose=False,
        sigma=1.0,
        n_jobs=None,
        feature_scaling='piecewise',
        dropout=0.0,
        input_noise='auto',
        ema_momentum='auto',
        precision='auto',
        query_column=None,
        position_column=None,
        gain='exponential',
    ):
        self._store(locals())
