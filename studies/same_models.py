"""Fit a fixed set of models and save what they predict, to show that a
refactor changes no model (issue 51, deliverable 7).

    python studies/same_models.py save before.npz      # on the old code
    python studies/same_models.py save after.npz       # on the new code
    python studies/same_models.py compare before.npz after.npz
    python studies/same_models.py save part.npz ranknet,bagging   # cases by name

Run the old code from a worktree: ``git worktree add /tmp/old <commit>`` and
``PYTHONPATH=/tmp/old python studies/same_models.py save before.npz``.
Each case saves the scores of a fixed test set and the fit's curves
(``loss_curve_``, ``n_iter_``); ``compare`` prints the largest difference of
each, relative to the scores' spread. BLAS is held at one thread, so the two
runs round alike on one machine.
"""

import sys
import warnings

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits


def cases():
    from sklearn_ranknet import BaggingRanker, LambdaRankRanker, ListNetRanker, RankNetRanker
    from sklearn_ranknet.datasets import make_ranking

    X, y, g = make_ranking(60, n_features=12, random_state=0)
    Xt, _, _ = make_ranking(20, n_features=12, random_state=1)
    Xl, yl, gl = make_ranking(500, n_features=8, n_informative=5, max_docs=40, random_state=2)  # > 10,000 rows
    Xlt = Xl[:500]
    sw = np.repeat(np.linspace(0.5, 2.0, len(np.unique(g))), np.bincount(np.unique(g, return_inverse=True)[1]))
    # Min-max scaled within each query, as LETOR 4.0 ships its features.
    Xq = X.copy()
    for q in np.unique(g):
        rows = g == q
        lo, hi = Xq[rows].min(0), Xq[rows].max(0)
        Xq[rows] = (Xq[rows] - lo) / np.where(hi > lo, hi - lo, 1)
    Xs = X.copy()
    Xs[np.abs(Xs) < 1.0] = 0.0  # CSR with about two thirds zeros
    Xc = np.column_stack([g, X])
    seed = dict(random_state=0)

    def fit(model, Xf=X, yf=y, gf=g, test=Xt, **kw):
        return model.fit(Xf, yf, gf, **kw), test

    yield "lambdarank_default", lambda: fit(LambdaRankRanker(**seed))
    yield "lambdarank_k_map", lambda: fit(LambdaRankRanker(k=5, metric="map", **seed))
    yield "lambdarank_loss2pp_linear", lambda: fit(LambdaRankRanker(pair_weighting="ndcg_loss2++", gain="linear", k=3, **seed))
    yield "lambdarank_csr", lambda: fit(LambdaRankRanker(**seed), Xf=sp.csr_matrix(Xs), test=sp.csr_matrix(Xt))
    yield "lambdarank_float32", lambda: fit(LambdaRankRanker(**seed), Xf=X.astype(np.float32), test=Xt.astype(np.float32))
    yield "lambdarank_query_column", lambda: fit(LambdaRankRanker(query_column=0, **seed), Xf=Xc, gf=None, test=np.column_stack([np.zeros(len(Xt)), Xt]))
    yield "lambdarank_query_scaled", lambda: fit(LambdaRankRanker(**seed), Xf=Xq)
    yield "lambdarank_sample_weight", lambda: fit(LambdaRankRanker(**seed), sample_weight=sw)
    yield "lambdarank_large_early_stopping", lambda: fit(LambdaRankRanker(**seed), Xf=Xl, yf=yl, gf=gl, test=Xlt)
    yield "lambdarank_sgd_dropout_standard", lambda: fit(LambdaRankRanker(solver="sgd", dropout=0.2, feature_scaling="standard", max_iter=30, **seed))
    yield "lambdarank_noise_log1p_n_jobs2", lambda: fit(LambdaRankRanker(input_noise=0.5, feature_scaling="log1p", n_jobs=2, max_iter=30, **seed))
    yield "ranknet_default", lambda: fit(RankNetRanker(**seed))
    yield "ranknet_lbfgs", lambda: fit(RankNetRanker(solver="lbfgs", max_iter=50, **seed))
    yield "ranknet_soft_csr", lambda: fit(RankNetRanker(pair_targets="soft", **seed), Xf=sp.csr_matrix(Xs), test=sp.csr_matrix(Xt))
    yield "ranknet_linear_none", lambda: fit(RankNetRanker(hidden_layer_sizes=(), feature_scaling=None, **seed))
    yield "listnet_default", lambda: fit(ListNetRanker(**seed))
    yield "listnet_float32_large", lambda: fit(ListNetRanker(**seed), Xf=Xl.astype(np.float32), yf=yl, gf=gl, test=Xlt.astype(np.float32))
    yield "bagging_default", lambda: fit(BaggingRanker(LambdaRankRanker(max_iter=20), n_estimators=3, **seed))
    yield "bagging_bootstrap_ranknet", lambda: fit(BaggingRanker(RankNetRanker(max_iter=20), n_estimators=3, bootstrap=True, **seed))

    def partial():
        model = LambdaRankRanker(**seed)
        queries = np.unique(g)
        for part in np.array_split(queries, 3):
            rows = np.isin(g, part)
            model.partial_fit(X[rows], y[rows], g[rows])
        return model, Xt

    def warm():
        model = RankNetRanker(warm_start=True, max_iter=10, **seed)
        model.fit(X, y, g)
        model.set_params(max_iter=15, learning_rate_init=1e-3)
        return model.fit(X, y, g), Xt

    def fit_then_partial():
        model = ListNetRanker(**seed).fit(X, y, g)
        return model.partial_fit(X, y, g), Xt

    yield "lambdarank_partial_fit", partial
    yield "ranknet_warm_start", warm
    yield "listnet_fit_then_partial_fit", fit_then_partial

    def dask_fit(cls_name, **params):
        def run():
            import dask.array as da
            from distributed import Client, LocalCluster

            from sklearn_ranknet import dask as rdask

            with LocalCluster(n_workers=2, threads_per_worker=1, processes=False) as cluster, Client(cluster):
                order = np.argsort(g, kind="stable")
                Xd = da.from_array(X[order], chunks=(len(X) // 2 + 1, -1))
                yd = da.from_array(y[order], chunks=(len(X) // 2 + 1,))
                gd = da.from_array(g[order], chunks=(len(X) // 2 + 1,))
                model = getattr(rdask, cls_name)(**params, **seed).fit(Xd, yd, gd)
                return model.to_local(), Xt
        return run

    yield "dask_lambdarank", dask_fit("DaskLambdaRankRanker", max_iter=10)
    yield "dask_ranknet", dask_fit("DaskRankNetRanker", max_iter=10)


def save(path, only=None):
    results = {}
    with threadpool_limits(1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, run in cases():
            if only and not any(word in name for word in only.split(",")):
                continue
            model, test = run()
            results[f"{name}/scores"] = model.predict(test)
            if hasattr(model, "loss_curve_"):
                results[f"{name}/loss_curve"] = np.asarray(model.loss_curve_, dtype=np.float64)
                results[f"{name}/n_iter"] = np.asarray(model.n_iter_)
            print(f"{name:40s} {results[f'{name}/scores'][:3]}", flush=True)
    np.savez(path, **results)


def compare(before, after):
    a, b = np.load(before), np.load(after)
    worst = 0.0
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key:50s} only in {'after' if key in b else 'before'}")
            worst = np.inf
            continue
        x, z = a[key].astype(np.float64), b[key].astype(np.float64)
        if x.shape != z.shape:
            print(f"{key:50s} shapes {x.shape} -> {z.shape}")
            worst = np.inf
            continue
        spread = float(np.ptp(x)) if x.size > 1 else 1.0
        diff = float(np.max(np.abs(x - z))) / (spread or 1.0) if x.size else 0.0
        worst = max(worst, diff)
        print(f"{key:50s} max |diff| / spread = {diff:.3g}{'  identical' if np.array_equal(x, z) else ''}")
    print(f"worst: {worst:.3g}")


if __name__ == "__main__":
    if sys.argv[1] == "save":
        save(sys.argv[2], *sys.argv[3:4])
    else:
        compare(sys.argv[2], sys.argv[3])
