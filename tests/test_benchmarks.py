"""``python -m benchmarks --quick`` runs every suite end to end (a smoke test;
the figures themselves come from the full run, see docs/benchmarks.md).
Peers that are not installed are skipped by the suites themselves."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
YAHOO = ROOT.parent / "shared" / "data" / "yahoo-ltr-sample"


def test_quick_benchmarks_run_and_write_their_results(tmp_path):
    suites = ["lambdas", "metrics", "scale", "coldstart"] + (["quality"] if YAHOO.is_dir() else [])
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path), "--only", *suites],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for suite in suites:
        result = json.loads((tmp_path / f"{suite}.json").read_text())
        assert result, suite
        assert (tmp_path / f"{suite}.md").read_text().strip(), suite
