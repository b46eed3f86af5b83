"""Query ids inside X (``query_column``): scikit-learn's tools with routing off.

A ranker with ``query_column`` must behave exactly as the same ranker given
the remaining columns and ``groups=``; scikit-learn's model-selection tools
must then score query by query with metadata routing off (its default), with
the same numbers as with routing on.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate, learning_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet._metadata_columns import merge_groups, query_column_of
from sklearn_ranknet._wrapped import wrapped_chain
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.inspection import permutation_importance
from sklearn_ranknet.metrics import ap_per_query, map_score, map_scorer, ndcg_per_query, ndcg_score, ndcg_scorer

from ._assertions import assert_same_training

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

RANKERS = [LambdaRankRanker, RankNetRanker, ListNetRanker]
FAST = dict(hidden_layer_sizes=(4,), max_iter=4, random_state=0)

# Removing the column makes a new array, and BLAS may sum in another order
# on another memory alignment: models agree to rounding amplified by
# training (see assert_same_training), and NDCG, a function of the order of
# scores that differ by far more, to rounding of its own sums.
NDCG_ATOL = 1e-12


def _data(n_queries=24):
    X, y, qid = make_ranking(n_queries=n_queries, n_features=5, n_informative=3, max_docs=12, random_state=0)
    # Interleave the queries: ids must not rely on adjacent rows.
    order = np.random.default_rng(0).permutation(len(y))
    return X[order], y[order], qid[order]


def _frame(X, qid, position=2):
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame.insert(position, "qid", qid)
    return frame


@pytest.mark.parametrize("cls", RANKERS)
@pytest.mark.parametrize("position", [0, 3, -1])
def test_an_array_column_is_the_same_as_groups(cls, position):
    X, y, qid = _data()
    with_column = np.insert(X, position % (X.shape[1] + 1), qid, axis=1)
    reference = cls(**FAST).fit(X, y, groups=qid)
    ranker = cls(query_column=position, **FAST).fit(with_column, y)
    assert ranker.n_features_in_ == X.shape[1]
    assert_same_training(ranker.predict(with_column), reference.predict(X))
    assert ranker.score(with_column, y) == pytest.approx(reference.score(X, y, groups=qid), abs=NDCG_ATOL)


def test_a_dataframe_column_by_name_or_position():
    X, y, qid = _data()
    frame = _frame(X, qid)
    reference = LambdaRankRanker(**FAST).fit(X, y, groups=qid)
    for query_column in ("qid", 2, -X.shape[1] + 1):
        ranker = LambdaRankRanker(query_column=query_column, **FAST).fit(frame, y)
        assert list(ranker.feature_names_in_) == [f"f{i}" for i in range(X.shape[1])]
        assert_same_training(ranker.predict(frame), reference.predict(X))
        assert ranker.score(frame, y) == pytest.approx(reference.score(X, y, groups=qid), abs=NDCG_ATOL)


def test_string_query_ids_in_a_dataframe():
    X, y, qid = _data()
    frame = _frame(X, np.array([f"query-{q}" for q in qid], dtype=object))
    # The strings sort in another order than the integers; with one
    # minibatch per epoch only the summation order changes.
    one_batch = dict(batch_size=len(np.unique(qid)), **FAST)
    reference = LambdaRankRanker(**one_batch).fit(X, y, groups=qid)
    ranker = LambdaRankRanker(query_column="qid", **one_batch).fit(frame, y)
    assert_same_training(ranker.predict(frame), reference.predict(X))


def test_a_sparse_column_is_the_same_as_groups():
    X, y, qid = _data()
    with_column = sp.csr_matrix(np.column_stack([X, qid]))
    reference = LambdaRankRanker(**FAST).fit(sp.csr_matrix(X), y, groups=qid)
    ranker = LambdaRankRanker(query_column=-1, **FAST).fit(with_column, y)
    assert_same_training(ranker.predict(with_column), reference.predict(sp.csr_matrix(X)))


def test_partial_fit_reads_the_column():
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    reference = LambdaRankRanker(**FAST)
    ranker = LambdaRankRanker(query_column=0, **FAST)
    for _ in range(2):
        reference.partial_fit(X, y, groups=qid)
        ranker.partial_fit(with_column, y)
    assert_same_training(ranker.predict(with_column), reference.predict(X))


def test_groups_and_column_must_describe_the_same_queries():
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    ranker = LambdaRankRanker(query_column=0, **FAST)
    ranker.fit(with_column, y, groups=qid)  # the same ids: fine
    reference = ranker.predict(with_column)
    # Other ids for the same queries, in the same sorted order (minibatches
    # follow it): the same model. A scaler maps the column so.
    for same_queries in (qid + 1, (qid - qid.mean()) / qid.std()):
        np.testing.assert_array_equal(ranker.fit(with_column, y, groups=same_queries).predict(with_column), reference)
    with pytest.raises(ValueError, match="groups and the query column of X .* put the rows in different queries"):
        ranker.fit(with_column, y, groups=qid // 2)  # two queries merged into one
    with pytest.raises(ValueError, match="groups and the query column of X .* put the rows in different queries"):
        ranker.fit(with_column, y, groups=qid[:-1])  # one id short: not numpy's broadcasting error
    ranker.fit(with_column, y)
    with pytest.raises(ValueError, match="different queries.*set_fit_request"):
        ranker.score(with_column, y, groups=np.roll(qid, 1))
    # Ids of mixed types cannot be matched: the error names the input that
    # holds them, as a fit given only that input does.
    mixed = qid.astype(object)
    mixed[::2] = mixed[::2].astype(str)
    with pytest.raises(ValueError, match=r"^groups mixes query ids that cannot be compared"):
        ranker.fit(with_column, y, groups=mixed)
    with pytest.raises(ValueError, match=r"^the query column of X \(query_column=0\) mixes query ids"):
        ranker.fit(np.column_stack([mixed, X]), y, groups=qid)


def test_scaled_query_column_with_routed_groups_in_a_pipeline():
    """With routing on, GroupKFold needs groups, the ranker requests them,
    and the scaler standardizes the id column it also reads: both describe
    the same queries, so the pipeline fits as with routing off."""
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    pipe = make_pipeline(StandardScaler(), LambdaRankRanker(query_column=0, **FAST))
    with sklearn.config_context(enable_metadata_routing=False):
        off = cross_validate(pipe, with_column, y, groups=qid, cv=GroupKFold(3), scoring=ndcg_scorer(5))
    with sklearn.config_context(enable_metadata_routing=True):
        on = cross_validate(pipe, with_column, y, params={"groups": qid}, cv=GroupKFold(3), scoring=ndcg_scorer(5))
    np.testing.assert_allclose(on["test_score"], off["test_score"], rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "query_column, X_kind, message",
    [
        ("qid", "array", "names a column, but X has no column names"),
        ("missing", "frame", "'missing' is not a column of X"),
        (9, "array", "query_column=9 is out of range for X with 6 columns"),
        (6, "array", "query_column=6 is out of range for X with 6 columns"),  # not column 6 % 6 = 0
        (-7, "frame", "query_column=-7 is out of range"),
    ],
)
def test_bad_query_column_is_a_clear_error(query_column, X_kind, message):
    X, y, qid = _data()
    X = np.column_stack([qid, X]) if X_kind == "array" else _frame(X, qid)
    with pytest.raises(ValueError, match=re.escape(message)):
        LambdaRankRanker(query_column=query_column, **FAST).fit(X, y)


@pytest.mark.parametrize("X_kind", ["array", "frame", "sparse"])
@pytest.mark.parametrize("estimator", [LambdaRankRanker(**FAST), BaggingRanker(LambdaRankRanker(**FAST), 2)],
                         ids=["ranker", "bagging"])
def test_x_holding_only_the_query_column_is_a_clear_error(X_kind, estimator):
    """Without a feature left there is nothing to rank by; a DataFrame
    reduced to its query column reached numpy as a frame of no columns
    ("at least one array or dtype is required")."""
    X, y, qid = _data()
    only_ids = {"array": qid[:, None].astype(float), "frame": pd.DataFrame({"qid": qid}),
                "sparse": sp.csr_matrix(qid[:, None].astype(float))}[X_kind]
    query_column = "qid" if X_kind == "frame" else 0
    with pytest.raises(ValueError, match=re.escape(
        f"X holds only the query column (query_column={query_column!r}), no feature"
    )):
        clone(estimator).set_params(query_column=query_column).fit(only_ids, y)


def test_a_query_column_name_held_by_two_columns_is_a_clear_error():
    X, y, qid = _data()
    frame = _frame(X, qid)
    frame.insert(0, "qid", qid, allow_duplicates=True)
    with pytest.raises(ValueError, match="query_column='qid' is more than one column of X"):
        LambdaRankRanker(query_column="qid", **FAST).fit(frame, y)


def test_query_column_must_be_a_name_or_a_position():
    X, y, qid = _data()
    with pytest.raises(ValueError, match="query_column"):
        LambdaRankRanker(query_column=1.5, **FAST).fit(np.column_stack([qid, X]), y)
    # True is an int to Python, but never meant as column 1.
    with pytest.raises(ValueError, match="is a boolean"):
        LambdaRankRanker(query_column=True, **FAST).fit(np.column_stack([qid, X]), y)


def test_scorers_find_the_column_through_a_transformed_target_regressor():
    """With routing off the scorer looks through the fitted wrapper to the
    ranker's query_column (it asked the user to set what was set)."""
    from sklearn.compose import TransformedTargetRegressor

    X, y, qid = _data()
    Xq = np.column_stack([qid, X])
    wrapped = TransformedTargetRegressor(LambdaRankRanker(query_column=0, **FAST), func=np.log1p,
                                         inverse_func=np.expm1, check_inverse=False).fit(Xq, y)
    expected = ndcg_score(y, wrapped.predict(Xq), groups=qid, k=10)
    assert ndcg_scorer(10)(wrapped, Xq, y) == pytest.approx(expected, abs=NDCG_ATOL)


def _routing_on_scores(estimator, X, y, qid, scoring):
    with sklearn.config_context(enable_metadata_routing=True):
        return cross_validate(estimator, X, y, params={"groups": qid}, cv=GroupKFold(3), scoring=scoring)


@pytest.mark.parametrize(
    "scoring",
    [None, {"ndcg@5": ndcg_scorer(5), "map": map_scorer()}],
    ids=["score", "scorers"],
)
def test_cross_validate_with_routing_off_scores_by_query(scoring):
    X, y, qid = _data()
    frame = _frame(X, qid)
    with sklearn.config_context(enable_metadata_routing=False):
        off = cross_validate(
            LambdaRankRanker(query_column="qid", **FAST), frame, y, groups=qid, cv=GroupKFold(3),
            scoring=scoring, error_score="raise",
        )
    on = _routing_on_scores(LambdaRankRanker(**FAST), X, y, qid, scoring)
    keys = [key for key in on if key.startswith("test_")]
    assert keys
    for key in keys:
        np.testing.assert_allclose(off[key], on[key], rtol=0, atol=NDCG_ATOL)


def test_grid_search_with_routing_off():
    X, y, qid = _data()
    with_column = np.column_stack([X, qid])
    grid = {"alpha": [1e-4, 1.0]}
    with sklearn.config_context(enable_metadata_routing=False):
        off = GridSearchCV(
            LambdaRankRanker(query_column=-1, **FAST), grid, cv=GroupKFold(3), scoring=ndcg_scorer(10),
            error_score="raise",
        ).fit(with_column, y, groups=qid)
        refit_score = off.score(with_column, y)
    with sklearn.config_context(enable_metadata_routing=True):
        on = GridSearchCV(LambdaRankRanker(**FAST), grid, cv=GroupKFold(3), scoring=ndcg_scorer(10)).fit(
            X, y, groups=qid
        )
        assert refit_score == pytest.approx(on.score(X, y, groups=qid), abs=NDCG_ATOL)
    np.testing.assert_allclose(
        off.cv_results_["mean_test_score"], on.cv_results_["mean_test_score"], rtol=0, atol=NDCG_ATOL
    )


def test_learning_curve_with_routing_off():
    X, y, qid = _data(30)
    with_column = np.column_stack([qid, X])
    with sklearn.config_context(enable_metadata_routing=False):
        sizes, train, test = learning_curve(
            LambdaRankRanker(query_column=0, **FAST), with_column, y, groups=qid, cv=GroupKFold(3),
            train_sizes=[0.5, 1.0], scoring=ndcg_scorer(10), error_score="raise",
        )
    assert np.isfinite(test).all() and np.isfinite(train).all()
    # By query: every value is a mean of NDCG@10 over queries, not one query's.
    ranker = LambdaRankRanker(**FAST)
    train_rows, test_rows = next(GroupKFold(3).split(X, y, qid))
    ranker.fit(X[train_rows], y[train_rows], groups=qid[train_rows])
    expected = ndcg_score(y[test_rows], ranker.predict(X[test_rows]), groups=qid[test_rows], k=10)
    assert test[-1, 0] == pytest.approx(expected, abs=1e-12)


def test_scorer_looks_through_a_pipeline():
    X, y, qid = _data()
    with_column = np.column_stack([X, qid])
    pipeline = make_pipeline(StandardScaler(), LambdaRankRanker(query_column=-1, **FAST))
    with sklearn.config_context(enable_metadata_routing=False):
        off = cross_validate(
            pipeline, with_column, y, groups=qid, cv=GroupKFold(3), scoring=ndcg_scorer(10),
            error_score="raise",
        )
    # The scaler scales the id column too; distinct ids stay distinct, so
    # the ranker sees the same queries and the same scaled features.
    on = _routing_on_scores(make_pipeline(StandardScaler(), LambdaRankRanker(**FAST)), X, y, qid, ndcg_scorer(10))
    np.testing.assert_allclose(off["test_score"], on["test_score"], rtol=0, atol=NDCG_ATOL)


def test_scorer_reads_the_ids_where_the_ranker_does_behind_a_column_transformer():
    """query_column refers to the ranker's input: a ColumnTransformer that
    puts the ids last (remainder) moves them, so the scorer must read them
    from the transformed X, not from column -1 of the raw X (a feature:
    every row its own query, NDCG 1.0)."""
    from sklearn.compose import ColumnTransformer

    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    features = list(range(1, with_column.shape[1]))
    moved = ColumnTransformer([("scale", StandardScaler(), features)], remainder="passthrough")
    pipeline = make_pipeline(moved, LambdaRankRanker(query_column=-1, **FAST))
    with sklearn.config_context(enable_metadata_routing=False):
        off = cross_validate(
            pipeline, with_column, y, groups=qid, cv=GroupKFold(3),
            scoring={"ndcg": ndcg_scorer(10), "map": map_scorer()}, error_score="raise",
        )
    on = _routing_on_scores(
        make_pipeline(StandardScaler(), LambdaRankRanker(**FAST)), X, y, qid,
        {"ndcg": ndcg_scorer(10), "map": map_scorer()},
    )
    for name in ("ndcg", "map"):
        assert np.all(off[f"test_{name}"] < 1.0)
        np.testing.assert_allclose(off[f"test_{name}"], on[f"test_{name}"], rtol=0, atol=NDCG_ATOL)

    from sklearn_ranknet.inspection import permutation_importance

    pipeline.fit(with_column, y)
    got = permutation_importance(pipeline, with_column, y, groups=None, n_repeats=2, random_state=0)
    expected = permutation_importance(pipeline, with_column, y, groups=qid, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(got.importances, expected.importances)


def test_a_column_transformer_prefixing_the_id_column_is_named_in_the_error():
    """A ColumnTransformer that passes the id column through by name, with
    pandas output, renames it "id__qid" (verbose_feature_names_out=True,
    its default). The error listed X's first 20 columns, the scaled
    features, and stopped before the id column: it now names that column
    and both fixes, and either fix scores as routing does."""
    from sklearn.compose import ColumnTransformer

    X, y, qid = _data()
    wide = np.column_stack([X] * 5)  # 25 features: the id column is past the 20 listed
    frame = _frame(wide, qid, position=0)
    features = [name for name in frame.columns if name != "qid"]

    def pipeline(verbose_names, query_column):
        transformer = ColumnTransformer(
            [("scale", StandardScaler(), features), ("id", "passthrough", ["qid"])],
            verbose_feature_names_out=verbose_names,
        ).set_output(transform="pandas")
        return make_pipeline(transformer, LambdaRankRanker(query_column=query_column, **FAST))

    with pytest.raises(ValueError, match=r"'id__qid' may hold it.*query_column='id__qid'.*"
                                         r"verbose_feature_names_out=False"):
        pipeline(True, "qid").fit(frame, y)
    on = _routing_on_scores(make_pipeline(StandardScaler(), LambdaRankRanker(**FAST)), wide, y, qid, ndcg_scorer(10))
    for fixed in (pipeline(True, "id__qid"), pipeline(False, "qid")):
        with sklearn.config_context(enable_metadata_routing=False):
            off = cross_validate(fixed, frame, y, groups=qid, cv=GroupKFold(3), scoring=ndcg_scorer(10),
                                 error_score="raise")
        np.testing.assert_allclose(off["test_score"], on["test_score"], rtol=0, atol=NDCG_ATOL)


@pytest.mark.parametrize("columns", [list(range(6)), ["subqid", "f_qid", "f2", "f3", "f4", "f5"]],
                         ids=["unnamed", "name-ends-in-qid"])
def test_a_missing_query_column_proposes_only_a_prefixed_name(columns):
    """The hint of the test above proposes a column only when its name ends
    in '__' + query_column, as a ColumnTransformer's prefix makes it: a
    DataFrame of unnamed (integer) columns gets the plain error, not an
    AttributeError from a name that is no string, and names that merely end
    in 'qid' are not proposed."""
    X, y, qid = _data()
    frame = pd.DataFrame(np.column_stack([qid, X]), columns=columns)
    with pytest.raises(ValueError, match="query_column='qid' is not a column of X") as error:
        LambdaRankRanker(query_column="qid", **FAST).fit(frame, y)
    assert "may hold it" not in str(error.value)


def test_bagging_ranker_query_column():
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    reference = BaggingRanker(LambdaRankRanker(**FAST), n_estimators=2, bootstrap=True, random_state=0)
    reference.fit(X, y, groups=qid)
    bag = BaggingRanker(
        LambdaRankRanker(**FAST), n_estimators=2, bootstrap=True, random_state=0, query_column=0
    ).fit(with_column, y)
    assert_same_training(bag.predict(with_column), reference.predict(X))
    assert bag.score(with_column, y) == pytest.approx(reference.score(X, y, groups=qid), abs=NDCG_ATOL)
    with sklearn.config_context(enable_metadata_routing=False):
        result = cross_validate(bag, with_column, y, groups=qid, cv=GroupKFold(3), error_score="raise")
    assert np.isfinite(result["test_score"]).all()
    with pytest.raises(ValueError, match="Set it on the BaggingRanker only"):
        BaggingRanker(LambdaRankRanker(query_column=0, **FAST), query_column=0).fit(with_column, y)


def test_without_ids_scorers_and_score_name_both_fixes():
    X, y, qid = _data()
    ranker = LambdaRankRanker(**FAST).fit(X, y, groups=qid)
    for scorer in (ndcg_scorer(10), map_scorer()):
        with pytest.raises(ValueError, match="enable_metadata_routing=True") as error:
            scorer(ranker, X, y)
        assert "query_column" in str(error.value)
    with pytest.raises(ValueError, match="query_column"):
        ranker.score(X, y)
    # Routing off, no query column: cross_validate reports the failure
    # instead of a one-query number (error_score="raise" shows the message).
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.raises(ValueError, match="query_column"), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            cross_validate(LambdaRankRanker(**FAST), X, y, groups=qid, cv=GroupKFold(3), error_score="raise")


def test_bagging_members_with_the_query_column():
    # The members read the ids (what the ONNX export supports): fit, predict,
    # score and the scorers work with routing off; bootstrap cannot (the
    # members would read the original ids, not the sample's) and says so.
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    bag = BaggingRanker(LambdaRankRanker(query_column=0, **FAST), n_estimators=2, random_state=0)
    bag.fit(with_column, y)
    reference = BaggingRanker(LambdaRankRanker(**FAST), n_estimators=2, random_state=0).fit(X, y, groups=qid)
    assert_same_training(bag.predict(with_column), reference.predict(X))
    expected = reference.score(X, y, groups=qid)
    assert bag.score(with_column, y) == pytest.approx(expected, abs=NDCG_ATOL)
    assert bag.score(with_column, y, groups=qid) == pytest.approx(expected, abs=NDCG_ATOL)
    with sklearn.config_context(enable_metadata_routing=False):
        assert ndcg_scorer(10)(bag, with_column, y) == pytest.approx(expected, abs=NDCG_ATOL)
        result = cross_validate(bag, with_column, y, cv=GroupKFold(3), groups=qid, error_score="raise")
    assert np.isfinite(result["test_score"]).all()
    bootstrapped = clone(bag).set_params(bootstrap=True)
    for groups in (None, qid):
        with pytest.raises(ValueError, match="bootstrap=True.*query_column=0.*on the BaggingRanker"):
            bootstrapped.fit(with_column, y, groups=groups)


@pytest.mark.parametrize("metric", [ndcg_score, map_score, ndcg_per_query, ap_per_query])
def test_metrics_warn_when_every_query_is_one_row(metric):
    """Document ids passed as groups: every query is one row, perfectly
    ranked by any scores, and the mean says nothing."""
    with pytest.warns(UserWarning, match="Every one of the 3 queries holds a single row") as caught:
        metric([1, 0, 2], [0.1, 0.2, 0.3], groups=[7, 8, 9])
    assert [w.filename for w in caught] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric([1], [0.5], groups=[0])  # one row: nothing was mistaken
        metric([1, 0, 2], [0.1, 0.2, 0.3], groups=[7, 7, 9])  # one query of two rows


@pytest.mark.parametrize("metric", [ndcg_score, map_score])
def test_metrics_without_groups_warn_on_more_than_one_row(metric):
    # Called directly, not by a scikit-learn scorer: the advice to pass groups=.
    with pytest.warns(UserWarning, match=r"^No groups were given, so all 3 rows are scored as one query\. "
                                         r"Pass groups=") as caught:
        value = metric([1, 0, 2], [0.1, 0.2, 0.3])
    assert [w.filename for w in caught] == [__file__]
    assert value == metric([1, 0, 2], [0.1, 0.2, 0.3], groups=[0, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric([1], [0.5])
        metric([1, 0, 2], [0.1, 0.2, 0.3], groups=np.zeros(3))


def test_permutation_importance_reads_the_query_column():
    from sklearn_ranknet.inspection import permutation_importance

    X, y, qid = _data()
    with_column = np.column_stack([X[:, :2], qid, X[:, 2:]])
    ranker = LambdaRankRanker(query_column=2, **FAST).fit(with_column, y)
    reference = LambdaRankRanker(**FAST).fit(X, y, groups=qid)
    with sklearn.config_context(enable_metadata_routing=False):
        got = permutation_importance(ranker, with_column, y, groups=None, n_repeats=3, random_state=0)
    expected = permutation_importance(reference, X, y, groups=qid, n_repeats=3, random_state=0)
    # The query column is no feature: importance 0, never permuted.
    np.testing.assert_array_equal(got.importances[2], 0.0)
    assert got.importances.shape == (X.shape[1] + 1, 3)
    assert np.all(np.isfinite(got.importances))
    # Features keep the order of their importances (the permutation seeds
    # differ: one per column of the input).
    assert np.argmax(np.delete(got.importances_mean, 2)) == np.argmax(expected.importances_mean)


def test_scikit_learn_permutation_importance_with_routing_off():
    from sklearn.inspection import permutation_importance

    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    ranker = LambdaRankRanker(query_column=0, **FAST).fit(with_column, y)
    with sklearn.config_context(enable_metadata_routing=False):
        result = permutation_importance(ranker, with_column, y, scoring=ndcg_scorer(10), n_repeats=2, random_state=0)
    assert np.all(np.isfinite(result.importances))
    # Its baseline is scored query by query.
    baseline = ndcg_score(y, ranker.predict(with_column), groups=qid, k=10)
    assert baseline == pytest.approx(ranker.score(with_column, y), abs=0)


@pytest.mark.parametrize("bagged", [False, True], ids=["ranker", "bagging"])
def test_wrong_width_counts_the_columns_of_X(bagged):
    """Given the features without their id column, the message counts X's
    own columns and names the id column, not one feature short."""
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    ranker = BaggingRanker(LambdaRankRanker(**FAST), n_estimators=2, query_column=0) if bagged else (
        LambdaRankRanker(query_column=0, **FAST))
    ranker.fit(with_column, y)
    n = X.shape[1]
    message = rf"X has {n} columns, but {type(ranker).__name__} with query_column=0 expects {n + 1}: the query-id column"
    with pytest.raises(ValueError, match=message):
        ranker.predict(X)
    with pytest.raises(ValueError, match=message):
        ranker.score(X, y, groups=qid)
    # permutation_importance too, before X's first feature is compared with
    # groups as query ids (it said they "put the rows in different queries").
    with pytest.raises(ValueError, match=message):
        permutation_importance(ranker, X, y, groups=qid, n_repeats=1)
    # The right width still works.
    assert np.isfinite(ranker.predict(with_column)).all()


@pytest.mark.parametrize("continued", ["partial_fit", "warm_start"])
def test_a_continued_fit_counts_the_columns_of_X(continued):
    """A fit that continues the model knows its width: without the id column
    X is named as such, not read as one feature short ("X has 4 features")
    or its first feature as query ids compared with groups."""
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    ranker = LambdaRankRanker(query_column=0, warm_start=continued == "warm_start", **FAST)
    fit = ranker.partial_fit if continued == "partial_fit" else ranker.fit
    fit(with_column, y)
    n = X.shape[1]
    message = rf"X has {n} columns, but LambdaRankRanker with query_column=0 expects {n + 1}: the query-id column"
    for groups in (None, qid):
        with pytest.raises(ValueError, match=message):
            fit(X, y, groups=groups)
    fit(with_column, y, groups=qid)  # the right width still continues
    # A fresh fit may change the width: nothing is checked against the old one.
    fresh = LambdaRankRanker(query_column=0, **FAST).fit(with_column, y)
    assert fresh.fit(np.column_stack([qid, X[:, :3]]), y).n_features_in_ == 3


def test_permutation_importance_counts_the_columns_for_a_members_column():
    # The column is the members' (BaggingRanker itself takes the full width).
    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    bag = BaggingRanker(LambdaRankRanker(query_column=0, **FAST), n_estimators=2).fit(with_column, y)
    n = X.shape[1]
    with pytest.raises(ValueError, match=rf"X has {n} columns, but LambdaRankRanker with query_column=0 expects {n + 1}"):
        permutation_importance(bag, X, y, groups=qid, n_repeats=1)
    result = permutation_importance(bag, with_column, y, groups=qid, n_repeats=1, random_state=0)
    assert result.importances.shape == (n + 1, 1) and result.importances[0, 0] == 0.0


# Found by a mutation audit of the suite, second round (2026-11-27).

TINY_FIT = dict(hidden_layer_sizes=(3,), max_iter=3, random_state=0)


def _column_data():
    X, y, qid = make_ranking(n_queries=20, n_features=4, n_informative=3, min_docs=3, max_docs=8, random_state=0)
    return X, y, qid


def test_the_most_negative_position_is_the_first_column():
    # query_column=-n_columns counts from the end to column 0, as Python's
    # indexing (and the check -n <= position < n) says.
    X, y, qid = _column_data()
    Xq = np.column_stack([qid, X])
    first = RankNetRanker(**TINY_FIT, query_column=0).fit(Xq, y)
    negative = RankNetRanker(**TINY_FIT, query_column=-Xq.shape[1]).fit(Xq, y)
    for a, b in zip(first.coefs_, negative.coefs_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first.predict(Xq), negative.predict(Xq))


def test_groups_coarser_than_the_column_are_refused():
    # Every id of the column maps to one id of groups, but two column ids
    # share one: the two split the rows into different queries.
    column = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    coarser = column // 2
    with pytest.raises(ValueError, match="different queries"):
        merge_groups(coarser, column, 0)
    with pytest.raises(ValueError, match="different queries"):
        merge_groups(column, coarser, 0)
    # A one-to-one relabelling is the same queries; groups is what comes back.
    relabelled = 10 - column
    assert merge_groups(relabelled, column, 0) is relabelled


def test_groups_win_over_a_relabelled_column():
    # When groups and the column describe the same queries under other ids,
    # the ranker trains on groups (the order of the ids orders the queries).
    X, y, qid = _column_data()
    Xq = np.column_stack([qid, X])
    groups = 100 - qid  # the same queries, in reverse order of their ids
    with_column = RankNetRanker(**TINY_FIT, query_column=0).fit(Xq, y, groups=groups)
    without = RankNetRanker(**TINY_FIT).fit(X, y, groups=groups)
    for a, b in zip(with_column.coefs_, without.coefs_):
        np.testing.assert_array_equal(a, b)


def test_a_one_step_pipeline_keeps_the_column_out_of_the_permutations():
    # A Pipeline of the ranker alone transforms nothing: the column is still
    # at its position in X, as for the bare ranker.
    X, y, qid = _column_data()
    Xq = np.column_stack([qid, X])
    ranker = RankNetRanker(**TINY_FIT, query_column=0).fit(Xq, y)
    bare = permutation_importance(ranker, Xq, y, groups=None, n_repeats=2, random_state=0)
    piped = permutation_importance(make_pipeline(ranker), Xq, y, groups=None, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(bare.importances, piped.importances)


def test_a_scorer_finds_the_column_through_a_fitted_search():
    X, y, qid = _column_data()
    Xq = np.column_stack([qid, X])
    search = GridSearchCV(
        RankNetRanker(**TINY_FIT, query_column=0), {"alpha": [1.0]}, cv=GroupKFold(2), scoring=ndcg_scorer(10)
    ).fit(Xq, y, groups=qid)
    assert query_column_of(search) == 0
    scorer = ndcg_scorer(10)
    assert scorer(search, Xq, y) == scorer(search.best_estimator_, Xq, y)


def test_other_ensembles_are_not_entered():
    # Only an ensemble that itself takes a query_column (BaggingRanker) is
    # looked into; another one's members may see other columns of X (or be
    # no rankers at all).
    X, y, qid = _column_data()
    Xq = np.column_stack([qid, X])

    class OtherEnsemble:
        def __init__(self, members):
            self.estimators_ = members

    other = OtherEnsemble([RankNetRanker(**TINY_FIT, query_column=0).fit(Xq, y)])
    assert list(wrapped_chain(other)) == [other]
    assert query_column_of(other) is None


@pytest.mark.parametrize("as_frame", [False, True], ids=["array", "frame"])
def test_permuting_all_rows_keeps_the_id_column_behind_a_column_transformer(as_frame):
    """Behind a ColumnTransformer the id column's place in the raw X is not
    the ranker's query_column, so permute="all_rows" shuffled it across
    queries like a feature: the ids the scorer read from the transformed X
    then disagreed with the ones given to it, and a scorer that reads them
    (ndcg_scorer, the ranker's score) failed with "groups and the query
    column of X put the rows in different queries", which the user had not
    done. The column is now found by its effect on the ids the ranker reads
    and left unpermuted (importance 0), as a query column of the input is;
    ndcg_scorer(10) then gives the numbers of the default scoring."""
    from sklearn.compose import ColumnTransformer

    X, y, qid = _data()
    with_column = np.column_stack([X, qid])  # the ids last in the raw X
    features, id_column = list(range(X.shape[1])), [X.shape[1]]
    if as_frame:
        with_column = _frame(X, qid, position=X.shape[1])
        features, id_column = list(with_column.columns[:-1]), ["qid"]
    moved = ColumnTransformer([("id", "passthrough", id_column), ("scale", StandardScaler(), features)])
    pipeline = make_pipeline(moved, LambdaRankRanker(query_column=0, **FAST)).fit(with_column, y)
    default = permutation_importance(
        pipeline, with_column, y, groups=None, permute="all_rows", n_repeats=2, random_state=0
    )
    scored = permutation_importance(
        pipeline, with_column, y, groups=None, permute="all_rows", n_repeats=2, random_state=0,
        scoring=ndcg_scorer(10),
    )
    np.testing.assert_array_equal(scored.importances[-1], 0.0)
    np.testing.assert_allclose(scored.importances, default.importances, rtol=0, atol=NDCG_ATOL)
    assert np.any(scored.importances[:-1] != 0.0)
    by_rank = permutation_importance(
        pipeline, with_column, y, groups=qid, permute="all_rows", n_repeats=2, random_state=0,
        scoring=lambda estimator, X, y, groups: estimator.score(X, y, groups=groups),
    )
    np.testing.assert_allclose(by_rank.importances, default.importances, rtol=0, atol=NDCG_ATOL)


@pytest.mark.parametrize("step", ["pca", "select"])
def test_a_step_that_drops_the_id_column_is_named_in_the_warning(step):
    """A step before the ranker that does not keep the id column where
    query_column points (PCA mixes it into components, SelectKBest drops
    it) leaves there a continuous feature: one query per row. The warning
    told to "pass query ids as groups, not an id per row", though the ids
    were given, in the column: it now names the column and the step."""
    from sklearn.decomposition import PCA
    from sklearn.feature_selection import SelectKBest, f_regression

    X, y, qid = _data()
    with_column = np.column_stack([qid, X])
    before = PCA(n_components=3) if step == "pca" else SelectKBest(f_regression, k=3)
    with pytest.warns(UserWarning, match=r"every query holds a single row: the query column \(query_column=0\) "
                                         r"holds a different value on every row") as caught:
        make_pipeline(before, LambdaRankRanker(query_column=0, **FAST)).fit(with_column, y)
    message = next(str(w.message) for w in caught if "query_column=0" in str(w.message))
    assert "a step before the ranker" in message and "pass query ids as groups" not in message
    # Without the column, the advice stays the one about groups.
    with pytest.warns(UserWarning, match="pass query ids as groups, not an id per row"):
        LambdaRankRanker(**FAST).fit(X, y, groups=np.arange(len(y)))
