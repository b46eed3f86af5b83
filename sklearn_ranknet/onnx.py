"""Export fitted rankers to ONNX through skl2onnx (optional extra).

Importing this module registers a converter with skl2onnx for every ranker
of the package (:class:`~sklearn_ranknet.RankNetRanker`,
:class:`~sklearn_ranknet.LambdaRankRanker`,
:class:`~sklearn_ranknet.ListNetRanker`,
:class:`~sklearn_ranknet.BaggingRanker`, and the CV rankers
(:class:`~sklearn_ranknet.LambdaRankRankerCV` and its siblings, which export
the network of their refit setting). After that, skl2onnx's own
``skl2onnx.to_onnx`` and ``skl2onnx.convert_sklearn`` convert a fitted ranker,
or a scikit-learn Pipeline ending in one (the other steps converted by
skl2onnx itself), into an ONNX model that any ONNX runtime can serve, e.g.
onnxruntime. The core package never imports skl2onnx; install the extra with
``pip install ".[onnx]"`` from the repository's folder.

Notes
-----
**The exported graph.**

* Input: one tensor of shape ``(N, n_columns)``, the rows ``predict``
  takes. Scores are pointwise: no query ids are needed. A ranker whose
  ``query_column`` (or ``position_column``) is a column position takes that
  column too and drops it (Gather), as ``predict`` does; its values do not
  matter.
* Output: one tensor named ``"variable"`` of shape ``(N, 1)`` holding the
  scores, as skl2onnx exports ``MLPRegressor`` and the other regressors.
  ``.ravel()`` it to compare with ``predict(X)``, whose shape is ``(N,)``.
* Precision: the graph computes in the input's type, as skl2onnx's
  converters do: float32 input (``to_onnx(model, X.astype(np.float32))``,
  the usual choice) gives a float32 graph and float32 scores, float64 input
  a float64 graph; int64 and bool input is cast to float32 (skl2onnx refuses
  other types, such as int32 and float16, as for its own regressors). The weights are
  stored in that type, whatever the precision the model was trained in.
* Input scaling (``feature_scaling``) is computed as ``predict`` computes it
  on dense rows, not folded into the first layer: ``sign(x) * log1p(|x|)``
  for ``"log1p"`` (ops Sign, Abs, Add, Sub, Div, Log, Mul: a correction term
  keeps ``log1p`` accurate for small ``|x|``, where ``log(1 + |x|)`` is
  not), then ``(x - mean) * (1 / scale)`` (ops Sub, Mul). A float64 mean is stored
  in a float32 graph as the sum of two float32 numbers and subtracted in two
  steps, so a feature whose mean dwarfs its spread (e.g. ``1e4 + N(0, 1)``)
  keeps its float32 precision. For ``"log1p"`` a float32 graph also avoids
  rounding the log itself before the mean is subtracted (which would keep
  2-3 digits of the variation of ``log1p(1e4 + N(0, 1))``): where ``x`` is on
  the mean's side of 0 and at least half of ``c = expm1(|mean|)``, it
  computes ``log1p(|x|) - |mean|`` as ``log1p((|x| - c) / (1 + c))`` (ops
  Less and Where pick the rows). A model trained in float32 rounds the log
  to float32 in its own ``predict``, so its scores agree with the graph's
  only to that rounding. ``"piecewise"`` encodes first: each feature
  is gathered once per bin (Gather), then ``min(max((x - lower) * (1 / width),
  0), 1) - level`` (ops Sub, Mul, Max, Min, Sub) gives its bins' inputs, which
  are standardized as above.
* Missing values (NaN) are scored as ``predict`` scores them: the inputs of
  a missing value are 0 after standardization, or for a feature with a
  missing indicator (``missing_features_``) those of the present value its
  missing values read as (ops IsNaN and Where on the features, or on their
  gathered bins), and each such feature adds its indicator, standardized
  (ops Gather, IsNaN, Cast, then Concat after the other inputs). Without input scaling
  (``feature_scaling=None``) ``predict`` refuses NaN and a graph scores it
  NaN.
* Infinite input: ``predict`` raises ValueError on infinite values (and on
  rows whose scores overflow), but a graph cannot raise. An infinite value
  scores NaN under ``"log1p"``, ``inf``, ``-inf`` or NaN under
  ``"standard"`` and None, and under ``"piecewise"`` as any value beyond the
  largest (or smallest) bin edge: a finite score. Check inputs before
  serving (e.g. ``np.isinf(X).any(axis=1)``) where such values can occur.
* Network: MatMul and Add per layer; Sigmoid, Tanh or Relu after each hidden
  layer (nothing for ``"identity"``); the output layer is linear.
* BaggingRanker: every member is converted by its own converter (a member
  may be a Pipeline), then the scores are summed (Sum) and divided by the
  number of members (Div).
* Opset: 9 or later (Sign, IsNaN, Where).

**What is refused.** A model this module does not fully understand raises an
error instead of exporting wrong scores: an unfitted model
(:class:`~sklearn.exceptions.NotFittedError`); a ranker whose
``query_column`` or ``position_column`` is a column *name*
(:class:`NotImplementedError`: the graph never sees column names; give the
column's position, or refit without it); a BaggingRanker with a
``query_column`` or ``position_column`` of its own (:class:`NotImplementedError`
naming the refit that exports: the position on its estimator, or, with
``bootstrap=True``, which needs the column on the ensemble, ``groups``);
a fitted state other than the one described above (an unknown activation,
input scaling or layer shapes: :class:`ValueError`). As a last guard, every
conversion recomputes the exported function with NumPy on a few synthetic
rows and compares it with the model's own ``predict``: a disagreement (say,
an option added to the rankers after this converter was written) is a
:class:`RuntimeError`, never a silent export.

Examples
--------
>>> import numpy as np
>>> import onnxruntime as ort
>>> from skl2onnx import to_onnx
>>> import sklearn_ranknet.onnx  # registers the converters
>>> from sklearn_ranknet import LambdaRankRanker
>>> from sklearn_ranknet.datasets import make_ranking
>>> X, y, qid = make_ranking(n_queries=20, random_state=0)
>>> ranker = LambdaRankRanker(hidden_layer_sizes=(8,), max_iter=5,
...                           random_state=0).fit(X, y, groups=qid)
>>> onx = to_onnx(ranker, X[:1].astype(np.float32))
>>> session = ort.InferenceSession(onx.SerializeToString(),
...                                providers=["CPUExecutionProvider"])
>>> [o.name for o in session.get_outputs()]
['variable']
>>> scores = session.run(None, {"X": X.astype(np.float32)})[0]
>>> scores.shape == (len(X), 1), scores.dtype
(True, dtype('float32'))
>>> np.allclose(scores.ravel(), ranker.predict(X), rtol=1e-4, atol=1e-5)
True
"""

import functools
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

try:
    import skl2onnx
    from skl2onnx.common._apply_operation import (
        apply_add,
        apply_cast,
        apply_div,
        apply_mul,
        apply_reshape,
        apply_sub,
    )
    from skl2onnx.common.data_types import (
        BooleanTensorType,
        DoubleTensorType,
        FloatTensorType,
        Int64TensorType,
        guess_tensor_type,
    )
    from skl2onnx.common.utils import check_input_and_output_numbers, check_input_and_output_types
    from skl2onnx.proto import onnx_proto
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "sklearn_ranknet.onnx needs skl2onnx (and onnxruntime to run the "
        "exported models): pip install skl2onnx onnxruntime"
    ) from exc

from ._bagging import BaggingRanker
from ._cv import LambdaRankRankerCV, ListNetRankerCV, RankNetRankerCV
from ._inputs import FEATURE_SCALINGS, InputScaling
from ._lambdarank import LambdaRankRanker
from ._listnet import ListNetRanker
from ._metadata_columns import _CALLED, metadata_columns
from ._model import RankingModel
from ._ranknet import RankNetRanker
from ._twins import announced, subscribe

__all__ = ["register_converters", "to_onnx"]

#: The rankers with their own network, and the skl2onnx alias of each. A
#: fitted CV ranker holds the network of its refit (best) setting, and
#: exports as that ranker does.
RANKER_ALIASES = {
    RankNetRanker: "SklearnRanknetRankNetRanker",
    LambdaRankRanker: "SklearnRanknetLambdaRankRanker",
    ListNetRanker: "SklearnRanknetListNetRanker",
    RankNetRankerCV: "SklearnRanknetRankNetRankerCV",
    LambdaRankRankerCV: "SklearnRanknetLambdaRankRankerCV",
    ListNetRankerCV: "SklearnRanknetListNetRankerCV",
}
BAGGING_ALIAS = "SklearnRanknetBaggingRanker"

#: ONNX operator of each hidden-layer activation (None: no operator).
_ONNX_ACTIVATIONS = {"identity": None, "logistic": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}
#: Sign, the newest operator the graph uses, appeared in opset 9.
_MIN_OPSET = 9
_INPUT_TYPES = [FloatTensorType, DoubleTensorType, Int64TensorType, BooleanTensorType]


# ----------------------------------------------------------------------
# What the converter reads from a fitted ranker


class _RankerFunction:
    """The scoring function of a fitted ranker, as the converter exports it.

    ``dropped`` are the columns of ``X`` that hold metadata, in increasing
    order (an integer ``query_column`` and ``position_column``, made
    non-negative; usually none); ``kind`` is None
    or one of ``FEATURE_SCALINGS``; ``mean`` and ``scale`` are the statistics
    of the transformed features (None without scaling); ``encoding`` the
    ``PiecewiseEncoding`` of ``kind="piecewise"`` (else None); ``indicated``
    the features with a missing indicator input (after the others; ``mean``
    and ``scale`` end with theirs) and ``imputed`` the values their missing
    values read as (NaN: the mean); ``coefs`` and ``intercepts`` the
    model's own layers, which run on the scaled rows.
    """

    def __init__(self, dropped, kind, mean, scale, encoding, coefs, intercepts, activation, indicated,
                 imputed=None):
        self.dropped = dropped
        self.kind, self.mean, self.scale, self.encoding = kind, mean, scale, encoding
        self.coefs, self.intercepts, self.activation = coefs, intercepts, activation
        self.indicated = np.zeros(0, dtype=np.int64) if indicated is None else indicated
        self.imputed = imputed

    def scaling(self):
        """The input scaling the converter read (None without one)."""
        if self.kind is None:
            return None
        return InputScaling(self.kind, self.mean, self.scale, self.encoding, self.indicated, self.imputed)

    @property
    def n_transformed(self):
        """Scaled inputs before the missing indicators."""
        return self.coefs[0].shape[0] - len(self.indicated)

    @property
    def n_features(self):
        if self.encoding is not None:
            return len(self.encoding.edges)
        return self.n_transformed

    @property
    def n_columns(self):
        """Columns of the input: the features, and the metadata columns if any."""
        return self.n_features + len(self.dropped)

    def kept_columns(self):
        return np.setdiff1d(np.arange(self.n_columns), self.dropped)

    def scores(self, X):
        """The scores of dense ``X`` (metadata columns included) by the one
        scoring function, ``RankingModel.scores``, of a model rebuilt from
        what the converter read: ``predict`` agrees with it only if those
        pieces are all it depends on."""
        model = RankingModel(
            self.coefs, self.intercepts, self.activation,
            self.scaling(),
        )
        return model.scores(np.array(X, dtype=np.float64)[:, self.kept_columns()])


def _metadata_positions(model, n_features):
    """The input columns holding metadata (``query_column`` and
    ``position_column``), in increasing order; usually none.

    An integer position is dropped in the graph (Gather); a column name only
    means something for a DataFrame, which the exported graph never sees.
    """
    columns = metadata_columns(model)
    n_columns = n_features + len(columns)
    positions = []
    for parameter, column in columns.items():
        if isinstance(column, (int, np.integer)) and not isinstance(column, bool):
            if not -n_columns <= column < n_columns:
                raise ValueError(
                    f"Cannot export {type(model).__name__}: {parameter}={column} is "
                    f"out of range for {n_columns} columns."
                )
            positions.append(int(column) % n_columns)
            continue
        raise NotImplementedError(
            f"{type(model).__name__}({parameter}={column!r}) reads the "
            f"{'query ids' if parameter == 'query_column' else 'positions'} from a named column of a DataFrame, which the ONNX export does not support "
            f"yet. Remove the {_CALLED[parameter][4:]} before export: refit the ranker on X without "
            f"that column ({parameter}=None, and the values passed to fit), or give the "
            f"column's position instead ({parameter}=<int>), which the exported graph "
            "drops."
        )
    return sorted(positions)


def _check_no_metadata_column(model):
    """Refuse a BaggingRanker that reads query ids or positions from a
    column of X, with the refit that exports: its fit refuses a query column
    on a bootstrapped ensemble's estimator, so the fix depends on
    ``bootstrap``."""
    for parameter, column in metadata_columns(model).items():
        holds, argument = (
            ("query ids", "groups=<query id per row>") if parameter == "query_column"
            else ("positions", "positions=<rank shown at, per row>")
        )
        if getattr(model, "bootstrap", False) and parameter == "query_column":
            fix = (
                "With bootstrap=True the column cannot move to its estimator (the members "
                "must get the query ids of their sample), so refit it on X without the "
                f"query column, passing the query ids as {argument} to fit."
            )
        else:
            position = column if isinstance(column, (int, np.integer)) else "<position>"
            template = getattr(model, "estimator_", None) or getattr(model, "estimator", None)
            name = type(template).__name__ if template is not None else "LambdaRankRanker"
            fix = (
                "Refit with the column's position on its estimator instead "
                f"(BaggingRanker({name}({parameter}={position}, ...))): the members' "
                "graphs drop a column given by position. Or refit without the column, "
                f"passing the {holds} as {argument} to fit."
            )
        raise NotImplementedError(
            f"{type(model).__name__}({parameter}={column!r}) reads the {holds} "
            f"from a column of X, which its ONNX export does not support. {fix}"
        )


def _check_fitted(model, attribute):
    try:
        check_is_fitted(model, attribute)
    except NotFittedError as exc:
        raise NotFittedError(
            f"This {type(model).__name__} instance is not fitted yet: fit it before "
            "converting it to ONNX."
        ) from exc


def _ranker_function(model):
    """Read and validate the fitted state of a ranker: a clear error for
    anything the converter does not reproduce exactly."""
    name = type(model).__name__
    _check_fitted(model, "coefs_")
    fitted = model._model  # the RankingModel that predict runs
    activation = fitted.activation
    if activation not in _ONNX_ACTIVATIONS:
        raise ValueError(f"Cannot export {name} with activation={activation!r} to ONNX.")
    coefs, intercepts = list(fitted.coefs), list(fitted.intercepts)
    n_features = getattr(model, "n_features_in_", None)
    scaling = fitted.scaling
    encoding = getattr(scaling, "encoding", None)
    indicated = getattr(scaling, "indicated", None)
    imputed = getattr(scaling, "imputed", None)
    n_indicators = 0 if indicated is None else len(indicated)
    n_inputs = (n_features if encoding is None else getattr(encoding, "n_inputs", None)) + n_indicators
    fan_in = n_inputs
    if not coefs or len(coefs) != len(intercepts):
        raise ValueError(f"Cannot export {name}: unexpected layers in coefs_ / intercepts_.")
    for W, b in zip(coefs, intercepts):
        W, b = np.asarray(W), np.asarray(b)
        if (
            W.ndim != 2
            or W.shape[0] != fan_in
            or b.shape != (W.shape[1],)
            or W.dtype.kind != "f"
            or b.dtype.kind != "f"
        ):
            raise ValueError(
                f"Cannot export {name}: its layers do not chain from "
                f"n_features_in_={n_features} ({n_inputs} inputs; coefs_ shapes "
                f"{[np.shape(c) for c in coefs]}, intercepts_ shapes "
                f"{[np.shape(c) for c in intercepts]})."
            )
        fan_in = W.shape[1]
    if fan_in != 1:
        raise ValueError(f"Cannot export {name}: the output layer has {fan_in} units, not 1.")

    if scaling is None:
        kind = mean = scale = None
    else:
        kind = getattr(scaling, "kind", None)
        mean = np.asarray(getattr(scaling, "mean", None))
        scale = np.asarray(getattr(scaling, "scale", None))
        if (
            kind not in FEATURE_SCALINGS
            or (kind == "piecewise") != (encoding is not None)
            or mean.shape != (n_inputs,)
            or scale.shape != (n_inputs,)
            or mean.dtype.kind != "f"
            or scale.dtype.kind != "f"
            or (n_indicators and not (0 <= np.min(indicated) and np.max(indicated) < n_features))
            or (imputed is not None and np.shape(imputed) != (n_indicators,))
        ):
            raise ValueError(
                f"Cannot export {name}: unknown input scaling (kind={kind!r}); "
                f"the ONNX converter knows {list(FEATURE_SCALINGS)} and None."
            )
    dropped = _metadata_positions(model, n_features)
    return _RankerFunction(dropped, kind, mean, scale, encoding, coefs, intercepts, activation, indicated, imputed)


def _probe_rows(function, n_features, n_rows=6):
    """Deterministic synthetic rows spread over the training range of each
    feature (mean +- 2 standard deviations after the transform; the bin
    edges and a little beyond for ``"piecewise"``)."""
    z = np.random.RandomState(0).normal(size=(n_rows, n_features))
    if function.kind is None:
        return z
    if function.kind == "piecewise":
        low = np.array([e[0] for e in function.encoding.edges], dtype=np.float64)
        high = np.array([e[-1] for e in function.encoding.edges], dtype=np.float64)
        rows = low + (high - low) * (0.5 + 0.4 * z)
    else:
        n = function.n_transformed
        t = function.mean[:n].astype(np.float64) + function.scale[:n].astype(np.float64) * z
        rows = np.sign(t) * np.expm1(np.minimum(np.abs(t), 700.0)) if function.kind == "log1p" else t
    # Missing values (read by the scaling): every other value of one row,
    # and the features with an indicator in another.
    rows[1, ::2] = np.nan
    rows[2, function.indicated] = np.nan
    return rows


def _verify_against_predict(model, function):
    """The converter's last guard: the exported function and ``predict``
    must agree on a few rows (in float64, where both are accurate), so that
    a fitted state this converter does not know about (a new option that
    changes ``predict``) is an error rather than a silently wrong export."""
    X = _probe_rows(function, function.n_features)
    for column in function.dropped:  # any query ids and positions will do (increasing order)
        X = np.insert(X, column, 1.0, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "X does not have valid feature names"
        try:
            expected = np.asarray(model.predict(X), dtype=np.float64)
        except Exception as exc:
            raise RuntimeError(
                f"Cannot export {type(model).__name__}: its predict failed on "
                f"synthetic rows ({exc!r}), so the export cannot be checked."
            ) from exc
        exported = function.scores(X)
    scale = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0))
    if not np.allclose(exported, expected, rtol=1e-6, atol=1e-9 * scale, equal_nan=True):
        raise RuntimeError(
            f"Cannot export {type(model).__name__}: the function the ONNX converter "
            "would export does not reproduce its predict (the model may use an "
            "option this converter does not know). Nothing was exported; please "
            "report it."
        )


# ----------------------------------------------------------------------
# Shape calculators


def _calculate_ranker_output_shapes(operator):
    """One input of shape (N, n_columns), one output of shape (N, 1) in the
    input's float type (float32 for integer or boolean input)."""
    check_input_and_output_numbers(operator, input_count_range=1, output_count_range=1)
    check_input_and_output_types(operator, good_input_types=_INPUT_TYPES)
    model = operator.raw_operator
    shape = operator.inputs[0].type.shape
    if len(shape) != 2:  # skl2onnx exports it, and onnxruntime then fails to load the graph
        raise ValueError(
            f"The ONNX input of {type(model).__name__} must be 2-D, (n_rows, n_columns); "
            f"it is {len(shape)}-D. Give to_onnx a 2-D sample, e.g. X[:1] rather than X[0]."
        )
    function = _ranker_function(model)
    n_columns = operator.inputs[0].get_second_dimension()
    if isinstance(n_columns, int) and n_columns != function.n_columns:
        query = "" if not function.dropped else f" and its {len(function.dropped)} metadata column(s)"
        raise ValueError(
            f"{type(model).__name__} takes {function.n_columns} columns (its "
            f"{function.n_features} features{query}); the ONNX input has {n_columns}."
        )
    _set_score_output(operator)


def _set_score_output(operator):
    input_type = operator.inputs[0].type
    cls = DoubleTensorType if isinstance(input_type, DoubleTensorType) else FloatTensorType
    operator.outputs[0].type = cls([operator.inputs[0].get_first_dimension(), 1])


def _calculate_bagging_output_shapes(operator):
    """The members' scores in, one (N, 1) score tensor out."""
    check_input_and_output_numbers(operator, input_count_range=[1, None], output_count_range=1)
    check_input_and_output_types(operator, good_input_types=[FloatTensorType, DoubleTensorType])
    _set_score_output(operator)


# ----------------------------------------------------------------------
# Parser of BaggingRanker: its members are parsed (and later converted) by
# their own parsers and converters, which handles Pipeline members too; the
# BaggingRanker operator itself only averages their outputs.


def _parse_bagging(scope, model, inputs, custom_parsers=None):
    try:
        # skl2onnx's own entry point for a model inside a model (it parses
        # Pipelines too); private, but what its OnnxSubEstimator calls.
        from skl2onnx._parse import _parse_sklearn
    except ImportError as exc:  # pragma: no cover - depends on skl2onnx
        raise RuntimeError(
            "The BaggingRanker export uses skl2onnx._parse._parse_sklearn, which this "
            f"version of skl2onnx ({skl2onnx.__version__}) does not have."
        ) from exc
    _check_no_metadata_column(model)
    _check_fitted(model, "estimators_")
    member_outputs = []
    for i, member in enumerate(model.estimators_):
        outputs = _parse_sklearn(scope, member, inputs, custom_parsers=custom_parsers)
        if len(outputs) != 1:
            raise ValueError(
                f"Cannot export BaggingRanker: its member {i} ({type(member).__name__}) "
                f"converts to {len(outputs)} outputs, not one score."
            )
        member_outputs.append(outputs[0])
    operator = scope.declare_local_operator(BAGGING_ALIAS, model)
    operator.inputs = member_outputs
    output = scope.declare_local_variable("variable", guess_tensor_type(inputs[0].type))
    operator.outputs.append(output)
    return operator.outputs


# ----------------------------------------------------------------------
# Converters


class _Graph:
    """Small helper around skl2onnx's scope and container: unique names and
    constants in the graph's float type."""

    def __init__(self, scope, container, proto_dtype):
        self.scope, self.container, self.proto_dtype = scope, container, proto_dtype
        self.dtype = np.float64 if proto_dtype == onnx_proto.TensorProto.DOUBLE else np.float32

    def name(self, hint):
        return self.scope.get_unique_variable_name(hint)

    def op_name(self, op_type):
        return self.scope.get_unique_operator_name(op_type)

    def constant(self, hint, values):
        values = np.asarray(values, dtype=self.dtype)
        name = self.name(hint)
        self.container.add_initializer(name, self.proto_dtype, list(values.shape), values.ravel())
        return name

    def node(self, op_type, inputs, hint=None, output=None, **attrs):
        output = output or self.name(hint or op_type.lower())
        self.container.add_node(op_type, inputs, output, name=self.op_name(op_type), **attrs)
        return output

    def binary(self, apply, op_type, a, b, hint=None, output=None):
        output = output or self.name(hint or op_type.lower())
        apply(self.scope, [a, b], output, self.container, operator_name=self.op_name(op_type))
        return output


def _graph_for(scope, operator, container):
    if container.target_opset is not None and container.target_opset < _MIN_OPSET:
        raise RuntimeError(
            f"The ONNX export of sklearn-ranknet models needs opset >= {_MIN_OPSET}, "
            f"got target_opset={container.target_opset}."
        )
    double = isinstance(operator.inputs[0].type, DoubleTensorType)
    proto = onnx_proto.TensorProto.DOUBLE if double else onnx_proto.TensorProto.FLOAT
    return _Graph(scope, container, proto)


def _log1p(g, a):
    """log1p(a) for a > -1. ONNX has no log1p: with u = 1 + a rounded,
    log1p(a) = log(u) + log(1 + (a - (u - 1)) / u), and the second term,
    the rounding error of u relative to u, is below the type's epsilon, so
    its first-order value (a - (u - 1)) / u leaves an error of order eps**2
    (plain log(1 + a) loses all precision for |a| below eps)."""
    one = g.constant("one", [1.0])
    u = g.binary(apply_add, "Add", a, one, "one_plus")
    u_minus_one = g.binary(apply_sub, "Sub", u, one, "u_minus_one")
    error = g.binary(apply_sub, "Sub", a, u_minus_one, "rounding")
    correction = g.binary(apply_div, "Div", error, u, "correction")
    log_u = g.node("Log", [u], "log")
    return g.binary(apply_add, "Add", log_u, correction, "log1p")


def _signed_log1p(g, x):
    """sign(x) * log1p(|x|)."""
    log1p = _log1p(g, g.node("Abs", [x], "abs"))
    sign = g.node("Sign", [x], "sign", op_version=9)
    return g.binary(apply_mul, "Mul", sign, log1p, "signed_log1p")


def _centred_signed_log1p(g, x, mean):
    """sign(x) * log1p(|x|) - mean, accurate in a float32 graph.

    A feature far from 0 compared with its spread (``1e4 + N(0, 1)``: a
    log1p of 9.2 that varies by 1e-4) loses its variation when its log1p is
    rounded to float32 before the mean is subtracted, and standardizing then
    magnifies the loss by 1 / scale. Where x lies on the mean's side of 0
    with |x| >= c / 2, c = expm1(|mean|), the difference is computed without
    forming the log1p: log1p(|x|) - log1p(c) = log1p((|x| - c) / (1 + c)),
    where |x| - c is exact near c (c split into two float32 numbers, see
    :func:`_subtract_precisely`) and the argument is at least -1/2, so the
    result has float32's relative precision. Elsewhere the difference is at
    least log((1 + c) / (1 + c / 2)) in size (|mean| / 2 for a small mean,
    log(2) for a large one; more on the other side of 0), so the direct
    difference keeps all but a few epsilons of |mean| / log(2) of it.
    """
    mean = np.asarray(mean, dtype=np.float64)
    direct = _subtract_precisely(g, _signed_log1p(g, x), mean, "centred")
    with np.errstate(over="ignore"):
        c = np.expm1(np.abs(mean))
    # The direct difference everywhere (threshold inf) for a mean of 0, which
    # has no side, and for a c that the graph's type cannot hold (|mean|
    # above about 88 in float32: a float64 model of values beyond float32's
    # range, which float32 input cannot reach anyway).
    shifts = (mean != 0) & (c < np.finfo(g.dtype).max / 2)
    side = np.where(shifts, np.sign(mean), 0.0)
    c = np.where(shifts, c, 0.0)
    threshold = np.where(shifts, c / 2, np.inf)
    on_side = g.binary(apply_mul, "Mul", x, g.constant("mean_side", side), "on_mean_side")
    a = _subtract_precisely(g, on_side, c, "above_mean_value")
    a = g.binary(apply_mul, "Mul", a, g.constant("inv_one_plus_mean_value", 1.0 / (1.0 + c)), "ratio")
    # Rows that take the direct path may give a below -1 here (NaN from Log):
    # Where discards them.
    shifted = g.binary(apply_mul, "Mul", _log1p(g, a), g.constant("mean_side", side), "shifted_log1p")
    use_direct = g.node("Less", [on_side, g.constant("shift_threshold", threshold)], "use_direct", op_version=9)
    return g.node("Where", [use_direct, direct, shifted], "centred", op_version=9)


def _gathered(g, x, columns, hint):
    """The columns ``columns`` of x (Gather)."""
    indices = g.name(hint + "_columns")
    g.container.add_initializer(indices, onnx_proto.TensorProto.INT64, [len(columns)], np.asarray(columns, np.int64))
    return g.node("Gather", [x, indices], hint, axis=1)


def _piecewise(g, x, encoding):
    """The inputs of every feature's bins from ``x``, each feature's value
    gathered once per bin, as ``PiecewiseEncoding.transform`` computes them:
    min(max((x - lower) * inv_width, 0), 1) - level. A feature with one
    value has a bin of infinite width, whose input is 0."""
    x = _subtract_precisely(g, x, encoding.lower, "above_lower")
    x = g.binary(apply_mul, "Mul", x, g.constant("bin_inv_width", encoding.inv_width), "bin_fraction")
    x = g.node("Max", [x, g.constant("zero", [0.0])], "bin_fraction")
    x = g.node("Min", [x, g.constant("one", [1.0])], "bin_fraction")
    return g.binary(apply_sub, "Sub", x, g.constant("bin_level", encoding.zero_level), "bin_input")


def _subtract_precisely(g, x, values, hint):
    """x - values. In a float32 graph float64 values are split into hi + lo
    (both float32) and subtracted in two steps: x - hi is exact when x is
    close to them (Sterbenz), so the result is x - values rounded once, as
    ``predict`` gives, even for features whose offset dwarfs their spread."""
    values = np.asarray(values, dtype=np.float64)
    hi = values.astype(g.dtype)
    lo = (values - hi.astype(np.float64)).astype(g.dtype)
    x = g.binary(apply_sub, "Sub", x, g.constant(hint, hi), hint)
    if np.any(lo != 0):
        x = g.binary(apply_sub, "Sub", x, g.constant(hint + "_lo", lo), hint)
    return x


def _standardize(g, x, mean, scale):
    """(x - mean) * (1 / scale), as ``predict`` computes on dense rows."""
    centred = _subtract_precisely(g, x, mean, "centred")
    return g.binary(apply_mul, "Mul", centred, g.constant("inv_scale", 1.0 / scale), "standardized")


def _convert_ranker(scope, operator, container):
    """ONNX graph of one ranker: input scaling, then the network."""
    model = operator.raw_operator
    if hasattr(model, "to_local"):  # a Dask ranker: its in-memory twin predicts on arrays
        model = model.to_local()
    function = _ranker_function(model)
    _verify_against_predict(model, function)
    g = _graph_for(scope, operator, container)

    x = operator.inputs[0].full_name
    if not isinstance(operator.inputs[0].type, (FloatTensorType, DoubleTensorType)):
        cast = g.name("cast_input")
        apply_cast(scope, x, cast, container, to=g.proto_dtype)
        x = cast
    if function.dropped:
        kept = g.name("kept_columns")
        container.add_initializer(
            kept, onnx_proto.TensorProto.INT64, [function.n_features], function.kept_columns()
        )
        x = g.node("Gather", [x, kept], "features", axis=1)
    if function.kind is not None:
        x = _scaled(g, x, function)

    n_layers = len(function.coefs)
    for i, (W, b) in enumerate(zip(function.coefs, function.intercepts)):
        product = g.node("MatMul", [x, g.constant("coefficient", W)], "mul_result")
        last = i == n_layers - 1
        output = operator.outputs[0].full_name if last else None
        x = g.binary(
            apply_add, "Add", product, g.constant("intercept", np.reshape(b, (1, -1))),
            "add_result", output=output,
        )
        if not last and _ONNX_ACTIVATIONS[function.activation] is not None:
            x = g.node(_ONNX_ACTIVATIONS[function.activation], [x], "activation")


def _scaled(g, x, function):
    """The network's inputs from the features ``x``: transformed (or
    encoded) and standardized, ``InputScaling.fill`` where a value is
    missing (IsNaN, Where), then the standardized missing indicators (Cast
    of IsNaN; Concat)."""
    n = function.n_transformed
    mean, scale = function.mean[:n], function.scale[:n]
    features = x
    if function.kind == "piecewise":
        x = _gathered(g, x, function.encoding.source, "bin_values")
    missing = g.node("IsNaN", [x], "missing", op_version=9)
    if function.kind == "log1p" and g.dtype == np.float32:
        x = _centred_signed_log1p(g, x, mean)
        x = g.binary(apply_mul, "Mul", x, g.constant("inv_scale", 1.0 / scale), "standardized")
    else:  # (a float64 graph computes log1p and centres as predict does)
        if function.kind == "log1p":
            x = _signed_log1p(g, x)
        if function.kind == "piecewise":
            x = _piecewise(g, x, function.encoding)
        x = _standardize(g, x, mean, scale)
    fill = function.scaling().fill[:n]
    fill = g.constant("fill", np.reshape(fill, (1, -1)) if fill.any() else [0.0])
    x = g.node("Where", [missing, fill, x], "present_inputs", op_version=9)
    if not len(function.indicated):
        return x
    absent = g.node("IsNaN", [_gathered(g, features, function.indicated, "indicated")], "absent", op_version=9)
    indicators = g.node("Cast", [absent], "indicators", to=g.proto_dtype)
    indicators = _standardize(g, indicators, function.mean[n:], function.scale[n:])
    return g.node("Concat", [x, indicators], "inputs", axis=1)


def _convert_bagging(scope, operator, container):
    """Mean of the members' scores (each reshaped to (N, 1))."""
    g = _graph_for(scope, operator, container)
    columns = []
    for variable in operator.inputs:
        column = g.name("member_score")
        apply_reshape(scope, variable.full_name, column, container, desired_shape=(-1, 1))
        columns.append(column)
    total = g.node("Sum", columns, "sum_of_scores")
    n_members = g.constant("n_members", [float(len(operator.inputs))])
    g.binary(apply_div, "Div", total, n_members, output=operator.outputs[0].full_name)


# ----------------------------------------------------------------------
# Conversion from a sparse sample

#: The ONNX input type of each sample dtype, as skl2onnx guesses it for a
#: dense sample.
_SAMPLE_TYPES = {
    np.dtype(np.float32): FloatTensorType, np.dtype(np.float64): DoubleTensorType,
    np.dtype(np.int64): Int64TensorType, np.dtype(np.bool_): BooleanTensorType,
}


def to_onnx(model, X=None, **kwargs):
    """Convert a fitted ranker (or a Pipeline ending in one) to ONNX, from a
    dense or a sparse sample.

    skl2onnx cannot guess the input type of a CSR sample (what
    :func:`~sklearn_ranknet.datasets.load_letor` returns) by itself. This
    function reads the sample's width and dtype instead and calls
    ``skl2onnx.to_onnx`` with them as ``initial_types``; any other sample,
    and every keyword, goes to ``skl2onnx.to_onnx`` unchanged. The graph
    takes dense rows either way. Importing this module teaches
    ``skl2onnx.to_onnx`` the same rule, so both calls give one graph.

    Parameters
    ----------
    model : estimator
        A fitted ranker, BaggingRanker or Pipeline ending in one.
    X : {ndarray, sparse matrix, DataFrame} of shape (n_rows, n_columns), default=None
        A sample of the rows ``predict`` takes: its dtype (float32, float64,
        int64 or bool) sets the graph's input type, its width the input's.
        A DataFrame sample of a ranker (not a Pipeline) is read as its
        values, one input matrix; skl2onnx makes a DataFrame one input per
        column, which a Pipeline whose steps select columns by name needs.
    **kwargs : dict
        Passed on to ``skl2onnx.to_onnx`` (``target_opset``, ``options``, ...).

    Returns
    -------
    onx : onnx.ModelProto
        The ONNX model; its input ``"X"`` has shape (N, n_columns).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from sklearn_ranknet import LambdaRankRanker
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> from sklearn_ranknet.onnx import to_onnx
    >>> X, y, qid = make_ranking(n_queries=20, random_state=0)
    >>> X_csr = sp.csr_matrix(X.astype("float32"))
    >>> ranker = LambdaRankRanker(max_iter=3, random_state=0).fit(X_csr, y, groups=qid)
    >>> onx = to_onnx(ranker, X_csr[:1])
    >>> [d.dim_value for d in onx.graph.input[0].type.tensor_type.shape.dim][1] == X.shape[1]
    True
    """
    if X is not None and sp.issparse(X) and kwargs.get("initial_types") is None:
        kwargs["initial_types"] = _sparse_sample_types(X)
        X = None
    if X is not None and isinstance(model, (*RANKER_ALIASES, BaggingRanker, *announced())):
        if hasattr(X, "iloc"):
            # skl2onnx makes a DataFrame sample one input per column (for a
            # Pipeline's ColumnTransformer); a ranker's graph takes one matrix.
            X = X.to_numpy()
        _sample_tensor_type(np.asarray(X).dtype)  # skl2onnx's own error names no fix
    return skl2onnx.to_onnx(model, X, **kwargs)


def _sparse_sample_types(X):
    """skl2onnx's ``initial_types`` for a sparse sample: one dense input of
    its width, in the type skl2onnx gives a dense sample of its dtype."""
    return [("X", _sample_tensor_type(X.dtype)([None, X.shape[1]]))]


def _sample_tensor_type(dtype):
    """The ONNX tensor type of a sample of ``dtype``, or a TypeError naming
    the dtypes a graph's input can take."""
    tensor = _SAMPLE_TYPES.get(np.dtype(dtype))
    if tensor is None:
        raise TypeError(
            f"The sample's dtype is {dtype}; give one of float32 (the usual choice), "
            "float64, int64 or bool, e.g. X[:1].astype(np.float32)."
        )
    return tensor


def _read_sparse_samples():
    """Teach ``skl2onnx.to_onnx`` to read a sparse sample's width and dtype.

    skl2onnx guesses the input type of ``to_onnx(model, X)`` in
    ``skl2onnx.algebra.type_helper.guess_initial_types``, which takes
    ndarrays and DataFrames only (its ``_guess_type`` takes a COO matrix,
    but that function is not reached). The wrapper answers a sparse sample
    as :func:`to_onnx` does and passes everything else on unchanged, for
    any model. Should a skl2onnx release move the function, nothing is
    wrapped and :func:`to_onnx` still does the job."""
    from skl2onnx.algebra import type_helper

    guess = getattr(type_helper, "guess_initial_types", None)
    if guess is None or getattr(guess, "reads_sparse_samples", False):
        return

    @functools.wraps(guess)
    def guess_initial_types(X, initial_types=None):
        if initial_types is None and X is not None and sp.issparse(X):
            return _sparse_sample_types(X)
        return guess(X, initial_types)

    guess_initial_types.reads_sparse_samples = True
    type_helper.guess_initial_types = guess_initial_types


# ----------------------------------------------------------------------
# Registration


def register_converters():
    """Register the converters of every ranker with skl2onnx.

    Importing :mod:`sklearn_ranknet.onnx` already does it; calling it again
    is harmless (the registrations are replaced by identical ones).

    Returns
    -------
    aliases : dict
        The skl2onnx alias of every registered class.

    Examples
    --------
    >>> from sklearn_ranknet import BaggingRanker, LambdaRankRanker
    >>> from sklearn_ranknet.onnx import register_converters
    >>> aliases = register_converters()
    >>> aliases[LambdaRankRanker]
    'SklearnRanknetLambdaRankRanker'
    >>> from skl2onnx import get_model_alias
    >>> get_model_alias(BaggingRanker)
    'SklearnRanknetBaggingRanker'
    """
    aliases = dict(RANKER_ALIASES)
    # The Dask rankers export as their in-memory twins: sklearn_ranknet.dask
    # announces them (see _twins.py), whichever of the two modules is
    # imported first.
    for cls in announced():
        aliases[cls] = _twin_alias(cls)
    for cls, alias in aliases.items():
        _register_ranker(cls, alias)
    skl2onnx.update_registered_converter(
        BaggingRanker,
        BAGGING_ALIAS,
        _calculate_bagging_output_shapes,
        _convert_bagging,
        overwrite=True,
        parser=_parse_bagging,
    )
    return {**aliases, BaggingRanker: BAGGING_ALIAS}


def _twin_alias(cls):
    return f"SklearnRanknet{cls.__name__}"


def _register_ranker(cls, alias):
    skl2onnx.update_registered_converter(
        cls, alias, _calculate_ranker_output_shapes, _convert_ranker, overwrite=True
    )


register_converters()
_read_sparse_samples()
# A twin announced after this module was imported is registered then.
subscribe(lambda cls: _register_ranker(cls, _twin_alias(cls)))
