"""The Dask rankers' docstrings, assembled from their in-memory twins'."""

from .._docstrings import sections as _sections

_CLIENT_DOC = """\
client : distributed.Client or None, default=None
    The Dask client to train with; ``None`` uses
    ``distributed.default_client()`` at fit time (``client_`` tells which).
    It is never pickled nor deep-copied (a copy gets ``None``); ``clone``
    shares it.
partitioned_by_query : bool, default=False
    Whether every partition of the data already holds whole queries: then
    ``fit`` and ``score`` skip the shuffle that co-locates each query's
    rows, and a query found in two partitions is a ``ValueError``. See
    :ref:`dask_colocation`.
single_worker : {"auto"} or bool, default="auto"
    Whether ``fit`` gathers the training rows on one worker and fits the
    in-memory ranker there (the same model, to the bit, as the in-memory
    fit on the same rows in the same order), instead of training
    data-parallel over the partitions. "auto" gathers when the training
    features take at most an eighth of the smallest worker's memory limit
    (1 GiB when the workers have none); ``True`` always gathers and
    ``False`` never does. ``predict`` and ``score`` run over the partitions
    either way."""

_NOTES = """\
Data that fits one worker (``single_worker="auto"``) is gathered there and
fitted by the in-memory ranker, with every "auto" rule and parameter
meaning what it means in memory: the model does not depend on the
partitioning. The rest of these notes are about larger data, trained
data-parallel.

Training is data-parallel local SGD with parameter averaging: one round per
epoch, in which every partition runs an epoch of minibatch steps over its
own queries from the averaged parameters, and the client averages them,
weighted by each partition's query weight. With P partitions the effective
batch is about ``P * batch_size`` queries: expect more epochs than in
memory, or raise ``learning_rate_init``. The "auto" rules that read the
rows are off (``input_noise``, ``normalize_lambdas`` and the values for data
scaled within each query), and the weights are not averaged over steps
(``ema_momentum`` must be "auto", which means 0 here, or 0). The input
scaling is fitted on the whole data, the validation queries are those the
in-memory ranker draws, and a fit is reproducible for a given
``random_state`` and partitioning. Click logs are not taken yet:
``fit`` has no ``positions``, and refuses a ``position_column``.

Read more in the :ref:`User Guide <dask>`."""

_EXAMPLE = """\
>>> import numpy as np
>>> import dask.array as da
>>> from distributed import Client, LocalCluster
>>> from sklearn_ranknet.dask import {name}
>>> from sklearn_ranknet.datasets import make_ranking
>>> X, y, qid = make_ranking(n_queries=60, random_state=0)
>>> dX = da.from_array(X, chunks=(400, -1))  # cuts through queries
>>> dy, dqid = da.from_array(y, chunks=400), da.from_array(qid, chunks=400)
>>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
>>> client = Client(cluster)
>>> ranker = {name}(hidden_layer_sizes=(16,), max_iter=3, random_state=0)
>>> ranker = ranker.fit(dX, dy, groups=dqid)
>>> scores = ranker.predict(dX)  # lazy
>>> scores.shape == (len(X),)
True
>>> bool(np.allclose(scores.compute(), ranker.to_local().predict(X)))
True
>>> bool(0.0 <= ranker.score(dX, dy, groups=dqid) <= 1.0)
True
>>> client.close(); cluster.close()"""


def _docstring(local_class, name):
    """The Dask ranker's docstring: the in-memory one's parameters and
    attributes, plus ``client``, and notes and an example of its own;
    None under ``python -OO``, which drops docstrings."""
    if local_class.__doc__ is None:
        return None
    _, sections = _sections(local_class.__doc__)
    local = local_class.__name__
    parts = [
        f"{local} trained data-parallel on a Dask cluster.",
        f"The same model and parameters as :class:`~sklearn_ranknet.{local}`, for data in dask "
        "collections: ``fit`` co-locates each query's rows, then trains where the data lives; "
        "``predict`` returns a lazy dask array; ``score`` computes the mean NDCG@10 by query on "
        f"the cluster; ``to_local()`` returns the equivalent fitted :class:`~sklearn_ranknet.{local}`. "
        "Modelled on ``lightgbm.DaskLGBMRanker``.",
        "Parameters\n----------\n" + sections["Parameters"] + "\n" + _CLIENT_DOC,
        "Attributes\n----------\n" + sections["Attributes"],
        f"See Also\n--------\n{local} : The in-memory ranker; ``to_local()`` returns one.",
        "Notes\n-----\n" + _NOTES,
        "Examples\n--------\n" + _EXAMPLE.format(name=name),
    ]
    return "\n\n".join(parts)
