"""Every reference trace and profiler output, exported and checked by the independent checker;
Kineto exports compared with the original file read with plain `json`."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuscope.export import export_perfetto
from tests.unit.export.chrome_trace_check import check, load

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference"
TRACES = sorted(p.name for p in (REFERENCE / "traces").glob("*.json*"))
FORMAT_DIRS = [
    "rocprof-v1/hip-programming-gfx942",
    "rocprof-v1/hpctraining-finite-difference-mi250",
    "rocprof-v1/kokkos-rocm4-2021",
    "rocprofv3/amd-docs-rocm6.2-2024-10",
    "rocprofv3/amd-docs-rocm7-2025-08",
    "rocprofv3/hpctraining-readme-excerpts-mi300a",
    "rocprofv3/rocpd-db-gfx942",
    "rpd",
    "nsys",
    "ncu-csv",
]
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def reference(*parts: str) -> Path:
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared reference file not found: {path}")
    return path


def exported(source: Path, tmp_path: Path, skip_bad: bool = False) -> dict[str, Any]:
    out = tmp_path / "timeline.json.gz"
    export_perfetto([source], out, skip_bad=skip_bad)
    report = check(str(out))
    assert report.ok, report.errors
    data: dict[str, Any] = load(str(out))
    return data


@pytest.mark.parametrize("name", TRACES or ["(none)"])
def test_kineto_reference_exports_match_the_original(name: str, tmp_path: Path) -> None:
    source = reference("traces", name)
    data = exported(source, tmp_path)
    original = _original_device_events(source)
    ours = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] in DEVICE_CATS]
    assert Counter(e["cat"] for e in ours) == Counter(e["cat"] for e in original)
    # same names, durations and spacing (ns) as the original, whatever the origin
    assert _relative(ours) == _relative(original)


def _original_device_events(path: Path) -> list[dict[str, Any]]:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        events = json.load(f, strict=False, parse_float=Decimal)["traceEvents"]
    cats = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "gpu_memcpy",
            "Memcpy": "gpu_memcpy", "gpu_memset": "gpu_memset", "Memset": "gpu_memset"}  # fmt: skip
    found = []
    for event in events:
        if event.get("ph") == "X" and event.get("cat") in cats:
            found.append({**event, "cat": cats[event["cat"]]})
    return found


def _relative(events: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    if not events:
        return []
    first = min(_ns(e["ts"]) for e in events)
    return sorted((e["name"], _ns(e["ts"]) - first, _ns(e["dur"])) for e in events)


def _ns(us: Any) -> int:
    """µs → ns exactly for the original's Decimal text; as a viewer rounds for our floats."""
    if isinstance(us, (Decimal, int)):
        return round(Decimal(us) * 1000)
    return round(float(us) * 1000)


@pytest.mark.parametrize("folder", FORMAT_DIRS)
def test_profiler_outputs_export_cleanly(folder: str, tmp_path: Path) -> None:
    # skip_bad: a folder such as ncu-csv/ holds outputs gpuscope cannot read (a 1-line file),
    # which are an error without it (test_a_folder_with_a_bad_trace_is_an_error)
    data = exported(reference("formats", folder), tmp_path, skip_bad=True)
    meta = data["gpuscope"]
    assert meta["schema"] == "gpuscope.perfetto/1"
    device = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] in DEVICE_CATS]
    assert device, "no device work exported"
    written = sum(s["written"].get("device slices", 0) for s in meta["sources"])
    assert written == len(device)


def test_a_folder_with_a_bad_trace_is_an_error(tmp_path: Path) -> None:
    """Without skip_bad, a trace of the folder that cannot be read is an error naming it, and
    nothing is written; with it, a warning that leaves it out."""
    from gpuscope.errors import GpuscopeError

    folder = tmp_path / "run"
    folder.mkdir()
    good = reference("traces", "llama_decode_h200.json.gz")
    (folder / "a.json.gz").write_bytes(good.read_bytes())
    (folder / "b.json").write_text('{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": "x"')
    out = tmp_path / "timeline.json"
    with pytest.raises(GpuscopeError, match=r"b\.json"):
        export_perfetto([folder], out)
    assert not out.exists()
    result = export_perfetto([folder], out, skip_bad=True)
    assert any("left out" in w and "b.json" in w for w in result.warnings)
    assert out.exists()


def test_launch_flows_join_runtime_calls_and_kernels(tmp_path: Path) -> None:
    """One arrow per kernel whose correlation id is a runtime call's, counted from the JSON."""
    source = reference("traces", "llama_decode_h200.json.gz")
    data = exported(source, tmp_path)
    with gzip.open(source, "rt") as f:
        events = json.load(f)["traceEvents"]
    launches = {e["args"]["correlation"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"
                and "correlation" in e.get("args", {})}  # fmt: skip
    kernels = [e for e in events if e.get("cat") in DEVICE_CATS and e.get("ph") == "X"]
    linked = sum(e.get("args", {}).get("correlation") in launches for e in kernels)
    finishes = [e for e in data["traceEvents"] if e["ph"] == "f"]
    assert len(finishes) == linked > 7000


def test_nsys_session_clock_is_put_on_the_epoch(tmp_path: Path) -> None:
    """nsys: ns since the session start + the start's utcEpochNs (from the SQLite export)."""
    import sqlite3

    source = reference("formats", "nsys", "vectoraddition-a100-nsys2022.2", "report4.sqlite")
    data = exported(source, tmp_path)
    with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as db, db:
        (epoch,) = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
        (first,) = db.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    timeline = data["gpuscope"]["timeline"]
    assert timeline["clock"] == "realtime"
    kernels = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"]
    first_ts = min(round(float(e["ts"]) * 1000) for e in kernels)
    assert timeline["origin_ns"] + first_ts == epoch + first


def test_two_ranks_share_one_timeline(tmp_path: Path) -> None:
    """Both ranks on the epoch: their first kernels keep the distance the files say."""
    paths = [reference("traces", f"hta__a100_sampled_rank-{r}.json.gz") for r in (0, 1)]
    out = tmp_path / "ranks.json.gz"
    export_perfetto(paths, out)
    report = check(str(out))
    assert report.ok, report.errors
    data = load(str(out))
    firsts = [min(_ns(e["ts"]) for e in _original_device_events(p)) for p in paths]
    labels = [s["label"] for s in data["gpuscope"]["sources"]]
    pids = {e["pid"]: e["args"]["name"] for e in data["traceEvents"] if e["name"] == "process_name"}
    first_seen = []
    for label in labels:
        mine = {pid for pid, name in pids.items() if name.startswith(label + " ·")}
        kernels = [e for e in data["traceEvents"] if e["ph"] == "X" and e["pid"] in mine
                   and e["cat"] in DEVICE_CATS]  # fmt: skip
        first_seen.append(min(_ns(e["ts"]) for e in kernels))
    assert first_seen[1] - first_seen[0] == firsts[1] - firsts[0]
