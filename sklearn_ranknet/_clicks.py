"""Simulated click logs: what a logging ranker showed, and what users clicked.

The simulation follows the click models of Chuklin, Markov and de Rijke,
*Click Models for Web Search* (2015). A session shows a query's top ``k``
documents by the logging ranker's scores. A document is clicked when it is
examined and found attractive:

- its **attractiveness** comes from its grade, with a noise floor (Ai et al.,
  SIGIR 2018; Joachims, Swaminathan and Schnabel, WSDM 2017):
  ``noise + (1 - noise) * (2**label - 1) / (2**max_label - 1)``;
- **examination** depends on the model: the position-based model examines
  rank ``r`` with probability ``(1 / r)**eta`` whatever is shown above it;
  the cascade model (Craswell et al., WSDM 2008) reads down the list and
  stops at the first click, so rank ``r`` is examined when nothing above it
  was clicked.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ._groups import group_rows
from ._validation import MAX_EXPONENTIAL_LABEL, check_relevance_labels, float_column

CLICK_MODELS = ("position_based", "cascade")


@validate_params(
    {
        "y": ["array-like"],
        "groups": ["array-like", None],
        "scores": ["array-like"],
        "n_sessions": [Interval(Integral, 1, None, closed="left")],
        "click_model": [StrOptions(set(CLICK_MODELS))],
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "eta": [Interval(Real, 0, None, closed="left")],
        "click_noise": [Interval(Real, 0, 1, closed="both")],
        # As y's labels: 2**label - 1 is exact up to 30 (and overflows past 1023).
        "max_label": [Interval(Real, 0, MAX_EXPONENTIAL_LABEL, closed="both"), None],
        "temperature": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_clicks(
    y,
    groups,
    scores,
    *,
    n_sessions,
    click_model="position_based",
    k=10,
    eta=1.0,
    click_noise=0.1,
    max_label=None,
    temperature=0.0,
    random_state=None,
):
    """Simulate the click log a logging ranker would collect.

    For each query, every session shows the top ``k`` documents by
    ``scores`` (all of them in a shorter query) and simulates which of them
    a user clicks. The result has one row per shown document per session;
    train on it with ``X[clicks.rows]``, ``clicks.clicks`` as labels and
    ``clicks.sessions`` as the query ids.

    A document is clicked when it is examined and attractive, independently:
    ``P(click) = examination * attractiveness``, with

    - attractiveness ``click_noise + (1 - click_noise) * (2**label - 1) /
      (2**max_label - 1)``: the most relevant grade is always clicked when
      seen, a document of grade 0 with probability ``click_noise``;
    - examination, for ``click_model="position_based"``, ``(1 / r)**eta`` at
      rank ``r`` (Joachims et al. 2017); for ``"cascade"``, 1 at rank 1 and
      then the probability that no document above was clicked, since the
      user reads down the list and stops at the first click (Craswell et
      al. 2008).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True relevance grade of each row, finite and >= 0 (at most 30).
    groups : array-like of shape (n_samples,) or None
        Query id of each row, in any order; ``None`` is one query.
    scores : array-like of shape (n_samples,)
        The logging ranker's score of each row; higher is shown first, and
        tied scores are shown in input order. Finite.
    n_sessions : int
        Sessions simulated per query (at least 1).
    click_model : {"position_based", "cascade"}, default="position_based"
        How examination depends on the rank (see above).
    k : int or None, default=10
        Number of documents a session shows; ``None`` shows every document
        of the query.
    eta : float >= 0, default=1.0
        Strength of the position bias of the position-based model: 0 means
        every shown document is examined. Unused by the cascade model.
    click_noise : float in [0, 1], default=0.1
        Probability that an examined document of grade 0 is clicked.
    max_label : float in [0, 30] or None, default=None
        The top grade of the label scale, always clicked when examined;
        ``None`` takes the largest label in ``y``. Give it when a sample
        may lack the top grade (e.g. ``max_label=4`` for grades 0-4).
    temperature : float >= 0, default=0.0
        0 shows every session of a query the same list. Above 0, each
        session draws its list from the Plackett-Luce model with
        probabilities proportional to ``exp(scores / temperature)`` (a
        randomized logging ranker: documents move between ranks from
        session to session, which lets position bias be told apart from
        relevance).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    clicks : :class:`~sklearn.utils.Bunch`
        With ``n_shown`` the number of rows of the log:

        rows : ndarray of shape (n_shown,), int64
            Index of the shown document in the input rows.
        sessions : ndarray of shape (n_shown,), int64
            Session id, ``0 .. n_queries * n_sessions - 1``: use it as the
            query id. The log is ordered by query (as ``np.unique(groups)``
            sorts them), then session, then rank.
        positions : ndarray of shape (n_shown,), int64
            Rank at which the document was shown, from 1.
        clicks : ndarray of shape (n_shown,), int64
            1 where the document was clicked, else 0.
        examination : ndarray of shape (n_shown,), float64
            The true probability that the document was examined.
        attractiveness : ndarray of shape (n_shown,), float64
            The true probability of a click once examined.
        propensities : ndarray of shape (k,), float64
            The true examination probability at ranks 1..k (``k`` is the
            longest shown list when ``k=None`` or longer than every
            query): ``(1 / r)**eta`` for the position-based model; for the
            cascade model, where it depends on what is shown above, its
            mean over the sessions that reached rank ``r``.

    Raises
    ------
    ValueError
        On inputs of different lengths, non-finite scores or labels,
        negative labels, labels above 30, or a label above ``max_label``.

    See Also
    --------
    make_ranking : A synthetic ranking problem with graded labels.

    Notes
    -----
    The click models are those of Chuklin, Markov and de Rijke, *Click
    Models for Web Search* (Morgan & Claypool, 2015); the position-based
    simulation follows Joachims, Swaminathan and Schnabel, "Unbiased
    learning-to-rank with biased feedback" (WSDM 2017), and the cascade
    model Craswell, Zoeter, Taylor and Ramsey, "An experimental comparison
    of click position-bias models" (WSDM 2008).

    Examples
    --------
    Two queries, three sessions each, the top 2 documents shown:

    >>> from sklearn_ranknet.datasets import make_clicks
    >>> y = [2, 0, 1, 0, 1]
    >>> groups = ["a", "a", "a", "b", "b"]
    >>> scores = [0.9, 0.1, 0.5, 0.3, 0.7]
    >>> log = make_clicks(y, groups, scores, n_sessions=3, k=2, random_state=0)
    >>> log.rows[:6].tolist(), log.positions[:6].tolist()
    ([0, 2, 0, 2, 0, 2], [1, 2, 1, 2, 1, 2])
    >>> log.sessions.tolist()
    [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    >>> log.propensities.tolist()
    [1.0, 0.5]
    """
    y = float_column(y, "y")
    scores = float_column(scores, "scores")
    if len(y) != len(scores):
        raise ValueError(
            f"y has {len(y)} rows but scores has {len(scores)}; give one label and one "
            "logging score per row."
        )
    if len(y) == 0:
        raise ValueError("y and scores are empty; there is nothing to show.")
    if not (np.isfinite(y).all() and np.isfinite(scores).all()):
        raise ValueError("y and scores must be finite; they hold NaN or infinite values.")
    check_relevance_labels(y, exponential_gain=True, input_name="y",
                           remedy="Rescale the labels (e.g. grades 0..4).")
    top = float(y.max()) if max_label is None else float(max_label)
    if y.max() > top:
        raise ValueError(
            f"y holds labels up to {y.max():g}, above max_label={max_label:g}; max_label "
            "is the top grade of the scale and must be at least the largest label."
        )
    query_groups = group_rows(groups, len(y))
    rng = check_random_state(random_state)

    sizes = query_groups.sizes
    shown_sizes = sizes if k is None else np.minimum(sizes, k)
    longest = int(shown_sizes.max())
    # Ranks 1..longest: queries shorter than k show all they have.
    attractiveness = _attractiveness(y, top, float(click_noise))
    rows_by_query = query_groups.arrange(np.arange(len(y)))
    query_of = np.repeat(np.arange(query_groups.n_queries), sizes)
    shown_starts = np.concatenate(([0], np.cumsum(shown_sizes)))
    n_shown_per_session = int(shown_starts[-1])

    n_out = n_shown_per_session * n_sessions
    out_rows = np.empty(n_out, dtype=np.int64)
    out_clicks = np.empty(n_out, dtype=np.int64)
    out_examination = np.empty(n_out)
    # Slot (query q, session s, rank r) of the log, query by query.
    query_start = shown_starts[:-1] * n_sessions
    for session in range(n_sessions):
        shown = _shown_lists(scores, rows_by_query, query_of, query_groups.offsets,
                             shown_sizes, float(temperature), rng)
        first = query_start + session * shown_sizes
        slots = np.repeat(first - shown_starts[:-1], shown_sizes) + np.arange(n_shown_per_session)
        out_rows[slots] = shown
        clicks, examination = _session_clicks(
            attractiveness[shown], shown_starts, shown_sizes, longest, click_model, float(eta), rng
        )
        out_clicks[slots] = clicks
        out_examination[slots] = examination

    session_sizes = np.repeat(shown_sizes, n_sessions)
    out_positions = _ranks(session_sizes)
    out_sessions = np.repeat(np.arange(len(session_sizes), dtype=np.int64), session_sizes)
    return Bunch(
        rows=out_rows,
        sessions=out_sessions,
        positions=out_positions,
        clicks=out_clicks,
        examination=out_examination,
        attractiveness=attractiveness[out_rows],
        propensities=_propensities(out_positions, out_examination, longest, click_model, float(eta)),
    )


def _attractiveness(y, top, click_noise):
    """P(click | examined) of each row, from its grade."""
    if top == 0:
        return np.full(len(y), click_noise)
    share = np.expm1(y * np.log(2.0)) / np.expm1(top * np.log(2.0))
    return click_noise + (1.0 - click_noise) * share


def _ranks(list_sizes):
    """Rank (from 1) of every slot of consecutive lists of these sizes."""
    starts = np.cumsum(list_sizes) - list_sizes
    return np.arange(int(list_sizes.sum()), dtype=np.int64) - np.repeat(starts, list_sizes) + 1


def _shown_lists(scores, rows_by_query, query_of, offsets, shown_sizes, temperature, rng):
    """The input rows one session shows, query by query and rank by rank.

    A stable sort by (query, -score): ties keep the input order. With a
    temperature, Gumbel noise on ``scores / temperature`` draws the list
    from the Plackett-Luce model (the Gumbel-max trick, applied to every
    rank at once)."""
    keys = scores[rows_by_query]
    if temperature > 0:
        keys = keys / temperature + rng.gumbel(size=len(keys))
    order = np.lexsort((-keys, query_of))
    ranks = np.arange(len(order)) - offsets[query_of]
    return rows_by_query[order[ranks < shown_sizes[query_of]]]


def _session_clicks(attractiveness, shown_starts, shown_sizes, longest, click_model, eta, rng):
    """Clicks and examination probabilities of one session of every query,
    rank by rank (vectorized over the queries that show that rank)."""
    clicks = np.zeros(len(attractiveness), dtype=np.int64)
    examination = np.empty(len(attractiveness))
    draws = rng.random_sample(len(attractiveness))
    # For the cascade: the chance that nothing above was clicked, and
    # whether this session's user is still reading.
    unclicked_above = np.ones(len(shown_sizes))
    reading = np.ones(len(shown_sizes), dtype=bool)
    for rank in range(longest):
        queries = np.flatnonzero(shown_sizes > rank)
        slots = shown_starts[queries] + rank
        attract = attractiveness[slots]
        if click_model == "position_based":
            examination[slots] = (1.0 / (rank + 1)) ** eta
            clicks[slots] = draws[slots] < examination[slots] * attract
        else:
            examination[slots] = unclicked_above[queries]
            clicked = reading[queries] & (draws[slots] < attract)
            clicks[slots] = clicked
            reading[queries] &= ~clicked
            unclicked_above[queries] *= 1.0 - attract
    return clicks, examination


def _propensities(positions, examination, longest, click_model, eta):
    """True examination probability at ranks 1..longest."""
    if click_model == "position_based":
        return (1.0 / np.arange(1, longest + 1)) ** eta
    totals = np.bincount(positions - 1, weights=examination, minlength=longest)
    return totals / np.bincount(positions - 1, minlength=longest)
