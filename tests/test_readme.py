"""The README's code runs as written."""

import re
import warnings
from pathlib import Path

import sklearn

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README should show how to use the package"
    with sklearn.config_context(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning from short fits
        results = {}
        for code in blocks:
            namespace = {}  # each block runs on its own, as a reader would paste it
            exec(compile(code, str(README), "exec"), namespace)
            results.update(namespace)
    search = results["search"]
    assert set(search.cv_results_) >= {"mean_test_ndcg@10", "mean_test_map"}
    # Routing on: every fold scored query by query. (One fold scored as a
    # single query gives NDCG@10 below 0.6 on this data; the trained
    # ranker's mean over queries is about 0.88.)
    assert 0.75 < search.best_score_ <= 1.0
    assert all(0.0 <= value <= 1.0 for value in search.cv_results_["mean_test_map"])
    # Routing off, query ids in X: the same, through query_column.
    assert all(0.75 < score <= 1.0 for score in results["result"]["test_score"])
