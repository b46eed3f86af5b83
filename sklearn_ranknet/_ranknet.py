"""RankNet: pairwise cross-entropy on sigmoid score differences."""

from functools import partial

from sklearn.utils._param_validation import StrOptions

from ._base import BaseRanker
from ._objectives import RankNetObjective


class RankNetRanker(BaseRanker):
    """RankNet learning-to-rank model (Burges et al., 2005).

    For every pair of documents of a query with different labels, the model
    predicts P(i above j) = 1 / (1 + exp(-sigma * (s_i - s_j))) and minimizes
    the cross-entropy against the label order. The cost of a query is the
    mean over its label-differing pairs, and the objective is the mean over
    queries plus ``alpha / (2 * n_queries)`` times the squared weights. A
    Numba kernel turns the pairs of each query into one gradient per
    document, so the network's backward pass costs O(n_samples); the
    kernel itself visits every pair, O(n**2) for a query of n documents
    (a warning says so past 10**9 pairs in one query, about 45,000
    documents; :class:`LambdaRankRanker` with ``k`` and
    :class:`ListNetRanker` are linear in n).

    The scoring function is linear (``hidden_layer_sizes=()``) or a
    multilayer perceptron, with the parameters of ``MLPRegressor``.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int or int, default=(64,)
        Sizes of the hidden layers; ``()`` means a linear scoring function.
    activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers.
    solver : {"adam", "sgd", "lbfgs"}, default="adam"
        "lbfgs" optimizes the whole objective with scipy's L-BFGS-B (RankNet's
        cost is a true objective); it suits small data.
    alpha : float, default=1.5
        L2 penalty on the weights (not the intercepts), weighed against the
        *sum* of the training queries' costs as in ``Ridge``: the objective
        is the mean query cost plus ``alpha / (2 * n_queries)`` times the
        squared weights, so the penalty's pull fades as the training set
        grows. ``n_queries`` counts the queries trained on (those with a
        positive weight, whatever the weights' scale; without the
        early-stopping hold-out; those of the call in ``partial_fit``).
    batch_size : int or "auto", default="auto"
        Number of whole *queries* per minibatch; "auto" is min(32, n_queries).
    learning_rate_init : float, default=3e-3
        Step size of Adam or SGD.
    max_iter : int, default=300
        Maximum epochs (passes over all queries); for "lbfgs", iterations.
    tol : float, default=3e-3
        Minimum improvement of ``loss_curve_`` that resets the patience
        counter: without early stopping, training ends when the training
        objective improves by less than ``tol`` for ``n_iter_no_change``
        epochs (the default, chosen by cross-validation, stops before the
        network overfits small data). With early stopping, any rise of the
        validation NDCG@10 resets it.
    n_iter_no_change : int or "auto", default="auto"
        Epochs without improvement (see ``tol``) before training stops.
        "auto" waits 5 epochs below 100,000 training rows and 3 from there:
        an epoch over large data is many steps judged on many validation
        queries, so the shorter wait lost nothing in the defaults study and
        saved 4-34 % of the fit, while on small data it stopped on
        validation noise. ``MLPRegressor`` waits 10; 5 ranked the same.
    early_stopping : bool or "auto", default="auto"
        Hold out ``validation_fraction`` of the *queries*, monitor their
        NDCG@10 after every epoch, stop when it stops improving and keep the
        best weights. "auto" turns it on when the training data has at least
        10,000 rows and enough queries to hold out two
        (``HistGradientBoostingRegressor``'s threshold, which it applies
        above 10,000 rows). Not with
        ``partial_fit``, nor with L-BFGS (True is then an error).
    validation_fraction : float, default=0.1
        Fraction of the queries held out for early stopping (of those with a
        positive ``sample_weight``: a query of weight 0 always trains).
    momentum : float, default=0.9
        Nesterov momentum of the "sgd" solver.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialization, query shuffling and the validation split.
        A ``warm_start`` fit goes on with the random stream of the fits
        before it, or starts a new one from a ``random_state`` changed since
        (by ``set_params``).
    warm_start : bool, default=False
        Continue from the previous solution on the next ``fit``.
    verbose : bool, default=False
        Print the epoch, loss, validation score and time.
    sigma : float, default=0.5
        Steepness of the pair sigmoid.
    n_jobs : int, default=None
        Threads of one fit: the lambda kernels and the network's row blocks
        run on a pool of this many threads (no OpenMP: safe after ``fork``
        and from several Python threads). ``None`` means 1, as in
        scikit-learn; then the matrix products still use BLAS's own threads.
        ``-1`` means every core; BLAS then runs on one thread during the fit,
        because its idle workers spin and take the pool's cores. A fit uses
        more than one thread only where a typical minibatch gives them work
        (several row blocks, or a long lambda pass); otherwise it runs as
        with ``None``. More threads pay off for long queries, small networks
        and large fits.
    feature_scaling : {"piecewise", "standard", "log1p"} or None, default="piecewise"
        Input scaling fitted on the training rows, so that raw features need
        no scaler:

        - "piecewise" encodes each feature into one input per quantile bin
          (8 bins, 4 from 50,000 training rows; a piecewise-linear
          encoding, see ``bin_edges_``): the
          network starts with the thresholds a tree would split at, and
          values beyond the training range score as its ends. The inputs
          are then standardized. More inputs make each epoch slower (about
          3x on the Yahoo LTR sample).
        - "standard" standardizes each feature;
        - "log1p" maps each value x to sign(x) * log1p(|x|), then
          standardizes;
        - None uses X as given.

        The standardization is folded into the first layer, so CSR input
        stays sparse. Statistics and bin edges come from the first ``fit``
        or ``partial_fit`` and are kept by later ``partial_fit`` calls and
        ``warm_start`` fits; a ``fit`` without ``warm_start`` computes them
        anew.
    dropout : float in [0, 1), default=0.0
        Probability of dropping each hidden unit during training (inverted
        dropout: ``predict`` is deterministic and uses every unit). A linear
        model (``hidden_layer_sizes=()``) has no hidden unit, so it has no
        effect there, as ``momentum`` has none under ``solver="adam"``.
    input_noise : "auto" or float >= 0, default="auto"
        Standard deviation of Gaussian noise added to the standardized
        inputs during training only. Sparse minibatches are made dense when
        it is positive. "auto" adds noise where the features are redundant
        (many of them order the rows alike, as real learning-to-rank
        features do): up to 2.0, by the mean squared rank correlation
        between features on at most 2,000 training rows, for a ``fit``
        below 10,000 rows with a stochastic solver; 0 otherwise (and in
        ``partial_fit``). On the Yahoo LTR sample's training folds it
        raised NDCG@10 by about 0.005; on synthetic data of independent
        features it adds none. The level used is ``input_noise_``.
    ema_momentum : "auto" or float in [0, 1), default="auto"
        Keep an exponential moving average of the weights over the
        optimizer's steps (Polyak averaging, Keras's ``ema_momentum``) and
        fit the average: the validation score, ``loss_curve_`` and the
        fitted ``coefs_`` are the average's. It spans about
        ``1 / (1 - ema_momentum)`` minibatch steps and smooths their noise,
        a cheap relative of averaging several models. "auto" is 0.9975 when
        the fit holds out no validation set (``early_stopping`` off, as it
        is below 10,000 rows under "auto", and ``partial_fit``) and 0 when
        it does: on the Yahoo LTR sample's training folds the average gained
        0.005-0.016 NDCG@10, on synthetic data it lost up to 0.004, and with
        early stopping, which already keeps the best epoch, it ran more
        epochs (User Guide, "Choosing"). 0 keeps the last step's weights.
        Used by "adam" and "sgd" only, ignored by "lbfgs" (as ``momentum``
        is by "adam"); ``partial_fit`` carries the average on.
    query_column : str, int or None, default=None
        Where the query ids travel inside ``X``: a DataFrame column name, or
        a column position (for arrays, sparse matrices and DataFrames).
        ``fit``, ``partial_fit``, ``predict`` and ``score`` then read each
        row's query id from that column and drop it from the features
        (``n_features_in_`` does not count it), and this package's scorers
        find the ids there when no ``groups`` reach them. So
        ``cross_validate``, ``GridSearchCV``, ``learning_curve`` and
        :func:`~sklearn_ranknet.inspection.permutation_importance` work with
        metadata routing off. ``groups=`` may still be passed; it must then
        put the rows in the same queries as the column does (equal ids, or
        ids the column maps one to one, as a scaler in front of the ranker
        transforms it). Removing the column copies ``X`` once per call.
    pair_targets : {"hard", "soft"}, default="hard"
        Target probability that document i ranks above j, for each pair with
        y_i > y_j: 1 ("hard"), or sigmoid(y_i - y_j) ("soft", Burges et al.,
        2005), for real-valued labels such as click-through rates, where a
        small difference should push less than a large one. The labels are
        used as given: scale them so that their differences mean what the
        sigmoid makes of them (a difference of 1 gives a target of 0.73).

    Attributes
    ----------
    coefs_ : list of ndarray
        Weight matrices; ``coefs_[i]`` has shape (fan_in, fan_out).
    intercepts_ : list of ndarray
        Bias vectors; ``intercepts_[i]`` has shape (fan_out,).
    loss_curve_ : list of float
        Training objective (mean pair cross-entropy per query plus the L2
        term) after each epoch, with that epoch's final weights, on a fixed
        sample of whole training queries of positive ``sample_weight``: all
        of them when they hold at most a million pairs and 10,000 rows, a
        random subset within those budgets otherwise. With L-BFGS, the whole
        objective after each iteration.
    loss_ : float
        The training objective after the last epoch, the last entry of
        ``loss_curve_`` (L-BFGS: at the solution it returned).
    validation_scores_ : list of float or None
        Validation NDCG@10 after each epoch, with early stopping.
    best_validation_score_ : float or None
        Best validation NDCG@10, with early stopping.
    input_noise_ : float
        The ``input_noise`` of the last ``fit`` or ``partial_fit``, with
        "auto" resolved.
    n_iter_ : int
        Epochs run by the last ``fit`` (L-BFGS: iterations), as in MLPRegressor: a
        ``warm_start`` fit counts its own; each ``partial_fit`` adds one.
    t_ : int
        Number of training rows the stochastic solver's minibatches have
        held, summed over epochs; a ``warm_start`` fit and each
        ``partial_fit`` add to it (0 with ``solver="lbfgs"``).
    best_loss_ : float
        Lowest training objective of an epoch since the last ``fit`` began
        (``partial_fit`` calls keep lowering it): the stopping rule's
        reference without early stopping. ``inf`` with early stopping, and
        with ``solver="lbfgs"``.
    n_features_in_ : int
        Number of features seen during ``fit`` (without the
        ``query_column``).
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Only when X was a DataFrame with string column names.
    feature_mean_ : ndarray of shape (n_inputs,) or None
        Mean of each input of the network over the training rows: each
        feature (log-transformed with ``feature_scaling="log1p"``), or with
        "piecewise" each feature's bin inputs, feature by feature
        (``n_inputs`` bins in all; over the rows that placed the bin edges);
        None without ``feature_scaling``.
    feature_scale_ : ndarray of shape (n_inputs,) or None
        Its standard deviation (1 for a constant input). ``coefs_[0]``
        applies to the standardized inputs.
    bin_edges_ : ndarray of ndarray of shape (n_features_in_,) or None
        With ``feature_scaling="piecewise"``, the distinct bin edges of each
        feature: its quantiles 0, 1/8, ..., 1 over the training rows
        (0, 1/4, ..., 1 from 50,000 rows; at most 200,000 rows read, evenly
        spaced). A feature with m + 1 edges has m
        inputs; one with a single value has one input, always 0. None
        otherwise.

    Notes
    -----
    The defaults were chosen by cross-validation on training data only: the
    Yahoo LTR sample's training split (5 folds by query) and three
    ``make_ranking`` problems of 150 to 600 queries and two noise levels,
    never on a test split (``benchmarks/tune_defaults.py``, results in
    ``benchmarks/results/tune_defaults.md``). Raw features need no scaler:
    ``feature_scaling="piecewise"`` encodes and standardizes them inside the
    ranker. A
    default fit stops by itself, either when the training objective stops
    improving by ``tol`` (small data) or, from 10,000 rows, when the NDCG@10
    of held-out queries stops improving; it warns only when ``max_iter``
    cuts it short (on a few dozen queries or fewer, where an epoch is one or
    two steps).

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
        query_column=None,
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
            query_column=query_column,
        )
        self.pair_targets = pair_targets

    def _objective_factory(self, resolved):
        return partial(RankNetObjective, sigma=self.sigma, soft_targets=self.pair_targets == "soft")
