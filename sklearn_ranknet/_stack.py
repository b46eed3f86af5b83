"""Networks trained together: several fits over the same rows in one pass.

BaggingRanker's members differ only by their seeds, and a search's settings
only by their hyperparameters: trained one after the other, each fit gathers
and encodes the same rows and multiplies them by its own first layer, the
product that dominates a step (the piecewise encoding turns a few hundred
features into several hundred inputs). :func:`fit_together` trains them side
by side instead. Every minibatch is gathered and encoded once, and each
network multiplies it by its own first layer: the first layers sit as row
blocks of one array, ``first`` of shape (sum of widths, n_inputs), each
network's ``coefs[0]`` a view of its block, and their gradients in one array
of that shape. A network's step is one task (:meth:`_Stack.for_each`): the
tasks of large stacks share the threads BLAS had (``block_threads``), and as
each reads and writes only its own block, the threads change no bit.

What comes after the first product (the deeper layers, the output, the
lambdas, the optimizer, the weight average, the stopping rule) runs network
by network with the single network's code (``_network.forward``,
``_network.backward(first_delta=True)``, ``EpochMonitor``). So each network
has its own width, activation, step size, penalty, dropout, noise level,
objective (``k``, ``sigma``, ...), query weights and stopping: a network
that stops leaves the stack (its block is copied out) while the others go
on.

What the networks share: the rows and their order (one training set, one
input scaling), the minibatch order and size, the validation split, the
loss sample, and the noise draws (each network scales them by its own
level; networks of one level share the noisy rows). The
random streams are therefore not those of separate fits: a network of a
stack is a fit with other draws, not the same fit.
"""

import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot

from . import _network
from ._inputs import stays_sparse
from ._jit import as_kernel_array, map_blocks, single_threaded_blas
from ._noise import NOISE_TABLE_BLOCKS, NoiseTable
from ._training import (
    SCORE_K, EpochMonitor, _check_finite, _epoch_batches, _freeze_output_intercept,
    _loss_sample_queries, _resumed_optimizer, _weight_average, score_block_rows, split_queries,
)
from .metrics import _grouped_ndcg_values, _mean_over_queries

# A minibatch's networks share the threads from this much first-layer work
# (rows times first-layer weights, all networks): set between the stacks at
# which two threads were slower than one and those at which they were
# faster (docs/benchmarks.md, "Model selection").
SHARE_FROM_MULTIPLY_ADDS = 2**24


def can_stack(runs):
    """Whether the planned fits ``runs`` (``_training.Run``) can train
    together: stochastic solvers, the same rows, precision, input scaling,
    batch size and validation split, and first layers that are the models' own (not
    folded, as for CSR that stays sparse under standardization)."""
    lead = runs[0]
    X, scaling = lead.data.X, lead.model.scaling
    resolved = lead.options.resolved

    def same(run):
        other = run.options.resolved
        return (
            run.options.solver != "lbfgs"
            and run.validation is None  # a validation set of the user's: the ranker's own fit
            and run.data.X.shape == X.shape and run.data.X.dtype == X.dtype
            and run.model.dtype == lead.model.dtype  # one precision per stacked product
            and np.array_equal(run.data.rows, lead.data.rows)
            and np.array_equal(run.data.offsets, lead.data.offsets)
            and _same_scaling(run.model.scaling, scaling)
            and other.batch_size == resolved.batch_size
            and other.early_stopping == resolved.early_stopping
            and run.options.validation_fraction == lead.options.validation_fraction
        )

    folded = scaling is not None and stays_sparse(X) and scaling.kind == "standard"
    return not folded and all(same(run) for run in runs)


def _same_scaling(a, b):
    if a is None or b is None:
        return a is b
    if a.kind != b.kind or not np.array_equal(a.mean, b.mean) or not np.array_equal(a.scale, b.scale):
        return False
    if not np.array_equal(a.indicated, b.indicated):
        return False
    if a.encoding is None or b.encoding is None:
        return a.encoding is b.encoding
    return all(np.array_equal(x, y) for x, y in zip(a.encoding.edges, b.encoding.edges))


class _Net:
    """One network of the stack: its run, query weights and loop state."""

    def __init__(self, run, counts):
        self.run, self.model, self.state = run, run.model, run.state
        self.options, self.resolved = run.options, run.options.resolved
        self.counts = counts  # multiplicity of each query (a bootstrap sample), or None
        self.first = np.ascontiguousarray(self.model.coefs[0].T)  # (width, n_inputs)
        self.active = True
        self.stopped = False
        self.error = None  # the ValueError of weights gone non-finite
        self.columns = None

    @property
    def width(self):
        return self.first.shape[0]

    @property
    def params(self):
        """What the optimizer updates: the first layer as its row block."""
        model = self.model
        return [self.first, *model.coefs[1:], *model.intercepts]

    def weights_of(self, data_weights, queries):
        """Weights of the given queries of the stack's training set: the
        user's query weights times this network's multiplicities."""
        weights = None if data_weights is None else data_weights[queries]
        if self.counts is None:
            return weights
        counts = self.counts[queries].astype(np.float64)
        return counts if weights is None else counts * weights


class _Stack:
    """The active networks' first layers, side by side."""

    def __init__(self, nets):
        self.nets = nets
        self.pack()

    def pack(self):
        """Lay the active networks' first layers out as one array (networks
        of one noise level next to each other); every network's parameters
        become views into it, and its optimizer follows them."""
        active = sorted((net for net in self.nets if net.active), key=lambda net: net.state.input_noise)
        self.active = active
        if not active:
            return
        self.first = np.concatenate([net.first for net in active])
        self.bias = np.concatenate([net.model.intercepts[0] for net in active])
        self.gradient = np.empty_like(self.first)
        start = 0
        for net in active:
            net.columns = slice(start, start + net.width)
            net.first = self.first[net.columns]
            net.model.coefs[0] = net.first.T
            net.model.intercepts[0] = self.bias[net.columns]
            if net.state.optimizer is not None:
                net.state.optimizer.params = net.params
            start += net.width
        # Runs of one noise level: (level, columns, networks).
        self.groups = []
        for net in active:
            level = net.state.input_noise
            if self.groups and self.groups[-1][0] == level:
                self.groups[-1][2].append(net)
            else:
                self.groups.append((level, None, [net]))
        self.groups = [
            (level, slice(nets[0].columns.start, nets[-1].columns.stop), nets) for level, _, nets in self.groups
        ]

    def leave(self, net):
        """Take ``net`` out of the stack: its parameters become its own."""
        net.active = False
        net.first = net.first.copy()
        net.model.coefs[0] = net.first.T
        net.model.intercepts[0] = net.model.intercepts[0].copy()
        if net.state.optimizer is not None:
            net.state.optimizer.params = net.params

    def inputs(self, rows, noise=None):
        """The rows each active network takes (``id(net)`` to array):
        ``rows`` themselves, or with the noise of the network's level added
        (networks of one level share one noisy copy)."""
        if noise is None:
            return {id(net): rows for net in self.active}
        dense = rows.toarray() if sp.issparse(rows) else rows
        inputs = {}
        for level, _, nets in self.groups:
            X = dense + np.multiply(noise, level) if level else rows
            inputs.update((id(net), X) for net in nets)
        return inputs

    def for_each(self, task, n_rows):
        """``task(net)`` for every active network, in order, on a block of
        ``n_rows`` rows; the results in the networks' order. The networks
        are shared out over ``block_threads`` when :meth:`shared`. Each
        network reads and writes only its own block, so the threads change
        no bit."""
        threads = self.active[0].state.block_threads if self.shared(n_rows) else 1
        return map_blocks(task, self.active, threads)

    def shared(self, n_rows):
        """Whether the networks of a block of ``n_rows`` rows go to several
        threads: more than one network, and first-layer products of at
        least ``SHARE_FROM_MULTIPLY_ADDS`` (below, a pool round trip costs
        about as much as it saves)."""
        return len(self.active) > 1 and n_rows * self.first.size >= SHARE_FROM_MULTIPLY_ADDS

    def forward(self, net, X, generator=None, training=False):
        """(scores, cache) of ``net`` on its input ``X`` (its first layer,
        ``coefs[0]``, is its block of ``first``, transposed)."""
        return _network.forward(
            X, net.model.coefs, net.model.intercepts, net.model.activation,
            dropout=net.state.dropout if training else 0.0, random_state=generator,
        )

    def backward(self, net, X, cache, upstream):
        """``net``'s gradients (its :attr:`_Net.params` order) for the
        upstream gradient ``upstream``; its first layer's go into
        ``self.gradient``."""
        coef_grads, intercept_grads = _network.backward(
            cache, upstream, net.model.coefs, net.model.activation, first_delta=True,
        )
        delta, G = coef_grads[0], self.gradient[net.columns]
        if sp.issparse(X):
            G[...] = np.asarray(safe_sparse_dot(X.T, delta)).T
        else:
            np.matmul(delta.T, X, out=G)
        _freeze_output_intercept(intercept_grads)
        return [G, *coef_grads[1:], *intercept_grads]

    def scores(self, data, model):
        """Scores of every row of ``data`` for every active network,
        gathered block by block."""
        n_inputs = self.first.shape[1]
        step = score_block_rows(n_inputs)
        parts = {id(net): [] for net in self.active}
        for start in range(0, len(data.rows), step):
            rows = data.features(model, slice(start, start + step))
            passes = self.for_each(lambda net: self.forward(net, rows), rows.shape[0])
            for net, (scores, _) in zip(self.active, passes):
                parts[id(net)].append(scores)
        return {key: as_kernel_array(np.concatenate(value)) for key, value in parts.items()}


def fit_together(runs, counts=None):
    """Train the planned stochastic fits ``runs`` (``_training.Run``, see
    :func:`can_stack`) together, each as ``_training.fit_stochastic`` would
    but with the shared draws of the module docstring. Updates every run's
    model, state and history in place; the optimizers and weight averages
    are not kept (their first-layer moments are laid out for the stack).

    Parameters
    ----------
    runs : list of Run
        New fits (not continued ones), planned on the same rows.
    counts : list of (ndarray of shape (n_queries,) or None), default=None
        Each network's multiplicity of every query of the training set (a
        bootstrap sample of whole queries: 0 leaves a query out), or None
        for every query once.

    Returns
    -------
    errors : list of (ValueError or None)
        For each run, the error its fit alone would have raised (weights
        gone non-finite: that network left the stack then), or None.
    """
    counts = [None] * len(runs) if counts is None else counts
    nets = [_Net(run, c) for run, c in zip(runs, counts)]
    data = nets[0].run.data
    data.densify()
    data.keep_inputs(nets[0].model)
    try:
        with single_threaded_blas() as blas_threads:
            threads = max(blas_threads, nets[0].state.n_threads)
            for net in nets:
                net.state.block_threads = threads
            return _train_together(nets, data)
    finally:
        data.drop_inputs()


def _train_together(nets, data):
    """:func:`fit_together` once the rows are ready."""
    lead = nets[0]
    options, resolved = lead.options, lead.resolved
    stream = lead.state.random_state
    factories = [net.run.data._make_objective for net in nets]  # each network's k, sigma, ...
    for net in nets:
        net.run.data = data
    make_objective = data._make_objective
    if resolved.early_stopping:
        kept, held_out = split_queries(data, options.validation_fraction, stream)
        train, val = data.subset(kept, make_objective), data.subset(held_out, make_objective)
    else:
        kept, train, val = np.arange(data.n_queries), data, None
    loss_queries = _loss_sample_queries(train, stream)
    loss = train.subset(loss_queries, make_objective)
    for net, factory in zip(nets, factories):
        net.objective = factory(train.y, train.offsets)
        net.loss_objective = factory(loss.y, loss.offsets)
        if net.counts is not None:
            net.counts = net.counts[kept]
        net.weights = net.weights_of(train.weights, np.arange(train.n_queries))
        net.loss_weights = net.weights_of(train.weights, loss_queries)
        net.mean_weight = 1.0 if net.weights is None else float(net.weights.mean())
        # The penalty's queries: those of positive weight, each drawn once
        # per time it was drawn (``l2_strength``).
        positive = np.ones(train.n_queries, bool) if train.weights is None else train.weights > 0
        n_queries = int(positive.sum()) if net.counts is None else int(net.counts[positive].sum())
        net.state.l2 = net.resolved.alpha / max(n_queries, 1)
        net.monitor = EpochMonitor(
            net.run.history, resolved.early_stopping, net.resolved.n_iter_no_change, net.options.tol,
            net.options.verbose,
        )
    stack = _Stack(nets)
    for net in nets:
        net.state.optimizer = _resumed_optimizer(None, net.params, net.resolved.learning_rate_init, net.options)
        net.averaging = _weight_average(net.state, net.params, net.resolved.ema_momentum)
    batch_size = min(resolved.batch_size, train.n_queries)
    steps_per_epoch = -(-train.n_queries // batch_size)
    max_iter = max(net.options.max_iter for net in nets)
    noise = _noise_table(stack, lead, train, batch_size, steps_per_epoch * max_iter, stream)
    n_threads = lead.state.n_threads
    for epoch in range(max_iter):
        started = time.perf_counter()
        order = stream.permutation(train.n_queries)
        for positions, queries, offsets in _epoch_batches(train, order, batch_size):
            _step(stack, lead.model, train, positions, queries, offsets, noise, stream, n_threads)
        for net in stack.active:
            try:
                _check_finite(net.model, net.options)
            except ValueError as error:  # this network fails; the others go on
                net.error = error
                stack.leave(net)
        if any(not net.active for net in stack.active):
            stack.pack()
        if not stack.active:
            break
        active = stack.active
        for net in active:
            if net.averaging is not None:
                net.averaging.hand_over(net.params)
        values = _loss_values(stack, lead.model, loss, n_threads)
        scores = _validation_scores(stack, lead.model, val, options.gain) if val is not None else {}
        for net in active:
            stopped = net.monitor.record(values[id(net)], scores.get(id(net)), net.params, started)
            if net.averaging is not None:
                net.averaging.resume(net.params)
            net.stopped = stopped
            if stopped or epoch + 1 >= net.options.max_iter:
                stack.leave(net)
        if any(not net.active for net in active):
            stack.pack()
        if not stack.active:
            break
    for net in nets:
        if net.error is None:
            best = net.monitor.finish(net.stopped, net.options.max_iter)
            if net.averaging is not None:
                net.averaging.hand_over(net.params)
            if best is not None:
                for param, value in zip(net.params, best):
                    param[...] = value
        net.model.coefs[0] = np.ascontiguousarray(net.first.T)
        net.state.optimizer = net.state.weight_average = net.state.noise = None
    return [net.error for net in nets]


def _step(stack, model, train, positions, queries, offsets, noise, stream, n_threads):
    """One optimizer step of every active network on a minibatch."""
    nets = stack.active
    randomized = any(net.state.randomized for net in nets)
    seeds = stream.randint(2**31, size=len(nets)) if randomized else [None] * len(nets)
    generators = {id(net): np.random.default_rng(seed) if randomized else None for net, seed in zip(nets, seeds)}
    rows = train.features(model, positions)
    block = None
    if noise is not None:
        if sp.issparse(rows):
            rows = rows.toarray()
        block = noise.block(rows.shape, generators[id(nets[0])])
    inputs = stack.inputs(rows, block)
    sizes = np.diff(offsets)
    # The kernels' own threads only when the networks do not share them out
    # (a kernel gives the same lambdas on any number).
    kernel_threads = 1 if stack.shared(len(positions)) else n_threads

    def step(net):
        X = inputs[id(net)]
        scores, cache = stack.forward(net, X, generators[id(net)], training=True)
        grad, _ = net.objective.gradient(
            as_kernel_array(scores), positions, queries, offsets, n_threads=kernel_threads,
        )
        if net.weights is None:
            grad /= len(queries)
        else:
            grad *= np.repeat(net.weights[queries] / (len(queries) * net.mean_weight), sizes)
        grads = stack.backward(net, X, cache, grad)
        n_weights = len(net.model.coefs)
        _network.add_l2(grads[:n_weights], net.params[:n_weights], net.state.l2)
        net.state.optimizer.update(grads)
        net.state.t += len(positions)
        if net.averaging is not None:
            net.averaging.update(net.params)

    stack.for_each(step, len(positions))


def _noise_table(stack, lead, train, batch_size, n_steps, stream):
    """One table of unit normal draws that every noisy network scales by
    its own level (None when no network has input noise)."""
    if not any(net.state.input_noise for net in stack.nets):
        return None
    largest_batch = int(np.sort(np.diff(train.offsets))[::-1][:batch_size].sum())
    rows = min(NOISE_TABLE_BLOCKS, n_steps) * largest_batch
    seed = stream.randint(2**31)
    return NoiseTable(1.0, rows * stack.first.shape[1], stack.first.dtype, seed)


def _loss_values(stack, model, loss, n_threads):
    """Each active network's objective on the loss sample (its mean per
    query under its weights, plus its penalty)."""
    scores = stack.scores(loss, model)
    positions, queries = np.arange(len(loss.rows)), np.arange(loss.n_queries)
    values = {}
    for net in stack.active:
        _, cost = net.loss_objective.gradient(
            scores[id(net)], positions, queries, loss.offsets, with_cost=True, n_threads=n_threads,
        )
        weights = net.loss_weights
        mean = float(cost.sum()) / max(loss.n_queries, 1) if weights is None else (
            float(cost @ weights) / float(weights.sum()))
        values[id(net)] = mean + _network.l2_penalty(net.model.coefs, net.state.l2)
    return values


def _validation_scores(stack, model, val, gain):
    """Each active network's NDCG@10 on the shared validation queries."""
    scores = stack.scores(val, model)
    values = {}
    for net in stack.active:
        ndcg, empty = _grouped_ndcg_values(val.query_groups, val.y, scores[id(net)], SCORE_K, gain, False)
        values[id(net)] = _mean_over_queries(val.query_groups, ndcg, empty, 1.0, val.row_weights())
    return values
