"""The shared ranking estimator: parameters, validation, fit, predict, score.

Subclasses say what their objective is (``_objective_factory``), which
"auto" rules they follow (``_AUTO``, see ``_resolve.py``) and which
parameters they add. A fit validates the data, resolves the "auto" values
once (:func:`~sklearn_ranknet._resolve.resolve`) and hands a model
(``_model.RankingModel``) and its fit state to the training loop
(``_training.py``), which never calls back; the estimator then publishes
what the loop returned as its fitted attributes.
"""

import contextlib
import copy
import dataclasses
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _get_feature_names, assert_all_finite, check_array, check_is_fitted, validate_data

from . import _training
from ._fit_checks import query_contrasts, warn_if_no_groups, warn_if_nothing_to_learn, warn_if_pairs_swamp
from ._habits import refuse_unexpected_keywords, warn_if_a_column_holds_the_groups
from ._inputs import FEATURE_SCALINGS, InputScaling
from ._jit import effective_n_jobs, single_threaded_blas
from ._model import FitState, RankingModel
from ._positions import (
    N_REFITS, MergedLog, check_click_log, check_known_propensities, check_propensities_can_be_estimated,
    check_propensities_have_positions, estimate_propensities,
)
from ._metadata_columns import (
    METADATA_COLUMN_CONSTRAINT, check_width, estimator_features, features_and_metadata, merge_groups,
    missing_ids_fixes, split_query_column,
)
from ._resolve import RANKNET, DataShape, auto_parameters, hidden_layer_sizes, resolve
from ._training import SCORE_K, History, Options, TrainingSet
from ._validation import (
    check_finite_features, check_relevance_labels, first_text, float_column, label_remedy, shown,
)
from ._validation_set import validation_input, validation_set
from .metrics import ndcg_score

#: The learning curves a fit extends, as ``_training.History`` names them.
HISTORY = {
    "n_iter_": "n_iter", "loss_curve_": "loss_curve", "loss_": "loss", "validation_scores_": "validation_scores",
    "best_validation_score_": "best_validation_score", "best_loss_": "best_loss",
}

#: Arguments of fit that partial_fit cannot take (its TypeError says why).
_FIT_ONLY = frozenset({"positions", "propensities", "X_val", "y_val", "groups_val", "sample_weight_val"})


class BaseRanker(BaseEstimator):
    """Pairwise neural ranker trained on per-document lambdas."""

    # Ask for ``groups`` by default under metadata routing: a ranker without
    # query ids would train and score every fold as one query.
    __metadata_request__fit = {"groups": True}
    __metadata_request__partial_fit = {"groups": True}
    __metadata_request__score = {"groups": True}

    _SOLVERS = ("adam", "sgd")
    #: The ranker's "auto" rules (see ``_resolve.py``).
    _AUTO = RANKNET
    #: "auto" parameters decided outside the training loop, published by
    #: the subclass that resolves them (the Dask rankers' ``single_worker``).
    _RESOLVED_OUTSIDE_TRAINING = ()

    _parameter_constraints = {
        "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions({"identity", "logistic", "tanh", "relu"})],
        "solver": [StrOptions({"adam", "sgd", "lbfgs"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "early_stopping": ["boolean", StrOptions({"auto"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "momentum": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Integral, None, -1, closed="right"),
            None,
        ],
        "feature_scaling": [StrOptions(set(FEATURE_SCALINGS)), None],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "input_noise": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "ema_momentum": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="left")],
        "precision": [StrOptions({"auto", "float32", "float64"})],
        "query_column": METADATA_COLUMN_CONSTRAINT,
        "position_column": METADATA_COLUMN_CONSTRAINT,
    }

    # Concrete rankers declare every parameter with its default (scikit-learn
    # reads them from their own __init__); this one only stores them.
    def __init__(
        self,
        hidden_layer_sizes,
        *,
        activation,
        solver,
        alpha,
        batch_size,
        learning_rate_init,
        max_iter,
        tol,
        n_iter_no_change,
        early_stopping,
        validation_fraction,
        momentum,
        random_state,
        warm_start,
        verbose,
        sigma,
        n_jobs,
        feature_scaling,
        dropout,
        input_noise,
        ema_momentum,
        precision,
        query_column,
        position_column,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.momentum = momentum
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.sigma = sigma
        self.n_jobs = n_jobs
        self.feature_scaling = feature_scaling
        self.dropout = dropout
        self.input_noise = input_noise
        self.ema_momentum = ema_momentum
        self.precision = precision
        self.query_column = query_column
        self.position_column = position_column


    # ------------------------------------------------------------------
    # What subclasses provide

    def _objective_factory(self, resolved, linear_gain=False):  # pragma: no cover
        """A function ``(labels, offsets) -> objective`` for the resolved
        values ``resolved``; None for an objective that only plans a fit
        (which pairs it visits, which documents it tells apart), before the
        values are resolved. ``linear_gain`` asks for gain ``label`` in place
        of the ranker's ``gain``."""
        raise NotImplementedError

    def _uses_exponential_gain(self):
        # score() and early stopping use NDCG with gain 2**label - 1.
        return True

    def _list_weights(self, log, labels):
        """Weight of each list of a merged click log (``_positions.MergedLog``)
        in a fit on its corrected click rates ``labels``: its sessions."""
        return log.weights

    # ------------------------------------------------------------------
    # Public API

    def fit(
        self, X, y, groups=None, sample_weight=None, positions=None, propensities=None, *, X_val=None, y_val=None,
        groups_val=None, sample_weight_val=None, **unexpected,
    ):
        """Fit the ranker to documents grouped by query, or to a click log.

        A call that raises leaves the ranker as it was before it: unfitted,
        or with the model it had.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors of (query, document) pairs, never copied when
            dense. float32 input gives a float32 model; other dtypes are
            converted to float64. The network trains in ``precision``
            (float32 by default for the stochastic solvers). See
            :ref:`performance` for CSR input.
        y : array-like of shape (n_samples,)
            Graded relevance of each row, finite and >= 0 (e.g. 0..4).
        groups : array-like of shape (n_samples,), default=None
            Query id of each row, of any sortable type and in any order.
            ``None`` takes them from ``query_column`` when it is set, and
            otherwise treats all rows as one query (and warns). See
            :ref:`groups`.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row's query, >= 0 and the same on every row of a
            query: the objective is the weighted mean over queries. ``None``
            weighs queries equally. See :ref:`query-weights`.
        positions : array-like of shape (n_samples,), default=None
            For a click log: the 1-based rank at which each row was shown,
            with ``y`` the clicks (0 or 1) and ``groups`` the session ids.
            The ranker then learns each position's examination propensity
            with the model and trains on clicks corrected by it (see
            :ref:`clicks`). Under metadata routing it is requested with
            ``set_fit_request(positions=True)``.
        propensities : array-like of shape (n_positions,), default=None
            With ``positions``: known examination propensities of ranks
            1..n_positions (from a randomization experiment, say), used
            instead of estimated ones: > 0, at least as many as the deepest
            position (the ranks below it are not used). Only their ratios
            matter. One value per rank, not per row.
        X_val : {array-like, sparse matrix} of shape (n_val, n_features), default=None
            Validation rows for early stopping, with the columns of ``X``
            (the ``query_column`` included when it is set): each epoch
            scores their NDCG@10 (``validation_scores_``) instead of
            holding out ``validation_fraction`` of the training queries,
            and ``early_stopping="auto"`` then stops early at any size.
            Needs ``y_val`` and a stochastic solver; refused with
            ``early_stopping=False``. Under metadata routing it is
            requested with ``set_fit_request(X_val=True, ...)``, and a
            Pipeline transforms it with ``Pipeline(...,
            transform_input=["X_val"])``. See :ref:`stopping`.
        y_val : array-like of shape (n_val,), default=None
            Graded relevance of each validation row.
        groups_val : array-like of shape (n_val,), default=None
            Query id of each validation row (or ``None`` with a
            ``query_column``); needed for more than one row.
        sample_weight_val : array-like of shape (n_val,), default=None
            Query weights of the validation rows, as ``sample_weight``.
        **unexpected : dict
            No other keyword argument is taken. LightGBM's and XGBoost's
            (``group=``, ``qid=``, ``eval_set=``) get a ``TypeError`` that
            names what to give instead.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        refuse_unexpected_keywords(type(self).__name__, "fit", unexpected)
        self._validate_params()
        with self._as_before_if_it_raises():
            self._begin_fit()
            continued = self if hasattr(self, "_model") else None  # warm_start
            X, groups, positions = features_and_metadata(X, groups, positions, self, continued)
            validation = validation_input(self, X_val, y_val, groups_val, sample_weight_val)
            if positions is not None:
                return self._fit_clicks(X, y, groups, sample_weight, positions, propensities, validation)
            check_propensities_have_positions(positions, propensities)
            self.position_propensities_ = None
            return self._fit(X, y, groups, sample_weight, incremental=False, validation=validation)

    def _fit_clicks(self, X, clicks, groups, sample_weight, positions, known=None, validation=None):
        """Fit on a click log, estimating the propensities in turns with the
        model (see ``_positions.py``): a first fit on the raw click rates,
        then :data:`~._positions.N_REFITS` rounds of re-estimating the
        propensities from the model's scores and refitting on the corrected
        rates; with ``known`` propensities, one fit on the rates they
        correct."""
        feature_names = _get_feature_names(X)  # check_array drops them; the fits below see arrays
        if validation is not None and feature_names is not None:
            validation = _validation_rows_of(validation, feature_names)
        X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32), ensure_all_finite=False)
        check_finite_features(X, type(self).__name__, self.feature_scaling)
        X = _summed_duplicates(X)
        clicks, positions = check_click_log(float_column(clicks, "y"), positions, X.shape[0], self.position_column)
        log = MergedLog.of(X, clicks, groups, positions, sample_weight)
        rows = X[log.rows]
        n_positions = int(positions.max())
        if known is not None:
            propensities = check_known_propensities(known, n_positions)
            rounds = 1
        else:
            check_propensities_can_be_estimated(clicks, positions)
            propensities = np.ones(n_positions)
            rounds = N_REFITS + 1
        one_document_each = bool(np.all(np.bincount(log.lists) == 1))
        for refit in range(rounds):
            if refit:
                scores = self._predict_features(rows)
                propensities = estimate_propensities(log, scores, n_positions, start=propensities)
                self._begin_fit()
            labels = log.debiased_labels(propensities)
            weights = self._list_weights(log, labels)[log.lists]
            with warnings.catch_warnings():
                if refit < rounds - 1:  # the last fit says what they would all say
                    warnings.simplefilter("ignore")
                elif one_document_each:  # said below, in a click log's terms
                    warnings.filterwarnings("ignore", message="fit found no query with two documents")
                # One frame deeper than fit's own: warnings name fit's caller.
                self._fit(
                    rows, labels, log.lists, weights, incremental=False, linear_gain=True, stacklevel=6,
                    validation=validation,
                )
        if one_document_each:
            warnings.warn(
                "fit found no session of the click log that showed two documents, so there is "
                "nothing to rank within a list: the model is its random initialization, shrunk "
                "by the penalty. Give each session's id as groups, shared by all the documents "
                "it showed, with positions the rank of each within the session.",
                UserWarning, stacklevel=3,
            )
        self.position_propensities_ = propensities
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        return self

    def _check_stochastic_solver(self):
        if self.solver == "lbfgs":
            raise AttributeError(
                'partial_fit needs a stochastic solver ("adam" or "sgd"), not "lbfgs".'
            )
        return True

    @available_if(_check_stochastic_solver)
    def partial_fit(self, X, y, groups=None, sample_weight=None, **unexpected):
        """One pass over the given queries, for data that arrives in chunks.

        Each call must hold whole queries. Early stopping does not apply and
        ``max_iter`` is ignored; the optimizer's state carries over from call
        to call. A call that raises leaves the model of the calls before it.
        Read more in the :ref:`User Guide <continuing>`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors of (query, document) pairs, as in :meth:`fit`.
            Later calls are converted to the precision of the first.
        y : array-like of shape (n_samples,)
            Graded relevance of each row, finite and >= 0.
        groups : array-like of shape (n_samples,), default=None
            Query id of each row, as in :meth:`fit`; every query of the call
            must be whole.
        sample_weight : array-like of shape (n_samples,), default=None
            Query weights, as in :meth:`fit`: they weigh this call's queries
            against each other, not the call against the others.
        **unexpected : dict
            No other keyword argument is taken: ``fit``'s click log
            (``positions=``) and validation set (``X_val=``) and LightGBM's
            and XGBoost's keywords get a ``TypeError`` that says why.

        Returns
        -------
        self : object
            The updated ranker.
        """
        if unexpected.keys() & _FIT_ONLY:
            name = sorted(unexpected.keys() & _FIT_ONLY)[0]
            raise TypeError(
                f"{type(self).__name__}.partial_fit() got {name}=, which only fit takes: a click log's "
                "propensities are estimated from the whole log, and early stopping on a validation "
                "set needs the epochs of one fit."
            )
        refuse_unexpected_keywords(type(self).__name__, "partial_fit", unexpected)
        # Every call (MLPRegressor checks only the first): set_params between
        # calls may bring a value fit would refuse.
        self._validate_params()
        with self._as_before_if_it_raises():
            continued = self if hasattr(self, "_model") else None
            if continued is None:
                self._reset()
            X, groups, positions = features_and_metadata(X, groups, None, self, continued)
            if positions is not None:
                raise ValueError(
                    f"partial_fit does not learn from click logs (position_column={self.position_column!r}): "
                    "the propensities are estimated from the whole log. Use fit, or set "
                    "position_column=None to train on graded labels."
                )
            return self._fit(X, y, groups, sample_weight, incremental=True)

    def predict(self, X):
        """Score every row; higher means ranked higher within its query.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors, with the columns seen in ``fit`` (and the
            ``query_column`` when it is set, which is dropped).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Pointwise scores: no query ids are needed to predict.

        Raises
        ------
        ValueError
            If a score is not finite: rows far outside the training range
            can overflow when the inputs are not bounded
            (``feature_scaling="standard"``, ``"log1p"`` or ``None``).
        """
        check_is_fitted(self, "coefs_")
        return self._predict_features(estimator_features(self, X))

    def _fitted_scaling_kind(self):
        """The fitted model's ``feature_scaling`` (None without input scaling)."""
        scaling = self._model.scaling
        return None if scaling is None else scaling.kind

    def _predict_features(self, X):
        """Scores of rows given without their query column."""
        X = _summed_duplicates(validate_data(
            self, X, accept_sparse="csr", dtype=(np.float64, np.float32), reset=False, ensure_all_finite=False,
        ))
        check_finite_features(X, type(self).__name__, self._fitted_scaling_kind())
        return self._model.scores(X)

    # The model's parameters, as scikit-learn's MLPs name them.

    @property
    def coefs_(self):
        return self._model.coefs

    @coefs_.setter
    def coefs_(self, coefs):
        self._model.coefs = list(coefs)

    @property
    def intercepts_(self):
        return self._model.intercepts

    @intercepts_.setter
    def intercepts_(self, intercepts):
        self._model.intercepts = list(intercepts)

    def score(self, X, y, groups=None, sample_weight=None, **unexpected):
        """Mean NDCG@10 over queries of the ranking given by ``predict(X)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors, as in :meth:`predict`.
        y : array-like of shape (n_samples,)
            Graded relevance labels.
        groups : array-like of shape (n_samples,), default=None
            Query id of each row; needed (here or in ``query_column``) for
            more than one row.
        sample_weight : array-like of shape (n_samples,), default=None
            Query weights, constant within each query: a weighted mean over
            queries.
        **unexpected : dict
            No other keyword argument is taken (for another cutoff or
            metric, use :func:`~sklearn_ranknet.metrics.ndcg_score` and its
            siblings); LightGBM's and XGBoost's ``group=`` and ``qid=`` get
            a ``TypeError`` naming ``groups=``.

        Returns
        -------
        score : float
            Mean NDCG@10 by query (gain 2**label - 1 unless the ranker's
            ``gain`` says otherwise; tied scores averaged). See
            :ref:`metric_conventions`.

        Raises
        ------
        ValueError
            When more than one row arrives without query ids (no ``groups``
            and no ``query_column``), e.g. from ``cross_validate`` with
            metadata routing off (see :ref:`routing`).
        """
        refuse_unexpected_keywords(type(self).__name__, "score", unexpected)
        check_is_fitted(self, "coefs_")
        return score_by_query(self, X, y, groups, sample_weight, self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self.feature_scaling is not None
        tags.target_tags.required = True
        tags.target_tags.positive_only = True
        return tags

    # ------------------------------------------------------------------
    # Training

    @contextlib.contextmanager
    def _as_before_if_it_raises(self):
        """A fit or partial_fit that raises leaves the ranker as it was
        before the call: unfitted after a failed first fit (no half-trained
        model may pass ``check_is_fitted``), and the previous model after a
        failed ``warm_start`` refit or ``partial_fit``, whose weights may
        have gone non-finite on the way. The parameters are not touched (a
        ``random_state`` instance stays the caller's object); the rest is a
        copy of a small state: the weights, the optimizer's moments, the
        input scaling's statistics and the training curves."""
        params = self.get_params(deep=False)
        before = copy.deepcopy({k: v for k, v in self.__dict__.items() if k not in params})
        try:
            yield
        except BaseException:
            for name in [k for k in self.__dict__ if k not in params]:
                del self.__dict__[name]
            self.__dict__.update(before)
            raise

    def _begin_fit(self):
        """What every ``fit`` (not ``partial_fit``) starts from: a fresh
        model, or with ``warm_start`` the fitted one. Like MLPRegressor's,
        each fit starts a new optimizer, so changed hyperparameters apply
        (only partial_fit carries its state on), and ``n_iter_`` counts the
        epochs of this fit (``loss_curve_`` and ``t_`` go on). Its stopping
        rule starts afresh too: the best loss of the fits before, on other
        data or another objective, would end this one after its patience
        however much it improved. Its random draws (minibatch order,
        validation split, noise) go on with the stream of the fits before,
        unless ``random_state`` was changed since: then they start anew from
        it, as every other changed hyperparameter applies."""
        if not (self.warm_start and hasattr(self, "_model")):
            self._reset()
        else:
            self.n_iter_ = 0
            self.best_loss_ = np.inf
            self._fit_state.reseeded(self.random_state)
        self._fit_state.optimizer = self._fit_state.weight_average = None

    def _reset(self):
        for name in ("_model", "loss_", "feature_mean_", "feature_scale_", "bin_edges_", "missing_features_",
                     "missing_fill_"):
            self.__dict__.pop(name, None)
        self._fit_state = FitState(self.random_state)
        self.n_iter_ = 0
        self.t_ = 0
        self.loss_curve_ = []
        self.validation_scores_ = None  # a list once early stopping runs
        self.best_validation_score_ = None
        self.best_loss_ = np.inf

    def _validate_training_data(self, X, y, first_call, method, linear_gain=False):
        text = first_text(y)
        if text is not None:  # validate_data would read a Series of "3" as 3.0
            raise ValueError(f"y must hold numeric relevance labels (e.g. 0..4); got text (e.g. {shown(text)!r}).")
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=(np.float64, np.float32), y_numeric=True,
            reset=first_call, ensure_all_finite=False,
        )
        check_finite_features(X, type(self).__name__,
                              self.feature_scaling if first_call else self._fitted_scaling_kind())
        X = _summed_duplicates(X)
        if not first_call and X.dtype != self._model.dtype:
            # A model keeps the dtype it was first fitted in.
            X = _in_precision(X, self._model.dtype, _continued(method))
        if X.shape[0] < 1:
            raise ValueError("X has no rows; there is nothing to rank.")
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must hold numeric relevance labels (e.g. 0..4); got dtype {y.dtype}.")
        y = y.astype(np.float64, copy=False)
        # scikit-learn's check passes an object y holding None (None != None
        # is False), and y_numeric then turns it into NaN.
        assert_all_finite(y, input_name="y")
        check_relevance_labels(
            y, exponential_gain=self._uses_exponential_gain() and not linear_gain, input_name="y",
            remedy=label_remedy(self),
        )
        return X, y

    def _fit(self, X, y, groups, sample_weight, incremental, linear_gain=False, stacklevel=5, validation=None):
        run = self._plan_fit(X, y, groups, sample_weight, incremental, linear_gain, stacklevel, validation)
        with single_threaded_blas() as blas_threads:
            run.state.block_threads = max(run.state.n_threads, blas_threads)
            if self.solver == "lbfgs" and not incremental:
                run.model = _training.fit_lbfgs(run.model, run.state, run.data, run.options, run.history)
            else:
                _training.fit_stochastic(
                    run.model, run.state, run.data, run.options, run.history, incremental, run.validation,
                )
        self._publish(run.published_model, run.history, run.options.resolved)
        return self

    def _plan_new_fit(self, X, y, groups=None, sample_weight=None):
        """What ``fit`` would hand the training loop, for a new model (a
        clone's first fit): :meth:`_plan_fit` after ``fit``'s own steps."""
        self._validate_params()
        self._reset()
        X, groups, positions = features_and_metadata(X, groups, None, self)
        if positions is not None:  # its fit is several fits in turns: see _fit_clicks
            raise ValueError("A fit on a click log (position_column) cannot train together with others.")
        return self._plan_fit(X, y, groups, sample_weight)

    def _plan_fit(
        self, X, y, groups, sample_weight, incremental=False, linear_gain=False, stacklevel=5, validation=None,
    ):
        """Everything a fit hands the training loop (a ``_training.Run``):
        the data validated and arranged, the "auto" values resolved, the
        model (new, or the fitted one it continues), its state and the
        curves it extends. BaggingRanker and the CV rankers plan several
        fits this way and train them together (``_stack.py``).
        ``linear_gain`` trains with gain ``label`` whatever the ranker's
        ``gain`` (for click rates divided by propensities, whose mean is the
        chance of a click once examined). ``stacklevel`` makes the
        warnings name the line that called ``fit`` or ``partial_fit``.
        ``validation``, a ``ValidationInput``, is the user's validation set
        (``_validation_set.py``)."""
        method = "partial_fit" if incremental else "fit"
        first_call = not hasattr(self, "_model")
        X, y = self._validate_training_data(X, y, first_call, method, linear_gain)
        warn_if_no_groups(groups, len(y), method, stacklevel=stacklevel)
        warn_if_a_column_holds_the_groups(X, groups, getattr(self, "feature_names_in_", None), stacklevel)
        arranged = TrainingSet.from_input(X, y, groups, None, sample_weight)
        resolved = self._resolve(DataShape.of(arranged), incremental, validation_given=validation is not None)
        make_objective = self._objective_factory(resolved, linear_gain=linear_gain)
        data = arranged.with_objective(make_objective)
        if validation is not None:
            validation = validation_set(
                self, validation, X.dtype,
                exponential_gain=self._uses_exponential_gain() and not linear_gain, remedy=label_remedy(self),
            )
        warn_if_nothing_to_learn(
            query_contrasts(data), np.diff(data.offsets), data.weights, method, stacklevel=stacklevel,
            query_column=self.query_column,
        )
        warn_if_pairs_swamp(self, data, stacklevel=stacklevel)
        self._check_solver_options(incremental)
        if not first_call:
            self._check_same_network()
        model = self._new_model(data, resolved) if first_call else self._model
        published = model.dtype  # X's, as MLPRegressor's weights are
        precision = np.dtype(resolved.precision)
        if precision != published:
            if model.scaling is None:  # raw rows go to the network: they must fit its dtype
                _in_precision(data.X, precision, f"precision={resolved.precision!r}")
            model = model.astype(precision)
        state = self._fit_state
        options = Options.of(self.get_params(deep=False), resolved)
        if linear_gain:
            options = dataclasses.replace(options, gain="linear")
        # Kernel threads for this fit only: 1 when a minibatch gives the
        # pool nothing to share (a pool round trip would cost more than it
        # saves). Its row blocks follow BLAS's threads instead (``_fit``).
        state.n_threads = (
            effective_n_jobs(self.n_jobs) if _training.pool_has_work(model, data, resolved.batch_size, self.solver)
            else 1
        )
        state.dropout, state.input_noise = self.dropout, resolved.input_noise
        return _training.Run(model, state, data, options, self._history(), published, validation)

    def _new_model(self, data, resolved):
        """A network of the resolved width on the input scaling of
        ``data``'s queries of positive weight (fitted once per model, like
        its weights, in the training set's arranged order, so that it does
        not depend on the input's row order), in ``X``'s precision."""
        scaling = None
        if self.feature_scaling is not None:
            counted = data.weighted
            scaling = InputScaling.fit(self.feature_scaling, counted.X, counted.rows, (counted.y, counted.offsets))
        return RankingModel.initialize(
            data.X.shape[1], resolved.hidden_layer_sizes, self.activation, scaling, data.X.dtype,
            self._fit_state.random_state,
        )

    def _resolve(self, shape, incremental, distributed=False, validation_given=False):
        """The fit's :class:`~sklearn_ranknet._resolve.Resolved` values (a
        fitted network keeps its width)."""
        fitted = hasattr(self, "_model")
        return resolve(
            self.get_params(deep=False), self._AUTO, shape, incremental=incremental, distributed=distributed,
            validation_given=validation_given,
            fitted_widths=self._model.hidden_layer_sizes if fitted else None,
            fitted_precision=getattr(self, "precision_", None) if fitted else None,
        )

    def _history(self):
        """The learning curves this fit extends."""
        return History(**{field: getattr(self, name, None) for name, field in HISTORY.items()})

    def _publish(self, model, history, resolved):
        """The fitted attributes of what a fit returned."""
        self._model = model
        self.t_ = self._fit_state.t
        for name, field in HISTORY.items():
            value = getattr(history, field)
            if value is not None or name != "loss_":
                setattr(self, name, value)
        for name in auto_parameters(self._parameter_constraints):
            if name not in self._RESOLVED_OUTSIDE_TRAINING:
                setattr(self, f"{name}_", getattr(resolved, name))
        if "learning_rate_init" in auto_parameters(self._parameter_constraints) and self._fit_state.optimizer:
            # partial_fit goes on with the step of the optimizer it resumes.
            self.learning_rate_init_ = self._fit_state.optimizer.learning_rate
        scaling = model.scaling
        self.feature_mean_ = None if scaling is None else scaling.mean
        self.feature_scale_ = None if scaling is None else scaling.scale
        self.missing_features_ = None if scaling is None else scaling.indicated.copy()
        self.missing_fill_ = None if scaling is None else scaling.imputed.copy()
        if scaling is None or scaling.encoding is None:
            self.bin_edges_ = None
        else:  # as KBinsDiscretizer's: an array of arrays
            self.bin_edges_ = np.empty(len(scaling.encoding.edges), dtype=object)
            self.bin_edges_[:] = scaling.encoding.edges

    def _check_same_network(self):
        """warm_start and partial_fit continue the fitted network: refuse a
        changed shape or input scaling rather than silently keep the old
        ones (get_params would then describe another model)."""
        fitted = self._model.hidden_layer_sizes
        sizes = self.hidden_layer_sizes
        wanted = fitted if isinstance(sizes, str) and sizes == "auto" else hidden_layer_sizes(sizes)
        scaling = self._model.scaling.kind if self._model.scaling is not None else None
        changes = []
        if fitted != wanted:
            changes.append(f"hidden_layer_sizes={wanted} (fitted: {fitted})")
        if scaling != self.feature_scaling:
            changes.append(f"feature_scaling={self.feature_scaling!r} (fitted: {scaling!r})")
        fitted_precision = getattr(self, "precision_", None)
        if self.precision != "auto" and fitted_precision is not None and self.precision != fitted_precision:
            changes.append(f"precision={self.precision!r} (fitted: {fitted_precision!r})")
        if changes:
            raise ValueError(
                "warm_start=True and partial_fit continue the fitted network, which "
                f"cannot take {' and '.join(changes)}. Set warm_start=False (or fit a "
                "clone) to train a new network with these settings."
            )

    def _check_solver_options(self, incremental):
        if self.solver != "lbfgs" or incremental:
            return
        if self.dropout or (self.input_noise != "auto" and self.input_noise):
            raise ValueError(
                "dropout and input_noise make every step random, which L-BFGS "
                'cannot follow; use solver="adam" or set them to 0.'
            )
        if self.early_stopping is True:
            raise ValueError(
                'early_stopping needs a stochastic solver ("adam" or "sgd"); '
                "L-BFGS stops on its own tolerance (tol) or at max_iter."
            )


def _validation_rows_of(validation, feature_names):
    """The validation input of a click-log fit, whose fits see arrays: a
    DataFrame ``X_val`` checked against the training columns, as
    ``predict`` checks them, then handed on as its values."""
    names = _get_feature_names(validation.X)
    if names is None:
        return validation
    if not np.array_equal(names, feature_names):
        raise ValueError(
            "The feature names should match those that were passed during fit: X_val's columns "
            f"{list(names)[:10]} differ from X's {list(feature_names)[:10]}."
        )
    return dataclasses.replace(validation, X=validation.X.to_numpy())


def _summed_duplicates(X):
    """``X``, or for a CSR matrix with duplicate entries a canonical copy.

    scipy lets a CSR row store a column twice and means the sum (as
    ``toarray()`` and ``X @ w`` do); the input scaling and the row gathers
    read ``X.data`` value by value, so they need each column once. CSR in
    scipy's canonical form (sorted indices, no duplicates: what it builds
    itself) is used as it is; any other is copied once.
    """
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _continued(method):
    return f"the precision this model was first fitted in, which {'warm_start' if method == 'fit' else method} keeps"


def _in_precision(X, dtype, reason):
    """``X`` cast to ``dtype`` (that of a model fitted before, or the
    precision raw rows train in), or an error if a finite value of ``X`` lies beyond
    that dtype's range: the cast would turn it into inf, which no check
    after it looks for, and the fit would train on it silently (or fail
    later with a message about the learning rate)."""
    with np.errstate(over="ignore"):
        cast = X.astype(dtype)
    values = cast.data if sp.issparse(cast) else cast
    if not np.isfinite(values).all():
        raise ValueError(
            f"X holds values beyond the range of {np.dtype(dtype)} (magnitude above "
            f"{np.finfo(dtype).max:g}), {reason}. Rescale those features, or fit a new "
            'model with precision="float64".'
        )
    return cast


def score_by_query(ranker, X, y, groups, sample_weight, scoring_ranker):
    """Mean NDCG@10 by query of ``ranker``'s scores (the rankers' and
    BaggingRanker's ``score``): query ids from ``groups`` or the query
    column, an error without any for several rows. The gain is that of
    ``scoring_ranker`` (the ranker itself, or a BaggingRanker's member), and
    so is the advice for labels too large for it."""
    query_ids = split_query_column(X, ranker.query_column)[1]
    X = estimator_features(ranker, X)  # its width checked before its ids are compared
    groups = merge_groups(groups, query_ids, ranker.query_column)
    scores = ranker._predict_features(X)
    check_groups_for_score(groups, len(scores), type(ranker).__name__)
    gain = getattr(scoring_ranker, "gain", "exponential")
    # Checked here, not by ndcg_score, whose errors name its own arguments
    # (y_true, y_score) rather than the caller's.
    labels = float_column(y, "y")
    if len(labels) != len(scores):
        raise ValueError(f"y has {len(labels)} rows but X has {len(scores)}; give one label per row of X.")
    assert_all_finite(labels, input_name="y")
    # ndcg_score's advice, gain="linear", is no parameter of RankNet's.
    check_relevance_labels(
        labels, exponential_gain=gain == "exponential", input_name="y", remedy=label_remedy(scoring_ranker)
    )
    if sample_weight is not None and np.ndim(sample_weight) == 0:
        # One weight for every row, as fit takes it (ndcg_score takes arrays).
        sample_weight = np.full(len(scores), sample_weight, dtype=np.float64)
    return ndcg_score(labels, scores, groups=groups, k=SCORE_K, gain=gain, sample_weight=sample_weight)


def check_groups_for_score(groups, n_samples, owner):
    """A score over several rows without query ids would be one query's NDCG
    for the whole input: the wrong number for any ranking data, so an error.
    """
    if groups is None and n_samples > 1:
        raise ValueError(
            f"{owner}.score got no groups, so it would score all {n_samples} rows as "
            f"one query. {missing_ids_fixes()}"
        )
