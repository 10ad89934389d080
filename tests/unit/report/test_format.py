"""Display formatting: units chosen by magnitude, shares as percentages, kernel names shortened."""

from __future__ import annotations

import pytest

from gpuscope.report import _format as fmt


@pytest.mark.parametrize(
    ("us", "shown"),
    [
        (0.0, "0 µs"),
        (1.6, "1.60 µs"),
        (510.432, "510.4 µs"),
        (14501.706, "14.50 ms"),
        (192704.988, "192.70 ms"),
        (1289526.102, "1.290 s"),
        (None, "—"),
    ],
)
def test_duration_picks_a_readable_unit(us: float | None, shown: str) -> None:
    assert fmt.duration(us) == shown


def test_bucket_edges_drop_trailing_zeros() -> None:
    assert [fmt.bound(v) for v in (0.0, 2.0, 100.0, 1000.0, 2_500_000.0)] == [
        "0 µs",
        "2 µs",
        "100 µs",
        "1 ms",
        "2.5 s",
    ]


def test_percent_keeps_tiny_shares_visible() -> None:
    assert fmt.percent(0.385184) == "38.5%"
    assert fmt.percent(0.000235) == "<0.1%"
    assert fmt.percent(0.0) == "0.0%"
    assert fmt.percent(1.0) == "100.0%"


def test_counts_and_bytes() -> None:
    assert fmt.count(7160) == "7,160"
    assert fmt.count(34.532) == "34.53"
    assert fmt.count(69.0) == "69"
    assert fmt.nbytes(66) == "66 B"
    assert fmt.nbytes(10241769) == "9.77 MiB"
    assert fmt.nbytes(33554432) == "32.00 MiB"


def test_value_is_formatted_by_what_its_key_holds() -> None:
    assert fmt.value("host_wait_gap_us", 186936.488) == "186.94 ms"
    assert fmt.value("gemm_share", 0.6572) == "65.7%"
    assert fmt.value("bytes", 2048) == "2.00 KiB"
    assert fmt.value("short_kernels", 7108) == "7,108"
    assert fmt.value("x", None) == "—"
    assert fmt.value("x", {"a": 1}) == '{"a": 1}'
    assert fmt.label("cpu_op_time_us") == "CPU op time"
    assert fmt.label("top_gemm_kernels") == "top GEMM kernels"


def test_short_name_drops_arguments_and_deep_templates() -> None:
    name = (
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::"
        "BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
        "std::array<char*, 3ul>)"
    )
    assert fmt.short_name(name) == (
        "at::native::vectorized_elementwise_kernel<8, CUDAFunctor_add<…>, array<…> >"
    )


def test_short_name_keeps_anonymous_namespaces_and_short_names() -> None:
    assert fmt.short_name("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN") == (
        "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN"
    )
    anon = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<int>(int*, unsigned int)"
    assert fmt.short_name(anon) == "at::native::(anon)::CatArrayBatchedCopy<int>"


def test_short_name_cuts_the_middle_of_long_names_to_the_width() -> None:
    name = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_" + "MT32x32x256_" * 20 + "WG32_8_1"
    short = fmt.short_name(name, width=40)
    assert len(short) == 40
    assert short.startswith("Cijk_Alik")
    assert short.endswith("WG32_8_1")
    assert "…" in short
