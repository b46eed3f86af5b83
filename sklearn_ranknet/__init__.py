"""sklearn-ranknet: learning to rank in scikit-learn.

RankNet and LambdaRank estimators on Numba lambda kernels, and query-aware
NDCG and MAP metrics and scorers (see :mod:`sklearn_ranknet.metrics`).
"""

from ._lambdarank import LambdaRankRanker
from ._ranknet import RankNetRanker

__all__ = ["LambdaRankRanker", "RankNetRanker"]
__version__ = "0.1.0.dev0"
