"""fit(X_val=, y_val=, groups_val=, sample_weight_val=): early stopping on a
validation set the user gives, as HistGradientBoostingRegressor takes it."""

import numpy as np
import pytest
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, ListNetRanker, RankNetRanker
from sklearn_ranknet.datasets import make_clicks, make_ranking
from sklearn_ranknet.metrics import ndcg_score

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
RANKERS = [LambdaRankRanker, ListNetRanker, RankNetRanker]
# float64 training: the validation score of the kept weights is then the
# NDCG@10 of predict to the last bits.
PARAMS = {"max_iter": 15, "random_state": 0, "precision": "float64", "hidden_layer_sizes": (8,)}


@pytest.fixture(scope="module")
def split():
    X, y, qid = make_ranking(n_queries=40, n_features=6, n_informative=4, random_state=0)
    train, val = qid < 30, qid >= 30
    return X[train], y[train], qid[train], X[val], y[val], qid[val]


@pytest.mark.parametrize("Ranker", RANKERS)
def test_early_stopping_scores_the_given_validation_set(Ranker, split):
    X, y, qid, X_val, y_val, qid_val = split
    ranker = Ranker(**PARAMS).fit(X, y, qid, X_val=X_val, y_val=y_val, groups_val=qid_val)
    # "auto" stops early on small data once a validation set is given.
    assert ranker.early_stopping_ is True
    assert len(ranker.validation_scores_) == ranker.n_iter_
    # The kept weights are those of the best validation score, which is the
    # validation rows' NDCG@10 under the fitted model.
    gain = getattr(ranker, "gain", "exponential")
    expected = ndcg_score(y_val, ranker.predict(X_val), groups=qid_val, k=10, gain=gain)
    assert ranker.best_validation_score_ == pytest.approx(expected, abs=1e-12)
    assert ranker.best_validation_score_ == max(ranker.validation_scores_)
    # Without a validation set, the same small fit does not stop early.
    assert Ranker(**PARAMS).fit(X, y, qid).validation_scores_ is None


def test_every_training_query_trains(split):
    """The validation set replaces the held-out share: no training query
    is left out (a training set of one query would be refused otherwise)."""
    X, y, qid, X_val, y_val, qid_val = split
    one = qid == qid[0]
    ranker = LambdaRankRanker(**PARAMS, early_stopping=True)
    ranker.fit(X[one], y[one], qid[one], X_val=X_val, y_val=y_val, groups_val=qid_val)
    with pytest.raises(ValueError, match="holds out whole queries"):
        LambdaRankRanker(**PARAMS, early_stopping=True).fit(X[one], y[one], qid[one])


def test_validation_weights_weigh_its_queries(split):
    X, y, qid, X_val, y_val, qid_val = split
    weights = np.where(qid_val == qid_val[0], 1.0, 0.0)
    ranker = LambdaRankRanker(**PARAMS).fit(
        X, y, qid, X_val=X_val, y_val=y_val, groups_val=qid_val, sample_weight_val=weights)
    first = qid_val == qid_val[0]
    expected = ndcg_score(y_val[first], ranker.predict(X_val[first]), groups=np.zeros(first.sum()), k=10)
    assert ranker.best_validation_score_ == pytest.approx(expected, abs=1e-12)


def test_the_query_column_travels_in_x_val(split):
    X, y, qid, X_val, y_val, qid_val = split
    with_ids = LambdaRankRanker(**PARAMS, query_column=0).fit(
        np.column_stack([qid, X]), y, X_val=np.column_stack([qid_val, X_val]), y_val=y_val)
    plain = LambdaRankRanker(**PARAMS).fit(X, y, qid, X_val=X_val, y_val=y_val, groups_val=qid_val)
    assert with_ids.validation_scores_ == plain.validation_scores_


def test_a_pipeline_transforms_x_val_under_routing(split):
    X, y, qid, X_val, y_val, qid_val = split
    with config_context(enable_metadata_routing=True):
        ranker = LambdaRankRanker(**PARAMS).set_fit_request(X_val=True, y_val=True, groups_val=True)
        pipe = Pipeline([("scale", StandardScaler()), ("rank", ranker)], transform_input=["X_val"])
        pipe.fit(X, y, groups=qid, X_val=X_val, y_val=y_val, groups_val=qid_val)
    fitted = pipe[-1]
    expected = ndcg_score(y_val, pipe.predict(X_val), groups=qid_val, k=10)
    assert fitted.best_validation_score_ == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_bagging_hands_every_member_the_whole_validation_set(split, bootstrap):
    X, y, qid, _, _, _ = split
    # A validation set as long as the training set: it must not be resampled.
    X_val, y_val, qid_val = X[::-1].copy(), y[::-1].copy(), qid[::-1] + 100
    bag = BaggingRanker(LambdaRankRanker(**PARAMS), n_estimators=2, bootstrap=bootstrap, random_state=0)
    bag.fit(X, y, qid, X_val=X_val, y_val=y_val, groups_val=qid_val)
    for member in bag.estimators_:
        expected = ndcg_score(y_val, member.predict(X_val), groups=qid_val, k=10)
        assert member.best_validation_score_ == pytest.approx(expected, abs=1e-12)


def test_a_click_log_fit_stops_on_graded_validation_labels(split):
    X, y, qid, X_val, y_val, qid_val = split
    log = make_clicks(y, qid, X[:, 0], n_sessions=5, max_label=4, random_state=0)
    ranker = LambdaRankRanker(**PARAMS).fit(
        X[log.rows], log.clicks, log.sessions, positions=log.positions, X_val=X_val, y_val=y_val,
        groups_val=qid_val)
    assert ranker.position_propensities_ is not None
    # Linear gain, as the click-log fit trains with.
    expected = ndcg_score(y_val, ranker.predict(X_val), groups=qid_val, k=10, gain="linear")
    assert ranker.best_validation_score_ == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "params, given, message",
    [
        ({"early_stopping": False}, {}, "early_stopping=False"),
        ({}, {"y_val": None}, "X_val is given, but y_val is not"),
        ({}, {"X_val": None}, "y_val is given, but X_val is not"),
        ({}, {"X_val": None, "y_val": None}, "groups_val is given without X_val"),
        ({}, {"groups_val": None}, "no query ids: give groups_val"),
        ({}, {"X_val": "narrow"}, "X_val has 5 features, but the training X has 6"),
        ({}, {"y_val": "short"}, "y_val has"),
        ({}, {"y_val": "negative"}, "y_val"),
        ({}, {"sample_weight_val": "zeros"}, "sample_weight_val is zero for every query"),
        ({}, {"sample_weight_val": "negative"}, "sample_weight_val must be finite and >= 0"),
        ({}, {"sample_weight_val": "short"}, r"sample_weight_val must hold one weight per row"),
        ({}, {"groups_val": 1}, r"groups_val must hold one query id per row \(a 1-D array\)"),
        # Early stopping could not judge a set whose score cannot change.
        ({}, {"y_val": "ones"}, "holds no query .* with two documents of different relevance"),
        ({}, {"groups_val": "row ids"}, "holds no query .* with two documents of different relevance"),
    ],
)
def test_bad_validation_sets_are_refused_clearly(split, params, given, message):
    X, y, qid, X_val, y_val, qid_val = split
    values = {"X_val": X_val, "y_val": y_val, "groups_val": qid_val, "sample_weight_val": None}
    special = {"narrow": X_val[:, 1:], "short": y_val[1:], "negative": -1.0 - y_val,
               "zeros": np.zeros(len(y_val)), "ones": np.ones(len(y_val)), "row ids": np.arange(len(y_val))}
    for name, value in given.items():
        values[name] = special.get(value, value) if isinstance(value, str) else value
    if isinstance(given.get("sample_weight_val"), str) and given["sample_weight_val"] != "zeros":
        values["sample_weight_val"] = np.ones(len(y_val))[1:] if given["sample_weight_val"] == "short" else -np.ones(len(y_val))
    ranker = LambdaRankRanker(**{**PARAMS, **params})
    with pytest.raises(ValueError, match=message):
        ranker.fit(X, y, qid, **values)
    assert not hasattr(ranker, "coefs_")


def test_lbfgs_refuses_a_validation_set(split):
    X, y, qid, X_val, y_val, qid_val = split
    with pytest.raises(ValueError, match="needs a stochastic solver"):
        RankNetRanker(solver="lbfgs", max_iter=5).fit(X, y, qid, X_val=X_val, y_val=y_val, groups_val=qid_val)


def test_x_val_columns_are_checked_as_predict_checks_them(split):
    pd = pytest.importorskip("pandas")
    X, y, qid, X_val, y_val, qid_val = split
    names = [f"f{i}" for i in range(X.shape[1])]
    frame, frame_val = pd.DataFrame(X, columns=names), pd.DataFrame(X_val, columns=names)
    ranker = LambdaRankRanker(**PARAMS).fit(frame, y, qid, X_val=frame_val, y_val=y_val, groups_val=qid_val)
    assert list(ranker.feature_names_in_) == names
    with pytest.raises(ValueError, match="feature names should match"):
        LambdaRankRanker(**PARAMS).fit(frame, y, qid, X_val=frame_val[names[::-1]], y_val=y_val, groups_val=qid_val)


def test_a_click_log_fit_checks_a_dataframe_x_val_without_warning(split):
    """The click-log fits train on arrays: a DataFrame X_val is checked
    against the training columns once, not warned about as "fitted
    without feature names"."""
    import warnings

    pd = pytest.importorskip("pandas")
    X, y, qid, X_val, y_val, qid_val = split
    log = make_clicks(y, qid, X[:, 0], n_sessions=5, max_label=4, random_state=0)
    names = [f"f{i}" for i in range(X.shape[1])]
    frame, frame_val = pd.DataFrame(X[log.rows], columns=names), pd.DataFrame(X_val, columns=names)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        ranker = LambdaRankRanker(**PARAMS).fit(frame, log.clicks, log.sessions, positions=log.positions,
                                                X_val=frame_val, y_val=y_val, groups_val=qid_val)
    assert list(ranker.feature_names_in_) == names
    with pytest.raises(ValueError, match="feature names should match"):
        LambdaRankRanker(**PARAMS).fit(frame, log.clicks, log.sessions, positions=log.positions,
                                       X_val=frame_val[names[::-1]], y_val=y_val, groups_val=qid_val)
