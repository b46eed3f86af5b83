"""The Dask rankers: fit on dask collections, lazy predict, distributed
score, to_local."""

import copy
import warnings

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_feature_names, _check_n_features, _get_feature_names, check_is_fitted

from .._base import check_groups_for_score
from .._habits import refuse_unexpected_keywords
from .._lambdarank import LambdaRankRanker
from .._listnet import ListNetRanker
from .._metadata_columns import (
    check_features_left, check_width, missing_ids_fixes, split_query_column,
)
from .._ranknet import RankNetRanker
from .._training import SCORE_K
from .._twins import announce
from .._validation import label_remedy
from .._validation_set import validation_input, validation_set
from . import _training
from ._colocation import (
    _Y, _colocated, _get_client, _is_dask, _numpy_dtype, _one_worker_budget, _row_count, _zipped,
)
from ._docs import _docstring
from ._metrics import _query_mean


def _in_memory(value):
    """A validation input in the client's memory: a dask collection computed."""
    return value.compute() if _is_dask(value) else value


def _predict_rows(rows, model, dtype):
    # A partition may be empty (filtered data); the model refuses 0 rows.
    return model.predict(rows) if rows.shape[0] else np.empty(0, dtype=dtype)


def _predict_frame(frame, model, dtype):
    return pd.Series(_predict_rows(frame, model, dtype), index=frame.index, dtype=dtype)


def _scores_dtype(model_dtype, input_dtypes):
    """The dtype ``predict`` returns: float32 when the model and every input
    column are float32 (it then computes in float32), float64 otherwise,
    as the in-memory ranker's ``predict`` does."""
    inputs_float32 = all(_numpy_dtype(d) == np.float32 for d in input_dtypes)
    return np.dtype(np.float32 if inputs_float32 and model_dtype == np.float32 else np.float64)


#: Attributes of a Dask ranker that its in-memory twin does not get.
_DASK_ONLY = ("_fit_timings", "single_worker_")


class _DaskRanker:
    """What the Dask rankers add to their in-memory class: fit on dask
    collections, lazy predict, distributed score, to_local."""

    _local_class = None
    _RESOLVED_OUTSIDE_TRAINING = ("single_worker",)

    def _store(self, arguments):
        # __init__ only stores its arguments, as scikit-learn asks.
        arguments = {k: v for k, v in arguments.items() if k not in ("self", "__class__")}
        self.client = arguments.pop("client")
        self.partitioned_by_query = arguments.pop("partitioned_by_query")
        self.single_worker = arguments.pop("single_worker")
        self._local_class.__init__(self, **arguments)

    @property
    def client_(self):
        """The client ``fit`` uses: ``client``, or the default one."""
        return _get_client(self.client)

    def __getstate__(self):
        # A client is a connection: never pickled (nor deep-copied).
        state = dict(super().__getstate__())
        state["client"] = None
        return state

    def __sklearn_clone__(self):
        # clone deep-copies parameters, which a client cannot survive: the
        # clone shares it instead, as it would share n_jobs.
        params = self.get_params(deep=False)
        client = params.pop("client")
        cloned = type(self)(**{name: clone(value, safe=False) for name, value in params.items()}, client=client)
        # What scikit-learn's clone carries besides the parameters: the
        # metadata requests (set_fit_request, ...) and set_output's choice.
        for name in ("_metadata_request", "_sklearn_output_config"):
            if name in vars(self):
                setattr(cloned, name, copy.deepcopy(vars(self)[name]))
        return cloned

    def _local_params(self):
        params = self.get_params(deep=False)
        del params["client"], params["partitioned_by_query"], params["single_worker"]
        return params

    def to_local(self):
        """The equivalent fitted in-memory ranker.

        Returns
        -------
        ranker : RankNetRanker, LambdaRankRanker or ListNetRanker
            The in-memory ranker of the same class, with the same
            hyperparameters (but ``client``, ``partitioned_by_query`` and
            ``single_worker``) and a copy of the fitted state: its
            ``predict`` gives the same scores.
        """
        check_is_fitted(self, "coefs_")
        params = self.get_params(deep=False)
        local = self._local_class(**self._local_params())
        for name, value in vars(self).items():
            if name not in params and name not in _DASK_ONLY:
                setattr(local, name, copy.deepcopy(value))
        return local

    def _no_partial_fit(self):
        raise AttributeError(
            "The Dask rankers have no partial_fit: fit trains on a whole dask collection. "
            "For data arriving in chunks, call partial_fit on to_local()."
        )

    @available_if(_no_partial_fit)
    def partial_fit(self, X, y, groups=None, sample_weight=None):  # pragma: no cover
        """Not available (see :meth:`to_local`)."""

    def fit(
        self, X, y, groups=None, sample_weight=None, *, X_val=None, y_val=None, groups_val=None,
        sample_weight_val=None, **unexpected,
    ):
        """Fit the ranker on a Dask cluster.

        Parameters
        ----------
        X : dask Array or dask DataFrame of shape (n_samples, n_features)
            Dense features (a 2-D dask array, rechunked to whole rows if
            needed, or a DataFrame). float32 trains a float32 model.
        y : dask Array or Series of shape (n_samples,)
            Graded relevance labels, partitioned like ``X``.
        groups : dask Array or Series of shape (n_samples,), default=None
            Query id of each row, partitioned like ``X``; a query's rows may
            be in several partitions (the shuffle brings them together).
            ``None`` takes them from ``query_column``, or treats all rows as
            one query (and warns).
        sample_weight : dask Array or Series of shape (n_samples,), default=None
            Query weights, constant within a query.
        X_val, y_val, groups_val, sample_weight_val : arrays or dask collections, default=None
            A validation set for early stopping, as in the in-memory
            ranker's ``fit``: small enough for the client's memory (dask
            collections are computed), it is scored there after every
            epoch instead of queries held out of the shards.
        **unexpected : dict
            No other keyword argument is taken. LightGBM's and XGBoost's
            (``group=``, ``qid=``, ``eval_set=``) get a ``TypeError`` that
            names what to give instead.

        Returns
        -------
        self : object
            The fitted ranker.
        """
        refuse_unexpected_keywords(type(self).__name__, "fit", unexpected)
        self._validate_params()
        if self.solver == "lbfgs":
            raise ValueError(
                'The Dask rankers train with a stochastic solver ("adam" or "sgd"). For '
                "L-BFGS, fit the in-memory ranker on data that fits in memory."
            )
        if self.precision != "auto":
            raise ValueError(
                'The Dask rankers train in the dtype of X; keep precision="auto" and cast X '
                "(X.astype(np.float32)) to train in float32."
            )
        if self.position_column is not None:
            raise ValueError(
                "The Dask rankers do not learn from click logs yet (position_column="
                f"{self.position_column!r}); fit {self._local_class.__name__} in memory on the log, "
                "or set position_column=None to train on graded labels."
            )
        if self.ema_momentum not in ("auto", 0):  # "auto": no average here
            raise ValueError(
                "The Dask rankers do not average weights yet; set ema_momentum=0 (or "
                "fit the in-memory ranker)."
            )
        client = _get_client(self.client)
        # As in memory: a fit that raises leaves the ranker as it was.
        with self._as_before_if_it_raises():
            self._begin_fit()
            first_call = not hasattr(self, "_model")
            if not first_call:
                self._check_same_network()  # warm_start continues the fitted network
            given = validation_input(self, *(_in_memory(v) for v in (X_val, y_val, groups_val, sample_weight_val)))
            frame, dtype = self._training_frame(X, y, groups, sample_weight, first_call)
            validation = None if given is None else validation_set(
                self, given, None, exponential_gain=self._uses_exponential_gain(), remedy=label_remedy(self),
            )
            if self._fits_on_one_worker(client, X, dtype):
                self._fit_on_one_worker(client, frame, dtype, sample_weight is not None, given, first_call)
                return self
            shards = self._shards(client, frame, dtype, sample_weight is not None)
            history = self._history()
            request = _training.FitRequest(
                params=self._local_params(), rules=self._AUTO, n_features=self.n_features_in_,
                model=None if first_call else self._model, state=self._fit_state, history=history,
                objective_factory=self._objective_factory, partitioned_by_query=self.partitioned_by_query,
                validation=validation,
            )
            model, resolved, self._fit_timings = _training.fit(client, shards, request)
            self._publish(model, history, resolved)
            self.single_worker_ = False
        return self

    def _training_frame(self, X, y, groups, sample_weight, first_call):
        """The training data zipped into one dask DataFrame (see
        ``_colocation._zipped``) and the dtype it trains in, after the
        checks the client can make before any row is read."""
        if not _is_dask(X):
            raise TypeError(
                f"X must be a dask Array or DataFrame; got {type(X).__name__}. For data in "
                f"memory use {self._local_class.__name__}."
            )
        if isinstance(X, da.Array) and sp.issparse(X._meta):
            raise TypeError(
                "The Dask rankers train on dense features; X's chunks are scipy.sparse "
                "matrices. Densify them (X.map_blocks(lambda b: b.toarray())), or fit "
                f"{self._local_class.__name__} on the CSR matrix in memory."
            )
        if groups is None and self.query_column is None:
            warnings.warn(
                f"fit got no groups, so all rows are treated as one query. {missing_ids_fixes()}",
                UserWarning,
                stacklevel=4,  # the caller of fit
            )
        frame, meta_features, dtype = _zipped(
            X=X, y=y, groups=groups, sample_weight=sample_weight, query_column=self.query_column,
            features=True,
        )
        y_dtype = frame._meta[_Y].dtype
        if _numpy_dtype(y_dtype).kind not in "biuf":
            raise ValueError(f"y must hold numeric relevance labels (e.g. 0..4); got dtype {y_dtype}.")
        # As in memory, before scikit-learn's checks, which would count the
        # features left (or meet none only on a worker).
        check_features_left(meta_features, self, None if first_call else self)
        _check_n_features(self, meta_features, reset=first_call)
        _check_feature_names(self, meta_features, reset=first_call)
        if not first_call:
            dtype = self._model.dtype  # a model keeps its precision
        return frame, dtype

    def _fits_on_one_worker(self, client, X, dtype):
        """Whether this fit gathers the data on one worker (``single_worker``)."""
        if self.single_worker != "auto":
            return self.single_worker
        n_rows = _row_count(client, X)  # a pass over the rows when their number is unknown
        return n_rows * self.n_features_in_ * np.dtype(dtype).itemsize <= _one_worker_budget(client)

    def _fit_on_one_worker(self, client, frame, dtype, weighted, given, first_call):
        """Fit the in-memory ranker on one worker, on every row in input
        order, and take its fitted state: the in-memory fit, to the bit
        (with BLAS on the worker's threads)."""
        if first_call:
            local = self._local_class(**{**self._local_params(), "query_column": None})
        else:  # warm_start goes on from the fitted network and random stream
            local = self.to_local().set_params(query_column=None)
        names = getattr(self, "feature_names_in_", None)
        validation = None
        if given is not None:
            X_val = given.X
            if hasattr(X_val, "iloc") and names is None:  # named after unnamed training rows: warned above
                X_val = X_val.to_numpy()
            validation = {"X_val": X_val, "y_val": given.y, "groups_val": given.groups,
                          "sample_weight_val": given.sample_weight}
        task = dask.delayed(_training.fit_gathered, pure=False)(
            frame.to_delayed(), local, [f"f{j}" for j in range(self.n_features_in_)], names, dtype, weighted,
            validation,
        )
        fitted, caught, printed, seconds = client.compute(task).result()
        if printed:
            print(printed, end="")
        for message, category in caught:  # raised on the worker, where no one would see them
            warnings.warn(message, category, stacklevel=3)  # the caller of fit
        params = self.get_params(deep=False)
        for name, value in vars(fitted).items():
            if name not in params and name not in ("n_features_in_", "feature_names_in_"):
                setattr(self, name, value)
        self._fit_timings = {"prepare_s": 0.0, "train_s": seconds}
        self.single_worker_ = True

    def _shards(self, client, frame, dtype, weighted):
        """Futures of the co-located shards of the training data."""
        spec = _training.ShardSpec(
            self._objective_factory(None), self._uses_exponential_gain(), label_remedy(self),
            type(self).__name__, self.feature_scaling,
        )
        columns = [f"f{j}" for j in range(self.n_features_in_)]
        make = dask.delayed(_training.make_shard, pure=False)
        parts = _colocated(frame, self.partitioned_by_query)
        return client.compute([make(p, spec, columns, dtype, weighted) for p in parts])

    def predict(self, X):
        """Score every row, lazily: one task per partition.

        Parameters
        ----------
        X : dask Array or dask DataFrame of shape (n_samples, n_features)
            Feature vectors, with the columns seen in ``fit`` (and the
            ``query_column`` when it is set, which is dropped).

        Returns
        -------
        scores : dask Array of shape (n_samples,)
            ``to_local().predict`` of each partition. From a DataFrame the
            chunk sizes are unknown until computed
            (``scores.compute_chunk_sizes()``).
        """
        check_is_fitted(self, "coefs_")
        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(f"X must be a 2-D dask array; got shape {X.shape}.")
            if X.numblocks[1] > 1:
                X = X.rechunk({1: -1})
            if np.isnan(X.shape[1]):
                model = self.to_local()  # unknown width: each partition checks its own
            else:
                model = self._partition_model(np.empty((0, X.shape[1]), dtype=X.dtype))
            dtype = _scores_dtype(self.coefs_[0].dtype, [X.dtype])
            return X.map_blocks(_predict_rows, model, dtype, drop_axis=1, dtype=dtype,
                                meta=np.empty((0,), dtype=dtype))
        if isinstance(X, dd.DataFrame):
            model = self._partition_model(X._meta)
            # The query column, which the model drops, has no say in the dtype.
            features = split_query_column(X._meta, self.query_column)[0]
            dtype = _scores_dtype(self.coefs_[0].dtype, features.dtypes)
            scores = X.map_partitions(_predict_frame, model, dtype, meta=pd.Series([], dtype=dtype))
            return scores.to_dask_array()
        raise TypeError(
            f"X must be a dask Array or DataFrame; got {type(X).__name__}. For data in memory "
            "use to_local().predict(X)."
        )

    def _partition_model(self, meta):
        """The in-memory model that scores each partition of an ``X`` like
        ``meta`` (its empty form), after ``X``'s columns are checked here.

        The in-memory checks run on the client, when ``predict`` is called:
        a wrong width or foreign column names raise there, naming this class,
        and a mismatch of named and unnamed columns warns once, as in memory.
        On the workers each partition would warn again (or, on worker
        processes, the warning would be lost). Having passed these checks,
        the columns are the fitted ones in order, so the copy that goes to
        the workers takes ``X``'s names (or none) and warns no more.
        """
        features = split_query_column(meta, self.query_column)[0]
        check_width(features, self)
        _check_n_features(self, features, reset=False)
        _check_feature_names(self, features, reset=False)
        model = self.to_local()
        names = _get_feature_names(features)
        if names is None:
            model.__dict__.pop("feature_names_in_", None)
        else:
            model.feature_names_in_ = names
        return model

    def score(self, X, y, groups=None, sample_weight=None):
        """Mean NDCG@10 over queries of ``predict(X)``, computed on the cluster.

        Parameters
        ----------
        X : dask Array or dask DataFrame of shape (n_samples, n_features)
            Feature vectors, as in :meth:`predict`.
        y : dask Array or Series of shape (n_samples,)
            Graded relevance labels, partitioned like ``X``.
        groups : dask Array or Series of shape (n_samples,), default=None
            Query id of each row; needed, here or in ``query_column``.
        sample_weight : dask Array or Series of shape (n_samples,), default=None
            Query weights: a weighted mean over queries.

        Returns
        -------
        score : float
            As :func:`ndcg_score` with ``k=10`` and the ranker's gain.
        """
        check_is_fitted(self, "coefs_")
        scores = self.predict(X)
        if groups is None and self.query_column is None:
            n_rows = _row_count(self.client, y)  # not a dask collection: the error says so with the groups
            check_groups_for_score(None, int(n_rows), type(self).__name__)
        return _query_mean(
            "ndcg", y, scores, groups=groups, sample_weight=sample_weight, k=SCORE_K,
            gain=getattr(self, "gain", "exponential"), ignore_ties=False, empty_query_score=1.0,
            partitioned_by_query=self.partitioned_by_query,
            X=X if self.query_column is not None else None, query_column=self.query_column,
            client=self.client, names=("y", "predict(X)"),
        )


class DaskLambdaRankRanker(_DaskRanker, LambdaRankRanker):
    _local_class = LambdaRankRanker
    _parameter_constraints = {
        **LambdaRankRanker._parameter_constraints,
        "client": "no_validation",
        "partitioned_by_query": ["boolean"],
        "single_worker": [StrOptions({"auto"}), "boolean"],
    }

    def __init__(
        self,
        hidden_layer_sizes="auto",
        *,
        activation="relu",
        solver="adam",
        alpha="auto",
        batch_size="auto",
        learning_rate_init="auto",
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=1.0,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        precision="auto",
        query_column=None,
        position_column=None,
        metric="ndcg",
        k=None,
        gain="exponential",
        pair_weighting="lambdarank",
        normalize_lambdas="auto",
        client=None,
        partitioned_by_query=False,
        single_worker="auto",
    ):
        self._store(locals())


class DaskRankNetRanker(_DaskRanker, RankNetRanker):
    _local_class = RankNetRanker
    _parameter_constraints = {
        **RankNetRanker._parameter_constraints,
        "client": "no_validation",
        "partitioned_by_query": ["boolean"],
        "single_worker": [StrOptions({"auto"}), "boolean"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        activation="relu",
        solver="adam",
        alpha=1.5,
        batch_size="auto",
        learning_rate_init=3e-3,
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=0.5,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        precision="auto",
        query_column=None,
        position_column=None,
        pair_targets="hard",
        client=None,
        partitioned_by_query=False,
        single_worker="auto",
    ):
        self._store(locals())


class DaskListNetRanker(_DaskRanker, ListNetRanker):
    _local_class = ListNetRanker
    _parameter_constraints = {
        **ListNetRanker._parameter_constraints,
        "client": "no_validation",
        "partitioned_by_query": ["boolean"],
        "single_worker": [StrOptions({"auto"}), "boolean"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        activation="relu",
        solver="adam",
        alpha=15.0,
        batch_size="auto",
        learning_rate_init="auto",
        max_iter=300,
        tol=3e-3,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        momentum=0.9,
        random_state=None,
        warm_start=False,
        verbose=False,
        sigma=1.0,
        n_jobs=None,
        feature_scaling="piecewise",
        dropout=0.0,
        input_noise="auto",
        ema_momentum="auto",
        precision="auto",
        query_column=None,
        position_column=None,
        gain="exponential",
        client=None,
        partitioned_by_query=False,
        single_worker="auto",
    ):
        self._store(locals())


for _cls in (DaskLambdaRankRanker, DaskRankNetRanker, DaskListNetRanker):
    _cls.__doc__ = _docstring(_cls._local_class, _cls.__name__)
del _cls


# A fitted Dask ranker exports to ONNX as its in-memory twin (see _twins.py).
for _cls in (DaskLambdaRankRanker, DaskRankNetRanker, DaskListNetRanker):
    announce(_cls)
