"""sklearn-ranknet: learning to rank in scikit-learn.

RankNet, LambdaRank and ListNet estimators on Numba kernels, and query-aware
NDCG and MAP metrics and scorers (see :mod:`sklearn_ranknet.metrics`).
"""

from ._bagging import BaggingRanker
from ._cv import LambdaRankRankerCV, ListNetRankerCV, RankNetRankerCV
from ._lambdarank import LambdaRankRanker
from ._listnet import ListNetRanker
from ._rank_within_groups import rank_within_groups
from ._ranknet import RankNetRanker
from ._warmup import start as _start_warmup

__all__ = [
    "BaggingRanker", "LambdaRankRanker", "LambdaRankRankerCV", "ListNetRanker", "ListNetRankerCV", "RankNetRanker",
    "RankNetRankerCV", "rank_within_groups",
]
__version__ = "0.1.0.dev0"

# Compile the kernels of a first fit in the background (sklearn_ranknet/_warmup.py;
# SKLEARN_RANKNET_WARMUP=0 switches it off).
_start_warmup()
