"""Input forms: default fits on the CSR that ``load_letor`` returns against the same rows dense.

``load_letor`` returns CSR, and LETOR files store most of their entries (the Yahoo sample: 32 %
of its 300 columns; MQ2007/MQ2008-style files: nearly all). CSR with at least
``DENSE_BLOCKS_FROM`` (10 %) of its entries stored is read as dense blocks (each minibatch
densified after its rows are gathered, the dense code from there); sparser CSR stays sparse,
its first layer folded (``sklearn_ranknet/_inputs.py``).

1. The three rankers with their defaults (``random_state=0``, ``n_jobs=1``) fitted on the
   Yahoo sample's ``rank.train`` (``load_letor(path, n_features=300)``) as CSR, as the same
   rows dense, and dense in Fortran order (a DataFrame's values when read from a file; each
   minibatch's rows are copied into C order before the fused gather-encode kernel,
   ``InputScaling.rows``), and ``LGBMRanker()`` on the CSR beside them; fastest of 2 fits after a small warm-up fit (``--quick``: one fit of each on
   40 queries). Skipped with a note when ``../shared`` is absent.
2. Where the threshold sits: ``LambdaRankRanker(max_iter=20, tol=0)`` on ``make_ranking(200,
   n_features=46)`` with a share of the entries set to 0 (2 % to 100 % stored), given as CSR
   and made to take each path (``DENSE_BLOCKS_FROM`` moved for the run), fastest of 2
   (``--quick``: 30 queries, 3 epochs, one fit).

Both paths train the same model (the dense-blocks path gives the dense model's very bits; the
folded path differs by rounding: ``tests/test_inputs.py``), so only the seconds differ.
"""

import numpy as np

from . import bench_quality

RANKERS = ("LambdaRankRanker", "RankNetRanker", "ListNetRanker")
DENSITIES = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def _fastest(h, fit, repeats):
    import time

    best = np.inf
    for _ in range(repeats):
        started = time.perf_counter()
        model = fit()
        best = min(best, time.perf_counter() - started)
    return best, model


def run(h):
    import warnings

    import scipy.sparse as sp

    import sklearn_ranknet
    from sklearn_ranknet import _inputs
    from sklearn_ranknet.datasets import load_letor, make_ranking

    warnings.simplefilter("ignore")  # the quick run's short fits do not converge
    repeats = 1 if h.quick else 2
    rows = []
    path = bench_quality.DATA / "rank.train"
    if not path.exists():
        h.note(f"The Yahoo sample is absent ({path}): part 1 is skipped.")
        h.say("the Yahoo sample is absent: part 1 skipped")
    else:
        X, y, q = load_letor(path, n_features=300)
        if h.quick:
            keep = np.isin(q, np.unique(q)[:40])
            X, y, q = X[keep], y[keep], q[keep]
        stored = X.nnz / (X.shape[0] * X.shape[1])
        h.say(f"Yahoo rank.train: {X.shape[0]} rows x {X.shape[1]} columns, {stored:.1%} stored")
        dense = X.toarray()
        fortran = np.asfortranarray(dense)  # as a DataFrame read from a file gives its values
        for name in RANKERS:
            Ranker = getattr(sklearn_ranknet, name)
            Ranker(max_iter=2).fit(X[:200], y[:200], groups=q[:200])  # compile both paths first
            Ranker(max_iter=2).fit(dense[:200], y[:200], groups=q[:200])
            params = dict(random_state=0, n_jobs=1, **({"max_iter": 5} if h.quick else {}))
            csr_s, model = _fastest(h, lambda: Ranker(**params).fit(X, y, groups=q), repeats)
            dense_s, _ = _fastest(h, lambda: Ranker(**params).fit(dense, y, groups=q), repeats)
            fortran_s, _ = _fastest(h, lambda: Ranker(**params).fit(fortran, y, groups=q), repeats)
            rows.append({"model": f"{name}()", "csr_s": csr_s, "dense_s": dense_s, "fortran_s": fortran_s,
                         "ratio": csr_s / dense_s, "fortran_ratio": fortran_s / dense_s, "epochs": model.n_iter_})
            h.say(f"{name}: CSR {csr_s:.2f} s, dense {dense_s:.2f} s, Fortran-ordered {fortran_s:.2f} s")
        lgb = h.peer("lightgbm")
        if lgb is not None:
            sizes = np.unique(q, return_counts=True)[1]  # rank.train lists each query's rows together
            lgbm_s, _ = _fastest(h, lambda: lgb.LGBMRanker(n_jobs=1, verbose=-1).fit(X, y, group=sizes), repeats)
            rows.append({"model": "LGBMRanker() (for scale)", "csr_s": lgbm_s})
        h.table(f"Yahoo rank.train ({X.shape[0]:,} rows, {stored:.0%} of the entries stored): "
                f"fit seconds, fastest of {repeats}", rows, {
                    "model": "model", "CSR s": "csr_s", "dense s": "dense_s", "CSR / dense": "ratio",
                    "Fortran-ordered s": "fortran_s", "Fortran / dense": "fortran_ratio", "epochs": "epochs"})

    n_queries, epochs = (30, 3) if h.quick else (200, 20)
    X, y, q = make_ranking(n_queries, n_features=46, n_informative=10, random_state=0)
    zeros = np.random.default_rng(0).random(X.shape)
    sweep = []
    original = _inputs.DENSE_BLOCKS_FROM
    try:
        for density in DENSITIES:
            csr = sp.csr_matrix(np.where(zeros < density, X, 0.0))
            row = {"stored": csr.nnz / (X.shape[0] * X.shape[1])}
            for path, threshold in (("folded", 2.0), ("dense_blocks", 0.0)):
                _inputs.DENSE_BLOCKS_FROM = threshold

                def fit():
                    return sklearn_ranknet.LambdaRankRanker(max_iter=epochs, tol=0, random_state=0, n_jobs=1).fit(
                        csr, y, groups=q)
                fit()  # warm-up: compiles this path
                row[path], _ = _fastest(h, fit, repeats)
            row["taken"] = "dense blocks" if row["stored"] >= original else "folded"
            sweep.append(row)
            h.say(f"{row['stored']:.0%} stored: folded {row['folded']:.2f} s, "
                  f"dense blocks {row['dense_blocks']:.2f} s")
    finally:
        _inputs.DENSE_BLOCKS_FROM = original
    h.table(f"LambdaRankRanker(max_iter={epochs}) on make_ranking({n_queries}, n_features=46) as CSR, "
            f"{X.shape[0]:,} rows: seconds of each path, fastest of {repeats}", sweep, {
                "entries stored": lambda r: f"{r['stored']:.0%}", "folded s": "folded",
                "dense blocks s": "dense_blocks", "folded / dense blocks": lambda r: r["folded"] / r["dense_blocks"],
                "path taken": "taken"})
    if rows:
        worst = max(r["ratio"] for r in rows if "ratio" in r)
        h.target("Yahoo rank.train: default fit on load_letor's CSR / on the same rows dense, worst ranker",
                 worst, 1.5)

    def draw(ax):
        stored = [r["stored"] for r in sweep]
        ax.plot(stored, [r["folded"] for r in sweep], "o-", label="CSR kept sparse (folded)")
        ax.plot(stored, [r["dense_blocks"] for r in sweep], "s-", label="CSR read as dense blocks")
        ax.axvline(original, color="grey", ls=":", label="DENSE_BLOCKS_FROM")
        ax.set(xscale="log", xlabel="share of entries stored", ylabel="fit seconds")
        ax.legend(fontsize=7)
    h.plot(draw, size=(6, 3.5))
