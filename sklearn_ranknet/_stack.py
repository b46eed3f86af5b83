"""Networks trained together: several fits over the same rows in one pass.

BaggingRanker's members differ only by their seeds, and a search's settings
only by their hyperparameters: trained one after the other, each fit gathers
and encodes the same rows and multiplies them by its own first layer, the
product that dominates a step (the piecewise encoding turns a few hundred
features into several hundred inputs). :func:`fit_together` trains them side
by side instead. Every minibatch is gathered and encoded once, and meets the
first layers of all networks in one matrix product forward and one backward:
the first layers sit as row blocks of one array, ``first`` of shape (sum of
widths, n_inputs), each network's ``coefs[0]`` a view of its block. BLAS
runs on one thread, as in every fit; a large stack's products go in column
blocks fixed by the widths (:func:`_column_blocks`) to the threads BLAS had
(``block_threads``), which changes no bit.

What comes after that product (the deeper layers, the output, the lambdas,
the optimizer, the weight average, the stopping rule) runs network by
network with the single network's code (``_network.forward(first_product=)``,
``_network.backward(first_delta=True)``, ``EpochMonitor``). So each network
has its own width, activation, step size, penalty, dropout, noise level,
objective (``k``, ``sigma``, ...), query weights and stopping: a network
that stops leaves the stack (its block is copied out) while the others go
on.

What the networks share: the rows and their order (one training set, one
input scaling), the minibatch order and size, the validation split, the
loss sample, and the noise draws (each network scales them by its own
level; networks of one level share the noisy rows and their product). The
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

# The stacked products go to the threads from this much work (rows times
# first-layer weights, all networks), and in column blocks of at most
# MAX_COLUMN_BLOCKS, each at least MIN_COLUMN_BLOCK wide (narrower products
# run below BLAS's rate); docs/benchmarks.md, "Model selection".
SHARE_FROM_MULTIPLY_ADDS = 2**24
MAX_COLUMN_BLOCKS = 4
MIN_COLUMN_BLOCK = 256


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

    def threads(self, n_rows):
        """Threads for the stacked products of a block of ``n_rows`` rows:
        ``block_threads`` from ``SHARE_FROM_MULTIPLY_ADDS`` multiply-adds
        (below, a round trip to the pool costs about what it saves), else 1."""
        if n_rows * self.first.size < SHARE_FROM_MULTIPLY_ADDS:
            return 1
        return self.active[0].state.block_threads

    def _first_product(self, X, columns, threads):
        """``X @ first[columns].T``, in the column blocks of
        :func:`_column_blocks` on ``threads``."""
        Z = np.empty((X.shape[0], columns.stop - columns.start), np.result_type(X.dtype, self.first.dtype))

        def block(part):
            out = Z[:, part.start - columns.start:part.stop - columns.start]
            if sp.issparse(X):
                out[...] = np.asarray(safe_sparse_dot(X, self.first[part].T))
            else:
                np.matmul(X, self.first[part].T, out=out)

        map_blocks(block, _column_blocks(columns), threads)
        return Z

    def _first_gradient(self, X, delta, columns, G, threads):
        """``G[columns] = delta.T @ X``, in the column blocks of
        :func:`_column_blocks` on ``threads``."""
        def block(part):
            own = delta[:, part.start - columns.start:part.stop - columns.start]
            if sp.issparse(X):
                G[part] = np.asarray(safe_sparse_dot(X.T, own)).T
            else:
                np.matmul(own.T, X, out=G[part])

        map_blocks(block, _column_blocks(columns), threads)

    def forward(self, rows, noise=None, generators=None, training=False):
        """(scores, cache) of every active network on ``rows`` (as the
        networks take them), and the input of each noise group."""
        passes, inputs = {}, []
        threads = self.threads(rows.shape[0])
        # Without noise every network takes the same rows: one product.
        noisy = training and noise is not None
        groups = self.groups if noisy else [(0.0, slice(0, self.first.shape[0]), self.active)]
        for group in groups:
            level, columns, nets = group
            X = rows
            if noisy and level:
                X = (rows.toarray() if sp.issparse(rows) else rows) + np.multiply(noise, level)
            inputs.append((group, X))
            Z = self._first_product(X, columns, threads)
            for net in nets:
                own = slice(net.columns.start - columns.start, net.columns.stop - columns.start)
                product = Z if len(nets) == 1 else np.ascontiguousarray(Z[:, own])
                generator = None if generators is None else generators[id(net)]
                passes[id(net)] = _network.forward(
                    None, net.model.coefs, net.model.intercepts, net.model.activation,
                    dropout=net.state.dropout if training else 0.0, random_state=generator,
                    first_product=product,
                )
        return passes, inputs

    def backward(self, passes, inputs, upstream):
        """Every active network's gradients (its :attr:`_Net.params`
        order) for the upstream gradients ``upstream[id(net)]``."""
        grads = {}
        G = np.empty_like(self.first)
        threads = self.threads(inputs[0][1].shape[0]) if inputs else 1
        for (_, columns, nets), X in inputs:
            n_rows = X.shape[0]
            delta = np.empty((n_rows, columns.stop - columns.start), dtype=self.first.dtype)
            for net in nets:
                cache = passes[id(net)][1]
                coef_grads, intercept_grads = _network.backward(
                    cache, upstream[id(net)], net.model.coefs, net.model.activation, first_delta=True,
                )
                delta[:, net.columns.start - columns.start:net.columns.stop - columns.start] = coef_grads[0]
                grads[id(net)] = (coef_grads, intercept_grads)
            self._first_gradient(X, delta, columns, G, threads)
        out = {}
        for net in self.active:
            coef_grads, intercept_grads = grads[id(net)]
            _freeze_output_intercept(intercept_grads)
            out[id(net)] = [G[net.columns], *coef_grads[1:], *intercept_grads]
        return out

    def scores(self, data, model):
        """Scores of every row of ``data`` for every active network,
        gathered block by block."""
        n_inputs = self.first.shape[1]
        step = score_block_rows(n_inputs)
        parts = {id(net): [] for net in self.active}
        for start in range(0, len(data.rows), step):
            rows = data.features(model, slice(start, start + step))
            passes, _ = self.forward(rows)
            for net in self.active:
                parts[id(net)].append(passes[id(net)][0])
        return {key: as_kernel_array(np.concatenate(value)) for key, value in parts.items()}


def _column_blocks(columns):
    """``columns`` (a range of ``first``'s rows) in equal blocks for the
    threads: a power of two of them, at most ``MAX_COLUMN_BLOCKS``, each at
    least ``MIN_COLUMN_BLOCK`` wide. Fixed by the widths alone, so that no
    number of threads changes how a product is split, nor its rounding."""
    width = columns.stop - columns.start
    n_blocks = 1
    while n_blocks * 2 <= MAX_COLUMN_BLOCKS and width // (n_blocks * 2) >= MIN_COLUMN_BLOCK:
        n_blocks *= 2
    cuts = np.linspace(columns.start, columns.stop, n_blocks + 1).astype(np.int64)
    return [slice(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def fit_together(runs, counts=None):
    """Train the planned stochastic fits ``runs`` (``_training.Run``, see
    :func:`can_stack`) together, each as ``_training.fit_stochastic`` would
    but with the shared draws of the module docstring, BLAS held to one
    thread and the stacked products shared out over the threads it had
    (:meth:`_Stack.threads`). Updates every run's
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
    passes, inputs = stack.forward(rows, block, generators, training=True)
    sizes = np.diff(offsets)
    upstream = {}
    for net in nets:
        scores = passes[id(net)][0]
        grad, _ = net.objective.gradient(as_kernel_array(scores), positions, queries, offsets, n_threads=n_threads)
        if net.weights is None:
            grad /= len(queries)
        else:
            grad *= np.repeat(net.weights[queries] / (len(queries) * net.mean_weight), sizes)
        upstream[id(net)] = grad
    grads = stack.backward(passes, inputs, upstream)
    for net in nets:
        net_grads = grads[id(net)]
        n_weights = len(net.model.coefs)
        _network.add_l2(net_grads[:n_weights], net.params[:n_weights], net.state.l2)
        net.state.optimizer.update(net_grads)
        net.state.t += len(positions)
        if net.averaging is not None:
            net.averaging.update(net.params)


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
