"""First-order optimizers updating a list of parameter arrays in place.

The optimizer holds references to the arrays it updates (typically
``coefs + intercepts`` of a network) and its own state (velocities, moments,
step count) as plain attributes, so it can be pickled and resumed (warm start).

.. note::
   An optimizer restored from a pickle may hold copies of the arrays it
   updated (joblib's pickler restores every array reference as an array of
   its own), so the training loop attaches it to the model's arrays again
   (``optimizer.params = ...``) before every call that resumes training.
"""

import numpy as np

from ._jit import jit


class _BaseOptimizer:
    """Common parameter bookkeeping.

    Parameters
    ----------
    params : list of ndarray
        Arrays updated in place by :meth:`update`.
    learning_rate_init : float
        Initial step size; stored as the mutable attribute ``learning_rate``.
    """

    def __init__(self, params, learning_rate_init):
        self.params = list(params)
        self.learning_rate_init = float(learning_rate_init)
        self.learning_rate = self.learning_rate_init

    def _zeros(self):
        return [np.zeros_like(p) for p in self.params]

    def update(self, grads):
        """Take one step, modifying ``self.params`` in place.

        Parameters
        ----------
        grads : list of ndarray
            Gradient of the objective (to be minimized) with respect to each
            array of ``params``, same shapes.
        """
        if len(grads) != len(self.params):
            raise ValueError(
                f"Expected {len(self.params)} gradients, got {len(grads)}."
            )
        for p, g in zip(self.params, grads):
            if np.shape(g) != p.shape:
                raise ValueError(
                    f"Gradient of shape {np.shape(g)} for a parameter of shape "
                    f"{p.shape}."
                )
        self._apply(grads)

    def _apply(self, grads):
        for p, step in zip(self.params, self._steps(grads)):
            p += step

    def _steps(self, grads):  # pragma: no cover
        raise NotImplementedError


class SGD(_BaseOptimizer):
    """Stochastic gradient descent with (Nesterov) momentum, constant step.

    With velocity ``v`` (initially 0), each update does::

        v <- momentum * v - learning_rate * g
        p <- p + (momentum * v - learning_rate * g   if nesterov else   v)

    The step size is constant (``learning_rate = learning_rate_init``); a caller
    wanting a schedule may assign ``optimizer.learning_rate`` between updates.

    Parameters
    ----------
    params : list of ndarray
        Arrays updated in place by :meth:`update`.
    learning_rate_init : float, default=0.001
        Step size.
    momentum : float, default=0.9
        Momentum in ``[0, 1]``; 0 gives plain gradient descent.
    nesterov : bool, default=True
        Whether to use Nesterov's momentum.

    Attributes
    ----------
    velocities : list of ndarray
        One per parameter array, same shapes.
    """

    def __init__(self, params, learning_rate_init=0.001, momentum=0.9, nesterov=True):
        super().__init__(params, learning_rate_init)
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        self.velocities = self._zeros()

    def _steps(self, grads):
        lr, mu = self.learning_rate, self.momentum
        for v, g in zip(self.velocities, grads):
            v *= mu
            v -= lr * g
            yield mu * v - lr * g if self.nesterov else v


class Adam(_BaseOptimizer):
    """Adam with bias correction (Kingma & Ba, 2015, Algorithm 1).

    With first and second moments ``m``, ``v`` (initially 0) and step count
    ``t``, each update does::

        t <- t + 1
        m <- beta_1 * m + (1 - beta_1) * g
        v <- beta_2 * v + (1 - beta_2) * g**2
        p <- p - learning_rate * m_hat / (sqrt(v_hat) + epsilon)

    with ``m_hat = m / (1 - beta_1**t)`` and ``v_hat = v / (1 - beta_2**t)``.
    Hence the first step is ``learning_rate * g / (|g| + epsilon)``, about
    ``learning_rate`` per coordinate. (``MLPRegressor`` folds the correction
    into the step size instead, which scales ``epsilon`` differently.)

    Parameters
    ----------
    params : list of ndarray
        Arrays updated in place by :meth:`update`.
    learning_rate_init : float, default=0.001
        Step size.
    beta_1, beta_2 : float, default=0.9, 0.999
        Decay rates of the first and second moment estimates, in ``[0, 1)``.
    epsilon : float, default=1e-8
        Added to ``sqrt(v_hat)`` for numerical stability.

    Attributes
    ----------
    t : int
        Number of updates taken so far.
    ms, vs : list of ndarray
        First and second moment estimates, one per parameter array.
    """

    def __init__(
        self,
        params,
        learning_rate_init=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
    ):
        super().__init__(params, learning_rate_init)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.t = 0
        self.ms = self._zeros()
        self.vs = self._zeros()

    def _apply(self, grads):
        # One compiled pass per array instead of ten numpy passes and their
        # temporaries: a step of a small network is mostly per-call overhead.
        # The numpy steps below stay the definition, and take the arrays the
        # kernel is not compiled for (read-only, strided, mixed dtypes).
        arrays = list(zip(self.params, self.ms, self.vs, grads))
        if not all(_fits_kernel(p, m, v, g) for p, m, v, g in arrays):
            super()._apply(grads)
            return
        self.t += 1
        b1, b2 = self.beta_1, self.beta_2
        # The bias corrections as factors: rate * m_hat / (sqrt(v_hat) + eps).
        rate = self.learning_rate / (1.0 - b1**self.t)
        root_correction = 1.0 / np.sqrt(1.0 - b2**self.t)
        for p, m, v, g in arrays:
            _adam_step(p.reshape(-1), m.reshape(-1), v.reshape(-1), g.reshape(-1),
                       rate, b1, b2, self.epsilon, root_correction)

    def _steps(self, grads):
        self.t += 1
        b1, b2 = self.beta_1, self.beta_2
        correction_1 = 1.0 - b1**self.t
        correction_2 = 1.0 - b2**self.t
        for m, v, g in zip(self.ms, self.vs, grads):
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * np.square(g)
            denom = np.sqrt(v / correction_2)
            denom += self.epsilon
            yield -self.learning_rate * (m / correction_1) / denom


def _fits_kernel(p, m, v, g):
    """Whether :func:`_adam_step` can update ``p`` in place through flat
    views: the same float dtype throughout, C-contiguous, writeable."""
    arrays = (p, m, v, g)
    return (
        p.dtype in (np.float32, np.float64)
        and all(isinstance(a, np.ndarray) and a.dtype == p.dtype and a.flags.c_contiguous for a in arrays)
        and all(a.flags.writeable for a in (p, m, v))
    )


@jit
def _adam_step(p, m, v, g, rate, beta_1, beta_2, epsilon, root_correction):
    """:meth:`Adam._steps` and the update of ``p`` in one pass over flat
    arrays (``m`` and ``v`` in place too), with the bias corrections folded
    into ``rate`` (``learning_rate / (1 - beta_1**t)``) and
    ``root_correction`` (``1 / sqrt(1 - beta_2**t)``). float32 arrays are
    updated with float64 arithmetic, rounded once."""
    for i in range(p.shape[0]):
        m_i = beta_1 * m[i] + (1.0 - beta_1) * g[i]
        v_i = beta_2 * v[i] + (1.0 - beta_2) * (g[i] * g[i])
        m[i] = m_i
        v[i] = v_i
        p[i] -= rate * m_i / (np.sqrt(v_i) * root_correction + epsilon)


class WeightAverage:
    """An exponential moving average of parameter arrays over optimizer steps.

    Polyak-Ruppert averaging in its exponential form (Keras's
    ``ema_momentum``), bias-corrected as Adam's moments are: after ``t``
    steps with trained weights ``p_1 .. p_t``, the average is::

        sum_s momentum**(t - s) * (1 - momentum) * p_s / (1 - momentum**t)

    so the first average is the first step's weights. It is kept as such
    and moved towards each new ``p`` by the newest step's share, ``w_t = (1
    - momentum) / (1 - momentum**t)``: ``average <- p + (1 - w_t) *
    (average - p)``. Weights that stop changing are then averaged to
    themselves exactly (a sum divided by its correction only to rounding).
    The average spans about ``1 / (1 - momentum)`` steps. The optimizer
    keeps updating the trained weights; the average is what the model
    predicts with. It smooths the noise of minibatch steps, a cheap relative
    of averaging several models.

    Parameters
    ----------
    params : list of ndarray
        The trained weights (their shapes and dtypes).
    momentum : float in (0, 1)
        Decay of the average per step.

    Attributes
    ----------
    averages : list of ndarray
        The average of each array (meaningful once ``t >= 1``).
    t : int
        Steps averaged so far.
    trained : list of ndarray or None
        The trained weights, while the arrays they live in hold the average
        (between :meth:`hand_over` and :meth:`resume`: while an epoch is
        judged, and from the end of a fit to the next ``partial_fit``).
    """

    def __init__(self, params, momentum):
        self.momentum = float(momentum)
        self.averages = [np.zeros_like(p) for p in params]
        self.t = 0
        self.trained = None

    def update(self, params):
        """Fold in the weights after one more step."""
        self.t += 1
        newest = (1.0 - self.momentum) / (1.0 - self.momentum**self.t)
        for a, p in zip(self.averages, params):
            # a = p + (1 - w) (a - p) in place, no temporaries.
            a -= p
            a *= a.dtype.type(1.0 - newest)
            a += p

    def average(self):
        """The averaged weights (new arrays)."""
        return [a.copy() for a in self.averages]

    def hand_over(self, params):
        """Put the average into ``params`` in place (the arrays the optimizer
        updates, so that the model predicts with it), keeping the trained
        weights for :meth:`resume`."""
        if self.t and self.trained is None:
            self.trained = [p.copy() for p in params]
            for p, a in zip(params, self.average()):
                p[...] = a

    def resume(self, params):
        """Put the trained weights back into ``params`` before training on,
        if :meth:`hand_over` left the average there."""
        if self.trained is not None:
            for p, w in zip(params, self.trained):
                p[...] = w
            self.trained = None
