"""The shared ranking estimator: validation, the training loop, predict, score.

Subclasses say what their objective is (``_make_objective``) and which
parameters they add; everything else lives here.
"""

import contextlib
import copy
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import assert_all_finite, check_is_fitted, validate_data

from . import _network, _training
from ._inputs import (
    FEATURE_SCALINGS, INPUT_SCALING_ATTRIBUTES, InputScaling, block_rows, gather_rows,
    set_input_scaling_attributes, stays_sparse,
)
from ._jit import effective_n_jobs, single_threaded_blas
from ._noise import AUTO_INPUT_NOISE, auto_input_noise
from ._query_column import (
    QUERY_COLUMN_CONSTRAINT, check_width_with_column, features_and_groups, merge_groups,
    missing_ids_fixes, split_query_column,
)
from ._training import SCORE_K, TrainingSet
from ._validation import check_relevance_labels, first_text, float_column, label_remedy, shown
from .metrics import ndcg_score


#: From this many training rows, ``early_stopping="auto"`` holds out a
#: validation set (``HistGradientBoostingRegressor``'s threshold).
AUTO_EARLY_STOPPING_ROWS = 10_000
#: ``learning_rate_init="auto"`` takes its larger step below this many
#: training queries: an epoch there is a handful of steps, and the smaller
#: step left the training objective improving by more than ``tol`` per epoch
#: for hundreds of epochs (benchmarks/results/tune_defaults.md, nineteenth look).
AUTO_FEW_QUERIES = 100
#: Patience of ``n_iter_no_change="auto"``: ``AUTO_PATIENCE`` epochs below
#: ``AUTO_PATIENCE_LARGE_ROWS`` training rows, ``AUTO_PATIENCE_LARGE`` from
#: there. An epoch over large data is many steps and its validation queries
#: are many, so a shorter wait loses nothing and saves epochs; on small data
#: a short wait stops on validation noise (defaults study, eighth look).
AUTO_PATIENCE = 5
AUTO_PATIENCE_LARGE = 3
AUTO_PATIENCE_LARGE_ROWS = 100_000
#: ``ema_momentum="auto"``: this average of the weights when the fit holds
#: out no validation set (small data), none when it does. Without one, the
#: fit returns the last step's weights, and the average of the last few
#: hundred steps ranked better on real data: +0.005, +0.007 and +0.016
#: NDCG@10 (LambdaRank, RankNet, ListNet) on the Yahoo sample's training
#: folds, against losses of at most 0.004 on synthetic data. With early
#: stopping the best epoch is already chosen on held-out queries, and the
#: average made it run 1.2-3x the epochs (defaults study, tenth look).
AUTO_EMA_MOMENTUM = 0.9975


#: What stochastic training carries from one ``partial_fit`` to the next
#: (and what each ``fit`` starts afresh): the optimizer, and the moving
#: average of the weights with the trained weights it stands in for.
OPTIMIZER_STATE = ("_optimizer", "_weight_average")


class BaseRanker(BaseEstimator):
    """Pairwise neural ranker trained on per-document lambdas."""

    # Ask for ``groups`` by default under metadata routing: a ranker without
    # query ids would train and score every fold as one query.
    __metadata_request__fit = {"groups": True}
    __metadata_request__partial_fit = {"groups": True}
    __metadata_request__score = {"groups": True}

    _SOLVERS = ("adam", "sgd")

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
        "query_column": QUERY_COLUMN_CONSTRAINT,
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
        query_column,
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
        self.query_column = query_column

    # ------------------------------------------------------------------
    # What subclasses provide

    def _make_objective(self, labels, offsets):  # pragma: no cover
        raise NotImplementedError

    def _uses_exponential_gain(self):
        # score() and early stopping use NDCG with gain 2**label - 1.
        return True

    # ------------------------------------------------------------------
    # Public API

    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit the ranker to documents grouped by query.

        A call that raises leaves the ranker as it was before it: unfitted,
        or with the model it had.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors of (query, document) pairs. A dense ``X`` is
            never copied: each minibatch gathers its own rows. float32 input
            trains a float32 model (weights and products), as
            ``MLPRegressor`` does; other dtypes are converted to float64.
            CSR input is used as is when under 10 % of its entries are
            stored; one with more is densified once for the fit when that
            copy takes at most 256 MB (else a minibatch at a time), and one
            that stores duplicate entries is first summed into a canonical
            copy. A pandas DataFrame sets ``feature_names_in_``.
        y : array-like of shape (n_samples,)
            Graded relevance of each row, finite and >= 0 (e.g. 0..4).
            Rankers learn from documents of one query with different labels;
            a fit that has none (every query one row, or its labels tied)
            warns that it has nothing to learn.
        groups : array-like of shape (n_samples,), default=None
            Query id of each row, of any sortable type and in any order.
            ``None`` takes them from ``query_column`` when it is set, and
            otherwise treats all rows as one query (and warns).
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row's query, the same on every row of a query
            (an error otherwise), >= 0: a query's contribution to the
            training objective, and to the early-stopping score, is scaled
            by its weight (a weighted mean over queries), as in XGBoost's and
            LightGBM's rankers. ``None`` weighs queries equally. Weights
            are relative (divided by the largest; the ``alpha`` penalty
            counts the queries with a positive weight, not their total
            weight): a common factor that is a power of two changes no bit
            of the model, any other only the rounding of the weights'
            ratios, and so the model's last bits. A query of weight 0 is as
            if left out of what follows the data (the input scaling's
            statistics and the "auto" values); it only shares the
            minibatches, and so the random draws, of the others.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        self._validate_params()
        with self._as_before_if_it_raises():
            self._begin_fit()
            continued = self if hasattr(self, "coefs_") else None  # warm_start
            X, groups = features_and_groups(X, groups, self.query_column, continued)
            return self._fit(X, y, groups, sample_weight, incremental=False)

    def _check_stochastic_solver(self):
        if self.solver == "lbfgs":
            raise AttributeError(
                'partial_fit needs a stochastic solver ("adam" or "sgd"), not "lbfgs".'
            )
        return True

    @available_if(_check_stochastic_solver)
    def partial_fit(self, X, y, groups=None, sample_weight=None):
        """One pass over the given queries, for data that arrives in chunks.

        Each call must hold whole queries. Early stopping does not apply;
        ``max_iter`` is ignored. A call that raises (bad data, or weights
        gone non-finite) leaves the model of the calls before it. With
        ``ema_momentum="auto"`` (the default)
        the model is the moving average of the weights over the steps of
        every call so far (0.9975 per step), as in a ``fit`` without a
        validation set; set ``ema_momentum=0`` for the last step's weights.
        The optimizer's moments carry over from call to call; a
        ``learning_rate_init``, ``momentum`` or ``solver`` changed by
        ``set_params`` in between applies from the next call (a new solver
        starts with fresh moments), so a step size can be decayed by hand.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Feature vectors of (query, document) pairs, as in :meth:`fit`.
            Later calls are converted to the precision of the first.
        y : array-like of shape (n_samples,)
            Graded relevance of each row, finite and >= 0, as in :meth:`fit`.
        groups : array-like of shape (n_samples,), default=None
            Query id of each row, as in :meth:`fit`; every query of the call
            must be whole. ``None`` takes them from ``query_column`` when it
            is set, and otherwise treats all rows as one query (and warns).
        sample_weight : array-like of shape (n_samples,), default=None
            Query weights, as in :meth:`fit`: they weigh this call's queries
            against each other, not the call against the others (a factor
            common to all of them changes nothing but rounding, as in
            :meth:`fit` and ``MLPRegressor.partial_fit``). Every call moves
            the model by steps of ``learning_rate_init``.

        Returns
        -------
        self : object
            The updated ranker.
        """
        # Every call (MLPRegressor checks only the first): set_params between
        # calls may bring a value fit would refuse.
        self._validate_params()
        with self._as_before_if_it_raises():
            continued = self if hasattr(self, "coefs_") else None
            if continued is None:
                self._reset()
            X, groups = features_and_groups(X, groups, self.query_column, continued)
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
            can overflow the network's arithmetic when the inputs are not
            bounded (``feature_scaling="standard"``, ``"log1p"`` or ``None``).
        """
        check_is_fitted(self, "coefs_")
        features = split_query_column(X, self.query_column)[0]
        check_width_with_column(features, self.query_column, self)
        return self._predict_features(features)

    def _predict_features(self, X):
        """Scores of rows given without their query column."""
        X = _summed_duplicates(
            validate_data(self, X, accept_sparse="csr", dtype=(np.float64, np.float32), reset=False)
        )
        # A float64 model reads float32 rows as float64 (exactly, a block at
        # a time), so that they score as the same values in float64 do; a
        # float32 model keeps float64 rows, as MLPRegressor does.
        widen = X.dtype == np.float32 and self.coefs_[0].dtype == np.float64
        if widen and stays_sparse(X):
            X, widen = X.astype(np.float64), False  # its stored values only
        coefs, intercepts = self._network_params(X)
        scaling = self._input_scaling
        # Dense rows without scaling: one product (numpy widens float32 rows
        # in it, exactly). CSR that stays sparse: one sparse product.
        # Finite rows far outside the training range may overflow the
        # network's products: _finite_scores then raises an error that says
        # so, and numpy's overflow and NaN warnings before it would be noise.
        with np.errstate(over="ignore", invalid="ignore"):
            if (scaling is None and not sp.issparse(X)) or (
                stays_sparse(X) and (scaling is None or scaling.kind == "standard")
            ):
                return _finite_scores(_network.predict_scores(X, coefs, intercepts, self.activation))
            # Rows as fit reads them: scaled rows and CSR too dense to stay
            # sparse one block at a time, a copy each, so CSR scores as its
            # dense twin does, bit for bit.
            step = block_rows(max(X.shape[1], 0 if scaling is None else scaling.n_inputs))
            scores = []
            for start in range(0, X.shape[0], step):
                index = slice(start, start + step)
                rows = self._network_rows(gather_rows(X, index).astype(np.float64), slice(None)) if widen \
                    else self._network_rows(X, index)
                scores.append(_network.predict_scores(rows, coefs, intercepts, self.activation))
        return _finite_scores(np.concatenate(scores))

    def _network_params(self, X):
        """The parameters the network runs with on rows of ``X`` (see
        :meth:`_network_rows`)."""
        if self._input_scaling is None:
            return self.coefs_, self.intercepts_
        return self._input_scaling.network_params(X, self.coefs_, self.intercepts_)

    def _network_rows(self, X, index):
        """Rows of ``X`` as the network takes them: with input scaling, a new
        array, scaled (see ``_inputs.py``)."""
        if self._input_scaling is None:
            return gather_rows(X, index)
        return self._input_scaling.rows(X, index)

    def _model_gradient(self, X, coef_grads, intercept_grads):
        """Gradients for :meth:`_network_params` -> gradients of ``coefs_``
        and ``intercepts_``, in place."""
        if self._input_scaling is not None:
            self._input_scaling.model_gradient(X, coef_grads, intercept_grads)
        return coef_grads, intercept_grads

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
            queries.

        Returns
        -------
        score : float
            Mean NDCG@10 by query (gain 2**label - 1 unless the ranker's
            ``gain`` says otherwise; tied scores averaged).

        Raises
        ------
        ValueError
            When more than one row arrives without query ids (no ``groups``
            and no ``query_column``), e.g. from ``cross_validate`` with
            metadata routing off. The message names both fixes.
        """
        check_is_fitted(self, "coefs_")
        return score_by_query(self, X, y, groups, sample_weight, self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
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
        if not (self.warm_start and hasattr(self, "coefs_")):
            self._reset()
        else:
            self.n_iter_ = 0
            self.best_loss_ = np.inf
            # A model pickled before the seed was recorded keeps its stream.
            if not _same_seed(getattr(self, "_random_state_from", self.random_state), self.random_state):
                self._random_state = check_random_state(self.random_state)
                self._random_state_from = self.random_state
        for name in OPTIMIZER_STATE:
            self.__dict__.pop(name, None)

    def _reset(self):
        for name in (
            "coefs_", "intercepts_", *OPTIMIZER_STATE, "loss_", "loss_curve_", "validation_scores_",
            *INPUT_SCALING_ATTRIBUTES,
        ):
            self.__dict__.pop(name, None)
        self._random_state = check_random_state(self.random_state)
        # What the stream was drawn from, so that a warm fit notices a
        # random_state changed by set_params (see _begin_fit).
        self._random_state_from = self.random_state
        self.n_iter_ = 0
        self.t_ = 0
        self.loss_curve_ = []
        self.validation_scores_ = None  # a list once early stopping runs
        self.best_validation_score_ = None
        self.best_loss_ = np.inf

    def _validate_training_data(self, X, y, groups, sample_weight, first_call, method):
        text = first_text(y)
        if text is not None:  # validate_data would read a Series of "3" as 3.0
            raise ValueError(f"y must hold numeric relevance labels (e.g. 0..4); got text (e.g. {shown(text)!r}).")
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=(np.float64, np.float32), y_numeric=True,
            reset=first_call,
        )
        X = _summed_duplicates(X)
        if not first_call and X.dtype != self.coefs_[0].dtype:
            # A model keeps the precision it was first fitted in.
            X = _in_model_precision(X, self.coefs_[0].dtype, method)
        if X.shape[0] < 1:
            raise ValueError("X has no rows; there is nothing to rank.")
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must hold numeric relevance labels (e.g. 0..4); got dtype {y.dtype}.")
        y = y.astype(np.float64, copy=False)
        # scikit-learn's check passes an object y holding None (None != None
        # is False), and y_numeric then turns it into NaN.
        assert_all_finite(y, input_name="y")
        check_relevance_labels(
            y, exponential_gain=self._uses_exponential_gain(), input_name="y", remedy=label_remedy(self)
        )
        _warn_if_no_groups(groups, len(y), method, stacklevel=5)  # the caller of fit or partial_fit
        data = TrainingSet.from_input(X, y, groups, self._make_objective, sample_weight)
        # Before the objective is first built (data.objective builds it).
        self._resolve_objective_options(None if method == "partial_fit" else len(data.weighted.rows))
        warn_if_nothing_to_learn(
            query_contrasts(data), np.diff(data.offsets), data.weights, method, stacklevel=5,
            query_column=self.query_column,
        )
        warn_if_pairs_swamp(self, data, stacklevel=5)
        return data

    def _fit(self, X, y, groups, sample_weight, incremental):
        first_call = not hasattr(self, "coefs_")
        try:
            data = self._validate_training_data(
                X, y, groups, sample_weight, first_call, "partial_fit" if incremental else "fit"
            )
            self._check_solver_options(incremental)
            if not first_call:
                self._check_same_network()
            # What follows the data reads its queries of positive weight only.
            query_scaled = self._small_and_query_scaled(data.weighted, incremental)
            self.input_noise_ = self._input_noise(data.weighted, incremental, query_scaled)
            if first_call:
                self._fit_input_scaling(data.weighted)
                n_inputs = data.X.shape[1] if self._input_scaling is None else self._input_scaling.n_inputs
                coefs, intercepts = _network.init_params(
                    n_inputs, self._hidden_layer_sizes(None if incremental else len(data.weighted.rows), query_scaled),
                    self.activation, self._random_state,
                )
                # float32 input trains in float32, as in MLPRegressor.
                self.coefs_ = [c.astype(data.X.dtype, copy=False) for c in coefs]
                self.intercepts_ = [b.astype(data.X.dtype, copy=False) for b in intercepts]
            # Threads for this fit only: 1 when a minibatch gives the pool
            # nothing to share, so that BLAS keeps its threads.
            self._fit_threads = self._n_threads() if _training.pool_has_work(self, data, query_scaled) else 1
            with single_threaded_blas(self._fit_threads):
                if self.solver == "lbfgs" and not incremental:
                    _training.fit_lbfgs(self, data)
                else:
                    _training.fit_stochastic(self, data, incremental)
        finally:
            self.__dict__.pop("_fit_threads", None)
        return self

    def _fit_input_scaling(self, data):
        """Statistics of the (transformed) training features, fitted once
        per model, like its weights. Read in the training set's arranged
        order, so that they do not depend on the input's row order."""
        if self.feature_scaling is None:
            self._input_scaling = None
        else:
            self._input_scaling = InputScaling.fit(self.feature_scaling, data.X, data.rows)
        set_input_scaling_attributes(self)

    def _check_same_network(self):
        """warm_start and partial_fit continue the fitted network: refuse a
        changed shape or input scaling rather than silently keep the old
        ones (get_params would then describe another model)."""
        fitted = tuple(c.shape[1] for c in self.coefs_[:-1])
        wanted = tuple(self._hidden_layer_sizes())
        scaling = self._input_scaling.kind if self._input_scaling is not None else None
        changes = []
        if fitted != wanted:
            changes.append(f"hidden_layer_sizes={wanted} (fitted: {fitted})")
        if scaling != self.feature_scaling:
            changes.append(f"feature_scaling={self.feature_scaling!r} (fitted: {scaling!r})")
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

    def _uses_early_stopping(self, n_rows, n_queries, incremental):
        """``early_stopping``, with "auto" resolved: on from
        ``AUTO_EARLY_STOPPING_ROWS`` training rows, as in
        ``HistGradientBoostingRegressor``, when the held-out fraction holds
        at least two queries and leaves one to train on (so "auto" never
        fails on a few huge queries). ``n_queries`` counts the queries a
        split can hold out: those with a positive weight. Never for
        ``partial_fit`` or L-BFGS."""
        if incremental or self.solver == "lbfgs":
            return False
        if self.early_stopping == "auto":
            n_val = int(np.ceil(self.validation_fraction * n_queries))
            return n_rows >= AUTO_EARLY_STOPPING_ROWS and 2 <= n_val < n_queries
        return bool(self.early_stopping)

    def _ema_momentum(self, early_stopping):
        """``ema_momentum``, with "auto" resolved for a fit that does or does
        not hold out a validation set (``partial_fit`` never does)."""
        if self.ema_momentum != "auto":
            return self.ema_momentum
        return 0.0 if early_stopping else AUTO_EMA_MOMENTUM

    def _resolve_objective_options(self, n_rows):
        """Resolve the objective's "auto" parameters for a fit on ``n_rows``
        training rows (None: not known in advance, as in ``partial_fit`` and
        on Dask) into fitted attributes, before the objectives are built."""

    def _small_and_query_scaled(self, data, incremental):
        """Whether a ``fit`` trains on fewer than ``AUTO_EARLY_STOPPING_ROWS``
        rows whose features are min-max scaled within each query (LETOR's
        form, :mod:`~sklearn_ranknet._query_scaled`): there some "auto"
        values change (``_AUTO_QUERY_SCALED``; the input noise's level).
        Never in ``partial_fit`` or where the rows are not at hand (Dask),
        and not read for a ranker none of whose values follow it."""
        if (not self._AUTO_QUERY_SCALED or data is None or incremental
                or len(data.rows) >= AUTO_EARLY_STOPPING_ROWS):
            return False
        return data.scaled_within_queries

    def _input_noise(self, data, incremental, query_scaled=False):
        """``input_noise``, with "auto" resolved for ``data`` (a
        ``TrainingSet``; None where the rows are not at hand, as on Dask):
        the level of :func:`~sklearn_ranknet._noise.auto_input_noise` for a
        ``fit`` below ``AUTO_EARLY_STOPPING_ROWS`` rows with a stochastic
        solver, else 0. Larger data overfits less and the study measured
        the noise on small data only; L-BFGS cannot follow random steps."""
        if self.input_noise != "auto":
            return float(self.input_noise)
        if (data is None or incremental or self.solver == "lbfgs"
                or len(data.rows) >= AUTO_EARLY_STOPPING_ROWS):
            return 0.0
        level = AUTO_INPUT_NOISE
        if query_scaled:
            level = self._AUTO_QUERY_SCALED.get("input_noise", level)
        return auto_input_noise(data.X, data.rows, level)

    def _patience(self, n_rows):
        """``n_iter_no_change``, with "auto" resolved for ``n_rows`` training
        rows (all of them, before the validation split)."""
        if self.n_iter_no_change != "auto":
            return self.n_iter_no_change
        return AUTO_PATIENCE if n_rows < AUTO_PATIENCE_LARGE_ROWS else AUTO_PATIENCE_LARGE

    #: ``learning_rate_init="auto"`` as (below, from) ``AUTO_FEW_QUERIES``
    #: training queries, for the rankers that offer it (None: not offered).
    _AUTO_LEARNING_RATE = None
    #: "auto" values that differ on small data scaled within each query
    #: (``_small_and_query_scaled``), by parameter name; "input_noise" is
    #: the level reached on redundant features.
    _AUTO_QUERY_SCALED = {}
    #: ``batch_size="auto"``: at most this many queries per minibatch.
    _AUTO_BATCH_SIZE = 32

    def _learning_rate(self, n_queries, query_scaled=False):
        """``learning_rate_init``, with "auto" resolved for a first fit on
        ``n_queries`` training queries (None: a size not known in advance,
        as in ``partial_fit``, takes the large-data value)."""
        if self.learning_rate_init != "auto":
            return float(self.learning_rate_init)
        if query_scaled and "learning_rate_init" in self._AUTO_QUERY_SCALED:
            return self._AUTO_QUERY_SCALED["learning_rate_init"]
        few, many = self._AUTO_LEARNING_RATE
        return few if n_queries is not None and n_queries < AUTO_FEW_QUERIES else many

    #: ``alpha="auto"`` as (below, from) ``AUTO_EARLY_STOPPING_ROWS``
    #: training rows, for the rankers that offer it (None: not offered).
    _AUTO_ALPHA = None

    def _alpha(self, n_rows):
        """``alpha``, with "auto" resolved for a fit on ``n_rows`` training
        rows (None: a size not known in advance, as in ``partial_fit``,
        takes the large-data value, as the width does)."""
        if self.alpha != "auto":
            return float(self.alpha)
        return _by_training_rows(self._AUTO_ALPHA, n_rows)

    #: ``hidden_layer_sizes="auto"`` as (below, from)
    #: ``AUTO_EARLY_STOPPING_ROWS`` training rows, for the rankers that
    #: offer it (None: not offered).
    _AUTO_HIDDEN_LAYER_SIZES = None

    def _hidden_layer_sizes(self, n_rows=None, query_scaled=False):
        """``hidden_layer_sizes`` as a tuple, with "auto" resolved for a
        first fit on ``n_rows`` training rows (None: a size not known in
        advance, as in ``partial_fit`` and on Dask, takes the large-data
        width). A fitted network keeps the width it has."""
        sizes = self.hidden_layer_sizes
        if isinstance(sizes, str) and sizes == "auto":
            if hasattr(self, "coefs_"):
                return tuple(c.shape[1] for c in self.coefs_[:-1])
            if query_scaled and "hidden_layer_sizes" in self._AUTO_QUERY_SCALED:
                return self._AUTO_QUERY_SCALED["hidden_layer_sizes"]
            return _by_training_rows(self._AUTO_HIDDEN_LAYER_SIZES, n_rows)
        sizes = [sizes] if isinstance(sizes, Integral) else list(sizes)
        if not all(isinstance(h, Integral) and h > 0 for h in sizes):
            raise ValueError(
                "hidden_layer_sizes must hold positive integers (one per hidden "
                f"layer, empty for a linear model); got {self.hidden_layer_sizes!r}."
            )
        return tuple(int(h) for h in sizes)

    def _batch_size(self, n_queries, query_scaled=False):
        """Queries per minibatch, with "auto" resolved."""
        size = self.batch_size
        if size == "auto":
            size = self._AUTO_BATCH_SIZE
            if query_scaled:
                size = self._AUTO_QUERY_SCALED.get("batch_size", size)
        return min(size, n_queries)

    def _n_threads(self):
        """Threads of ``n_jobs``; during a fit, the fit's choice."""
        return getattr(self, "_fit_threads", None) or effective_n_jobs(self.n_jobs)


def _warn_if_no_groups(groups, n_samples, method, stacklevel=3):
    # fit(X, y) must work without groups: scikit-learn's common checks (and
    # any tool that knows nothing of queries) call it so.
    if groups is None and n_samples > 1:
        warnings.warn(
            f"{method} got no groups, so all {n_samples} rows are treated as one "
            f"query. {missing_ids_fixes()}",
            UserWarning,
            stacklevel=stacklevel,
        )


def query_contrasts(data):
    """For each query of ``data`` (a ``TrainingSet``): whether the objective
    tells two of its documents apart, and whether two of its labels differ
    (weights left aside). They differ only under LambdaRank's
    ``metric="map"``, which counts every label above 0 as equally relevant."""
    first, last = data.offsets[:-1], data.offsets[1:] - 1
    nonempty = last >= first
    # Relevance as the objective sees it rises with the label, and labels
    # are sorted descending within each query: first is the highest.
    relevance = getattr(data.objective, "utility", data.y)
    contrasts = []
    for values in (relevance, data.y):
        differ = np.zeros(data.n_queries, dtype=bool)
        differ[nonempty] = values[first[nonempty]] > values[last[nonempty]]
        contrasts.append(differ)
    return tuple(contrasts)


def warn_if_nothing_to_learn(contrasts, sizes, weights, method, stacklevel, query_column=None):
    """Warn when no query (of positive weight) has documents the objective
    tells apart: training would only shrink the weights. The likely cause
    is groups holding an id per row (a document id). ``contrasts`` is
    :func:`query_contrasts`'s pair, ``sizes`` the queries' numbers of rows,
    ``weights`` their weights or None; ``stacklevel`` is ``warnings.warn``'s,
    counted from this function. ``query_column``, the ranker's, when the ids
    were read from a column of X: one id per row there more likely means a
    Pipeline step before the ranker that dropped or changed that column
    (SelectKBest, PCA put a feature where the ids were), which
    "pass query ids as groups" would not fix."""
    differ, labels_differ = contrasts
    if weights is not None:
        # Queries of weight 0 are left out of training, and so of the cause
        # named below: one-row queries of positive weight among longer
        # queries of weight 0 hold a single row each, not tied labels.
        weighed = weights > 0
        differ, labels_differ, sizes = differ[weighed], labels_differ[weighed], sizes[weighed]
    if differ.any():
        return
    if bool(np.all(sizes == 1)) and weights is not None and not bool(np.all(weights > 0)):
        cause = "every query with a positive sample_weight holds a single row"
    elif bool(np.all(sizes == 1)) and query_column is not None:
        cause = (
            f"every query holds a single row: the query column (query_column={query_column!r}) "
            "holds a different value on every row. In a Pipeline, query_column refers to the "
            "ranker's own input: a step before the ranker that selects, mixes or expands columns "
            "(SelectKBest, PCA, PolynomialFeatures, ...) may have dropped or changed the id "
            "column. Keep it out of such steps, e.g. ColumnTransformer([..., "
            "('id', 'passthrough', [<id column>])]), and point query_column at its place there"
        )
    elif bool(np.all(sizes == 1)):
        cause = "every query holds a single row: pass query ids as groups, not an id per row (document)"
    elif not labels_differ.any():
        cause = "every query's documents share one relevance label"
    else:  # metric="map": relevant or not
        cause = "every query's documents are all relevant (label > 0) or all not, and MAP tells no more"
    outcome = (
        "the model is its random initialization, shrunk by the penalty"
        if method == "fit" else "this call leaves the model as it was, but for the penalty's shrinking"
    )
    warnings.warn(
        f"{method} found no query with two documents of different relevance "
        f"({cause}), so there is nothing to learn: {outcome}.",
        UserWarning,
        stacklevel=stacklevel,
    )


#: Pairs in one query past which an epoch's cost is dominated by that query's
#: pairs, which grow with the square of its length: about 45,000 documents
#: without truncation, a few seconds per epoch on one core.
LONG_QUERY_PAIRS = 10**9


def warn_if_pairs_swamp(ranker, data, stacklevel):
    """Warn when one query has so many pairs that every epoch visits more
    than ``LONG_QUERY_PAIRS`` of them: the fit takes time that grows with
    the square of that query's length, while a truncated LambdaRank or
    ListNet would take time linear in it."""
    pairs = data.objective.query_work(data.offsets)
    if len(pairs) == 0 or pairs.max() <= LONG_QUERY_PAIRS:
        return
    longest = int(np.argmax(pairs))
    size = int(data.offsets[longest + 1] - data.offsets[longest])
    remedy = (
        "set k (e.g. k=30: only pairs with a document in the current top k, n * k of them)"
        if hasattr(ranker, "k") else
        "LambdaRankRanker(k=30) visits n * k pairs of a query of n documents, ListNetRanker's cost is linear in n"
    )
    warnings.warn(
        f"The longest query holds {size:,} documents, {int(pairs[longest]):,} pairs that "
        f"{type(ranker).__name__} visits every epoch: the time per epoch grows with the square "
        f"of a query's length. If that is too slow, {remedy}; or check that groups hold query "
        "ids and not a coarser key.",
        UserWarning,
        stacklevel=stacklevel,
    )


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


def _in_model_precision(X, dtype, method):
    """``X`` cast to ``dtype``, the precision of a model fitted before (a
    float32 model continued by ``partial_fit`` or ``warm_start`` on float64
    rows), or an error if a finite value of ``X`` lies beyond that dtype's
    range: the cast would turn it into inf, which no check after it looks
    for, and the fit would train on it silently (or fail later with a
    message about the learning rate)."""
    with np.errstate(over="ignore"):
        cast = X.astype(dtype)
    values = cast.data if sp.issparse(cast) else cast
    if not np.isfinite(values).all():
        raise ValueError(
            f"X holds values beyond the range of {np.dtype(dtype)} (magnitude above "
            f"{np.finfo(dtype).max:g}), the precision this model was first fitted in and that "
            f"{'warm_start' if method == 'fit' else method} keeps. Rescale those features, or fit a new "
            "model on float64 X."
        )
    return cast


def _same_seed(before, now):
    """Whether the ``random_state`` parameter ``now`` is the one the random
    stream was made from (``before``): an equal int, or the same object (a
    RandomState instance, or None, whose stream a warm fit continues)."""
    if isinstance(before, Integral) and isinstance(now, Integral):
        return int(before) == int(now)
    return before is now


def _by_training_rows(choices, n_rows):
    """The (below, from) ``AUTO_EARLY_STOPPING_ROWS`` value of an "auto"
    parameter for a first fit on ``n_rows`` rows; None (a size not known in
    advance: ``partial_fit``) takes the large-data value."""
    small, large = choices
    return small if n_rows is not None and n_rows < AUTO_EARLY_STOPPING_ROWS else large


def _finite_scores(scores):
    """``scores``, or an error if any is NaN or infinite: finite rows far
    outside the training range (say 1e300 where the training rows held
    units) can overflow the network's products, and a NaN or infinite score
    would rank silently wrong, or fail later in a metric."""
    finite = np.isfinite(scores)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise ValueError(
            f"{len(bad)} of {len(scores)} scores are not finite (the first at row {bad[0]}): "
            "the network's arithmetic overflowed on features far outside the range it was "
            "trained on. Check those rows for extreme values; feature_scaling='piecewise' (the "
            "default) bounds every input by the training range."
        )
    return scores


def score_by_query(ranker, X, y, groups, sample_weight, scoring_ranker):
    """Mean NDCG@10 by query of ``ranker``'s scores (the rankers' and
    BaggingRanker's ``score``): query ids from ``groups`` or the query
    column, an error without any for several rows. The gain is that of
    ``scoring_ranker`` (the ranker itself, or a BaggingRanker's member), and
    so is the advice for labels too large for it."""
    X, query_ids = split_query_column(X, ranker.query_column)
    check_width_with_column(X, ranker.query_column, ranker)  # before its ids are compared
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
