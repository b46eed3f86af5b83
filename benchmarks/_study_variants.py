"""The defaults study's study-only configuration keys: changes to the package
that are not parameters, each made for the length of one fit (and its
``predict``) by patching the package, and undone after it.

``study_variants(params)`` takes a configuration's keys out of ``params`` and
returns the context that applies them. The keys, by family (each look of
``benchmarks/results/tune_defaults.md`` says why it was tried and what it
measured; ``tune_defaults``' docstring lists them with their looks):

- encoding (``ENCODING_VARIANTS``): the piecewise encoding's bins;
- objective (``OBJECTIVE_VARIANTS``): LambdaRank's pair weights and lambdas;
- optimizer (``OPTIMIZER_VARIANTS``): weight decay outside Adam;
- noise (``NOISE_VARIANTS``): where the input noise is drawn, whole features
  dropped, and ``predict`` averaged over the noise.
"""

import contextlib
from unittest import mock

import numpy as np

#: Study-only configuration keys that change the piecewise encoding.
ENCODING_VARIANTS = ("piecewise_bins", "piecewise_extreme_steps", "piecewise_jitter")


@contextlib.contextmanager
def _encoding_variant(piecewise_bins=None, piecewise_extreme_steps=None, piecewise_jitter=None):
    """Every piecewise encoding fitted inside uses ``piecewise_bins`` bins
    (None: the rankers' size-aware default) and, with
    ``piecewise_extreme_steps=s``, two more edges per feature, a fraction
    ``s`` of the outer bins' widths inside the lowest and the highest edge:
    inputs that step from 0 to 1 as a value leaves the training minimum or
    reaches the maximum (twenty-fourth look). With ``piecewise_jitter=seed``
    the inner edges of each encoding fitted sit at the quantiles
    ``(t + u) / n_bins`` instead of ``t / n_bins``, ``u`` uniform in (0, 1)
    and drawn anew for every encoding (a stream seeded by ``seed``): the
    members of a bag then bend at different places, one more bin each
    (twenty-fifth look)."""
    from sklearn_ranknet import _inputs

    bins, distinct, column_quantiles = _inputs.piecewise_bins, _inputs._distinct_edges, _inputs._column_quantiles
    distinct_of_all = _inputs._distinct_edges_of_all
    jitter = np.random.RandomState(piecewise_jitter)

    def jittered(X, sample, levels):
        n_bins = len(levels) - 1
        inner = (np.arange(n_bins) + jitter.uniform()) / n_bins
        return column_quantiles(X, sample, np.concatenate([[0.0], inner, [1.0]]))

    def with_steps(quantiles):
        edges = distinct(quantiles)
        if len(edges) < 2:
            return edges
        low = edges[0] + piecewise_extreme_steps * (edges[1] - edges[0])
        high = edges[-1] - piecewise_extreme_steps * (edges[-1] - edges[-2])
        return distinct(np.concatenate([edges, np.array([low, high], dtype=edges.dtype)]))

    if piecewise_bins is not None:
        _inputs.piecewise_bins = lambda n_rows: piecewise_bins
    if piecewise_extreme_steps is not None:
        _inputs._distinct_edges_of_all = lambda quantiles: [with_steps(q) for q in quantiles]
    if piecewise_jitter is not None:
        _inputs._column_quantiles = jittered
    try:
        yield
    finally:
        _inputs.piecewise_bins, _inputs._distinct_edges, _inputs._column_quantiles = bins, distinct, column_quantiles
        _inputs._distinct_edges_of_all = distinct_of_all


#: Study-only configuration keys that change LambdaRank's objective.
OBJECTIVE_VARIANTS = ("query_weight_power", "pair_weight_floor", "listnet_mix")


@contextlib.contextmanager
def _objective_variant(query_weight_power=None, pair_weight_floor=None, listnet_mix=None):
    """LambdaRank objectives built inside weigh queries or pairs as the
    seventeenth look tried, or add ListNet's gradient as the twenty-third
    did (see the module docstring); no key: unchanged."""
    from sklearn_ranknet import _lambdas, _objectives
    from sklearn_ranknet._groups import query_of_row

    build = _objectives.LambdaRankObjective.__init__
    lambdas = _objectives.LambdaRankObjective.gradient

    def variant(objective, labels, offsets, **kwargs):
        build(objective, labels, offsets, **kwargs)
        if query_weight_power is not None:
            if objective.use_ap:
                raise ValueError("query_weight_power: NDCG objectives only")
            # In the ideal order gains and discounts both descend, so the
            # summed |dG| |dd| over a query's pairs is n sum(u d) - sum(u) sum(d).
            sizes = np.diff(offsets)
            query = query_of_row(offsets)
            rank = np.arange(len(labels)) - np.repeat(offsets[:-1], sizes)
            u, d = objective.utility, objective.discounts[rank]
            total = lambda values: np.bincount(query, weights=values, minlength=len(sizes))
            weight = (sizes * total(u * d) - total(u) * total(d)) * objective.norms
            # A query of one label sums to rounding noise, not to 0: it keeps its weight.
            positive = weight > 1e-12
            factor = np.ones_like(weight)
            factor[positive] = (weight[positive].mean() / weight[positive]) ** query_weight_power
            objective.norms = objective.norms * factor
        if pair_weight_floor is not None:
            objective.weighting = _lambdas.NDCG_LOSS2_PP
            objective.by_distance = np.full_like(objective.by_distance, pair_weight_floor)
            objective.by_distance[0] = 0.0
        if listnet_mix is not None:
            objective.listwise = _objectives.ListNetObjective(
                labels, offsets, sigma=kwargs["sigma"], gain=kwargs["gain"])

    def mixed(objective, scores, rows, queries, offsets, *, with_cost=False, n_threads=1):
        # The costs stay LambdaRank's, so the stopping rule reads what it did.
        grad, cost = lambdas(objective, scores, rows, queries, offsets, with_cost=with_cost, n_threads=n_threads)
        listwise, _ = objective.listwise.gradient(scores, rows, queries, offsets, n_threads=n_threads)
        return grad + listnet_mix * listwise, cost

    if query_weight_power is not None or pair_weight_floor is not None or listnet_mix is not None:
        _objectives.LambdaRankObjective.__init__ = variant
    if listnet_mix is not None:
        _objectives.LambdaRankObjective.gradient = mixed
    try:
        yield
    finally:
        _objectives.LambdaRankObjective.__init__ = build
        _objectives.LambdaRankObjective.gradient = lambdas


#: Study-only configuration keys that change the optimizer.
OPTIMIZER_VARIANTS = ("decoupled_decay",)


@contextlib.contextmanager
def _optimizer_variant(decoupled_decay=None):
    """With ``decoupled_decay=w``, every Adam step also shrinks the network's
    weights (not its intercepts) by the factor ``1 - learning_rate * w``:
    weight decay outside Adam's scaling (Loshchilov and Hutter, ICLR 2019,
    "Decoupled Weight Decay Regularization"), where ``alpha``'s L2 term goes
    through it and is scaled per coordinate with the gradient (twenty-fifth
    look; give ``"alpha": 0`` to compare the two alone). No key: unchanged."""
    from sklearn_ranknet import _optim

    apply = _optim.Adam._apply

    def decayed(optimizer, grads):
        apply(optimizer, grads)
        shrink = 1.0 - optimizer.learning_rate * decoupled_decay
        for coefs in optimizer.params[: len(optimizer.params) // 2]:  # params: coefs + intercepts
            coefs *= shrink

    if decoupled_decay is None:
        yield
        return
    with mock.patch.object(_optim.Adam, "_apply", decayed):
        yield


#: Study-only configuration keys that change where the input noise is drawn.
NOISE_VARIANTS = ("raw_input_noise", "feature_dropout", "predict_noise_draws", "predict_expected_noise")


@contextlib.contextmanager
def _noise_variant(raw_input_noise=None, feature_dropout=None, predict_noise_draws=None,
                   predict_expected_noise=None):
    with _raw_noise_variant(raw_input_noise), _feature_dropout_variant(feature_dropout), \
            _predict_noise_variant(predict_noise_draws), _expected_noise_variant(predict_expected_noise):
        yield


@contextlib.contextmanager
def _expected_noise_variant(predict_expected_noise=None):
    """With ``predict_expected_noise=True``, ``predict`` gives each row the
    exact expectation of a one-hidden-layer ReLU network's score over the
    training's input noise: a hidden unit's input is then Gaussian, of mean
    its noise-free pre-activation m and standard deviation s =
    ``input_noise_`` times the norm of its weights, and E[relu] = m Phi(m/s)
    + s phi(m/s) (``predict_noise_draws`` with infinitely many draws, in
    one pass; twenty-sixth look). No key: unchanged."""
    from scipy.special import ndtr

    if not predict_expected_noise:
        yield
        return

    def expected(ranker, rows):
        (W, v), (b, c) = ranker.coefs_, ranker.intercepts_  # one hidden layer, ReLU
        mean = rows @ W + b
        spread = ranker.input_noise_ * np.sqrt((W.astype(float) ** 2).sum(axis=0))
        t = mean / spread
        hidden = mean * ndtr(t) + spread * np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi)
        return hidden @ v[:, 0] + c[0]

    with _predict_from_rows(expected):
        yield


@contextlib.contextmanager
def _predict_from_rows(score):
    """``predict`` as ``score(ranker, rows)`` of the rows as the network
    takes them (encoded and standardized), for a ranker trained with input
    noise; unchanged for one trained without."""
    from sklearn_ranknet import _base

    plain = _base.BaseRanker._predict_features

    def patched(ranker, X):
        if not ranker.input_noise_:
            return plain(ranker, X)
        return score(ranker, ranker._network_rows(np.asarray(X, dtype=ranker.coefs_[0].dtype), slice(None)))

    with mock.patch.object(_base.BaseRanker, "_predict_features", patched):
        yield


@contextlib.contextmanager
def _predict_noise_variant(predict_noise_draws=None):
    """With ``predict_noise_draws=K``, ``predict`` scores each row as the
    mean over ``K`` draws of the training's input noise (``input_noise_``
    standardized units on each encoded input; the draws seeded, so
    ``predict`` stays deterministic): the expectation the noisy training
    ranked by, instead of the network at the noise-free inputs, which in
    many dimensions lie far inside the shell the noisy inputs fill
    (twenty-sixth look). Dense inputs and a piecewise or standard scaling
    only. No key: unchanged."""
    from sklearn_ranknet import _network

    if predict_noise_draws is None:
        yield
        return

    def averaged(ranker, rows):
        generator = np.random.default_rng(0)
        total = np.zeros(rows.shape[0])
        for _ in range(predict_noise_draws):
            noisy = rows + ranker.input_noise_ * generator.standard_normal(rows.shape)
            total += _network.predict_scores(noisy, ranker.coefs_, ranker.intercepts_, ranker.activation)
        return total / predict_noise_draws

    with _predict_from_rows(averaged):
        yield


@contextlib.contextmanager
def _feature_dropout_variant(feature_dropout=None):
    """With ``feature_dropout=p``, each training row loses each feature with
    probability ``p`` after its input noise: all of the feature's encoded
    inputs set to 0 (their training mean, as the inputs are standardized)
    and the kept ones scaled by ``1 / (1 - p)``, as dropout does. A whole
    feature, not one input: the network must rank from the features that
    measure the same thing (twenty-sixth look). Dense inputs with the
    piecewise encoding only; the ranker's ``input_noise`` must be nonzero
    (the noise hook is where the mask is drawn). No key: unchanged."""
    from sklearn_ranknet import _training

    if feature_dropout is None:
        yield
        return
    with_noise = _training._with_input_noise

    def with_noise_and_dropout(ranker, rows, noise, generator):
        rows = with_noise(ranker, rows, noise, generator)
        source = ranker._input_scaling.encoding.source
        kept = generator.random((rows.shape[0], source.max() + 1)) >= feature_dropout
        rows *= kept[:, source] / (1.0 - feature_dropout)
        return rows

    with mock.patch.object(_training, "_with_input_noise", with_noise_and_dropout):
        yield


@contextlib.contextmanager
def _raw_noise_variant(raw_input_noise=None):
    """With ``raw_input_noise=s``, each training step draws its noise on the
    features *before* the encoding: every raw value plus Gaussian noise of
    ``s`` times its feature's standard deviation over the training rows,
    then encoded, in place of noise on each encoded input (a smoothing of
    each feature's learnt curve rather than a ridge in the encoded inputs;
    twenty-fifth look). The ranker's ``input_noise`` must be nonzero for
    any noise to be drawn; its value is then unused. For ``n_jobs=1`` only:
    a block's raw rows reach the noise through the ranker. No key:
    unchanged."""
    from sklearn_ranknet import _training

    if raw_input_noise is None:
        yield
        return
    features = _training.TrainingSet.features

    def keeping_raw_rows(data, ranker, positions):
        if not hasattr(ranker, "_raw_spread"):
            ranker._raw_spread = np.asarray(data.X, dtype=float).std(axis=0)
        ranker._raw_rows = np.asarray(data.X[data.rows[positions]], dtype=float)
        return features(data, ranker, positions)

    def noise_before_encoding(ranker, rows, noise, generator):
        raw = ranker._raw_rows
        noised = raw + generator.standard_normal(raw.shape) * (raw_input_noise * ranker._raw_spread)
        return ranker._network_rows(noised, slice(None))

    with mock.patch.object(_training.TrainingSet, "features", keeping_raw_rows), \
            mock.patch.object(_training, "_with_input_noise", noise_before_encoding):
        yield


def study_variants(params):
    """``params`` without the study-only keys (``ENCODING_VARIANTS``,
    ``OBJECTIVE_VARIANTS``, ``OPTIMIZER_VARIANTS``, ``NOISE_VARIANTS``), and
    one context in which the package runs as those keys ask."""
    params = dict(params)
    families = {_encoding_variant: ENCODING_VARIANTS, _objective_variant: OBJECTIVE_VARIANTS,
                _optimizer_variant: OPTIMIZER_VARIANTS, _noise_variant: NOISE_VARIANTS}
    taken = {variant: {key: params.pop(key) for key in keys if key in params} for variant, keys in families.items()}

    @contextlib.contextmanager
    def variants():
        with contextlib.ExitStack() as stack:
            for variant, keys in taken.items():
                stack.enter_context(variant(**keys))
            yield

    return params, variants()
