"""Issue 20: the kind of program is told from the trace, every action is phrased for it, and gap
causes, copy sizes and copy tracing read what the host really did — on real files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import gpuscope
from tests.unit.analysis.conftest import TraceBuilder

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / ".." / "shared" / "reference"
RECORDED = REPO / "tests" / "data" / "recorded"
PYTORCH_WORDS = re.compile(r"torch|\.item\(\)|pin_memory|record_shapes|autocast|\bPyTorch\b")


def report_of(path: Path) -> dict[str, Any]:
    if not path.exists():
        pytest.skip(f"{path} not found (the sibling shared/ checkout is absent)")
    result: dict[str, Any] = gpuscope.analyze(str(path)).to_dict()
    return result


@pytest.mark.parametrize(
    ("path", "label"),
    [
        (REFERENCE / "traces" / "llama_decode_h200.json.gz", "PyTorch"),
        (REFERENCE / "traces" / "llama_compiled_h200.json.gz",
         "PyTorch (torch.compile, CUDA graphs)"),
        (REFERENCE / "traces" / "tl__mi300x_vllm_decode_hipgraph.json.gz",
         "vLLM serving (PyTorch, torch.compile, HIP graphs)"),
        (RECORDED / "compiled_default_h200.json.gz", "PyTorch (torch.compile)"),
        (REFERENCE / "formats" / "nsys" / "vectoraddition-a100-nsys2022.2" / "report4.sqlite",
         "CUDA C++"),
        (REFERENCE / "formats" / "rocprofv3" / "rocpd-db-gfx942" / "15_results.db", "HIP C++"),
        (REFERENCE / "formats" / "rpd" / "matmul_result.rpd", "PyTorch"),  # ATen kernels
        (RECORDED / "ncu_tiny_grid_h200_details.csv", "CUDA C++"),
    ],
)  # fmt: skip
def test_the_program_kind_is_told_from_the_trace(path: Path, label: str) -> None:
    report = report_of(path)
    assert report["program"]["label"] == label, report["program"]


@pytest.mark.parametrize(
    "path",
    [
        REFERENCE / "formats" / "nsys" / "vectoraddition-a100-nsys2022.2" / "report4.sqlite",
        REFERENCE / "formats" / "rocprofv3" / "rocpd-db-gfx942" / "15_results.db",
        REFERENCE / "formats" / "rocprof-v1" / "kokkos-rocm4-2021",
    ],
)
def test_no_pytorch_advice_for_a_cpp_program(path: Path) -> None:
    """A plain CUDA / HIP program gets runtime calls in its actions, never torch knobs."""
    report = report_of(path)
    assert report["program"]["kind"] in ("cuda-cpp", "hip-cpp")
    api = "cuda" if report["program"]["kind"] == "cuda-cpp" else "hip"
    actions = [f["action"] for f in report["findings"]]
    assert actions
    for action in actions:
        assert not PYTORCH_WORDS.search(action), action
    assert any(api in a.lower() for a in actions), actions


def test_the_cold_start_gap_of_a_hip_program_is_start_up_not_a_sync() -> None:
    """The issue's case: a 2.7 s gap before the first rocBLAS GEMM that ends in a code-object
    load was 'a blocking synchronize drained the queue… remove host syncs'."""
    report = report_of(REFERENCE / "formats" / "rpd" / "matmul_result.rpd")
    largest = report["gaps"]["largest"]
    assert largest["cause"] == "startup" and largest["time_us"] > 2_700_000
    assert largest["after"].startswith("Cijk_")  # the first rocBLAS / Tensile GEMM
    assert "start-up work" in report["verdict"]["reason"]
    gap = next(f for f in report["findings"] if f["id"] == "idle-gap")
    assert gap["cause"] == "cold-start" and "rpd" in gap["action"]  # its own profiler's window
    assert "sync" not in gap["action"].split(".")[0].lower()
    assert not any(f["id"] == "sync-overhead" for f in report["findings"])


def test_host_time_after_a_sync_is_host_time(builder: TraceBuilder, tmp_path: Path) -> None:
    """Each step: the host syncs, returns when the GPU is done, then works 20 ms before the next
    launch (the late DDP rank's pattern). That gap is the host's, not the sync's."""
    t = 0.0
    for step in range(6):
        builder.launch("step_kernel", at=t, start=t + 5, dur=1000.0)
        builder.runtime("cudaDeviceSynchronize", t + 10, 996.0, corr=900 + step)
        t += 1006.0 + 20_000.0  # the sync returns at t+1006, then 20 ms of host work
    report = builder.analyze(tmp_path / "t.json", span=(0.0, t)).to_dict()
    attribution = report["gaps"]["attribution"]
    assert attribution["host_work"]["time_us"] > 0.95 * report["idle_us"]
    assert attribution["sync"]["time_us"] < 0.01 * report["idle_us"]
    assert report["verdict"]["bound"] == "cpu-bound"
    work = next(f for f in report["findings"] if f["id"] == "host-work")
    assert "follows a blocking sync" in work["message"] and work["cause"] == "host-work"
    assert "before the .item()" in work["action"]  # launch before syncing


def test_an_unknown_copy_size_is_null_never_zero() -> None:
    """rpd2tracing's JSON has no copy sizes: bytes is unknown (null), and no bandwidth is
    made up from it; the .rpd of the same run has them (12.9 GB/s host to device)."""
    unsized = report_of(REFERENCE / "formats" / "rpd" / "matmul_result.json")
    assert unsized["memcpy"]["bytes"] is None and unsized["memcpy"]["sized"] == 0
    assert all(k["bytes"] is None for k in unsized["memcpy"]["by_kind"].values())
    sized = report_of(REFERENCE / "formats" / "rpd" / "matmul_result.rpd")
    copies = next(f for f in sized["findings"] if f["id"] == "host-device-copies")
    htod = copies["evidence"]["by_kind"]["HtoD"]
    assert htod["gb_per_s"] == pytest.approx(htod["bytes"] / (htod["time_us"] * 1000), rel=1e-3)
    assert htod["gb_per_s"] > 10


def test_copies_not_traced_are_flagged() -> None:
    """rocpd of a run with hipMemcpy calls but no copy tracing."""
    report = report_of(REFERENCE / "formats" / "rocprofv3" / "rocpd-db-gfx942" / "15_results.db")
    flags = {f["id"]: f for f in report["integrity"]}
    assert "copies-not-traced" in flags and "hipMemcpy" in flags["copies-not-traced"]["message"]
    assert report["memcpy"]["count"] == 0


def test_the_program_is_in_the_json_and_the_header(tmp_path: Path) -> None:
    path = REFERENCE / "formats" / "nsys" / "vectoraddition-a100-nsys2022.2" / "report4.sqlite"
    report = report_of(path)
    json.dumps(report)
    from gpuscope.analysis.layout import summary_document

    assert summary_document(report).subtitle.startswith("CUDA C++")


def test_unified_memory_migrations_are_their_own_finding() -> None:
    """nsys records managed-memory page migrations as 'Unified' copies: a CUDA program that
    touches managed memory gets prefetch / advise advice, not host-copy advice."""
    report = report_of(
        REFERENCE / "formats" / "nsys" / "vectoraddition-a100-nsys2022.2" / "report4.sqlite"
    )
    assert set(report["memcpy"]["by_kind"]) == {"migration"}
    found = {f["id"]: f for f in report["findings"]}
    assert "host-device-copies" not in found
    um = found["unified-memory"]
    assert um["cause"] == "unified-memory" and "cudaMemPrefetchAsync" in um["action"]
    assert um["evidence"]["migrations"] == 1792


# rocprof v1's kernel trace (results.csv) as it records llama.cpp's HIP backend on an RDNA4 GPU:
# its header and ggml's kernel names (github.com/JoursBleu/llama.cpp @ cc6b8528, where the
# quantized matmul held 90 % of 662 ms of kernel time; the file is not under ../shared)
ROCPROF_V1_HEADER = (
    '"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds","scr",'
    '"arch_vgpr","accum_vgpr","sgpr","wave_size","sig","obj","DispatchNs","BeginNs","EndNs",'
    '"CompleteNs","DurationNs"'
)
ARGS = "(char const*, int const*, int const*, int const*, float*, float*, int, int, int)"
LLAMA_KERNELS = (  # name, grd (work-items), wgr, duration (ns)
    (f"void mul_mat_q<(ggml_type)2, 128, false>{ARGS} [clone .kd]", 32768, 256, 1_000_000),
    (
        "void quantize_mmq_q8_1<(mmq_q8_1_ds_layout)1>(float const*, int const*, void*, long) "
        "[clone .kd]",
        524288,
        128,
        12_000,
    ),
    (
        "void soft_max_f32<true, 512, 512, float>(float const*, float const*, float*, "
        "soft_max_params) [clone .kd]",
        8388608,
        512,
        40_000,
    ),
    (
        "void rms_norm_f32<1024, true, false>(float const*, float*, int, long, long, long, float) "
        "[clone .kd]",
        524288,
        1024,
        25_000,
    ),
)


def rocprof_v1_report(
    folder: Path, kernels: tuple[tuple[str, int, int, int], ...], steps: int = 20
) -> dict[str, Any]:
    """The analysis of a rocprof v1 kernel trace of `steps` rounds of `kernels` (no host API
    trace, so the gaps' cause is unknown)."""
    rows, t = [ROCPROF_V1_HEADER], 769537349987029
    for _ in range(steps):
        for name, grd, wgr, dur in kernels:
            i = len(rows) - 1
            times = f"{t - 30_000},{t},{t + dur},{t + dur + 2000},{dur}"
            rows.append(f'{i},"{name}",2,0,{i},2375942,2375942,{grd},{wgr},0,0,64,0,128,32,'
                        f'"0x0","0x7099e4d469c0",{times}')  # fmt: skip
            t += dur + 50_000
    (folder / "results.csv").write_text("\n".join(rows) + "\n")
    result: dict[str, Any] = gpuscope.analyze(str(folder / "results.csv")).to_dict()
    return result


def test_llama_cpp_is_told_by_its_kernels_and_advised_in_its_own_options(tmp_path: Path) -> None:
    """The issue's case: llama.cpp's quantized matmul (mul_mat_q, 90 % of kernel time) was
    "other" with a GEMM share of 1 %, and the advice spoke of BLAS heuristics and torch."""
    report = rocprof_v1_report(tmp_path, LLAMA_KERNELS)
    assert report["program"]["kind"] == "ggml" and report["program"]["label"] == "llama.cpp (ggml)"
    assert report["program"]["evidence"]["example_kernel"].startswith("void mul_mat_q<")
    assert report["gemm_share"] > 0.9  # mul_mat_q is a GEMM, not "other"
    heavy = next(f for f in report["findings"] if f["id"] == "gemm-heavy")
    assert "llama-bench" in heavy["action"] and "GGML_CUDA_FORCE_MMQ" in heavy["action"]
    assert "hipBLAS" in heavy["action"]  # an AMD trace: the HIP build's BLAS
    for finding in report["findings"]:
        assert not PYTORCH_WORDS.search(finding["action"]), finding["action"]
        assert (
            "Heuristic" not in finding["action"]
        )  # no BLAS algorithm search for ggml's own kernels


def test_llama_cpp_graphs_are_built_by_default_on_cuda_and_asked_for_on_hip() -> None:
    """llama.cpp's CMake: GGML_CUDA_GRAPHS defaults on; GGML_HIP_GRAPHS is off ("experimental")."""
    from gpuscope.analysis import advice
    from gpuscope.analysis.program import Program

    nvidia, amd = Program("ggml", vendor="nvidia"), Program("ggml", vendor="amd")
    assert "GGML_CUDA_DISABLE_GRAPHS must stay unset" in advice.host_launch(nvidia, True)
    assert "-DGGML_HIP_GRAPHS=ON" in advice.host_launch(amd, True)
    assert "cuBLAS" in advice.gemm_tuning(nvidia) and "hipBLAS" in advice.gemm_tuning(amd)
    assert "rocprofv3 --pmc" in advice.profile_shapes(Program("hip-cpp", vendor="amd"))
    assert "ncu" in advice.profile_shapes(Program("cuda-cpp", vendor="nvidia"))
    # an ncu input is counters already: asked again for its roofline sections, not "collect"
    again = advice.profile_shapes(Program("cuda-cpp", vendor="nvidia"), "ncu")
    assert "--section SpeedOfLight" in again and not again.startswith("Collect")


# Oceananigans.jl (KernelAbstractions on AMDGPU.jl) as rocprof v1 names its kernels on an MI210:
# mangled, and GPUArrays' broadcast demangled (FluidNumerics/oceananigans-on-amd-gpus @ 12e7c70,
# report/Benchmark Report.md; the names there are cut at 72 characters, completed here)
OCEANANIGANS = (
    (
        "_Z40gpu_compute_hydrostatic_free_surface_Gc_16CompilerMetadataI10StaticSizeI14_144__144__24"
        "_E12DynamicCheckvv7NDRangeILi3ES0_I11_9__9__24_ES0_I11_16__16__1_EvvEE",
        331776,
        256,
        400_000,
    ),
    (
        "broadcast_kernel(ROCKernelContext, ROCDeviceArray<Float64, 3, 1>, "
        "Broadcasted<ROCArrayStyle<3>, Nothing, typeof(identity), Tuple<Float64>>, Int64)",
        497664,
        256,
        20_000,
    ),
)


def test_a_julia_program_is_told_by_its_kernel_signatures(tmp_path: Path) -> None:
    report = rocprof_v1_report(tmp_path, OCEANANIGANS)
    assert report["program"]["kind"] == "julia", report["program"]
    families = report["families"]
    assert "KernelAbstractions (Julia)" in json.dumps(families)
    for finding in report["findings"]:
        assert not PYTORCH_WORDS.search(finding["action"]), finding["action"]
