"""Docstrings assembled from shared parts: the entries the three rankers
document alike, and the Dask and CV rankers' docstrings built from the
in-memory rankers' (numpydoc sections read and put back together)."""

import inspect
import re
import textwrap

#: Entries the three in-memory rankers document word for word, by the name
#: their docstrings' ``[shared: name]`` lines give them.
SHARED_ENTRIES = {
    "data columns": """\
precision : {"auto", "float32", "float64"}, default="auto"
    The floating-point type the network trains in. float32 moves half
    the bytes, and its products run faster (see :ref:`performance`);
    the rows are scaled in their own dtype before the cast, and the
    lambdas are summed in float64 either way. "auto" trains a
    stochastic fit (``solver="adam"`` or ``"sgd"``) of float64 ``X``
    in float32 when the input scaling makes dense inputs of it (not for
    ``feature_scaling=None``, nor for CSR that stays sparse under
    ``"standard"``), and otherwise trains in ``X``'s dtype (see
    :ref:`auto-values`); the value used is ``precision_``. The fitted
    weights are published in ``X``'s dtype either way (float32 values
    held exactly in float64), and a continued fit (``warm_start``,
    ``partial_fit``) keeps the precision of the first.
query_column : str, int or None, default=None
    A column of ``X`` that holds the query ids (a DataFrame column name
    or a position): ``fit``, ``partial_fit``, ``predict`` and ``score``
    read the ids from it and drop it, so scikit-learn's tools work with
    metadata routing off. See :ref:`routing_off`.
position_column : str, int or None, default=None
    For a click log: a column of ``X`` that holds the 1-based rank each
    row was shown at (a DataFrame column name or a position). ``fit``
    reads the ``positions`` from it, and ``fit``, ``predict`` and
    ``score`` drop it (its values do not matter to ``predict``), so
    scikit-learn's tools can fit on click logs with metadata routing
    off. ``partial_fit`` refuses it. See :ref:`clicks`.
""",
    "fitted inputs": """\
n_features_in_ : int
    Number of features seen during ``fit`` (without the
    ``query_column`` and ``position_column``).
feature_names_in_ : ndarray of shape (``n_features_in_``,)
    Names of features seen during ``fit``. Defined only when X has
    feature names that are all strings.
feature_mean_ : ndarray of shape (n_inputs,) or None
    Mean of each input of the network (a feature, or a bin of one, then
    the missing indicators) over the training rows; None without
    ``feature_scaling``.
feature_scale_ : ndarray of shape (n_inputs,) or None
    Standard deviation of each input (1 for a constant one); ``coefs_[0]``
    applies to the standardized inputs.
bin_edges_ : ndarray of ndarray of shape (n_features_in_,) or None
    With ``feature_scaling="piecewise"``, the distinct bin edges of each
    feature (quantiles of the training rows); a feature with m + 1 edges
    has m inputs. None otherwise.
missing_features_ : ndarray of shape (n_missing_features,) or None
    The features whose missing values (NaN) in training go with the
    labels inside queries (at three standard errors; see "Missing
    values" in the User Guide), in increasing order. Each has a missing
    indicator, one input after all the others (the last rows of
    ``coefs_[0]``); other features read a missing value as their mean.
    None without ``feature_scaling``.
missing_fill_ : ndarray of shape (n_missing_features,) or None
    The value a missing value of each feature of ``missing_features_``
    reads as before its indicator is added: the present value whose
    rows are labelled most like the missing ones (within queries; see
    "Missing values" in the User Guide); NaN where none could be
    matched (the mean then). None without ``feature_scaling``.
position_propensities_ : ndarray of shape (n_positions,) or None
    After a fit on a click log (``fit(..., positions=...)``), the
    estimated chance that a user examines each rank 1..n_positions,
    relative to rank 1 (see :ref:`clicks`). None after a fit on labels.
""",
}

_SHARED_LINE = re.compile(r"^( *)\[shared: ([a-z ]+)\]$", re.MULTILINE)


def with_shared_entries(cls):
    """Class decorator: each ``[shared: name]`` line of ``cls.__doc__``
    replaced by ``SHARED_ENTRIES[name]``, at that line's indentation.
    Nothing to do under ``python -OO``, which drops docstrings."""
    if cls.__doc__ is None:
        return cls

    def entries(match):
        indent, name = match.groups()
        return textwrap.indent(SHARED_ENTRIES[name].rstrip("\n"), indent)

    doc, count = _SHARED_LINE.subn(entries, cls.__doc__)
    if not count:
        raise ValueError(f"{cls.__name__}'s docstring has no [shared: ...] line")
    cls.__doc__ = doc
    return cls


def sections(doc):
    """A numpydoc docstring -> (summary, {section title: body})."""
    lines = inspect.cleandoc(doc).splitlines()
    heads = [
        i for i in range(len(lines) - 1)
        if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())
    ]
    summary = "\n".join(lines[: heads[0]]).strip()
    sections = {}
    for start, stop in zip(heads, heads[1:] + [len(lines)]):
        sections[lines[start].strip()] = "\n".join(lines[start + 2 : stop]).strip("\n")
    return summary, sections


def without_entries(body, names):
    """A numpydoc Parameters or Attributes section without the entries of
    ``names`` (each an unindented ``name : type`` line and the indented
    lines below it)."""
    kept, skipping = [], False
    for line in body.splitlines():
        if line and not line[0].isspace():
            skipping = line.split(" : ")[0].strip() in names
        if not skipping:
            kept.append(line)
    return "\n".join(kept)
