"""``python -m benchmarks --quick`` runs every suite end to end (a smoke test; the figures
come from the full run, see docs/benchmarks.md), and the harness skips missing peers."""

import importlib.util
import json
import os
import subprocess
import sys
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


@pytest.mark.parametrize("suite", QUICK_SUITES)
def test_quick_benchmarks_run_and_write_their_results(tmp_path, suite):
    # One process per suite, each with its own time limit, which only has to
    # catch a hang: the quality suite, the longest, took 85 s alone (AMD EPYC
    # VM, 2026-11-29; 127 s before --quick bagged one ranker only) and over
    # 600 s beside two other test runs on the same two cores.
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path), "--only", suite],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "MPLBACKEND": "Agg"},
    )
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
