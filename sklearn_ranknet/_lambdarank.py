"""LambdaRank: RankNet's pair gradients weighted by the metric change."""

from functools import partial
from numbers import Integral

from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseRanker
from ._docstrings import with_shared_entries
from ._objectives import LambdaRankObjective
from ._resolve import LAMBDARANK


@with_shared_entries
class LambdaRankRanker(BaseRanker):
    """LambdaRank learning-to-rank model.

    Each pair of documents of a query with different labels pushes the two
    scores apart, as in RankNet, weighted by how much NDCG@k (or AP@k) would
    change if the two swapped places in the current ranking: the effort goes
    where the metric is decided, at the top of each list (Burges et al.,
    2006; Burges, 2010). The scoring function is linear or a multilayer
    perceptron, with the parameters of ``MLPRegressor``; raw features need
    no scaler.

    Read more in the :ref:`User Guide <lambdas>`; :ref:`choosing` explains
    the defaults and when to change them.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, int or "auto", default="auto"
        Sizes of the hidden layers; ``()`` means a linear scoring function.
        "auto" follows the size of the data (see :ref:`auto-values`); the
        value used is ``hidden_layer_sizes_``. A continued fit keeps the
        fitted network (see :ref:`continuing`).
    activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers.
    solver : {"adam", "sgd"}, default="adam"
        The optimizer of the minibatch steps. LambdaRank's gradients belong
        to no fixed objective, so L-BFGS is not offered.
    alpha : float or "auto", default="auto"
        Strength of the L2 penalty on the weights (not the intercepts),
        weighed against the *sum* of the training queries' costs as in
        ``Ridge``, so its pull fades as the data grows. "auto" follows the
        size of the data and the share of its values that are missing (see
        :ref:`auto-values`); the value used is ``alpha_``.
    batch_size : int or "auto", default="auto"
        Number of whole *queries* per minibatch (all of them when fewer).
        "auto" is 16, or 32 on small data scaled within each query (see
        :ref:`auto-values`); the value used is ``batch_size_``.
    learning_rate_init : float or "auto", default="auto"
        Step size of Adam or SGD. "auto" takes a larger step on small data
        (below 10,000 rows or 300 queries; see :ref:`auto-values`); the
        value used is ``learning_rate_init_``.
    max_iter : int, default=300
        Maximum number of epochs (passes over all training queries).
    tol : float, default=3e-3
        Without early stopping, training stops when the training objective
        has improved by less than ``tol`` for ``n_iter_no_change`` epochs.
        With early stopping, when the validation NDCG@10 has not risen for
        that many. See :ref:`stopping`.
    n_iter_no_change : int or "auto", default="auto"
        Number of epochs without improvement (see ``tol``) before training
        stops. "auto" follows the size of the data (see
        :ref:`auto-values`); the value used is ``n_iter_no_change_``.
    early_stopping : bool or "auto", default="auto"
        Hold out ``validation_fraction`` of the *queries*, stop when their
        NDCG@10 stops rising and keep the best weights. "auto" turns it on
        from 10,000 training rows and 300 queries (see :ref:`auto-values`);
        the value used is ``early_stopping_``. Never in ``partial_fit``.
    validation_fraction : float, default=0.1
        Fraction of the queries of positive weight held out for early
        stopping.
    momentum : float, default=0.9
        Nesterov momentum of the "sgd" solver.
    random_state : int, RandomState instance or None, default=None
        Seeds every random draw of a fit: the initial weights, the minibatch
        order, the validation split, dropout and input noise. Pass an int
        for reproducible results.
    warm_start : bool, default=False
        Continue from the previous solution on the next ``fit``. See
        :ref:`continuing`.
    verbose : bool, default=False
        Print the epoch, loss, validation score and time.
    sigma : float, default=1.0
        Steepness of the pair sigmoid.
    n_jobs : int, default=None
        Threads of one fit, for the lambda kernels and the network's row
        blocks. ``None`` means 1 (the matrix products keep BLAS's own
        threads); ``-1`` means every core. See :ref:`performance`.
    feature_scaling : {"piecewise", "standard", "log1p"} or None, default="piecewise"
        Input scaling fitted on the training rows. "piecewise" encodes each
        feature into one input per quantile bin (``bin_edges_``), then
        standardizes; "standard" standardizes; "log1p" maps x to
        sign(x) * log1p(|x|), then standardizes; None uses X as given. See
        :ref:`feature-scaling`. The scaling learns from missing values (NaN
        in X): see :ref:`missing-values`. None refuses them.
    dropout : float in [0, 1), default=0.0
        Probability of dropping each hidden unit during training (inverted
        dropout: ``predict`` uses every unit). No effect on a linear model.
    input_noise : "auto" or float >= 0, default="auto"
        Standard deviation of Gaussian noise added to the standardized
        inputs during training. "auto" adds noise on small data whose
        features are redundant, and none otherwise (see :ref:`auto-values`);
        the value used is ``input_noise_``.
    ema_momentum : "auto" or float in [0, 1), default="auto"
        Momentum of an exponential moving average of the weights over the
        optimizer's steps (Polyak averaging): the fitted model is the
        average, and 0 keeps the last step's weights. "auto" averages when
        no validation set is held out (see :ref:`auto-values`); the value
        used is ``ema_momentum_``.
    [shared: data columns]
    metric : {"ndcg", "map"}, default="ndcg"
        Weight pairs by the change of NDCG@k or of AP@k (relevant means
        label > 0).
    k : int or None, default=None
        Truncation: only pairs with a document in the current top k, and
        NDCG@k / AP@k in the weights, so a query of n documents costs
        O(n * k) instead of O(n**2). ``None`` uses every pair.
    gain : {"exponential", "linear"}, default="exponential"
        NDCG gain ``2**label - 1`` or ``label``: in the pair weights, early
        stopping and ``score``.
    pair_weighting : {"lambdarank", "ndcg_loss2", "ndcg_loss2++"}, default="lambdarank"
        What multiplies each pair's RankNet gradient: LambdaRank's |delta
        NDCG@k| (or |delta AP@k|), or the NDCG-Loss2 or NDCG-Loss2++ weights
        of LambdaLoss (Wang et al., CIKM 2018), which need
        ``metric="ndcg"``. See :ref:`lambdas`.
    normalize_lambdas : bool or "auto", default="auto"
        Scale each query's lambdas at every step by ``log2(1 + G) / G``,
        where G is their summed magnitude, as LightGBM's
        ``lambdarank_norm`` does. "auto" turns it on for small data (see
        :ref:`auto-values`); the value used is ``normalize_lambdas_``.

    Attributes
    ----------
    coefs_ : list of ndarray
        Weight matrices; ``coefs_[i]`` has shape (fan_in, fan_out).
    intercepts_ : list of ndarray
        Bias vectors; ``intercepts_[i]`` has shape (fan_out,).
    loss_curve_ : list of float
        Training objective (metric-weighted pair cross-entropy plus the L2
        term) after each epoch, on a fixed sample of the training queries.
        Only a guide: the weights change with the ranking.
    loss_ : float
        The last entry of ``loss_curve_``.
    validation_scores_ : list of float or None
        Validation NDCG@10 after each epoch, with early stopping.
    best_validation_score_ : float or None
        Best validation NDCG@10, with early stopping.
    n_iter_ : int
        Number of epochs run by the last ``fit``; each ``partial_fit`` adds
        one.
    t_ : int
        Number of training rows the minibatches have held, summed over
        epochs; a ``warm_start`` fit and each ``partial_fit`` add to it.
    best_loss_ : float
        Lowest training objective of an epoch since the last ``fit`` began,
        the stopping rule's reference; ``inf`` with early stopping.
    hidden_layer_sizes_ : tuple of int
        The ``hidden_layer_sizes`` used, with "auto" resolved.
    alpha_ : float
        The ``alpha`` used, with "auto" resolved.
    batch_size_ : int
        The ``batch_size`` used, with "auto" resolved.
    learning_rate_init_ : float
        The ``learning_rate_init`` used, with "auto" resolved.
    n_iter_no_change_ : int
        The ``n_iter_no_change`` used, with "auto" resolved.
    early_stopping_ : bool
        The ``early_stopping`` used, with "auto" resolved: whether the fit
        held out queries.
    input_noise_ : float
        The ``input_noise`` used, with "auto" resolved.
    ema_momentum_ : float
        The ``ema_momentum`` used, with "auto" resolved.
    precision_ : str
        The ``precision`` used, with "auto" resolved.
    normalize_lambdas_ : bool
        The ``normalize_lambdas`` used, with "auto" resolved.
    [shared: fitted inputs]

    See Also
    --------
    RankNetRanker : Pairwise cross-entropy, every misordered pair alike.
    ListNetRanker : Listwise softmax cross-entropy, linear in query length.
    BaggingRanker : The average of several fits of a ranker.

    Notes
    -----
    A Numba kernel turns the pairs of each query into one lambda per
    document, so the network's backward pass runs once per document, not
    once per pair. A default fit stops by itself (on the training objective
    on small data, on held-out queries from 10,000 rows and 300 queries)
    and warns only when ``max_iter`` cuts it short.

    Examples
    --------
    >>> from sklearn_ranknet import LambdaRankRanker
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> ranker = LambdaRankRanker(k=10, random_state=0).fit(X, y, groups=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    >>> bool(0.0 <= ranker.score(X, y, groups=qid) <= 1.0)
    True
    """

    _parameter_constraints = {
        **BaseRanker._parameter_constraints,
        "hidden_layer_sizes": [*BaseRanker._parameter_constraints["hidden_layer_sizes"], StrOptions({"auto"})],
        "alpha": [*BaseRanker._parameter_constraints["alpha"], StrOptions({"auto"})],
        "learning_rate_init": [*BaseRanker._parameter_constraints["learning_rate_init"], StrOptions({"auto"})],
        "solver": [StrOptions({"adam", "sgd"})],
        "metric": [StrOptions({"ndcg", "map"})],
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "gain": [StrOptions({"exponential", "linear"})],
        "pair_weighting": [StrOptions({"lambdarank", "ndcg_loss2", "ndcg_loss2++"})],
        "normalize_lambdas": ["boolean", StrOptions({"auto"})],
    }

    _AUTO = LAMBDARANK

    def __init__(
        self,
        hidden_layer_sizes="auto",
        *,
        activation="relu",
        solver="adam",
        alpha="auto",
        batch_size="auto",
        learning_rate_init="auto",
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=1.0,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        precision="auto",
        query_column=None,
        position_column=None,
        metric="ndcg",
        k=None,
        gain="exponential",
        pair_weighting="lambdarank",
        normalize_lambdas="auto",
    ):
        super().__init__(
            hidden_layer_sizes=hidden_layer_sizes,
            activation=activation,
            solver=solver,
            alpha=alpha,
            batch_size=batch_size,
            learning_rate_init=learning_rate_init,
            max_iter=max_iter,
            tol=tol,
            n_iter_no_change=n_iter_no_change,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            momentum=momentum,
            random_state=random_state,
            warm_start=warm_start,
            verbose=verbose,
            sigma=sigma,
            n_jobs=n_jobs,
            feature_scaling=feature_scaling,
            dropout=dropout,
            input_noise=input_noise,
            ema_momentum=ema_momentum,
            precision=precision,
            query_column=query_column,
            position_column=position_column,
        )
        self.metric = metric
        self.k = k
        self.gain = gain
        self.pair_weighting = pair_weighting
        self.normalize_lambdas = normalize_lambdas

    def _uses_exponential_gain(self):
        return self.gain == "exponential"

    def _objective_factory(self, resolved, linear_gain=False):
        return partial(
            LambdaRankObjective, sigma=self.sigma, metric=self.metric, k=self.k,
            gain="linear" if linear_gain else self.gain,
            pair_weighting=self.pair_weighting, normalize=resolved is not None and resolved.normalize_lambdas,
        )
