"""Dask defaults at any partitioning: ``DaskLambdaRankRanker()`` against ``LambdaRankRanker()``.

``python -m benchmarks --only dask_defaults`` (``--quick``: ``make_ranking(150)`` in 2 partitions).

Issue 54's D3: with defaults, the Dask rankers should reach the in-memory ranker's held-out
NDCG@10 within 0.005 at any partitioning. One machine: ``LocalCluster(n_workers=2,
threads_per_worker=1, processes=True)``, warmed up by a small fit of each kind. Every fit uses
``random_state=0`` and the defaults; the Dask ones take dask arrays cut into 2, 4 and 8 chunks of
equal size (which cut through queries). With ``single_worker="auto"`` a Dask fit whose features
take at most an eighth of the smallest worker's memory limit gathers the rows on one worker and
fits the in-memory ranker there; larger data trains data-parallel (local SGD with parameter
averaging, see the ``dask`` suite). Per fit: the path taken (``single_worker_``), wall time of
``fit``, epochs, and held-out NDCG@10 (the ranker's ``score``: mean NDCG@10 by query). On the
Yahoo sample and ``make_ranking(2000)`` the same fits with ``single_worker=False`` show what
the data-parallel path gives on small data (the measurement behind "auto").

Data:

- the Yahoo! LTR sample beside the checkout (``rank.train`` / ``rank.test``, 300 features, dense);
  skipped without it;
- ``make_ranking(2000)`` and ``make_ranking(20000)`` with its defaults (20 features; about
  35,000 and 354,000 rows; test: ``make_ranking(1000, random_state=1)``).

All three fit one worker of a 24 GB machine, so "auto" gathers them all; the data-parallel path is
measured in the ``dask`` suite (``single_worker=False``).

Target: in-memory minus Dask NDCG@10 at most 0.005 for every default fit.
"""

import logging

from .bench_dask import dask_arrays, timed_fit
from .bench_quality import DATA, load_data

TOLERANCE = 0.005
PARTITIONS, QUICK_PARTITIONS = (2, 4, 8), (2,)


def _sets(quick):
    from sklearn_ranknet.datasets import make_ranking

    if quick:
        yield ("make_ranking(150)", make_ranking(150, random_state=0), make_ranking(100, random_state=1),
               QUICK_PARTITIONS, True)
        return
    if DATA.is_dir():
        yahoo = load_data()
        yield "Yahoo sample", yahoo["train"], yahoo["test"], PARTITIONS, True
    test = make_ranking(1000, random_state=1)
    yield "make_ranking(2000)", make_ranking(2000, random_state=0), test, PARTITIONS, True
    yield "make_ranking(20000)", make_ranking(20000, random_state=0), test, PARTITIONS, False


def run(h):
    from distributed import Client, LocalCluster

    from sklearn_ranknet import LambdaRankRanker
    from sklearn_ranknet.dask import DaskLambdaRankRanker
    from sklearn_ranknet.datasets import make_ranking

    if not h.quick and not DATA.is_dir():
        h.note(f"The Yahoo! LTR sample is not at {DATA}: its rows are skipped.")
        h.skipped.append("Yahoo! LTR sample not found")
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    rows = []
    try:
        h.say("warm-up fits on the cluster (gathered and data-parallel) and in memory")
        X, y, qid = make_ranking(60, n_features=20, random_state=0)
        dX, dy, dq = dask_arrays(X, y, qid, 400)
        for single_worker in (True, False):
            timed_fit(DaskLambdaRankRanker(max_iter=2, single_worker=single_worker), dX, dy, groups=dq)
        timed_fit(LambdaRankRanker(max_iter=2), X, y, groups=qid)
        for name, (X, y, qid), test, partitions, data_parallel_too in _sets(h.quick):
            h.say(f"{name}: {len(X):,} rows, in memory")
            ranker = LambdaRankRanker(random_state=0)
            wall = timed_fit(ranker, X, y, groups=qid)
            base = ranker.score(*test)
            rows.append({"data": name, "fit": "in memory", "path": "-", "wall_s": wall,
                         "epochs": ranker.n_iter_, "ndcg10": base, "gap": None})
            choices = ("auto", False) if data_parallel_too else ("auto",)
            for single_worker in choices:
                for n in partitions:
                    h.say(f"{name}: Dask, {n} chunks, single_worker={single_worker!r}")
                    dX, dy, dq = dask_arrays(X, y, qid, -(-len(X) // n))
                    ranker = DaskLambdaRankRanker(random_state=0, single_worker=single_worker)
                    wall = timed_fit(ranker, dX, dy, groups=dq)
                    score = ranker.to_local().score(*test)
                    rows.append({
                        "data": name, "fit": f"Dask, {n} chunks, single_worker={single_worker!r}", "wall_s": wall,
                        "epochs": ranker.n_iter_, "path": "one worker" if ranker.single_worker_ else "data-parallel",
                        "ndcg10": score, "gap": base - score, "default": single_worker == "auto",
                    })
    finally:
        client.close()
        cluster.close()

    h.table("Default fits: in memory and on a 2-worker LocalCluster", rows, {
        "data": "data", "fit": "fit", "path": "path", "wall s": "wall_s", "epochs": "epochs",
        "test NDCG@10": "ndcg10", "in memory minus Dask": "gap"})
    for r in rows:
        if r.get("default"):
            h.target(f"in-memory minus Dask NDCG@10, {r['data']}, {r['fit']} ({r['path']})", r["gap"], TOLERANCE)
