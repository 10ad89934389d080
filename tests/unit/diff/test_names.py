"""The three levels of kernel-name normalisation, on names taken from the reference traces."""

from __future__ import annotations

import pytest

from gpuscope.diff.names import exact, family, normalised

ADD4 = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"  # noqa: E501
ADD8 = ADD4.replace("<4,", "<8,")
CUTLASS = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)"  # noqa: E501
TENSILE = "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0_AFC1_AFEM1"


def test_exact_drops_hashes_only() -> None:
    assert exact("my_kernel_0x1f3a9c2e") == "my_kernel"
    assert exact("fused_9f86d081884c7d65_relu") == "fused_relu"
    # hex-looking words inside a name are not hashes
    assert exact("sm90_xmma_gemm_bf16bf16_bf16f32_f32") == "sm90_xmma_gemm_bf16bf16_bf16f32_f32"


def test_normalised_drops_types_numbers_and_plumbing() -> None:
    assert normalised(ADD4) == normalised(ADD8)
    assert (
        normalised(ADD4) == "at::native::vectorized_elementwise_kernel<at::native::CUDAFunctor_add>"
    )
    assert normalised("attn_fwd") == "attn_fwd"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (CUTLASS, "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_tn>"),
        (TENSILE, "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs"),
        ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT", "nvjet_sm90_tst_v_bz_splitK_TNT"),
        ("triton_poi_fused__unsafe_view_add_3", "triton_poi_fused__unsafe_view_add"),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_execute",
        ),
    ],
)
def test_family_drops_tile_and_config(name: str, expected: str) -> None:
    assert family(name) == expected
