"""Advice for the data-parallel wrapper the trace shows, on 1-rank jobs recorded on an H200
(tests/gpu/record/wrappers_one_rank.py: a 4-layer MLP, FSDP2 with `fully_shard` on every Linear,
FSDP1 around the whole model, DDP). The wrapper's ranges are read from the raw events here; the
share of the dispatch inside FSDP's hooks is recounted from the raw events by tests/rawstates.py,
not by gpuscope's code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gpuscope
from tests.rawkineto import events, span_of
from tests.rawstates import _union, states

DATA = Path(__file__).resolve().parents[2] / "data" / "recorded"
HOOKS = re.compile(r"^FSDP::|RegisterPostBackwardFunction|^FullyShardedDataParallel\._")


def trace(name: str) -> Path:
    return DATA / f"wrapper_{name}_h200.json.gz"


def launch_in_hooks(path: Path) -> float:
    _, pieces = states(path)
    launch = [(a, b) for a, b, part in pieces if part == "launch"]
    hooks = _union([span_of(e) for e in events(path)
                    if e.get("ph") == "X" and HOOKS.search(e.get("name", ""))])  # fmt: skip
    inside = sum(max(0, min(b, e) - max(a, s)) for a, b in launch for s, e in hooks)
    return inside / sum(b - a for a, b in launch)


def names(path: Path) -> list[str]:
    return [e["name"] for e in events(path) if e.get("ph") == "X"]


def launch_finding(path: Path) -> dict:
    report = gpuscope.analyze(str(path)).to_dict()
    return {f["id"]: f for f in report["findings"]}["launch-overhead"] | {
        "label": report["program"]["label"]
    }


@pytest.mark.parametrize(
    ("name", "label", "marker"),
    [
        ("fsdp2", "PyTorch (FSDP2)", "FSDP::pre_forward (0)"),
        ("fsdp1", "PyTorch (FSDP1)", "FullyShardedDataParallel._pre_forward"),
        ("ddp", "PyTorch (DDP)", "DistributedDataParallel.forward"),
    ],
)
def test_the_wrapper_is_read_from_its_own_ranges(name: str, label: str, marker: str) -> None:
    assert marker in names(trace(name))
    assert launch_finding(trace(name))["label"] == label


def test_fsdp2_wrapped_per_layer_is_told_to_wrap_larger_units() -> None:
    path = trace("fsdp2")
    units = {n for n in names(path) if n.startswith("FSDP::pre_forward (")}
    assert len(units) == 4  # the four Linear layers (the root holds no parameters of its own)
    share = launch_in_hooks(path)
    found = launch_finding(path)
    assert found["evidence"]["share_inside_fsdp_hooks"] == pytest.approx(share, abs=1e-4)
    action = found["action"]
    assert f"{share:.0%} of the dispatch is FSDP's own hooks" in action
    assert "4 wrapped modules here" in action and "not on every layer" in action
    assert "reshard_after_forward=False" in action
    assert "Capture the step" not in action and "reduce-overhead" not in action


def test_fsdp1_with_one_unit_is_not_told_to_wrap_fewer() -> None:
    path = trace("fsdp1")
    every = names(path)
    per_forward = every.count("FullyShardedDataParallel._pre_forward") / every.count(
        "FullyShardedDataParallel._root_pre_forward"
    )
    assert per_forward == 1  # the whole model is one unit
    share = launch_in_hooks(path)
    action = launch_finding(path)["action"]
    assert f"{share:.0%} of the dispatch is FSDP's own hooks" in action
    assert "wrap fewer" not in action and "SHARD_GRAD_OP" in action
    assert "use_orig_params=True" in action
    assert "Capture the step" not in action and "reduce-overhead" not in action


def test_ddp_keeps_the_graphs_advice_with_ddps_conditions() -> None:
    action = launch_finding(trace("ddp"))["action"]
    assert "Capture the step as CUDA graphs" in action and "under DDP" in action
    assert "FSDP" not in action


@pytest.mark.parametrize(
    ("path", "first"),
    [(DATA / "planted" / "planted_compiled_launch_h200.json.gz", True), (trace("ddp"), False)],
)
def test_host_work_inside_the_optimizer_step_is_named_as_its_python(
    path: Path, first: bool
) -> None:
    """AdamW (foreach, not fused) runs Python between its kernels inside `Optimizer.step#…`:
    that share of the host work, recounted from the raw events, is said with its remedy — first
    when it is the larger part."""
    _, pieces = states(path)
    work = [(a, b) for a, b, part in pieces if part == "host_work"]
    optimizer = [e for e in events(path) if e.get("name", "").startswith("Optimizer.step#")]
    steps = _union([span_of(e) for e in optimizer if e.get("ph") == "X"])
    share = sum(max(0, min(b, e) - max(a, s)) for a, b in work for s, e in steps) / sum(
        b - a for a, b in work
    )
    report = gpuscope.analyze(str(path)).to_dict()
    action = {f["id"]: f for f in report["findings"]}["host-work"]["action"]
    said = f"{share:.0%} of it is inside the optimizer step"
    assert said in action and "fused=True" in action
    assert action.startswith(said) == first


def test_gemm_advice_fits_a_training_fsdp_step_and_an_inference_decode() -> None:
    """Small GEMMs: an FSDP training step is told neither graphs (FSDP cannot be captured) nor
    weight-only quantization (an inference technique); the bundled decode trace (inference,
    eager) is told both."""
    fsdp = gpuscope.analyze(str(trace("fsdp2"))).to_dict()
    assert any("Backward" in n for n in names(trace("fsdp2")))
    assert "training" in fsdp["program"]["traits"]
    action = {f["id"]: f for f in fsdp["findings"]}["gemm-efficiency"]["action"]
    assert action.startswith("Small GEMMs") and "graphs" not in action
    assert "quantization" not in action
    decode = DATA.parents[2] / "src" / "gpuscope" / "data" / "examples"
    decode = decode / "llama_decode_h200.json.gz"
    assert not any("Backward" in n for n in names(decode))
    report = gpuscope.analyze(str(decode)).to_dict()
    action = {f["id"]: f for f in report["findings"]}["gemm-efficiency"]["action"]
    assert "weight-only quantization" in action and "graphs to remove launch gaps" in action
