"""
Export a ranker to ONNX
=======================

A fitted ranker scores each document on its own (``predict`` needs no query
ids), so serving it means running a small function of one feature vector.
ONNX is a portable format for such functions: once exported, the model runs
without Python, scikit-learn or this package, in onnxruntime (from C, C++,
C#, Java, JavaScript, Python, ...) or in any other engine that runs ONNX
models. Vespa and OpenSearch, for instance, can run ONNX models; see their
documentation for how a model is deployed there, the input layout they
expect and the ONNX opsets they support.

The export goes through `skl2onnx <https://onnx.ai/sklearn-onnx/>`_
(``pip install ".[onnx]"`` from the repository's folder). Importing :mod:`sklearn_ranknet.onnx`
registers the rankers' converters, after which skl2onnx's ``to_onnx``
converts a ranker, a :class:`~sklearn_ranknet.BaggingRanker`, or a Pipeline
that ends in one.

The exported graph takes a float32 matrix of shape ``(N, n_features)`` and
returns one float32 tensor named ``"variable"`` of shape ``(N, 1)``, as
skl2onnx exports scikit-learn's regressors. The ranker's input scaling
(``feature_scaling``) is part of the graph: the raw features go in.
"""

# %%
# Fit a ranker
# ------------
# Two samples of the same synthetic problem: one to train on, one to check
# the exported model with.
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import onnxruntime as ort
from skl2onnx import to_onnx
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sklearn_ranknet.onnx  # noqa: F401  (registers the converters)
from sklearn_ranknet import LambdaRankRanker
from sklearn_ranknet.datasets import make_ranking
from sklearn_ranknet.metrics import ndcg_score

X_train, y_train, qid_train = make_ranking(n_queries=200, random_state=0)
X_test, y_test, qid_test = make_ranking(n_queries=100, random_state=1)

ranker = LambdaRankRanker(hidden_layer_sizes=(32,), random_state=0)
ranker.fit(X_train, y_train, groups=qid_train)

# %%
# Export and run it
# -----------------
# ``to_onnx`` takes the model and one row of the input it will get, here
# float32. The model is written to a file, as it would be shipped, and read
# back by onnxruntime (in a temporary directory, so that this example leaves
# nothing behind).
onx = to_onnx(ranker, X_train[:1].astype(np.float32))

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "ranker.onnx"
    path.write_bytes(onx.SerializeToString())
    print(f"{path.name}: {path.stat().st_size / 1024:.1f} KiB")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])

print("inputs: ", [(i.name, i.shape, i.type) for i in session.get_inputs()])
print("outputs:", [(o.name, o.shape, o.type) for o in session.get_outputs()])

X32 = X_test.astype(np.float32)
onnx_scores = session.run(None, {"X": X32})[0].ravel()
scores = ranker.predict(X32)

# %%
# The two sets of scores agree to float32 rounding. A difference relative to
# each score can look large where a score is close to zero, so it is given
# relative to the largest score; the rankings, and so NDCG, are the same.
difference = np.abs(onnx_scores - scores)
print(f"largest difference / largest score: {difference.max() / np.abs(scores).max():.1e}")
print(f"NDCG@10 with predict: {ndcg_score(y_test, scores, groups=qid_test, k=10):.4f}")
print(f"NDCG@10 with ONNX:    {ndcg_score(y_test, onnx_scores, groups=qid_test, k=10):.4f}")

# %%
# A Pipeline
# ----------
# A Pipeline that ends in a ranker exports the same way; skl2onnx converts
# the other steps itself (here a StandardScaler, which the ranker does not
# need, since it scales its inputs itself, but which shows the mechanism).
pipe = make_pipeline(StandardScaler(), LambdaRankRanker(hidden_layer_sizes=(32,), random_state=0))
pipe.fit(X_train, y_train, lambdarankranker__groups=qid_train)

pipe_session = ort.InferenceSession(
    to_onnx(pipe, X_train[:1].astype(np.float32)).SerializeToString(),
    providers=["CPUExecutionProvider"],
)
pipe_onnx_scores = pipe_session.run(None, {"X": X32})[0].ravel()
pipe_scores = pipe.predict(X32)
pipe_difference = np.abs(pipe_onnx_scores - pipe_scores).max() / np.abs(pipe_scores).max()
print(f"Pipeline: largest difference / largest score: {pipe_difference:.1e}")

# %%
# Scores side by side
# -------------------
fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(scores, onnx_scores, s=6, alpha=0.5, label="LambdaRankRanker")
ax.scatter(pipe_scores, pipe_onnx_scores, s=6, alpha=0.5, label="Pipeline")
low = min(scores.min(), pipe_scores.min())
high = max(scores.max(), pipe_scores.max())
ax.plot([low, high], [low, high], color="grey", linewidth=0.8)
ax.set_xlabel("predict(X)")
ax.set_ylabel("onnxruntime")
ax.set_title("Scores of the test documents")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# What to know before serving
# ---------------------------
# * Feed the raw features, in the training column order: the input scaling
#   is inside the graph. A float64 input (``to_onnx(model, X[:1])`` with
#   float64 ``X``) gives a float64 graph instead.
# * Scores only order the documents of one query: the service sorts each
#   query's documents by them.
# * A ranker that reads its query ids from a column of ``X``
#   (``query_column=<position>``) exports too: the graph takes that column,
#   like ``predict``, and ignores its values. A ``query_column`` given by
#   name (a DataFrame column) is refused: use its position.
