"""RankNet: pairwise cross-entropy on sigmoid score differences."""

from functools import partial

from sklearn.utils._param_validation import StrOptions

from ._base import BaseRanker
from ._docstrings import with_shared_entries
from ._objectives import RankNetObjective


@with_shared_entries
class RankNetRanker(BaseRanker):
    """RankNet learning-to-rank model.

    For every pair of documents of a query with different labels, the model
    predicts P(i above j) = 1 / (1 + exp(-sigma * (s_i - s_j))) and
    minimizes the cross-entropy against the label order (Burges et al.,
    2005). Every misordered pair costs the same, wherever it is ranked, and
    the cost is a true objective, so L-BFGS can minimize it. The scoring
    function is linear or a multilayer perceptron, with the parameters of
    ``MLPRegressor``; raw features need no scaler.

    Read more in the :ref:`User Guide <lambdas>`; :ref:`choosing` explains
    the defaults and when to change them.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int or int, default=(64,)
        Sizes of the hidden layers; ``()`` means a linear scoring function.
    activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers.
    solver : {"adam", "sgd", "lbfgs"}, default="adam"
        The optimizer. "lbfgs" minimizes the whole objective with scipy's
        L-BFGS-B: no learning rate to tune, for small data.
    alpha : float, default=1.5
        Strength of the L2 penalty on the weights (not the intercepts),
        weighed against the *sum* of the training queries' costs as in
        ``Ridge``, so its pull fades as the data grows.
    batch_size : int or "auto", default="auto"
        Number of whole *queries* per minibatch (all of them when fewer).
        "auto" is 32 (see :ref:`auto-values`); the value used is
        ``batch_size_``.
    learning_rate_init : float, default=3e-3
        Step size of Adam or SGD.
    max_iter : int, default=300
        Maximum number of epochs (passes over all training queries); for
        "lbfgs", of iterations.
    tol : float, default=3e-3
        Without early stopping, training stops when the training objective
        has improved by less than ``tol`` for ``n_iter_no_change`` epochs.
        With early stopping, when the validation NDCG@10 has not risen for
        that many. For "lbfgs", the gradient tolerance. See :ref:`stopping`.
    n_iter_no_change : int or "auto", default="auto"
        Number of epochs without improvement (see ``tol``) before training
        stops. "auto" follows the size of the data (see
        :ref:`auto-values`); the value used is ``n_iter_no_change_``.
    early_stopping : bool or "auto", default="auto"
        Hold out ``validation_fraction`` of the *queries*, stop when their
        NDCG@10 stops rising and keep the best weights. "auto" turns it on
        from 10,000 training rows (see :ref:`auto-values`); the value used is
        ``early_stopping_``. Never in ``partial_fit``, nor with "lbfgs"
        (True is then an error).
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
    sigma : float, default=0.5
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
        dropout: ``predict`` uses every unit). No effect on a linear model;
        with "lbfgs", a positive value is an error.
    input_noise : "auto" or float >= 0, default="auto"
        Standard deviation of Gaussian noise added to the standardized
        inputs during training ("lbfgs": a positive value is an error).
        "auto" adds noise on small data whose features are redundant, and
        none otherwise (see :ref:`auto-values`); the value used is
        ``input_noise_``.
    ema_momentum : "auto" or float in [0, 1), default="auto"
        Momentum of an exponential moving average of the weights over the
        optimizer's steps (Polyak averaging): the fitted model is the
        average, and 0 keeps the last step's weights; ignored by "lbfgs".
        "auto" averages when no validation set is held out (see
        :ref:`auto-values`); the value used is ``ema_momentum_``.
    [shared: data columns]
    pair_targets : {"hard", "soft"}, default="hard"
        Target probability that document i ranks above j, for y_i > y_j: 1
        ("hard"), or sigmoid(y_i - y_j) ("soft"), for real-valued labels
        such as click-through rates: a small difference pushes less than a
        large one (a difference of 1 gives 0.73). See :ref:`lambdas`.

    Attributes
    ----------
    coefs_ : list of ndarray
        Weight matrices; ``coefs_[i]`` has shape (fan_in, fan_out).
    intercepts_ : list of ndarray
        Bias vectors; ``intercepts_[i]`` has shape (fan_out,).
    loss_curve_ : list of float
        Training objective (mean pair cross-entropy per query plus the L2
        term) after each epoch, on a fixed sample of the training queries;
        with "lbfgs", the whole objective after each iteration.
    loss_ : float
        The training objective at the end: the last entry of
        ``loss_curve_`` ("lbfgs": at the solution it returned).
    validation_scores_ : list of float or None
        Validation NDCG@10 after each epoch, with early stopping.
    best_validation_score_ : float or None
        Best validation NDCG@10, with early stopping.
    n_iter_ : int
        Number of epochs ("lbfgs": iterations) run by the last ``fit``; each
        ``partial_fit`` adds one.
    t_ : int
        Number of training rows the minibatches have held, summed over
        epochs; a ``warm_start`` fit and each ``partial_fit`` add to it (0
        with "lbfgs").
    best_loss_ : float
        Lowest training objective of an epoch since the last ``fit`` began,
        the stopping rule's reference; ``inf`` with early stopping and with
        "lbfgs".
    batch_size_ : int
        The ``batch_size`` used, with "auto" resolved.
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
    [shared: fitted inputs]

    See Also
    --------
    LambdaRankRanker : Pairs weighted by the change of NDCG@k or AP@k.
    ListNetRanker : Listwise softmax cross-entropy, linear in query length.
    BaggingRanker : The average of several fits of a ranker.

    Notes
    -----
    A Numba kernel turns the pairs of each query into one gradient per
    document, so the network's backward pass runs once per document, not
    once per pair; the kernel itself visits every pair, O(n**2) for a
    query of n documents (``LambdaRankRanker`` with ``k`` and
    ``ListNetRanker`` are linear in n). A default fit stops by itself (on
    the training objective below 10,000 rows, on held-out queries from
    there) and warns only when ``max_iter`` cuts it short.

    Examples
    --------
    >>> from sklearn_ranknet import RankNetRanker
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> X, y, qid = make_ranking(n_queries=50, random_state=0)
    >>> ranker = RankNetRanker(random_state=0).fit(X, y, groups=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    >>> bool(0.0 <= ranker.score(X, y, groups=qid) <= 1.0)
    True
    """

    _parameter_constraints = {
        **BaseRanker._parameter_constraints,
        "pair_targets": [StrOptions({"hard", "soft"})],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        activation="relu",
        solver="adam",
        alpha=1.5,
        batch_size="auto",
        learning_rate_init=3e-3,
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=0.5,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        precision="auto",
        query_column=None,
        position_column=None,
        pair_targets="hard",
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
        self.pair_targets = pair_targets

    def _objective_factory(self, resolved, linear_gain=False):  # pair order only: no gain
        return partial(RankNetObjective, sigma=self.sigma, soft_targets=self.pair_targets == "soft")
