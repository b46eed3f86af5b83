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
        for code in blocks:
            namespace = {}
            exec(compile(code, str(README), "exec"), namespace)
    search = namespace["search"]
    assert 0.0 <= search.best_score_ <= 1.0
    assert set(search.cv_results_) >= {"mean_test_ndcg@10", "mean_test_map"}
