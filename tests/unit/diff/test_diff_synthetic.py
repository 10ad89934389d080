"""`diff` on synthetic pairs whose answer is known: one kernel made 2× slower, kernels replaced
by renamed ones (other library, other tile), noise only, and a pair without steps.

Every expected number is computed here from the durations the test wrote (see kineto.py), not
by gpuscope: per-name sums, the movers that cover 90 % of the gross change, and Welch's test on
the step times (t, Welch–Satterthwaite df, and the p-value by numerical integration of
Student's t density).
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis.pipeline import analyze
from gpuscope.diff import diff
from gpuscope.trace.registry import read_trace
from tests.unit.diff.kineto import Call, Writer

GEMM = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x128_32x3_nn_align8>(cutlass_80_tensorop_bf16_s16816gemm_bf16_128x128_32x3_nn_align8::Params)"  # noqa: E501
XMMA = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"  # noqa: E501
NVJET_A = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"
NVJET_B = "nvjet_sm90_tst_128x16_64x8_2x1_v_bz_TNT"
SOFTMAX = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)"  # noqa: E501
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"  # noqa: E501
MM_DIMS = ((256, 512), (512, 1024))
ADDMM_DIMS = ((1024,), (64, 512), (512, 1024))
STEPS = 8


def calls(durations: dict[str, float]) -> list[Call]:
    ops = {
        GEMM: ("aten::mm", MM_DIMS),
        XMMA: ("aten::mm", MM_DIMS),
        NVJET_A: ("aten::addmm", ADDMM_DIMS),
        NVJET_B: ("aten::addmm", ADDMM_DIMS),
        SOFTMAX: ("aten::_softmax", ((64, 1024),)),
        ADD: ("aten::add", ((64, 1024), (64, 1024))),
    }
    return [Call(k, v, ops[k][0], ops[k][1]) for k, v in durations.items()]


def noisy(base: dict[str, float], rng: random.Random, sd: float) -> dict[str, float]:
    return {k: round(max(v + rng.gauss(0.0, sd), 1.0), 3) for k, v in base.items()}


def written(writer: Writer) -> dict[str, tuple[int, float]]:
    """(calls, total µs) per kernel name, from the events the writer made."""
    found: dict[str, list[float]] = defaultdict(list)
    for event in writer.events:
        if event["cat"] == "kernel":
            found[event["name"]].append(event["dur"])
    return {name: (len(durs), sum(durs)) for name, durs in found.items()}


def run_diff(tmp_path: Path, before: Writer, after: Writer) -> dict[str, Any]:
    a = analyze(read_trace(str(before.write(tmp_path / "before.json"))))
    b = analyze(read_trace(str(after.write(tmp_path / "after.json"))))
    return diff(a, b).to_dict()


def pair(
    before_base: dict[str, float], after_base: dict[str, float], seed: int, sd: float
) -> tuple[Writer, Writer]:
    rng = random.Random(seed)
    before, after = Writer(), Writer()
    for i in range(STEPS):
        before.step(i, calls(noisy(before_base, rng, sd)))
        after.step(i, calls(noisy(after_base, rng, sd)))
    return before, after


# -- independent statistics ---------------------------------------------------------------------


def welch_reference(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """t, df and two-sided p, from the textbook formulas; p by Simpson's rule on t's density."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    t = (statistics.mean(b) - statistics.mean(a)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def density(x: float) -> float:
        return scale * (1 + x * x / df) ** (-(df + 1) / 2)

    n, hi = 20_000, abs(t)
    h = hi / n
    inner = sum((4 if i % 2 else 2) * density(i * h) for i in range(1, n))
    central = h / 3 * (density(0) + inner + density(hi))
    return t, df, max(1 - 2 * central, 0.0)


def walls(writer: Writer) -> list[float]:
    return [round(w, 3) for w in writer.step_walls]


def movers_reference(deltas: dict[str, float]) -> list[str]:
    ordered = sorted(deltas, key=lambda k: -abs(deltas[k]))
    gross, running, chosen = sum(abs(v) for v in deltas.values()), 0.0, []
    for name in ordered:
        if running >= 0.9 * gross:
            break
        chosen.append(name)
        running += abs(deltas[name])
    return chosen


# -- the pairs ----------------------------------------------------------------------------------


def test_one_kernel_twice_as_slow(tmp_path: Path) -> None:
    base = {GEMM: 200.0, SOFTMAX: 40.0, ADD: 20.0}
    before, after = pair(base, {**base, SOFTMAX: 80.0}, seed=1, sd=0.5)
    report = run_diff(tmp_path, before, after)

    old, new = written(before), written(after)
    deltas = {k: new[k][1] - old[k][1] for k in old}
    changes = {c["before"]["names"][0]: c for c in report["kernels"]["changes"]}
    assert set(changes) == set(old)
    for name, change in changes.items():
        assert change["match"] == "exact"
        assert change["before"]["count"] == old[name][0] == STEPS
        assert change["before"]["time_us"] == pytest.approx(old[name][1], abs=1e-3)
        assert change["after"]["time_us"] == pytest.approx(new[name][1], abs=1e-3)
        assert change["delta_us"] == pytest.approx(deltas[name], abs=2e-3)
    top = report["kernels"]["changes"][0]
    assert top["before"]["names"] == [SOFTMAX]
    assert top["ratio"] == pytest.approx(new[SOFTMAX][1] / old[SOFTMAX][1], rel=1e-5)
    assert top["per_call"]["significant"] is True
    movers = [c["before"]["names"][0] for c in report["kernels"]["changes"] if c["mover"]]
    assert movers == movers_reference(deltas) == [SOFTMAX]

    verdict = report["verdict"]
    assert verdict["measure"] == "step_time"
    assert verdict["direction"] == "slower"
    assert verdict["before_us"] == pytest.approx(statistics.mean(walls(before)), abs=1e-3)
    assert verdict["after_us"] == pytest.approx(statistics.mean(walls(after)), abs=1e-3)
    significance = verdict["significance"]
    t, df, p = welch_reference(walls(before), walls(after))
    assert significance["method"] == "welch-t"
    assert (significance["before_n"], significance["after_n"]) == (STEPS, STEPS)
    assert significance["t"] == pytest.approx(t, rel=1e-5)
    assert significance["df"] == pytest.approx(df, rel=1e-4)
    assert significance["p_value"] == pytest.approx(p, rel=1e-5, abs=1e-9)
    assert significance["significant"] is True
    assert "significant (Welch" in verdict["text"]


def test_renamed_kernels_match_by_family_and_by_shape(tmp_path: Path) -> None:
    before_base = {GEMM: 150.0, NVJET_A: 30.0, ADD: 10.0}
    after_base = {XMMA: 120.0, NVJET_B: 35.0, ADD: 10.0}
    before, after = pair(before_base, after_base, seed=2, sd=0.3)
    report = run_diff(tmp_path, before, after)

    old, new = written(before), written(after)
    by_match = {c["match"]: c for c in report["kernels"]["changes"]}
    assert sorted(by_match) == ["exact", "family", "shape"]
    assert report["kernels"]["matches"]["new"] == report["kernels"]["matches"]["vanished"] == 0

    shape = by_match["shape"]  # cutlass → cuBLAS xmma: nothing in common but op and shape
    assert (shape["before"]["names"], shape["after"]["names"]) == ([GEMM], [XMMA])
    assert shape["category"] == "gemm"
    assert shape["shape"]["op"] == "aten::mm"
    assert shape["shape"]["input_dims"] == "[[256,512],[512,1024]]"
    assert shape["delta_us"] == pytest.approx(new[XMMA][1] - old[GEMM][1], abs=2e-3)

    family = by_match["family"]  # the same nvjet kernel with another tile
    assert (family["before"]["names"], family["after"]["names"]) == ([NVJET_A], [NVJET_B])
    assert family["key"] == "nvjet_sm90_tst_v_bz_TNT"
    assert family["delta_us"] == pytest.approx(new[NVJET_B][1] - old[NVJET_A][1], abs=2e-3)
    assert by_match["exact"]["before"]["names"] == [ADD]


def test_kernels_without_counterpart_are_new_or_vanished(tmp_path: Path) -> None:
    before, after = Writer(), Writer()
    for i in range(4):
        before.step(i, [*calls({ADD: 10.0}), Call("old_kernel", 7.0, "aten::old", ((3,),))])
        after.step(i, [*calls({ADD: 10.0}), Call("new_kernel", 9.0, "aten::new", ((3,),))])
    report = run_diff(tmp_path, before, after)
    kinds = {c["match"]: c for c in report["kernels"]["changes"]}
    assert kinds["new"]["after"]["names"] == ["new_kernel"]
    assert kinds["new"]["after"]["time_us"] == pytest.approx(4 * 9.0)
    assert kinds["new"]["before"]["count"] == 0
    assert kinds["vanished"]["before"]["names"] == ["old_kernel"]
    assert kinds["vanished"]["delta_us"] == pytest.approx(-4 * 7.0)


def test_noise_only_is_not_significant(tmp_path: Path) -> None:
    """Both sides drawn from the same distribution: Welch's test at 5 % must call (almost)
    none of 20 such pairs significant, and each p-value must be the textbook one."""
    base = {GEMM: 150.0, SOFTMAX: 40.0, ADD: 20.0}
    called = 0
    for seed in range(20):
        before, after = pair(base, base, seed=100 + seed, sd=3.0)
        folder = tmp_path / str(seed)
        folder.mkdir()
        significance = run_diff(folder, before, after)["verdict"]["significance"]
        _, _, p = welch_reference(walls(before), walls(after))
        assert significance["p_value"] == pytest.approx(p, rel=1e-5)
        assert significance["significant"] is (p < 0.05)
        called += significance["significant"]
    assert called <= 3  # P(≥ 4 of 20 | no change) ≈ 1.6 %


def test_cpu_bound_to_gpu_bound(tmp_path: Path) -> None:
    """The same kernels launched back to back instead of 100 µs apart, in fewer steps: what
    paces the work changes, and the findings about the host's lateness go away."""
    rng = random.Random(3)
    base = {GEMM: 150.0, SOFTMAX: 40.0, ADD: 20.0}
    before, after = Writer(), Writer(gap=-6.5)  # the next launch overlaps the running kernel
    for i in range(STEPS):
        before.step(i, calls(noisy(base, rng, 1.0)))
    for i in range(STEPS - 2):
        after.step(i, calls(noisy(base, rng, 1.0)))
    a = analyze(read_trace(str(before.write(tmp_path / "before.json"))))
    b = analyze(read_trace(str(after.write(tmp_path / "after.json"))))
    report = diff(a, b).to_dict()
    bound = report["verdict"]["bound"]
    assert (bound["before"]["bound"], bound["after"]["bound"]) == (a.verdict.bound, b.verdict.bound)
    assert bound["before"]["bound"] == "cpu-bound" and bound["after"]["bound"] == "gpu-bound"
    assert bound["changed"] and "Was cpu-bound, now gpu-bound." in report["verdict"]["text"]
    assert report["verdict"]["direction"] == "faster"
    assert report["verdict"]["significance"]["significant"] is True
    assert report["verdict"]["significance"]["after_n"] == STEPS - 2
    gone = {f["id"] for f in a.findings} - {f["id"] for f in b.findings}
    assert gone and {f["id"] for f in report["findings"]["disappeared"]} == gone
    assert "different-step-counts" in [c["id"] for c in report["caveats"]]


def test_without_steps_the_difference_cannot_be_called_significant(tmp_path: Path) -> None:
    before, after = Writer(), Writer()
    before.loose(calls({GEMM: 100.0, ADD: 10.0}))
    after.loose(calls({GEMM: 150.0, ADD: 10.0}))
    verdict = run_diff(tmp_path, before, after)["verdict"]
    assert verdict["measure"] == "gpu_busy"
    assert verdict["delta_us"] == pytest.approx(50.0, abs=1e-3)
    assert verdict["significance"]["method"] is None
    assert verdict["significance"]["significant"] is None
    assert "cannot be called significant" in verdict["significance"]["reason"]
    assert "not significant" in verdict["text"]
