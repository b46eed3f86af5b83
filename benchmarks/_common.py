"""What every benchmark suite records: the machine, the versions, the outputs."""

import datetime
import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path

PACKAGES = ("sklearn-ranknet", "numpy", "scikit-learn", "numba", "lightgbm", "xgboost", "ranx", "pytrec-eval-terrier")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info():
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": versions,
        "command": " ".join([Path(sys.executable).name] + sys.argv),
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
    (out / f"{name}.json").write_text(json.dumps(result, indent=2, default=str))
    return text
