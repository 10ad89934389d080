"""Speed and memory of `gpuscope analyze` on large real-structured traces (not a timed test).

For each size (the recorded decode trace repeated ×N by `make_big_trace.py`) this runs, each as
its own process, measured from outside with `os.wait4` (wall time and that process's peak RSS):

- `gpuscope analyze FILE --json OUT`                        — what a user runs;
- `benchmarks/_decode_floor.py FILE`                        — read + ONE msgspec typed decode:
                                                              the parsing floor;
- `benchmarks/_hta_load.py FILE` in HolisticTraceAnalysis's own venv, when one is given.

Prints a Markdown table (the one in docs/performance.md) and writes every sample as JSON.

    python benchmarks/bench_analyze.py --copies 10 100 --repeat 3 \\
        --hta-python /tmp/hta-venv/bin/python --delete-after 100
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO / "bench-data"
KERNELS_PER_COPY = 7160  # kernels in llama_decode_h200.json.gz (see tests/data/golden)


@dataclass
class Sample:
    wall_s: float
    peak_rss_mb: float
    rc: int
    load_1m: float  # the machine's 1-minute load average just before the run
    tail: str
    cpu_s: float = 0.0  # user + system CPU time of the process (its threads summed)
    # the largest sum of the proportional set size (PSS: a page shared by k processes counts
    # 1/k in each) of the process and its children (worker processes), sampled every 50 ms in
    # the memory run only (0 in timed runs)
    tree_rss_mb: float = 0.0


@dataclass
class Tool:
    """One measured command over several repeats."""

    samples: list[Sample] = field(default_factory=list)
    skipped: str = ""

    @property
    def ok(self) -> list[Sample]:
        return [s for s in self.samples if s.rc == 0]

    def median(self, key: str) -> float | None:
        values = [getattr(s, key) for s in self.ok]
        return statistics.median(values) if values else None


def measure(argv: list[str], timeout_s: float, tree: bool = False) -> Sample:
    """Run `argv` as its own process; wall time and its own peak RSS (wait4 rusage)."""
    load = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        # as a user's install runs: with the bytecode cache (this VM sets PYTHONDONTWRITEBYTECODE)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env)
        rc, rusage, tree_mb = _wait(process, start + timeout_s, tree)
        wall = time.perf_counter() - start
        log.seek(0)
        tail = log.read().decode("utf-8", "replace")[-600:]
    cpu = rusage.ru_utime + rusage.ru_stime
    peak = round(rusage.ru_maxrss / 1024, 1)
    return Sample(round(wall, 3), peak, rc, load, tail, round(cpu, 3), max(tree_mb, peak))


def _wait(
    process: subprocess.Popen[bytes], deadline: float, sample: bool
) -> tuple[int, Any, float]:
    """Exit code, rusage and (with `sample`) the largest PSS of the process tree: sampling
    costs the measured process time on 2 cores, so timed runs do not sample."""
    tree, polls = 0.0, 0
    while True:
        if sample and polls % 5 == 0:
            tree = max(tree, _tree_pss_mb(process.pid))
        polls += 1
        pid, status, rusage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, rusage, round(tree, 1)
        if time.perf_counter() > deadline:
            process.kill()
        time.sleep(0.01)


def _tree_pss_mb(pid: int) -> float:
    """PSS of a process and all its descendants now (MB; 0 for one that is gone)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            rollup = Path(f"/proc/{p}/smaps_rollup").read_text()
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in rollup.splitlines()
                       if line.startswith("Pss:")), 0)  # fmt: skip
        todo += [int(c) for c in children]
    return total / 1024


def machine() -> dict[str, Any]:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo") if "model name" in line),
        platform.processor(),
    )
    mem = next((line.split()[1] for line in _lines("/proc/meminfo") if "MemTotal" in line), "0")
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(int(mem) / 2**20, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "msgspec": _version("msgspec"),
        "numpy": _version("numpy"),
        "gpuscope_commit": _git_sha(),
    }


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "absent"


def _git_sha() -> str:
    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return result.stdout.strip() or "unknown"


def big_trace(copies: int, source: Path | None = None) -> Path:
    path = DATA / f"llama_decode_h200_x{copies}.json"
    if not path.exists():
        extra = ["--source", str(source)] if source else []
        subprocess.run(
            [sys.executable, str(HERE / "make_big_trace.py"), str(copies), *extra], check=True
        )
    return path


def commands(path: Path, out: Path, hta_python: str | None) -> dict[str, list[str] | None]:
    gpuscope = [sys.executable, "-m", "gpuscope", "analyze", str(path), "--json", str(out)]
    # the same command reading in one process (no worker processes)
    one = ["env", "GPUSCOPE_READ_WORKERS=1", *gpuscope[:-1], str(_one_process(out))]
    floor = [sys.executable, str(HERE / "_decode_floor.py"), str(path)]
    hta = [hta_python, str(HERE / "_hta_load.py"), str(path)] if hta_python else None
    return {"gpuscope": gpuscope, "gpuscope_1proc": one, "decode_floor": floor, "hta": hta}


def _one_process(out: Path) -> Path:
    return out.with_name(out.stem + "_1proc.json")


def run_size(copies: int, options: argparse.Namespace) -> dict[str, Any]:
    path = big_trace(copies, options.source)
    out = DATA / f"analysis_x{copies}.json"
    hta_python = options.hta_python if copies <= options.hta_max_copies else None
    tools = {name: Tool() for name in ("gpuscope", "gpuscope_1proc", "decode_floor", "hta")}
    for _ in range(options.repeat):
        for name, argv in commands(path, out, hta_python).items():
            if argv is None:
                continue
            sample = measure(argv, options.timeout)
            tools[name].samples.append(sample)
            print(f"x{copies} {name}: {sample.wall_s} s, {sample.peak_rss_mb} MB, rc {sample.rc}")
    # one more run of the command, untimed, for the memory of its whole process tree
    memory = measure(commands(path, out, None)["gpuscope"] or [], options.timeout, tree=True)
    print(f"x{copies} gpuscope (memory run): {memory.tree_rss_mb} MB PSS of all processes")
    if hta_python is None:
        tools["hta"].skipped = _hta_skip_reason(copies, options)
    row = {
        "memory_run": asdict(memory),
        "copies": copies,
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "kernels": _kernel_count(out),
        # the report must not depend on how many processes read the file
        "same_report_in_one_process": _same_report(out, _one_process(out)),
        "tools": {
            k: {"samples": [asdict(s) for s in t.samples], "skipped": t.skipped}
            for k, t in tools.items()
        },
    }
    row["summary"] = _summary(row, tools)
    if options.delete_after is not None and copies >= options.delete_after:
        path.unlink()
    return row


def _same_report(a: Path, b: Path) -> bool | None:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return None


def _hta_skip_reason(copies: int, options: argparse.Namespace) -> str:
    if not options.hta_python:
        return "no --hta-python given"
    return f"not run above x{options.hta_max_copies} (--hta-max-copies)"


def _kernel_count(out: Path) -> int | None:
    try:
        count: int = json.loads(out.read_text())["kernels"]["count"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return count


def _summary(row: dict[str, Any], tools: dict[str, Tool]) -> dict[str, Any]:
    wall = {name: tool.median("wall_s") for name, tool in tools.items()}
    rss = {name: tool.median("peak_rss_mb") for name, tool in tools.items()}
    analyze, floor = wall["gpuscope"], wall["decode_floor"]
    return {
        "wall_s": wall,
        "cpu_s": {name: tool.median("cpu_s") for name, tool in tools.items()},
        "peak_rss_mb": rss,
        "tree_pss_mb": row["memory_run"]["tree_rss_mb"],
        "ms_per_mb": {k: _per_mb(v, row["file_mb"]) for k, v in wall.items()},
        "analyze_over_floor": round(analyze / floor, 2) if analyze and floor else None,
        "one_process_over_floor": _ratio(wall["gpuscope_1proc"], floor),
        "load_1m_max": max((s.load_1m for t in tools.values() for s in t.samples), default=None),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def _per_mb(seconds: float | None, mb: float) -> float | None:
    return round(1000 * seconds / mb, 2) if seconds is not None else None


def markdown(rows: list[dict[str, Any]]) -> str:
    head = (
        "| trace | MB | kernels | analyze s (CPU s) | analyze peak RSS MB (all processes' PSS) "
        "| one process s (CPU s) | its RSS MB | decode floor s | floor RSS MB "
        "| analyze / floor | one process / floor | HTA load s | HTA RSS MB | load avg |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for row in rows:
        s = row["summary"]
        wall, cpu, rss = s["wall_s"], s["cpu_s"], s["peak_rss_mb"]
        cells = [
            f"×{row['copies']}",
            row["file_mb"],
            row["kernels"],
            f"{wall['gpuscope']} ({cpu['gpuscope']})",
            f"{rss['gpuscope']} ({s['tree_pss_mb']})",
            f"{wall['gpuscope_1proc']} ({cpu['gpuscope_1proc']})",
            rss["gpuscope_1proc"],
            wall["decode_floor"],
            rss["decode_floor"],
            s["analyze_over_floor"],
            s["one_process_over_floor"],
            wall["hta"] if wall["hta"] is not None else "—",
            rss["hta"] if rss["hta"] is not None else "—",
            f"≤ {s['load_1m_max']}",
        ]
        lines.append("| " + " | ".join("—" if c is None else str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per command")
    parser.add_argument("--hta-python", help="python of a venv with HolisticTraceAnalysis")
    parser.add_argument("--hta-max-copies", type=int, default=10)
    parser.add_argument("--delete-after", type=int, help="delete trace files of ≥ this many copies")
    parser.add_argument("--results", type=Path, default=DATA / "bench_analyze.json")
    parser.add_argument("--source", type=Path, help="the recorded trace to repeat (default: "
                        "../shared/reference/traces/llama_decode_h200.json.gz)")  # fmt: skip
    options = parser.parse_args(argv)
    rows = [run_size(copies, options) for copies in options.copies]
    result = {"schema": "gpuscope.bench-analyze/1", "machine": machine(), "sizes": rows}
    options.results.parent.mkdir(parents=True, exist_ok=True)
    options.results.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["machine"]))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
