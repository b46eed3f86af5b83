"""Learning from a click log: the log merged into lists of click rates, and
the examination propensity of each position estimated from it.

A click log holds one row per shown document per session, with the rank it
was shown at and whether it was clicked. Under the position-based model a
click needs the document to be examined (probability ``theta[rank]``) and
found attractive, so ``E[click] = theta[rank] * attractiveness``: a click
divided by its position's propensity is an unbiased label of
attractiveness (Joachims, Swaminathan and Schnabel, WSDM 2017).

The propensities are learnt with the ranker, in turns (the regression EM of
Wang et al., WSDM 2018, with the ranker as the relevance model): the ranker
is fitted on the click rates divided by the current propensities, and the
propensities are then re-estimated by a Poisson model of the click rates,
``log E[rate] = a[position] + beta * score``, where ``score`` is the ranker's
standardized score of the document. A document's relevance is told apart
from its position only through the ranker's scores: across lists, documents
the ranker scores alike are shown at different positions. A logging ranker
that randomizes its lists (``make_clicks(temperature=...)``) makes that
contrast direct. A model with a free effect per list as well, tried first,
let the ranker and the list effects between them explain the position
effect away under a deterministic logger (estimates 2 to 7 times the truth
at ranks 2-10 on ``make_ranking``).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import column_or_1d

from ._groups import group_rows, query_weights

#: Ranker fits after the first (on the raw click rates): each re-estimates
#: the propensities from the ranker before it, then refits on the corrected
#: rates.
N_REFITS = 5
#: Coordinate-ascent sweeps of one Poisson fit.
POISSON_SWEEPS = 200
#: The smallest propensity kept: below it a click would weigh more than a
#: thousand and a position never clicked would divide by zero.
MIN_PROPENSITY = 1e-3


def check_click_log(clicks, positions, n_samples, position_column=None):
    """``clicks`` and ``positions`` as float64 and int64 columns, or a
    ValueError naming what is wrong with them.

    Parameters
    ----------
    clicks : array-like of shape (n_samples,)
        The labels of a click log: 0 or 1.
    positions : array-like of shape (n_samples,)
        The 1-based rank each row was shown at: whole numbers >= 1.
    n_samples : int
        Rows of X.
    position_column : str, int or None, default=None
        The column of X the positions were read from, if any: the messages
        then name it.
    """
    name = "positions" if position_column is None else f"the position column of X (position_column={position_column!r})"
    subject = name if position_column is None else name[0].upper() + name[1:]  # a sentence's first word
    # Values the user did not write there come from a step before the
    # ranker that transformed every column.
    hint = "" if position_column is None else (
        " A step before the ranker that transforms every column (a scaler, PCA) changes it "
        "too: pass the column through unchanged (a ColumnTransformer's 'passthrough')."
    )
    shape = np.shape(positions)
    if len(shape) == 0 or len(shape) > 2 or (len(shape) == 2 and shape[1] != 1):
        # column_or_1d's own messages name every input "y".
        raise ValueError(f"{subject} must be 1-d, one rank per row; got an array of shape {shape}.{hint}")
    positions = column_or_1d(positions, input_name="positions")
    if len(positions) != n_samples:
        raise ValueError(
            f"positions has {len(positions)} values but X has {n_samples} rows; give the "
            "rank each row was shown at, one per row."
        )
    if positions.dtype.kind not in "biuf":
        raise ValueError(
            f"{subject} must hold whole numbers (the 1-based rank each row was shown at); got dtype "
            f"{positions.dtype}.{hint}"
        )
    if positions.dtype.kind == "f":
        if not np.isfinite(positions).all() or np.any(positions != np.round(positions)):
            bad = positions[~np.isfinite(positions) | (positions != np.round(positions))][0]
            raise ValueError(
                f"{subject} must hold whole numbers (the 1-based rank each row was shown at); got {bad!r}.{hint}"
            )
    if n_samples and positions.min() < 1:
        raise ValueError(
            f"{subject} must hold 1-based ranks (1 = shown first); got {positions.min()!r}.{hint}"
        )
    if n_samples and positions.max() > n_samples:
        # Also keeps the per-rank arrays O(n): a session that showed rank p
        # showed p documents, which a log of fewer rows cannot hold.
        raise ValueError(
            f"The deepest rank in {name} is {positions.max()!r}, but the log holds only {n_samples} rows: "
            f"give the rank each row was shown at within its session (1 = first).{hint}"
        )
    positions = positions.astype(np.int64)
    clicks = np.asarray(clicks, dtype=np.float64)
    if len(clicks) != n_samples:
        raise ValueError(f"y has {len(clicks)} values but X has {n_samples} rows; give one click (0 or 1) per row.")
    outside = (clicks != 0) & (clicks != 1)
    if np.any(outside):
        raise ValueError(
            "With positions, y must be a click log: 1 where the row was clicked, 0 where it "
            f"was not; got {clicks[outside][0]!r}. To train on graded labels, leave positions out."
        )
    if n_samples and not clicks.any():
        raise ValueError("y holds no click (every value is 0): a click log without clicks has nothing to learn from.")
    return clicks, positions


def check_propensities_can_be_estimated(clicks, positions):
    """A ValueError when the log cannot tell the propensities, which are
    relative to position 1: no row shown at position 1 (positions counted
    from 0 and shifted once too often, or a log of the lower ranks only), or
    no click there. Known propensities (``propensities=``) need neither."""
    at_top = positions == 1
    if not at_top.any():
        raise ValueError(
            f"No row of the click log was shown at position 1 (the shallowest is {int(positions.min())}): "
            "the propensities are estimated relative to position 1, so the log must show it. Give "
            "positions as 1-based ranks within each session (1 = shown first), or give the ranks' "
            "propensities as propensities=."
        )
    if not clicks[at_top].any():
        raise ValueError(
            "The click log holds no click at position 1, so the propensities, which are estimated "
            "relative to position 1, cannot be: gather more sessions, or give the ranks' "
            "propensities as propensities=."
        )


def check_propensities_have_positions(positions, propensities):
    """Known propensities are those of a click log's ranks: refuse them
    without the ranks."""
    if propensities is not None and positions is None:
        raise ValueError(
            "propensities are those of the ranks of a click log, and need positions (the rank "
            "each row was shown at); give both, or neither to train on graded labels."
        )


def check_known_propensities(propensities, n_positions):
    """Given propensities as a float64 array of the first ``n_positions``
    ranks, or a ValueError."""
    values = np.asarray(propensities)
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        raise ValueError(
            "propensities must be a 1-d array of numbers, the examination propensity of each rank "
            f"from 1; got an array of shape {values.shape} and dtype {values.dtype}."
        )
    values = values.astype(np.float64)
    if len(values) < n_positions:
        raise ValueError(
            f"propensities gives {len(values)} ranks, but positions go down to {n_positions}: give "
            "one propensity per rank, down to the deepest shown."
        )
    values = values[:n_positions]
    bad = ~(np.isfinite(values) & (values > 0))
    if np.any(bad):
        raise ValueError(f"propensities must be finite and > 0; got {values[bad][0]!r}.")
    return values


def row_identities(X):
    """One integer per row of ``X``, equal for equal rows.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Finite features (CSR in canonical form).

    Returns
    -------
    ids : ndarray of shape (n_samples,), int64
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.eliminate_zeros()  # an explicit 0 and an absent one are one row
        X.sort_indices()
        data = X.data + 0.0  # -0.0 and 0.0 are one value
        keys = [
            X.indices[X.indptr[row] : X.indptr[row + 1]].tobytes() + b"|" + data[X.indptr[row] : X.indptr[row + 1]].tobytes()
            for row in range(X.shape[0])
        ]
        # Numbered in sorted order of the keys: the same whatever the rows' order.
        number = {key: i for i, key in enumerate(sorted(set(keys)))}
        return np.array([number[key] for key in keys], dtype=np.int64)
    rows = np.ascontiguousarray(X)
    rows = rows + 0.0  # -0.0 and 0.0 are one value
    as_bytes = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1])))
    return np.unique(as_bytes.ravel(), return_inverse=True)[1].astype(np.int64).ravel()


@dataclass
class MergedLog:
    """A click log as lists of click rates.

    Sessions that showed the same documents (equal feature rows) at the same
    positions are one list: its click rate at each position is the mean of
    their clicks there, and its weight their number (or their summed
    weights). Entries are ordered by list, then position.

    Attributes
    ----------
    rows : ndarray of shape (n_entries,)
        A row of X holding each entry's features.
    rates : ndarray of shape (n_entries,)
        The entry's click rate (weighted mean of its sessions' clicks).
    positions : ndarray of shape (n_entries,)
        The 1-based rank it was shown at.
    lists : ndarray of shape (n_entries,)
        Its list, ``0 .. n_lists - 1``.
    weights : ndarray of shape (n_lists,)
        Sessions merged into each list, or their summed weights.
    """

    rows: np.ndarray
    rates: np.ndarray
    positions: np.ndarray
    lists: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, X, clicks, groups, positions, sample_weight=None):
        """The merged log of a click log (rows of ``X`` with their
        ``clicks``, session ids ``groups`` and ``positions``, checked by
        :func:`check_click_log`)."""
        sessions = group_rows(groups, len(clicks))
        session_weights = query_weights(sessions, sample_weight)
        if session_weights is None:
            session_weights = np.ones(sessions.n_queries)
        order = sessions.order if sessions.order is not None else np.arange(len(clicks))
        session_of = np.repeat(np.arange(sessions.n_queries), sessions.sizes)
        # Within each session, by position.
        by_position = np.lexsort((positions[order], session_of))
        order = order[by_position]
        shown_at = positions[order]
        twice = (np.diff(shown_at) == 0) & (np.diff(session_of) == 0)
        if np.any(twice):
            first = np.flatnonzero(twice)[0]
            raise ValueError(
                f"A session shows two rows at position {shown_at[first]}: each rank of a "
                "session holds one document. Check that groups gives one id per session "
                "(not per query) and positions the rank within it."
            )
        identity = row_identities(X)[order]
        offsets = np.concatenate([[0], np.cumsum(sessions.sizes)])
        keys = np.stack([identity, shown_at], axis=1)
        list_of_session = np.empty(sessions.n_queries, dtype=np.int64)
        seen = {}
        for session in range(sessions.n_queries):
            key = keys[offsets[session] : offsets[session + 1]].tobytes()
            list_of_session[session] = seen.setdefault(key, len(seen))
        n_lists = len(seen)
        weights = np.bincount(list_of_session, weights=session_weights, minlength=n_lists)
        # One session stands for each list (lists are numbered in order of
        # first sight, so np.unique's first indices are those sessions); the
        # list's entries sum the clicks of all its sessions.
        first_session = np.unique(list_of_session, return_index=True)[1]
        entry_start = np.concatenate([[0], np.cumsum(sessions.sizes[first_session])])
        rank_in_session = np.arange(len(clicks)) - offsets[session_of]
        entry_of_row = entry_start[list_of_session[session_of]] + rank_in_session
        weighted_clicks = clicks[order] * session_weights[session_of]
        totals = np.bincount(entry_of_row, weights=weighted_clicks, minlength=entry_start[-1])
        lists = np.repeat(np.arange(n_lists), np.diff(entry_start))
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.where(weights[lists] > 0, totals / weights[lists], 0.0)
        first_rows = np.flatnonzero(np.isin(session_of, first_session))
        representative = order[first_rows]  # sessions in order of their lists, as first_session is
        return cls(representative, rates, positions[representative], lists, weights)

    @property
    def n_lists(self):
        return len(self.weights)

    def debiased_labels(self, propensities):
        """Click rates divided by their position's propensity."""
        return self.rates / propensities[self.positions - 1]


def estimate_propensities(log, scores, n_positions, start=None):
    """Examination propensities of positions 1..n_positions, relative to
    position 1, from a merged log and a ranker's scores of its entries.

    Fits ``log E[rate] = a[position] + beta * z`` by weighted Poisson
    maximum likelihood (each list weighed by its sessions), ``z`` the scores
    standardized, by coordinate ascent: ``a`` has a closed-form update,
    ``beta`` a Newton step.

    Parameters
    ----------
    log : MergedLog
    scores : ndarray of shape (n_entries,)
    n_positions : int
    start : ndarray of shape (n_positions,) or None
        Propensities to start from; ``None`` starts from 1 everywhere.

    Returns
    -------
    propensities : ndarray of shape (n_positions,)
        ``exp(a)`` divided by its value at position 1, at least
        :data:`MIN_PROPENSITY`. A position no list shows gets the
        propensity of the position above it.
    """
    scores = np.asarray(scores, dtype=np.float64)
    spread = scores.std()
    z = (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)
    position = log.positions - 1
    w = log.weights[log.lists]
    clicks = w * log.rates
    clicks_at = np.bincount(position, weights=clicks, minlength=n_positions)
    examined = np.ones(n_positions) if start is None else np.asarray(start, dtype=np.float64).copy()
    beta = 0.0
    for _ in range(POISSON_SWEEPS):
        attractive = np.exp(beta * z)
        exposure = np.bincount(position, weights=w * attractive, minlength=n_positions)
        examined = np.divide(clicks_at, exposure, out=examined, where=exposure > 0)
        mean = w * examined[position] * attractive
        curvature = np.sum(mean * z * z)
        if curvature > 0:  # a Newton step, kept within one standard deviation's worth
            beta += np.clip(np.sum((clicks - mean) * z) / curvature, -1.0, 1.0)
    shown = np.bincount(position, minlength=n_positions) > 0
    propensities = examined / examined[0] if examined[0] > 0 else np.ones(n_positions)
    for p in range(1, n_positions):
        if not shown[p]:
            propensities[p] = propensities[p - 1]
    return np.maximum(propensities, MIN_PROPENSITY)
