"""`diff` between two architectures of one vendor (issue 20.7): cuBLAS and cutlass name kernels
after the GPU they were built for (`ampere_sgemm_*`, `cutlass_80_*` on an A100; `volta_sgemm_*` on
a V100), so no name matches across the pair and every GEMM used to be "vanished" or "new".

- The reference pair: the A100 rank of HTA's sampled two-rank job against HTA's V100 trace
  (`../shared/reference/traces`, read in place). They are not one model — no reference folder holds
  one model on two NVIDIA architectures — but both train MLP towers with `aten::mm` / `aten::addmm`
  / `aten::bmm` in fp32, and neither links kernels to operators by External id (HTA cut the A100
  trace out of a bigger one; the V100 one stamps kernels with their correlation id), so the
  launching operator comes from the host call around each launch.
- Synthetic pairs whose answer is known: one model's GEMMs with recorded shapes (matched by op
  and shape), and without any operator (nsys / rocprof: matched by the architecture-neutral name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis.pipeline import analyze
from gpuscope.diff import diff
from gpuscope.diff.names import architecture_neutral
from gpuscope.trace.registry import read_trace
from tests.unit.diff.kineto import Call, Writer

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
A100 = "hta__a100_sampled_rank-0.json.gz"
V100 = "hta__v100_profile_memory_nccl_rank1_BENCH.json.gz"
CUTLASS = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4::Params)"  # noqa: E501
AMPERE, VOLTA = "ampere_sgemm_128x64_nn", "volta_sgemm_128x64_nn"
VOLTA_NT = "volta_sgemm_128x32_nt"
MM_DIMS, ADDMM_DIMS = ((2048, 512), (512, 256)), ((256,), (2048, 512), (512, 256))


def report_of(before: str, after: str) -> dict[str, Any]:
    paths = [TRACES / name for name in (before, after)]
    for path in paths:
        if not path.is_file():
            pytest.skip(f"reference trace {path.name} not found under {TRACES.resolve()}")
    a, b = (analyze(read_trace(str(p))) for p in paths)
    return diff(a, b).to_dict()


@pytest.fixture(scope="module")
def a100_v100() -> dict[str, Any]:
    return report_of(A100, V100)


def _gemm_names(change: dict[str, Any], side: str) -> list[str]:
    return [n for n in change[side]["names"] if "gemm" in n]


def test_no_gemm_of_either_architecture_is_new_or_vanished(a100_v100: dict[str, Any]) -> None:
    changes = [c for c in a100_v100["kernels"]["changes"] if c["category"] == "gemm"]
    lonely = [c["key"] for c in changes if c["match"] in ("new", "vanished")]
    assert not lonely, f"GEMMs left unmatched: {lonely}"
    before = {n for c in changes for n in c["before"]["names"]}
    assert any(n.startswith("ampere_sgemm_") for n in before)
    assert any("cutlass_80_" in n for n in before)


def test_ampere_sgemm_meets_volta_sgemm_of_its_layout(a100_v100: dict[str, Any]) -> None:
    arch = {c["key"]: c for c in a100_v100["kernels"]["changes"] if c["match"] == "arch"}
    assert {"gemm: sgemm_nn", "gemm: sgemm_tn", "gemm: sgemm_tt"} <= set(arch)
    for key, change in arch.items():
        layout = key.rsplit("_", 1)[1]
        assert all(n.startswith("ampere_sgemm_") and n.endswith(layout)
                   for n in change["before"]["names"])  # fmt: skip
        assert all(n.startswith("volta_sgemm_") and n.endswith(layout)
                   for n in change["after"]["names"])  # fmt: skip


def test_cutlass_80_meets_the_v100_gemms_of_its_operator(a100_v100: dict[str, Any]) -> None:
    by_op = {c["key"]: c for c in a100_v100["kernels"]["changes"] if c["match"] == "op"}
    for op in ("aten::mm", "aten::addmm", "aten::bmm"):
        change = by_op[f"gemm: {op}"]
        assert change["shape"] == {"op": op, "input_dims": "", "input_types": ""}
        assert any("cutlass_80_tensorop_s1688gemm" in n for n in change["before"]["names"])
        assert _gemm_names(change, "after"), f"{op}: no V100 GEMM on the other side"
    mm = by_op["gemm: aten::mm"]
    assert all(n.startswith("volta_sgemm_") for n in mm["after"]["names"])


def test_collectives_are_not_paired_by_their_wrapper_operator(a100_v100: dict[str, Any]) -> None:
    """`record_param_comms` launches the A100's SendRecv and the V100's AllReduce: not one thing."""
    comm = [c for c in a100_v100["kernels"]["changes"] if c["category"] == "communication"]
    assert {c["match"] for c in comm} == {"new", "vanished"}


def test_same_model_with_shapes_is_matched_by_op_and_shape(tmp_path: Path) -> None:
    a100, v100 = Writer(device="NVIDIA A100-SXM4-80GB"), Writer(device="Tesla V100-SXM2-32GB")
    for step in range(3):
        a100.step(step, [Call(CUTLASS, 40.0, "aten::mm", MM_DIMS),
                         Call(AMPERE, 20.0, "aten::addmm", ADDMM_DIMS)])  # fmt: skip
        v100.step(step, [Call(VOLTA_NT, 90.0, "aten::mm", MM_DIMS),
                         Call(VOLTA, 45.0, "aten::addmm", ADDMM_DIMS)])  # fmt: skip
    a = analyze(read_trace(str(a100.write(tmp_path / "a100.json"))))
    b = analyze(read_trace(str(v100.write(tmp_path / "v100.json"))))
    changes = {c["shape"]["op"]: c for c in diff(a, b).to_dict()["kernels"]["changes"]}
    assert {c["match"] for c in changes.values()} == {"shape"}
    mm, addmm = changes["aten::mm"], changes["aten::addmm"]
    assert (mm["before"]["names"], mm["after"]["names"]) == ([CUTLASS], [VOLTA_NT])
    assert mm["shape"]["input_dims"] == "[[2048,512],[512,256]]"
    assert mm["delta_us"] == pytest.approx(3 * 50.0, abs=1e-3)
    assert (addmm["before"]["names"], addmm["after"]["names"]) == ([AMPERE], [VOLTA])


def test_without_operators_the_architecture_neutral_name_matches(tmp_path: Path) -> None:
    """nsys / rocprof record no launching operator: the kernel family without `volta_`."""
    a100, v100 = Writer(), Writer()
    for step in range(3):
        a100.step(step, [Call(AMPERE, 20.0)])
        v100.step(step, [Call(VOLTA, 45.0)])
    for writer in (a100, v100):  # kernels and launches only
        writer.events = [e for e in writer.events if e["cat"] != "cpu_op"]
    a = analyze(read_trace(str(a100.write(tmp_path / "a.json"))))
    b = analyze(read_trace(str(v100.write(tmp_path / "b.json"))))
    [change] = diff(a, b).to_dict()["kernels"]["changes"]
    assert (change["match"], change["key"]) == ("arch", "gemm: sgemm_nn")
    assert change["delta_us"] == pytest.approx(3 * 25.0, abs=1e-3)


@pytest.mark.parametrize(
    ("name", "neutral"),
    [
        (AMPERE, "sgemm_nn"),
        (VOLTA, "sgemm_nn"),
        ("volta_sgemm_32x32_sliced1x4_nt", "sgemm_nt"),
        (CUTLASS, "cutlass::Kernel<cutlass_tensorop_s1688gemm_nt>"),
        ("void cutlass::Kernel<cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_align8>"
         "(Params)", "cutlass::Kernel<cutlass_wmma_tensorop_f16_s161616gemm_f16_tn>"),
        ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", "nvjet_tst_v_bz_TNT"),
        ("cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1",
         "cudnn_infer_scudnn_relu_medium_nn_v1"),
        ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_"
         "aligna4_alignc4_execute_kernel__5x_cublas",
         "xmma_gemm_f32f32_f32f32_f32_nn_n_stage3_ffma_aligna4_alignc4_execute_kernel__5x_cublas"),
        ("flash_attn_ext_f16", None),  # no architecture in the name: nothing new to match on
        ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"
         "(int)", None),
    ],
)  # fmt: skip
def test_architecture_neutral_names(name: str, neutral: str | None) -> None:
    assert architecture_neutral(name) == neutral


def test_the_operator_around_a_launch_owns_a_kernel_whose_id_names_none(tmp_path: Path) -> None:
    """HTA's sampled A100 rank: kernels carry their correlation id as External id, no operator
    has it; the cudaLaunchKernel nested in `aten::mm` on the same thread says who launched them."""
    writer = Writer()
    writer.step(0, [Call(AMPERE, 20.0, "aten::mm", MM_DIMS), Call(VOLTA, 20.0, "aten::addmm")])
    for event in writer.events:  # kernels and launches stamped with their correlation id
        if event["cat"] in ("kernel", "cuda_runtime"):
            event["args"]["External id"] = 10_000 + event["args"]["correlation"]
    lone = {"device": 0, "stream": 7}  # a kernel no host call is linked to: no owner
    writer.events.append({"ph": "X", "cat": "kernel", "name": "lone", "pid": 0, "tid": 7,
                          "ts": 5000.0, "dur": 1.0, "args": lone})  # fmt: skip
    a = analyze(read_trace(str(writer.write(tmp_path / "t.json"))))
    names = [a.trace.names[i] for i in a.trace.gpu.name]
    owners = {n: a.trace.names[a.trace.ops.name[o]] if o >= 0 else None
              for n, o in zip(names, a.owners.tolist(), strict=True)}  # fmt: skip
    assert owners == {AMPERE: "aten::mm", VOLTA: "aten::addmm", "lone": None}
