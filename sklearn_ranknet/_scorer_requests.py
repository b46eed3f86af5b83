"""What a scorer is handed besides the estimator, X and y: the query ids
(``groups``) and the query weights (``sample_weight``).

A scikit-learn scorer is called directly here, not through a router, so it
takes a piece of metadata under its own parameter's name whatever alias it
requested (an alias names the *caller's* argument, which the package's own
callers do not have). It gets the query ids when it requested them (True or
an alias) or when its metric has a ``groups`` parameter and they were not
refused (request None, as ``make_scorer(ndcg_score)`` leaves it): scoring
several queries as one list is never what such a metric is for. A plain
function gets what its signature names.
"""

import inspect

from sklearn.utils.metadata_routing import get_routing_for_object


def groups_request(scorer):
    """A scikit-learn scorer's request for ``groups``: True, an alias
    (str), None (accepted, not requested: its metric takes ``groups``) or
    False (its metric does not, or they were refused). An AttributeError
    for an object whose routing is not a scorer's (a router)."""
    requests = get_routing_for_object(scorer).score.requests
    return requests.get("groups", _metric_takes_groups(scorer))


def metadata_taken(scorer):
    """``{"groups": bool, "sample_weight": bool}``: whether ``scorer`` is
    to be handed each (module docstring). Weights go to a scikit-learn
    scorer only when it requested them, as ``GridSearchCV`` routes them."""
    if not hasattr(scorer, "get_metadata_routing"):
        return {name: _has_parameter(scorer, name) for name in ("groups", "sample_weight")}
    weights = get_routing_for_object(scorer).score.requests.get("sample_weight")
    return {"groups": groups_request(scorer) is not False, "sample_weight": weights not in (None, False)}


def _metric_takes_groups(scorer):
    """None (accepted, not requested) when the scorer's metric has a
    ``groups`` parameter, else False. scikit-learn lists a scorer's metric
    parameters among its requests only from 1.9; before, they are absent."""
    parameters = _parameters(getattr(scorer, "_score_func", None))
    return None if "groups" in parameters else False


def _has_parameter(function, name):
    """Whether ``function`` takes a keyword argument ``name`` (by name or
    through ``**kwargs``)."""
    parameters = _parameters(function)
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _parameters(function):
    try:
        return inspect.signature(function).parameters
    except (TypeError, ValueError):  # not a callable, or no signature to read
        return {}
