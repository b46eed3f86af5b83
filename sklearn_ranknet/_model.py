"""The model a ranker fits, and the state its training carries.

:class:`RankingModel` is the scoring function: a network's weights and the
input scaling its inputs go through (``_inputs.InputScaling``). ``predict``,
the training loop, the ONNX converter and the Dask workers all use it; none
of them needs the estimator. :class:`FitState` is what training carries
besides the model from one step (and one ``partial_fit``) to the next: the
optimizer, the weight average, the penalty, the random stream, the step
count, the noise and the threads.

The model holds one network today. Its parameters are reached only through
:attr:`RankingModel.params`, :meth:`~RankingModel.layers`,
:meth:`~RankingModel.inputs` and :meth:`~RankingModel.own_gradients`, so that
several networks of one shape can later sit side by side in one object.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from . import _network
from ._inputs import block_rows, gather_rows, stays_sparse
from ._missingness import has_missing


class RankingModel:
    """A fitted scoring function: network weights plus input scaling.

    Parameters
    ----------
    coefs : list of ndarray of shape (fan_in, fan_out)
        Weight matrices; ``coefs[0]`` applies to the scaled inputs.
    intercepts : list of ndarray of shape (fan_out,)
        Bias vectors.
    activation : {"identity", "logistic", "tanh", "relu"}
        Activation of the hidden layers.
    scaling : InputScaling or None, default=None
        The input scaling fitted on the training rows; None feeds ``X`` to
        the network as it is.
    """

    def __init__(self, coefs, intercepts, activation, scaling=None):
        self.coefs, self.intercepts = list(coefs), list(intercepts)
        self.activation, self.scaling = activation, scaling

    @classmethod
    def initialize(cls, n_features, hidden_layer_sizes, activation, scaling, dtype, random_state):
        """A new network (Glorot-uniform, drawn from ``random_state``) of
        ``dtype`` on the inputs of ``scaling`` (or ``n_features`` raw ones)."""
        n_inputs = n_features if scaling is None else scaling.n_inputs
        coefs, intercepts = _network.init_params(n_inputs, hidden_layer_sizes, activation, random_state)
        return cls(
            [c.astype(dtype, copy=False) for c in coefs], [b.astype(dtype, copy=False) for b in intercepts],
            activation, scaling,
        )

    def astype(self, dtype):
        """This model with its weights in ``dtype`` (itself when they are in
        it already): the precision a fit trains in, and the one it
        publishes. The input scaling stays in the dtype it was fitted in:
        rows are scaled in it, then cast (:meth:`inputs`)."""
        if self.dtype == np.dtype(dtype):
            return self
        return RankingModel(
            [c.astype(dtype) for c in self.coefs], [b.astype(dtype) for b in self.intercepts], self.activation,
            self.scaling,
        )

    @property
    def params(self):
        """Every parameter array, weights then intercepts: what the optimizer
        updates in place."""
        return self.coefs + self.intercepts

    def set_params(self, params):
        """Take the parameters ``params`` (as :attr:`params` lists them), in
        the model's dtype."""
        n_layers = len(params) // 2
        dtype = self.dtype
        self.coefs = [np.asarray(p, dtype=dtype) for p in params[:n_layers]]
        self.intercepts = [np.asarray(p, dtype=dtype) for p in params[n_layers:]]

    def with_params(self, params):
        """A model with copies of ``params`` and this model's scaling."""
        n_layers = len(params) // 2
        return RankingModel(
            [np.array(p) for p in params[:n_layers]], [np.array(p) for p in params[n_layers:]],
            self.activation, self.scaling,
        )

    @property
    def dtype(self):
        return self.coefs[0].dtype

    @property
    def hidden_layer_sizes(self):
        return tuple(c.shape[1] for c in self.coefs[:-1])

    @property
    def is_finite(self):
        return all(np.isfinite(p).all() for p in self.params)

    # ------------------------------------------------------------------
    # The network on rows of X

    def layers(self, X):
        """The (coefs, intercepts) the network runs with on rows of ``X``
        given by :meth:`inputs`: its own, or for CSR that stays sparse the
        first layer folded with the standardization (``_inputs.py``)."""
        if self.scaling is None:
            return self.coefs, self.intercepts
        return self.scaling.network_params(X, self.coefs, self.intercepts)

    def inputs(self, X, index, dtype=None):
        """Rows ``index`` of ``X`` as the network takes them (with input
        scaling, a new array, scaled), in the network's precision: a
        float32 network trained on float64 rows gets them scaled in float64
        and then cast, so that a feature far from 0 keeps its resolution
        (``dtype`` chooses another)."""
        dtype = self.dtype if dtype is None else dtype
        if self.scaling is not None:
            return self.scaling.rows(X, index, dtype)
        rows = gather_rows(X, index)
        return rows if rows.dtype == dtype else rows.astype(dtype)

    def own_gradients(self, X, coef_grads, intercept_grads):
        """Gradients for :meth:`layers` on rows of ``X`` -> gradients of the
        model's own parameters, in place."""
        if self.scaling is not None:
            self.scaling.model_gradient(X, coef_grads, intercept_grads)
        return coef_grads, intercept_grads

    def scores(self, X):
        """Scores of the rows of a validated ``X`` (dense or canonical CSR,
        float32 or float64, without its query column).

        A float64 model reads float32 rows as float64 (exactly, a block at a
        time), so that they score as the same values in float64 do; a
        float32 model keeps float64 rows, as ``MLPRegressor`` does. Raises
        ValueError when a score is not finite.
        """
        widen = X.dtype == np.float32 and self.dtype == np.float64
        if widen and stays_sparse(X):
            X, widen = X.astype(np.float64), False  # its stored values only
        coefs, intercepts = self.layers(X)
        scaling = self.scaling
        # Finite rows far outside the training range may overflow the
        # network's products: _finite_scores then says so, and numpy's
        # overflow and NaN warnings before it would be noise.
        with np.errstate(over="ignore", invalid="ignore"):
            # Dense rows without scaling: one product (numpy widens float32
            # rows in it, exactly). CSR that stays sparse: one sparse product.
            if (scaling is None and not sp.issparse(X)) or (
                stays_sparse(X) and (scaling is None or (
                    scaling.kind == "standard" and not len(scaling.indicated) and not has_missing(X)
                ))
            ):
                return _finite_scores(_network.predict_scores(X, coefs, intercepts, self.activation))
            # Rows as fit reads them: scaled rows and CSR too dense to stay
            # sparse one block at a time, a copy each, so CSR scores as its
            # dense twin does, bit for bit.
            step = block_rows(max(X.shape[1], 0 if scaling is None else scaling.n_inputs))
            scores = []
            for start in range(0, X.shape[0], step):
                index = slice(start, start + step)
                # In X's dtype, or float64 when either is (not the
                # network's precision, which is the training's).
                rows = self.inputs(gather_rows(X, index).astype(np.float64), slice(None)) if widen \
                    else self.inputs(X, index, np.promote_types(X.dtype, self.dtype))
                scores.append(_network.predict_scores(rows, coefs, intercepts, self.activation))
        return _finite_scores(np.concatenate(scores))


class FitState:
    """What training carries besides the model.

    Parameters
    ----------
    random_state : int, RandomState instance or None
        The ``random_state`` parameter the random stream is made from.

    Attributes
    ----------
    random_state : numpy.random.RandomState
        The stream every draw of training comes from: minibatch order,
        validation split, loss sample, dropout and noise seeds.
    seed_source : int, RandomState instance or None
        What the stream was made from, so that a warm fit notices a
        ``random_state`` changed since (:meth:`reseeded`).
    optimizer : Adam, SGD or None
        Carried from one ``partial_fit`` to the next; each ``fit`` starts
        without one.
    weight_average : WeightAverage or None
        The moving average of the weights (``ema_momentum``), carried as the
        optimizer is.
    t : int
        Training rows the minibatch steps have held, summed over steps.
    l2 : float
        The L2 weight on the mean-per-query objective of the current fit.
    n_threads : int
        Threads of the current fit's kernels (``n_jobs``).
    block_threads : int
        Threads that share the current fit's row blocks (a minibatch's, and
        those it scores), or a stack's column blocks (``_stack.py``): the
        threads BLAS had when the fit began
        (``_jit.single_threaded_blas``), or ``n_threads`` if more. Blocks
        are fixed by the shapes, so this changes no bit of the model.
    dropout, input_noise : float
        The current fit's dropout and (resolved) input noise level.
    noise : NoiseTable or None
        The current fit's input noise draws.
    """

    def __init__(self, random_state):
        self.random_state = check_random_state(random_state)
        self.seed_source = random_state
        self.optimizer = self.weight_average = self.noise = None
        self.t = 0
        self.l2 = 0.0
        self.n_threads = self.block_threads = 1
        self.dropout = self.input_noise = 0.0

    def reseeded(self, random_state):
        """This state, with a new stream from ``random_state`` when that is
        not the one the stream was made from (an equal int, or the same
        object: a RandomState instance, or None, whose stream goes on)."""
        before = self.seed_source
        same = (
            int(before) == int(random_state)
            if isinstance(before, (int, np.integer)) and isinstance(random_state, (int, np.integer))
            else before is random_state
        )
        if not same:
            self.random_state = check_random_state(random_state)
            self.seed_source = random_state
        return self

    @property
    def randomized(self):
        """Whether the steps draw random numbers (dropout or noise)."""
        return bool(self.dropout or self.input_noise)


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
