"""Display formatting: units chosen by magnitude, shares as percentages, kernel names shortened."""

from __future__ import annotations

import pytest

from gpuscope.document import units as fmt
from gpuscope.document.names import short_name, short_names


@pytest.mark.parametrize(
    ("us", "shown"),
    [
        (0.0, "0 µs"),
        (0.532, "532 ns"),
        (1.6, "1.60 µs"),
        (14.5, "14.5 µs"),
        (510.432, "510 µs"),
        (999.4, "999 µs"),
        (999.5, "1.00 ms"),
        (14501.706, "14.5 ms"),
        (192704.988, "193 ms"),
        (1289526.102, "1.29 s"),
        (4_159_000.0, "4.16 s"),
        (1_234_567_890.0, "1,235 s"),
        (None, "—"),
    ],
)
def test_duration_picks_a_readable_unit(us: float | None, shown: str) -> None:
    """One rule for every time of every view: the unit that keeps 3 significant digits."""
    assert fmt.duration(us) == shown
    if us is not None:
        assert fmt.time_ns(us * 1000) == shown


def test_deltas_and_rates() -> None:
    assert fmt.delta(-1250.0) == "−1.25 ms"
    assert fmt.delta(3.0) == "+3.00 µs"
    assert fmt.delta(0.0) == "±0 µs"
    assert fmt.rate(1.36e10, "B/s") == "13.6 GB/s"
    assert fmt.rate(7.98e14, "FLOP/s") == "798 TFLOP/s"
    assert fmt.rate(999.6, "B/s") == "1.00 kB/s"
    assert fmt.rate(None, "B/s") == "—"


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
    assert fmt.nbytes(33554432) == "32.0 MiB"
    assert fmt.nbytes(1023.9) == "1.00 KiB"


def test_value_is_formatted_by_what_its_key_holds() -> None:
    assert fmt.value("host_wait_gap_us", 186936.488) == "187 ms"
    assert fmt.value("gemm_share", 0.6572) == "65.7%"
    assert fmt.value("bytes", 2048) == "2.00 KiB"
    assert fmt.value("short_kernels", 7108) == "7,108"
    assert fmt.value("x", None) == "—"
    # never raw JSON: a nested value reads as text
    assert fmt.value("x", {"a": 1, "gap_us": 2.5, "calls": {"cudaLaunchKernel": 1}}) == (
        "a 1; gap 2.50 µs; calls (cudaLaunchKernel 1)"
    )
    assert fmt.value("waits_us", [1.0, 2000.0]) == "1.00 µs, 2.00 ms"
    assert fmt.label("cpu_op_time_us") == "CPU op time"
    assert fmt.label("top_gemm_kernels") == "top GEMM kernels"


def test_short_name_drops_arguments_and_deep_templates() -> None:
    name = (
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::"
        "BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
        "std::array<char*, 3ul>)"
    )
    assert short_name(name) == (
        "at::native::vectorized_elementwise_kernel<8, CUDAFunctor_add<…>, array<…> >"
    )


def test_short_name_keeps_anonymous_namespaces_and_short_names() -> None:
    assert short_name("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN") == (
        "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_TNN"
    )
    anon = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<int>(int*, unsigned int)"
    assert short_name(anon) == "at::native::(anon)::CatArrayBatchedCopy<int>"


def test_short_name_cuts_the_middle_of_long_names_to_the_width() -> None:
    name = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_" + "MT32x32x256_" * 20 + "WG32_8_1"
    short = short_name(name, width=40)
    assert len(short) == 40
    assert short.startswith("Cijk_Alik")
    assert short.endswith("WG32_8_1")
    assert "…" in short


REDUCE = (
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::{}, "
    "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::{}, unsigned int, float, 4>)"
)


@pytest.mark.parametrize("width", [30, 50, 80, 120])
def test_short_names_are_unique_among_the_rows(width: int) -> None:
    """Two reductions that short_name() shows alike (the demo's top kernels did) read apart."""
    ops = ("MeanOps<float, float, float, float>", "func_wrapper_t<float, sum_functor<float>>")
    names = [REDUCE.format(op, op) for op in ops] + ["k(int)", "k(float)", "nvjet_tst_64x8"]
    assert short_name(names[0]) == short_name(names[1])
    shown = short_names(names + names[:1], width)
    assert len(set(shown[:5])) == 5 and shown[5] == shown[0]
    assert all(len(s) <= width for s in shown)
    assert shown[4] == "nvjet_tst_64x8"


def test_short_names_on_every_reference_trace() -> None:
    """Unique full names stay unique at 40 columns in the top-kernel lists of the recorded
    traces (each trace's own rows)."""
    from tests.unit.report.reports import recorded

    for name in ("llama_compiled_h200.json.gz", "patterns_h200.json.gz"):
        report = recorded(name)
        kernels = sorted({k["name"] for k in report["top_kernels"]})
        assert len(set(short_names(kernels, 40))) == len(kernels)
