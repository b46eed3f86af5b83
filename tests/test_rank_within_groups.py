"""rank_within_groups against a slow, obvious pure-Python reference."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_ranknet import rank_within_groups
from sklearn_ranknet.metrics import ndcg_per_query


def reference_ranks(scores, groups):
    """Dict of lists: the rows of each query, sorted by descending score,
    ties in input order (Python's sort is stable)."""
    rows_of = {}
    for row, query in enumerate(groups):
        rows_of.setdefault(query, []).append(row)
    ranks = [None] * len(scores)
    for rows in rows_of.values():
        for rank, row in enumerate(sorted(rows, key=lambda r: -scores[r]), start=1):
            ranks[row] = rank
    return ranks


def test_small_example_by_hand():
    ranks = rank_within_groups([0.3, 0.5, 0.5, 0.9, 0.5], ["a", "b", "b", "a", "b"])
    assert ranks.dtype == np.int64
    assert ranks.tolist() == [2, 1, 2, 1, 3]


@pytest.mark.parametrize(
    "groups",
    [
        [3, 1, 3, 2, 1, 3, 2],  # ints, interleaved
        ["q3", "q1", "q3", "q2", "q1", "q3", "q2"],  # strings
        [3.5, -1.0, 3.5, 2.0, -1.0, 3.5, 2.0],  # floats
        np.array([3, 1, 3, 2, 1, 3, 2], dtype=np.uint8),
        np.array(["x", "a", "x", "b", "a", "x", "b"], dtype=object),
    ],
)
def test_any_id_dtype_and_order(groups):
    scores = [0.1, 2.0, 0.7, -1.0, 2.0, 0.7, 5.0]
    assert rank_within_groups(scores, groups).tolist() == reference_ranks(scores, list(groups))


def test_sorted_contiguous_queries_and_one_query():
    scores = np.array([1.0, 3.0, 2.0, 0.0, -5.0])
    assert rank_within_groups(scores, [0, 0, 0, 1, 1]).tolist() == [3, 1, 2, 1, 2]
    assert rank_within_groups(scores, None).tolist() == [3, 1, 2, 4, 5]
    assert rank_within_groups(scores, groups=[4] * 5).tolist() == [3, 1, 2, 4, 5]


def test_integer_bool_and_column_scores():
    assert rank_within_groups([3, 1, 2], [0, 0, 0]).tolist() == [1, 3, 2]
    assert rank_within_groups([True, False, True], [0, 0, 0]).tolist() == [1, 3, 2]
    assert rank_within_groups(np.array([[1.0], [2.0]]), [0, 0]).tolist() == [2, 1]


def test_infinities_signed_zeros_and_ties():
    scores = [0.0, -np.inf, np.inf, -0.0, np.inf, 1.0]
    ranks = rank_within_groups(scores, [0] * 6)
    # +inf first (ties in input order), -0.0 ties 0.0, -inf last
    assert ranks.tolist() == [4, 6, 1, 5, 2, 3]


def test_empty_input():
    ranks = rank_within_groups(np.array([]), np.array([], dtype=np.int64))
    assert ranks.shape == (0,) and ranks.dtype == np.int64


def test_pandas_series_and_top_k_selection():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "query": ["b", "a", "b", "a", "b", "a", "b"],
            "score": [0.2, 1.5, 0.7, 0.9, -0.3, 2.0, 0.1],
        },
        index=[10, 11, 12, 13, 14, 15, 16],
    )
    df["rank"] = rank_within_groups(df["score"], df["query"])
    top = df[df["rank"] <= 2].sort_values(["query", "rank"])
    assert top.index.tolist() == [15, 11, 12, 10]
    # the same numbers as pandas' own groupby rank
    expected = df.groupby("query")["score"].rank(ascending=False, method="first")
    np.testing.assert_array_equal(df["rank"], expected.astype(np.int64))


def test_matches_the_metrics_ranking_with_ignore_ties():
    """NDCG with ignore_ties=True ranks the rows exactly as these ranks do."""
    rng = np.random.RandomState(0)
    groups = rng.randint(0, 6, size=60)
    scores = rng.randint(0, 4, size=60).astype(float)  # many ties
    labels = rng.randint(0, 4, size=60)
    ranks = rank_within_groups(scores, groups)
    # scoring by -rank gives no ties and must give the same NDCG
    _, by_scores = ndcg_per_query(labels, scores, groups=groups, ignore_ties=True)
    _, by_ranks = ndcg_per_query(labels, -ranks, groups=groups, ignore_ties=True)
    np.testing.assert_array_equal(by_scores, by_ranks)


@pytest.mark.parametrize("bad", [np.nan, float("nan")])
def test_nan_score_is_an_error(bad):
    with pytest.raises(ValueError, match="NaN.*row 2"):
        rank_within_groups([0.1, 0.2, bad, 0.3], [0, 0, 1, 1])


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="groups has 3 entries but the data has 4 rows"):
        rank_within_groups([0.1, 0.2, 0.3, 0.4], [0, 0, 1])


def test_bad_shapes_and_ids_are_errors():
    with pytest.raises(ValueError):
        rank_within_groups(np.zeros((3, 2)), [0, 0, 1])
    with pytest.raises(ValueError, match="NaN or infinite query ids"):
        rank_within_groups([0.1, 0.2], [0.0, np.nan])
    with pytest.raises(ValueError, match="different types"):
        rank_within_groups([0.1, 0.2], [1, "1"])


def test_one_row_per_query_warns():
    # Swapped arguments: the float scores become query ids, one per row, and
    # every rank would be 1 without a word.
    qid = [7, 7, 7, 9, 9]
    scores = [0.3, 0.1, 0.2, 0.5, 0.4]
    with pytest.warns(UserWarning, match="Every one of the 5 queries holds a single row"):
        ranks = rank_within_groups(qid, scores)
    assert ranks.tolist() == [1] * 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rank_within_groups(scores, qid).tolist() == [1, 3, 2, 1, 2]
        assert rank_within_groups([0.5], [3]).tolist() == [1]  # one row: nothing to say


def test_inputs_are_not_modified():
    scores = np.array([0.3, 0.1, 0.2])
    groups = np.array([2, 1, 2])
    rank_within_groups(scores, groups)
    assert scores.tolist() == [0.3, 0.1, 0.2] and groups.tolist() == [2, 1, 2]


# Few distinct values, so that ties and repeated queries are common.
_scores = st.lists(
    st.one_of(
        st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf]),
        st.floats(-1e6, 1e6, allow_nan=False),
    ),
    min_size=0,
    max_size=60,
)


@pytest.mark.filterwarnings("ignore:Every one of the")  # drawn ids may all differ
@settings(max_examples=200, deadline=None)
@given(_scores, st.data())
def test_matches_the_reference(scores, data):
    n = len(scores)
    groups = data.draw(
        st.one_of(
            st.lists(st.integers(-3, 3), min_size=n, max_size=n),
            st.lists(st.sampled_from(["a", "b", "zz"]), min_size=n, max_size=n),
        )
    )
    ranks = rank_within_groups(np.array(scores, dtype=float), groups)
    assert ranks.tolist() == reference_ranks(scores, groups)


@pytest.mark.filterwarnings("ignore:Every one of the")  # drawn ids may all differ
@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=50), st.data())
def test_ranks_are_a_permutation_of_each_query(groups, data):
    """Every query's ranks are exactly 1..n_docs, and relabelling the query
    ids (any one-to-one map) changes nothing."""
    scores = np.array(data.draw(st.lists(st.integers(-2, 2), min_size=len(groups), max_size=len(groups))), float)
    groups = np.array(groups)
    ranks = rank_within_groups(scores, groups)
    for query in np.unique(groups):
        assert sorted(ranks[groups == query].tolist()) == list(range(1, np.sum(groups == query) + 1))
    relabel = np.array(data.draw(st.permutations(["w", "x", "y", "z"])))
    np.testing.assert_array_equal(rank_within_groups(scores, relabel[groups]), ranks)


def test_integer_scores_that_float64_would_tie_are_refused():
    # 2**53 + 1 rounds to 2**53 in float64: ranked as floats, the three rows
    # would tie two ways and come out [2 3 1] instead of [3 2 1].
    with pytest.raises(ValueError, match="2\\*\\*53 = .* or more"):
        rank_within_groups(np.array([2**53, 2**53 + 1, 2**53 + 2]), [0, 0, 0])
    # 2**53 + 1 rounds onto 2**53 itself; Python ints past int64 too.
    with pytest.raises(ValueError, match="2\\*\\*53 = .* or more"):
        rank_within_groups(np.array([2**53, 2**53 + 1]), [0, 0])
    with pytest.raises(ValueError, match="2\\*\\*53 = .* or more"):
        rank_within_groups([2**64 + 3, 2**64 + 1], [0, 0])
    np.testing.assert_array_equal(rank_within_groups(np.array([2**53 + 2, 5, 2**60]), [0, 0, 0]), [2, 3, 1])
    np.testing.assert_array_equal(rank_within_groups(np.array([2**64 - 1, 5], dtype=np.uint64), [0, 0]), [1, 2])
    with pytest.raises(ValueError, match="must hold numbers; got datetime64"):
        rank_within_groups(np.array([1, 2], dtype="datetime64[ns]"), [0, 0])


def test_a_scalar_is_refused_under_the_name_scores():
    # scikit-learn's column_or_1d calls any 0-d input "y".
    with pytest.raises(ValueError, match=r"^scores must be 1-d, one value per row; got an array of shape \(\)"):
        rank_within_groups(1.0, None)
