"""The training loop: minibatches of whole queries, early stopping, L-BFGS.

A :class:`TrainingSet` keeps the caller's ``X`` and an index that arranges
its rows query by query (labels descending inside each query); every
minibatch gathers its own rows through that index. Two copies are made when
they are small: a CSR ``X`` read as dense blocks is densified once (up to
``DENSE_COPY_BYTES``, :meth:`TrainingSet.densify`), and the network's inputs
(the rows encoded, standardized and cast) are computed once for the whole fit
(up to ``KEPT_INPUTS_BYTES``, :meth:`TrainingSet.keep_inputs`). Large data
is never copied as a whole.

What ``loss_curve_`` holds
--------------------------
Computing a pair loss costs one logarithm per pair, ten times the gradient's
work, so the minibatch steps ask the kernels for gradients only. After each
epoch the objective is evaluated, with that epoch's final weights, on a fixed
sample of whole training queries drawn once per fit, of positive weight
(a query of weight 0 adds nothing to the weighted mean): every such query
while they hold at most ``LOSS_SAMPLE_PAIRS`` pairs and ``LOSS_SAMPLE_ROWS``
rows (then ``loss_curve_`` is the exact training objective), otherwise a
random subset within those budgets (the precedent is
``HistGradientBoostingRegressor``, which scores a 10,000-sample subset of
the training data; 1,000 rows ranked as well as 10,000 and made small fits
faster, User Guide, "Stopping"). Being the same queries every epoch, the values are
comparable, so tol-based stopping judges real progress rather than the noise
of changing minibatches.
"""

import time
import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from . import _jit, _network
from ._groups import group_rows, query_of_row, query_weights, segments_of
from ._inputs import stays_sparse
from ._jit import as_kernel_array, map_blocks
from ._noise import NOISE_TABLE_BLOCKS, NoiseTable
from ._objectives import label_sorted_order
from ._optim import SGD, Adam, WeightAverage
from ._query_scaled import scaled_within_queries
from ._resolve import Resolved
from .metrics import _grouped_ndcg_values, _mean_over_queries

#: Cut-off of the NDCG used by ``score`` and by early stopping.
SCORE_K = 10
#: Budgets of the fixed query sample on which ``loss_curve_`` is evaluated.
LOSS_SAMPLE_PAIRS = 1_000_000
LOSS_SAMPLE_ROWS = 1_000
#: Multiply-adds of the network's forward pass that one thread does at a
#: time (~1-3 ms): minibatches are cut into row blocks of about this work.
BLOCK_WORK = 2**25
#: Network inputs gathered at a time when scoring a held-out or loss sample
#: (2048 rows of 136 features; fewer rows of a wider piecewise encoding, so
#: that the blocks stay small next to X).
SCORE_BLOCK_VALUES = 2048 * 136
#: Largest dense copy (bytes) a fit makes of a CSR ``X`` that is read as
#: dense blocks anyway (see :meth:`TrainingSet.densify`).
DENSE_COPY_BYTES = 2**28
#: Largest copy (bytes) of the network's inputs for all rows that a fit keeps
#: (see :meth:`TrainingSet.keep_inputs`).
KEPT_INPUTS_BYTES = 2**28


class TrainingSet:
    """Training queries: the caller's ``X`` and an index arranging its rows.

    Attributes
    ----------
    X : {ndarray, sparse CSR matrix} of shape (n_samples, n_features)
        The caller's array, not a copy (but see :meth:`densify`).
    rows : ndarray of shape (n_rows,)
        ``X[rows]`` lists this set's rows query by query, labels descending
        inside each query. "Positions" below index into ``rows``.
    y : ndarray of shape (n_rows,)
        Labels in that order.
    offsets : ndarray of shape (n_queries + 1,)
    weights : ndarray of shape (n_queries,) or None
        Query weights (``sample_weight``); ``None`` weighs queries equally.
    objective : objective built for these queries, on first use, by
        ``make_objective(y, offsets)`` (see :meth:`with_objective`)
    """

    def __init__(self, X, rows, y, offsets, make_objective, weights=None, kept=None):
        self.X, self.rows, self.y, self.offsets = X, rows, y, offsets
        self.weights = weights
        self._make_objective = make_objective
        # The inputs of every row of X, shared by the sets made from this one.
        self._kept = _KeptInputs() if kept is None else kept

    @cached_property
    def objective(self):
        return self._make_objective(self.y, self.offsets)

    def with_objective(self, make_objective):
        """The same queries, with the objective ``make_objective`` builds
        (a set is first arranged without one: the objective's options are
        resolved from the data's shape)."""
        return TrainingSet(self.X, self.rows, self.y, self.offsets, make_objective, self.weights, self._kept)

    @cached_property
    def weighted(self):
        """This set's queries of positive weight (the set itself when every
        query has one): what the ranker's choices that follow the data read
        (the input scaling's statistics, the "auto" values), so that a query
        of weight 0 is as if left out, as scikit-learn's weights are."""
        if self.weights is None or self.weights.all():
            return self
        return self.subset(weighted_queries(self), self._make_objective)

    @classmethod
    def from_input(cls, X, y, groups, make_objective, sample_weight=None, names=("groups", "sample_weight")):
        # names: the inputs' names in error messages (a validation set's are groups_val, ...).
        arranged = group_rows(groups, len(y), input_name=names[0])
        weights = query_weights(arranged, sample_weight, input_name=names[1], relative=True)  # relative in every use
        base = arranged.order if arranged.order is not None else np.arange(len(y))
        rows = base[label_sorted_order(arranged.arrange(y), arranged.offsets)]
        return cls(X, rows, y[rows], arranged.offsets, make_objective, weights)

    @cached_property
    def query_groups(self):
        """The metrics' grouping of these rows (for scoring them each epoch)."""
        return group_rows(query_of_row(self.offsets), len(self.y))

    @property
    def n_queries(self):
        return len(self.offsets) - 1

    def query_work(self):
        """Pairs (or documents) the objective visits in each query."""
        return self.objective.query_work(self.offsets)

    def positions_of(self, queries):
        """Positions of the given queries' rows, query by query, and their
        segment offsets."""
        return segments_of(self.offsets, queries)

    def subset(self, queries, make_objective):
        """A training set of the given queries (positions, kept in order)."""
        queries = np.asarray(queries, dtype=np.int64)
        positions, offsets = self.positions_of(queries)
        weights = None if self.weights is None else self.weights[queries]
        return TrainingSet(
            self.X, self.rows[positions], self.y[positions], offsets, make_objective, weights, self._kept
        )

    @property
    def mean_weight(self):
        return 1.0 if self.weights is None else float(self.weights.mean())

    def mean_of_queries(self, values):
        """Mean of per-query ``values`` under the query weights."""
        if self.weights is None:
            return float(values.sum()) / max(self.n_queries, 1)
        # A Python float, as without weights (the same float64 division).
        return float(values @ self.weights) / float(self.weights.sum())

    def row_weights(self):
        """The query weight of every row (for the metrics), or None."""
        return None if self.weights is None else np.repeat(self.weights, np.diff(self.offsets))

    @cached_property
    def scaled_within_queries(self):
        """Whether the features look min-max scaled within each query
        (:func:`~sklearn_ranknet._query_scaled.scaled_within_queries`)."""
        return scaled_within_queries(self.X, self.rows, self.offsets)

    def features(self, model, positions):
        """The rows of ``X`` at ``positions`` (an index array or a slice),
        gathered and made ready for ``model``'s network (a new array)."""
        kept = self._kept
        if kept.inputs is not None and kept.scaling is model.scaling and kept.inputs.dtype == model.dtype:
            return np.take(kept.inputs, self.rows[positions], axis=0)
        return model.inputs(self.X, self.rows[positions])

    def keep_inputs(self, model):
        """Compute ``model``'s inputs for every row of ``X`` once, for this
        set and the sets made from it, when they are dense and take at most
        ``KEPT_INPUTS_BYTES``; otherwise (and after :meth:`drop_inputs`)
        every minibatch computes its own.

        Each minibatch and each block of the loss sample would otherwise
        gather, encode and standardize its rows anew, every epoch: on
        Yahoo's 875 encoded inputs a 224-row minibatch took 0.21 ms that way
        and 0.04 ms as a copy of the kept rows (docs/benchmarks.md, "Model
        selection"). The encoding is row by row, so the kept rows are the
        very values a minibatch would compute (tested)."""
        X, kept = self.X, self._kept
        if sp.issparse(X) and stays_sparse(X):
            return  # the rows stay sparse for the folded first layer
        n_inputs = model.coefs[0].shape[0]
        if X.shape[0] * n_inputs * model.dtype.itemsize > KEPT_INPUTS_BYTES:
            return
        # Block by block: a whole-X temporary (a C-order copy of a
        # DataFrame's values) would cost more than the inputs kept.
        inputs = np.empty((X.shape[0], n_inputs), dtype=model.dtype)
        step = score_block_rows(n_inputs)
        for start in range(0, X.shape[0], step):
            rows = model.inputs(X, np.arange(start, min(start + step, X.shape[0])))
            inputs[start:start + step] = rows.toarray() if sp.issparse(rows) else rows
        kept.scaling, kept.inputs = model.scaling, inputs

    def drop_inputs(self):
        """Release the inputs :meth:`keep_inputs` computed."""
        self._kept.scaling = self._kept.inputs = None

    def densify(self):
        """Read a CSR ``X`` too dense to stay sparse (``stays_sparse``) as
        one dense copy for the rest of the fit, when that copy takes at most
        ``DENSE_COPY_BYTES``; in place.

        Each minibatch and each block of the per-epoch loss sample would
        otherwise take its rows out of the CSR and densify them, which costs
        scipy's indexing machinery on every visit (docs/benchmarks.md,
        "Input forms"). The dense rows are the very values the densified
        blocks held, so the fit is the same to the bit. (Keeping the encoded
        inputs instead, up to 8 per feature, bought little more, and nothing
        on dense ``X``, whose rows the encoding kernel reads as fast as it
        would copy encoded ones.)
        """
        X = self.X
        if not sp.issparse(X) or stays_sparse(X):
            return
        if X.shape[0] * X.shape[1] * X.dtype.itemsize <= DENSE_COPY_BYTES:
            self.X = X.toarray()


class _KeptInputs:
    """The network's inputs for every row of ``X`` (see
    :meth:`TrainingSet.keep_inputs`), and the input scaling they are for."""

    scaling = inputs = None


def _loss_sample(data, random_state, make_objective):
    """Whole queries of positive weight within the loss budgets: all of them
    when they fit (see :func:`_loss_sample_queries`)."""
    queries = _loss_sample_queries(data, random_state)
    if len(queries) == data.weighted.n_queries:
        return data.weighted
    return data.subset(queries, make_objective)


def _loss_sample_queries(data, random_state):
    """Positions of the queries of ``data`` in its loss sample: those of
    positive weight within the loss budgets, all of them when they fit. A
    query of weight 0 adds nothing to the weighted mean: in the sample it
    would only take budget from the others, and a sample of such queries
    alone would make the mean 0 / 0 (a NaN loss, on which the ``tol`` rule
    stops after its patience)."""
    candidates = weighted_queries(data)
    pairs = data.query_work()[candidates]
    sizes = np.diff(data.offsets)[candidates]
    if pairs.sum() <= LOSS_SAMPLE_PAIRS and sizes.sum() <= LOSS_SAMPLE_ROWS:
        return candidates
    shuffled = random_state.permutation(len(candidates))
    fits = (np.cumsum(pairs[shuffled]) <= LOSS_SAMPLE_PAIRS) & (
        np.cumsum(sizes[shuffled]) <= LOSS_SAMPLE_ROWS
    )
    # Not all fit (the sums were over a budget above): the queries before
    # the first that does not, or that one alone.
    n_taken = max(int(np.argmin(fits)), 1)
    return candidates[np.sort(shuffled[:n_taken])]


def _scores(model, data, n_threads):
    """Scores of every row of ``data`` (float64), gathered and scored block
    by block so that no copy of its rows of X is ever whole, the blocks
    shared out over ``n_threads``."""
    coefs, intercepts = model.layers(data.X)
    blocks = _row_blocks(len(data.rows), coefs, max_rows=score_block_rows(coefs[0].shape[0]))

    def score(block):
        return _network.predict_scores(data.features(model, block), coefs, intercepts, model.activation)

    return as_kernel_array(np.concatenate(map_blocks(score, blocks, n_threads)))


def query_costs(model, data, n_threads, block_threads=1):
    """Each query's cost in ``data`` under the model's current weights: the
    scores on ``block_threads`` threads (or ``n_threads`` if more), the
    lambda kernel on ``n_threads``."""
    scores = _scores(model, data, max(n_threads, block_threads))
    positions = np.arange(len(data.rows))
    queries = np.arange(data.n_queries)
    _, cost = data.objective.gradient(scores, positions, queries, data.offsets, with_cost=True, n_threads=n_threads)
    return cost


def objective_value(model, state, data):
    """Mean per-query cost of ``data`` under the current weights, plus L2."""
    cost = query_costs(model, data, state.n_threads, state.block_threads)
    return data.mean_of_queries(cost) + _network.l2_penalty(model.coefs, state.l2)


def validation_score(model, state, data, gain):
    """NDCG@10 of a held-out training set under the current weights, as
    ``ndcg_score`` computes it (the labels were validated by ``fit``, and
    the queries are grouped once per fit: this runs every epoch)."""
    scores = _scores(model, data, max(state.n_threads, state.block_threads))
    values, empty = _grouped_ndcg_values(data.query_groups, data.y, scores, SCORE_K, gain, False)
    return _mean_over_queries(data.query_groups, values, empty, 1.0, data.row_weights())


def weighted_queries(data):
    """Positions of the queries of ``data`` that carry weight (all of them
    without ``sample_weight``): the ones a validation split can hold out."""
    if data.weights is None:
        return np.arange(data.n_queries)
    return np.flatnonzero(data.weights > 0)


def split_validation(data, fraction, random_state, make_objective):
    """A training and a validation set of whole queries (see
    :func:`split_queries`)."""
    kept, held_out = split_queries(data, fraction, random_state)
    return data.subset(kept, make_objective), data.subset(held_out, make_objective)


def split_queries(data, fraction, random_state):
    """Positions of the queries that train and of those held out:
    ``fraction`` of the weighted queries held out (a query of weight 0
    would score nothing there, so those all train, where they count for
    nothing too)."""
    candidates = weighted_queries(data)
    n_candidates = len(candidates)
    n_val = int(np.ceil(fraction * n_candidates))
    if n_candidates < 2 or n_val >= n_candidates:
        weighted = "" if data.weights is None else " with a positive sample_weight"
        raise ValueError(
            f"early_stopping holds out whole queries, but the data has only "
            f"{n_candidates} quer{'y' if n_candidates == 1 else 'ies'}{weighted}; give more "
            "queries, lower validation_fraction, or set early_stopping=False."
        )
    held_out = np.sort(random_state.permutation(candidates)[:n_val])
    kept = np.setdiff1d(np.arange(data.n_queries), held_out, assume_unique=True)
    return kept, held_out


def _epoch_batches(data, order, batch_size):
    """Minibatches of whole queries in the given query order: (positions,
    queries, offsets) for each, built with one gather per epoch."""
    positions, offsets = data.positions_of(order)
    for start in range(0, len(order), batch_size):
        stop = min(start + batch_size, len(order))
        lo, hi = offsets[start], offsets[stop]
        yield positions[lo:hi], order[start:stop], offsets[start : stop + 1] - lo


def l2_strength(alpha, data):
    """The L2 weight on the mean-per-query objective of ``data`` for the
    (resolved) ``alpha``.

    ``alpha`` weighs the penalty against the *sum* of the training queries'
    costs, as Ridge's ``alpha`` does and ``MLPRegressor``'s does for a full
    batch, so its pull fades as the training set grows. The queries are counted, not their weights: weights stay relative (a
    common factor changes nothing but the rounding of their ratios), a
    weight of 0 leaves a query out, and
    frequency weights (a query's traffic) do not switch the penalty off
    as if the same few queries were thousands of independent ones.
    """
    n_queries = data.n_queries if data.weights is None else int(np.count_nonzero(data.weights))
    return alpha / n_queries


@dataclass(frozen=True)
class Options:
    """The hyperparameters the loop reads, "auto" values resolved."""

    resolved: Resolved
    solver: str
    momentum: float
    max_iter: int
    tol: float
    verbose: bool
    validation_fraction: float
    gain: str
    #: (solver, learning_rate_init, momentum) as the parameters give them:
    #: what an optimizer carried over was made for (see _resumed_optimizer).
    optimizer_settings: tuple
    #: For the advice of a fit whose weights went non-finite.
    feature_scaling: str = None
    sigma: float = None

    @classmethod
    def of(cls, params, resolved):
        """The options of a ranker's parameters (``get_params(deep=False)``)."""
        return cls(
            resolved=resolved, solver=params["solver"], momentum=params["momentum"],
            max_iter=params["max_iter"], tol=params["tol"], verbose=params["verbose"],
            validation_fraction=params["validation_fraction"], gain=params.get("gain", "exponential"),
            optimizer_settings=(params["solver"], params["learning_rate_init"], params["momentum"]),
            feature_scaling=params["feature_scaling"], sigma=params.get("sigma"),
        )


@dataclass
class Run:
    """What one fit hands the loop: the model, its state, the arranged
    training set, the options and the curves it extends."""

    model: object
    state: object
    data: TrainingSet
    options: Options
    history: "History"
    #: The dtype the fitted model is published in (the first fit's X's),
    #: which may differ from the precision the model trains in.
    published: object = None
    #: The validation set the user gave (``fit(X_val=...)``): early
    #: stopping scores it instead of holding queries out of ``data``.
    validation: TrainingSet = None

    @property
    def published_model(self):
        """The trained model, in the published dtype."""
        return self.model if self.published is None else self.model.astype(self.published)


class History:
    """The learning curves a fit extends (the rankers' ``n_iter_``,
    ``loss_curve_``, ``loss_``, ``validation_scores_``,
    ``best_validation_score_`` and ``best_loss_``)."""

    def __init__(self, n_iter=0, loss_curve=None, loss=None, validation_scores=None,
                 best_validation_score=None, best_loss=np.inf):
        self.n_iter, self.loss = n_iter, loss
        self.loss_curve = [] if loss_curve is None else loss_curve
        self.validation_scores, self.best_validation_score = validation_scores, best_validation_score
        self.best_loss = best_loss


def fit_stochastic(model, state, data, options, history, incremental, validation=None):
    """Adam or SGD over minibatches of whole queries, for ``max_iter`` epochs
    or until the loss (or the validation NDCG) stops improving. Updates
    ``model``'s parameters in place, ``state`` and ``history``. Early
    stopping scores ``validation`` (a ``TrainingSet``) when it is given,
    and otherwise queries held out of ``data``."""
    data.densify()
    if validation is not None:
        validation.densify()
    if not incremental:  # one epoch would compute every input once anyway
        data.keep_inputs(model)
    try:
        _train_stochastic(model, state, data, options, history, incremental, validation)
    finally:
        data.drop_inputs()


def _train_stochastic(model, state, data, options, history, incremental, validation=None):
    """:func:`fit_stochastic` once the rows are ready."""
    resolved = options.resolved
    early_stopping = resolved.early_stopping
    make_objective = data._make_objective
    if validation is not None:
        train, val = data, validation
    elif early_stopping:
        train, val = split_validation(data, options.validation_fraction, state.random_state, make_objective)
    else:
        train, val = data, None
    monitor = EpochMonitor(history, early_stopping, resolved.n_iter_no_change, options.tol, options.verbose)
    loss_sample = _loss_sample(train, state.random_state, make_objective)
    params = model.params  # the optimizer updates these arrays in place
    state.optimizer = _resumed_optimizer(state.optimizer, params, resolved.learning_rate_init, options)
    averaging = _weight_average(state, params, resolved.ema_momentum)
    state.l2 = l2_strength(resolved.alpha, train)
    batch_size = min(resolved.batch_size, train.n_queries)
    steps_per_epoch = -(-train.n_queries // batch_size)
    state.noise = noise_table(model, state, train, batch_size, steps_per_epoch * (1 if incremental else options.max_iter))
    stopped = False
    for _ in range(1 if incremental else options.max_iter):
        started = time.perf_counter()
        order = state.random_state.permutation(train.n_queries)
        for positions, queries, offsets in _epoch_batches(train, order, batch_size):
            _step(model, state, train, positions, queries, offsets)
            if averaging is not None:
                averaging.update(params)
        _check_finite(model, options)
        # The epoch is judged on the model fit would return: with weight
        # averaging, the average (the trained weights go back after).
        if averaging is not None:
            averaging.hand_over(params)
        value = objective_value(model, state, loss_sample)
        score = validation_score(model, state, val, options.gain) if early_stopping else None
        stopped = monitor.record(value, score, params, started, incremental=incremental)
        if averaging is not None:
            averaging.resume(params)
        if stopped:
            break
    best_params = monitor.finish(stopped, options.max_iter)
    if averaging is not None:
        averaging.hand_over(params)
    if best_params is not None:  # in place: the optimizer holds these arrays
        for param, best in zip(params, best_params):
            param[...] = best
        # The average (and the trained weights behind it) is the last
        # epoch's, which early stopping passed over: a partial_fit resuming
        # it would start from there, not from the model returned. The next
        # call starts a new average from the returned weights instead.
        state.weight_average = None
    state.noise = None


def new_optimizer(params, step, solver, momentum):
    """A fresh optimizer of ``solver`` over ``params``, with the step size
    ``step`` (``learning_rate_init``, resolved)."""
    if solver == "sgd":
        return SGD(params, step, momentum=momentum)
    return Adam(params, step)


def _resumed_optimizer(optimizer, params, step, options):
    """The optimizer the last ``partial_fit`` (or warm-started fit) left,
    its moments carried over as ``MLPRegressor`` carries them, or a new one.

    It is attached to ``params`` anew on every call: a copy restored by
    joblib holds its own copies of the arrays (joblib's pickler does not keep
    two references to one array as one), which the steps would update
    instead of the model's. ``solver``, ``learning_rate_init`` and
    ``momentum`` changed by ``set_params`` since the optimizer was made take
    effect: a new solver starts a new optimizer; a new step size or momentum
    is set on the one there is (``step`` is read only then, so that the
    step an "auto" value resolved to at the first call stays as it was)."""
    settings = options.optimizer_settings
    made_for = getattr(optimizer, "made_for", None)
    if made_for is None or made_for[0] != settings[0]:
        optimizer = new_optimizer(params, step, options.solver, options.momentum)
    else:
        optimizer.params = list(params)
        if made_for[1] != settings[1]:
            optimizer.learning_rate = step
        if made_for[2] != settings[2] and isinstance(optimizer, SGD):
            optimizer.momentum = float(options.momentum)
    optimizer.made_for = settings
    return optimizer


def _weight_average(state, params, momentum):
    """The running average of the weights (``momentum``, the resolved
    ``ema_momentum``, > 0), carried from one ``partial_fit`` to the next as
    the optimizer is (a new one if the momentum changed), or None. Either
    way the trained weights go back in place of the average the last call
    left."""
    averaging = state.weight_average
    if averaging is not None:
        averaging.resume(params)
        if averaging.momentum != momentum:  # changed between partial_fit calls
            averaging = None
    if not momentum:
        state.weight_average = None
        return None
    if averaging is None:
        averaging = state.weight_average = WeightAverage(params, momentum)
    return averaging


class EpochMonitor:
    """The learning curves and the stopping rule, one epoch at a time: the
    one place the in-memory loop and the Dask rounds record an epoch.

    Early stopping: any rise of the validation NDCG resets the patience
    (``tol`` is the training objective's threshold, on another scale), and
    the best parameters are kept. Otherwise: the training objective must
    improve by ``tol``. Training stops after more than ``patience`` epochs
    without improvement (``n_iter_no_change``, resolved).
    """

    def __init__(self, history, early_stopping, patience, tol, verbose):
        self.history, self.early_stopping, self.patience = history, early_stopping, patience
        self.tol, self.verbose = tol, verbose
        if early_stopping:
            history.validation_scores = history.validation_scores or []
        self.best_score, self.best_params, self.no_improvement = -np.inf, None, 0

    def record(self, value, score, params, started, incremental=False):
        """Record an epoch of the parameters ``params`` (training objective
        ``value``, validation ``score`` or None); True to stop."""
        history = self.history
        history.n_iter += 1
        history.loss_curve.append(value)
        history.loss = value
        if self.early_stopping:
            history.validation_scores.append(score)
            improved = score > self.best_score
            if improved:
                self.best_score = history.best_validation_score = score
                self.best_params = [p.copy() for p in params]
        else:
            improved = value < history.best_loss - self.tol
            history.best_loss = min(history.best_loss, value)
        if incremental:  # partial_fit: one epoch, no stopping rule
            _report(history, started, False, self.verbose)
            return True
        self.no_improvement = 0 if improved else self.no_improvement + 1
        _report(history, started, self.early_stopping, self.verbose)
        if self.no_improvement > self.patience:
            if self.verbose:
                print(f"No improvement for {self.patience} epochs: stopping.")
            return True
        return False

    def finish(self, stopped, max_iter):
        """Warn when ``max_iter`` ran out first; the best parameters seen
        with early stopping (copies), or None."""
        if not stopped:
            warnings.warn(
                f"Maximum iterations ({max_iter}) reached and the optimization has not converged yet.",
                ConvergenceWarning,
            )
        return self.best_params


def score_block_rows(n_inputs):
    """Rows per block when scoring with ``n_inputs`` network inputs
    (:data:`SCORE_BLOCK_VALUES` inputs a block)."""
    return max(SCORE_BLOCK_VALUES // n_inputs, 64)


def _block_row_limit(coefs):
    return max(BLOCK_WORK // sum(c.size for c in coefs), 1024)


def noise_table(model, state, train, batch_size, n_steps):
    """The :class:`~._noise.NoiseTable` for ``n_steps`` minibatches of
    ``batch_size`` queries of ``train``, or None without input noise. Drawn
    here, on the calling thread, from the state's random stream.

    It holds ``NOISE_TABLE_BLOCKS`` of the largest possible row block, so
    that every block reads from one of many offsets, even when one block is
    a whole epoch (a table of one block would give every epoch the same
    noise); fewer for a call of fewer steps, which then draws no more than
    it uses."""
    if not state.input_noise:
        return None
    coefs, _ = model.layers(train.X)
    largest_batch = int(np.sort(np.diff(train.offsets))[::-1][:batch_size].sum())
    block_rows = min(largest_batch, _block_row_limit(coefs))
    rows = min(NOISE_TABLE_BLOCKS, n_steps) * block_rows
    seed = state.random_state.randint(2**31)
    return NoiseTable(state.input_noise, rows * coefs[0].shape[0], coefs[0].dtype, seed)


def _row_blocks(n_rows, coefs, max_rows=None):
    """Row blocks of a minibatch of about ``BLOCK_WORK`` each. They depend on
    the network's size only, not on the threads, so that the summed
    gradients do not depend on the number of threads; a small network gets
    one block (splitting would cost more Python than it saves)."""
    rows = _block_row_limit(coefs)
    rows = rows if max_rows is None else min(rows, max_rows)
    if n_rows <= rows:  # the usual minibatch: no linspace per step
        return [slice(0, n_rows)]
    # Equal blocks: a short last block would leave a thread idle.
    cuts = np.linspace(0, n_rows, -(-n_rows // rows) + 1).astype(np.int64)
    return [slice(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def pool_has_work(model, data, batch_size, solver):
    """Whether the threads of ``n_jobs`` would share a typical minibatch of
    ``batch_size`` queries of ``data``: two row blocks or more, or a lambda
    pass long enough to split (``SERIAL_BELOW_WORK``). If not, the fit
    leaves BLAS its own threads, as with ``n_jobs=None``: one BLAS thread
    with an idle pool beside it made small networks over short queries
    slower than the default."""
    if solver == "lbfgs":  # passes over all rows: many blocks
        return True
    batch = min(batch_size, data.n_queries)
    coefs, _ = model.layers(data.X)
    batch_rows = int(batch * len(data.rows) / max(data.n_queries, 1))
    batch_work = batch * float(np.mean(data.query_work()))
    return len(_row_blocks(batch_rows, coefs)) >= 2 or batch_work >= _jit.SERIAL_BELOW_WORK


def minibatch_gradients(model, state, train, positions, queries, offsets):
    """Gradients of the model's own parameters on a minibatch of whole
    queries (before the penalty), each query weighed by its weight over the
    mean weight.

    Rows are gathered from the caller's ``X`` and pushed through the network
    in fixed blocks, on ``state.block_threads`` threads: each block's
    forward pass, then the lambda kernel over the whole batch (on
    ``state.n_threads``), then each block's backward pass.
    """
    coefs, intercepts = model.layers(train.X)
    activation, dropout, n_threads = model.activation, state.dropout, state.n_threads
    block_threads = max(n_threads, state.block_threads)
    blocks = _row_blocks(len(positions), coefs)
    # One seed per block, drawn here: the random draws do not depend on the
    # threads that run the blocks.
    random = state.randomized
    seeds = state.random_state.randint(2**31, size=len(blocks)) if random else [None] * len(blocks)

    def forward(indexed):
        block, seed = indexed
        generator = np.random.default_rng(seed) if random else None
        rows = train.features(model, positions[block])
        if state.input_noise:
            rows = _with_input_noise(model, rows, state.noise, generator)
        return _network.forward(
            rows, coefs, intercepts, activation, dropout=dropout, random_state=generator
        )

    passes = map_blocks(forward, list(zip(blocks, seeds)), block_threads)
    scores = passes[0][0] if len(passes) == 1 else np.concatenate([s for s, _ in passes])
    # Lambdas in float64 whatever the network's dtype: the pair sums cancel.
    grad, _ = train.objective.gradient(as_kernel_array(scores), positions, queries, offsets, n_threads=n_threads)
    # Each query counts by its weight relative to the mean weight, so that
    # over an epoch the steps follow the weighted mean of the query costs.
    if train.weights is None:
        grad /= len(queries)
    else:
        scale = train.weights[queries] / (len(queries) * train.mean_weight)
        grad *= np.repeat(scale, np.diff(offsets))

    def backward(indexed):
        (_, cache), block = indexed
        return _network.backward(cache, grad[block], coefs, activation)

    partials = map_blocks(backward, list(zip(passes, blocks)), block_threads)
    coef_grads, intercept_grads = partials[0]
    for more_coefs, more_intercepts in partials[1:]:  # in block order
        for total, part in zip(coef_grads + intercept_grads, more_coefs + more_intercepts):
            total += part
    model.own_gradients(train.X, coef_grads, intercept_grads)
    _freeze_output_intercept(intercept_grads)
    return coef_grads, intercept_grads


def _step(model, state, train, positions, queries, offsets):
    """One optimizer step on a minibatch of whole queries."""
    coef_grads, intercept_grads = minibatch_gradients(model, state, train, positions, queries, offsets)
    _network.add_l2(coef_grads, model.coefs, state.l2)
    state.optimizer.update(coef_grads + intercept_grads)
    state.t += len(positions)


def _freeze_output_intercept(intercept_grads):
    """Every ranking cost is unchanged when all scores of a query shift
    together, so the gradient of the output intercept is 0 but for rounding.
    Adam would turn that noise into full-size steps (it divides by the
    gradient's own size): a random walk of the scores' offset that depends
    on the float precision. The offset never changes a ranking; keep it."""
    intercept_grads[-1][...] = 0.0


def _with_input_noise(model, rows, noise, generator):
    """Gathered rows (a copy) plus Gaussian noise of the table's standard
    deviation in standardized units, read from the ``noise`` table. Sparse
    rows become dense (noise touches every entry) but stay unstandardized,
    as their folded first layer expects: their noise is scaled by each
    feature's spread."""
    folded = sp.issparse(rows) and model.scaling is not None
    rows = rows.toarray() if sp.issparse(rows) else rows
    block = noise.block(rows.shape, generator)
    if folded:
        block = block * model.scaling.scale
    rows += block
    return rows


def fit_lbfgs(model, state, data, options, history):
    """L-BFGS-B on the whole objective (RankNet only): returns the model at
    the solution (in the model's precision)."""
    sizes = _network.layer_sizes(model.coefs[0].shape[0], model.hidden_layer_sizes)  # encoded inputs
    n_queries = data.n_queries
    state.l2 = l2_strength(options.resolved.alpha, data)
    all_queries = np.arange(n_queries)
    positions = np.arange(len(data.rows))
    # Full batches run on the caller's rows in their own order: the scores
    # are arranged for the kernel and its gradient put back, so X is never
    # gathered.
    inverse_order = data.rows
    if data.weights is None:
        row_share = 1.0 / n_queries
    else:
        row_share = data.row_weights() / data.weights.sum()

    scaling = model.scaling
    # The whole X at once: with input scaling, one scaled copy (L-BFGS is for
    # small data).
    X = data.X if scaling is None else scaling.rows(data.X, slice(None))

    def cost_and_gradient(vector):
        coefs, intercepts = _network.unpack(vector, sizes)
        weights = (coefs, intercepts) if scaling is None else scaling.network_params(X, coefs, intercepts)
        scores, cache = _network.forward(X, *weights, model.activation)
        grad, cost = data.objective.gradient(
            as_kernel_array(scores[inverse_order]), positions, all_queries, data.offsets, with_cost=True,
            n_threads=state.n_threads,
        )
        upstream = np.zeros(data.X.shape[0])
        upstream[inverse_order] = grad * row_share
        coef_grads, intercept_grads = _network.backward(cache, upstream, weights[0], model.activation)
        if scaling is not None:
            scaling.model_gradient(X, coef_grads, intercept_grads)
        _freeze_output_intercept(intercept_grads)
        _network.add_l2(coef_grads, coefs, state.l2)
        value = data.mean_of_queries(cost) + _network.l2_penalty(coefs, state.l2)
        return value, _network.pack(coef_grads, intercept_grads)

    history.loss_curve = []
    started = [time.perf_counter()]

    def record(intermediate_result):  # scipy passes the result by this name
        history.loss_curve.append(float(intermediate_result.fun))
        history.n_iter = len(history.loss_curve)
        _report(history, started[0], False, options.verbose)
        started[0] = time.perf_counter()

    result = minimize(
        cost_and_gradient,
        _network.pack(model.coefs, model.intercepts),
        jac=True,
        method="L-BFGS-B",
        callback=record,
        options={"maxiter": options.max_iter, "gtol": options.tol},
    )
    # scipy works in float64; the model keeps its own precision.
    coefs, intercepts = _network.unpack(result.x.astype(model.dtype), sizes)
    model.coefs, model.intercepts = list(coefs), list(intercepts)
    history.n_iter = int(result.nit)
    history.loss = float(result.fun)
    _check_finite(model, options)
    if result.status == 1:
        warnings.warn(
            f"L-BFGS reached max_iter={options.max_iter} before converging.", ConvergenceWarning
        )
    return model


def _check_finite(model, options):
    if not model.is_finite:
        remedy = (
            'or let the ranker scale the features (feature_scaling="piecewise" or "log1p")'
            if options.feature_scaling is None
            else "or check the features and labels for extreme values"
        )
        step = "learning_rate_init"
        sigma = options.sigma
        if sigma is not None and sigma > 1:
            # sigma multiplies every pair's gradient as the step size does.
            step += f" or sigma (sigma={sigma!r} scales every gradient)"
        raise ValueError(f"Training produced non-finite weights. Lower {step}, {remedy}.")


def _report(history, started, early_stopping, verbose):
    if not verbose:
        return
    line = f"Epoch {history.n_iter:4d}  loss {history.loss_curve[-1]:.6f}"
    if early_stopping:
        line += f"  val NDCG@{SCORE_K} {history.validation_scores[-1]:.4f}"
    print(f"{line}  {time.perf_counter() - started:.3f}s")
