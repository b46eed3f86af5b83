"""Features min-max scaled within each query (LETOR's form): the detection,
and the "auto" values that follow it."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from sklearn_ranknet import LambdaRankRanker, ListNetRanker, RankNetRanker, _noise, _query_scaled, _resolve, _training
from sklearn_ranknet._groups import group_rows
from sklearn_ranknet._query_scaled import scaled_within_queries
from sklearn_ranknet.datasets import load_letor, make_ranking

RANKERS = [LambdaRankRanker, RankNetRanker, ListNetRanker]


def _arranged(qid):
    grouped = group_rows(qid, len(qid))
    rows = grouped.order if grouped.order is not None else np.arange(len(qid))
    return rows, grouped.offsets


def _scaled_within(X, qid):
    """Each column min-max scaled inside each query, 0 where it is constant
    there (LETOR 4.0's QueryLevelNorm)."""
    X = np.array(X, dtype=np.float64)
    for query in np.unique(qid):
        rows = qid == query
        low, high = X[rows].min(axis=0), X[rows].max(axis=0)
        X[rows] = np.where(high > low, (X[rows] - low) / np.where(high > low, high - low, 1.0), 0.0)
    return X


def _reference(X, qid):
    """The definition, cell by cell, over every query (no sampling)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    queries, sizes = np.unique(qid, return_counts=True)
    read = X[np.isin(qid, queries[sizes >= 2])]
    flag = np.all((np.abs(read) <= 1e-6) | (np.abs(read - 1) <= 1e-6), axis=0)
    varying = from_0_to_1 = 0
    for query in queries:
        block = X[qid == query]
        if len(block) < 2:
            continue
        for feature, column in enumerate(block.T):
            if column.max() > column.min() and not flag[feature]:
                varying += 1
                from_0_to_1 += abs(column.min()) <= 1e-6 and abs(column.max() - 1) <= 1e-6
    between = np.any((X > 1e-6) & (X < 1 - 1e-6))
    return bool(varying and between and from_0_to_1 >= 0.99 * varying)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_queries=st.integers(1, 12), n_features=st.integers(1, 6),
       scaled=st.booleans(), sparsity=st.sampled_from([0.0, 0.5, 0.9]), flags=st.booleans())
def test_detection_matches_the_definition(seed, n_queries, n_features, scaled, sparsity, flags):
    rng = np.random.default_rng(seed)
    qid = rng.integers(0, n_queries, size=rng.integers(1, 60))
    shape = (len(qid), n_features)
    X = rng.integers(0, 2, size=shape).astype(float) if flags else rng.normal(size=shape)
    X[rng.random(X.shape) < sparsity] = 0.0
    if scaled:
        X = _scaled_within(X, qid)
    rows, offsets = _arranged(qid)
    expected = _reference(X, qid)
    assert scaled_within_queries(X, rows, offsets) == expected
    assert scaled_within_queries(sp.csr_matrix(X), rows, offsets) == expected
    if scaled and not flags and np.any((X > 1e-6) & (X < 1 - 1e-6)):
        assert expected  # what the scaling makes is what the detection finds


def test_letor_files_are_detected_and_raw_features_are_not(tmp_path):
    X, y, qid = make_ranking(60, n_features=8, n_informative=4, min_docs=3, max_docs=20, random_state=0)
    scaled = _scaled_within(X, qid)
    # As LETOR 4.0 prints them: six decimals, the values 0 left out.
    lines = []
    for label, query, row in zip(y, qid, scaled):
        features = " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row) if v != 0)
        lines.append(f"{int(label)} qid:{query} {features}")
    path = tmp_path / "train.txt"
    path.write_text("\n".join(lines) + "\n")
    X_file, _, qid_file = load_letor(path)
    assert sp.issparse(X_file)
    assert scaled_within_queries(X_file, *_arranged(qid_file))
    assert scaled_within_queries(X_file.toarray().astype(np.float32), *_arranged(qid_file))
    assert not scaled_within_queries(X, *_arranged(qid))
    # Already in [0, 1] over the whole collection is not scaled within queries.
    assert not scaled_within_queries((X - X.min(axis=0)) / np.ptp(X, axis=0), *_arranged(qid))


def test_a_few_unscaled_cells_hide_nothing_and_many_do():
    X, _, qid = make_ranking(100, n_features=10, min_docs=5, max_docs=10, random_state=1)
    scaled = _scaled_within(X, qid)
    rows, offsets = _arranged(qid)
    # One column of one query unscaled: 1 cell in 1,000.
    nudged = scaled.copy()
    nudged[qid == qid[0], 3] *= 0.5
    assert scaled_within_queries(nudged, rows, offsets)
    # One column unscaled everywhere: a tenth of the cells.
    nudged[:, 3] = X[:, 3]
    assert not scaled_within_queries(nudged, rows, offsets)


def test_flags_beside_an_unscaled_feature_are_not_called_scaled():
    # A varying 0/1 flag runs from 0 to 1 inside its query whatever the form,
    # so many flags must not outvote the one feature that tells the form.
    rng = np.random.RandomState(0)
    qid = np.repeat(np.arange(50), rng.randint(3, 30, 50))
    flags = (rng.rand(len(qid), 120) < 0.5).astype(float)
    click_rate = rng.beta(2, 5, len(qid))
    rows, offsets = _arranged(qid)
    for X in (np.column_stack([flags, click_rate]), sp.csr_matrix(np.column_stack([flags, click_rate]))):
        assert not scaled_within_queries(X, rows, offsets)
    scaled = np.column_stack([flags, _scaled_within(click_rate[:, None], qid)])
    assert scaled_within_queries(scaled, rows, offsets)
    assert scaled_within_queries(sp.csr_matrix(scaled), rows, offsets)


def test_missing_values_are_left_out_of_the_detection():
    """With 60 % of the values missing, and one in each (query, feature)
    cell, each cell is judged by its present values (once a NaN hid the
    whole cell, and nothing was left to call scaled)."""
    X, _, qid = make_ranking(100, n_features=6, n_informative=3, min_docs=5, max_docs=10, random_state=2)
    rng = np.random.default_rng(0)
    missing = rng.random(X.shape) < 0.6
    for query in np.unique(qid):  # and no cell complete
        first = np.flatnonzero(qid == query)[0]
        missing[first, :] = True
    rows, offsets = _arranged(qid)
    # Scaled within queries over the present values, as a file of such data is.
    scaled = np.where(missing, np.nan, X)
    for query in np.unique(qid):
        block = scaled[qid == query]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column with nothing present
            low, high = np.nanmin(block, axis=0), np.nanmax(block, axis=0)
        scaled[qid == query] = np.where(high > low, (block - low) / np.where(high > low, high - low, 1.0), 0.0)
        scaled[qid == query] = np.where(np.isnan(block), np.nan, scaled[qid == query])
    for form in (scaled, sp.csr_matrix(scaled)):
        assert scaled_within_queries(form, rows, offsets)
    raw = np.where(missing, np.nan, X)
    assert not scaled_within_queries(raw, rows, offsets)
    assert not scaled_within_queries(sp.csr_matrix(raw), rows, offsets)
    # Flags with missing values stay flags beside an unscaled feature.
    flags = np.where(rng.random((len(qid), 40)) < 0.5, np.nan, (rng.random((len(qid), 40)) < 0.5).astype(float))
    assert not scaled_within_queries(np.column_stack([flags, np.abs(X[:, :1]) + 2.0]), rows, offsets)


def test_nothing_to_read_is_not_scaled():
    rows = np.arange(3)
    assert not scaled_within_queries(np.array([[0.5], [0.2], [1.0]]), rows, np.array([0, 1, 2, 3]))
    assert not scaled_within_queries(np.zeros((3, 2)), rows, np.array([0, 3]))


def test_the_sample_reads_a_bounded_number_of_rows(monkeypatch):
    monkeypatch.setattr(_query_scaled, "SAMPLE_ROWS", 50)
    offsets = np.arange(0, 10_001, 10)  # 1,000 queries of 10 rows
    positions, sample_offsets = _query_scaled._sampled_queries(offsets)
    assert len(positions) == sample_offsets[-1] <= 50 and len(sample_offsets) - 1 == 5
    # Evenly spread over the queries, whole queries each.
    np.testing.assert_array_equal(positions.reshape(5, 10)[:, 0], [0, 2_000, 4_000, 6_000, 8_000])
    np.testing.assert_array_equal(np.diff(positions.reshape(5, 10), axis=1), 1)


def _redundant(n_queries=40, seed=0):
    """Small redundant data: every feature a noisy copy of one of three
    latent scores, as raw features."""
    X, y, qid = make_ranking(n_queries, n_features=3, n_informative=3, min_docs=5, max_docs=15, random_state=seed)
    copies = np.repeat(X, 4, axis=1) + 0.1 * np.random.default_rng(seed).normal(size=(len(y), 12))
    return copies, y, qid


def _letor_like(n_queries=40, seed=0):
    """The same in LETOR's form, scaled within each query."""
    copies, y, qid = _redundant(n_queries, seed)
    return _scaled_within(copies, qid), y, qid


def _fit(ranker, method, X, y, qid):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return getattr(ranker, method)(X, y, groups=qid)


@pytest.mark.parametrize("Ranker, scaled_level", [(LambdaRankRanker, 3.0), (ListNetRanker, 3.0),
                                                  (RankNetRanker, _noise.AUTO_INPUT_NOISE)])
def test_auto_noise_is_larger_on_small_data_scaled_within_queries(Ranker, scaled_level):
    # LambdaRank and ListNet take more noise there; RankNet gained nothing
    # from it (defaults study, twenty-first look).
    X, y, qid = _letor_like()
    raw, _, _ = _redundant()
    quick = dict(max_iter=1, random_state=0)
    assert _fit(Ranker(**quick), "fit", X, y, qid).input_noise_ == scaled_level
    assert _fit(Ranker(**quick), "fit", raw, y, qid).input_noise_ == _noise.AUTO_INPUT_NOISE
    assert _fit(Ranker(**quick), "partial_fit", X, y, qid).input_noise_ == 0.0
    assert _fit(Ranker(**quick, input_noise=1.0), "fit", X, y, qid).input_noise_ == 1.0


@pytest.mark.parametrize("Ranker, reads", [(LambdaRankRanker, True), (ListNetRanker, True), (RankNetRanker, False)])
def test_the_form_is_read_only_by_rankers_whose_values_follow_it(Ranker, reads, monkeypatch):
    # RankNet has no "auto" value for scaled data, so its fits skip the check.
    X, y, qid = _letor_like()
    calls = []
    original = _query_scaled.scaled_within_queries

    def counted(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(_training, "scaled_within_queries", counted)
    _fit(Ranker(max_iter=1, random_state=0), "fit", X, y, qid)
    assert len(calls) == (1 if reads else 0)


def _resolved(ranker):
    """Width, step and minibatch a fitted LambdaRankRanker trained with (the
    minibatch from Adam's step count after one epoch)."""
    width = tuple(c.shape[1] for c in ranker.coefs_[:-1])
    return width, ranker._fit_state.optimizer.learning_rate, ranker._fit_state.optimizer.t


def test_lambdarank_takes_ranknets_settings_on_small_data_scaled_within_queries(monkeypatch):
    X, y, qid = _letor_like(n_queries=120)
    one_epoch = dict(max_iter=1, random_state=0, early_stopping=False)
    scaled_settings = LambdaRankRanker._AUTO.query_scaled
    steps = lambda batch: -(-120 // batch)  # noqa: E731
    small_step, large_step = LambdaRankRanker._AUTO.learning_rate_init
    # The width and minibatch of the form; the step of all small data.
    expected = (scaled_settings["hidden_layer_sizes"], small_step, steps(scaled_settings["batch_size"]))
    assert _resolved(_fit(LambdaRankRanker(**one_epoch), "fit", X, y, qid)) == expected
    # Unscaled, the same rows keep the small-data defaults.
    raw, _, _ = _redundant(n_queries=120)
    small_width, _ = LambdaRankRanker._AUTO.hidden_layer_sizes
    assert _resolved(_fit(LambdaRankRanker(**one_epoch), "fit", raw, y, qid)) == (
        small_width, small_step, steps(LambdaRankRanker._AUTO.batch_size))
    # Explicit values are kept.
    explicit = LambdaRankRanker(hidden_layer_sizes=(8,), learning_rate_init=0.01, batch_size=7, **one_epoch)
    assert _resolved(_fit(explicit, "fit", X, y, qid)) == ((8,), 0.01, steps(7))
    # From AUTO_EARLY_STOPPING_ROWS rows (and in partial_fit) the rule is off.
    monkeypatch.setattr(_resolve, "SMALL_DATA_ROWS", len(y))
    monkeypatch.setattr(_resolve, "SMALL_DATA_QUERIES", 1)  # the rows decide
    large = _resolved(_fit(LambdaRankRanker(**one_epoch), "fit", X, y, qid))
    assert large == (LambdaRankRanker._AUTO.hidden_layer_sizes[1], large_step, steps(16))
    assert _resolved(_fit(LambdaRankRanker(**one_epoch), "partial_fit", X, y, qid)) == large


def test_lambdarank_auto_minibatch_is_16_queries_on_unscaled_data():
    # The old default, batch_size=16, and "auto" train the same model.
    X, y, qid = make_ranking(40, random_state=3)
    quick = dict(max_iter=2, random_state=0)
    auto = _fit(LambdaRankRanker(**quick), "fit", X, y, qid)
    sixteen = _fit(LambdaRankRanker(batch_size=16, **quick), "fit", X, y, qid)
    np.testing.assert_array_equal(auto.predict(X), sixteen.predict(X))


def test_wide_dense_data_is_sampled_by_values(monkeypatch):
    monkeypatch.setattr(_query_scaled, "SAMPLE_VALUES", 600)
    X, _, qid = make_ranking(50, n_features=30, n_informative=5, min_docs=10, max_docs=10, random_state=2)
    read = []
    original = _query_scaled._cell_ranges
    def recorded(block, offsets):
        read.append(block.shape)
        return original(block, offsets)

    monkeypatch.setattr(_query_scaled, "_cell_ranges", recorded)
    assert scaled_within_queries(_scaled_within(X, qid), *_arranged(qid))
    assert read == [(20, 30)]  # 600 values: two queries of 10 rows
    assert scaled_within_queries(sp.csr_matrix(_scaled_within(X, qid)), *_arranged(qid))
    assert read[1][0] == 500  # CSR is not copied dense: every query read


# Found by a mutation audit of the suite (2026-11-27).

def _detect(X, qid):
    grouped = group_rows(qid, len(qid))
    rows = grouped.order if grouped.order is not None else np.arange(len(qid))
    return scaled_within_queries(X, rows, grouped.offsets)


def test_two_document_queries_count_in_the_detection():
    """Queries of two documents are queries too: 30 of them with raw
    features (values up to 50) next to 5 scaled queries of 6 documents are
    far more than 1 % unscaled cells, so the data is not scaled within
    queries; scaled, they agree with the rest."""
    rng = np.random.default_rng(0)
    qid = np.r_[np.repeat(np.arange(5), 6), np.repeat(np.arange(5, 35), 2)]
    raw = rng.uniform(0, 50, size=(len(qid), 3))
    long_queries = qid < 5
    mixed = raw.copy()
    mixed[long_queries] = _scaled_within(raw[long_queries], qid[long_queries])
    assert not _detect(mixed, qid)
    assert _detect(_scaled_within(raw, qid), qid)
