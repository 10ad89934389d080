"""Analysis dicts for renderer tests: recorded traces, a tiny generated trace, a hand-made
zero-GPU report, and `plant()` which puts hostile text into every string field that comes from a
trace."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest

import gpuscope

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / ".." / "shared" / "reference" / "traces"
# recorded-for-gpuscope traces that the repository also carries (so the tests run without shared/)
BUNDLED = (REPO / "tests" / "data", REPO / "src" / "gpuscope" / "data" / "examples")
SCRIPT = "<script>alert(1)</script>"
HOSTILE = f"{SCRIPT} | `tick` & \"quote\" 'apos' <img src=x onerror=alert(2)>"
CATEGORIES = ("gemm", "attention", "convolution", "normalization", "elementwise", "reduction")
CATEGORIES += ("softmax", "memcpy", "memset", "communication", "other")
BUCKETS = ((0.0, 1.0), (1.0, 2.0), (2.0, 5.0), (5.0, 10.0), (10.0, 20.0), (20.0, None))


def recorded(name: str) -> dict[str, Any]:
    """The analysis of a recorded trace: the repository's copy, else the reference folder's."""
    path = next((d / name for d in BUNDLED if (d / name).is_file()), REFERENCE / name)
    if not path.is_file():
        pytest.skip(f"reference trace {path} not found (sibling shared/ checkout absent)")
    return copy.deepcopy(_analyze(str(path)))


@functools.cache
def _analyze(path: str) -> dict[str, Any]:
    result: dict[str, Any] = gpuscope.analyze(path).to_dict()
    return result


def tiny_trace(folder: Path, kernel: str = "void gemm_kernel<float>(float*)") -> dict[str, Any]:
    """Three launches of one kernel (30.5 µs each, 50 µs apart) written as Kineto JSON, analyzed."""
    events: list[dict[str, Any]] = []
    for i in range(3):
        ts, corr = 1000.0 + 50 * i, i + 1
        events += [
            _x("cpu_op", "aten::mm", 1, ts, 20, {"External id": corr}),
            _x("cuda_runtime", "cudaLaunchKernel", 1, ts + 2, 5, {"correlation": corr}),
            _x("kernel", kernel, 7, ts + 10, 30.5, {"device": 0, "stream": 7, "correlation": corr}),
        ]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Test GPU"}]}
    path = folder / "tiny.json"
    path.write_text(json.dumps({**doc, "traceEvents": events}))
    result: dict[str, Any] = gpuscope.analyze(str(path)).to_dict()
    return result


def _x(
    cat: str, name: str, tid: int, ts: float, dur: float, args: dict[str, Any]
) -> dict[str, Any]:
    pid = 0 if cat == "kernel" else 1
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def zero_gpu_report(path: str = "/runs/cpu_only.json") -> dict[str, Any]:
    """A hand-made report of a trace without any GPU event (every GPU number zero)."""
    zero = {"count": 0, "time_us": 0.0}
    return {
        "schema": "gpuscope.analysis/1",
        "gpuscope_version": "0.1.0",
        "source": {
            "path": path,
            "format": "kineto",
            "schema": "current",
            "vendor": "unknown",
            "devices": [],
            "rank": None,
            "world_size": None,
            "truncated": False,
            "warnings": [],
            "event_counts": {"cpu_op": 4},
        },
        "window_us": 1500.0,
        "kernels": {
            "count": 0,
            "time_us": 0.0,
            "mean_us": 0.0,
            "median_us": 0.0,
            "unique_names": 0,
            "short": {"threshold_us": 10.0, "count": 0, "share": 0.0, "time_us": 0.0},
        },
        "memcpy": {"count": 0, "time_us": 0.0, "bytes": 0, "by_kind": {}},
        "memset": {"count": 0, "time_us": 0.0, "bytes": 0},
        "categories": {c: {**zero, "share": 0.0} for c in CATEGORIES},
        "unclassified_share": 0.0,
        "gemm_share": 0.0,
        "gpu_busy_us": 0.0,
        "span_us": 0.0,
        "idle_us": 0.0,
        "utilization": 0.0,
        "devices": [],
        "gaps": _zero_gaps(),
        "launch": {
            "kernels": 0,
            "linked": 0,
            "launch_calls": 0,
            "launch_api_time_us": 0.0,
            "launch_api_mean_us": 0.0,
            "graph_launches": 0,
            "graph_kernels": 0,
            "kernels_per_graph_launch": 0.0,
            "queue_delay_us": {},
            "kernels_per_ms": 0.0,
            "steps": 0,
            "kernels_per_step": None,
        },
        "sync": {"count": 0, "time_us": 0.0, "share": 0.0, "target_share": 0.05, "by_name": {}},
        "cpu": {"op_time_us": 12.5, "threads": 1},
        "verdict": {
            "bound": "no-gpu-activity",
            "reason": "the trace holds no GPU activity",
            "utilization": 0.0,
            "thresholds": {"gpu_bound_utilization": 0.8, "sync_bound_share": 0.15},
        },
        "top_kernels": [],
        "findings": [],
        "integrity": [
            {
                "id": "no-gpu-events",
                "message": "the trace holds no GPU events",
                "affects": ["kernels", "gpu_busy_us"],
            }
        ],
    }


def _zero_gaps() -> dict[str, Any]:
    zero = {"count": 0, "time_us": 0.0}
    return {
        "count": 0,
        "total_us": 0.0,
        "micro_threshold_us": 10.0,
        "micro": zero,
        "macro": zero,
        "histogram": [{"lo_us": lo, "hi_us": hi, **zero} for lo, hi in BUCKETS],
        "attribution": {
            c: {**zero, "share": 0.0} for c in ("sync_drain", "host_wait", "kernel_wait", "unknown")
        },
    }


def plant(report: dict[str, Any], text: str = HOSTILE) -> dict[str, Any]:
    """A copy of `report` with `text` in every string a trace can put there."""
    out = copy.deepcopy(report)
    source = out["source"]
    source["path"] = f"/tmp/{text}/trace.json"
    source["devices"] = [{"id": 0, "name": text}]
    source["warnings"] = [f"reader: {text}"]
    source["event_counts"] = {text: 1}
    out["devices"] = [{**d, "name": text} for d in out["devices"]]
    out["top_kernels"] = [{**k, "name": f"{text}{i}"} for i, k in enumerate(out["top_kernels"])]
    out["sync"]["by_name"] = {text: {"count": 1, "time_us": 2.0}}
    out["memcpy"]["by_kind"] = {
        text: {"count": 1, "time_us": 1.0, "bytes": 8, "pageable": 1, "pinned": 0}
    }
    out["integrity"] = [{"id": "flag", "message": text, "affects": [text]}]
    out["findings"] = [
        {
            "id": text,
            "severity": "warning",
            "message": text,
            "action": text,
            "evidence": {
                "op": text,
                "ops": {text: {"count": 1, "gpu_time_us": 3.0}},
                "top_kernels": [text],
                "rows": [{"name": text, "time_us": 1.0}],
                "launched_by": {text: 2},
            },
        },
    ]
    return out
