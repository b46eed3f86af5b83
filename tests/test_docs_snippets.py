"""The user guide's routing-off code runs as written, and does what it says.

Only the sections that show runnable, self-contained code (from "Routing
off" to the end of ``docs/user_guide/routing.rst``) are run, in order, in
one namespace, as a reader following the page would.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import sklearn

ROUTING = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "routing.rst"


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
