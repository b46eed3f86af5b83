"""Metrics: NDCG@10 and MAP over 1,000,000 documents in 10,000 queries.

Data: query lengths of 2 plus a random composition of the rest (mean 100, roughly
exponential, as in LETOR data), labels 0..4 with probabilities 0.50 / 0.25 / 0.15 / 0.07 /
0.03, float64 uniform scores redrawn until distinct within each query even in float32
(trec_eval reads scores as C floats), int64 query ids sorted by query (``--quick``: 50,000
documents in 500 queries).

Timed, the whole call (the fastest and the median of the repeats, after a warm-up call):

- ours: ``ndcg_score(y, s, groups=qid, k=10)`` and ``map_score(y, s, groups=qid)``;
- ranx: ``evaluate(qrels, Run(run), "ndcg_burges@10")`` and ``"map"`` (exponential gain like
  ours; ``Run``, where ranx takes in and sorts the scores, inside the timer, as the other
  libraries take in their scores inside theirs; ``Qrels``, the labels, built outside it, as
  pytrec_eval's evaluator is);
- pytrec_eval: ``RelevanceEvaluator(qrel, {"ndcg_cut.10", "map"}).evaluate(run)`` plus the
  means, one call for both measures (evaluator built outside the timer);
- scikit-learn: ``sklearn.metrics.ndcg_score(y_q[None], s_q[None], k=10)`` for each query
  (NDCG only; on a random subset of queries, extrapolated, when the loop would take long).

Threads: "1" runs everything on one thread (``LOKY_MAX_CPU_COUNT=1`` caps the pool our metrics
use, ``numba.set_num_threads(1)`` for ranx, BLAS on one thread); "all" is each library's
default. pytrec_eval and the loop are serial. Agreement: our means against pytrec_eval's
(``gain="linear"``, trec_eval's NDCG) and ranx's, over the queries with a relevant document.
Target: ours (NDCG@10 + MAP) on one thread <= 0.1x pytrec_eval's time for both.
"""

import contextlib
import os
import time
import warnings

import numpy as np

from ._harness import threads

SEED, K, LABEL_PROBS, TARGET = 20240601, 10, (0.50, 0.25, 0.15, 0.07, 0.03), 0.1


def make_data(n_docs, n_queries):
    rng = np.random.default_rng(SEED)
    spare = n_docs - 2 * n_queries
    cuts = np.sort(rng.integers(0, spare + 1, size=n_queries - 1))
    sizes = 2 + np.diff(np.concatenate(([0], cuts, [spare])))
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    y = rng.choice(len(LABEL_PROBS), size=n_docs, p=LABEL_PROBS).astype(np.float64)
    s = rng.random(n_docs)
    while True:  # distinct within each query in float32
        order = np.lexsort((s.astype(np.float32), qid))
        f, q = s.astype(np.float32)[order], qid[order]
        dup = order[1:][(q[1:] == q[:-1]) & (f[1:] == f[:-1])]
        if not len(dup):
            return y, s, qid, sizes
        s[dup] = rng.random(len(dup))


def dicts(y, s, sizes):
    """ranx / pytrec_eval input: {query: {doc: label}}, {query: {doc: score}}."""
    qrel, run, start = {}, {}, 0
    labels, scores = y.astype(int).tolist(), s.tolist()
    for q, n in enumerate(sizes.tolist()):
        docs = [f"d{i}" for i in range(start, start + n)]
        qrel[f"q{q}"] = dict(zip(docs, labels[start:start + n]))
        run[f"q{q}"] = dict(zip(docs, scores[start:start + n]))
        start += n
    return qrel, run


def run(h):
    from sklearn.metrics import ndcg_score as sk_ndcg

    from sklearn_ranknet.metrics import map_score, ndcg_score

    n_docs, n_queries = (50_000, 500) if h.quick else (1_000_000, 10_000)
    y, s, qid, sizes = make_data(n_docs, n_queries)
    ranx, pytrec_eval = h.peer("ranx"), h.peer("pytrec_eval")
    qrel, run_ = dicts(y, s, sizes) if ranx or pytrec_eval else (None, None)
    calls = {"ours": (lambda: ndcg_score(y, s, groups=qid, k=K),
                      lambda: map_score(y, s, groups=qid))}
    if ranx is not None:
        def ranx_metric(metric):
            # Run() is where ranx takes in and sorts the scores, as pytrec_eval's evaluate and
            # our metrics do inside their timed calls: it is timed too. Qrels (the labels
            # alone) are built once, as pytrec_eval's evaluator is.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ranx.evaluate(qrels, ranx.Run(run_), metric, save_results_in_run=False)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            qrels = ranx.Qrels(qrel)
        calls["ranx"] = tuple((lambda m=m: ranx_metric(m)) for m in (f"ndcg_burges@{K}", "map"))
    if pytrec_eval is not None:
        evaluator = pytrec_eval.RelevanceEvaluator(qrel, {f"ndcg_cut.{K}", "map"})

        def both():
            per_query = evaluator.evaluate(run_).values()
            return [np.mean([v[m] for v in per_query]) for m in (f"ndcg_cut_{K}", "map")]
        calls["pytrec_eval"] = (None, None, both)

    rows = []
    for n_threads in (1, f"all ({os.cpu_count()})"):
        for system, funcs in calls.items():
            if n_threads != 1 and system == "pytrec_eval":
                continue
            h.say(f"{system}, {n_threads} thread(s)")
            row = {"system": system, "threads": n_threads}
            for key, func in zip(("ndcg_s", "map_s", "both_s"), funcs):
                if func is None:
                    continue
                limit = threads(1) if n_threads == 1 else contextlib.nullcontext()
                with warnings.catch_warnings(), limit:
                    warnings.simplefilter("ignore")
                    t = h.measure(func)
                row[key] = t["min_s"]
                row.setdefault("cpu_per_wall", t["cpu_per_wall"])
            row.setdefault("both_s", row.get("ndcg_s", 0) + row.get("map_s", 0))
            rows.append(row)

    # The scikit-learn loop, extrapolated from a subset of queries when slow.
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    subset = np.random.default_rng(SEED).permutation(n_queries)[:200 if h.quick else 2000]

    def loop(queries):
        return [sk_ndcg(y[None, offsets[q]:offsets[q + 1]], s[None, offsets[q]:offsets[q + 1]], k=K)
                for q in queries]
    loop(subset[:5])
    t0 = time.perf_counter()
    loop(subset)
    rows.append({"system": "sklearn loop (extrapolated)" if len(subset) < n_queries else
                 "sklearn loop", "threads": 1,
                 "ndcg_s": (time.perf_counter() - t0) * n_queries / len(subset)})

    pytrec_both = next((r["both_s"] for r in rows if r["system"] == "pytrec_eval"), None)
    for r in rows:
        r["vs_pytrec_eval"] = r.get("both_s", np.nan) / pytrec_both if pytrec_both else None
        r["Mdocs_per_s"] = n_docs / r["ndcg_s"] / 1e6 if r.get("ndcg_s") else None
    h.table(f"{n_docs:,} documents, {n_queries:,} queries: seconds (fastest of the repeats)", rows, {
        "system": "system", "threads": "threads", "NDCG@10 s": "ndcg_s", "MAP s": "map_s",
        "NDCG@10 + MAP s": "both_s", "/ pytrec_eval": "vs_pytrec_eval",
        "NDCG@10 M docs/s": "Mdocs_per_s", "CPU / wall": "cpu_per_wall"})
    ours1 = next(r for r in rows if r["system"] == "ours" and r["threads"] == 1)
    h.target("ours (NDCG@10 + MAP) / pytrec_eval, one thread", ours1["vs_pytrec_eval"], TARGET,
             unit="x", reason="pytrec_eval not installed")

    # Agreement over the queries that have a relevant document.
    keep = np.repeat(np.add.reduceat(y > 0, offsets[:-1]) > 0, sizes)
    ours = {"ndcg linear": ndcg_score(y[keep], s[keep], groups=qid[keep], k=K, gain="linear"),
            "ndcg": ndcg_score(y[keep], s[keep], groups=qid[keep], k=K),
            "map": map_score(y[keep], s[keep], groups=qid[keep])}
    names = [f"q{q}" for q in np.unique(qid[keep])]
    checks = []
    if pytrec_eval is not None:
        per_query = evaluator.evaluate({q: run_[q] for q in names})
        for ours_key, key in (("ndcg linear", f"ndcg_cut_{K}"), ("map", "map")):
            checks.append({"peer": "pytrec_eval", "metric": key, "ours": ours[ours_key],
                           "peer_value": np.mean([per_query[q][key] for q in names])})
    if ranx is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sub_qrels = ranx.Qrels({q: qrel[q] for q in names})
            sub_run = ranx.Run({q: run_[q] for q in names})
            for ours_key, key in (("ndcg", f"ndcg_burges@{K}"), ("map", "map")):
                checks.append({"peer": "ranx", "metric": key, "ours": ours[ours_key],
                               "peer_value": ranx.evaluate(sub_qrels, sub_run, key)})
    for c in checks:
        c["abs_difference"] = abs(c["ours"] - c["peer_value"])
    if checks:
        h.table("Agreement: mean over the queries with a relevant document", checks, {
            "peer": "peer", "peer's metric": "metric", "ours": "ours", "peer's value": "peer_value",
            "absolute difference": "abs_difference"})

    def draw(ax):
        ax.barh([f"{r['system']}, {r['threads']} thread(s)" + ("" if "both_s" in r else ", NDCG only")
                 for r in rows], [r.get("both_s", r.get("ndcg_s")) for r in rows])
        ax.set(xscale="log", xlabel=f"seconds for NDCG@{K} + MAP over {n_docs:,} documents")
    h.plot(draw, size=(8, 4))
