"""What every benchmark suite records: the machine, the versions, the outputs."""

import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

PACKAGES = (
    "sklearn-ranknet", "numpy", "scipy", "scikit-learn", "numba", "lightgbm", "xgboost",
    "ranx", "pytrec-eval-terrier", "threadpoolctl", "matplotlib",
)
HERE = Path(__file__).resolve().parent


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(*args):
    try:
        done = subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True, timeout=10)
        return done.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def json_default(obj):
    """``json.dumps(default=...)``: numpy scalars and arrays as numbers and
    lists, anything else (paths, ...) as its string."""
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment(command=None):
    """Date, command, git commit, machine and library versions of a run."""
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not initialised"
    dirty = _git("status", "--porcelain", "--", str(HERE.parent / "sklearn_ranknet"))
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command or " ".join([Path(sys.executable).name] + sys.argv),
        "git_commit": _git("rev-parse", "HEAD") or None,
        "package_tree_modified": bool(dirty) if dirty is not None else None,
        "machine": {
            "cpu_model": cpu_model(),
            "os_cpu_count": os.cpu_count(),
            "cpus_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "numba_default_threads": numba.config.NUMBA_NUM_THREADS,
            "numba_threading_layer": layer,
            "load_1min_at_start": os.getloadavg()[0],
        },
        "versions": {name: _version(name) for name in PACKAGES},
    }


def machine_info():
    """The flat summary that :func:`write_outputs` prints."""
    env = environment()
    return {
        "date": env["date"][:10],
        "cpu": env["machine"]["cpu_model"],
        "cores": env["machine"]["os_cpu_count"],
        "load_average_1min": env["machine"]["load_1min_at_start"],
        "platform": env["machine"]["platform"],
        "python": env["machine"]["python"],
        "versions": env["versions"],
        "command": env["command"],
        "git_commit": env["git_commit"],
    }


def write_outputs(out_dir, name, result, title, table_lines, notes=()):
    """Print the table, then write NAME.json and NAME.md into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    info = result.get("machine") or machine_info()
    header = [
        f"## {title}",
        "",
        f"{info['date']}, {info['cpu']}, {info['cores']} cores, load average {info['load_average_1min']:.1f}; "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v),
        "",
    ]
    text = "\n".join(header + list(table_lines) + [""] + [f"{n}\n" for n in notes])
    print(text)
    (out / f"{name}.md").write_text(text)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2, default=json_default))
    return text
