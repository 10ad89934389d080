"""Host hot spots: self and inclusive operator time, the operators that fill the GPU's host-wait
gaps (the idle time whose host state is launch / dispatch or host work: `analysis.hoststate`,
whose states are recounted from raw events in test_planted.py), user Python callers — checked
against plain-Python recounts (a stack walk for nesting) on traces built here and on the
reference llama prefill trace. The cause these operators are evidence of is launch-overhead
(`analysis.causes`)."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis import extras as extras_mod
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.hostops import is_user_frame
from gpuscope.analysis.hoststate import STATES
from gpuscope.analysis.pipeline import analyze
from gpuscope.trace.registry import read_trace
from tests.unit.analysis.conftest import TraceBuilder

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


@pytest.fixture(autouse=True)
def only_this_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras_mod, "modules", lambda: [extras_mod.hostops])


def part(a: Analysis) -> dict[str, Any]:
    found = a.to_dict()["host_ops"]
    assert found is not None
    return dict(found)


def by_id(a: Analysis) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in a.findings}


# ---------------------------------------------------------------- plain-Python recounts


Interval = tuple[Any, Any]


def nest(ops: list[dict[str, Any]]) -> list[int]:
    """Parent index of each op on its thread (-1: none), by a stack walk over (start, -dur)."""
    parent = [-1] * len(ops)
    order = sorted(range(len(ops)), key=lambda i: (ops[i]["tid"], ops[i]["ts"], -ops[i]["dur"]))
    stack: list[int] = []
    for i in order:
        op = ops[i]
        while stack and (
            ops[stack[-1]]["tid"] != op["tid"]
            or ops[stack[-1]]["ts"] + ops[stack[-1]]["dur"] <= op["ts"]
        ):
            stack.pop()
        parent[i] = stack[-1] if stack else -1
        stack.append(i)
    return parent


def clip(intervals: list[Interval], lo: Any, hi: Any) -> Any:
    return sum((max(0, min(e, hi) - max(s, lo)) for s, e in intervals), Decimal(0))


def self_in(ops: list[dict[str, Any]], windows: list[Interval] | None) -> list[Any]:
    """Each op's time minus its direct children's, inside `windows` (None: everywhere)."""
    parent = nest(ops)
    span = [(op["ts"], op["ts"] + op["dur"]) for op in ops]
    windows = windows if windows is not None else [(Decimal(-(10**18)), Decimal(10**18))]
    inside = [sum((clip([w], s, e) for w in windows), Decimal(0)) for s, e in span]
    own = list(inside)
    for i, p in enumerate(parent):
        if p >= 0:
            own[p] -= inside[i]
    return own


def host_wait_gaps(a: Analysis) -> list[Interval]:
    """The idle time whose host state is launch or host work, merged, in µs (Decimal)."""
    assert a.breakdown is not None
    pieces = a.breakdown.idle.pieces
    chosen = [
        (Decimal(int(s)) / 1000, Decimal(int(e)) / 1000)
        for s, e, state in zip(pieces.start, pieces.end, pieces.state, strict=True)
        if STATES[int(state)] in ("launch", "host_work")
    ]
    merged: list[Interval] = []
    for lo, hi in sorted(chosen):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


# ---------------------------------------------------------------- a trace built here


def host_late(b: TraceBuilder, steps: int = 10) -> list[dict[str, Any]]:
    """A host-bound loop: every 200 µs an aten::linear → aten::addmm launches a 5 µs kernel
    at its end, then an aten::sum (with a nested aten::sum) runs while the GPU idles."""
    ops: list[dict[str, Any]] = []

    def op(name: str, ts: float, dur: float) -> int:
        ext = b.op(name, ts, dur)
        ops.append({"name": name, "ts": Decimal(ts), "dur": Decimal(dur), "tid": 100})
        return ext

    for i in range(steps):
        t = 200.0 * i
        op("aten::linear", t, 150)
        ext = op("aten::addmm", t + 10, 130)
        b.launch("gemm_kernel", at=t + 120, start=t + 135, dur=5, ext=ext)
        op("aten::sum", t + 150, 40)
        op("aten::sum", t + 160, 10)
    return ops


def test_operators_in_the_host_wait_gaps(builder: TraceBuilder, tmp_path: Path) -> None:
    ops = host_late(builder)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 2000.0))
    assert a.verdict.bound == "cpu-bound"
    gaps = [(Decimal(200 * i + 140), Decimal(200 * i + 335)) for i in range(9)]
    assert host_wait_gaps(a) == gaps
    own = self_in(ops, None)
    waiting = self_in(ops, gaps)
    names = sorted({o["name"] for o in ops})
    total = {n: sum(w for w, o in zip(waiting, ops, strict=True) if o["name"] == n) for n in names}
    got = part(a)
    assert got["ops"] == len(ops) and got["threads"] == 1
    assert got["op_self_us"] == float(sum(own))
    rows = {r["name"]: r for r in got["by_self"]}
    for name in names:
        assert rows[name]["self_us"] == float(
            sum(s for s, o in zip(own, ops, strict=True) if o["name"] == name)
        )
        assert rows[name]["host_wait_self_us"] == float(total[name])
    # a nested aten::sum is counted once in inclusive time: 40 µs per step, not 50
    inclusive = {r["name"]: r["inclusive_us"] for r in got["by_inclusive"]}
    assert inclusive["aten::sum"] == 400.0 and rows["aten::sum"]["count"] == 20
    wait = got["host_wait"]
    assert wait["gaps"] == 9 and wait["gap_us"] == float(sum(e - s for s, e in gaps))
    assert wait["op_self_us"] == float(sum(total.values()))
    assert sum(t["self_us"] for t in wait["top"]) == pytest.approx(wait["op_self_us"])
    ranked = sorted(total.items(), key=lambda kv: -kv[1])
    assert [t["name"] for t in wait["top"]] == [n for n, t in ranked if t > 0]
    launch = by_id(a)["launch-overhead"]  # the cause these operators are the evidence of
    assert launch["severity"] == "warning"
    assert "Capture the step as CUDA graphs" in launch["action"]  # 5 µs kernels, no graphs yet


def test_hotspots_are_ranked_over_every_operator(builder: TraceBuilder, tmp_path: Path) -> None:
    """Ten operators with more self time, all of it after the GPU's last kernel, push the gap
    operators out of the top-10 by self time; they still rank first in the gaps."""
    host_late(builder)
    for k in range(10):
        builder.op(f"teardown_{k}", 3000.0 + 2100 * k, 2000)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 25_000.0))
    got = part(a)
    assert {r["name"] for r in got["by_self"]} == {f"teardown_{k}" for k in range(10)}
    assert got["host_wait"]["top"][0]["name"] == "aten::addmm"


def test_a_compiled_model_is_not_told_to_compile(builder: TraceBuilder, tmp_path: Path) -> None:
    host_late(builder)
    builder.op("CompiledFunction", 0.0, 1990.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 2000.0))
    action = by_id(a)["launch-overhead"]["action"]
    assert 'torch.compile(mode="reduce-overhead") replays the compiled code' in action
    assert "(torch.compile)" not in action


def test_no_hotspots_when_the_gpu_sets_the_pace(builder: TraceBuilder, tmp_path: Path) -> None:
    for i in range(20):
        ext = builder.op("aten::mm", 10.0 * i, 8)
        builder.launch("gemm_kernel", at=10.0 * i + 2, start=50.0 + 100 * i, dur=100.0, ext=ext)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 2100.0))
    assert a.verdict.bound == "gpu-bound"
    assert part(a)["by_self"][0]["name"] == "aten::mm"
    assert "launch-overhead" not in by_id(a)


def test_graph_replayed_trace_is_not_told_to_capture_graphs(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    t = 0.0
    for replay in range(20):
        corr = 100 + replay
        builder.op("aten::_foreach_copy_", t, 15)  # static-input copy before the replay
        builder.runtime("cudaGraphLaunch", t + 20, 10.0, corr=corr)
        for i in range(50):
            builder.kernel(f"graph_kernel_{i % 7}", t + 40 + 2 * i, 1.5, corr=corr)
        builder.op("sample_next_token", t + 200, 280)  # host work between the replays
        t += 500.0
    a = builder.analyze(tmp_path / "t.json", span=(0.0, t))
    assert a.verdict.bound == "cpu-bound"
    launch = by_id(a)["launch-overhead"]  # inside an operator: the host dispatching its work
    assert launch["evidence"]["on_critical_path"][0]["what"] == "sample_next_token"
    assert "already replay as CUDA graphs" in launch["action"]
    assert "Capture the step" not in launch["action"]


def test_user_callers_skip_library_frames(builder: TraceBuilder, tmp_path: Path) -> None:
    """aten::addmm under torch's linear.py under the user's model.py: model.py is the caller."""

    def frame(name: str, ts: float, dur: float) -> None:
        builder.events.append(
            {"ph": "X", "cat": "python_function", "name": name, "pid": 100, "tid": 100,
             "ts": ts, "dur": dur, "args": {}}
        )  # fmt: skip

    for i in range(3):
        t = 100.0 * i
        frame("model.py(12): forward", t, 90)
        frame("torch/nn/modules/linear.py(125): forward", t + 1, 80)
        frame("<built-in method linear of type object at 0x7f>", t + 2, 70)
        ext = builder.op("aten::addmm", t + 5, 60)
        builder.launch("gemm_kernel", at=t + 40, start=t + 50, dur=5, ext=ext)
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, 300.0)))
    assert got["python"] == {"events": 9, "frames": 3}
    assert got["callers"] == [
        {"frame": "model.py(12): forward", "ops": 3, "self_us": 180.0, "share": 1.0}
    ]
    assert got["by_self"][0]["caller"] == "model.py(12): forward"


@pytest.mark.parametrize(
    ("frame", "user"),
    [
        ("transformers/models/llama/modeling_llama.py(62): forward", True),
        ("/home/me/train.py(30): main", True),
        ("torch/nn/modules/module.py(1751): _call_impl", False),
        ("/usr/lib/python3.12/site-packages/torch/_ops.py(1158): __call__", False),
        ("/usr/lib/python3.12/threading.py(1012): run", False),
        ("contextlib.py(81): inner", False),
        ("/tmp/torchinductor_me/ab/cabc.py(44): call", False),
        ("<built-in method mm of type object at 0x7f>", False),
        ("nn.Module: Linear_0", False),
    ],
)
def test_what_counts_as_user_code(frame: str, user: bool) -> None:
    assert is_user_frame(frame) is user


# ---------------------------------------------------------------- reference trace


def test_reference_prefill_hotspots_recounted() -> None:
    name = "llama_prefill_h200.json.gz"
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"reference trace {name} not found under {TRACES.resolve()}")
    with gzip.open(path, "rt") as handle:
        events = [e for e in json.load(handle, parse_float=Decimal)["traceEvents"]]
    events = [e for e in events if e.get("ph") == "X"]
    a = analyze(read_trace(str(path)))
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    gaps = host_wait_gaps(a)
    own, waiting = self_in(ops, None), self_in(ops, gaps)
    got = part(a)
    # one thread: the self times add up to the time any operator ran
    assert got["threads"] == 1
    union = sorted((o["ts"], o["ts"] + o["dur"]) for o in ops)
    ran, reach = Decimal(0), union[0][0]
    for s, e in union:
        ran += max(0, e - max(s, reach))
        reach = max(reach, e)
    assert got["op_self_us"] == pytest.approx(float(ran), abs=1e-2)
    assert float(sum(own)) == pytest.approx(float(ran), abs=1e-2)
    wait = got["host_wait"]
    assert wait["gaps"] == len(gaps)
    assert wait["gap_us"] == pytest.approx(float(sum(e - s for s, e in gaps)), abs=1e-2)
    assert wait["op_self_us"] == pytest.approx(float(sum(waiting)), abs=1e-2)
    per_name: dict[str, Any] = {}
    for o, w in zip(ops, waiting, strict=True):
        per_name[o["name"]] = per_name.get(o["name"], Decimal(0)) + w
    ranked = sorted(per_name.items(), key=lambda kv: -kv[1])[:5]
    top = wait["top"][:5]
    assert [o["name"] for o in top] == [n for n, _ in ranked]
    for row, (_, time) in zip(top, ranked, strict=True):
        assert row["self_us"] == pytest.approx(float(time), abs=1e-2)
    by_self = {r["name"]: r for r in got["by_self"]}
    assert by_self[top[0]["name"]]["caller"].startswith("transformers/models/llama/")
