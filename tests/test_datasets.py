"""Tests for sklearn_ranknet.datasets: make_ranking and load_letor."""

import bz2
import gzip
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_ranknet.datasets import load_letor, make_ranking

YAHOO_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "yahoo-ltr-sample"
needs_yahoo = pytest.mark.skipif(
    not YAHOO_DIR.is_dir(), reason=f"Yahoo LTR sample not found at {YAHOO_DIR}"
)


def _ndcg_at_k(y, scores, groups, k=10):
    """Mean NDCG@k over queries, gain 2**y - 1, a query with no relevant
    document scoring 1. Pure Python on purpose (independent reference)."""
    per_query = {}
    for label, score, q in zip(y.tolist(), scores.tolist(), groups.tolist()):
        per_query.setdefault(q, []).append((score, label))
    values = []
    for docs in per_query.values():
        ranked = [lab for _, lab in sorted(docs, key=lambda d: -d[0])][:k]
        ideal = sorted((lab for _, lab in docs), reverse=True)[:k]
        dcg = sum((2**lab - 1) / math.log2(i + 2) for i, lab in enumerate(ranked))
        idcg = sum((2**lab - 1) / math.log2(i + 2) for i, lab in enumerate(ideal))
        values.append(1.0 if idcg == 0 else dcg / idcg)
    return sum(values) / len(values)


def _n_empty_queries(y, groups):
    return int(sum(y[groups == q].max() == 0 for q in np.unique(groups)))


@pytest.fixture(scope="module")
def default_draw():
    return make_ranking(random_state=0)


@pytest.fixture(scope="module")
def heldout_draw():
    return make_ranking(random_state=1)


# --------------------------------------------------------------------------
# make_ranking
# --------------------------------------------------------------------------


def test_make_ranking_shapes_and_dtypes(default_draw):
    X, y, groups = default_draw
    n = X.shape[0]
    assert X.shape == (n, 20)
    assert y.shape == groups.shape == (n,)
    assert X.dtype == np.float64
    assert y.dtype == np.int64
    assert groups.dtype == np.int64
    assert np.isfinite(X).all()

    X, y, groups = make_ranking(7, n_features=3, n_informative=2, random_state=0)
    assert X.shape == (y.shape[0], 3)
    assert np.unique(groups).tolist() == list(range(7))


def test_make_ranking_labels_graded_and_skewed(default_draw):
    _, y, _ = default_draw
    assert y.min() >= 0 and y.max() <= 4
    counts = np.bincount(y, minlength=5)
    assert counts.shape == (5,)
    assert (counts > 0).all(), counts
    # Skewed towards low grades like real LTR data: grade 1 is the mode and
    # the top two grades are rare.
    assert counts.argmax() == 1
    assert counts[3] + counts[4] < 0.2 * counts.sum()
    assert counts[4] < counts[3] < counts[2]


def test_make_ranking_label_distribution_large_sample():
    _, y, _ = make_ranking(2000, empty_query_fraction=0.0, random_state=3)
    props = np.bincount(y, minlength=5) / y.shape[0]
    target = np.array([0.21, 0.40, 0.29, 0.075, 0.025])
    np.testing.assert_allclose(props, target, atol=0.04)


def test_make_ranking_groups_contiguous_in_order(default_draw):
    _, _, groups = default_draw
    assert groups[0] == 0 and groups[-1] == 99
    steps = np.diff(groups)
    assert set(np.unique(steps).tolist()) == {0, 1}


def test_make_ranking_query_lengths(default_draw):
    _, _, groups = default_draw
    lengths = np.bincount(groups)
    assert lengths.shape == (100,)
    assert lengths.min() >= 5 and lengths.max() <= 50
    assert np.unique(lengths).size > 5
    # Right-skewed: most queries are short, a few are long.
    assert np.median(lengths) < (5 + 50) / 2
    assert np.mean(lengths) > np.median(lengths) - 1
    assert lengths.max() > 2 * np.median(lengths) - 5


@pytest.mark.parametrize("min_docs, max_docs", [(1, 1), (1, 3), (7, 7), (2, 200)])
def test_make_ranking_query_length_bounds(min_docs, max_docs):
    _, _, groups = make_ranking(
        60, min_docs=min_docs, max_docs=max_docs, random_state=0
    )
    lengths = np.bincount(groups)
    assert lengths.shape == (60,)
    assert lengths.min() >= min_docs and lengths.max() <= max_docs
    if min_docs == max_docs:
        assert (lengths == min_docs).all()
    else:
        assert np.unique(lengths).size > 1


def test_make_ranking_empty_queries(default_draw):
    _, y, groups = default_draw
    n_empty = _n_empty_queries(y, groups)
    assert 5 <= n_empty <= 8  # round(0.05 * 100) forced, a few by chance

    _, y, groups = make_ranking(100, empty_query_fraction=0.5, random_state=0)
    assert 50 <= _n_empty_queries(y, groups) <= 53

    _, y, groups = make_ranking(40, empty_query_fraction=1.0, random_state=0)
    assert (y == 0).all()

    _, y, groups = make_ranking(100, empty_query_fraction=0.0, random_state=0)
    assert _n_empty_queries(y, groups) <= 3


def test_make_ranking_features_varied_scales_and_query_component(default_draw):
    X, _, groups = default_draw
    stds = X.std(axis=0)
    assert (stds > 0).all()
    assert stds.max() / stds.min() > 100
    # Some features have a strong query-level component: a sizeable share of
    # their variance lies between the query means.
    lengths = np.bincount(groups)
    means = np.array([np.bincount(groups, weights=X[:, j]) for j in range(20)])
    means = means / lengths
    between = ((means[:, groups] - X.mean(axis=0)[:, None]) ** 2).mean(axis=1)
    share = between / X.var(axis=0)
    assert share.max() > 0.25
    assert (share > 0.15).sum() >= 5


def test_make_ranking_deterministic(default_draw):
    X0, y0, g0 = default_draw
    X1, y1, g1 = make_ranking(random_state=0)
    np.testing.assert_array_equal(X0, X1)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(g0, g1)

    X2, y2, g2 = make_ranking(random_state=np.random.RandomState(0))
    np.testing.assert_array_equal(X0, X2)
    np.testing.assert_array_equal(y0, y2)

    X3, y3, g3 = make_ranking(random_state=2)
    assert X3.shape != X0.shape or not np.array_equal(X3, X0)
    assert y3.shape != y0.shape or not np.array_equal(y3, y0)
    assert not np.array_equal(np.bincount(g3), np.bincount(g0))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n_queries": 0}, "n_queries"),
        ({"n_queries": 2.5}, "n_queries"),
        ({"n_queries": True}, "n_queries"),  # an Integral to validate_params
        ({"max_docs": np.True_}, "max_docs"),
        ({"n_features": 0}, "n_features"),
        ({"n_informative": -1}, "n_informative"),
        ({"n_features": 5, "n_informative": 6}, "n_informative"),
        ({"min_docs": 0}, "min_docs"),
        ({"max_docs": 0}, "max_docs"),
        ({"max_docs": 2**63 - 1}, "max_docs"),  # overflowed int64 in the lengths' arithmetic
        ({"min_docs": 10, "max_docs": 5}, "min_docs"),
        ({"noise": -0.1}, "noise"),
        ({"noise": 1e200}, "noise"),  # its square would overflow: refused up front
        ({"noise": True}, "noise.*not a bool"),  # was silently noise=1.0
        ({"empty_query_fraction": True}, "empty_query_fraction.*not a bool"),  # emptied every query
        ({"empty_query_fraction": -0.1}, "empty_query_fraction"),
        ({"empty_query_fraction": 1.5}, "empty_query_fraction"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_make_ranking_invalid_parameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_ranking(**kwargs)


def test_make_ranking_takes_numpy_scalars_quietly():
    # A float32 noise was compared with the float64 bound in float32, where
    # the bound overflows: a RuntimeWarning for a good value.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X32, y32, g32 = make_ranking(5, noise=np.float32(0.5), n_features=np.int32(4), n_informative=3, random_state=0)
    X, y, g = make_ranking(5, noise=0.5, n_features=4, n_informative=3, random_state=0)
    np.testing.assert_array_equal(X32, X)
    np.testing.assert_array_equal(y32, y)


@pytest.mark.parametrize("noise", [np.float32(1e20), np.float16(300.0), np.float32(3e19)])
def test_make_ranking_narrow_noise_is_squared_in_float64(noise):
    # Valid noises (<= 1e150) whose square overflows their own dtype
    # (float32 past ~1.8e19, float16 past ~256): the label cuts became
    # infinite and every label 0 or 1, with only a RuntimeWarning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X_narrow, y_narrow, _ = make_ranking(20, noise=noise, n_features=4, n_informative=3, random_state=0)
    X, y, _ = make_ranking(20, noise=float(noise), n_features=4, n_informative=3, random_state=0)
    np.testing.assert_array_equal(X_narrow, X)
    np.testing.assert_array_equal(y_narrow, y)
    assert y.max() >= 3  # the grades above 1 exist at any noise (about 10 %)


def test_make_ranking_keyword_only():
    with pytest.raises(TypeError):
        make_ranking(10, 5)


@pytest.mark.parametrize("n_informative", [0, 1, 2, 4, 5])
def test_make_ranking_few_informative(n_informative):
    X, y, groups = make_ranking(
        30, n_features=6, n_informative=n_informative, random_state=0
    )
    assert X.shape == (y.shape[0], 6)
    assert np.isfinite(X).all()
    assert y.min() >= 0 and y.max() <= 4
    assert np.unique(y).size >= 3


def test_make_ranking_linear_model_beats_random(default_draw, heldout_draw):
    X, y, _ = default_draw
    Xt, yt, gt = heldout_draw
    ridge = make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    ndcg_ridge = _ndcg_at_k(yt, ridge.predict(Xt), gt)
    rng = np.random.RandomState(0)
    ndcg_random = np.mean([_ndcg_at_k(yt, rng.rand(yt.shape[0]), gt) for _ in range(5)])
    # Observed: ridge ~0.84, random ~0.62.
    assert ndcg_ridge > ndcg_random + 0.12, (ndcg_ridge, ndcg_random)
    # ... but far from perfect: the labels are noisy and nonlinear.
    assert ndcg_ridge < 0.93


def test_make_ranking_labels_unrelated_without_informative_features():
    X, y, _ = make_ranking(100, n_informative=0, random_state=0)
    Xt, yt, _ = make_ranking(100, n_informative=0, random_state=1)
    pred = make_pipeline(StandardScaler(), Ridge()).fit(X, y).predict(Xt)
    assert abs(np.corrcoef(pred, yt)[0, 1]) < 0.15


def test_make_ranking_nonlinear_model_beats_linear(default_draw, heldout_draw):
    X, y, _ = default_draw
    Xt, yt, _ = heldout_draw
    linear = make_pipeline(StandardScaler(), Ridge())
    poly = make_pipeline(
        StandardScaler(), PolynomialFeatures(2), StandardScaler(), Ridge(alpha=30.0)
    )
    trees = HistGradientBoostingRegressor(max_iter=60, random_state=0)
    # One thread: on a small problem on a busy machine, OpenMP threads make
    # the boosting fit many times slower.
    with threadpool_limits(limits=1):
        r_linear, r_poly, r_trees = (
            np.corrcoef(model.fit(X, y).predict(Xt), yt)[0, 1]
            for model in (linear, poly, trees)
        )
    # Observed: linear ~0.51, polynomial ~0.61, boosted trees ~0.61.
    assert r_linear > 0.3, r_linear
    assert r_poly > r_linear + 0.05, (r_poly, r_linear)
    assert r_trees > r_linear + 0.05, (r_trees, r_linear)


# --------------------------------------------------------------------------
# load_letor on the Yahoo LTR sample
# --------------------------------------------------------------------------


def _sidecar_sizes(path):
    return np.loadtxt(path, dtype=np.int64, ndmin=1)


@needs_yahoo
def test_load_letor_yahoo_train():
    X, y, groups = load_letor(YAHOO_DIR / "rank.train")
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (3005, 300)
    assert y.shape == groups.shape == (3005,)
    assert y.dtype == np.float64
    assert groups.dtype == np.int64
    assert np.unique(groups).size == 201
    expected = np.repeat(np.arange(201), np.bincount(groups))
    np.testing.assert_array_equal(groups, expected)
    np.testing.assert_array_equal(
        np.bincount(groups), _sidecar_sizes(YAHOO_DIR / "rank.train.query")
    )
    assert np.bincount(y.astype(np.int64)).tolist() == [645, 1211, 858, 222, 69]
    assert _n_empty_queries(y, groups) == 3  # as stated in the README
    lengths = np.bincount(groups)
    assert (lengths.min(), int(np.median(lengths)), lengths.max()) == (1, 15, 27)


@needs_yahoo
def test_load_letor_yahoo_test_and_common_width():
    Xtr, _, _ = load_letor(YAHOO_DIR / "rank.train", n_features=300)
    X, y, groups = load_letor(str(YAHOO_DIR / "rank.test"), n_features=300)
    assert X.shape == (768, 300)
    assert Xtr.shape[1] == X.shape[1] == 300
    assert np.unique(groups).size == 50
    np.testing.assert_array_equal(
        np.bincount(groups), _sidecar_sizes(YAHOO_DIR / "rank.test.query")
    )
    assert np.bincount(y.astype(np.int64)).tolist() == [206, 256, 252, 44, 10]
    X32, _, _ = load_letor(YAHOO_DIR / "rank.test", n_features=300, dtype=np.float32)
    assert X32.dtype == np.float32
    np.testing.assert_allclose(X32.toarray(), X.toarray(), rtol=1e-6)


@needs_yahoo
def test_load_letor_explicit_query_path(tmp_path):
    # Same sidecar, under another name, passed explicitly.
    sizes = _sidecar_sizes(YAHOO_DIR / "rank.test.query")
    other = tmp_path / "sizes.txt"
    other.write_text("\n".join(map(str, sizes)) + "\n")
    _, _, g_auto = load_letor(YAHOO_DIR / "rank.test")
    _, _, g_explicit = load_letor(YAHOO_DIR / "rank.test", query_path=other)
    np.testing.assert_array_equal(g_auto, g_explicit)
    # An explicit sidecar of the wrong length is rejected.
    with pytest.raises(ValueError, match="3005"):
        load_letor(YAHOO_DIR / "rank.train", query_path=other)


# --------------------------------------------------------------------------
# load_letor on small files
# --------------------------------------------------------------------------

QID_FILE = (
    "2 qid:10 1:0.5 3:1.5\n"
    "0 qid:10 2:0.25\n"
    "1 qid:3 1:1\n"
    "0 qid:3 4:2\n"
    "3 qid:3 1:0.75 2:0.5\n"
)
NO_QID_FILE = "2 1:0.5 3:1.5\n0 2:0.25\n1 1:1\n0 4:2\n3 1:0.75 2:0.5\n"


def test_load_letor_qid(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(QID_FILE)
    X, y, groups = load_letor(path)
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (5, 4)
    assert groups.dtype == np.int64
    np.testing.assert_array_equal(groups, [10, 10, 3, 3, 3])
    np.testing.assert_array_equal(y, [2.0, 0.0, 1.0, 0.0, 3.0])
    np.testing.assert_array_equal(
        X.toarray(),
        [
            [0.5, 0, 1.5, 0],
            [0, 0.25, 0, 0],
            [1, 0, 0, 0],
            [0, 0, 0, 2],
            [0.75, 0.5, 0, 0],
        ],
    )
    X, _, _ = load_letor(path, n_features=10)
    assert X.shape == (5, 10)


def test_load_letor_zero_based_keeps_train_and_test_columns_aligned(tmp_path):
    """Per file, scikit-learn's "auto" rule numbers ids from 0 only when the
    file holds id 0; saying how the dataset numbers them aligns its files."""
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    train.write_text("1 qid:1 0:1 1:2 2:3\n0 qid:1 1:5 2:6\n")  # holds id 0
    test.write_text("1 qid:2 1:2 2:3\n0 qid:2 1:5 2:6\n")  # the same rows without feature 0
    X_train, _, _ = load_letor(train, zero_based=True)
    X_test, _, _ = load_letor(test, n_features=3, zero_based=True)
    np.testing.assert_array_equal(X_test.toarray(), [[0, 2, 3], [0, 5, 6]])
    np.testing.assert_array_equal(X_train.toarray()[:, 1:], X_test.toarray()[:, 1:])
    # "auto" reads the test file from 1: its columns shift (documented).
    X_auto, _, _ = load_letor(test, n_features=3)
    np.testing.assert_array_equal(X_auto.toarray(), [[2, 3, 0], [5, 6, 0]])
    # One-based data said to be so: id 0 is an error, not a shift.
    with pytest.raises(ValueError, match="[Ii]nvalid index 0"):
        load_letor(train, zero_based=False)
    np.testing.assert_array_equal(load_letor(test, zero_based=False)[0].toarray(), X_auto.toarray()[:, :2])


def test_load_letor_qid_with_sidecar(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(QID_FILE)
    # A matching sidecar is accepted and the qids are returned.
    Path(str(path) + ".query").write_text("2\n3\n")
    _, _, groups = load_letor(path)
    np.testing.assert_array_equal(groups, [10, 10, 3, 3, 3])
    # A disagreeing sidecar (same total) is an error.
    Path(str(path) + ".query").write_text("3\n2\n")
    with pytest.raises(ValueError, match=r"disagree.*from query 1 on: line 1 says 3, and the run of qid:10 starting at row 0 has 2 rows"):
        load_letor(path)
    # The message points at the first query where they part, past a common prefix.
    Path(str(path) + ".query").write_text("2\n1\n2\n")
    with pytest.raises(ValueError, match=r"from query 2 on: line 2 says 1, and the run of qid:3 starting at row 2 has 3 rows"):
        load_letor(path)


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
def test_load_letor_reads_the_qids_as_scikit_learn_does_without_its_quadratic_append(tmp_path, monkeypatch, suffix):
    """Asked for the qids, scikit-learn's parser copies its whole qid array
    once per row (np.append): n**2 / 2 copied ids, hours for an MSLR-WEB30K
    fold. load_letor reads them itself, with the same rules."""
    import types

    from sklearn.datasets import _svmlight_format_fast, load_svmlight_file

    content = (
        b"2 qid:10032 1:0.056537 2:0 46:0.076923 #docid = GX029-35-5894638 inc = 0.0119 prob = 0.1398\r\n"
        b"\r\n# a comment line qid:7 3:9\n"
        b"0\tqid:10032   2:1.5e-05\t46:-3E+02   \n"
        b"1 qid:+3000000000 1:1 #qid:5\n"
        b"4.0 qid:-9223372036854775808 46:1"  # a last line without a line end
    )
    path = tmp_path / f"train.txt{suffix}"
    path.write_bytes({"": bytes, ".gz": gzip.compress, ".bz2": bz2.compress}[suffix](content))
    X_ref, y_ref, qid_ref = load_svmlight_file(str(path), query_id=True)

    appended = []

    class CountingNumpy(types.ModuleType):
        def __getattr__(self, name):
            return getattr(np, name)

        def append(self, array, values, *args, **kwargs):
            appended.append(len(array))
            return np.append(array, values, *args, **kwargs)

    monkeypatch.setattr(_svmlight_format_fast, "np", CountingNumpy("numpy"))
    X, y, groups = load_letor(path)
    assert appended == []
    np.testing.assert_array_equal(groups, [10032, 10032, 3000000000, -(2**63)])
    np.testing.assert_array_equal(groups, qid_ref)
    np.testing.assert_array_equal(y, [2, 0, 1, 4])
    np.testing.assert_array_equal(y, y_ref)
    assert X.shape == (4, 46) and (X != X_ref).nnz == 0
    np.testing.assert_array_equal(X.toarray()[:, [0, 1, 45]], [[0.056537, 0, 0.076923], [0, 1.5e-05, -300], [1, 0, 0], [0, 0, 1]])


def test_load_letor_qid_coming_back_is_one_query_and_refused_beside_a_sidecar(tmp_path):
    """qid 1, then 2, then 1 again: the estimators join the two runs of qid 1
    (groups keeps the qids as written), while a sidecar of sizes 2, 1, 1
    counts three queries although it matches the runs."""
    path = tmp_path / "train.txt"
    path.write_text("2 qid:1 1:1\n0 qid:1 1:2\n1 qid:2 1:3\n1 qid:1 1:4\n")
    X, y, groups = load_letor(path)
    np.testing.assert_array_equal(groups, [1, 1, 2, 1])
    np.testing.assert_array_equal(y, [2, 0, 1, 1])
    np.testing.assert_array_equal(X.toarray(), [[1], [2], [3], [4]])
    Path(str(path) + ".query").write_text("2\n1\n1\n")
    with pytest.raises(ValueError, match=r"qid:1 to two runs of rows, from row 0 and from row 3.*Give each query its own qid"):
        load_letor(path)
    # Runs of distinct qids beside the same sidecar are read as before.
    path.write_text("2 qid:1 1:1\n0 qid:1 1:2\n1 qid:2 1:3\n1 qid:3 1:4\n")
    np.testing.assert_array_equal(load_letor(path)[2], [1, 1, 2, 3])


@pytest.mark.parametrize(
    "kwargs, name",
    [({"n_features": 0}, "n_features"), ({"zero_based": "yes"}, "zero_based"), ({"query_path": 3}, "query_path")],
)
def test_load_letor_parameter_errors_name_its_own_parameters(tmp_path, kwargs, name):
    path = tmp_path / "train.txt"
    path.write_text(QID_FILE)
    with pytest.raises(ValueError, match=f"'{name}' parameter of load_letor"):
        load_letor(path, **kwargs)


@pytest.mark.parametrize("path", [None, 0, 3.5])
def test_load_letor_refuses_what_is_no_file(path):
    # An int would be read as a file descriptor by load_svmlight_file: 0 is
    # standard input, which waits for input that never comes.
    with pytest.raises(ValueError, match="'path' parameter of load_letor"):
        load_letor(path)


def test_load_letor_partial_qid(tmp_path):
    path = tmp_path / "partial.txt"
    path.write_text("1 qid:1 1:1\n0 qid:1 1:2\n2 1:3\n")
    with pytest.raises(ValueError, match="qid"):
        load_letor(path)


def test_load_letor_sidecar(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(NO_QID_FILE)
    Path(str(path) + ".query").write_text("2\n1\n2\n")
    X, y, groups = load_letor(path)
    assert X.shape == (5, 4)
    np.testing.assert_array_equal(groups, [0, 0, 1, 2, 2])
    np.testing.assert_array_equal(y, [2.0, 0.0, 1.0, 0.0, 3.0])


def test_load_letor_missing_sidecar(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(NO_QID_FILE)
    with pytest.raises(ValueError, match="no qid: field") as excinfo:
        load_letor(path)
    assert f"{path}.query" in str(excinfo.value)


@pytest.mark.parametrize("content", ["2\n2\n", "2\n1\n1\n2\n", ""])
def test_load_letor_sidecar_wrong_total(tmp_path, content):
    path = tmp_path / "train.txt"
    path.write_text(NO_QID_FILE)
    Path(str(path) + ".query").write_text(content)
    total = sum(int(t) for t in content.split())
    with pytest.raises(ValueError, match=rf"sum to {total}\b.*\b5 rows"):
        load_letor(path)


@pytest.mark.parametrize(
    "content", ["2\n0\n3\n", "2\n-1\n4\n", "2\n1.5\n1.5\n", "2\nx\n3\n"]
)
def test_load_letor_sidecar_bad_sizes(tmp_path, content):
    path = tmp_path / "train.txt"
    path.write_text(NO_QID_FILE)
    query_path = tmp_path / "sizes"
    query_path.write_text(content)
    with pytest.raises(ValueError, match="line 2 is"):
        load_letor(path, query_path=query_path)


def test_load_letor_sidecar_with_a_byte_order_mark_or_in_utf16(tmp_path):
    # Python said "line 1 is '\\ufeff2'" and raised a UnicodeDecodeError.
    path = tmp_path / "train.txt"
    path.write_text(NO_QID_FILE)
    Path(str(path) + ".query").write_bytes(b"\xef\xbb\xbf2\r\n1\r\n2\r\n")
    np.testing.assert_array_equal(load_letor(path)[2], [0, 0, 1, 2, 2])
    Path(str(path) + ".query").write_bytes("2\r\n1\r\n2\r\n".encode("utf-16"))
    with pytest.raises(ValueError, match=r"train.txt.query is not UTF-8 or ASCII text.*save it as plain ASCII"):
        load_letor(path)


def test_load_letor_sidecar_holds_one_size_per_line(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(NO_QID_FILE)
    Path(str(path) + ".query").write_text("\n4 1\n")  # two sizes on one line: not a sidecar
    with pytest.raises(ValueError, match="one integer per line; line 2 is '4 1'"):
        load_letor(path)
    Path(str(path) + ".query").write_text("4\n\n1\n")  # blank lines are skipped
    np.testing.assert_array_equal(load_letor(path)[2], [0, 0, 0, 0, 1])


@pytest.mark.parametrize(
    "row, match",
    [
        ("2 qid:abc 1:0.5\n", "qid: or a feature id that is not an integer"),
        ("2 qid:99999999999999999999 1:0.5\n", "qid: or a feature id that is not an integer"),
        # A feature id within int64 but past the parser's C int.
        ("2 qid:1 3000000000:0.5\n", r"qid: or a feature id that is not an integer in its range \(qid: within int64, feature id: 0 to 2\*\*31 - 1\)"),
        ("2 1:0.5 qid:3\n", "the qid: before the features"),
        ("2 qid:1 1:0.5\n1 qid 1:0.3\n", "line 2: the query field 'qid' has no ':'"),
        ("2 qid=1 1:0.5\n", "line 1: the query field 'qid=1' has no ':'"),
        ("# a comment only\n\n", "holds no rows"),
    ],
)
def test_load_letor_names_the_file_and_the_field(tmp_path, row, match):
    path = tmp_path / "train.txt"
    path.write_text(row)
    with pytest.raises(ValueError, match=match) as raised:
        load_letor(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
@pytest.mark.parametrize(
    "content, match",
    [
        (b"\xef\xbb\xbf" + QID_FILE.encode(), "starts with a UTF-8 byte order mark"),
        (QID_FILE.replace("\n", "\r").encode(), r"carriage return alone"),
        (QID_FILE.encode("utf-16"), r"is UTF-16 text .* save it as plain ASCII or UTF-8"),
    ],
    ids=["byte-order-mark", "bare-carriage-returns", "utf-16"],
)
def test_load_letor_names_a_byte_order_mark_or_bare_carriage_returns(tmp_path, suffix, content, match):
    # Well-formed rows that scikit-learn's parser cannot split: its messages
    # ("could not convert string to float", "need more than 1 value to
    # unpack") say nothing of why.
    path = tmp_path / f"train.txt{suffix}"
    compress = {"": bytes, ".gz": gzip.compress, ".bz2": bz2.compress}[suffix]
    path.write_bytes(compress(content))
    with pytest.raises(ValueError, match=match) as raised:
        load_letor(path)
    assert str(path) in str(raised.value)
    # The same rows with plain line ends read as the file means them.
    fixed = QID_FILE.encode() if content.startswith(b"\xff\xfe") else content.removeprefix(b"\xef\xbb\xbf").replace(b"\r", b"\n")
    path.write_bytes(compress(fixed))
    np.testing.assert_array_equal(load_letor(path)[2], [10, 10, 3, 3, 3])


@pytest.mark.parametrize("row", ["1 qid:2 3:1 1:0.5\n", "1 qid:2 1:1 1:0.5\n"], ids=["out-of-order", "repeated"])
def test_load_letor_names_the_file_and_line_of_feature_ids_out_of_order(tmp_path, row):
    # The parser said only "Feature indices ... should be sorted and unique".
    path = tmp_path / "train.txt"
    path.write_text("2 qid:1 1:0.5 2:1\n# a comment\n\n" + row + "0 qid:2 1:0.1\n")
    with pytest.raises(ValueError, match=r"train.txt, line 4: the feature ids of a row must increase.*Sort the features"):
        load_letor(path)


def test_load_letor_keeps_the_parsers_message_for_other_malformed_rows(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("2 qid:1 1:0.5\nnot-a-label qid:1 1:0.2\n")
    with pytest.raises(ValueError, match="could not convert string to float") as raised:
        load_letor(path)
    assert "byte order mark" not in str(raised.value) and "carriage return" not in str(raised.value)


@pytest.mark.parametrize("form", ["crlf-file", "file-object"])
def test_load_letor_keeps_the_parsers_message_for_malformed_rows_in_other_forms(tmp_path, form):
    # \r\n line ends are not bare carriage returns, and a file object has no
    # path to reopen: in both the parser's own message is the one to give.
    import io

    content = b"2 qid:1 1:0.5\r\nnot-a-label qid:1 1:0.2\r\n"
    source = io.BytesIO(content) if form == "file-object" else tmp_path / "train.txt"
    if form == "crlf-file":
        source.write_bytes(content)
    with pytest.raises(ValueError, match="could not convert string to float") as raised:
        load_letor(source)
    assert "byte order mark" not in str(raised.value) and "carriage return" not in str(raised.value)


def test_load_letor_file_object(tmp_path):
    import io

    X, y, groups = load_letor(io.BytesIO(QID_FILE.encode()))
    np.testing.assert_array_equal(groups, [10, 10, 3, 3, 3])
    # No sidecar can be looked up next to a file object ...
    with pytest.raises(ValueError, match="no qid: field"):
        load_letor(io.BytesIO(NO_QID_FILE.encode()))
    # ... but an explicit one is used.
    query_path = tmp_path / "sizes"
    query_path.write_text("4\n1\n")
    _, _, groups = load_letor(io.BytesIO(NO_QID_FILE.encode()), query_path=query_path)
    np.testing.assert_array_equal(groups, [0, 0, 0, 0, 1])


def test_load_letor_says_to_open_a_text_file_object_in_binary_mode(tmp_path):
    # The parser's own words were "Expected bytes, got str".
    import io

    path = tmp_path / "train.txt"
    path.write_text(QID_FILE)
    with open(path) as f, pytest.raises(TypeError, match=r"gives str lines; open the file in binary mode"):
        load_letor(f)
    with pytest.raises(TypeError, match=r"io.BytesIO"):
        load_letor(io.StringIO(QID_FILE))
    with open(path, "rb") as f:
        np.testing.assert_array_equal(load_letor(f)[2], [10, 10, 3, 3, 3])


# Found by a mutation audit of the suite, second round (2026-11-27).

def test_query_lengths_reach_both_ends():
    # Lengths are drawn over [min_docs, max_docs]: both ends occur.
    _, _, groups = make_ranking(n_queries=3000, min_docs=2, max_docs=4, random_state=0)
    lengths = np.bincount(groups)
    assert set(np.unique(lengths)) == {2, 3, 4}
    # min_docs == max_docs: every query that long.
    _, _, groups = make_ranking(n_queries=50, min_docs=7, max_docs=7, random_state=0)
    assert np.all(np.bincount(groups) == 7)


@pytest.mark.parametrize("fraction, n_queries", [(0.35, 10), (0.05, 30), (0.17, 30), (0.5, 20)])
def test_round_of_the_fraction_is_emptied(fraction, n_queries):
    # round(empty_query_fraction * n_queries) queries have all labels 0. With
    # long queries none ends up empty by chance (0.21**40 per query), so the
    # empty ones are exactly those.
    _, y, groups = make_ranking(n_queries=n_queries, min_docs=40, max_docs=40, empty_query_fraction=fraction,
                                random_state=0)
    n_empty = int(np.sum(np.bincount(groups, weights=y) == 0))
    assert n_empty == int(round(fraction * n_queries))


def test_every_feature_may_be_informative():
    X, y, groups = make_ranking(n_queries=10, n_features=5, n_informative=5, random_state=0)
    assert X.shape[1] == 5 and len(y) == len(groups) == len(X)
    with pytest.raises(ValueError, match="must not exceed"):
        make_ranking(n_queries=10, n_features=5, n_informative=6)


def test_query_level_share_of_the_features_is_at_most_half():
    # "Each feature is a mix of a query-level component (0 to 50 % of its
    # variance) and a document-level one": the share of a feature's
    # variance between queries (one-way ANOVA on ranks, which the monotone
    # transforms keep) averages about a quarter, and never comes near 1.
    X, _, groups = make_ranking(n_queries=400, n_features=20, min_docs=30, max_docs=30, random_state=0)
    shares = []
    for column in X.T:
        ranks = np.argsort(np.argsort(column)).astype(float)
        means = np.bincount(groups, weights=ranks) / np.bincount(groups)
        shares.append(np.var(means[groups]) / np.var(ranks))
    shares = np.array(shares)
    # Within-query sampling adds ~1/30 of the variance to the query means.
    assert shares.mean() < 0.45
    assert shares.max() < 0.75


@pytest.mark.skipif(not hasattr(os, "sysconf"), reason="the memory check reads POSIX sysconf")
def test_a_problem_larger_than_memory_is_refused_at_once():
    # 500 rows of 10**12 features: 4 PB. Drawing the problem walks the
    # features in Python before numpy would refuse X, for hours here.
    with pytest.raises(MemoryError, match=r"at least 3,725,290\.3 GiB for X \(500 rows.*Ask for fewer"):
        make_ranking(n_queries=100, n_features=10**12, min_docs=5)


@pytest.mark.parametrize("unknown", ["no-sysconf", "unknown-name", "no-answer"])
def test_the_memory_check_is_skipped_where_the_memory_is_unknown(unknown, monkeypatch):
    # Not POSIX (no os.sysconf), a name the system does not define
    # (ValueError), or -1 pages (sysconf's "no answer"): make_ranking draws
    # the problem as it does elsewhere.
    expected = make_ranking(5, n_features=4, n_informative=2, random_state=0)
    if unknown == "no-sysconf":
        monkeypatch.delattr(os, "sysconf", raising=False)
    else:
        def sysconf(name):
            if unknown == "unknown-name":
                raise ValueError(f"unrecognized configuration name {name!r}")
            return -1 if name == "SC_PHYS_PAGES" else 4096

        monkeypatch.setattr(os, "sysconf", sysconf, raising=False)
    for got, want in zip(make_ranking(5, n_features=4, n_informative=2, random_state=0), expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(not hasattr(os, "sysconf"), reason="the memory check reads POSIX sysconf")
@pytest.mark.parametrize("scalar, n_features", [(np.int32, 10**9), (np.int64, 2**60)])
def test_the_memory_check_takes_numpy_integers_without_overflow(scalar, n_features):
    # Sizes given as numpy integers multiplied in their own width: int32
    # wrapped around, the check passed and the call walked 10**9 features
    # (a hang); int64 leaked numpy's "array is too big".
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        with pytest.raises(MemoryError, match="Ask for fewer"):
            make_ranking(scalar(100), n_features=scalar(n_features), min_docs=scalar(5))
