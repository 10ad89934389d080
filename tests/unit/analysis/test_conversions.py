"""dtype conversions told apart from same-dtype copies by the recorded input types, named by the
outermost copy operator and the Python line; thresholds as the messages state them; cat that
grows a cache told from cat that assembles pieces — on traces built here and on the llama
prefill reference, recounted from the raw JSON."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis import extras as extras_mod
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.conversions import LAYOUT_OPS
from gpuscope.analysis.pipeline import analyze
from gpuscope.trace.registry import read_trace
from tests.unit.analysis.conftest import TraceBuilder

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
BF16, F32, F16 = "c10::BFloat16", "float", "c10::Half"


@pytest.fixture(autouse=True)
def only_this_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras_mod, "modules", lambda: [extras_mod.conversions])


def part(a: Analysis) -> dict[str, Any]:
    found = a.to_dict()["conversions"]
    assert found is not None
    return dict(found)


def by_id(a: Analysis) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in a.findings}


def op(b: TraceBuilder, name: str, ts: float, dur: float, dims: list[Any], types: list[str],
       concrete: list[str] | None = None) -> int:  # fmt: skip
    ext = b._id()
    args = {"External id": ext, "Input Dims": dims, "Input type": types,
            "Concrete Inputs": concrete if concrete is not None else [""] * len(dims)}  # fmt: skip
    b.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100,
                     "ts": ts, "dur": dur, "args": args})  # fmt: skip
    return ext


def upcasts(b: TraceBuilder, count: int, kernel_us: float, t0: float = 0.0) -> None:
    """`x.float()` on a bf16 tensor: aten::to → aten::_to_copy → aten::copy_, whose kernel it is."""
    for i in range(count):
        t = t0 + 100.0 * i
        shape = [4, 512, 1024]
        op(b, "aten::to", t, 40, [shape, [], [], [], []], [BF16, "ScalarType", "", "", ""],
           ["", "6", "False", "False", ""])  # fmt: skip
        types = [BF16, "ScalarType", "", "", "", "", ""]
        op(b, "aten::_to_copy", t + 1, 38, [shape] + [[]] * 6, types,
           ["", "6", "", "", "", "False", ""])  # fmt: skip
        ext = op(b, "aten::copy_", t + 5, 30, [shape, shape, []], [F32, BF16, "Scalar"])
        b.launch("elementwise_copy_kernel", at=t + 10, start=t + 20, dur=kernel_us, ext=ext)


def filler(b: TraceBuilder, kernel_us: float, at: float = 50_000.0) -> None:
    b.kernel("nvjet_gemm_kernel", at, kernel_us)


# ---------------------------------------------------------------- conversions


@pytest.mark.parametrize(("kernel_us", "severity"), [(30.0, "info"), (60.0, "warning")])
def test_upcasts_are_conversions(
    builder: TraceBuilder, tmp_path: Path, kernel_us: float, severity: str
) -> None:
    upcasts(builder, 10, kernel_us)
    filler(builder, 10_000.0 - 10 * kernel_us)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 60_000.0))
    got = part(a)
    share = 10 * kernel_us / 10_000.0
    assert got["conversions"] == {"calls": 10, "time_us": 10 * kernel_us, "share": share}
    assert got["copies"]["calls"] == 0
    (row,) = got["rows"]
    assert (row["kind"], row["op"], row["from"], row["to"]) == (
        "conversion", "aten::to → aten::copy_", "bfloat16", "float32"
    )  # fmt: skip
    assert row["shape"] == "[4,512,1024]" and row["kernels"] == 10
    found = by_id(a)["dtype-conversions"]
    assert found["severity"] == severity  # info from 1 %, a warning from 5 %
    assert f"{share:.1%} of kernel time" in found["message"]
    assert "bf16→fp32" in found["message"]


def test_a_same_dtype_copy_is_layout_work_not_a_conversion(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    for i in range(10):
        t = 100.0 * i
        op(builder, "aten::contiguous", t, 40, [[64, 1024], []], [BF16, ""])
        op(builder, "aten::clone", t + 1, 38, [[64, 1024], []], [BF16, ""])
        ext = op(builder, "aten::copy_", t + 5, 30, [[64, 1024], [64, 1024], []], [BF16, BF16, ""])
        builder.launch("copy_kernel", at=t + 10, start=t + 20, dur=60.0, ext=ext)
    filler(builder, 9400.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 60_000.0))
    got = part(a)
    assert got["conversions"]["calls"] == 0 and "dtype-conversions" not in by_id(a)
    assert got["copies"] == {"calls": 10, "time_us": 600.0, "share": 0.06}
    assert got["rows"][0]["op"] == "aten::contiguous → aten::copy_"
    layout = by_id(a)["layout-copies"]
    assert layout["severity"] == "info" and "6.0% of kernel time" in layout["message"]
    assert ".contiguous()" in layout["action"]


def test_below_one_percent_is_not_a_finding(builder: TraceBuilder, tmp_path: Path) -> None:
    upcasts(builder, 10, 9.0)  # 90 µs of 10,000
    filler(builder, 9910.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 60_000.0))
    assert part(a)["conversions"]["share"] == 0.009
    assert "dtype-conversions" not in by_id(a)


def test_to_copy_and_to_other_read_their_target_dtype(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """_to_copy(self, dtype=15) converts fp32 → bf16; to(self, other) takes other's dtype."""
    types = [F32, "ScalarType", "", "", "", "", ""]
    ext = op(builder, "aten::_to_copy", 0.0, 20, [[1024]] + [[]] * 6, types,
             ["", "15", "", "", "", "False", ""])  # fmt: skip
    builder.launch("k", at=5.0, start=10.0, dur=100.0, ext=ext)
    ext = op(builder, "aten::to", 200.0, 20, [[1024], [8], [], [], []], [F32, F16, "", "", ""],
             ["", "", "False", "False", ""])  # fmt: skip
    builder.launch("k", at=205.0, start=210.0, dur=100.0, ext=ext)
    filler(builder, 800.0)
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, 60_000.0)))
    pairs = {(r["op"], r["from"], r["to"]) for r in got["rows"]}
    assert pairs == {("aten::_to_copy", "float32", "bfloat16"), ("aten::to", "float32", "float16")}


def test_host_device_transfers_are_counted_apart(builder: TraceBuilder, tmp_path: Path) -> None:
    ext = op(builder, "aten::copy_", 0.0, 50, [[1024], [1024], []], [F32, F32, ""])
    corr = builder._id()
    builder.runtime("cudaMemcpyAsync", 5.0, 10.0, corr, ext)
    builder.kernel("Memcpy HtoD (Pinned -> Device)", 20.0, 40.0, corr, ext, cat="gpu_memcpy")
    upcasts(builder, 2, 30.0, t0=1000.0)
    filler(builder, 940.0)
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, 60_000.0)))
    assert got["transfers"] == {"count": 1, "time_us": 40.0}
    assert got["conversions"]["time_us"] == 60.0 and got["copies"]["time_us"] == 0.0


def test_a_cache_grown_by_cat_is_told_from_cat_of_pieces(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    for i in range(20):
        t = 100.0 * i
        ext = op(builder, "aten::cat", t, 20, [[[1, 8, 10 + i, 64], [1, 8, 1, 64]], []],
                 ["TensorList", "Scalar"])  # fmt: skip
        builder.launch("cat_kernel", at=t + 5, start=t + 10, dur=30.0, ext=ext)
        ext = op(builder, "aten::cat", t + 50, 20, [[[1, 16, 1, 32], [1, 16, 1, 32]], []],
                 ["TensorList", "Scalar"])  # fmt: skip
        builder.launch("cat_kernel", at=t + 55, start=t + 60, dur=10.0, ext=ext)
    filler(builder, 2000.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 60_000.0))
    layout = by_id(a)["layout-copies"]
    assert layout["evidence"]["cat_growth_us"] == 600.0
    assert layout["evidence"]["cat_other_us"] == 200.0
    assert "600 µs of it is a tensor grown by cat" in layout["message"]
    assert layout["action"].startswith("A tensor grown by torch.cat every step")


# ---------------------------------------------------------------- reference trace


def test_reference_prefill_conversions_recounted() -> None:
    """Llama prefill (bf16 with fp32 RMSNorm upcasts): the kernels each copy operator launched
    (by External id), split by whether its two Input types differ."""
    name = "llama_prefill_h200.json.gz"
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"reference trace {name} not found under {TRACES.resolve()}")
    with gzip.open(path, "rt") as handle:
        events = [e for e in json.load(handle, parse_float=Decimal)["traceEvents"]]
    owner: dict[int, dict[str, Any]] = {}
    for e in sorted((e for e in events if e.get("cat") == "cpu_op"), key=lambda e: e["ts"]):
        owner[e["args"]["External id"]] = e  # the latest-starting op of an id: the innermost
    conversions = copies = Decimal(0)
    calls = 0
    for kernel in (e for e in events if e.get("cat") == "kernel"):
        parent = owner.get(kernel["args"].get("External id"))
        if parent is None:
            continue
        types = parent["args"].get("Input type", [])
        if parent["name"] == "aten::copy_" and types[0] != types[1]:
            conversions += kernel["dur"]
            calls += 1
        elif parent["name"] in LAYOUT_OPS or parent["name"] == "aten::copy_":
            copies += kernel["dur"]
    kernel_time = sum(e["dur"] for e in events if e.get("cat") == "kernel")
    a = analyze(read_trace(str(path)))
    got = part(a)
    assert got["conversions"]["calls"] == calls
    assert got["conversions"]["time_us"] == pytest.approx(float(conversions), abs=1e-3)
    assert got["copies"]["time_us"] == pytest.approx(float(copies), abs=1e-3)
    share = float(conversions / kernel_time)
    found = by_id(a)["dtype-conversions"]
    assert found["severity"] == ("warning" if share >= 0.05 else "info")
    assert found["evidence"]["share"] == pytest.approx(share, abs=1e-5)
    assert "modeling_llama.py(62): forward" in found["message"]  # LlamaRMSNorm.forward
    layout = by_id(a)["layout-copies"]
    assert "rotate_half" in layout["message"] and "cache_utils.py" in layout["message"]
