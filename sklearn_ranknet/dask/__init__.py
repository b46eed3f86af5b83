"""Scale-out on Dask: rankers trained on a cluster, and distributed metrics.

The rankers :class:`DaskLambdaRankRanker`, :class:`DaskRankNetRanker` and
:class:`DaskListNetRanker` take dask arrays or dask DataFrame / Series (with
matching partitions) and train where the data lives; the metrics
:func:`ndcg_score` and :func:`map_score` score dask collections. Everything
here is built from the in-memory rankers and metrics, which stay the unit of
work on each partition. Needs the dask extra (``pip install ".[dask]"`` from the repository's
folder); ``import sklearn_ranknet`` never imports Dask.

Notes
-----
How a fit runs:

1. **Co-location.** The rows, labels, query ids and weights are zipped
   partition by partition into one dask DataFrame and shuffled on the query
   id (``DataFrame.shuffle(on=...)``), so that every partition holds whole
   queries: no query is ever trained or scored as two. The shuffle moves the
   data once, across the network: with ``partitioned_by_query=True`` it is
   skipped, and the promise is checked (each partition's query ids are
   gathered, and an id found in two partitions is an error).
2. **Shards.** Each partition becomes a shard on its worker: its queries
   arranged as the in-memory ranker arranges its training set. The client
   gathers per-query numbers only (ids, sizes, weights) and the features'
   count, mean and sum of squared deviations, merged into the global input
   scaling with Chan et al.'s formula; it draws the validation queries and
   the loss sample as the in-memory ranker does (the same queries for the
   same ``random_state``).
3. **Rounds.** Local SGD with parameter averaging: each round, every shard
   runs one epoch over its own training queries from the current averaged
   parameters with its own optimizer state, and the client averages the
   parameters weighted by each shard's total query weight. The same round
   evaluates the previous epoch's parameters on the shards (loss and
   held-out NDCG@10, per query), so an epoch costs one round trip; early
   stopping decides as in memory.

The training state (parameters, each shard's optimizer state, the random
state, the early-stopping record) lives on the client and travels with each
round's tasks, which are pure functions of their inputs: a worker that dies
costs a recomputed partition (from its lineage) and a retried task, and the
fit ends with the same model. Work the cluster cannot recover (a worker that
dies again and again) is a :class:`RuntimeError` saying so.

Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> from distributed import Client, LocalCluster
>>> from sklearn_ranknet import dask as skd
>>> from sklearn_ranknet.metrics import ndcg_score
>>> from sklearn_ranknet.datasets import make_ranking
>>> X, y, qid = make_ranking(n_queries=40, random_state=0)
>>> scores = X[:, 0]
>>> chunks = 200  # chunks that cut through queries
>>> dy, ds, dq = (da.from_array(a, chunks=chunks) for a in (y, scores, qid))
>>> with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster, \\
...         Client(cluster):
...     value = skd.ndcg_score(dy, ds, groups=dq, k=10)
>>> bool(abs(value - ndcg_score(y, scores, groups=qid, k=10)) < 1e-12)
True
"""

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import dask.dataframe  # noqa: F401
    import distributed  # noqa: F401
    import pandas  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "sklearn_ranknet.dask needs Dask (dask[distributed,dataframe]) and pandas, "
        f"which are not installed ({exc}). Install the extra: "
        "pip install \"dask[distributed,dataframe]\" pandas"
    ) from exc

from ._metrics import map_score, ndcg_score
from ._rankers import DaskLambdaRankRanker, DaskListNetRanker, DaskRankNetRanker

__all__ = [
    "DaskLambdaRankRanker",
    "DaskRankNetRanker",
    "DaskListNetRanker",
    "ndcg_score",
    "map_score",
]
