"""``python -m benchmarks --quick`` runs every suite end to end (a smoke test; the figures
come from the full run, see docs/benchmarks.md), and the harness skips missing peers."""

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks._harness import Harness

ROOT = Path(__file__).resolve().parents[1]
YAHOO = ROOT.parent / "shared" / "data" / "yahoo-ltr-sample"


QUICK_SUITES = ["lambdas", "metrics", "scale", "coldstart", "inputs", "selection", "busy", "missing"]
QUICK_SUITES += ["quality", "clicks"] if YAHOO.is_dir() else []
QUICK_SUITES += ["dask", "dask_defaults"] if importlib.util.find_spec("distributed") else []
#: Suites whose targets are all measured on the Yahoo sample.
TARGETS_ON_YAHOO_ONLY = {"inputs"}


#: The suites' order of length on this machine kind (longest first), so that
#: two at a time they finish close together.
LONGEST_FIRST = ["quality", "missing", "dask", "scale", "clicks", "coldstart", "lambdas",
                 "dask_defaults", "metrics", "busy", "selection", "inputs"]


def _run_quick(suite, out):
    # Each time limit only has to catch a hang: the quality suite, the
    # longest, took 85 s alone (AMD EPYC VM, 2026-11-29) and over 600 s
    # beside two other test runs on the same two cores.
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(out), "--only", suite],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "MPLBACKEND": "Agg"},
    )


@pytest.fixture(scope="module")
def quick_runs(request, tmp_path_factory):
    """The selected suites' runs, started together, two at a time: each suite
    is a process of its own that mostly keeps one core busy, so on CI's two
    cores a pair takes about as long as one (the suites took ~230 s one after
    the other). Maps a suite to (its run's future, its output folder)."""
    test = test_quick_benchmarks_run_and_write_their_results.__name__
    selected = {item.callspec.params["suite"] for item in request.session.items
                if getattr(item, "originalname", None) == test}  # doctests have no such name
    order = sorted(selected, key=lambda s: LONGEST_FIRST.index(s) if s in LONGEST_FIRST else -1)
    pool = ThreadPoolExecutor(max_workers=2)
    runs = {}
    for suite in order:
        out = tmp_path_factory.mktemp(suite)
        runs[suite] = pool.submit(_run_quick, suite, out), out
    yield runs
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("suite", QUICK_SUITES)
def test_quick_benchmarks_run_and_write_their_results(quick_runs, suite):
    future, tmp_path = quick_runs[suite]
    done = future.result()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / f"{suite}.json").read_text())
    assert result["suite"] == suite and result["quick"] and result["tables"]
    text = (tmp_path / f"{suite}.md").read_text()
    if suite in TARGETS_ON_YAHOO_ONLY and not YAHOO.is_dir():
        # A clone without ../shared (the README's Quickstart): the suite says
        # what it skipped, and has no target to report.
        assert result["targets"] == [] and "Yahoo sample is absent" in text and "## Targets" not in text
    else:
        assert result["targets"] and all("line" in t for t in result["targets"])
        assert "## Targets" in text
    assert result["record"]["cpu_model"] and result["record"]["versions"]
    assert "## Method" in text


def test_missing_peers_and_matplotlib_are_skipped_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHMARKS_WITHOUT", "ranx,matplotlib")
    h = Harness("demo", quick=True, out_dir=tmp_path, doc="Demo.\n\nHow it is measured.")
    assert h.peer("ranx") is None
    assert h.peer("numpy") is not None
    h.plot(lambda ax: ax.plot([1, 2]))
    h.table("t", [{"a": 1.23456, "b": None}], {"a": "a", "b": "b"})
    h.target("a figure", 2.0, 1.0, unit="x")
    h.write()
    assert not (tmp_path / "demo.png").exists()
    text = (tmp_path / "demo.md").read_text()
    assert "ranx is not installed" in text and "matplotlib is not installed" in text
    assert "MISSED: a figure: 2x (target <= 1x)" in text and "| 1.23 | n/a |" in text
    assert json.loads((tmp_path / "demo.json").read_text())["targets"][0]["met"] is False
