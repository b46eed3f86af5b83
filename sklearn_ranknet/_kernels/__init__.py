"""Every Numba kernel of the package's training objectives and metrics.

- :mod:`.sort`: the stable descending order of a query's scores, or its head.
- :mod:`.metrics`: gains, DCG, ideal DCG, average precision, reciprocal
  rank and expected reciprocal rank per query.
- :mod:`.pair_lambdas`: RankNet's and LambdaRank's pair gradients, summed
  into one lambda per document.
- :mod:`.listwise`: ListNet's softmax cross-entropy and its gradient.

They import nothing of scikit-learn; their compilation flags and thread
policy come from :mod:`sklearn_ranknet._jit`. The estimators reach them
through :mod:`sklearn_ranknet._objectives`, the metrics directly.
"""
