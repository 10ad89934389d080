"""Speed and memory of gpuscope's rpd, rocpd and rocprofv3-CSV readers at 1-10 M kernels (not a
timed test).

For each size N (kernel dispatches) the benchmark builds, in bench-data/ (git-ignored), one file
per format holding the same synthetic workload (`make_big_sqlite.Workload`, seed 0, with as many
ops as give exactly N kernels; the databases also hold its memory copies, one op in 100, and a
launching API call per op):

- rpd:   `big_<ops>.rpd`                    (make_big_sqlite.make_rpd, RPD schema 2),
- rocpd: `big_<ops>x1_results.db`           (make_big_sqlite.make_rocpd, rocpd schema 3),
- csv:   `big_<ops>_kernel_trace.csv`       (make_big_csv.make_csv, ROCm 7 kernel_trace header);
- nsys:  `big_<ops>.nsys.sqlite`            (make_big_nsys.make_nsys, nsys 2025.3 export; only
                                             with `--formats ... nsys`).

Then, interleaved and repeated, each its own process measured from outside with `os.wait4`
(wall time, that process's own peak RSS):

- analyze:        `gpuscope analyze FILE --json OUT -q` (read + model + every analysis + JSON);
- floor (same):   `_read_floor.py FMT same FILE`: a plain read into numpy of every table and
                  column the reader reads — the target's "fastest plain read of the same rows";
- floor (kernels): `_read_floor.py FMT kernels FILE`: only start, end, device, stream and name
                  of each kernel (a stricter comparison, reported beside it).

Checks, per analyze run: the report's kernel count is N, and its GPU busy time equals the union of
the generator's op intervals (kernels and copies for the databases, kernels for the CSV),
computed here by a plain sorted sweep over the generator's arrays. Prints a Markdown table (wall
seconds, with the process's user + system CPU seconds in brackets: the machine is shared, and CPU
time is what other processes' load does not inflate) and writes every sample to
bench-data/bench_readers.json.

    python benchmarks/bench_readers.py --kernels 1000000 3000000 10000000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_analyze import Sample, machine, measure  # noqa: E402

DATA = HERE.parent / "bench-data"
FORMATS = ("rpd", "rocpd", "csv", "nsys")
TOOLS = ("analyze", "floor_same", "floor_kernels")


def data_file(fmt: str, ops: int) -> Path:
    names = {
        "rpd": f"big_{ops}.rpd",
        "rocpd": f"big_{ops}x1_results.db",
        "csv": f"big_{ops}_kernel_trace.csv",
        "nsys": f"big_{ops}.nsys.sqlite",
    }
    return DATA / names[fmt]


def build(fmt: str, ops: int) -> dict[str, Any]:
    """Make the file unless it is there (in a child process, into a scratch folder first, so an
    interrupted build leaves nothing that looks whole); how long that took and its size."""
    path = data_file(fmt, ops)
    began = time.perf_counter()
    made = not path.exists()
    if made:
        scratch = DATA / ".partial"
        scratch.mkdir(parents=True, exist_ok=True)
        script = {"csv": "make_big_csv.py", "nsys": "make_big_nsys.py"}.get(fmt)
        argv = [sys.executable, str(HERE / (script or "make_big_sqlite.py"))]
        argv += ["--rows", str(ops), "--out", str(scratch)]
        if script is None:
            argv += ["--format", fmt]
        subprocess.run(argv, check=True)
        (scratch / path.name).rename(path)
    seconds = round(time.perf_counter() - began, 1) if made else None
    return {"path": str(path), "mb": round(path.stat().st_size / 1e6, 1), "build_s": seconds}


def truth(ops: int) -> dict[str, int]:
    """`_truth(ops)` in a child process: this process must stay small, since a child started
    with vfork + exec inherits its parent's peak RSS as the start of its own ru_maxrss."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--truth", str(ops)]
    result: dict[str, int] = json.loads(subprocess.run(argv, check=True, capture_output=True,
                                                       text=True).stdout)  # fmt: skip
    return result


def _truth(ops: int) -> dict[str, int]:
    """Kernel count and busy ns (union of [start, end)) straight from the generator's arrays."""
    import make_big_sqlite

    work = make_big_sqlite.Workload(ops, seed=0)
    kernels = ~work.copy
    return {
        "kernels": int(kernels.sum()),
        "busy_ns_all_ops": _union_ns(work.start.tolist(), work.end.tolist()),
        "busy_ns_kernels": _union_ns(work.start[kernels].tolist(), work.end[kernels].tolist()),
    }


def _union_ns(starts: list[int], ends: list[int]) -> int:
    """Total length of the union of intervals: one sorted sweep, in plain Python."""
    total = 0
    lo = hi = None
    for start, end in sorted(zip(starts, ends, strict=True)):
        if hi is None or start > hi:
            if hi is not None and lo is not None:
                total += hi - lo
            lo, hi = start, end
        elif end > hi:
            hi = end
    if hi is not None and lo is not None:
        total += hi - lo
    return total


def rows_for_kernels(kernels: int) -> int:
    """make_big_csv.rows_for_kernels without importing numpy here (see `truth`)."""

    def made(rows: int) -> int:
        return rows - rows // 100

    rows = kernels + kernels // 99
    while made(rows) < kernels:
        rows += 1
    while rows > 0 and made(rows - 1) >= kernels:
        rows -= 1
    if made(rows) != kernels:
        raise SystemExit(f"no op count gives exactly {kernels} kernels")
    return rows


def commands(fmt: str, path: Path, out: Path) -> dict[str, list[str]]:
    python, floor = sys.executable, str(HERE / "_read_floor.py")
    return {
        "analyze": [python, "-m", "gpuscope", "analyze", str(path), "--json", str(out), "-q"],
        "floor_same": [python, floor, fmt, "same", str(path)],
        "floor_kernels": [python, floor, fmt, "kernels", str(path)],
    }


def check(fmt: str, out: Path, expected: dict[str, int]) -> dict[str, Any]:
    """The report's kernel count and busy time against the generator's."""
    try:
        report = json.loads(out.read_text())
    except (OSError, ValueError) as error:
        return {"ok": False, "why": f"no report: {error}"}
    busy_ns = expected["busy_ns_kernels" if fmt == "csv" else "busy_ns_all_ops"]
    count = report.get("kernels", {}).get("count")
    busy_us = report.get("gpu_busy_us")
    ok = count == expected["kernels"] and busy_us is not None and round(busy_us * 1000) == busy_ns
    return {"ok": ok, "kernels": count, "gpu_busy_us": busy_us, "expected_busy_ns": busy_ns}


def run_size(kernels: int, options: argparse.Namespace) -> dict[str, Any]:
    ops = rows_for_kernels(kernels)
    files = {fmt: build(fmt, ops) for fmt in options.formats}
    for fmt, info in files.items():
        print(f"{kernels} kernels, {fmt}: {info}", flush=True)
    expected = truth(ops)
    if expected["kernels"] != kernels:
        raise SystemExit(f"the generator made {expected['kernels']} kernels, not {kernels}")
    samples: dict[str, dict[str, list[Sample]]] = {
        fmt: {tool: [] for tool in TOOLS} for fmt in options.formats
    }
    checks: dict[str, list[dict[str, Any]]] = {fmt: [] for fmt in options.formats}
    for _ in range(options.repeat):
        for fmt in options.formats:
            out = DATA / f"analysis_readers_{fmt}_{kernels}.json"
            for tool, argv in commands(fmt, Path(files[fmt]["path"]), out).items():
                out.unlink(missing_ok=True)
                sample = measure(argv, options.timeout)
                samples[fmt][tool].append(sample)
                line = f"{kernels} {fmt} {tool}: {sample.wall_s} s, {sample.peak_rss_mb} MB"
                if tool == "analyze":
                    checks[fmt].append(check(fmt, out, expected))
                    line += f", check {checks[fmt][-1]}"
                print(f"{line}, rc {sample.rc}, load {sample.load_1m}", flush=True)
    row = {
        "kernels": kernels,
        "ops": ops,
        "expected": expected,
        "files": files,
        "formats": {
            fmt: {
                "samples": {t: [asdict(s) for s in samples[fmt][t]] for t in TOOLS},
                "checks": checks[fmt],
                "summary": _summary(samples[fmt], checks[fmt], kernels),
            }
            for fmt in options.formats
        },
    }
    if options.delete_after is not None and kernels >= options.delete_after:
        for info in files.values():
            Path(info["path"]).unlink()
    return row


def _summary(
    samples: dict[str, list[Sample]], checks: list[dict[str, Any]], kernels: int
) -> dict[str, Any]:
    def median(tool: str, key: str) -> float | None:
        values = [getattr(s, key) for s in samples[tool] if s.rc == 0]
        return statistics.median(values) if values else None

    wall = {tool: median(tool, "wall_s") for tool in TOOLS}
    cpu = {tool: median(tool, "cpu_s") for tool in TOOLS}
    rss = {tool: median(tool, "peak_rss_mb") for tool in TOOLS}
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss_mb": rss,
        "us_per_kernel": {t: _per(v, kernels, 1e6) for t, v in wall.items()},
        "bytes_per_kernel": {t: _per(v, kernels, 2**20) for t, v in rss.items()},
        "over_floor_same": _ratio(wall["analyze"], wall["floor_same"]),
        "over_floor_kernels": _ratio(wall["analyze"], wall["floor_kernels"]),
        "cpu_over_floor_same": _ratio(cpu["analyze"], cpu["floor_same"]),
        "cpu_over_floor_kernels": _ratio(cpu["analyze"], cpu["floor_kernels"]),
        "checks_ok": bool(checks) and all(c["ok"] for c in checks),
        "load_1m_max": max((s.load_1m for v in samples.values() for s in v), default=None),
    }


def _per(value: float | None, kernels: int, scale: float) -> float | None:
    return round(value * scale / kernels, 2) if value is not None else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def markdown(rows: list[dict[str, Any]]) -> str:
    """Times as wall (CPU) seconds; ratios likewise."""
    lines = [
        "| format | kernels | file MB | analyze s | µs/kernel | analyze RSS MB | B/kernel "
        "| floor (same) s | floor RSS MB | analyze / floor | floor (kernels) s "
        "| analyze / kernels floor | checks | load avg |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in rows:
        for fmt, data in row["formats"].items():
            s = data["summary"]
            wall, cpu = s["wall_s"], s["cpu_s"]
            cells = [
                fmt,
                f"{row['kernels']:,}",
                row["files"][fmt]["mb"],
                _pair(wall["analyze"], cpu["analyze"]),
                s["us_per_kernel"]["analyze"],
                s["peak_rss_mb"]["analyze"],
                s["bytes_per_kernel"]["analyze"],
                _pair(wall["floor_same"], cpu["floor_same"]),
                s["peak_rss_mb"]["floor_same"],
                _pair(s["over_floor_same"], s["cpu_over_floor_same"]),
                _pair(wall["floor_kernels"], cpu["floor_kernels"]),
                _pair(s["over_floor_kernels"], s["cpu_over_floor_kernels"]),
                "ok" if s["checks_ok"] else "FAILED",
                f"≤ {s['load_1m_max']}",
            ]
            lines.append("| " + " | ".join("—" if c is None else str(c) for c in cells) + " |")
    return "\n".join(lines)


def _pair(wall: float | None, cpu: float | None) -> str:
    if wall is None:
        return "—"
    return f"{wall:.2f} ({cpu:.2f})" if cpu is not None else f"{wall:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, nargs="+", default=[1_000_000, 3_000_000])
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS[:3]))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per command")
    parser.add_argument("--delete-after", type=int, help="delete the files of ≥ this many kernels")
    parser.add_argument("--results", type=Path, default=DATA / "bench_readers.json")
    parser.add_argument("--truth", type=int, metavar="OPS", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.truth is not None:
        print(json.dumps(_truth(options.truth)))
        return 0
    rows = []
    for kernels in options.kernels:
        rows.append(run_size(kernels, options))
        result = {
            "schema": "gpuscope.bench-readers/1",
            "machine": machine(),
            "disk_free_gb": round(shutil.disk_usage(DATA).free / 1e9, 1),
            "pythonpath": os.environ.get("PYTHONPATH", ""),  # a source snapshot, if measured
            "sizes": rows,
        }
        options.results.parent.mkdir(parents=True, exist_ok=True)
        options.results.write_text(json.dumps(result, indent=1) + "\n")  # after every size
    print(json.dumps(result["machine"]))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
