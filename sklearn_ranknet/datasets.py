"""Learning-to-rank datasets: a synthetic generator, a LETOR / SVMlight loader
and a click simulator.

``make_ranking`` and ``load_letor`` return the triple ``(X, y, groups)`` used
throughout the package: ``X`` holds one row per (query, document) pair, ``y``
the graded relevance labels and ``groups`` the query id of every row.
``make_clicks`` turns graded labels and a logging ranker's scores into a
simulated click log (it lives in ``_clicks.py``).
"""

import array
import bz2
import codecs
import gzip
import os
from numbers import Integral, Real

import numpy as np
from scipy.special import ndtr, ndtri
from sklearn.datasets import load_svmlight_file
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, InvalidParameterError, StrOptions, validate_params

from ._clicks import make_clicks

__all__ = ["make_ranking", "load_letor", "make_clicks"]

# The largest noise make_ranking takes: past ~1e154 the variance of the latent
# relevance overflows float64.
_MAX_NOISE = 1e150

# Share of the documents in grades 0..4 before empty queries are added. Close to
# the Yahoo! LTR sample shipped beside the project (645/1211/858/222/69 docs).
_GRADE_PROPORTIONS = np.array([0.21, 0.40, 0.29, 0.075, 0.025])
# Standard deviation of the per-query offset ("query difficulty") of the latent
# relevance, relative to the unit variance of the feature-driven signal.
_QUERY_OFFSET_SD = 0.5
# Share of the signal variance that comes from the nonlinear terms.
_NONLINEAR_SHARE = 0.65
# Position of the step in the threshold term (on a standard normal feature).
_STEP_AT = 0.5
# Seed of the fixed "problem": relevance weights, feature transformations,
# query-level shares and redundant features. ``random_state`` only drives the
# sampling of queries, documents and noise, so different seeds give
# independent samples (e.g. a train and a test set) of the same problem.
_PROBLEM_SEED = 20240611


def _std_normal_moments(func):
    """Mean and standard deviation of ``func(Z)`` for ``Z ~ N(0, 1)``."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    values = func(nodes)
    mean = float(weights @ values)
    std = float(np.sqrt(weights @ (values - mean) ** 2))
    return mean, std


_TANH_MEAN, _TANH_STD = _std_normal_moments(lambda z: np.tanh(2.0 * z))


def _query_lengths(n_queries, min_docs, max_docs, rng):
    """Right-skewed query lengths in ``[min_docs, max_docs]``.

    A Beta(1.2, 3.0) draw (mean ~0.29, median ~0.25) is stretched over the
    allowed range: most queries are short, about 1 % are longer than 80 % of
    ``max_docs``.
    """
    span = max_docs - min_docs + 1
    u = rng.beta(1.2, 3.0, size=n_queries)
    lengths = min_docs + np.floor(u * span).astype(np.int64)
    return np.minimum(lengths, max_docs)


def _check_memory_for(n_rows, n_features):
    """Refuse up front a call whose ``X`` alone (``n_rows`` rows at least,
    float64) exceeds this machine's memory: drawing the problem walks the
    features in Python first, so numpy's own MemoryError would come only
    after minutes (``n_features=10**9``). Skipped where the size of the
    memory is unknown."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX
        return
    # Python ints: numpy integers (make_ranking takes them) would multiply in
    # their own width and wrap around, letting a huge call through.
    needed = int(n_rows) * int(n_features) * 8
    if memory > 0 and needed > memory:
        raise MemoryError(
            f"make_ranking would need at least {needed / 2**30:,.1f} GiB for X ({n_rows:,} rows, "
            f"n_queries x min_docs, of {n_features:,} features), more than this machine's "
            f"{memory / 2**30:,.1f} GiB. Ask for fewer queries, documents or features."
        )


def _make_problem(n_features, n_informative):
    """Draw the fixed structure of the ranking problem.

    The structure depends only on ``n_features`` and ``n_informative`` (it is
    drawn from a private fixed seed), never on ``random_state``.
    """
    prng = np.random.RandomState(_PROBLEM_SEED)
    k = n_informative
    # Linear weights: random signs, unequal magnitudes, unit norm.
    m = max(k, 1)
    w = prng.uniform(0.3, 1.0, size=m) * prng.choice([-1.0, 1.0], size=m)
    w = w[:k] / np.linalg.norm(w[:k]) if k else w[:0]
    # Share of each latent feature's variance that is query-level.
    query_share = prng.uniform(0.0, 0.5, size=n_features)
    # Half of the noise features are partly redundant with an informative one.
    redundant = []
    for j in range(k, n_features):
        rho = prng.uniform(0.2, 0.7)
        src = prng.randint(max(k, 1))
        if k > 0 and prng.uniform() < 0.5:
            redundant.append((j, src, rho))
    # Observed-feature transformations.
    kinds = prng.choice(3, size=n_features, p=[0.5, 0.25, 0.25])
    scales = 10.0 ** prng.uniform(-1.0, 2.0, size=n_features)
    locs = prng.normal(0.0, 3.0, size=n_features) * scales
    return {
        "w": w,
        "query_share": query_share,
        "redundant": redundant,
        "kinds": kinds,
        "scales": scales,
        "locs": locs,
    }


def _latent_signal(Z, n_informative, w):
    """Relevance signal: a linear part plus nonlinear terms, each of unit
    variance, weighted 35 : 65 in variance. The terms reuse features of the
    linear part, so the two correlate and the sum's variance is only near
    1 (0.5 to 1.2 with the number of informative features)."""
    n_samples = Z.shape[0]
    k = n_informative
    if k == 0:
        return np.zeros(n_samples)
    Zi = Z[:, :k]
    linear = Zi @ w  # unit variance

    # Nonlinear terms on distinct informative features (independent of each
    # other, not of the linear part, which reads the same features), each
    # standardised to mean 0 and variance 1 under the standard normal
    # marginals of the latent features. With fewer than five informative
    # features only the terms that fit are used (the "sweet spot" alone for a
    # single informative feature).
    p_step = 1.0 - ndtr(_STEP_AT)
    terms = []
    if k >= 2:  # interaction of two features
        terms.append(Zi[:, 0] * Zi[:, 1])
    if k >= 3:  # saturating effect
        terms.append((np.tanh(2.0 * Zi[:, 2]) - _TANH_MEAN) / _TANH_STD)
    if k >= 4:  # threshold
        step = Zi[:, 3] > _STEP_AT
        terms.append((step - p_step) / np.sqrt(p_step * (1.0 - p_step)))
    if k >= 5 or k == 1:  # "sweet spot": best at an intermediate value
        terms.append((1.0 - Zi[:, min(4, k - 1)] ** 2) / np.sqrt(2.0))
    nonlinear = np.sum(terms, axis=0) / np.sqrt(len(terms))

    return (
        np.sqrt(1.0 - _NONLINEAR_SHARE) * linear
        + np.sqrt(_NONLINEAR_SHARE) * nonlinear
    )


def _observed_features(Z, problem):
    """Map latent standard-normal features to features on varied scales.

    Each column gets one monotone transformation: an affine map with a scale
    between 0.1 and 100 (about half of the columns), a positive heavy-tailed
    ``scale * exp(0.5 z)`` (a quarter, like term counts) or a logistic squash
    into ``(0, 1)`` (a quarter, like normalised scores).
    """
    X = np.empty_like(Z)
    kinds, scales, locs = problem["kinds"], problem["scales"], problem["locs"]
    for j in range(Z.shape[1]):
        z = Z[:, j]
        if kinds[j] == 0:
            X[:, j] = locs[j] + scales[j] * z
        elif kinds[j] == 1:
            X[:, j] = scales[j] * np.exp(0.5 * z)
        else:
            X[:, j] = 1.0 / (1.0 + np.exp(-z))
    return X


@validate_params(
    {
        "n_queries": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_informative": [Interval(Integral, 0, None, closed="left")],
        # Far above any memory (past 2**62 the lengths' arithmetic overflows).
        "min_docs": [Interval(Integral, 1, 2**40, closed="both")],
        "max_docs": [Interval(Integral, 1, 2**40, closed="both")],
        # Bounded below 1e150 in the body: a float32 noise compared with that
        # bound here would overflow (a RuntimeWarning for a good value).
        "noise": [Interval(Real, 0, None, closed="left")],
        "empty_query_fraction": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_ranking(
    n_queries=100,
    *,
    n_features=20,
    n_informative=10,
    min_docs=5,
    max_docs=50,
    noise=0.5,
    empty_query_fraction=0.05,
    random_state=None,
):
    """Generate a synthetic learning-to-rank problem with graded labels.

    The generative model mimics public LTR collections such as the Yahoo!
    and MSLR sets:

    * **Query lengths** are right-skewed in ``[min_docs, max_docs]``: most
      queries are short, a few are long (a Beta(1.2, 3) draw stretched over
      the range: the mean length is about 30 % of the way from ``min_docs``
      to ``max_docs``, about 18 documents with the defaults).
    * **Latent features.** Every document has ``n_features`` standard normal
      latent features. Each feature is a mix of a query-level component
      (shared by all documents of the query, 0 to 50 % of its variance) and a
      document-level one. The first ``n_informative`` latent features drive
      the relevance; the other features are noise, some of them correlated
      with an informative feature.
    * **Relevance.** The latent relevance of a document is a signal built
      as 35 % of a unit variance from a linear function of the informative
      features and 65 % from nonlinear terms (a product of two features, a
      saturating ``tanh``, a step function and a "sweet spot" ``1 - z**2``,
      each on its own feature; with fewer than five informative features
      only the terms that fit are used), plus a per-query offset (query
      difficulty, standard deviation 0.5) plus Gaussian noise with standard
      deviation ``noise``. The nonlinear terms read features the linear
      part reads too, so the two parts correlate and the signal's variance
      is not exactly 1 but depends on ``n_informative``: 0.9 at the default
      10, 0.75–1.24 from 6 informative features on (1.18 at 20), 0.5–0.6
      with 3 to 5, where ``noise`` therefore weighs more (measured on
      100,000 draws, for 1 to 30 informative features).
    * **Fixed problem.** The relevance function and the feature
      transformations depend only on ``n_features`` and ``n_informative``;
      ``random_state`` drives the sampling of queries, documents and noise.
      Two calls with different seeds are therefore independent samples of
      the *same* ranking problem, e.g. a training and a test set.
    * **Labels.** The latent relevance is cut into grades 0..4 at fixed
      quantiles of the normal approximation of a unit-variance signal, so
      that about 21 / 40 / 29 / 7.5 / 2.5 % of the documents get grades
      0 / 1 / 2 / 3 / 4, the skew of real LTR data (20 / 42 / 29 / 7 / 2 %
      at the defaults). Where the signal's variance falls short of 1 the
      outer grades are rarer: 16 / 47 / 31 / 5 / 1 % with 5 informative
      features.
      Then ``round(empty_query_fraction * n_queries)`` queries, picked at
      random, have all their labels set to 0 (no relevant document); a short
      query can also end up with no relevant document by chance.
    * **Observed features** ``X`` are monotone transforms of the latent
      ones on varied scales: affine maps with scales from 0.1 to 100,
      positive heavy-tailed (log-normal) columns and columns squashed into
      ``(0, 1)``. Standardizing the features therefore matters, and a
      linear model on ``X`` is a good but clearly imperfect ranker.

    Parameters
    ----------
    n_queries : int, default=100
        Number of queries.

    n_features : int, default=20
        Number of features (columns of ``X``).

    n_informative : int, default=10
        Number of features the relevance depends on; they are the first
        ``n_informative`` columns of ``X``. With 0 the labels are unrelated
        to ``X``.

    min_docs : int, default=5
        Smallest number of documents in a query (at least 1).

    max_docs : int, default=50
        Largest number of documents in a query (at least ``min_docs``).

    noise : float in [0, 1e150], default=0.5
        Standard deviation of the Gaussian noise added to the latent
        relevance, relative to the unit standard deviation of the
        feature-driven signal. 0 gives labels that depend on ``X`` and the
        per-query offset only.

    empty_query_fraction : float, default=0.05
        Fraction of the queries, in ``[0, 1]``, forced to have no relevant
        document (all labels 0).

    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Features; ``n_samples`` is the total number of documents.

    y : ndarray of shape (n_samples,), dtype int64
        Graded relevance labels in ``0..4`` (higher is more relevant).

    groups : ndarray of shape (n_samples,), dtype int64
        Query id of every row. The rows of a query are contiguous and the
        ids are ``0, 1, ..., n_queries - 1`` in order.

    See Also
    --------
    load_letor : Load a real LTR dataset in SVMlight / LETOR format.

    Notes
    -----
    Typical figures with the default parameters (about 1,850 rows), training
    on one seed and evaluating NDCG@10 (gain ``2**y - 1``) on another:
    random scores about 0.62, a standardized ridge regression about 0.83,
    gradient-boosted trees about 0.88. The gap between the linear and the
    nonlinear model widens with more training queries.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ranknet.datasets import make_ranking
    >>> X, y, groups = make_ranking(n_queries=3, min_docs=4, max_docs=6,
    ...                             random_state=0)
    >>> X.shape[1], X.shape[0] == y.shape[0] == groups.shape[0]
    (20, True)
    >>> np.unique(groups)
    array([0, 1, 2])
    >>> bool(np.all((y >= 0) & (y <= 4)))
    True
    """
    # A bool is an Integral (and a Real) to validate_params: noise=True would
    # silently be 1.0, empty_query_fraction=True empty every query.
    for name, value, kind in (("n_queries", n_queries, "an int"), ("n_features", n_features, "an int"),
                              ("n_informative", n_informative, "an int"), ("min_docs", min_docs, "an int"),
                              ("max_docs", max_docs, "an int"), ("noise", noise, "a float"),
                              ("empty_query_fraction", empty_query_fraction, "a float")):
        if isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(
                f"The {name!r} parameter of make_ranking must be {kind}, not a bool. Got {value!r} instead."
            )
    if float(noise) > _MAX_NOISE:
        raise InvalidParameterError(
            f"The 'noise' parameter of make_ranking must be a float in the range [0, {_MAX_NOISE:g}]. "
            f"Got {noise!r} instead."
        )
    # Squared below in its own dtype, a float32 (float16) noise overflows
    # past ~1.8e19 (~256): infinite label cuts, every label 0 or 1.
    noise = float(noise)
    if n_informative > n_features:
        raise ValueError(
            f"n_informative={n_informative} must not exceed "
            f"n_features={n_features}."
        )
    if min_docs > max_docs:
        raise ValueError(
            f"min_docs={min_docs} must not exceed max_docs={max_docs}."
        )
    _check_memory_for(int(n_queries) * int(min_docs), n_features)
    rng = check_random_state(random_state)
    problem = _make_problem(n_features, n_informative)

    lengths = _query_lengths(n_queries, min_docs, max_docs, rng)
    groups = np.repeat(np.arange(n_queries, dtype=np.int64), lengths)
    n_samples = groups.shape[0]

    # Latent standard-normal features: query-level part + document-level part.
    share = problem["query_share"]
    query_part = rng.standard_normal((n_queries, n_features))[groups]
    doc_part = rng.standard_normal((n_samples, n_features))
    Z = np.sqrt(share) * query_part + np.sqrt(1.0 - share) * doc_part
    for j, src, rho in problem["redundant"]:
        Z[:, j] = rho * Z[:, src] + np.sqrt(1.0 - rho**2) * Z[:, j]

    signal = _latent_signal(Z, n_informative, problem["w"])
    offsets = rng.normal(0.0, _QUERY_OFFSET_SD, size=n_queries)[groups]
    latent = signal + offsets + noise * rng.standard_normal(n_samples)

    # Cut at quantiles of the (approximately normal) latent distribution.
    signal_var = 1.0 if n_informative else 0.0
    total_sd = np.sqrt(signal_var + _QUERY_OFFSET_SD**2 + noise**2)
    cuts = total_sd * ndtri(np.cumsum(_GRADE_PROPORTIONS)[:-1])
    y = np.searchsorted(cuts, latent).astype(np.int64)

    n_empty = int(round(empty_query_fraction * n_queries))
    if n_empty:
        empty = rng.choice(n_queries, size=n_empty, replace=False)
        y[np.isin(groups, empty)] = 0

    X = _observed_features(Z, problem)
    return X, y, groups


def _open_binary(path):
    """Open ``path`` for reading bytes as scikit-learn's SVMlight loader
    does: decompressed by its ``.gz`` or ``.bz2`` extension."""
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(os.path.splitext(os.fspath(path))[1], open)
    return opener(path, "rb")


class _QidCollector:
    """The lines of an SVMlight file, handed to scikit-learn's parser while
    their ``qid:`` values are collected on the way.

    Asked for the qids (``query_id=True``), the parser grows its qid array
    by one ``np.append`` per row, a copy of the whole array each time: the
    work grows with the square of the rows, about 2.6e12 copied ids for the
    2.3 million rows of an MSLR-WEB30K training fold. It is therefore called
    with ``query_id=False`` on this object, which reads each qid as the
    parser would: the comment cut at ``#``, the token after the label if it
    starts with ``qid``, its value after the first colon, converted by
    ``np.int64`` (so a bad qid raises the parser's own error).
    """

    def __init__(self, lines):
        self._lines = lines
        self.qids = array.array("q")
        # Lines handed out so far: the parser fails on the last one.
        self.line_number = 0

    def read(self, *args):
        # Only there for the parser's "has a read method" check: it iterates.
        return self._lines.read(*args)

    def __iter__(self):
        for line in self._lines:
            if not isinstance(line, bytes):
                # A file opened in text mode, or an io.StringIO: the parser's
                # own error ("Expected bytes, got str") says not what to do.
                raise TypeError(
                    f"load_letor reads bytes, but the file object gives {type(line).__name__} lines; "
                    "open the file in binary mode (open(path, 'rb')), pass its path, or wrap text "
                    "in io.BytesIO(text.encode())."
                )
            tokens = line.split(b"#", 1)[0].split(None, 2)
            if len(tokens) > 1 and tokens[1].startswith(b"qid"):
                _, colon, value = tokens[1].partition(b":")
                if not colon:
                    raise _QidFieldError(
                        f"line {self.line_number + 1}: the query field {tokens[1].decode(errors='replace')!r} "
                        "has no ':'; rows must read `label qid:<integer> <integer>:<value> ...`."
                    )
                self.qids.append(np.int64(value))
            self.line_number += 1
            yield line


class _QidFieldError(ValueError):
    """A qid field the collector cannot read (the caller adds the file)."""


def _text_form_problem(path):
    """What keeps scikit-learn's SVMlight parser from reading the file at
    ``path`` although its rows may be well formed, or None: a UTF-8 byte
    order mark glued to the first label, UTF-16 text, or lines ended by a
    carriage return alone (the parser then sees one long line). The parser's own
    messages name neither ("could not convert string to float", "need
    more than 1 value to unpack")."""
    if not isinstance(path, (str, os.PathLike)):
        return None  # a file object has been read already
    try:
        with _open_binary(path) as f:
            head = f.read(1 << 16)
    except OSError:
        return None
    if head.startswith(codecs.BOM_UTF8):
        return (
            "starts with a UTF-8 byte order mark, which the SVMlight parser reads as part "
            "of the first label; save the file without it (e.g. as plain UTF-8 or ASCII)"
        )
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return (
            "is UTF-16 text (a PowerShell '>' redirect writes it), which the SVMlight parser "
            "does not read; save it as plain ASCII or UTF-8 (PowerShell: Set-Content -Encoding ascii)"
        )
    if b"\r" in head and b"\n" not in head:
        return (
            "ends its lines with a carriage return alone (\\r), which the SVMlight parser "
            "does not take as a line break; convert them to \\n (or \\r\\n) first"
        )
    return None


def _read_query_sizes(query_path):
    """Read a LightGBM ``.query`` file: one positive integer per line
    (blank lines are skipped).

    A UTF-8 byte order mark (Windows editors add one) is skipped: it would
    otherwise read as part of the first size. A file in another encoding,
    such as the UTF-16 of a PowerShell ``>`` redirect, is refused with a
    message instead of Python's ``UnicodeDecodeError``.
    """
    try:
        with open(query_path, encoding="utf-8-sig") as f:
            lines = [(number, line.strip()) for number, line in enumerate(f, start=1) if line.strip()]
    except UnicodeDecodeError as error:
        raise ValueError(
            f"Query file {query_path!s} is not UTF-8 or ASCII text ({error}); save it as plain "
            "ASCII or UTF-8, one integer per line (PowerShell: Set-Content -Encoding ascii)."
        ) from None
    sizes = np.empty(len(lines), dtype=np.int64)
    for i, (number, text) in enumerate(lines):
        try:
            sizes[i] = int(text)
        except (ValueError, OverflowError):
            raise ValueError(
                f"Query file {query_path!s} must hold one integer per line; "
                f"line {number} is {text!r}."
            ) from None
        if sizes[i] < 1:
            raise ValueError(
                f"Query file {query_path!s} must hold positive query sizes; "
                f"line {number} is {sizes[i]}."
            )
    return sizes


def _sidecar_disagreement(query_path, sizes, path, run_lengths, groups):
    """The message for a sidecar whose sizes are not the runs of equal
    consecutive qids, pointing at the first query where they part."""
    n_common = min(sizes.shape[0], run_lengths.shape[0])
    first = int(np.argmax(sizes[:n_common] != run_lengths[:n_common])) if n_common else 0
    if n_common and sizes[first] == run_lengths[first]:
        first = n_common  # one list is a prefix of the other
    start = int(run_lengths[:first].sum())
    if first < run_lengths.shape[0]:
        in_file = f"the run of qid:{groups[start]} starting at row {start} has {run_lengths[first]} rows"
    else:
        in_file = f"{path!s} has no run left there"
    in_sidecar = f"line {first + 1} says {sizes[first]}" if first < sizes.shape[0] else "it has no line left there"
    return (
        f"The query sizes in {query_path!s} ({sizes.shape[0]} queries) disagree with the qid: "
        f"fields of {path!s} ({run_lengths.shape[0]} runs of equal consecutive qids) from query "
        f"{first + 1} on: {in_sidecar}, and {in_file}."
    )


def _qid_back_after_another(query_path, path, run_starts, groups):
    """The message for a file whose qids match the sidecar's sizes run by
    run but come back after another qid, or None.

    The sidecar makes every run of equal consecutive qids its own query,
    while the estimators and metrics of this package join all the rows that
    share an id, wherever they are: the two would then count different
    queries although the sizes agree.
    """
    first_row = {}
    for start in run_starts.tolist():
        qid = int(groups[start])
        if qid in first_row:
            return (
                f"{path!s} gives qid:{qid} to two runs of rows, from row {first_row[qid]} and from row "
                f"{start}, with other qids between them; the sidecar {query_path!s} counts them as two "
                "queries, but the estimators and metrics of this package join the rows that share a "
                "qid into one. Give each query its own qid, or drop the sidecar to let the qids alone "
                "define the queries."
            )
        first_row[qid] = start
    return None


@validate_params(
    {
        "path": [str, os.PathLike, HasMethods(["read"])],
        "n_features": [Interval(Integral, 1, None, closed="left"), None],
        "dtype": "no_validation",  # numpy's own error names a dtype it cannot read
        "query_path": [str, os.PathLike, None],
        "zero_based": ["boolean", StrOptions({"auto"})],
    },
    prefer_skip_nested_validation=True,
)
def load_letor(path, *, n_features=None, dtype=np.float64, query_path=None, zero_based="auto"):
    """Load a learning-to-rank dataset in SVMlight / LETOR format.

    Rows look like ``label [qid:<id>] <feature>:<value> ...``. The file is
    read with :func:`sklearn.datasets.load_svmlight_file`; ``zero_based``
    says how its feature ids are numbered (see below).

    The query of each row comes from, in this order:

    1. the ``qid:`` fields of the file (MSLR-WEB, LETOR 4.0, Istella...);
       ``groups`` is then the qid array as written, so query ids need not be
       contiguous numbers. Rows that share a qid form one query for the
       estimators and metrics of this package even when rows of other qids
       come between them (as in SVMlight's ``svm_rank``; XGBoost instead
       starts a new query at every change of qid);
    2. otherwise a LightGBM-style sidecar file of query sizes, one integer
       per line giving the number of consecutive rows of each query:
       ``query_path`` if given, else ``path + ".query"`` if it exists.
       ``groups`` is then the query index ``0, 0, 0, 1, 1, ...``.

    If the file has ``qid:`` fields *and* a sidecar is found (given or next
    to the file), the qids are used and the sidecar is checked against them:
    its sizes must equal the lengths of the runs of equal consecutive qids,
    and no qid may come back after another (the sidecar would count two
    queries where the qids name one), otherwise a ``ValueError`` is raised.

    Parameters
    ----------
    path : str, path-like or binary file object
        SVMlight / LETOR file (may be ``.gz`` or ``.bz2`` compressed, as
        accepted by :func:`~sklearn.datasets.load_svmlight_file`). A binary
        file object is also accepted (a text one raises a ``TypeError``);
        no sidecar is looked up next to it.

    n_features : int, default=None
        Number of features. Pass the same value for the train and test
        files of a dataset so that both matrices have the same width; by
        default it is inferred from the largest feature id in the file.

    dtype : numpy dtype, default=np.float64
        Data type of ``X``.

    query_path : str or path-like, default=None
        Sidecar file of query sizes. By default ``path + ".query"`` is used
        when it exists.

    zero_based : bool or "auto", default="auto"
        Whether feature ids start at 0 (column ``j`` of ``X`` is id ``j``)
        or at 1 (column ``j`` is id ``j + 1``). ``"auto"``, scikit-learn's
        rule, decides per file: one-based unless the file holds id 0. So a
        train file that holds id 0 and a test file that does not would be
        numbered differently, every test column shifted by one; when loading
        a dataset's files one by one, say it: ``False`` for LETOR, MSLR-WEB,
        Yahoo and Istella files, whose ids start at 1 (a file that holds
        id 0 is then an error).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Feature matrix, sparse as LETOR data usually is. Call
        ``X.toarray()`` for a dense array.

    y : ndarray of shape (n_samples,), dtype float64
        Relevance labels as read from the file. Graded labels are integral
        values stored as floats; ``y.astype(int)`` converts them. The dtype
        does not depend on the content of the file.

    groups : ndarray of shape (n_samples,), dtype int64
        Query id of every row.

    Raises
    ------
    ValueError
        If the file has no rows; if a ``qid:`` or a feature id is not an
        integer; if the file has no ``qid:`` field and no sidecar is found;
        if only some rows have a ``qid:``; if the sidecar is malformed (one
        integer per line, ASCII or UTF-8 text), holds a non-positive size or its sizes do not sum
        to the number of rows; if the sidecar disagrees with the qids, or
        agrees with their runs while a qid comes back after another; or
        if the file starts with a UTF-8 byte order mark or ends its lines
        with ``\\r`` alone, which the SVMlight parser cannot split.
    TypeError
        If ``path`` is a file object that gives text, not bytes.

    See Also
    --------
    make_ranking : Generate a synthetic LTR dataset.

    Examples
    --------
    >>> import io
    >>> from sklearn_ranknet.datasets import load_letor
    >>> f = io.BytesIO(b"2 qid:7 1:0.5 3:1.0\\n0 qid:7 2:0.2\\n1 qid:9 1:0.1\\n")
    >>> X, y, groups = load_letor(f)
    >>> X.shape, y, groups
    ((3, 3), array([2., 0., 1.]), array([7, 7, 9]))
    >>> X.toarray()[0]
    array([0.5, 0. , 1. ])
    """
    try:
        if isinstance(path, (str, os.PathLike)):
            with _open_binary(path) as f:
                lines = _QidCollector(f)
                X, y = load_svmlight_file(lines, n_features=n_features, dtype=dtype, zero_based=zero_based)
        else:
            lines = _QidCollector(path)
            X, y = load_svmlight_file(lines, n_features=n_features, dtype=dtype, zero_based=zero_based)
        qid = np.array(lines.qids, dtype=np.int64)  # its own memory, not the collector's
    except (ValueError, OverflowError) as error:
        if isinstance(error, _QidFieldError):
            raise ValueError(f"{path!s}, {error}") from None
        if "sorted and unique" in str(error):
            # The parser names neither the file nor the row; LightGBM and
            # XGBoost read such rows, so the file may well come from them.
            raise ValueError(
                f"{path!s}, line {lines.line_number}: the feature ids of a row must increase, each "
                "id once; scikit-learn's SVMlight parser refuses ids out of order or repeated "
                "(LightGBM and XGBoost read them). Sort the features of each row by id and keep "
                f"one value per id (the parser said: {error})."
            ) from None
        if not isinstance(error, OverflowError) and "int()" not in str(error):
            problem = _text_form_problem(path)
            if problem is None:
                raise  # scikit-learn's own message names what is wrong
            raise ValueError(f"{path!s} {problem} (the parser said: {error}).") from None
        # The parser's message (``invalid literal for int()``, or an
        # overflow) names neither the field nor the file. The two fields have
        # different ranges: the parser keeps a feature id in a C int.
        raise ValueError(
            f"{path!s} holds a qid: or a feature id that is not an integer in its range "
            f"(qid: within int64, feature id: 0 to 2**31 - 1) ({error}). Rows must read "
            "`label qid:<integer> <integer>:<value> ...`, the qid: before the features."
        ) from None
    n_samples = X.shape[0]
    if n_samples == 0:
        raise ValueError(f"{path!s} holds no rows (only blank or comment lines).")

    if query_path is None and isinstance(path, (str, os.PathLike)):
        candidate = os.fspath(path) + ".query"
        if os.path.isfile(candidate):
            query_path = candidate
    sizes = None if query_path is None else _read_query_sizes(query_path)
    if sizes is not None and sizes.sum() != n_samples:
        raise ValueError(
            f"The query sizes in {query_path!s} sum to {int(sizes.sum())} "
            f"but {path!s} has {n_samples} rows."
        )

    if qid.shape[0] > 0:
        if qid.shape[0] != n_samples:
            raise ValueError(
                f"Only {qid.shape[0]} of the {n_samples} rows of {path!s} "
                "have a qid: field; either all rows or none must have one."
            )
        groups = np.asarray(qid, dtype=np.int64)
        if sizes is not None:
            starts = np.flatnonzero(np.diff(groups)) + 1
            run_lengths = np.diff(np.r_[0, starts, n_samples])
            if not np.array_equal(run_lengths, sizes):
                raise ValueError(_sidecar_disagreement(query_path, sizes, path, run_lengths, groups))
            problem = _qid_back_after_another(query_path, path, np.r_[0, starts], groups)
            if problem is not None:
                raise ValueError(problem)
        return X, y, groups

    if sizes is None:
        where = (
            f"{os.fspath(path)}.query"
            if isinstance(path, (str, os.PathLike))
            else "<path>.query (path is a file object)"
        )
        raise ValueError(
            f"The file {path!s} has no qid: field and no .query sidecar was "
            f"found at {where}; pass query_path= to give the query sizes."
        )
    groups = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    return X, y, groups
