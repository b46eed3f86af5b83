"""The one harness every benchmark suite runs on.

``python -m benchmarks`` makes a :class:`Harness` per suite, calls the suite's
``run(h)`` and then ``h.write()``. The harness gives every suite the same

- timing: :meth:`Harness.measure` warms up (Numba compilation, caches), then
  repeats a call; it keeps the min and the median, this process's CPU / wall
  and the share of the machine other processes used meanwhile;
- fresh processes: :meth:`Harness.fresh` runs a module-level function in a new
  Python (cold start, memory) and returns its JSON result; inside such a
  child, :func:`peak_memory` gives the resident-memory high-water mark of one
  call;
- record of the run: date, command, git commit, CPU model, cores, versions,
  load average at start and end, other processes' CPU over the whole suite;
- outputs in one place: :meth:`table`, :meth:`note` and :meth:`target` build
  ``NAME.md`` and ``NAME.json``, :meth:`plot` ``NAME.png`` (skipped with a
  note when matplotlib is absent);
- optional peers: :meth:`peer` imports one or returns None with a skip note.
  ``BENCHMARKS_WITHOUT=ranx,xgboost`` makes installed peers count as absent
  (to rehearse the CI environment).
"""

import contextlib
import datetime
import gc
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ("sklearn-ranknet", "numpy", "scipy", "scikit-learn", "numba", "lightgbm", "xgboost",
            "ranx", "pytrec-eval-terrier", "matplotlib")
RESULT_MARK = "@@benchmark-result "
# Children that measure memory: every allocation of 64 KiB or more is a fresh
# mmap, so memory freed earlier in the process cannot hide a call's peak.
MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0"}
MB = 1024 * 1024


# ---------------------------------------------------------------------------
# The machine


def _cpu_model():
    with contextlib.suppress(OSError):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _git(*args):
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    return None


def _version(name):
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        return importlib.metadata.version(name)
    return None


def _machine_busy_s():
    """CPU seconds the whole machine has been busy (/proc/stat), or None."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:9]]
        return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
    return None


def _own_cpu_s():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class CpuMeter:
    """Share of the machine's CPU capacity used by *other* processes since
    creation (0.5 on 2 cores: one core busy elsewhere). None without /proc."""

    def __init__(self):
        self.start = (time.perf_counter(), _machine_busy_s(), _own_cpu_s())

    def others(self):
        wall0, busy0, own0 = self.start
        wall, busy = time.perf_counter() - wall0, _machine_busy_s()
        if busy is None or busy0 is None or wall <= 0:
            return None
        other = (busy - busy0) - (_own_cpu_s() - own0)
        return min(max(other / (wall * (os.cpu_count() or 1)), 0.0), 1.0)


def _command():
    """The command line, as ``python -m benchmarks ...`` when run as a module."""
    script = Path(sys.argv[0]).resolve()
    if script.parent == ROOT / "benchmarks":
        module = "benchmarks" if script.stem == "__main__" else f"benchmarks.{script.stem}"
        return " ".join(["python -m", module, *sys.argv[1:]])
    return " ".join(["python", *sys.argv])


def record(command=None):
    """Date, command, commit, machine and versions of a run."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command or _command(),
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "package_modified": bool(_git("status", "--porcelain", "--", "sklearn_ranknet")),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
        "versions": {name: v for name in VERSIONS if (v := _version(name))},
    }


@contextlib.contextmanager
def threads(n):
    """Everything on ``n`` threads: our metrics' pool (it uses every core
    joblib's ``cpu_count`` reports, which ``LOKY_MAX_CPU_COUNT`` caps),
    Numba's parallel layer (ranx) and BLAS / OpenMP (threadpoolctl)."""
    import numba
    from threadpoolctl import threadpool_limits

    before_env, before_numba = os.environ.get("LOKY_MAX_CPU_COUNT"), numba.get_num_threads()
    os.environ["LOKY_MAX_CPU_COUNT"] = str(n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    try:
        with threadpool_limits(n):
            yield
    finally:
        numba.set_num_threads(before_numba)
        if before_env is None:
            del os.environ["LOKY_MAX_CPU_COUNT"]
        else:
            os.environ["LOKY_MAX_CPU_COUNT"] = before_env


# ---------------------------------------------------------------------------
# Fresh processes


def peak_memory(func):
    """Call ``func()``; return ``(result, bytes)``: how far the resident memory
    rose above its level before the call, at its peak.

    Linux: the high-water mark (VmHWM) is reset just before the call
    (``/proc/self/clear_refs``); run the process with :data:`MEMORY_ENV`.
    Elsewhere: the peak of Python / NumPy allocations traced by tracemalloc
    (Numba's own allocations are then missed).
    """
    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024

    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = status("VmRSS:")
    except OSError:
        import tracemalloc

        tracemalloc.start()
        try:
            result = func()
            return result, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    result = func()
    return result, status("VmHWM:") - before


def _child():
    """Entry of a fresh process: run the function named in argv[1], print its result."""
    spec = json.loads(sys.argv[1])
    func = getattr(importlib.import_module(spec["module"]), spec["name"])
    print(RESULT_MARK + json.dumps(func(**spec["kwargs"]), default=json_default), flush=True)


def json_default(obj):
    """NumPy scalars and arrays as numbers and lists; anything else as text."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


# ---------------------------------------------------------------------------
# Formatting


def fmt(value):
    """A table cell: 3 significant digits, thousands separators, n/a for None."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:
            return "n/a"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    return str(value)


def pct(share):
    """A share of the machine (0..1) as a percentage cell."""
    return "n/a" if share is None else f"{100 * share:.0f} %"


class Harness:
    """What a suite measures with and writes through; see the module docstring."""

    def __init__(self, name, *, quick, out_dir, doc="", command=None):
        self.name, self.quick, self.out = name, quick, Path(out_dir)
        self.doc = (doc or "").strip()
        self.title = self.doc.splitlines()[0].rstrip(".") if self.doc else name
        self.record = record(command)
        self.sections, self.tables, self.targets, self.skipped, self.data = [], {}, [], [], {}
        self.started, self.meter = time.perf_counter(), CpuMeter()
        self.repeats = 3 if quick else 5
        self.min_total_s = 0.0 if quick else 1.0
        self.quick_caveat = "quick run: tiny sizes, not the benchmark's figure"

    def say(self, message):
        print(f"[{self.name} {time.perf_counter() - self.started:6.1f} s] {message}", flush=True)

    # -- measuring ---------------------------------------------------------

    def measure(self, func, *, repeats=None, warmup=1, min_total_s=None, max_repeats=100):
        """Time ``func()``: ``warmup`` untimed calls, then at least ``repeats``
        timed ones (more, up to ``max_repeats``, until ``min_total_s`` seconds
        are timed), with the garbage collector off as in ``timeit``.

        Returns a dict: ``min_s``, ``median_s``, ``n``, ``cpu_per_wall`` (this
        process; 2 = two cores busy) and ``others_cpu`` (share of the machine
        other processes used meanwhile).
        """
        repeats = repeats or self.repeats
        min_total_s = self.min_total_s if min_total_s is None else min_total_s
        for _ in range(warmup):
            func()
        warmup_module = sys.modules.get("sklearn_ranknet._warmup")
        if warmup_module is not None:
            warmup_module.wait()  # nothing compiles in the background (thread, helper) while timed
        gc.collect()
        enabled = gc.isenabled()
        gc.disable()
        meter, times, cpu = CpuMeter(), [], 0.0
        try:
            while len(times) < repeats or (sum(times) < min_total_s and len(times) < max_repeats):
                c0, t0 = time.process_time(), time.perf_counter()
                func()
                times.append(time.perf_counter() - t0)
                cpu += time.process_time() - c0
        finally:
            if enabled:
                gc.enable()
        return {"min_s": min(times), "median_s": statistics.median(times), "n": len(times),
                "cpu_per_wall": cpu / max(sum(times), 1e-12), "others_cpu": meter.others()}

    def fresh(self, func, *, env=None, timeout=3600, **kwargs):
        """``func(**kwargs)`` in a new Python process (the function must live at
        module level and return JSON-able data); ``env`` adds variables."""
        spec = json.dumps({"module": func.__module__, "name": func.__name__, "kwargs": kwargs},
                          default=json_default)
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        done = subprocess.run(
            [sys.executable, "-c", "from benchmarks._harness import _child; _child()", spec],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": path, **(env or {})},
            capture_output=True, text=True, timeout=timeout,
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_MARK)]
        if done.returncode or not lines:
            raise RuntimeError(f"{func.__name__} failed in a fresh process:\n{done.stderr[-3000:]}")
        return json.loads(lines[-1][len(RESULT_MARK):])

    def peer(self, module, why="its rows are skipped"):
        """Import an optional peer, or note that it is missing and return None."""
        top = module.split(".")[0]
        absent = os.environ.get("BENCHMARKS_WITHOUT", "").replace(" ", "").split(",")
        try:
            if top in absent:
                raise ImportError(f"{top} listed in BENCHMARKS_WITHOUT")
            return importlib.import_module(module)
        except ImportError:
            note = f"{top} is not installed: {why} (`pip install \".[bench]\"`)."
            if note not in self.skipped:
                self.skipped.append(note)
                self.say(note)
            return None

    # -- reporting ---------------------------------------------------------

    def note(self, text):
        self.sections.append(text)

    def table(self, title, rows, columns):
        """A Markdown table of ``rows`` (dicts); ``columns`` maps each header
        to a key or a function of the row. The rows go into the JSON as well."""
        self.tables[title] = rows
        lines = [f"### {title}", "", "| " + " | ".join(columns) + " |",
                 "|" + "---|" * len(columns)]
        for row in rows:
            cells = [fmt(c(row) if callable(c) else row.get(c)) for c in columns.values()]
            lines.append("| " + " | ".join(cells) + " |")
        self.sections.append("\n".join(lines))
        print("\n".join(lines), flush=True)

    def target(self, what, measured, limit, *, higher_is_better=False, unit="", reason=None):
        """Check a target; the line says MET or MISSED with the measured figure."""
        sign = ">=" if higher_is_better else "<="
        wanted = f"target {sign} {fmt(limit)}{unit}"
        if measured is None:
            verdict, line = None, f"NOT MEASURED: {what} ({reason or 'no figure'}; {wanted})"
        else:
            verdict = measured >= limit if higher_is_better else measured <= limit
            line = f"{'MET' if verdict else 'MISSED'}: {what}: {fmt(measured)}{unit} ({wanted})"
        if self.quick:
            line += f" [{self.quick_caveat}]"
        self.targets.append({"target": what, "measured": measured, "limit": limit,
                             "higher_is_better": higher_is_better, "met": verdict, "line": line})
        self.say(line)

    def plot(self, draw, *, ncols=1, size=(7.0, 4.0)):
        """``draw(axes)`` on a new figure, saved as NAME.png."""
        matplotlib = self.peer("matplotlib", "no plot")
        if matplotlib is None:
            return
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, ncols, figsize=size, squeeze=False)
        draw(*axes[0])
        fig.tight_layout()
        self.out.mkdir(parents=True, exist_ok=True)
        fig.savefig(self.out / f"{self.name}.png", dpi=110)
        plt.close(fig)
        self.sections.append(f"![{self.name}]({self.name}.png)")

    def write(self):
        """NAME.json (everything) and NAME.md (tables, targets, the record)."""
        r = self.record
        r["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        r["others_cpu"] = self.meter.others()
        r["wall_s"] = round(time.perf_counter() - self.started, 1)
        head = [
            f"# {self.title}" + (" (quick run)" if self.quick else ""), "",
            f"{r['date']}, `{r['command']}`, commit {r['git_commit']}"
            + (" (package modified)" if r["package_modified"] else "")
            + f"; {r['cpu_model']}, {r['cores']} cores, {r['platform']}, Python {r['python']}; "
            f"load average {r['load_average_start'][0]} at start, {r['load_average_end'][0]} at end;"
            f" other processes used {pct(r['others_cpu'])} of the CPU; wall time {r['wall_s']} s.", "",
            ", ".join(f"{k} {v}" for k, v in r["versions"].items()), "",
        ]
        if self.targets:
            head += ["## Targets", ""] + [f"- {t['line']}" for t in self.targets] + [""]
        body = self.sections + [f"*Skipped*: {s}" for s in self.skipped]
        text = "\n".join(head + ["## Results", ""] + [s + "\n" for s in body]
                         + ["## Method", "", self.doc, ""])
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / f"{self.name}.md").write_text(text)
        result = {"suite": self.name, "quick": self.quick, "record": r, "targets": self.targets,
                  "tables": self.tables, "skipped": self.skipped, "data": self.data}
        (self.out / f"{self.name}.json").write_text(
            json.dumps(result, indent=1, default=json_default) + "\n")
        self.say(f"wrote {self.out / self.name}.md and .json")
