"""``python -m benchmarks --quick`` runs every suite end to end (a smoke test; the figures
come from the full run, see docs/benchmarks.md), and the harness skips missing peers."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks._harness import Harness

ROOT = Path(__file__).resolve().parents[1]
YAHOO = ROOT.parent / "shared" / "data" / "yahoo-ltr-sample"


def test_quick_benchmarks_run_and_write_their_results(tmp_path):
    suites = ["lambdas", "metrics", "scale", "coldstart", "inputs"] + (["quality"] if YAHOO.is_dir() else [])
    suites += ["dask"] if importlib.util.find_spec("distributed") else []
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path), "--only", *suites],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for suite in suites:
        result = json.loads((tmp_path / f"{suite}.json").read_text())
        assert result["suite"] == suite and result["quick"] and result["tables"], suite
        assert result["targets"] and all("line" in t for t in result["targets"]), suite
        assert result["record"]["cpu_model"] and result["record"]["versions"], suite
        text = (tmp_path / f"{suite}.md").read_text()
        assert "## Targets" in text and "## Method" in text, suite


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
    from benchmarks.tune_defaults import _objective_variant
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
    from benchmarks.tune_defaults import _objective_variant
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
    assert "small gain over the first (± se)" in text and "+0.0200 ± 0.0000" in text


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
