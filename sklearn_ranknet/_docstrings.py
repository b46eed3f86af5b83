"""Docstrings assembled from other estimators' (the Dask rankers', the CV
rankers'): numpydoc sections read and put back together."""

import inspect
import re


def sections(doc):
    """A numpydoc docstring -> (summary, {section title: body})."""
    lines = inspect.cleandoc(doc).splitlines()
    heads = [
        i for i in range(len(lines) - 1)
        if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())
    ]
    summary = "\n".join(lines[: heads[0]]).strip()
    sections = {}
    for start, stop in zip(heads, heads[1:] + [len(lines)]):
        sections[lines[start].strip()] = "\n".join(lines[start + 2 : stop]).strip("\n")
    return summary, sections


def without_entries(body, names):
    """A numpydoc Parameters or Attributes section without the entries of
    ``names`` (each an unindented ``name : type`` line and the indented
    lines below it)."""
    kept, skipping = [], False
    for line in body.splitlines():
        if line and not line[0].isspace():
            skipping = line.split(" : ")[0].strip() in names
        if not skipping:
            kept.append(line)
    return "\n".join(kept)
