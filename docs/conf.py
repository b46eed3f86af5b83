"""Sphinx configuration of the sklearn-ranknet documentation.

Build from the repository root with warnings as errors::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The gallery (``docs/examples/plot_*.py``) runs during the build; the
comparison example reads the Yahoo LTR sample from
``<repository>/../shared/data/yahoo-ltr-sample`` when it is there (or from
``$SKLEARN_RANKNET_DATA``).
"""

import re
import sys
from pathlib import Path

import sklearn_ranknet

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "sphinxext"))

# -- Project -----------------------------------------------------------------

project = "sklearn-ranknet"
author = "the sklearn-ranknet developers"
copyright = "the sklearn-ranknet developers, BSD-3-Clause licence"
release = sklearn_ranknet.__version__
version = release

# -- General -----------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    # MathJax served from the built site itself: the pages render their
    # formulas without a network connection.
    "sphinx-mathjax-offline",
]

templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    # sphinx-gallery writes these next to the generated pages.
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
    "auto_examples/*.pickle",
    "auto_examples/*.codeobj.json",
    "examples/README.rst",
]
default_role = "literal"
pygments_style = "sphinx"
add_function_parentheses = False
# The page contents of an API page list "fit", not "LambdaRankRanker.fit".
toc_object_entries_show_parents = "hide"

# -- API reference (autodoc, autosummary, numpydoc) --------------------------

autosummary_generate = True
# Members are listed by the class template (_templates/class.rst), so that a
# module page shows its docstring only.
autodoc_default_options = {}
autodoc_typehints = "none"
# As scikit-learn: the class page lists the methods through autodoc; numpydoc
# neither adds a second member table nor a toctree of members.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- Markdown (docs/benchmarks.md and the benchmark results) ----------------

myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# -- Gallery -----------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "gallery_helpers.ExampleOrder",
    # Every example starts with routing off (they share one process).
    "reset_modules": ("matplotlib", "gallery_helpers.reset_sklearn_config"),
    "doc_module": ("sklearn_ranknet",),
    "backreferences_dir": "gen_modules/backreferences",
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 0,
    "show_memory": False,
    "default_thumb_file": None,
    "capture_repr": ("_repr_html_", "__repr__"),
    # Its page loads jQuery and DataTables from CDNs: the site stays offline.
    "write_computation_times": False,
}

# -- HTML --------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-ranknet {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    # The benchmark pages hold wide tables: they get both side columns' room
    # (named one by one: a page matching two wildcards draws a warning).
    "secondary_sidebar_items": {
        "**": ["page-toc"],
        "benchmarks": [],
        **{f"benchmark_results/{page.stem}": [] for page in (DOCS / "benchmark_results").glob("*.md")},
    },
}
html_sidebars = {"index": [], "benchmarks": [], "benchmark_results/*": []}
html_show_sourcelink = False

# -- docs/benchmarks.md ------------------------------------------------------
#
# docs/benchmarks.md is the one source of the benchmark page. It links to
# the suites' result files as ../benchmarks/results/NAME.md (paths that work
# when reading the repository); on the site those files are the pages
# benchmark_results/NAME (thin wrappers that include them).

_RESULTS_LINK = re.compile(r"\]\(\.\./benchmarks/results/([A-Za-z0-9_]*\.md)?\)")


def _link_results(app, docname, source):
    if docname != "benchmarks":
        return
    text = _RESULTS_LINK.sub(
        lambda m: f"](benchmark_results/{m.group(1) or 'index.md'})", source[0]
    )
    # The result pages become children of this one in the navigation.
    source[0] = text + "\n```{toctree}\n:hidden:\n\nbenchmark_results/index\n```\n"


# -- Docstrings written for help() -------------------------------------------
#
# The package's docstrings are plain text first. Two plain-text habits mean
# something else in reST, so this package's docstrings are adjusted before
# numpydoc reads them (outside literals and roles only):
#
# - absolute values written with bars, |delta NDCG@k| or log1p(|x|), are
#   substitution references in reST: the bars are escaped;
# - a name ending in "_" in a parameter's or attribute's type, as in
#   "ndarray of shape (n_features_in_,)", is a hyperlink reference in reST:
#   the underscore is escaped (scikit-learn avoids this by cross-referencing
#   types through intersphinx, which needs a network connection).

_LITERAL_OR_ROLE = re.compile(r"(``.*?``|`[^`]*`)")
_FIELD = re.compile(r"^(\s*[\w*][\w*, ]* : )(.*)$")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s,;)\]]|$)")


def _outside_literals(line, fix):
    parts = _LITERAL_OR_ROLE.split(line)
    # Odd positions are the literals and role contents: left untouched.
    parts[::2] = [fix(part) for part in parts[::2]]
    return "".join(parts)


def _escape_bars(text):
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def _escape_reference_underscores(text):
    return _TRAILING_UNDERSCORE.sub(r"\\_", text)


def _plain_text_to_rest(app, what, name, obj, options, lines):
    if not name.startswith("sklearn_ranknet"):
        return
    for number, line in enumerate(lines):
        if line.lstrip().startswith((">>>", "...")):
            continue
        if "|" in line:
            line = _outside_literals(line, _escape_bars)
        field = _FIELD.match(line)
        if field and "_" in field.group(2):
            line = field.group(1) + _outside_literals(field.group(2), _escape_reference_underscores)
        lines[number] = line


# -- Metric names are not e-mail addresses ------------------------------------
#
# docutils turns any "word@word" of running text into a mailto: link, so
# "NDCG@10" in a docstring or a gallery comment would become one. Links to
# addresses without a dot in the domain are turned back into text.


def _unlink_metric_names(app, doctree):
    from docutils import nodes

    for node in list(doctree.findall(nodes.reference)):
        uri = node.get("refuri", "")
        if uri.startswith("mailto:") and "." not in uri.partition("@")[2]:
            node.replace_self(nodes.Text(node.astext()))


def setup(app):
    app.connect("doctree-read", _unlink_metric_names)
    app.connect("source-read", _link_results)
    # Before numpydoc (priority 500) reads the docstrings.
    app.connect("autodoc-process-docstring", _plain_text_to_rest, priority=400)
