"""Training objectives: per-fit caches around the lambda kernels.

Each objective is built once per fit from the training labels, arranged
query by query with labels in descending order inside each query (see
:func:`label_sorted_order`). Everything that does not change while training
is computed here once: ideal DCG@k, AP normalizers, gains. Then
``gradient`` serves any minibatch of whole queries.
"""

import numpy as np

from ._kernels import listwise, metrics, pair_lambdas
from ._groups import query_of_row
from ._jit import as_kernel_array, over_queries


def pair_work(offsets, k=None):
    """Pairs the lambda kernels visit in each query (at most), shape
    (n_queries,): for choosing threads, balancing chunks and budgets."""
    sizes = np.diff(offsets)
    return sizes * (sizes if k is None else np.minimum(sizes, k)) // 2


def _run(kernel, inputs, outputs, offsets, n_threads, k=None):
    """One lambda kernel over a minibatch; returns ``outputs``."""
    work = pair_work(offsets, k)
    over_queries(kernel, (*inputs, *outputs), offsets, n_threads, int(work.sum()), work)
    return outputs


def label_sorted_order(labels, offsets):
    """Permutation that sorts the rows of each query by descending label.

    Stable, so rows with equal labels keep their order. RankNet's kernel
    relies on this layout; LambdaRank does not mind it.
    """
    return np.lexsort((-labels, query_of_row(offsets)))


class RankNetObjective:
    """Mean pairwise cross-entropy over each query's label-differing pairs.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        Arranged query by query, descending inside each query.
    offsets : ndarray of shape (n_queries + 1,)
    sigma : float
        Steepness of the pair sigmoid.
    soft_targets : bool, default=False
        Target probability sigmoid(y_i - y_j) for each pair instead of 1.
    """

    def __init__(self, labels, offsets, *, sigma, soft_targets=False):
        self.labels = labels
        self.sigma = float(sigma)
        # A kernel of its own: hard-target fits never compile it.
        self.kernel = pair_lambdas.ranknet_soft_chunk if soft_targets else pair_lambdas.ranknet_chunk

    @staticmethod
    def query_work(offsets):
        """Inner-loop steps of each query (at most): its pairs."""
        return pair_work(offsets)

    def gradient(self, scores, rows, queries, offsets, *, with_cost=False, n_threads=1):
        """dC/ds of a minibatch and the cost of each of its queries.

        Parameters
        ----------
        scores : ndarray of shape (len(rows),)
            Model scores of the batch rows.
        rows : ndarray of int
            Arranged-row indices of the batch, query by query.
        queries : ndarray of int
            The batch's query positions (unused by RankNet).
        offsets : ndarray of shape (len(queries) + 1,)
            Query segments within the batch.
        with_cost : bool, default=False
        n_threads : int, default=1
            Threads the kernel may use (from :func:`._jit.effective_n_jobs`);
            small batches run on the calling thread anyway. The result is
            the same for any number.

        Returns
        -------
        grad : ndarray of shape (len(rows),)
        cost : ndarray of shape (len(queries),)
        """
        outputs = np.empty(len(scores)), np.zeros(len(offsets) - 1)
        inputs = (scores, self.labels[rows], offsets, self.sigma, with_cost)
        return _run(self.kernel, inputs, outputs, offsets, n_threads)


class LambdaRankObjective:
    """RankNet's pair cross-entropy weighted by |delta NDCG@k| or |delta AP@k|,
    or by LambdaLoss's NDCG weights.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        Arranged query by query, descending inside each query (see
        :func:`label_sorted_order`): the ideal ranking is then the layout
        itself.
    offsets : ndarray of shape (n_queries + 1,)
    sigma : float
    metric : {"ndcg", "map"}
    k : int or None
        Truncation; ``None`` uses the longest query, i.e. every pair.
    gain : {"exponential", "linear"}
        NDCG gain (ignored for "map").
    pair_weighting : {"lambdarank", "ndcg_loss2", "ndcg_loss2++"}, default="lambdarank"
        |delta metric| weights, or one of LambdaLoss's (``metric="ndcg"``
        only); see :data:`._kernels.pair_lambdas.LAMBDARANK`.
    normalize : bool, default=False
        Scale each query's lambdas, at every step, by ``log2(1 + G) / G``,
        G their summed magnitude under the current scores (LightGBM's
        ``lambdarank_norm`` in spirit, which sums G over the pairs): a query
        with many mis-ordered pairs is damped, one nearly ranked right is
        boosted up to 1 / ln 2 times. The costs are unchanged.
    """

    def __init__(
        self, labels, offsets, *, sigma, metric, k, gain, pair_weighting="lambdarank", normalize=False
    ):
        if pair_weighting not in pair_lambdas.PAIR_WEIGHTINGS:
            raise ValueError(
                f"pair_weighting must be one of {sorted(pair_lambdas.PAIR_WEIGHTINGS)}; got {pair_weighting!r}."
            )
        if pair_weighting != "lambdarank" and metric != "ndcg":
            raise ValueError(
                f"pair_weighting={pair_weighting!r} is one of LambdaLoss's NDCG weightings and "
                f"needs metric='ndcg'; got metric={metric!r}. Use pair_weighting='lambdarank' "
                "to weight pairs by |delta AP|."
            )
        self.sigma = float(sigma)
        self.normalize = bool(normalize)
        self.use_ap = metric == "map"
        self.weighting = pair_lambdas.PAIR_WEIGHTINGS[pair_weighting]
        longest = max(int(np.diff(offsets).max(initial=1)), 1)
        # k beyond the longest query changes nothing; capped so that any
        # int the parameter allows fits the kernels' int64.
        self.k = longest if k is None else min(int(k), longest)
        discounts = metrics.discount_table(longest)
        discounts[self.k :] = 0.0
        self.discounts = discounts
        # Not cut at k: only the gains' normaliser (ideal DCG@k) is.
        self.by_distance = pair_lambdas.distance_weights(longest, pair_weighting)
        n_queries = len(offsets) - 1
        sizes = np.diff(offsets)
        query = query_of_row(offsets)
        if self.use_ap:
            self.utility = (labels > 0).astype(np.float64)
            n_relevant = np.bincount(query, weights=self.utility, minlength=n_queries)
            best = np.minimum(n_relevant, self.k)
        else:
            self.utility = metrics.label_gains(labels, gain == "exponential")
            # Labels descend inside each query: the layout is the ideal ranking.
            rank = np.arange(len(labels)) - np.repeat(offsets[:-1], sizes)
            best = np.bincount(query, weights=self.utility * discounts[rank], minlength=n_queries)
        self.norms = np.divide(1.0, best, out=np.zeros_like(best), where=best > 0)

    def query_work(self, offsets):
        """Inner-loop steps of each query (at most): its pairs touching the top k."""
        return pair_work(offsets, self.k)

    def gradient(self, scores, rows, queries, offsets, *, with_cost=False, n_threads=1):
        """The lambdas of a minibatch (dC/ds, each query's scaled by its
        factor with ``normalize``) and the cost of each of its queries; see
        :meth:`RankNetObjective.gradient`."""
        outputs = np.empty(len(scores)), np.zeros(len(offsets) - 1)
        inputs = (
            scores, self.utility, as_kernel_array(rows, np.int64), self.norms,
            as_kernel_array(queries, np.int64), offsets, self.discounts, self.by_distance,
            self.weighting, self.k, self.use_ap, self.sigma, with_cost,
        )
        grad, cost = _run(pair_lambdas.lambdarank_chunk, inputs, outputs, offsets, n_threads, self.k)
        if self.normalize:
            query = query_of_row(offsets)
            summed = np.bincount(query, weights=np.abs(grad), minlength=len(offsets) - 1)
            # A query without lambdas (one label) has nothing to scale.
            factor = np.divide(np.log2(1.0 + summed), summed, out=np.ones_like(summed), where=summed > 0)
            grad *= factor[query]
        return grad, cost


class ListNetObjective:
    """ListNet's softmax cross-entropy between each query's label
    distribution and the softmax of its scores (see ``_kernels/listwise.py``).

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        Arranged query by query (any order inside a query).
    offsets : ndarray of shape (n_queries + 1,)
    sigma : float
        Inverse temperature of the softmax.
    gain : {"exponential", "linear"}, default="linear"
        The target distribution is proportional to ``2**label - 1`` or to
        ``label``.
    """

    def __init__(self, labels, offsets, *, sigma, gain="linear"):
        self.targets = metrics.label_gains(labels, gain == "exponential")
        self.sigma = float(sigma)

    @staticmethod
    def query_work(offsets):
        """Inner-loop steps of each query: its documents."""
        return np.diff(offsets)

    def gradient(self, scores, rows, queries, offsets, *, with_cost=False, n_threads=1):
        """dC/ds of a minibatch and the cost of each of its queries; see
        :meth:`RankNetObjective.gradient`."""
        grad, cost = np.empty(len(scores)), np.zeros(len(offsets) - 1)
        args = (scores, self.targets[rows], offsets, self.sigma, with_cost, grad, cost)
        work = self.query_work(offsets)
        over_queries(listwise.softmax_chunk, args, offsets, n_threads, int(work.sum()), work)
        return grad, cost
