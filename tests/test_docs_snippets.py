"""The user guide's self-contained code runs as written, and does what it says.

Only the sections that show runnable, self-contained code are run (from
"Routing off" to the end of ``docs/user_guide/routing.rst``; the first
example of ``dask.rst`` and of ``clicks.rst``), in order, in one namespace, as a reader following
the page would.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide"
ROUTING = GUIDE / "routing.rst"
DASK = GUIDE / "dask.rst"
CLICKS = GUIDE / "clicks.rst"


def _python_blocks(text):
    """The bodies of the ``.. code-block:: python`` directives, dedented."""
    blocks = []
    for match in re.finditer(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", text):
        lines = match.group(1).rstrip("\n").split("\n")
        blocks.append("\n".join(line[3:] for line in lines))
    return blocks


def test_routing_off_sections_run():
    text = ROUTING.read_text()
    blocks = _python_blocks(text[text.index(".. _routing_off:"):])
    assert len(blocks) >= 5
    namespace = {}
    with sklearn.config_context(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of short fits
        for code in blocks:
            exec(compile(code, str(ROUTING), "exec"), namespace)
    # cross_validate and GridSearchCV scored query by query with routing off
    # (one fold scored as one query gives NDCG@10 below 0.6 on this data).
    assert np.all(namespace["result"]["test_ndcg@10"] > 0.75)
    assert np.all(np.isfinite(namespace["result"]["test_map"]))
    assert np.isfinite(namespace["search"].cv_results_["mean_test_score"]).all()
    assert namespace["scores"].shape == (len(namespace["y"]),)
    assert 0.75 < namespace["held_out"] <= 1.0
    # The resource is epochs: every candidate saw all rows, whole queries.
    halving = namespace["halving"]
    assert halving.n_resources_[0] == 10 and halving.best_params_["max_iter"] in halving.n_resources_
    assert np.isfinite(namespace["test_scores"]).all()


def test_clicks_example_runs_and_does_what_the_page_says():
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the logger's ConvergenceWarning
        exec(compile(_python_blocks(CLICKS.read_text())[0], str(CLICKS), "exec"), namespace)
    estimate, truth = namespace["debiased"].position_propensities_, namespace["log"].propensities
    # "within 20 % of the truth at every rank" (0.2 with room for BLAS's last bits)
    np.testing.assert_allclose(estimate, truth, rtol=0.21)
    # The figures the page quotes for seed 0, to the rounding it prints them
    # with (and room for another machine's last bits).
    raw, debiased = namespace["held_out"]
    assert raw == pytest.approx(0.811, abs=0.01) and debiased == pytest.approx(0.831, abs=0.01)
    # The known propensities' block, in the same namespace.
    exec(compile(_python_blocks(CLICKS.read_text())[1], str(CLICKS), "exec"), namespace)
    np.testing.assert_array_equal(namespace["known"].position_propensities_, 1.0 / np.arange(1, 11))
    # The search with routing off learns from the click log in every fit.
    with sklearn.config_context(enable_metadata_routing=False), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(_python_blocks(CLICKS.read_text())[2], str(CLICKS), "exec"), namespace)
    search = namespace["search"]
    assert search.best_estimator_.position_propensities_.shape == (10,)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_dask_first_fit_runs():
    pytest.importorskip("distributed")
    from sklearn_ranknet import LambdaRankRanker
    from sklearn_ranknet.metrics import ndcg_score

    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(_python_blocks(DASK.read_text())[0], str(DASK), "exec"), namespace)
    local = namespace["local"]
    assert isinstance(local, LambdaRankRanker)
    scores = local.predict(namespace["X_val_np"])
    y_val, qid_val = namespace["y_val_np"], namespace["qid_val_np"]
    # The distributed score and metric equal the in-memory ones on the same scores.
    assert namespace["mean_ndcg10"] == pytest.approx(ndcg_score(y_val, scores, groups=qid_val, k=10), abs=1e-12)
    assert namespace["ndcg5"] == pytest.approx(ndcg_score(y_val, scores, groups=qid_val, k=5), abs=1e-12)
    assert namespace["mean_ndcg10"] > 0.75


def test_every_module_source_is_readable_by_sphinx():
    # viewcode's [source] links come from Sphinx's own parser of each module;
    # a module it cannot parse silently loses its links (metrics.py did, over a
    # ``{**a, **b}`` inside a decorator).
    pycode = pytest.importorskip("sphinx.pycode")
    package = Path(__file__).resolve().parents[1] / "sklearn_ranknet"
    unreadable = []
    for path in sorted(package.glob("*.py")):
        name = "sklearn_ranknet" if path.stem == "__init__" else f"sklearn_ranknet.{path.stem}"
        try:
            pycode.ModuleAnalyzer.for_module(name).find_tags()
        except pycode.PycodeError as exc:
            unreadable.append(f"{name}: {exc}")
    assert not unreadable
