"""Helpers for the sphinx-gallery configuration in ``docs/conf.py``.

They live in an importable module (not in ``conf.py``) so that the
configuration names them by their qualified names, which Sphinx can pickle.
"""

from pathlib import Path

# The order of the gallery: from a first fit to deployment. Examples not
# listed here come after these, by file name.
EXAMPLE_ORDER = (
    "plot_first_ranker.py",
    "plot_ranknet_worked_example.py",
    "plot_grid_search.py",
    "plot_compare_rankers.py",
    "plot_truncation.py",
    "plot_significance.py",
    "plot_feature_importance.py",
    "plot_clicks.py",
    "plot_onnx_export.py",
)


class ExampleOrder:
    """Sort key for the examples of one gallery folder (``EXAMPLE_ORDER``)."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        name = Path(filename).name
        if name in EXAMPLE_ORDER:
            return f"{EXAMPLE_ORDER.index(name):03d}"
        return f"999-{name}"

    def __repr__(self):  # sphinx-gallery's cache compares the configuration by repr
        return f"{type(self).__name__}()"


def reset_sklearn_config(gallery_conf, fname):
    """Start every example with scikit-learn's default configuration.

    All examples run in one process: one that turns metadata routing on must
    not leave it on for the next.
    """
    import sklearn

    sklearn.set_config(enable_metadata_routing=False)
