"""Rankers that export as one of the package's rankers: the Dask rankers,
which export to ONNX as their in-memory twins.

They are defined in :mod:`sklearn_ranknet.dask` (which needs Dask) and the
converters in :mod:`sklearn_ranknet.onnx` (which needs skl2onnx), and neither
module imports the other. The module that defines such a class announces it
here (:func:`announce`); the converters subscribe (:func:`subscribe`) and
hear of every class, announced before they subscribed or after, so the
order in which the two modules are imported does not matter.
"""

_ANNOUNCED = []
_SUBSCRIBERS = []


def announce(cls):
    """Make ``cls`` (a subclass of one of the package's rankers) known to
    every subscriber, now and to come."""
    _ANNOUNCED.append(cls)
    for callback in _SUBSCRIBERS:
        callback(cls)


def subscribe(callback):
    """Call ``callback(cls)`` for every class announced, before or after."""
    _SUBSCRIBERS.append(callback)
    for cls in _ANNOUNCED:
        callback(cls)


def announced():
    """The classes announced so far."""
    return list(_ANNOUNCED)
