"""Output comparison: dtype-aware tolerances, exact integers, NaN, structure, in-place calls."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscope.timing.correctness import compare_outputs, outputs_of, tolerance, upcast


def test_tolerance_follows_the_loosest_dtype() -> None:
    f32 = np.zeros(2, dtype=np.float32)
    f16 = np.zeros(2, dtype=np.float16)
    assert tolerance(f32, f32) == (1.3e-6, 1e-5)
    assert tolerance(f32, f16) == (1e-3, 1e-5)
    assert tolerance(np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)) == (0.0, 0.0)
    assert tolerance(1.0, 1.0) == (1e-7, 1e-7)


def test_float32_within_and_beyond_its_tolerance() -> None:
    want = np.full(8, 1000.0, dtype=np.float32)
    close = compare_outputs(want * np.float32(1 + 1e-6), want)
    far = compare_outputs(want * np.float32(1 + 1e-4), want)
    assert close.ok and close.max_rel == pytest.approx(1e-6, rel=0.1)
    assert not far.ok and "values differ" in far.detail


def test_integers_must_match_exactly() -> None:
    assert not compare_outputs(np.array([1, 2, 4]), np.array([1, 2, 3])).ok
    assert compare_outputs(np.array([1, 2, 3]), np.array([1, 2, 3])).ok


def test_nan_never_passes() -> None:
    got = np.array([1.0, np.nan])
    result = compare_outputs(got, got.copy())
    assert not result.ok and "NaN" in result.detail


def test_shape_and_structure_mismatches() -> None:
    assert "shape" in compare_outputs(np.zeros(3), np.zeros(4)).detail
    assert compare_outputs((1.0, 2.0), [1.0]).detail == "structure differs"


def test_nested_outputs_report_the_worst_leaf() -> None:
    got = {"x": np.array([1.0, 2.0]), "y": (3.0, np.array([4.0]))}
    want = {"x": np.array([1.0, 2.5]), "y": (3.0, np.array([4.0]))}
    result = compare_outputs(got, want, rtol=0.0, atol=1.0)
    assert result.ok
    assert result.max_abs == pytest.approx(0.5)
    assert result.max_rel == pytest.approx(0.2)


def test_no_outputs_is_reported_as_unchecked() -> None:
    result = compare_outputs(None, None)
    assert result.ok and not result.checked


def test_in_place_functions_see_private_inputs() -> None:
    x = np.ones(3)

    def add_one_in_place(v: np.ndarray) -> np.ndarray:
        v += 1
        return v

    out = outputs_of(add_one_in_place, (x,), {})
    assert out.tolist() == [2.0, 2.0, 2.0]
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_upcast_for_a_float64_reference() -> None:
    args = upcast((np.ones(2, dtype=np.float16), np.ones(2, dtype=np.int32), "keep"))
    assert [getattr(a, "dtype", None) for a in args[:2]] == [np.float64, np.int32]
    assert args[2] == "keep"
