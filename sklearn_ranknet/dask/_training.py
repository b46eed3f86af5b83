"""Data-parallel training of the Dask rankers (see :mod:`sklearn_ranknet.dask`).

Two halves. The *worker* half is plain NumPy on one **shard**: the rows of one
partition, which after co-location holds whole queries, arranged as the
in-memory ranker arranges its training set (a :class:`TrainingSet` built by
the same code). Every worker function is a pure function of its shard and of
the arguments the client sends it: it copies what it is given and never keeps
state between calls, so a task lost with its worker is simply run again.

The *client* half (:func:`fit`) keeps the whole training state (the
parameters, each shard's optimizer state, the random state, the early
stopping record) and sends what a round needs with each round's tasks; only
parameters, gradients and per-query numbers travel, never rows.

Training is local SGD with parameter averaging. Each round is one epoch:
every shard runs an epoch of minibatch steps over its own training queries,
from the current averaged parameters with its own optimizer state, and
returns its parameters; the client averages them weighted by the shard's
total query weight (its number of queries when there is no
``sample_weight``). One round trip per epoch. (Synchronous averaged
gradients, one round trip per step, were measured and not taken: see
``docs/benchmarks.md``, "Dask".)

The client resolves the "auto" values (``_resolve.resolve``) once it knows
every partition's size, and sends each shard a :class:`ShardTraining`
record; workers build a :class:`~sklearn_ranknet._model.RankingModel` and a
:class:`~sklearn_ranknet._model.FitState` from it, never an estimator.

Input scaling statistics are global: each shard sends the count, mean and sum
of squared deviations of its (transformed) features, merged with Chan et
al.'s pairwise formula.

This module imports no Dask: it calls the client it is given.
"""

import contextlib
import copy
import functools
import io
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils import check_array
from sklearn.utils.validation import assert_all_finite

from .. import _network
from .._fit_checks import query_contrasts, warn_if_nothing_to_learn
from .._groups import QueryGroups, group_rows, query_weights
from .._inputs import EDGE_SAMPLE_ROWS, InputScaling, PiecewiseEncoding, feature_moments, merge_moments, piecewise_bins
from .._jit import effective_n_jobs, single_threaded_blas
from .._missingness import (
    merge_evidence, missing_count, missingness_evidence, telling_features, within_query_residuals,
)
from .._model import FitState, RankingModel
from .._resolve import DataShape, resolve
from .._training import (
    SCORE_K, EpochMonitor, Options, TrainingSet, _check_finite, _epoch_batches, _loss_sample, _scores, _step,
    l2_strength, new_optimizer, noise_table, pool_has_work, query_costs, split_validation, validation_score,
    weighted_queries,
)
from .._validation import check_finite_features, check_relevance_labels, shown
from ..metrics import ndcg_per_query


@dataclass(frozen=True)
class ShardSpec:
    """What a shard needs of the ranker to be built: the objective (for
    planning; see ``_objective_factory``) and the label checks."""

    make_objective: object
    exponential_gain: bool
    label_remedy: str
    owner: str  # the ranker's class name, for messages
    feature_scaling: object  # None refuses missing values


@dataclass(frozen=True)
class ShardTraining:
    """What a shard trains with, the same for every shard of a fit."""

    make_objective: object
    scaling: object
    activation: str
    l2: float
    step: float
    solver: str
    momentum: float
    batch_size: int
    dropout: float
    input_noise: float
    n_jobs: object


# ---------------------------------------------------------------------------
# The worker half


class Shard:
    """The whole queries of one partition, arranged for training.

    Built on the worker that holds the partition (by :func:`make_shard`) and
    kept there, as a Dask future the client holds; never modified after it
    is built (:meth:`split` returns a new one).

    Attributes
    ----------
    spec : ShardSpec
    data : TrainingSet or None
        Every query of the partition (``None`` for an empty partition).
    query_ids : ndarray
        The sorted ids of those queries (``data``'s query order).
    train, val, loss : TrainingSet or None
        Training queries, held-out queries and the sample of training
        queries on which the loss is evaluated (set by :meth:`split`).
    training : ShardTraining or None
        Set by :meth:`split`.
    """

    def __init__(self, spec, X, y, groups, sample_weight):
        self.spec = spec
        self.training = None
        self.train = self.val = self.loss = None
        if len(y) == 0:
            self.data, self.query_ids, self.weight_max = None, np.asarray(groups)[:0], None
            return
        X = check_array(X, dtype=(np.float64, np.float32), input_name="X", ensure_all_finite=False)
        check_finite_features(X, spec.owner, spec.feature_scaling)  # NaN is a missing value
        assert_all_finite(y, input_name="y")  # the in-memory fit's check, on each shard
        check_relevance_labels(y, exponential_gain=spec.exponential_gain, input_name="y", remedy=spec.label_remedy)
        self.query_ids = group_rows(groups, len(y)).query_ids
        # A shard whose queries all weigh 0 is legitimate (others may not);
        # query_weights refuses all-zero weights, so they are set here.
        all_zero = sample_weight is not None and not np.any(sample_weight)
        self.data = TrainingSet.from_input(X, y, groups, spec.make_objective, None if all_zero else sample_weight)
        if all_zero:
            self.data.weights = np.zeros(self.data.n_queries)
        # The shard's query weights are relative to its own largest weight
        # (overflow-safe); the client puts every shard on the global scale.
        self.weight_max = None if sample_weight is None else float(np.max(sample_weight))
        self.train = self.loss = self.data

    @property
    def n_queries(self):
        return 0 if self.data is None else self.data.n_queries

    def summary(self, scaling_kind, edge_rows):
        """What the client needs to plan the fit: per-query numbers, the
        feature moments of the input scaling, and for ``"piecewise"``
        (whose moments need the bin edges first) up to ``edge_rows`` rows,
        evenly spaced, on which the client places the edges and measures
        the moments. With missing values, or with ``"piecewise"``, those
        rows come with their labels' within-query residuals, from which the
        client matches the values that missing values read as
        (:func:`~.._missingness.missing_fill`)."""
        if self.data is None:
            empty = np.zeros(0, dtype=np.int64)
            nothing = np.zeros(0, dtype=bool)
            return {"ids": self.query_ids, "sizes": empty, "work": empty, "weights": None,
                    "weight_max": None, "moments": None, "edge_sample": None, "dtype": None,
                    "missingness": None, "residuals": None, "n_missing": 0,
                    "contrasts": (nothing, nothing)}
        data = self.data
        edge_sample = moments = residuals = None
        weighted = data.weighted
        counted = weighted.rows  # as in memory: queries of weight 0 do not count
        if len(counted) and scaling_kind is not None and scaling_kind != "piecewise":
            moments = feature_moments(scaling_kind, data.X, counted)
        # Other kinds send their rows only when this shard has a missing value:
        # their fills are then matched on the shards that do.
        if len(counted) and (scaling_kind == "piecewise" or (moments is not None and not np.isscalar(moments[-1]))):
            sampled = np.arange(0, len(counted), -(-len(counted) // edge_rows))
            edge_sample = data.X[counted[sampled]]
            residuals = within_query_residuals(weighted.y, weighted.offsets)[sampled]
        return {
            "ids": self.query_ids,
            "sizes": np.diff(data.offsets),
            "work": np.asarray(data.query_work()),
            "weights": data.weights,
            "weight_max": self.weight_max,
            "moments": moments,
            # Queries are whole in a shard, so the shards' sums add up to
            # the in-memory evidence.
            "missingness": (
                None if scaling_kind is None or not len(counted)
                else missingness_evidence(data.X, counted, weighted.y, weighted.offsets)
            ),
            "edge_sample": edge_sample,
            "residuals": residuals,
            # For "auto" alpha: the NaN among the rows of positive weight.
            "n_missing": missing_count(data.X, counted),
            "dtype": data.X.dtype,
            "contrasts": query_contrasts(data),
        }

    def split(self, train_queries, val_queries, loss_queries, training):
        """A copy whose training, validation and loss sets are the given
        queries (positions in ``data``), to be trained with ``training``
        (the global input scaling, the objective, the L2 weight over all
        shards' training queries, the step size...)."""
        shard = copy.copy(self)
        shard.training = training
        if self.data is None:
            return shard
        make = training.make_objective
        data = self.data.with_objective(make)

        def subset(queries):
            if queries is None or len(queries) == 0:
                return None
            if len(queries) == data.n_queries:
                return data
            return data.subset(queries, make)

        shard.train = subset(train_queries)
        shard.val = subset(val_queries)
        same = loss_queries is not None and np.array_equal(loss_queries, train_queries)
        shard.loss = shard.train if same else subset(loss_queries)
        return shard

    def model_and_state(self, params, seed):
        """A model with these parameters (copies) and the global input
        scaling, and a fit state with a random stream of its own."""
        training = self.training
        model = RankingModel(
            [np.array(p) for p in params[: len(params) // 2]], [np.array(p) for p in params[len(params) // 2:]],
            training.activation, training.scaling,
        )
        state = FitState(np.random.RandomState(seed))
        state.l2, state.dropout, state.input_noise = training.l2, training.dropout, training.input_noise
        if self.train is not None:
            # As in memory: more threads only where a minibatch shares out.
            shares_out = pool_has_work(model, self.train, training.batch_size, training.solver)
            state.n_threads = effective_n_jobs(training.n_jobs) if shares_out else 1
        else:
            state.n_threads = effective_n_jobs(training.n_jobs)
        return model, state


def make_shard(frame, spec, feature_columns, dtype, weighted):
    """A :class:`Shard` from one co-located partition (a pandas DataFrame
    made by ``sklearn_ranknet.dask``). Rows are put back in input order
    first (partition, then row), so the shard does not depend on the order
    in which the shuffle delivered them."""
    if len(frame) > 1:
        frame = frame.sort_values(["__part__", "__row__"], kind="stable")
    X = frame[feature_columns].to_numpy(dtype=dtype)
    y = frame["__y__"].to_numpy(dtype=np.float64)
    groups = frame["__qid__"].to_numpy()
    weights = frame["__w__"].to_numpy(dtype=np.float64) if weighted else None
    return Shard(spec, X, y, groups, weights)


def fit_gathered(parts, ranker, feature_columns, feature_names, dtype, weighted, validation):
    """Fit the in-memory ``ranker`` on every partition (pandas DataFrames
    made by ``sklearn_ranknet.dask``, in input order) gathered on this
    worker. Returns the fitted ranker, the warnings the fit raised and what
    it printed (for the client to pass on) and its seconds."""
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    X = frame[feature_columns].to_numpy(dtype=dtype)
    if feature_names is not None:
        X = pd.DataFrame(X, columns=feature_names, copy=False)
    y = frame["__y__"].to_numpy(dtype=np.float64)
    groups = frame["__qid__"].to_numpy()
    weights = frame["__w__"].to_numpy(dtype=np.float64) if weighted else None
    del frame, parts
    printed = io.StringIO()
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        warnings.simplefilter("always")
        ranker.fit(X, y, groups, weights, **(validation or {}))
    seconds = time.perf_counter() - start
    return ranker, [(w.message, w.category) for w in caught], printed.getvalue(), seconds


def shard_summary(shard, edge_rows, scaling_kind):
    return shard.summary(scaling_kind, edge_rows)


def shard_counted_rows(shard):
    """The shard's rows of positive weight: those the input scaling reads."""
    return 0 if shard.data is None else len(shard.data.weighted.rows)


def _edge_budgets(counts):
    """How many rows each shard sends for the bin edges (and the fills of
    missing values): every one when the
    shards hold at most ``EDGE_SAMPLE_ROWS`` together, so that the edges
    are those of the in-memory ranker (which reads every row up to that
    many), else a share in proportion to the shard's rows, so that the
    pooled sample stays spread evenly over all of them."""
    total = sum(counts)
    if total <= EDGE_SAMPLE_ROWS:
        return [max(count, 1) for count in counts]
    return [max(1, -(-EDGE_SAMPLE_ROWS * count // total)) for count in counts]


def split_shard(shard, train_queries, val_queries, loss_queries, training):
    return shard.split(train_queries, val_queries, loss_queries, training)


def _restored_optimizer(model, state, training):
    params = model.params
    if state is None:
        return new_optimizer(params, training.step, training.solver, training.momentum)
    optimizer = copy.deepcopy(state)  # the client's copy stays as it was
    optimizer.params = params
    return optimizer


def _detached(optimizer):
    """The optimizer's state without its parameters (they travel once)."""
    optimizer.params = []
    return optimizer


def local_epoch(shard, params, optimizer_state, seed):
    """One epoch of minibatch steps over the shard's training queries from
    ``params``: returns the new parameters, the optimizer state and the
    number of rows processed."""
    model, state = shard.model_and_state(params, seed)
    state.optimizer = _restored_optimizer(model, optimizer_state, shard.training)
    train = shard.train
    order = state.random_state.permutation(train.n_queries)
    batch_size = min(shard.training.batch_size, train.n_queries)
    state.noise = noise_table(model, state, train, batch_size, -(-train.n_queries // batch_size))
    with single_threaded_blas():
        for positions, queries, offsets in _epoch_batches(train, order, batch_size):
            _step(model, state, train, positions, queries, offsets)
    return model.params, _detached(state.optimizer), state.t


def evaluate(shard, params, gain):
    """Per-query numbers of the current parameters: the training cost of the
    shard's loss-sample queries and the NDCG@10 of its held-out queries
    (either None when the shard has none)."""
    model, state = shard.model_and_state(params, 0)
    costs = values = None
    with single_threaded_blas():
        if shard.loss is not None:
            costs = query_costs(model, shard.loss, state.n_threads)
        if shard.val is not None:
            val = shard.val
            scores = _scores(model, val, state.n_threads)
            groups = np.repeat(np.arange(val.n_queries), np.diff(val.offsets))
            _, values = ndcg_per_query(val.y, scores, groups=groups, k=SCORE_K, gain=gain)
    return costs, values


# ---------------------------------------------------------------------------
# The client half


class QueryTable:
    """Every query of the fit, one row each, in sorted-id order: what the
    client knows of the data. It answers what ``split_validation`` and
    ``_loss_sample`` ask of a :class:`TrainingSet`, so that the validation
    split and the loss sample are drawn exactly as in memory.

    Attributes
    ----------
    queries : ndarray of int
        Positions of this table's queries among all queries.
    offsets : ndarray
        Row offsets of the queries (from their sizes).
    weights : ndarray or None
    shard, local : ndarray of int
        Each query's shard and its position in the shard.
    """

    def __init__(self, queries, sizes, work, weights, shard, local):
        self.queries, self.weights, self.shard, self.local = queries, weights, shard, local
        self.offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        self._work = work

    def query_work(self):
        """Pairs (or documents) the objective visits in each query."""
        return self._work

    @property
    def n_queries(self):
        return len(self.queries)

    @property
    def n_rows(self):
        return int(self.offsets[-1])

    @property
    def weighted(self):
        """The queries of positive weight, as ``TrainingSet.weighted``."""
        if self.weights is None or self.weights.all():
            return self
        return self.subset(weighted_queries(self))

    def subset(self, queries, make_objective=None):
        queries = np.asarray(queries, dtype=np.int64)
        return QueryTable(
            self.queries[queries], np.diff(self.offsets)[queries], self._work[queries],
            None if self.weights is None else self.weights[queries], self.shard[queries],
            self.local[queries],
        )

    def local_queries(self, shard):
        """Positions, in shard ``shard``, of this table's queries there."""
        return self.local[self.shard == shard]

    def shard_weight(self, shard):
        """Total query weight of this table's queries in a shard."""
        mine = self.shard == shard
        return float(mine.sum()) if self.weights is None else float(self.weights[mine].sum())

    def in_order(self, per_shard):
        """Per-query values sent shard by shard (each shard's queries of this
        table, in its own order; None for none) -> in this table's order."""
        values = np.concatenate([v for v in per_shard if v is not None])
        shard_major = np.lexsort((self.local, self.shard))
        ordered = np.empty_like(values)
        ordered[shard_major] = values
        return ordered

    def mean_of(self, values):
        """Mean of per-query values (in this table's order) under the query
        weights, as ``TrainingSet.mean_of_queries``."""
        if self.weights is None:
            return float(values.sum()) / max(self.n_queries, 1)
        return float(values @ self.weights) / self.weights.sum()

    @classmethod
    def from_summaries(cls, summaries, partitioned_by_query):
        ids = [s["ids"] for s in summaries]
        counts = [len(i) for i in ids]
        all_ids = np.concatenate(ids) if ids else np.zeros(0)
        order = np.argsort(all_ids, kind="stable")
        shard = np.repeat(np.arange(len(summaries)), counts)[order]
        local = np.concatenate([np.arange(n) for n in counts]).astype(np.int64)[order]
        sorted_ids = all_ids[order]
        repeated = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
        if len(repeated):
            check_disjoint(sorted_ids, shard, partitioned_by_query)
        sizes = np.concatenate([s["sizes"] for s in summaries])[order]
        work = np.concatenate([s["work"] for s in summaries])[order]
        weighted = any(s["weights"] is not None for s in summaries)
        weights = None
        if weighted:
            # Each shard's weights are relative to its largest: rescaled to
            # the largest of all (a factor <= 1, so nothing overflows).
            largest = max(s["weight_max"] for s in summaries if s["weights"] is not None)
            weights = np.concatenate([
                s["weights"] * (s["weight_max"] / largest if largest > 0 else 0.0)
                if s["weights"] is not None else np.zeros(len(s["ids"])) for s in summaries
            ])[order]
        table = cls(np.arange(len(order)), sizes, work, weights, shard, local)
        table.ids = sorted_ids
        table.contrasts = tuple(np.concatenate([s["contrasts"][i] for s in summaries])[order] for i in (0, 1))
        return table


def check_disjoint(sorted_ids, partition_of, partitioned_by_query):
    """Raise when a query id appears in two partitions (``sorted_ids`` are
    the ids of every partition's queries, sorted, with each one's partition
    in ``partition_of``)."""
    repeated = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if not len(repeated):
        return
    first = int(repeated[0])
    where = sorted(set(partition_of[first : first + 2].tolist()))
    n_split = len(np.unique(sorted_ids[repeated]))
    cause = (
        "partitioned_by_query=True promised that every partition holds whole queries, but"
        if partitioned_by_query
        else "After co-location,"
    )
    raise ValueError(
        f"{cause} query {shown(sorted_ids[first])!r} has rows in partitions {where[0]} and "
        f"{where[-1]} ({n_split} quer{'y is' if n_split == 1 else 'ies are'} split). Set "
        "partitioned_by_query=False to let the shuffle co-locate each query's rows, or "
        "repartition the data by query id."
    )


def _lost_work_error(exc, what):
    """A clear error for work the cluster lost for good."""
    return RuntimeError(
        f"The Dask cluster lost the {what} and could not recover it "
        f"({type(exc).__name__}: {exc}). Workers holding it died repeatedly (out of "
        "memory?) or the scheduler went away; see the workers' logs. The training "
        "state is kept on the client, so calling fit again restarts cleanly."
    )


def gather(client, futures, what):
    """``client.gather`` that turns lost work into a RuntimeError saying so.
    Task errors (e.g. invalid input found on a worker) pass unchanged."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker
    from distributed.comm import CommClosedError

    try:
        return client.gather(futures)
    except (KilledWorker, CancelledError, CommClosedError) as exc:
        raise _lost_work_error(exc, what) from exc


@dataclass
class FitRequest:
    """What the Dask ranker asks of :func:`fit`: its parameters
    (``get_params(deep=False)``) and "auto" rules, its objective for the
    resolved values (``objective_factory(resolved) -> make_objective``), the
    width of ``X``, the model a warm fit continues (None for a first fit),
    the fit state and the learning curves to extend."""

    params: dict
    rules: object
    n_features: int
    model: object
    state: FitState
    history: object
    objective_factory: object = None
    partitioned_by_query: bool = False
    #: The user's validation set (``fit(X_val=...)``), in memory on the
    #: client: a ``TrainingSet`` that early stopping scores there.
    validation: object = None


def fit(client, shards, request):
    """Fit on co-located shards (futures of :class:`Shard`): returns the
    model, the resolved values and the time of each phase; ``request``'s
    state and history are updated."""
    timings = {}
    started = time.perf_counter()
    plan = _Plan(client, shards, request)
    # The split shards share the unsplit ones' arrays: drop these futures
    # (Dask keeps their data until the split tasks have run, and their
    # tasks for recomputation), or every shard would be counted twice.
    shards.clear()
    timings["prepare_s"] = time.perf_counter() - started
    started = time.perf_counter()
    options = plan.options
    monitor = EpochMonitor(
        request.history, plan.val is not None or plan.given_val is not None, plan.resolved.n_iter_no_change,
        options.tol, options.verbose,
    )
    _by_averaging(plan.model, request.state, client, plan, monitor)
    timings["train_s"] = time.perf_counter() - started
    return plan.model, plan.resolved, timings


class _Plan:
    """What the client decides before the first round: the query table, the
    resolved "auto" values, the global input scaling, the initial weights,
    the validation split and the loss sample (in the in-memory order of
    random draws), and the shards split accordingly."""

    def __init__(self, client, shards, request):
        params, state = request.params, request.state
        first_call = request.model is None
        scaling_kind = params["feature_scaling"] if first_call else None
        budgets = [None] * len(shards)
        if scaling_kind is not None:  # (other kinds send rows only with missing values)
            budgets = _edge_budgets(gather(
                client, client.map(shard_counted_rows, shards, pure=False), "partitions' sizes"
            ))
        summaries = gather(
            client,
            client.map(shard_summary, shards, budgets, scaling_kind=scaling_kind, pure=False),
            "partitions' summaries",
        )
        table = QueryTable.from_summaries(summaries, request.partitioned_by_query)
        if table.n_rows < 1:
            raise ValueError("X has no rows; there is nothing to rank.")
        if table.weights is not None:
            # The in-memory all-zero check, on one row per query.
            one_row_each = QueryGroups(None, np.arange(table.n_queries + 1), table.queries)
            query_weights(one_row_each, table.weights)
        # The in-memory warning, from every partition's queries.
        warn_if_nothing_to_learn(table.contrasts, np.diff(table.offsets), table.weights, "fit", stacklevel=5)
        self.dtype = next(s["dtype"] for s in summaries if s["dtype"] is not None)
        counted = table.weighted  # the "auto" values' size, as in memory
        n_missing = sum(s["n_missing"] for s in summaries)
        shape = DataShape(counted.n_rows, counted.n_queries, dtype=self.dtype,
                          missing_share=n_missing / max(counted.n_rows * request.n_features, 1))
        self.resolved = resolve(
            params, request.rules, shape, distributed=True,
            fitted_widths=None if first_call else request.model.hidden_layer_sizes,
            validation_given=request.validation is not None,
        )
        self.options = Options.of(params, self.resolved)
        if first_call:
            scaling = _global_scaling(scaling_kind, summaries, self.dtype, counted.n_rows)
            self.model = RankingModel.initialize(
                request.n_features, self.resolved.hidden_layer_sizes, params["activation"], scaling, self.dtype,
                state.random_state,
            )
        else:
            self.model = request.model
        self.n_rows = counted.n_rows
        # The user's validation set is scored here, on the client; without
        # one, early stopping holds queries out of the shards.
        self.given_val, self.state = request.validation, state
        self.train, self.val = (
            split_validation(table, params["validation_fraction"], state.random_state, None)
            if self.resolved.early_stopping and self.given_val is None else (table, None)
        )
        self.loss = _loss_sample(self.train, state.random_state, None)
        state.l2 = l2_strength(self.resolved.alpha, self.train)
        training = ShardTraining(
            make_objective=request.objective_factory(self.resolved), scaling=self.model.scaling, activation=params["activation"],
            l2=state.l2, step=self.resolved.learning_rate_init, solver=params["solver"],
            momentum=params["momentum"], batch_size=self.resolved.batch_size, dropout=params["dropout"],
            input_noise=self.resolved.input_noise, n_jobs=params["n_jobs"],
        )
        self.shards = [
            client.submit(
                split_shard, shard, self.train.local_queries(i),
                None if self.val is None else self.val.local_queries(i), self.loss.local_queries(i),
                training, pure=False,
            )
            for i, shard in enumerate(shards)
        ]
        self.weights = np.array([self.train.shard_weight(i) for i in range(len(shards))])
        # Shards whose training queries weigh nothing take no step.
        self.active = [i for i in range(len(shards)) if self.weights[i] > 0]
        self.gain = params.get("gain", "exponential")

    def combine(self, evaluations, model, l2):
        """The loss and the validation NDCG@10 of the model's parameters
        from the shards' per-query numbers, put back in global query order
        (so that the means add up in the in-memory order)."""
        costs = self.loss.in_order([c for c, _ in evaluations])
        value = self.loss.mean_of(costs) + _network.l2_penalty(model.coefs, l2)
        if self.given_val is not None:
            return value, validation_score(model, self.state, self.given_val, self.gain)
        if self.val is None:
            return value, None
        scores = self.val.in_order([v for _, v in evaluations])
        if self.val.weights is None:
            return value, float(np.mean(scores))
        return value, float(np.average(scores, weights=self.val.weights))


def _global_scaling(kind, summaries, dtype, n_rows):
    """The input scaling of all shards' rows of positive weight (``n_rows``
    of them): their merged feature moments, or for ``"piecewise"`` the bin
    edges and the encoded inputs' moments of the shards' pooled samples (as
    in memory, from at most ``EDGE_SAMPLE_ROWS`` rows)."""
    if kind is None:
        return None
    encoding = None
    if kind == "piecewise":
        samples = [s["edge_sample"] for s in summaries if s["edge_sample"] is not None]
        sample = np.concatenate(samples).astype(dtype, copy=False)
        encoding = PiecewiseEncoding.fit(sample, n_bins=piecewise_bins(n_rows))
        shard_moments_list = [feature_moments(kind, sample, None, encoding)]
    else:
        shard_moments_list = [s["moments"] for s in summaries]
    moments = (0, 0.0, 0.0, None, None, 0)
    for m in shard_moments_list:
        if m is not None:
            moments = merge_moments(moments, m)
    evidence = [s["missingness"] for s in summaries if s["missingness"] is not None]
    telling = telling_features(functools.reduce(merge_evidence, evidence)) if evidence else None
    fill_from = None
    if telling is not None and telling.any():
        sampled = [s for s in summaries if s["residuals"] is not None]
        rows = [s["edge_sample"] for s in sampled]
        rows = np.concatenate(rows)  # (shards hold dense blocks, as the edge samples above)
        fill_from = (rows, None, np.concatenate([s["residuals"] for s in sampled]))
    return InputScaling.from_moments(kind, moments, dtype, encoding, telling, fill_from)


def round_task(shard, params, optimizer_state, seed, gain, evaluate_params, train):
    """One round on a shard: the evaluation of ``params`` (when asked), then
    a local epoch from them (when asked). One task, so one round trip."""
    evaluation = evaluate(shard, params, gain) if evaluate_params else None
    epoch = local_epoch(shard, params, optimizer_state, seed) if train else None
    return evaluation, epoch


def _check_new_params(model, options, params):
    """Non-finite parameters stop the fit with the in-memory message, before
    any shard computes with them."""
    if not all(np.isfinite(p).all() for p in params):
        _check_finite(model.with_params(params), options)


def _by_averaging(model, state, client, plan, monitor):
    """Local SGD with parameter averaging. The round that trains epoch e + 1
    also evaluates the parameters of epoch e, so an epoch costs one round
    trip; the last round only evaluates (or its epoch is dropped when the
    evaluation says stop)."""
    shards, active, weights = plan.shards, set(plan.active), plan.weights
    max_iter = plan.options.max_iter
    states = [None] * len(shards)  # each shard's optimizer state
    pending = None  # (parameters, rows) of an epoch not yet evaluated
    done, stopped = 0, False
    while True:
        started = time.perf_counter()
        train_now = done + (pending is not None) < max_iter
        seeds = state.random_state.randint(2**31, size=len(shards)) if train_now else [0] * len(shards)
        params = pending[0] if pending is not None else [p.copy() for p in model.params]
        results = gather(client, [
            client.submit(round_task, shard, params, states[i], seeds[i], plan.gain,
                          pending is not None, train_now and i in active, pure=False)
            for i, shard in enumerate(shards)
        ], "round of training")
        if pending is not None:
            model.set_params(params)
            state.t += pending[1]
            done += 1
            if monitor.record(*plan.combine([r[0] for r in results], model, state.l2), model.params, started):
                stopped = True
                break
        if not train_now:
            break
        epochs = {i: results[i][1] for i in active}
        total = weights[list(active)].sum()
        averaged = [
            sum(weights[i] / total * epochs[i][0][j].astype(np.float64) for i in sorted(active))
            for j in range(len(params))
        ]
        for i in active:
            states[i] = epochs[i][1]
        _check_new_params(model, plan.options, averaged)
        pending = (averaged, sum(epochs[i][2] for i in active))
    best_params = monitor.finish(stopped, max_iter)
    if best_params is not None:
        model.set_params(best_params)
