"""Kernel categories decided by the part of the name that says what the kernel is.

Every name below is a real kernel family seen in serving and training stacks (TRT-LLM / FlashInfer
MoE GEMMs, cuDNN convolutions, Inductor kernels, vLLM MoE routing, FBGEMM); the element types,
argument lists and epilogue words in them must not decide the category.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.analysis.categories import load_rules

from .conftest import TraceBuilder

RULES = load_rules()

CASES = [
    # MoE batched GEMMs whose names end in an activation or carry element types (TRT-LLM/FlashInfer)
    (
        "bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x512u2_s4_et128x8_m128x8x64_cga1x1x1_16dp256b_TN_"
        "transOut_schedS_bN_swiGlu_dynBatch_sm100a",
        "nvidia",
        "gemm",
    ),
    ("bmm_Bfloat16_MxE2m1MxE4m3_castMxE4m3_Fp32_t128x8x256_s5_TN_sm100a", "nvidia", "gemm"),
    ("void tensorrt_llm::kernels::cutlass_kernels::MoeFCGemm<float>(int)", "nvidia", "gemm"),
    ("fused_moe_kernel", "amd", "gemm"),
    # a cuDNN convolution whose name carries its fused epilogue
    ("cudnn_infer_volta_scudnn_128x64_relu_interior_nn_v1", "nvidia", "convolution"),
    (
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize",
        "nvidia",
        "convolution",
    ),
    # normalization and quantize kernels whose template / argument types name other libraries
    (
        "void flashinfer::norm::RMSNormKernel<8u, cutlass::bfloat16_t>(cutlass::bfloat16_t*)",
        "nvidia",
        "normalization",
    ),
    (
        "void flashinfer::quantize_with_block_size<(flashinfer::BlockScaleQuantizationType)0, "
        "__nv_bfloat16, 16>(int, __nv_bfloat16 const*, flashinfer::QuantizationSFLayout)",
        "nvidia",
        "quantization",
    ),
    (
        "void fbgemm_gpu::(anonymous namespace)::_compute_FP8_quantize_cuda_kernel<float>(float*)",
        "nvidia",
        "quantization",
    ),
    # "fbgemm" is not "gemm"
    (
        "void fbgemm_gpu::permute_2D_data_kernel<false, int, int>(int, int const*)",
        "nvidia",
        "other",
    ),
    (
        "void split_embedding_codegen_forward_unweighted_kernel<c10::Half>(float*)",
        "nvidia",
        "embedding",
    ),
    (
        "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)",
        "nvidia",
        "elementwise",
    ),
    # communication without "nccl" in the name
    ("void multimem_all_reduce_kernel<__nv_bfloat16>(__nv_bfloat16*)", "nvidia", "communication"),
    (
        "void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<bf16>(int)",
        "nvidia",
        "communication",
    ),
    (
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "nvidia",
        "communication",
    ),
    # MoE routing / finalize
    ("_combined_routing_compute", "amd", "moe"),
    ("void tensorrt_llm::kernels::finalizeMoeRoutingKernel<float>(float const*)", "nvidia", "moe"),
    ("void vllm::moe::moe_align_block_size_kernel<int>(int const*)", "nvidia", "moe"),
    ("void vllm::moe::topkGatingSoftmax<8, 128>(float const*)", "nvidia", "moe"),
    # Inductor kernels: the prefix says the kind, the fused-op list does not
    (
        "triton_poi_fused__scaled_dot_product_cudnn_attention__to_copy__unsafe_view_add_arange",
        "nvidia",
        "elementwise",
    ),
    ("triton_red_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0", "nvidia", "reduction"),
    ("triton_tem_fused_mm_0", "nvidia", "gemm"),
    # template arguments that are kernels, not types
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>(Params)",
        "nvidia",
        "gemm",
    ),
    (
        "void cutlass::device_kernel<flash::FlashAttnFwdSm90<flash::Mainloop<2>>>(flash::Params)",
        "nvidia",
        "attention",
    ),
    (
        "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float>(Params)",
        "nvidia",
        "gemm",
    ),
    ("void epilogue::impl::globalKernel<float, float, float, true, true>(int)", "nvidia", "gemm"),
    # ROCm families
    ("Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x128x64_MI16x16x1_SN", "amd", "gemm"),
    (
        "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long)",
        "amd",
        "normalization",
    ),
    (
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int)",
        "nvidia",
        "reduction",
    ),
]


@pytest.mark.parametrize(("name", "vendor", "category"), CASES, ids=[c[0][:40] for c in CASES])
def test_category_from_the_kernels_own_name(name: str, vendor: str, category: str) -> None:
    assert (RULES.classify_kernel(name, vendor) or "other") == category


def test_a_weak_word_gives_way_to_the_launching_op(builder: TraceBuilder, tmp_path: Path) -> None:
    """An activation word decides only when the launching operator says nothing stronger."""
    conv = builder.op("aten::cudnn_convolution", 0, 50)
    builder.launch("void fused_bias_relu_kernel<float>(float*)", 10, 20, 5, ext=conv)
    builder.launch("void fused_bias_relu_kernel<float>(float*)", 60, 70, 5)
    analysis = builder.analyze(tmp_path / "t.json")
    assert analysis.categories["convolution"] == (1, 5_000)
    assert analysis.categories["elementwise"] == (1, 5_000)


def test_a_strong_kernel_name_is_not_overridden_by_its_op(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    linear = builder.op("aten::linear", 0, 50)
    builder.launch("void at::native::vectorized_elementwise_kernel<4, AddFunctor>()", 10, 20, 5,
                   ext=linear)  # fmt: skip
    analysis = builder.analyze(tmp_path / "t.json")
    assert analysis.categories["elementwise"] == (1, 5_000)
