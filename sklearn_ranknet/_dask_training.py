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

Two designs, chosen by ``design``:

``"parameters"`` (the default): local SGD with parameter averaging. Each
round is one epoch: every shard runs an epoch of minibatch steps over its own
training queries, from the current averaged parameters with its own optimizer
state, and returns its parameters; the client averages them weighted by the
shard's total query weight (its number of queries when there is no
``sample_weight``). One round trip per epoch.

``"gradients"``: synchronous averaged gradients. Each step, every shard
computes the gradient of its next minibatch at the current parameters; the
client averages them (weighted by each minibatch's query weight) and takes
one optimizer step. This is exactly minibatch training with a minibatch of
about ``n_shards * batch_size`` queries, at the price of one round trip per
step.

Input scaling statistics are global: each shard sends the count, mean and sum
of squared deviations of its (transformed) features, merged with Chan et
al.'s pairwise formula.

This module imports no Dask: it calls the client it is given.
"""

import copy
import time

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_array
from sklearn.utils.validation import assert_all_finite

from . import _network
from ._base import query_contrasts, warn_if_nothing_to_learn
from ._groups import QueryGroups, group_rows, query_weights
from ._inputs import (
    EDGE_SAMPLE_ROWS, InputScaling, PiecewiseEncoding, feature_moments, merge_moments, piecewise_bins,
    set_input_scaling_attributes,
)
from ._jit import single_threaded_blas
from ._training import (
    SCORE_K, EpochMonitor, TrainingSet, _check_finite, _epoch_batches, _l2_strength, _loss_sample, _scores,
    _step, new_optimizer, noise_table, pool_has_work, split_validation, weighted_queries,
)
from ._validation import check_relevance_labels, label_remedy, shown
from .metrics import ndcg_per_query

#: Training designs (see the module docstring).
DESIGNS = ("parameters", "gradients")


# ---------------------------------------------------------------------------
# The worker half


class Shard:
    """The whole queries of one partition, arranged for training.

    Built on the worker that holds the partition (by :func:`make_shard`) and
    kept there, as a Dask future the client holds; never modified after it
    is built (:meth:`split` returns a new one).

    Attributes
    ----------
    template : ranker
        An unfitted in-memory ranker carrying the hyperparameters.
    data : TrainingSet or None
        Every query of the partition (``None`` for an empty partition).
    query_ids : ndarray
        The sorted ids of those queries (``data``'s query order).
    train, val, loss : TrainingSet or None
        Training queries, held-out queries and the sample of training
        queries on which the loss is evaluated (set by :meth:`split`).
    scaling : InputScaling or None
    """

    def __init__(self, template, X, y, groups, sample_weight):
        self.template = template
        self.scaling = None
        self.train = self.val = self.loss = None
        if len(y) == 0:
            self.data, self.query_ids, self.weight_max = None, np.asarray(groups)[:0], None
            return
        X = check_array(X, dtype=(np.float64, np.float32), input_name="X")
        assert_all_finite(y, input_name="y")  # the in-memory fit's check, on each shard
        check_relevance_labels(
            y, exponential_gain=template._uses_exponential_gain(), input_name="y",
            remedy=label_remedy(template),
        )
        self.query_ids = group_rows(groups, len(y)).query_ids
        # A shard whose queries all weigh 0 is legitimate (others may not);
        # query_weights refuses all-zero weights, so they are set here.
        all_zero = sample_weight is not None and not np.any(sample_weight)
        self.data = TrainingSet.from_input(
            X, y, groups, template._make_objective, None if all_zero else sample_weight
        )
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
        the moments."""
        if self.data is None:
            empty = np.zeros(0, dtype=np.int64)
            nothing = np.zeros(0, dtype=bool)
            return {"ids": self.query_ids, "sizes": empty, "work": empty, "weights": None,
                    "weight_max": None, "moments": None, "edge_sample": None, "dtype": None,
                    "contrasts": (nothing, nothing)}
        data = self.data
        edge_sample = moments = None
        counted = data.weighted.rows  # as in memory: queries of weight 0 do not count
        if len(counted) and scaling_kind == "piecewise":
            edge_sample = data.X[counted[:: -(-len(counted) // edge_rows)]]
        elif len(counted) and scaling_kind is not None:
            moments = feature_moments(scaling_kind, data.X, counted)
        return {
            "ids": self.query_ids,
            "sizes": np.diff(data.offsets),
            "work": np.asarray(data.objective.query_work(data.offsets)),
            "weights": data.weights,
            "weight_max": self.weight_max,
            "moments": moments,
            "edge_sample": edge_sample,
            "dtype": data.X.dtype,
            "contrasts": query_contrasts(data),
        }

    def split(self, train_queries, val_queries, loss_queries, scaling, l2, step):
        """A copy whose training, validation and loss sets are the given
        queries (positions in ``data``), with the global input scaling, L2
        weight (``alpha`` over all shards' training queries) and step size
        (``learning_rate_init`` for all shards' queries)."""
        shard = copy.copy(self)
        shard.scaling, shard.l2, shard.step = scaling, l2, step
        if self.data is None:
            return shard
        make = self.template._make_objective

        def subset(queries):
            if queries is None or len(queries) == 0:
                return None
            if len(queries) == self.data.n_queries:
                return self.data
            return self.data.subset(queries, make)

        shard.train = subset(train_queries)
        shard.val = subset(val_queries)
        same = loss_queries is not None and np.array_equal(loss_queries, train_queries)
        shard.loss = shard.train if same else subset(loss_queries)
        return shard

    def ranker(self, params, seed):
        """An in-memory ranker with these parameters (copies), the global
        input scaling and a random state of its own."""
        ranker = clone(self.template)
        n_layers = len(params) // 2
        ranker.coefs_ = [np.array(p) for p in params[:n_layers]]
        ranker.intercepts_ = [np.array(p) for p in params[n_layers:]]
        ranker._input_scaling, ranker._l2 = self.scaling, self.l2
        ranker._random_state = np.random.RandomState(seed)
        ranker.t_ = 0
        ranker.input_noise_ = ranker._input_noise(None, incremental=False)
        if self.train is not None:
            # As in memory: more threads only where a minibatch shares out
            # (on the ranker made for this task: the shard stays as built).
            ranker._fit_threads = ranker._n_threads() if pool_has_work(ranker, self.train) else 1
        return ranker


def make_shard(frame, template, feature_columns, dtype, weighted):
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
    return Shard(template, X, y, groups, weights)


def shard_summary(shard, edge_rows, scaling_kind):
    return shard.summary(scaling_kind, edge_rows)


def shard_counted_rows(shard):
    """The shard's rows of positive weight: those the input scaling reads."""
    return 0 if shard.data is None else len(shard.data.weighted.rows)


def _edge_budgets(counts):
    """How many rows each shard sends for the bin edges: every one when the
    shards hold at most ``EDGE_SAMPLE_ROWS`` together, so that the edges
    are those of the in-memory ranker (which reads every row up to that
    many), else a share in proportion to the shard's rows, so that the
    pooled sample stays spread evenly over all of them."""
    total = sum(counts)
    if total <= EDGE_SAMPLE_ROWS:
        return [max(count, 1) for count in counts]
    return [max(1, -(-EDGE_SAMPLE_ROWS * count // total)) for count in counts]


def split_shard(shard, train_queries, val_queries, loss_queries, scaling, l2, step):
    return shard.split(train_queries, val_queries, loss_queries, scaling, l2, step)


def _restored_optimizer(ranker, state, step):
    params = ranker.coefs_ + ranker.intercepts_
    if state is None:
        return new_optimizer(ranker, params, step)
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
    ranker = shard.ranker(params, seed)
    ranker._optimizer = _restored_optimizer(ranker, optimizer_state, shard.step)
    train, n_threads = shard.train, ranker._n_threads()
    order = ranker._random_state.permutation(train.n_queries)
    batch_size = ranker._batch_size(train.n_queries)
    noise = noise_table(ranker, train, batch_size, -(-train.n_queries // batch_size))
    with single_threaded_blas(n_threads):
        for positions, queries, offsets in _epoch_batches(train, order, batch_size):
            _step(ranker, train, positions, queries, offsets, n_threads, noise)
    return ranker.coefs_ + ranker.intercepts_, _detached(ranker._optimizer), ranker.t_


class _GradientRecorder:
    """Stands in for the optimizer in ``_step``: keeps the gradients."""

    grads = None

    def update(self, grads):
        self.grads = grads


def batch_gradient(shard, params, seed, step, n_steps):
    """Gradient of the shard's ``step``-th minibatch of an epoch whose query
    order is drawn from ``seed``, cut into ``n_steps`` minibatches. Returns
    ``(grads, weight, n_rows)``, or None when the shard has no query left
    for this step; ``weight`` is the minibatch's share of the total."""
    train = shard.train
    order = np.random.RandomState(seed).permutation(train.n_queries)
    queries = np.array_split(order, n_steps)[step]
    if len(queries) == 0:
        return None
    ranker = shard.ranker(params, [seed, step])  # dropout and noise draws
    ranker._optimizer = _GradientRecorder()
    positions, offsets = train.positions_of(queries)
    n_threads = ranker._n_threads()
    noise = noise_table(ranker, train, len(queries), n_steps=1)
    with single_threaded_blas(n_threads):
        _step(ranker, train, positions, queries, offsets, n_threads, noise)
    # _step averages over the minibatch's queries, each weighed by its
    # weight over the shard's mean weight.
    return ranker._optimizer.grads, len(queries) * train.mean_weight, len(positions)


def evaluate(shard, params, gain):
    """Per-query numbers of the current parameters: the training cost of the
    shard's loss-sample queries and the NDCG@10 of its held-out queries
    (either None when the shard has none)."""
    ranker = shard.ranker(params, 0)
    costs = values = None
    with single_threaded_blas(ranker._n_threads()):
        if shard.loss is not None:
            loss = shard.loss
            scores = _scores(ranker, loss)
            _, costs = loss.objective.gradient(
                scores, np.arange(len(loss.rows)), np.arange(loss.n_queries), loss.offsets, with_cost=True,
                n_threads=ranker._n_threads(),
            )
        if shard.val is not None:
            val = shard.val
            scores = _scores(ranker, val)
            groups = np.repeat(np.arange(val.n_queries), np.diff(val.offsets))
            _, values = ndcg_per_query(val.y, scores, groups=groups, k=SCORE_K, gain=gain)
    return costs, values


# ---------------------------------------------------------------------------
# The client half


class QueryTable:
    """Every query of the fit, one row each, in sorted-id order: what the
    client knows of the data. Quacks like a :class:`TrainingSet` where
    ``split_validation`` and ``_loss_sample`` look, so that the validation
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
        self.objective = self  # query_work, below

    def query_work(self, offsets):
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


def fit(ranker, client, shards, *, design="parameters"):
    """Fit ``ranker`` (a Dask ranker, whose attributes receive the result)
    on co-located shards (futures of :class:`Shard`)."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}; got {design!r}.")
    timings = ranker._fit_timings = {}
    started = time.perf_counter()
    plan = _Plan(ranker, client, shards)
    # The split shards share the unsplit ones' arrays: drop these futures
    # (Dask keeps their data until the split tasks have run, and their
    # tasks for recomputation), or every shard would be counted twice.
    shards.clear()
    timings["prepare_s"] = time.perf_counter() - started
    started = time.perf_counter()
    train = _by_averaging if design == "parameters" else _by_gradients
    train(ranker, client, plan, EpochMonitor(ranker, plan.val is not None, ranker._patience(plan.n_rows)))
    timings["train_s"] = time.perf_counter() - started
    return ranker


class _Plan:
    """What the client decides before the first round: the query table, the
    global input scaling, the initial weights, the validation split and the
    loss sample (in the in-memory order of random draws), and the shards
    split accordingly."""

    def __init__(self, ranker, client, shards):
        first_call = not hasattr(ranker, "coefs_")
        scaling_kind = ranker.feature_scaling if first_call else None
        budgets = [None] * len(shards)
        if scaling_kind == "piecewise":
            budgets = _edge_budgets(gather(
                client, client.map(shard_counted_rows, shards, pure=False), "partitions' sizes"
            ))
        summaries = gather(
            client,
            client.map(shard_summary, shards, budgets, scaling_kind=scaling_kind, pure=False),
            "partitions' summaries",
        )
        table = QueryTable.from_summaries(summaries, ranker.partitioned_by_query)
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
        if first_call:
            scaling = _global_scaling(ranker, summaries, self.dtype, counted.n_rows)
            _initialize(ranker, scaling, self.dtype, counted.n_rows)
        self.n_rows = counted.n_rows
        early_stopping = ranker._uses_early_stopping(counted.n_rows, counted.n_queries, False)
        self.train, self.val = split_validation(ranker, table) if early_stopping else (table, None)
        self.loss = _loss_sample(self.train, ranker._random_state, None)
        ranker._l2 = _l2_strength(ranker, self.train, counted.n_rows)
        self.step = ranker._learning_rate(counted.n_queries)
        self.shards = [
            client.submit(
                split_shard, shard, self.train.local_queries(i),
                None if self.val is None else self.val.local_queries(i), self.loss.local_queries(i),
                ranker._input_scaling, ranker._l2, self.step, pure=False,
            )
            for i, shard in enumerate(shards)
        ]
        self.weights = np.array([self.train.shard_weight(i) for i in range(len(shards))])
        # Shards whose training queries weigh nothing take no step.
        self.active = [i for i in range(len(shards)) if self.weights[i] > 0]
        self.gain = getattr(ranker, "gain", "exponential")

    def params(self, ranker):
        return [p.copy() for p in ranker.coefs_ + ranker.intercepts_]

    def set_params(self, ranker, params):
        n_layers = len(params) // 2
        ranker.coefs_ = [np.asarray(p, dtype=self.dtype) for p in params[:n_layers]]
        ranker.intercepts_ = [np.asarray(p, dtype=self.dtype) for p in params[n_layers:]]

    def combine(self, evaluations, ranker):
        """The loss and the validation NDCG@10 of the ranker's parameters
        from the shards' per-query numbers, put back in global query order
        (so that the means add up in the in-memory order)."""
        costs = self.loss.in_order([c for c, _ in evaluations])
        value = self.loss.mean_of(costs) + _network.l2_penalty(ranker.coefs_, ranker._l2)
        if self.val is None:
            return value, None
        scores = self.val.in_order([v for _, v in evaluations])
        if self.val.weights is None:
            return value, float(np.mean(scores))
        return value, float(np.average(scores, weights=self.val.weights))


def _global_scaling(ranker, summaries, dtype, n_rows):
    """The input scaling of all shards' rows of positive weight (``n_rows``
    of them): their merged feature moments, or for ``"piecewise"`` the bin
    edges and the encoded inputs' moments of the shards' pooled samples (as
    in memory, from at most ``EDGE_SAMPLE_ROWS`` rows)."""
    kind = ranker.feature_scaling
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
    moments = (0, 0.0, 0.0, None, None)
    for m in shard_moments_list:
        if m is not None:
            moments = merge_moments(moments, m)
    return InputScaling.from_moments(kind, moments, dtype, encoding)


def _initialize(ranker, scaling, dtype, n_rows):
    """Global input scaling and initial weights of a first fit on ``n_rows``
    training rows (all partitions')."""
    ranker._input_scaling = scaling
    set_input_scaling_attributes(ranker)
    n_inputs = ranker.n_features_in_ if scaling is None else scaling.n_inputs
    coefs, intercepts = _network.init_params(
        n_inputs, ranker._hidden_layer_sizes(n_rows), ranker.activation, ranker._random_state
    )
    ranker.coefs_ = [c.astype(dtype, copy=False) for c in coefs]
    ranker.intercepts_ = [b.astype(dtype, copy=False) for b in intercepts]


def round_task(shard, params, optimizer_state, seed, gain, evaluate_params, train):
    """One round on a shard: the evaluation of ``params`` (when asked), then
    a local epoch from them (when asked). One task, so one round trip."""
    evaluation = evaluate(shard, params, gain) if evaluate_params else None
    epoch = local_epoch(shard, params, optimizer_state, seed) if train else None
    return evaluation, epoch


def _check_new_params(ranker, plan, params):
    """Non-finite parameters stop the fit with the in-memory message, before
    any shard computes with them."""
    if not all(np.isfinite(p).all() for p in params):
        plan.set_params(ranker, params)
        _check_finite(ranker)


def _by_averaging(ranker, client, plan, monitor):
    """Local SGD with parameter averaging. The round that trains epoch e + 1
    also evaluates the parameters of epoch e, so an epoch costs one round
    trip; the last round only evaluates (or its epoch is dropped when the
    evaluation says stop)."""
    shards, active, weights = plan.shards, set(plan.active), plan.weights
    states = [None] * len(shards)  # each shard's optimizer state
    pending = None  # (parameters, rows) of an epoch not yet evaluated
    done, stopped = 0, False
    while True:
        started = time.perf_counter()
        train_now = done + (pending is not None) < ranker.max_iter
        seeds = ranker._random_state.randint(2**31, size=len(shards)) if train_now else [0] * len(shards)
        params = pending[0] if pending is not None else plan.params(ranker)
        results = gather(client, [
            client.submit(round_task, shard, params, states[i], seeds[i], plan.gain,
                          pending is not None, train_now and i in active, pure=False)
            for i, shard in enumerate(shards)
        ], "round of training")
        if pending is not None:
            plan.set_params(ranker, params)
            ranker.t_ += pending[1]
            done += 1
            if monitor.record(*plan.combine([r[0] for r in results], ranker), started):
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
        _check_new_params(ranker, plan, averaged)
        pending = (averaged, sum(epochs[i][2] for i in active))
    best_params = monitor.finish(stopped)
    if best_params is not None:
        plan.set_params(ranker, best_params)


def _by_gradients(ranker, client, plan, monitor):
    """Synchronous averaged gradients: one optimizer on the client, one
    round trip per step, and one more per epoch for the evaluation."""
    shards, active = plan.shards, plan.active
    params = plan.params(ranker)
    optimizer = new_optimizer(ranker, params, plan.step)
    largest = max(plan.train.local_queries(i).size for i in active)
    size = ranker._batch_size(int(largest))  # the parameters design's "auto" (LambdaRank's 16)
    n_steps = max(-(-int(largest) // size), 1)
    stopped = False
    for _ in range(ranker.max_iter):
        started = time.perf_counter()
        seeds = ranker._random_state.randint(2**31, size=len(shards))
        for step in range(n_steps):
            results = gather(client, [
                client.submit(batch_gradient, shards[i], params, seeds[i], step, n_steps, pure=False)
                for i in active
            ], "step's gradients")
            results = [r for r in results if r is not None]
            total = sum(r[1] for r in results)
            optimizer.update([sum(r[1] / total * r[0][j] for r in results) for j in range(len(params))])
            ranker.t_ += sum(r[2] for r in results)
        _check_new_params(ranker, plan, params)
        plan.set_params(ranker, params)
        evaluations = gather(client, [
            client.submit(evaluate, shard, params, plan.gain, pure=False) for shard in shards
        ], "evaluation of the parameters")
        if monitor.record(*plan.combine(evaluations, ranker), started):
            stopped = True
            break
    best_params = monitor.finish(stopped)
    if best_params is not None:
        plan.set_params(ranker, best_params)
