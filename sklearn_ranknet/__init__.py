"""sklearn-ranknet: learning to rank in scikit-learn.

RankNet, LambdaRank and ListNet estimators on Numba kernels, and query-aware
NDCG and MAP metrics and scorers (see :mod:`sklearn_ranknet.metrics`).
"""

from ._bagging import BaggingRanker
from ._lambdarank import LambdaRankRanker
from ._listnet import ListNetRanker
from ._rank_within_groups import rank_within_groups
from ._ranknet import RankNetRanker

__all__ = ["BaggingRanker", "LambdaRankRanker", "ListNetRanker", "RankNetRanker", "rank_within_groups"]
__version__ = "0.1.0.dev0"
