"""Scoring networks: forward pass, backward pass and parameter helpers.

A scoring function maps each document (a row of ``X``) to one real score.
It is a multi-layer perceptron laid out like scikit-learn's
:class:`~sklearn.neural_network.MLPRegressor` with a single output:

* ``coefs[i]`` has shape ``(fan_in, fan_out)`` and ``intercepts[i]`` shape
  ``(fan_out,)``, for ``layer_sizes = [n_features, *hidden_layer_sizes, 1]``;
* every hidden layer applies ``activation``, the output layer is the identity;
* ``hidden_layer_sizes=()`` gives a linear scoring function
  ``X @ coefs[0][:, 0] + intercepts[0][0]``.

The ranking loss lives elsewhere: it hands back ``upstream = dC/ds``, the
gradient of the loss with respect to every score, and :func:`backward` turns it
into ``dC/dW = sum_i upstream[i] * ds_i/dW`` for every parameter.

Arrays are float64, or float32 throughout when the weights are float32
(as ``MLPRegressor`` trains on float32 input). ``X`` may be a dense array or a
scipy.sparse CSR matrix (or array); only the first layer ever touches it.

Matrix products go to BLAS. What lies between the last hidden layer's
product and the score (bias, activation, the one-unit output layer, and
backwards the outer product, the activation's derivative and the column
sums) is six passes over an (n_samples, width) array in numpy, about a fifth
of a minibatch step of the default network; two Numba kernels do each
direction in one pass (:func:`_last_hidden_forward`,
:func:`_last_hidden_backward`), compiled once per float dtype.
"""

import numpy as np
from scipy.special import expit
from sklearn.utils.extmath import safe_sparse_dot

from ._jit import as_kernel_array, jit


def _inplace_identity(Z):
    pass


def _inplace_logistic(Z):
    expit(Z, out=Z)  # overflow-free for any magnitude


def _inplace_tanh(Z):
    np.tanh(Z, out=Z)


def _inplace_relu(Z):
    np.maximum(Z, 0.0, out=Z)


#: Hidden-layer activations, name -> in-place function. The names and their
#: meanings are those of ``MLPRegressor(activation=...)``.
ACTIVATIONS = {
    "identity": _inplace_identity,
    "logistic": _inplace_logistic,
    "tanh": _inplace_tanh,
    "relu": _inplace_relu,
}


# Derivatives expressed through the activation *output* A, multiplied into
# ``delta`` in place (so the forward cache is all backward needs).
def _inplace_identity_derivative(A, delta):
    pass


def _inplace_logistic_derivative(A, delta):
    delta *= A
    delta *= 1.0 - A


def _inplace_tanh_derivative(A, delta):
    delta *= 1.0 - A**2


def _inplace_relu_derivative(A, delta):
    # A multiply, not delta[A <= 0] = 0: boolean-mask assignment is several
    # times slower.
    delta *= A > 0.0


_DERIVATIVES = {
    "identity": _inplace_identity_derivative,
    "logistic": _inplace_logistic_derivative,
    "tanh": _inplace_tanh_derivative,
    "relu": _inplace_relu_derivative,
}


#: Activation codes of the fused kernels, in the kernels' branch order.
_ACTIVATION_CODES = {"identity": 0, "logistic": 1, "tanh": 2, "relu": 3}


@jit
def _last_hidden_forward(Z, intercept, out_weights, out_intercept, code, scores):
    """The last hidden layer after its product, and the output layer, in
    one pass over the rows.

    ``Z`` (n, width) holds ``A @ W`` and becomes the layer's activations
    ``activation(Z + intercept)`` in place; ``scores[i]`` gets
    ``Z[i] @ out_weights + out_intercept[0]``. The activation branch does
    not depend on the loop, so LLVM moves it out and vectorizes each case.
    """
    zero = Z.dtype.type(0)
    for i in range(Z.shape[0]):
        total = out_intercept[0]
        for j in range(Z.shape[1]):
            z = Z[i, j] + intercept[j]
            if code == 3:
                z = zero if z <= 0 else z  # NaN stays NaN, as in np.maximum
            elif code == 2:
                z = np.tanh(z)
            elif code == 1:
                z = 1 / (1 + np.exp(-z))  # exp overflows to inf: 1 / inf = 0
            Z[i, j] = z
            total += z * out_weights[j]
        scores[i] = total


@jit
def _last_hidden_backward(A, upstream, out_weights, code, delta, out_grad, hidden_intercept_grad):
    """Backpropagation through the output layer and the last hidden
    layer's activation, in one pass over the rows.

    With ``A`` (n, width) the activations and ``upstream[i] = dC/ds_i``:
    ``out_grad[j] = sum_i A[i, j] upstream[i]`` (the output weights'
    gradient), ``delta[i, j] = upstream[i] out_weights[j] f'(A[i, j])``
    (dC/dZ of the hidden layer, the derivative written through the
    activation's output as in :data:`_DERIVATIVES`) and
    ``hidden_intercept_grad[j] = sum_i delta[i, j]``. Returns
    ``sum_i upstream[i]``, the output intercept's gradient.
    """
    zero = A.dtype.type(0)
    out_grad[:] = zero
    hidden_intercept_grad[:] = zero
    total = zero
    for i in range(A.shape[0]):
        u = upstream[i]
        total += u
        for j in range(A.shape[1]):
            a = A[i, j]
            out_grad[j] += a * u
            d = u * out_weights[j]
            if code == 3:
                d = d if a > 0 else zero
            elif code == 2:
                d *= 1 - a * a
            elif code == 1:
                d *= a * (1 - a)
            delta[i, j] = d
            hidden_intercept_grad[j] += d
    return total


def _check_activation(activation):
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}."
        )


def layer_sizes(n_features, hidden_layer_sizes):
    """Number of units of every layer, input and output included.

    Parameters
    ----------
    n_features : int
        Number of input features.
    hidden_layer_sizes : sequence of int
        Width of each hidden layer; ``()`` for a linear model.

    Returns
    -------
    sizes : list of int, length ``len(hidden_layer_sizes) + 2``
        ``[n_features, *hidden_layer_sizes, 1]``.
    """
    sizes = [int(n_features), *(int(h) for h in hidden_layer_sizes), 1]
    if any(s <= 0 for s in sizes):
        raise ValueError(f"All layer sizes must be positive, got {sizes}.")
    return sizes


def init_params(n_features, hidden_layer_sizes, activation, random_state):
    """Glorot-uniform initialization, as in ``MLPRegressor``.

    For each layer, weights then intercepts are drawn from
    ``uniform(-bound, bound)`` with ``bound = sqrt(factor / (fan_in + fan_out))``,
    ``factor = 2`` if ``activation == "logistic"`` else ``6``. As in
    ``MLPRegressor``, the factor of the hidden activation is also used for the
    (identity) output layer, and the draws happen in the same order.

    Parameters
    ----------
    n_features : int
        Number of input features.
    hidden_layer_sizes : sequence of int
        Width of each hidden layer; ``()`` for a linear scoring function.
    activation : {"identity", "logistic", "tanh", "relu"}
        Hidden-layer activation (only used to pick the bound).
    random_state : numpy.random.RandomState
        As returned by :func:`sklearn.utils.check_random_state`.

    Returns
    -------
    coefs : list of ndarray of shape (fan_in, fan_out)
        One weight matrix per layer; the last one has shape ``(fan_in, 1)``.
    intercepts : list of ndarray of shape (fan_out,)
        One bias vector per layer.
    """
    _check_activation(activation)
    sizes = layer_sizes(n_features, hidden_layer_sizes)
    factor = 2.0 if activation == "logistic" else 6.0
    coefs, intercepts = [], []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = np.sqrt(factor / (fan_in + fan_out))
        coefs.append(random_state.uniform(-bound, bound, (fan_in, fan_out)))
        intercepts.append(random_state.uniform(-bound, bound, fan_out))
    return coefs, intercepts


def _layer(A, coef, intercept, activation, first, product=None):
    """Affine map of one layer, then its activation (``None`` for output);
    ``product``, when given, is ``A @ coef`` already computed (and is
    overwritten)."""
    Z = _product(A, coef, first) if product is None else product
    Z += intercept
    if activation is not None:
        ACTIVATIONS[activation](Z)
    return Z


def _product(A, coef, first):
    """``A @ coef`` as a fresh array, safe to modify in place (the first
    layer's ``A`` may be sparse)."""
    return np.asarray(safe_sparse_dot(A, coef) if first else A @ coef)


def _last_hidden(A, coefs, intercepts, activation, first, product=None):
    """The last hidden layer and the output layer: (its activations, the
    scores), the activations fused with the output by
    :func:`_last_hidden_forward`; ``product`` as in :func:`_layer`."""
    Z = _product(A, coefs[-2], first) if product is None else product
    intercept, code = intercepts[-2], _ACTIVATION_CODES[activation]
    if activation == "tanh":  # numpy's tanh is SIMD, Numba's calls libm per value (7x slower)
        Z += intercept
        np.tanh(Z, out=Z)
        intercept, code = np.zeros_like(intercept), _ACTIVATION_CODES["identity"]
    scores = np.empty(Z.shape[0], dtype=Z.dtype)
    # Weights as the one array type the kernel is compiled for (a model
    # loaded read-only would otherwise compile another copy).
    weights = [as_kernel_array(w, Z.dtype) for w in (intercept, coefs[-1].ravel(), intercepts[-1])]
    _last_hidden_forward(Z, weights[0], weights[1], weights[2], code, scores)
    return Z, scores


class ForwardCache:
    """What :func:`backward` needs from :func:`forward`.

    Attributes
    ----------
    inputs : list of arrays, length ``len(coefs)``
        The input of every layer: ``inputs[0]`` is ``X`` itself and
        ``inputs[i]`` (``i >= 1``), of shape ``(n_samples, coefs[i].shape[0])``,
        the output of hidden layer ``i`` after dropout.
    activations : list
        The output of every hidden layer before dropout (the same arrays as
        ``inputs`` without dropout); ``activations[0]`` is None.
    kept : list
        Boolean masks of the units dropout kept, or None.
    keep_scale : float
        ``1 / (1 - dropout)``: kept units are scaled by it, so that a unit's
        expected output is the same in training and in ``predict``.
    """

    def __init__(self, X):
        self.inputs, self.activations, self.kept = [X], [None], [None]
        self.keep_scale = 1.0

    def __len__(self):
        return len(self.inputs)


def forward(X, coefs, intercepts, activation, *, dropout=0.0, random_state=None, first_product=None):
    """Scores of every sample, and the cache needed by :func:`backward`.

    Parameters
    ----------
    X : {ndarray, sparse CSR matrix} of shape (n_samples, n_features)
        Input samples, float64 or float32.
    coefs : list of ndarray of shape (fan_in, fan_out)
        Weight matrices, as returned by :func:`init_params`.
    intercepts : list of ndarray of shape (fan_out,)
        Bias vectors.
    activation : {"identity", "logistic", "tanh", "relu"}
        Hidden-layer activation.
    dropout : float in [0, 1), default=0.0
        Probability of zeroing each hidden unit's output (training only);
        the kept ones are scaled by ``1 / (1 - dropout)`` ("inverted"
        dropout, so that ``predict`` needs no rescaling).
    random_state : numpy.random.Generator, default=None
        Draws the dropout masks; required when ``dropout > 0``.
    first_product : ndarray of shape (n_samples, coefs[0].shape[1]), default=None
        ``X @ coefs[0]`` computed by the caller (networks trained together
        share one product over their stacked first layers, ``_stack.py``);
        it is overwritten. ``X`` may then be None.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        Output of the network.
    cache : ForwardCache
        Only read (never modified) by :func:`backward`.
    """
    _check_activation(activation)
    cache = ForwardCache(X)
    if dropout:
        cache.keep_scale = 1.0 / (1.0 - dropout)
    A = X
    n_layers = len(coefs)
    for i, (coef, intercept) in enumerate(zip(coefs, intercepts)):
        product = first_product if i == 0 else None
        if i == n_layers - 2 and not dropout:
            A, scores = _last_hidden(A, coefs, intercepts, activation, i == 0, product)
            cache.activations.append(A)
            cache.kept.append(None)
            cache.inputs.append(A)
            return scores, cache
        hidden = i < n_layers - 1
        A = _layer(A, coef, intercept, activation if hidden else None, i == 0, product)
        if hidden:
            cache.activations.append(A)
            if dropout:
                kept = random_state.random(A.shape, dtype=np.float32) >= dropout
                A = A * kept
                A *= A.dtype.type(cache.keep_scale)
                cache.kept.append(kept)
            else:
                cache.kept.append(None)
            cache.inputs.append(A)
    return A[:, 0], cache


def predict_scores(X, coefs, intercepts, activation):
    """Scores of every sample, keeping only one layer's activations at a time.

    Same result as ``forward(X, ...)[0]``, bit for bit.

    Parameters
    ----------
    X : {ndarray, sparse CSR matrix} of shape (n_samples, n_features)
        Input samples, float64 or float32.
    coefs : list of ndarray of shape (fan_in, fan_out)
        Weight matrices.
    intercepts : list of ndarray of shape (fan_out,)
        Bias vectors.
    activation : {"identity", "logistic", "tanh", "relu"}
        Hidden-layer activation.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
    """
    _check_activation(activation)
    A = X
    n_layers = len(coefs)
    for i, (coef, intercept) in enumerate(zip(coefs, intercepts)):
        if i == n_layers - 2:
            return _last_hidden(A, coefs, intercepts, activation, i == 0)[1]
        A = _layer(A, coef, intercept, activation if i < n_layers - 1 else None, i == 0)
    return A[:, 0]


def backward(cache, upstream, coefs, activation, *, first_delta=False):
    """Gradient of a loss with respect to every parameter (backpropagation).

    Given ``upstream[i] = dC/ds_i``, returns ``dC/dW = sum_i upstream[i] *
    ds_i/dW`` for every weight and intercept. No regularization is added; see
    :func:`add_l2`.

    Parameters
    ----------
    cache : ForwardCache
        Second output of :func:`forward` for the same ``coefs`` (not modified).
    upstream : array-like of shape (n_samples,)
        Gradient of the loss with respect to each score.
    coefs : list of ndarray of shape (fan_in, fan_out)
        Weight matrices used in the forward pass.
    activation : {"identity", "logistic", "tanh", "relu"}
        Hidden-layer activation used in the forward pass.
    first_delta : bool, default=False
        Stop before the first layer's weight gradient: ``coef_grads[0]`` is
        then ``dC/dZ`` of the first layer, shape ``(n_samples,
        coefs[0].shape[1])``, for the caller to multiply by the inputs
        (networks trained together do it for all of them in one product).

    Returns
    -------
    coef_grads : list of ndarray of shape (fan_in, fan_out)
        Same shapes as ``coefs``.
    intercept_grads : list of ndarray of shape (fan_out,)
        Same shapes as the intercepts.
    """
    _check_activation(activation)
    n_layers = len(coefs)
    dtype = coefs[-1].dtype
    delta = as_kernel_array(upstream, dtype).reshape(-1, 1)  # dC/dZ, output
    coef_grads = [None] * n_layers
    intercept_grads = [None] * n_layers
    top = n_layers - 1
    if n_layers > 1 and cache.kept[-1] is None:  # the output and last hidden layer fused
        A = cache.activations[-1]
        hidden_delta = np.empty_like(A)
        output_coef_grad = np.empty(A.shape[1], dtype=dtype)
        intercept_grads[-2] = np.empty(A.shape[1], dtype=dtype)
        output_intercept = _last_hidden_backward(
            A, delta[:, 0], as_kernel_array(coefs[-1].ravel(), dtype), _ACTIVATION_CODES[activation],
            hidden_delta, output_coef_grad, intercept_grads[-2],
        )
        coef_grads[-1] = output_coef_grad.reshape(-1, 1)
        intercept_grads[-1] = np.array([output_intercept], dtype=dtype)
        delta, top = hidden_delta, n_layers - 2
    for i in range(top, -1, -1):
        A = cache.inputs[i]
        if i == 0 and first_delta:
            coef_grads[0] = delta
        else:
            grad = safe_sparse_dot(A.T, delta) if i == 0 else A.T @ delta
            coef_grads[i] = np.asarray(grad, dtype=dtype)
        if intercept_grads[i] is None:
            # Column sums as a matrix-vector product: BLAS does it in a third
            # of the time of delta.sum(axis=0).
            intercept_grads[i] = np.ones(len(delta), dtype=dtype) @ delta
        if i > 0:
            # dC/d(input) of layer i. From the one-unit output layer it is an
            # outer product, which broadcasting does in half matmul's time.
            delta = delta * coefs[i][:, 0] if delta.shape[1] == 1 else delta @ coefs[i].T
            if cache.kept[i] is not None:  # back through the dropout
                delta *= cache.kept[i]
                delta *= dtype.type(cache.keep_scale)
            _DERIVATIVES[activation](cache.activations[i], delta)  # -> dC/dZ
    return coef_grads, intercept_grads


def l2_penalty(coefs, strength):
    """``0.5 * strength * sum(||W||_F**2)`` over the weights (not intercepts).

    Parameters
    ----------
    coefs : list of ndarray of shape (fan_in, fan_out)
    strength : float

    Returns
    -------
    penalty : float
    """
    return 0.5 * strength * sum(float(np.vdot(W, W)) for W in coefs)


def add_l2(coef_grads, coefs, strength):
    """Add the gradient of :func:`l2_penalty`, ``strength * W``, in place.

    Intercepts are not penalized, as in ``MLPRegressor``. Any scaling (e.g.
    ``alpha / n_samples``) is the caller's choice.

    Parameters
    ----------
    coef_grads : list of ndarray of shape (fan_in, fan_out)
        Modified in place.
    coefs : list of ndarray of shape (fan_in, fan_out)
    strength : float

    Returns
    -------
    coef_grads : list of ndarray
        The same list, for chaining.
    """
    if strength:
        for grad, W in zip(coef_grads, coefs):
            grad += strength * W
    return coef_grads


def pack(coefs, intercepts):
    """Concatenate all parameters (or gradients) into one flat vector.

    Order: every ``coefs[i].ravel()`` (C order), then every ``intercepts[i]``,
    as ``MLPRegressor`` does for L-BFGS.

    Parameters
    ----------
    coefs : list of ndarray of shape (fan_in, fan_out)
    intercepts : list of ndarray of shape (fan_out,)

    Returns
    -------
    vector : ndarray of shape (n_params,)
        A new array.

    Examples
    --------
    >>> import numpy as np
    >>> coefs, intercepts = init_params(3, (2,), "relu", np.random.RandomState(0))
    >>> vector = pack(coefs, intercepts)
    >>> vector.shape
    (11,)
    >>> c, b = unpack(vector, layer_sizes(3, (2,)))
    >>> all(np.array_equal(x, y) for x, y in zip(c + b, coefs + intercepts))
    True
    """
    return np.concatenate([np.ravel(p) for p in [*coefs, *intercepts]]).astype(
        np.float64, copy=False
    )


def unpack(vector, sizes):
    """Inverse of :func:`pack`.

    Parameters
    ----------
    vector : ndarray of shape (n_params,)
        Flat parameters, as built by :func:`pack`.
    sizes : sequence of int
        Layer sizes, ``layer_sizes(n_features, hidden_layer_sizes)``.

    Returns
    -------
    coefs : list of ndarray of shape (fan_in, fan_out)
    intercepts : list of ndarray of shape (fan_out,)
        **Views** into ``vector`` (no copy): copy them before keeping them if
        ``vector`` may be reused, e.g. by an optimizer.
    """
    vector = np.asarray(vector)
    pairs = list(zip(sizes[:-1], sizes[1:]))
    n_params = sum(a * b + b for a, b in pairs)
    if vector.shape != (n_params,):
        raise ValueError(
            f"Expected a vector of shape ({n_params},) for layer sizes "
            f"{list(sizes)}, got shape {vector.shape}."
        )
    coefs, intercepts, start = [], [], 0
    for fan_in, fan_out in pairs:
        end = start + fan_in * fan_out
        coefs.append(vector[start:end].reshape(fan_in, fan_out))
        start = end
    for _, fan_out in pairs:
        intercepts.append(vector[start : start + fan_out])
        start += fan_out
    return coefs, intercepts
