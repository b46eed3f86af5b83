"""``python -m benchmarks --quick`` runs every suite end to end (a smoke test; the figures
come from the full run, see docs/benchmarks.md), and the harness skips missing peers."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks._harness import Harness

ROOT = Path(__file__).resolve().parents[1]
YAHOO = ROOT.parent / "shared" / "data" / "yahoo-ltr-sample"


def _small_fit(**params):
    """A two-epoch LambdaRankRanker on 20 make_ranking queries (its
    ConvergenceWarning silenced): the study variants' subject."""
    import warnings

    from sklearn_ranknet import LambdaRankRanker
    from sklearn_ranknet.datasets import make_ranking

    X, y, groups = make_ranking(20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranker = LambdaRankRanker(**{"max_iter": 2, "random_state": 0, **params}).fit(X, y, groups=groups)
    return X, y, groups, ranker


QUICK_SUITES = ["lambdas", "metrics", "scale", "coldstart", "inputs"] + (["quality"] if YAHOO.is_dir() else [])
QUICK_SUITES += ["dask"] if importlib.util.find_spec("distributed") else []


@pytest.mark.parametrize("suite", QUICK_SUITES)
def test_quick_benchmarks_run_and_write_their_results(tmp_path, suite):
    # One process per suite, each with its own time limit, which only has to
    # catch a hang: the quality suite, the longest, took 85 s alone (AMD EPYC
    # VM, 2026-11-29; 127 s before --quick bagged one ranker only) and over
    # 600 s beside two other test runs on the same two cores.
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path), "--only", suite],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / f"{suite}.json").read_text())
    assert result["suite"] == suite and result["quick"] and result["tables"]
    assert result["targets"] and all("line" in t for t in result["targets"])
    assert result["record"]["cpu_model"] and result["record"]["versions"]
    text = (tmp_path / f"{suite}.md").read_text()
    assert "## Targets" in text and "## Method" in text


def test_missing_peers_and_matplotlib_are_skipped_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHMARKS_WITHOUT", "ranx,matplotlib")
    h = Harness("demo", quick=True, out_dir=tmp_path, doc="Demo.\n\nHow it is measured.")
    assert h.peer("ranx") is None
    assert h.peer("numpy") is not None
    h.plot(lambda ax: ax.plot([1, 2]))
    h.table("t", [{"a": 1.23456, "b": None}], {"a": "a", "b": "b"})
    h.target("a figure", 2.0, 1.0, unit="x")
    h.write()
    assert not (tmp_path / "demo.png").exists()
    text = (tmp_path / "demo.md").read_text()
    assert "ranx is not installed" in text and "matplotlib is not installed" in text
    assert "MISSED: a figure: 2x (target <= 1x)" in text and "| 1.23 | n/a |" in text
    assert json.loads((tmp_path / "demo.json").read_text())["targets"][0]["met"] is False


def test_letor_view_scales_each_feature_within_its_query():
    from benchmarks.tune_defaults import letor_view

    rng = np.random.default_rng(0)
    qid = np.repeat([7, 3, 9], [4, 1, 5])
    X = rng.normal(size=(10, 3))
    X[qid == 9, 1] = 2.5  # one value in the query: the feature becomes 0 there
    y = rng.integers(0, 5, size=10)
    Xv, yv, qv = letor_view(X, y, qid)
    for query in np.unique(qid):
        rows = qid == query
        for j in range(3):
            column = X[rows, j]
            spread = column.max() - column.min()
            expected = (column - column.min()) / spread if spread > 0 else np.zeros_like(column)
            np.testing.assert_allclose(Xv[rows, j], expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(yv, np.minimum(y, 2))
    np.testing.assert_array_equal(qv, qid)
    assert not np.shares_memory(Xv, X)


def test_synthetic_letor_sets_are_the_synthetic_sets_in_letor_form():
    from benchmarks.tune_defaults import letor_view, selection_data

    data = selection_data(sets=("small", "small_letor"))
    assert len(data["small_letor"]) == len(data["small"]) == 1
    for plain, letor in zip(data["small"][0], data["small_letor"][0]):  # training, then held-out rows
        for got, expected in zip(letor, letor_view(*plain)):
            np.testing.assert_array_equal(got, expected)
        assert set(np.unique(letor[1])) <= {0, 1, 2} and letor[0].min() >= 0 and letor[0].max() <= 1


def test_query_context_view_appends_each_features_query_mean():
    from benchmarks.tune_defaults import query_context_view

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    qid = rng.permutation(np.repeat(["b", "a", "c"], [5, 15, 10]))  # interleaved, any id type
    Xc, yc, qc = query_context_view(X, y, qid)
    assert Xc.shape == (30, 6) and yc is y and qc is qid
    np.testing.assert_array_equal(Xc[:, :3], X)
    for row in range(30):
        np.testing.assert_allclose(Xc[row, 3:], X[qid == qid[row]].mean(axis=0), rtol=1e-12)


def test_narrow_view_keeps_the_training_rows_most_populated_columns():
    from benchmarks.tune_defaults import narrow_view

    rng = np.random.default_rng(0)
    X = rng.random((30, 6)) * (rng.random((30, 6)) < [0.9, 0.1, 0.5, 0.95, 0.2, 0.7])
    X_held = rng.random((8, 6))
    y, qid = rng.integers(0, 3, 30), np.repeat(np.arange(6), 5)
    (Xn, yn, qn), (Xh, _, _) = narrow_view((X, y, qid), (X_held, y[:8], qid[:8]), n_features=3)
    kept = sorted(np.argsort(-np.count_nonzero(X, axis=0), kind="stable")[:3])
    np.testing.assert_array_equal(Xn, X[:, kept])
    np.testing.assert_array_equal(Xh, X_held[:, kept])  # the training rows choose, for both parts
    assert yn is y and qn is qid


def test_every_selection_set_has_its_model_seeds():
    from benchmarks.tune_defaults import DATASETS, EXTRA_SETS, SEEDS

    assert set(DATASETS + EXTRA_SETS) <= set(SEEDS)


def test_copies_view_observes_each_feature_several_times_with_noise():
    from benchmarks.tune_defaults import copies_view

    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(4000, 2)), rng.integers(0, 3, 4000), np.repeat(np.arange(40), 100)
    Xc, yc, qc = copies_view(X, y, qid, n_copies=3, spread=0.5, seed=1)
    assert Xc.shape == (4000, 6) and yc is y and qc is qid
    noise = Xc - np.repeat(X, 3, axis=1)
    # 4,000 draws per column: the sample sd has a standard error of 1.1 %; 4 % is 3.6 of them.
    np.testing.assert_allclose(noise.std(axis=0), 0.5, rtol=0.04)
    assert np.abs(np.corrcoef(noise.T) - np.eye(6)).max() < 0.1  # independent copies (sd 0.016)


def test_study_query_weights_equalise_the_summed_pair_weights():
    # The study-only variant computes each query's summed |dG| |dd| in closed
    # form; a brute-force sum over the pairs in the ideal order must agree,
    # with and without truncation, and the package is restored afterwards.
    from benchmarks._study_variants import _objective_variant
    from sklearn_ranknet import _objectives

    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 30, 25)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = np.concatenate([np.sort(rng.integers(0, 5, n))[::-1] for n in sizes]).astype(float)
    build = _objectives.LambdaRankObjective.__init__
    for k in (None, 4):
        kwargs = dict(sigma=1.0, metric="ndcg", k=k, gain="exponential")
        plain = _objectives.LambdaRankObjective(labels, offsets, **kwargs)
        with _objective_variant(query_weight_power=1.0):
            equalised = _objectives.LambdaRankObjective(labels, offsets, **kwargs)
        assert _objectives.LambdaRankObjective.__init__ is build
        summed = np.zeros(len(sizes))
        for q in range(len(sizes)):
            u = plain.utility[offsets[q]:offsets[q + 1]]
            d = plain.discounts[: sizes[q]]
            summed[q] = sum(abs(u[a] - u[b]) * abs(d[a] - d[b]) for a in range(sizes[q])
                            for b in range(a + 1, sizes[q])) * plain.norms[q]
        weighted = summed > 0
        # Every query with a pair weight now sums to the same total, the old mean.
        np.testing.assert_allclose(summed * equalised.norms / np.where(weighted, plain.norms, 1.0),
                                   np.where(weighted, summed[weighted].mean(), 0.0), rtol=1e-12)
        np.testing.assert_array_equal(equalised.norms[~weighted], plain.norms[~weighted])


def test_study_listnet_mix_adds_listnets_gradient_and_keeps_lambdaranks_cost():
    # The study-only mix of the twenty-third look: LambdaRank's lambdas plus
    # w times ListNet's softmax gradient on the same rows; costs unchanged;
    # the package restored afterwards.
    from benchmarks._study_variants import _objective_variant
    from sklearn_ranknet import _objectives

    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 20, 15)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = np.concatenate([np.sort(rng.integers(0, 3, n))[::-1] for n in sizes]).astype(float)
    scores, rows = rng.normal(size=len(labels)), np.arange(len(labels))
    queries = np.arange(len(sizes))
    kwargs = dict(sigma=1.0, metric="ndcg", k=None, gain="exponential", normalize=True)
    plain = _objectives.LambdaRankObjective(labels, offsets, **kwargs)
    grad, cost = plain.gradient(scores, rows, queries, offsets, with_cost=True)
    listwise, _ = _objectives.ListNetObjective(labels, offsets, sigma=1.0, gain="exponential").gradient(
        scores, rows, queries, offsets)
    gradient = _objectives.LambdaRankObjective.gradient
    with _objective_variant(listnet_mix=0.5):
        mixed = _objectives.LambdaRankObjective(labels, offsets, **kwargs)
        mixed_grad, mixed_cost = mixed.gradient(scores, rows, queries, offsets, with_cost=True)
    assert _objectives.LambdaRankObjective.gradient is gradient
    np.testing.assert_allclose(mixed_grad, grad + 0.5 * listwise, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(mixed_cost, cost)
    assert np.abs(listwise).sum() > 0


def test_study_encoding_variants_move_the_bin_edges_and_restore_the_package():
    # The twenty-fourth look's study-only keys: a fixed number of quantile
    # bins, and steps just inside each feature's lowest and highest edge,
    # which tell the training minimum and maximum from values next to them.
    from benchmarks._study_variants import _encoding_variant
    from sklearn_ranknet import _inputs
    from sklearn_ranknet._inputs import PiecewiseEncoding

    rng = np.random.default_rng(0)
    X = rng.random((400, 2))
    X[:60, 0], X[60:120, 0] = 0.0, 1.0  # point masses at the ends, as per-query scaling makes
    package = (_inputs.piecewise_bins, _inputs._distinct_edges, _inputs._distinct_edges_of_all)
    plain = PiecewiseEncoding.fit(X)
    with _encoding_variant(piecewise_extreme_steps=0.01):
        stepped = PiecewiseEncoding.fit(X)
    with _encoding_variant(piecewise_bins=3):
        three = PiecewiseEncoding.fit(X)
    assert (_inputs.piecewise_bins, _inputs._distinct_edges, _inputs._distinct_edges_of_all) == package
    assert len(three.lower) == 3 + 3 and len(plain.lower) > len(three.lower)
    for j in range(2):
        lower, width = plain.lower[plain.source == j], plain.width[plain.source == j]
        edges = np.r_[lower, lower[-1] + width[-1]]
        low = edges[0] + 0.01 * (edges[1] - edges[0])
        high = edges[-1] - 0.01 * (edges[-1] - edges[-2])
        np.testing.assert_allclose(stepped.lower[stepped.source == j], np.sort(np.r_[edges[:-1], low, high]))
        first, last = np.flatnonzero(stepped.source == j)[[0, -1]]
        values = np.full((4, 2), 0.5)
        values[:, j] = [edges[0], 2 * low - edges[0], 2 * high - edges[-1], edges[-1]]
        encoded = stepped.transform(values)
        # Up by one within 1 % of the outer bins' widths: the extremes stand apart.
        np.testing.assert_allclose(encoded[:, first] - encoded[0, first], [0, 1, 1, 1], atol=1e-12)
        np.testing.assert_allclose(encoded[:, last] - encoded[0, last], [0, 0, 0, 1], atol=1e-12)


def test_study_jittered_bins_move_the_inner_edges_by_a_fresh_draw_per_encoding():
    from benchmarks._study_variants import _encoding_variant
    from sklearn_ranknet import _inputs
    from sklearn_ranknet._inputs import PiecewiseEncoding

    X = np.linspace(0.0, 1.0, 1001)[:, None]  # its quantile at level p is p
    quantiles = _inputs._column_quantiles
    with _encoding_variant(piecewise_bins=4, piecewise_jitter=3):
        first, second = PiecewiseEncoding.fit(X), PiecewiseEncoding.fit(X)
    assert _inputs._column_quantiles is quantiles
    draws = np.random.RandomState(3).uniform(size=2)
    for encoding, u in zip((first, second), draws):
        edges = np.r_[encoding.lower, encoding.lower[-1] + encoding.width[-1]]
        np.testing.assert_allclose(edges, np.r_[0.0, (np.arange(4) + u) / 4, 1.0], atol=1e-12)


def test_study_decoupled_decay_shrinks_the_weights_after_each_adam_step():
    # The twenty-fifth look's study-only key: Adam's step as the package takes
    # it, then the weights (not the intercepts) times 1 - learning_rate * w;
    # the package restored afterwards.
    from benchmarks._study_variants import study_variants
    from sklearn_ranknet._optim import Adam

    rng = np.random.default_rng(0)
    start = [rng.normal(size=(3, 2)), rng.normal(size=(2, 1)), rng.normal(size=2), rng.normal(size=1)]
    grads = [rng.normal(size=p.shape) for p in start]
    plain = [p.copy() for p in start]
    Adam(plain, 0.01).update(grads)
    apply = Adam._apply
    params, variants = study_variants({"alpha": 0.0, "decoupled_decay": 5.0})
    decayed = [p.copy() for p in start]
    with variants:
        Adam(decayed, 0.01).update(grads)
    assert Adam._apply is apply and params == {"alpha": 0.0}
    for before, after in zip(plain[:2], decayed[:2]):
        np.testing.assert_allclose(after, before * (1 - 0.01 * 5.0), rtol=1e-15)
    for before, after in zip(plain[2:], decayed[2:]):
        np.testing.assert_array_equal(after, before)


def test_study_raw_input_noise_is_drawn_on_the_features_before_the_encoding():
    # The twenty-fifth look's study-only key: a training block's noise is
    # drawn on its raw rows (scaled by each feature's spread), then encoded;
    # the package restored afterwards.
    from benchmarks._study_variants import study_variants
    from sklearn_ranknet import _training

    X, y, groups, ranker = _small_fit()
    data = _training.TrainingSet.from_input(X, y, groups, ranker._make_objective)
    package = (_training.TrainingSet.features, _training._with_input_noise)
    _, variants = study_variants({"raw_input_noise": 0.5})
    with variants:
        encoded = data.features(ranker, np.arange(7))
        noised = _training._with_input_noise(ranker, encoded, None, np.random.default_rng(1))
    assert (_training.TrainingSet.features, _training._with_input_noise) == package
    raw = X[data.rows[:7]] + np.random.default_rng(1).standard_normal((7, X.shape[1])) * (0.5 * X.std(axis=0))
    np.testing.assert_allclose(noised, ranker._network_rows(raw, slice(None)), rtol=1e-12)
    np.testing.assert_allclose(encoded, ranker._network_rows(X, data.rows[:7]), rtol=1e-12)
    assert not np.allclose(noised, encoded)


def test_study_feature_dropout_drops_whole_features_after_the_noise():
    # The twenty-sixth look's study-only key: after a block's input noise,
    # each row loses each feature (all of its encoded inputs) with
    # probability p, the rest scaled by 1 / (1 - p); the package restored.
    from benchmarks._study_variants import study_variants
    from sklearn_ranknet import _training

    X, y, groups, ranker = _small_fit(input_noise=0.5)
    data = _training.TrainingSet.from_input(X, y, groups, ranker._make_objective)
    noise = _training.noise_table(ranker, data, 4, 10)
    encoded = data.features(ranker, np.arange(40))
    package = _training._with_input_noise
    noised = package(ranker, encoded.copy(), noise, np.random.default_rng(1))
    _, variants = study_variants({"feature_dropout": 0.25})
    with variants:
        dropped = _training._with_input_noise(ranker, encoded.copy(), noise, np.random.default_rng(1))
    assert _training._with_input_noise is package
    source = ranker._input_scaling.encoding.source
    # Replay the generator: the noise's draws, then the mask's.
    generator = np.random.default_rng(1)
    package(ranker, encoded.copy(), noise, generator)
    kept = generator.random((40, X.shape[1])) >= 0.25
    np.testing.assert_allclose(dropped, noised * kept[:, source] / 0.75, rtol=1e-12)
    assert 0.1 < 1 - kept.mean() < 0.4 and (dropped[~kept[:, source]] == 0).all()


def test_study_predict_noise_draws_average_the_network_over_the_training_noise():
    # The twenty-sixth look's predict-time key: each row's score is the mean
    # of the network over K seeded draws of the input noise; deterministic,
    # and the package restored afterwards.
    from benchmarks._study_variants import study_variants
    from sklearn_ranknet import _base, _network

    X, y, groups, ranker = _small_fit(input_noise=0.5)
    plain = _base.BaseRanker._predict_features
    _, variants = study_variants({"predict_noise_draws": 3})
    with variants:
        averaged = ranker.predict(X[:9])
        again = ranker.predict(X[:9])
    assert _base.BaseRanker._predict_features is plain
    rows = ranker._network_rows(X[:9], slice(None))
    generator = np.random.default_rng(0)
    expected = np.mean([_network.predict_scores(rows + 0.5 * generator.standard_normal(rows.shape), ranker.coefs_,
                                                ranker.intercepts_, ranker.activation) for _ in range(3)], axis=0)
    np.testing.assert_allclose(averaged, expected, rtol=1e-12)
    np.testing.assert_array_equal(averaged, again)
    assert not np.allclose(averaged, ranker.predict(X[:9]))


def test_study_predict_expected_noise_is_the_limit_of_the_draws():
    # The twenty-sixth look's closed form: E over the input noise of a
    # one-hidden-layer ReLU network's score. Against the mean of many
    # seeded draws, within five standard errors of that mean (estimated
    # from the draws themselves).
    from benchmarks._study_variants import study_variants
    from sklearn_ranknet import _base, _network

    X, y, groups, ranker = _small_fit(max_iter=3, input_noise=1.0)
    plain = _base.BaseRanker._predict_features
    _, variants = study_variants({"predict_expected_noise": True})
    with variants:
        expected = ranker.predict(X[:6])
    assert _base.BaseRanker._predict_features is plain
    rows = ranker._network_rows(X[:6], slice(None))
    generator = np.random.default_rng(0)
    draws = np.array([_network.predict_scores(rows + generator.standard_normal(rows.shape), ranker.coefs_,
                                              ranker.intercepts_, "relu") for _ in range(4000)])
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert (np.abs(draws.mean(axis=0) - expected) < 5 * se).all()
    assert (np.abs(ranker.predict(X[:6]) - expected) > 5 * se).any()  # not the noise-free score


def test_compare_takes_the_standard_error_over_splits_when_told_them():
    from benchmarks.tune_defaults import compare

    # Two splits, three seeds each (a split's seeds in a row), and a second set.
    current = {"a": {"ndcg10": [0.80, 0.80, 0.80, 0.70, 0.70, 0.70]}, "b": {"ndcg10": [0.5, 0.5]}}
    new = {"a": {"ndcg10": [0.81, 0.83, 0.82, 0.70, 0.72, 0.71]}, "b": {"ndcg10": [0.6, 0.4]}}
    fits = np.array([0.01, 0.03, 0.02, 0.00, 0.02, 0.01])
    gains, se, mean_gain = compare(new, current)
    assert np.isclose(gains["a"], fits.mean()) and np.isclose(gains["b"], 0.0)
    assert np.isclose(mean_gain, fits.mean() / 2)
    assert np.isclose(se, fits.std(ddof=1) / np.sqrt(6))  # every fit counted as independent
    _, by_split, _ = compare(new, current, n_splits=2)
    assert np.isclose(by_split, np.std([0.02, 0.01], ddof=1) / np.sqrt(2))


def test_lead_over_trees_pairs_each_splits_mean_over_seeds_with_the_best_tree():
    from benchmarks.tune_defaults import lead_over_trees

    # Three splits, two seeds each (the Evaluator's order: a split's seeds in a row).
    result = {"letor": {"ndcg10": [0.80, 0.82, 0.70, 0.72, 0.90, 0.94]}}
    trees = {"letor": {"LGBMRanker()": np.array([0.80, 0.70, 0.88]),
                       "XGBRanker()": np.array([0.79, 0.69, 0.87])}}
    ((name, (best, lead, se)),) = lead_over_trees(result, trees).items()
    per_split = np.array([0.81 - 0.80, 0.71 - 0.70, 0.92 - 0.88])
    assert (name, best) == ("letor", "LGBMRanker()")
    assert np.isclose(lead, per_split.mean())
    assert np.isclose(se, per_split.std(ddof=1) / np.sqrt(3))  # over splits, not over the six fits
    assert lead_over_trees(result, {"letor": {}}) == {}  # no tree installed: no lead


def test_study_compare_against_trees_adds_the_lead_over_the_tree_rankers(tmp_path, monkeypatch):
    # The ranker's fits are a stand-in; the trees are fitted for real on
    # the same split (skipped by the harness when not installed).
    from benchmarks import tune_defaults

    monkeypatch.setattr(tune_defaults, "fit_score", lambda estimator, params, seed, train, held_out: {
        "ndcg10": 0.9 + seed / 100, "fit_s": 1.0, "epochs": 3, "warnings": 0})
    tune_defaults.main(["compare", "--estimator", "ranknet", "--no-yahoo", "--sets", "small", "--against-trees",
                        "--configs", json.dumps({"base": {}}), "--out", str(tmp_path)])
    (table,) = json.loads((tmp_path / "tune_compare.json").read_text())["tables"].values()
    installed = [label for label, (module, _) in tune_defaults.TREES.items() if importlib.util.find_spec(module)]
    if not installed:
        assert "lead_small" not in table[0]
        return
    trees = tune_defaults.tree_scores(Harness("t", quick=True, out_dir=tmp_path),
                                      tune_defaults.selection_data(sets=("small",)))["small"]
    best = max(trees, key=lambda label: trees[label].mean())
    # One split, two seeds (0.90 and 0.91): the lead is their mean minus the best tree's score.
    assert table[0]["lead_small"].startswith(f"{0.905 - trees[best][0]:+.4f} ± ")
    assert table[0]["lead_small"].endswith(f"({best})")


def test_sparse_relevance_folds_five_grades_into_three():
    from benchmarks.tune_defaults import sparse_relevance

    X, qid = np.zeros((5, 1)), np.zeros(5)
    _, y, _ = sparse_relevance(X, np.array([0.0, 1, 2, 3, 4]), qid)
    np.testing.assert_array_equal(y, [0, 0, 1, 2, 2])


def test_study_compare_without_yahoo_scores_only_the_sets_given(tmp_path, monkeypatch):
    # --no-yahoo: a study of one kind of data; the paired gain is over the
    # first set given. The fits are replaced by a stand-in that scores a
    # configuration by its parameters, so only the bookkeeping runs.
    from benchmarks import tune_defaults

    def fake_fit_score(estimator, params, seed, train, held_out):
        return {"ndcg10": 0.5 + params["alpha"] / 100 + seed / 1000, "fit_s": 1.0, "epochs": 3, "warnings": 0}

    monkeypatch.setattr(tune_defaults, "fit_score", fake_fit_score)
    configs = json.dumps({"base": {"alpha": 1.0}, "more": {"alpha": 3.0}})
    tune_defaults.main(["compare", "--estimator", "ranknet", "--no-yahoo", "--sets", "small,noisy",
                        "--configs", configs, "--out", str(tmp_path)])
    cache = json.loads((tmp_path / "tune_cache.json").read_text())
    assert all(set(scores) == {"small", "noisy"} for scores in cache.values())
    text = (tmp_path / "tune_compare.md").read_text()
    # One split of "small" (two seeds on it): no standard error over splits.
    assert "small gain over the first (± se)" in text and "+0.0200 (one split: no se)" in text


def test_study_compare_model_seeds_fit_every_split_with_them_and_cache_apart(tmp_path, monkeypatch):
    # --model-seeds replaces a set's usual seeds (SEEDS: 0 and 1 on small)
    # and is cached under its own entry, so the usual figures stay valid.
    from benchmarks import tune_defaults

    seen = []

    def fake_fit_score(estimator, params, seed, train, held_out):
        seen.append(seed)
        return {"ndcg10": 0.5 + seed / 100, "fit_s": 1.0, "epochs": 3, "warnings": 0}

    monkeypatch.setattr(tune_defaults, "fit_score", fake_fit_score)
    run = ["compare", "--estimator", "ranknet", "--no-yahoo", "--sets", "small",
           "--configs", json.dumps({"base": {}}), "--out", str(tmp_path)]
    tune_defaults.main(run)
    assert seen == list(tune_defaults.SEEDS["small"])
    seen.clear()
    tune_defaults.main([*run, "--model-seeds", "3,4,5"])
    assert seen == [3, 4, 5]
    (entry,) = json.loads((tmp_path / "tune_cache.json").read_text()).values()
    assert set(entry) == {"small", "small model seeds 3,4,5"}
    assert entry["small model seeds 3,4,5"]["ndcg10"] == [0.53, 0.54, 0.55]
    seen.clear()
    tune_defaults.main([*run, "--model-seeds", "3,4,5"])
    assert seen == []  # read back from the cache
