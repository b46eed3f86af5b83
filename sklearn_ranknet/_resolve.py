"""Every "auto" value, resolved in one place.

:func:`resolve` takes a ranker's parameters, its table of rules
(:class:`AutoRules`) and the shape of the training data (:class:`DataShape`),
and returns one :class:`Resolved` record. The estimator publishes it after
``fit`` as ``<parameter>_`` for each parameter that accepts "auto"
(``alpha_``, ``batch_size_``, ...); the training loop reads only the record.
The rules, and why each is there, are the User Guide's "Choosing" table
(``docs/user_guide/choosing.rst``): keep the two in step.

A resolved value is the one that, passed explicitly, gives the same fit.
"""

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from ._inputs import stays_sparse
from ._missingness import missing_count
from ._noise import AUTO_INPUT_NOISE, auto_input_noise

#: Data counts as large from this many training rows
#: (``HistGradientBoostingRegressor``'s threshold), for LambdaRank and ListNet
#: *and* ``SMALL_DATA_QUERIES`` queries: early stopping turns on, and the
#: size-dependent rules take their large-data values.
SMALL_DATA_ROWS = 10_000
#: Fewer queries leave early stopping too few to judge by (30 at the default
#: ``validation_fraction``): on 100-200 training queries of 12,000-24,000
#: rows it stopped on noise, and LambdaRank's and ListNet's small-data rules
#: ranked better (RankNet's did not: its rules count rows only).
SMALL_DATA_QUERIES = 300
#: ``n_iter_no_change="auto"``: ``PATIENCE`` epochs below
#: ``PATIENCE_LARGE_ROWS`` training rows, ``PATIENCE_LARGE`` from there.
PATIENCE = 5
PATIENCE_LARGE = 3
PATIENCE_LARGE_ROWS = 100_000
#: ``ema_momentum="auto"`` when the fit holds out no validation set.
EMA_MOMENTUM = 0.9975
#: "auto" ``alpha`` is divided by one minus the share of the training
#: values that are missing (NaN), that share counted up to this much.
MISSING_SHARE_CAP = 0.9


@dataclass(frozen=True)
class AutoRules:
    """One ranker's "auto" values. A pair is (small, large) data (see
    ``SMALL_DATA_ROWS``; below ``SMALL_DATA_QUERIES`` too where
    ``few_queries_are_small``); None where the ranker's parameter takes no
    "auto". ``query_scaled`` holds the values that replace them on small data
    whose features are min-max scaled within each query (LETOR's form), by
    parameter name; its "input_noise" is the level reached on redundant
    features."""

    batch_size: int = 32
    hidden_layer_sizes: tuple = None
    alpha: tuple = None
    learning_rate_init: tuple = None
    normalize_lambdas: tuple = None
    few_queries_are_small: bool = False
    query_scaled: dict = field(default_factory=dict)


RANKNET = AutoRules()
LAMBDARANK = AutoRules(
    batch_size=16,
    hidden_layer_sizes=((128,), (64,)),
    alpha=(5.0, 15.0),
    learning_rate_init=(6e-3, 1e-3),
    normalize_lambdas=(True, False),
    few_queries_are_small=True,
    # RankNet's width and minibatch, and more noise.
    query_scaled={"hidden_layer_sizes": (64,), "batch_size": 32, "input_noise": 3.0},
)
LISTNET = AutoRules(learning_rate_init=(3e-3, 1e-3), few_queries_are_small=True, query_scaled={"input_noise": 3.0})


class DataShape:
    """What the rules read of the training data.

    Parameters
    ----------
    n_rows, n_queries : int
        Training rows and queries of positive weight (before any validation
        split; on Dask, of all partitions).
    data : TrainingSet or None
        Those queries, where the rows are at hand (None on Dask): the
        small-data rules that look at the features (the noise level, the
        scaling within queries) read them, on demand.
    dtype : numpy dtype, default=float64
        The dtype of the training rows.
    missing_share : float or None, default=None
        The share of the training rows' feature values that are missing
        (NaN); None reads it from ``data`` on demand (0 without it).
    """

    def __init__(self, n_rows, n_queries, data=None, dtype=np.float64, missing_share=None):
        self.n_rows, self.n_queries, self.data = n_rows, n_queries, data
        self.dtype = np.dtype(dtype)
        self._missing_share = missing_share

    @classmethod
    def of(cls, data):
        """The shape of a ``TrainingSet``: its queries of positive weight."""
        weighted = data.weighted
        return cls(len(weighted.rows), weighted.n_queries, weighted, data.X.dtype)

    @property
    def missing_share(self):
        if self._missing_share is None:
            data = self.data
            n_values = 0 if data is None else len(data.rows) * data.X.shape[1]
            self._missing_share = missing_count(data.X, data.rows) / n_values if n_values else 0.0
        return self._missing_share


@dataclass(frozen=True)
class Resolved:
    """The resolved values of one fit (see :func:`resolve`)."""

    hidden_layer_sizes: tuple
    alpha: float
    batch_size: int
    learning_rate_init: float
    n_iter_no_change: int
    early_stopping: bool
    ema_momentum: float
    input_noise: float
    normalize_lambdas: bool
    #: The dtype the network trains in: "float32" or "float64".
    precision: str
    #: Whether the small-data, scaled-within-queries values applied.
    query_scaled: bool


def resolve(params, rules, shape, *, incremental=False, distributed=False, fitted_widths=None,
            fitted_precision=None, validation_given=False):
    """The values of a fit, "auto" resolved.

    Parameters
    ----------
    params : dict
        The ranker's parameters (``get_params(deep=False)``).
    rules : AutoRules
    shape : DataShape
    incremental : bool, default=False
        ``partial_fit``: the data's size is not known in advance, so the
        size-dependent rules take their large-data values, and nothing is
        held out.
    distributed : bool, default=False
        A Dask fit: the rows are not at hand (``shape.data`` is None) and
        the rules that read them are off, as is weight averaging.
    fitted_widths : tuple or None, default=None
        The hidden layers of a fitted network that this fit continues
        (``warm_start``, ``partial_fit``): it keeps them.
    fitted_precision : {"float32", "float64"} or None, default=None
        The precision that fitted network trained in: it keeps it too.
    validation_given : bool, default=False
        ``fit`` got a validation set (``X_val``): "auto" early stopping
        stops on it, at any size.

    Returns
    -------
    resolved : Resolved
    """
    stochastic = params["solver"] != "lbfgs"
    small = shape.n_rows < SMALL_DATA_ROWS or (rules.few_queries_are_small and shape.n_queries < SMALL_DATA_QUERIES)
    # partial_fit does not know the data's size: it takes the large values.
    small_data = small and not incremental
    # The rules that read the features apply to a fit on small data in hand.
    small_fit = small_data and not distributed
    query_scaled = bool(rules.query_scaled) and small_fit and shape.data.scaled_within_queries
    scaled = rules.query_scaled if query_scaled else {}

    def auto(name):
        return isinstance(params.get(name), str) and params[name] == "auto"

    def by_size(pair):
        return pair[0] if small_data else pair[1]

    if auto("hidden_layer_sizes"):
        hidden = fitted_widths if fitted_widths is not None else scaled.get(
            "hidden_layer_sizes", by_size(rules.hidden_layer_sizes))
    else:
        hidden = hidden_layer_sizes(params["hidden_layer_sizes"])
    if auto("learning_rate_init"):
        step = by_size(rules.learning_rate_init)
    else:
        step = float(params["learning_rate_init"])
    if auto("early_stopping"):
        n_val = int(np.ceil(params["validation_fraction"] * shape.n_queries))
        early_stopping = validation_given or (not small and 2 <= n_val < shape.n_queries)
    else:
        early_stopping = bool(params["early_stopping"])
    early_stopping = early_stopping and stochastic and not incremental
    if auto("input_noise"):
        noise = 0.0
        if small_fit and stochastic:
            noise = auto_input_noise(shape.data.X, shape.data.rows, scaled.get("input_noise", AUTO_INPUT_NOISE))
    else:
        noise = float(params["input_noise"])
    if auto("ema_momentum"):
        ema = 0.0 if early_stopping or distributed or not stochastic else EMA_MOMENTUM
    else:
        ema = params["ema_momentum"]
    if auto("n_iter_no_change"):
        patience = PATIENCE if shape.n_rows < PATIENCE_LARGE_ROWS else PATIENCE_LARGE
    else:
        patience = params["n_iter_no_change"]
    if auto("precision"):
        precision = fitted_precision or _auto_precision(params, shape, stochastic, distributed)
    else:
        precision = params.get("precision", shape.dtype.name)
    normalize = params.get("normalize_lambdas", False)
    if auto("normalize_lambdas"):
        normalize = rules.normalize_lambdas[0] if small_fit else rules.normalize_lambdas[1]
    return Resolved(
        hidden_layer_sizes=hidden,
        alpha=_auto_alpha(by_size(rules.alpha), shape, incremental) if auto("alpha") else float(params["alpha"]),
        batch_size=scaled.get("batch_size", rules.batch_size) if auto("batch_size") else params["batch_size"],
        learning_rate_init=step,
        n_iter_no_change=patience,
        early_stopping=early_stopping,
        ema_momentum=ema,
        input_noise=noise,
        normalize_lambdas=bool(normalize),
        precision=precision,
        query_scaled=query_scaled,
    )


def _auto_precision(params, shape, stochastic, distributed):
    """float32 for a stochastic fit of float64 rows in hand that the input
    scaling turns into dense network inputs: float32 products are faster
    (User Guide, "Performance"), the rows are scaled in float64 before the cast (so a
    feature far from 0 keeps its resolution), and the lambdas stay float64.
    Otherwise the rows' own dtype: L-BFGS's line search and curvature pairs
    want float64, raw rows (``feature_scaling=None``) would be rounded
    before anything else, CSR that stays sparse gains little, and on Dask
    the partitions train as they are."""
    if not stochastic or distributed or shape.dtype != np.float64 or params["feature_scaling"] is None:
        return shape.dtype.name
    if params["feature_scaling"] == "standard" and shape.data is not None and stays_sparse(shape.data.X):
        return shape.dtype.name
    return "float32"


def auto_parameters(constraints):
    """Names of the parameters that accept "auto", from a ranker's
    ``_parameter_constraints``: those whose resolved value is published."""
    return tuple(
        name for name, options in constraints.items()
        if any("auto" in getattr(option, "options", ()) for option in options)
    )


def hidden_layer_sizes(sizes):
    """``hidden_layer_sizes`` given explicitly, as a tuple of ints."""
    given = sizes
    sizes = [sizes] if isinstance(sizes, Integral) else list(sizes)
    if not all(isinstance(h, Integral) and h > 0 for h in sizes):
        raise ValueError(
            "hidden_layer_sizes must hold positive integers (one per hidden "
            f"layer, empty for a linear model); got {given!r}."
        )
    return tuple(int(h) for h in sizes)


def _auto_alpha(alpha, shape, incremental):
    """The "auto" ``alpha`` of the data's size, divided by one minus the
    share of the training values that are missing (NaN; up to
    ``MISSING_SHARE_CAP``): where much of every row is missing, the rows say
    less, and stronger L2 ranked better on training folds (User Guide,
    "Missing values"). ``partial_fit`` sees one batch at a time and keeps
    the size's value."""
    if incremental:
        return alpha
    return alpha / (1.0 - min(shape.missing_share, MISSING_SHARE_CAP))
