"""What users of LightGBM and XGBoost write by habit gets a helpful answer:
their keyword arguments of fit, query ids left among the features, missing
values. (A sparse sample for the ONNX export: test_onnx.py.)"""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import BaggingRanker, LambdaRankRanker, LambdaRankRankerCV, ListNetRanker, RankNetRanker
from sklearn_ranknet.datasets import make_ranking

FAST = {"max_iter": 2, "random_state": 0}
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
ESTIMATORS = [
    LambdaRankRanker(**FAST), RankNetRanker(**FAST), ListNetRanker(**FAST),
    LambdaRankRankerCV(cv=2, **FAST), BaggingRanker(LambdaRankRanker(**FAST), n_estimators=2),
]


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=12, n_features=5, n_informative=3, random_state=0)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_lightgbm_group_sizes_get_the_groups_spelling(data, estimator):
    X, y, qid = data
    sizes = np.bincount(qid)
    with pytest.raises(TypeError, match=re.escape(
        f"{type(estimator).__name__}.fit() got an unexpected keyword argument 'group'; give groups=")
    ) as raised:
        estimator.fit(X, y, group=sizes)
    # The recipe it gives turns the sizes back into the ids.
    assert "np.repeat(np.arange(len(sizes)), sizes)" in str(raised.value)
    assert np.array_equal(np.repeat(np.arange(len(sizes)), sizes), qid)


def test_xgboost_keywords_and_other_misspellings(data):
    X, y, qid = data
    with pytest.raises(TypeError, match="'qid'; give groups=qid"):
        LambdaRankRanker(**FAST).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="'eval_set'; give X_val=, y_val= and groups_val="):
        LambdaRankRanker(**FAST).fit(X, y, groups=qid, eval_set=[(X, y)])
    with pytest.raises(TypeError, match=r"^LambdaRankRanker.fit\(\) got an unexpected keyword argument 'sample_weights'\.$"):
        LambdaRankRanker(**FAST).fit(X, y, groups=qid, sample_weights=np.ones(len(y)))


@pytest.mark.parametrize("name", ["positions", "X_val"])
def test_partial_fit_says_which_arguments_only_fit_takes(data, name):
    X, y, qid = data
    ranker = LambdaRankRanker(**FAST)
    with pytest.raises(TypeError, match=f"LambdaRankRanker.partial_fit\\(\\) got {name}=, which only fit takes"):
        ranker.partial_fit(X, y, qid, **{name: y})
    assert not hasattr(ranker, "coefs_")


def test_partial_fit_and_score_answer_the_peers_keywords(data):
    X, y, qid = data
    ranker = LambdaRankRanker(**FAST)
    with pytest.raises(TypeError, match=r"LambdaRankRanker.partial_fit\(\) got an unexpected keyword argument 'group'; give groups="):
        ranker.partial_fit(X, y, group=np.bincount(qid))
    ranker.fit(X, y, qid)
    with pytest.raises(TypeError, match=r"LambdaRankRanker.score\(\) got an unexpected keyword argument 'qid'; give groups=qid"):
        ranker.score(X, y, qid=qid)
    with pytest.raises(TypeError, match=r"^LambdaRankRanker.score\(\) got an unexpected keyword argument 'k'\.$"):
        ranker.score(X, y, qid, k=5)


def test_the_partial_fit_and_score_signatures_routing_sees_are_unchanged():
    ranker = LambdaRankRanker().get_metadata_routing()
    assert set(ranker.partial_fit.requests) == {"groups", "sample_weight"}
    assert set(ranker.score.requests) == {"groups", "sample_weight"}


def test_the_fit_signature_routing_sees_is_unchanged():
    """**unexpected is not a fit parameter to scikit-learn: no request for
    it, and has_fit_parameter still reads the real ones."""
    from sklearn.utils.validation import has_fit_parameter

    requests = LambdaRankRanker().get_metadata_routing().fit.requests
    assert set(requests) == {
        "groups", "sample_weight", "positions", "propensities", "X_val", "y_val", "groups_val", "sample_weight_val",
    }
    assert has_fit_parameter(LambdaRankRanker(), "groups") and not has_fit_parameter(LambdaRankRanker(), "group")


def test_a_dataframe_column_equal_to_groups_is_named(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)
    with pytest.warns(UserWarning, match="Column 'qid' of X equals groups row for row.*query_column") as caught:
        LambdaRankRanker(**FAST).fit(frame, y, groups=frame["qid"])
    assert [w.filename for w in caught if "equals groups" in str(w.message)] == [__file__]
    # An array names the column by position; the fix, query_column, does not warn.
    with pytest.warns(UserWarning, match=r"Column 5 \(counted from 0\) of X equals groups"):
        LambdaRankRanker(**FAST).fit(frame.to_numpy(), y, groups=qid)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)  # of the short fits
        LambdaRankRanker(query_column="qid", **FAST).fit(frame, y)
        LambdaRankRanker(**FAST).fit(X, y, groups=qid)  # no column holds the ids


def test_a_column_equal_to_groups_in_its_first_rows_only_is_not_named(data):
    X, y, qid = data
    X = np.column_stack([X, qid.astype(float)])
    X[-1, -1] += 1.0  # differs on the last row only
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)  # of the short fits
        LambdaRankRanker(**FAST).fit(X, y, groups=qid)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("where", ["fit", "predict"])
def test_missing_values_get_the_rankers_answer(data, sparse, where):
    """Without input scaling NaN is refused, with the two ways out; with it
    (the default) NaN is learned, in fit and in predict."""
    X, y, qid = data
    X_nan = X.copy()
    X_nan[3, 2] = np.nan
    X_nan = sp.csr_matrix(X_nan) if sparse else X_nan
    ranker = LambdaRankRanker(feature_scaling=None, **FAST)
    message = (r"Input X contains NaN\. LambdaRankRanker learns from missing values through its input "
               r"scaling, and feature_scaling=None has none: use feature_scaling='piecewise'.*SimpleImputer")
    with pytest.raises(ValueError, match=message):
        if where == "fit":
            ranker.fit(X_nan, y, groups=qid)
        else:
            ranker.fit(X, y, groups=qid).predict(X_nan)
    learned = LambdaRankRanker(**FAST).fit(X_nan if where == "fit" else X, y, groups=qid)
    assert np.isfinite(learned.predict(X_nan)).all()


def test_an_imputer_in_front_is_the_advised_fix(data):
    """The message's fix for feature_scaling=None works as written."""
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    X, y, qid = data
    X_nan = X.copy()
    X_nan[::7, 1] = np.nan
    pipe = make_pipeline(SimpleImputer(add_indicator=True), LambdaRankRanker(feature_scaling=None, **FAST))
    pipe.fit(X_nan, y, lambdarankranker__groups=qid)
    assert np.isfinite(pipe.predict(X_nan)).all()
    assert pipe[-1].n_features_in_ == X.shape[1] + 1  # the indicator of the one column with NaN
