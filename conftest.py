"""pytest's view of the repository: doctests of optional modules run only
when their extra is installed (``pip install ".[onnx]"``,
``".[dask]"``)."""

import importlib.util

collect_ignore = []
if any(importlib.util.find_spec(name) is None for name in ("skl2onnx", "onnxruntime")):
    collect_ignore.append("sklearn_ranknet/onnx.py")
if any(importlib.util.find_spec(name) is None for name in ("dask", "distributed", "pandas")):
    collect_ignore.append("sklearn_ranknet/dask")
