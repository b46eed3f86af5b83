import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_ranknet._groups import group_rows, groups_from_sizes
from sklearn_ranknet.metrics import ndcg_per_query


def _segments(query_groups, values):
    arranged = query_groups.arrange(np.asarray(values))
    offsets = query_groups.offsets
    return [arranged[offsets[q] : offsets[q + 1]].tolist() for q in range(len(offsets) - 1)]


def test_sorted_input_needs_no_reordering():
    qg = group_rows([1, 1, 2, 5, 5, 5], 6)
    assert qg.order is None
    assert qg.offsets.tolist() == [0, 2, 3, 6]
    assert qg.query_ids.tolist() == [1, 2, 5]
    assert qg.sizes.tolist() == [2, 1, 3]


def test_interleaved_ids_are_gathered_in_sorted_id_order_keeping_row_order():
    groups = np.array(["b", "a", "b", "c", "a", "b"])
    qg = group_rows(groups, 6)
    assert qg.query_ids.tolist() == ["a", "b", "c"]
    assert _segments(qg, np.arange(6)) == [[1, 4], [0, 2, 5], [3]]


def test_contiguous_but_unsorted_runs_use_the_general_path():
    qg = group_rows([3, 3, 1, 1, 1], 5)
    assert qg.query_ids.tolist() == [1, 3]
    assert _segments(qg, np.arange(5)) == [[2, 3, 4], [0, 1]]


def test_none_is_one_query():
    qg = group_rows(None, 4)
    assert qg.n_queries == 1 and qg.offsets.tolist() == [0, 4] and qg.order is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=40))
def test_arrange_and_restore_are_inverse_and_match_a_dict(ids):
    ids = np.array(ids)
    qg = group_rows(ids, len(ids))
    rows = np.arange(len(ids)) * 10.0
    np.testing.assert_array_equal(qg.restore(qg.arrange(rows)), rows)
    expected = {}
    for row, q in enumerate(ids):
        expected.setdefault(q, []).append(rows[row])
    assert dict(zip(qg.query_ids.tolist(), _segments(qg, rows))) == expected
    assert qg.query_ids.tolist() == sorted(expected)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=30), st.data())
def test_rows_of_selects_whole_queries(ids, data):
    ids = np.array(ids)
    qg = group_rows(ids, len(ids))
    chosen = data.draw(st.lists(st.integers(0, qg.n_queries - 1), unique=True))
    rows, offsets = qg.rows_of(chosen)
    for i, q in enumerate(chosen):
        segment = rows[offsets[i] : offsets[i + 1]]
        np.testing.assert_array_equal(segment, np.flatnonzero(ids == qg.query_ids[q]))


def test_groups_from_sizes_round_trips():
    groups = groups_from_sizes([3, 1, 2])
    assert groups.tolist() == [0, 0, 0, 1, 2, 2]
    assert group_rows(groups, 6).sizes.tolist() == [3, 1, 2]


@pytest.mark.parametrize(
    "groups, match",
    [
        ([0, 0, 1], "3 entries but the data has 4 rows"),
        ([0.0, np.nan, 1.0, 1.0], "NaN"),
        ([0.0, np.inf, 1.0, 1.0], "NaN or infinite"),
        (np.array([1, None, 2, 2], dtype=object), "NaN"),
        (np.array(["2020-01-01", "NaT", "2020-01-02", "NaT"], dtype="datetime64[D]"), "row 1; NaT"),
        (np.array([1, 2, 3, "NaT"], dtype="timedelta64[s]"), "row 3; NaT"),
        (pd.array(["a", None, "b", "b"], dtype="string").to_numpy(), "row 1; NaT"),
        (pd.Series(["a", "a", "b", pd.NaT], dtype=object).to_numpy(), "row 3; NaT"),
        (np.array([1, "a", 2, 2], dtype=object), "cannot be compared"),
        (np.zeros((2, 2)), "1-D"),
    ],
)
def test_bad_groups_are_named(groups, match):
    with pytest.raises(ValueError, match=match):
        group_rows(groups, 4)


# Found by a mutation audit of the suite (2026-11-27).

def test_a_column_of_query_ids_is_one_id_per_row():
    """groups of shape (n, 1) (a one-column DataFrame's values) are read as
    the 1-D ids, in the metrics too."""
    ids = np.array([3, 1, 3, 1, 1])
    column = group_rows(ids[:, None], 5)
    flat = group_rows(ids, 5)
    np.testing.assert_array_equal(column.offsets, flat.offsets)
    np.testing.assert_array_equal(column.order, flat.order)
    np.testing.assert_array_equal(column.query_ids, flat.query_ids)
    y, s = [1, 0, 2, 1, 0], [0.1, 0.9, 0.8, 0.3, 0.2]
    for got, expected in zip(ndcg_per_query(y, s, groups=ids[:, None]), ndcg_per_query(y, s, groups=ids)):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, float("nan")])
def test_infinite_ids_in_an_object_array_are_missing(bad):
    """As with float ids, an infinite id in an object array (ints mixed with
    a float inf, e.g. after pandas' fillna(np.inf)) is refused."""
    groups = np.array([1, bad, 2, 2], dtype=object)
    with pytest.raises(ValueError, match="row 1"):
        group_rows(groups, 4)
