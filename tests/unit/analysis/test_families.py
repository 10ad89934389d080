"""Kernel families: every packaged rule names the library or compiler it recognises and carries a
real example name with its source, and the example is classified by that very rule.

Sources are checked where they are on this machine: a `reference: <path>` example must occur in
that reference output (read in place from ../shared/reference, skipped when absent), a
`tests/data/…` one in that recording; URLs are public source files (llama.cpp, MIOpen, vLLM …).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpuscope.analysis.categories import GENERIC, UNKNOWN, Rule, load_rules
from gpuscope.analysis.pipeline import analyze_file
from gpuscope.errors import ConfigError

from .conftest import TraceBuilder

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / ".." / "shared" / "reference"
RULES = load_rules()
PREFIX = "reference: "

# ggml's own names, as rocprof recorded them for llama.cpp on an RDNA4 GPU
# (github.com/JoursBleu/llama.cpp @ cc6b8528, results.stats.csv; " [clone .kd]" dropped as the
# readers do): the quantized matmul held 90 % of kernel time there
GGML = [
    (
        "void mul_mat_q<(ggml_type)2, 128, false>(char const*, int const*, int const*, int const*, "
        "float*, float*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, "
        "int, "
        "int, int)",
        "gemm",
    ),
    (
        "void mul_mat_vec_q<(ggml_type)14, 1, false, false>(void const*, void const*, int const*, "
        "ggml_cuda_mm_fusion_args_device, float*, unsigned int, HIP_vector_type<unsigned int, 3u>, "
        "unsigned int)",
        "gemm",
    ),
    (
        "void soft_max_f32<true, 512, 512, float>(float const*, float const*, float const*, "
        "float*, "
        "soft_max_params)",
        "softmax",
    ),
    (
        "void unary_gated_op_kernel<&(op_silu(float)), float>(float const*, float const*, float*, "
        "long, long, long, long)",
        "elementwise",
    ),
    (
        "void convert_unary<float, __half>(void const*, __half*, long, long, long, "
        "HIP_vector_type<unsigned int, 3u>, long, long, long)",
        "elementwise",
    ),
    (
        "void quantize_mmq_q8_1<(mmq_q8_1_ds_layout)1>(float const*, int const*, void*, long, "
        "long, "
        "long, long, long, int, int)",
        "quantization",
    ),
    (
        "void cpy_scalar<&(void cpy_1_scalar<float, float>(char const*, char*))>(char const*, "
        "char*, "
        "long, long)",
        "elementwise",
    ),
    ("void rope_norm<true, false, float, __half>(float const*, __half*, int, int)", "elementwise"),
    (
        "void k_set_rows<float, long, __half>(float const*, long const*, __half*, long)",
        "elementwise",
    ),
    (
        "void k_bin_bcast<&(op_add(float, float)), float, float, float, "
        "float const*>(float const*, "
        "float const*, float*, int, int, int)",
        "elementwise",
    ),
    (
        "void rms_norm_f32<1024, true, false>(float const*, float*, int, long, long, long, float)",
        "normalization",
    ),
    (
        "quantize_q8_1(float const*, void*, long, long, long, long, long, unsigned int, "
        "HIP_vector_type<unsigned int, 3u>)",
        "quantization",
    ),
    (
        "void k_get_rows_float<float, float>(float const*, int const*, float*, long, long, long)",
        "elementwise",
    ),
    # ggml-cuda sources (ggml/src/ggml-cuda/: fattn*.cu, convert.cu)
    ("flash_attn_ext_f16", "attention"),
    ("flash_attn_tile_ext_f32", "attention"),
    (
        "void dequantize_block<32, 2, &dequantize_q4_0, __half>(void const*, __half*, long)",
        "quantization",
    ),
]


def _vendor(rule: Rule) -> str:
    return rule.vendor if rule.vendor != "any" else "unknown"


def _text(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def _label(rule: Rule) -> str:
    return f"{rule.category}/{rule.family}: {rule.pattern.pattern[:40]}"


@pytest.mark.parametrize("rule", RULES.kernel, ids=_label)
def test_every_kernel_rule_decides_its_own_example(rule: Rule) -> None:
    assert rule.family and rule.example and rule.source, "a packaged rule needs all three"
    match = RULES.match_kernel(rule.example, _vendor(rule))
    if rule.names_family_only:
        assert RULES.classify_family(rule.example, _vendor(rule)) == rule.family
        return
    assert match.rule is rule, f"decided by {match.rule and _label(match.rule)}"
    assert RULES.classify_kernel(rule.example, _vendor(rule)) == rule.category
    if rule.family != GENERIC:  # a generic rule leaves the family to the name's namespace
        assert match.family == rule.family


@pytest.mark.parametrize("rule", RULES.op, ids=_label)
def test_every_op_rule_decides_its_own_example(rule: Rule) -> None:
    assert rule.example and rule.source
    assert RULES.match_op(rule.example) is rule


@pytest.mark.parametrize("rule", [*RULES.kernel, *RULES.op], ids=_label)
def test_every_example_is_in_its_source(rule: Rule) -> None:
    source = rule.source
    if source.startswith("https://"):
        return
    if source.startswith(PREFIX):
        if not REFERENCE.is_dir():
            pytest.skip(f"reference outputs not found: {REFERENCE.resolve()}")
        path = REFERENCE / source.removeprefix(PREFIX)
    else:
        assert source.startswith("tests/data/"), f"not a reference path, recording or URL: {source}"
        path = REPO / source
    assert path.is_file(), f"{source}: no such file"
    assert rule.example.encode() in _text(path), f"{rule.example[:60]!r} is not in {source}"


def test_families_are_listed_once_generic_and_other_last() -> None:
    families = RULES.families
    assert len(set(families)) == len(families)
    assert families[-2:] == (GENERIC, UNKNOWN)
    for name in (
        "ggml",
        "Tensile (rocBLAS / hipBLASLt)",
        "Composable Kernel",
        "MIOpen",
        "AITER",
        "Triton (Inductor)",
        "XLA",
        "CUTLASS",
        "nvjet (cuBLAS)",
        "xmma",
        "cuBLAS",
        "NCCL / RCCL",
        "PyTorch ATen",
        "FlashAttention",
        "matrix-core kernels (user HIP)",
    ):
        assert name in families  # fmt: skip


@pytest.mark.parametrize(("name", "category"), GGML, ids=[n[:32] for n, _ in GGML])
def test_ggml_kernels_by_their_own_names(name: str, category: str) -> None:
    assert RULES.classify_kernel(name, "amd") == category
    assert RULES.classify_family(name, "amd") == "ggml"


@pytest.mark.parametrize(
    ("name", "vendor", "category", "family"),
    [
        # a family-only rule names the library and lets the category search go on
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3> >(int)",
            "nvidia",
            "elementwise",
            "PyTorch ATen",
        ),
        ("at::cuda::(anonymous namespace)::spin_kernel(long)", "nvidia", "other", "PyTorch ATen"),
        (
            "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePass",
            "amd",
            "normalization",
            "Composable Kernel",
        ),
        (
            "void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>(float)",
            "nvidia",
            "normalization",
            "cuDNN",
        ),
        # XLA fusions: the emitter and hero op say the kind
        ("loop_convert_multiply_fusion", "nvidia", "elementwise", "XLA"),
        ("input_reduce_fusion", "nvidia", "reduction", "XLA"),
        ("gemm_fusion_dot_general_8", "nvidia", "gemm", "XLA"),
        ("fusion_52", "nvidia", "other", "XLA"),
        # MIOpen's tensor ops are not "tensorop" GEMMs
        ("SubTensorOpWithScalar1d", "amd", "elementwise", "MIOpen"),
        ("batched_transpose_32x32_dword", "amd", "elementwise", "MIOpen"),
        (
            "igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt256x128x32_wt32x32x8_ws1x1_wr2x2",
            "amd",
            "convolution",
            "MIOpen",
        ),
        # ncu writes an anonymous namespace as `unnamed>::`
        (
            "void unnamed>::distribution_elementwise_grid_stride_kernel<float, 4, void "
            "normal_and_transform<float, float>(int)>(int, float)",
            "nvidia",
            "elementwise",
            "generic",
        ),
        ("volta_sgemm_128x64_nn", "nvidia", "gemm", "cuBLAS"),
        ("no_rule_knows_this_kernel", "nvidia", "other", UNKNOWN),
    ],
)
def test_category_and_family(name: str, vendor: str, category: str, family: str) -> None:
    assert (RULES.classify_kernel(name, vendor) or "other") == category
    assert RULES.classify_family(name, vendor) == family


def test_a_rocpd_matrix_core_gemm_is_a_gemm() -> None:
    """The issue's rocpd DB: a user's MFMA batched GEMM held 90 % of kernel time, was "other"."""
    path = REFERENCE / "formats" / "rocprofv3" / "rocpd-db-gfx942" / "15_results.db"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    report = analyze_file(path).to_dict()
    assert report["gemm_share"] == pytest.approx(0.902, abs=1e-3)
    family = report["families"]["matrix-core kernels (user HIP)"]
    assert family["share"] == pytest.approx(0.902, abs=1e-3) and family["count"] == 150
    assert "batched_matrix_multiplication_matrix_core" in family["top"]


def test_family_totals_in_the_report(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.launch("void mul_mat_q<(ggml_type)12, 64, false>(char const*)", 0, 10, 90)
    builder.launch("void mul_mat_q<(ggml_type)12, 64, false>(char const*)", 200, 210, 90)
    builder.launch("void mul_mat_vec_q<(ggml_type)12, 1, false>(void const*)", 400, 410, 10)
    builder.launch("my_own_kernel", 600, 610, 10)
    families = builder.analyze(tmp_path / "t.json").to_dict()["families"]
    assert list(families) == ["ggml", UNKNOWN]
    top = "void mul_mat_q<(ggml_type)12, 64, false>(char const*)"
    assert families["ggml"] == {"count": 3, "time_us": 190.0, "share": 0.95, "top": top}
    assert families[UNKNOWN]["share"] == 0.05


def test_user_rules_may_name_a_family(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    rule = {"category": "gemm", "pattern": "^my_gemm", "family": "my library",
            "example": "my_gemm_128", "source": "https://example.org/my_gemm.cu"}  # fmt: skip
    plain = {"category": "softmax", "pattern": "^sm_"}
    path.write_text(json.dumps({"kernel_rules": [rule, plain]}))
    rules = load_rules(path)
    assert rules.classify_family("my_gemm_128", "nvidia") == "my library"
    assert rules.classify_family("sm_kernel", "nvidia") == GENERIC  # no family given
    assert rules.families[0] == "my library"
    path.write_text(json.dumps({"kernel_rules": [{**rule, "family": ""}]}))
    with pytest.raises(ConfigError, match="family"):
        load_rules(path)
    path.write_text(json.dumps({"kernel_rules": [{**rule, "familly": "x"}]}))
    with pytest.raises(ConfigError, match="familly"):
        load_rules(path)


def test_docs_list_every_family() -> None:
    """docs/analyze.md's table has a row per family the packaged rules name."""
    text = (REPO / "docs" / "analyze.md").read_text("utf-8")
    rows = {line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")}
    missing = [f for f in RULES.families[:-1] if f not in rows]
    assert not missing, f"docs/analyze.md lists no row for {missing}"
