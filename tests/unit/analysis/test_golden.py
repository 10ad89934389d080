"""`gpuscope.analyze` agrees with the independently computed golden summaries.

The goldens (`tests/data/golden/*.json`) were written by `tests/data/golden/make_golden.py`, a
plain script over the raw JSON with exact decimal arithmetic that shares no code with gpuscope.
The reference traces are read in place from the sibling `shared/reference/traces` folder.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import gpuscope

REPO = Path(__file__).resolve().parents[3]
GOLDEN_DIR = REPO / "tests" / "data" / "golden"
TRACES = REPO / ".." / "shared" / "reference" / "traces"
GOLDENS = sorted(GOLDEN_DIR.glob("*.json"))
RELATIVE = 1e-3  # 0.1 %
NS_PER_US = 1000


def _golden(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    assert data["schema"] == "gpuscope.golden/1"
    return data


def _trace_of(golden: dict[str, Any]) -> Path:
    if not TRACES.is_dir():
        pytest.skip(f"reference traces not found at {TRACES} (sibling shared/ checkout absent)")
    path = TRACES / golden["source"]["file"]
    if not path.is_file():
        pytest.skip(f"{path.name} is not in {TRACES}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == golden["source"]["sha256"], (
        f"{path} changed since its golden was made: rerun tests/data/golden/make_golden.py"
    )
    return path


@functools.cache
def _analysis(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = gpuscope.analyze(str(path)).to_dict()
    return result


def _close(got_us: float, want_ns: int, what: str) -> None:
    want_us = want_ns / NS_PER_US
    if want_ns == 0:
        assert got_us == 0, f"{what}: got {got_us} µs, want exactly 0"
        return
    error = abs(got_us - want_us) / want_us
    assert error <= RELATIVE, f"{what}: got {got_us} µs, want {want_us} µs ({error:.3%} off)"


@pytest.fixture(params=GOLDENS, ids=[p.name.removesuffix(".json") for p in GOLDENS])
def case(request: pytest.FixtureRequest) -> tuple[dict[str, Any], dict[str, Any]]:
    golden = _golden(request.param)
    return golden, _analysis(_trace_of(golden))


def test_goldens_exist() -> None:
    assert GOLDENS, f"no golden summaries in {GOLDEN_DIR}"


def test_every_reference_trace_has_a_golden() -> None:
    if not TRACES.is_dir():
        pytest.skip(f"reference traces not found at {TRACES} (sibling shared/ checkout absent)")
    traces = {p.name for p in TRACES.iterdir() if p.name.endswith((".json", ".json.gz"))}
    covered = {p.name.removesuffix(".json") for p in GOLDENS}
    assert traces <= covered, f"run make_golden.py for: {sorted(traces - covered)}"


def test_kernel_count_is_exact(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    golden, got = case
    assert got["kernels"]["count"] == golden["kernels"]["count"]


def test_kernel_time(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    golden, got = case
    _close(got["kernels"]["time_us"], golden["kernels"]["time_ns"], "kernels.time_us")


def test_memcpy_count_is_exact(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    golden, got = case
    assert got["memcpy"]["count"] == golden["memcpy"]["count"]


def test_memcpy_time_and_bytes(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    golden, got = case
    _close(got["memcpy"]["time_us"], golden["memcpy"]["time_ns"], "memcpy.time_us")
    memcpy = golden["memcpy"]
    unsized = memcpy["count"] and memcpy["without_bytes"] == memcpy["count"]
    assert got["memcpy"]["bytes"] == (None if unsized else memcpy["bytes"])  # unknown, not 0 B
    assert got["memcpy"]["sized"] == memcpy["count"] - memcpy["without_bytes"]


def test_gpu_busy_is_the_interval_union(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    golden, got = case
    _close(got["gpu_busy_us"], golden["gpu_busy_ns"], "gpu_busy_us")


def test_busy_and_span_per_device(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    golden, got = case
    devices = {row["id"]: row for row in got["devices"]}
    for row in golden["devices"]:
        assert row["id"] in devices, f"device {row['id']} missing from {sorted(devices)}"
        device = devices[row["id"]]
        _close(device["busy_us"], row["busy_ns"], f"devices[{row['id']}].busy_us")
        _close(device["span_us"], row["span_ns"], f"devices[{row['id']}].span_us")


def test_busy_strip_adds_up_to_each_device_busy_time(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """The strip the pictures draw is the same busy time, spread over 200 bins: per device, the
    bins' fractions × their width sum to the golden busy time (less the fractions' rounding)."""
    golden, got = case
    strip = (got["gaps"] or {}).get("strip")
    if strip is None:
        pytest.skip("no timeline in this trace")
    busy = {row["id"]: row["busy_ns"] / NS_PER_US for row in golden["devices"]}
    for lane in strip["devices"]:
        assert len(lane["busy"]) == 200 and all(0 <= b <= 1 for b in lane["busy"])
        drawn = sum(lane["busy"]) * strip["bin_us"]
        rounding = len(lane["busy"]) * 0.5e-4 * strip["bin_us"]
        want = busy[lane["device"]]
        assert abs(drawn - want) <= RELATIVE * want + rounding, (lane["device"], drawn, want)
    longest = got["gaps"]["longest"]
    assert longest[:1] == [got["gaps"]["largest"]] or not longest
    assert [g["time_us"] for g in longest] == sorted((g["time_us"] for g in longest), reverse=True)
