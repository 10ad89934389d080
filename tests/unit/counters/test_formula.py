"""The formula language: arithmetic, precedence, quoted names, functions, division by zero, and
refusal of anything else (no eval: attribute access, calls of unknown functions, stray tokens)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuscope.counters.formula import FormulaError, parse


def test_precedence_and_unary_minus() -> None:
    assert parse("1 + 2 * 3 - 4 / 2").evaluate({}) == 5.0
    assert parse("-(2 + 3) * 2").evaluate({}) == -10.0
    assert parse("2 * -3").evaluate({}) == -6.0


def test_names_with_dots_and_backticks() -> None:
    f = parse("dram__bytes.sum / `Compute (SM) Throughput`")
    assert f.names == {"dram__bytes.sum", "Compute (SM) Throughput"}
    assert f.evaluate({"dram__bytes.sum": 10.0, "Compute (SM) Throughput": 4.0}) == 2.5


def test_arrays_evaluate_per_dispatch_and_zero_division_is_nan() -> None:
    f = parse("a / b")
    got = f.evaluate({"a": np.array([1.0, 2.0, 0.0]), "b": np.array([2.0, 0.0, 0.0])})
    assert got[0] == 0.5 and math.isnan(got[1]) and math.isnan(got[2])


def test_min_max_and_zero_when_idle() -> None:
    assert parse("max(1, 5, 3) - min(4, 2)").evaluate({}) == 3.0
    idle = parse("zero_when_idle(x)").evaluate({"x": np.array([0.0, 3.0])})
    assert idle[0] == 0.0 and math.isnan(idle[1])


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "a.__class__ +",
        "1 +",
        "(1 + 2",
        "a b",
        "open(1)",
        "a ** 2",
        "zero_when_idle(1, 2)",
    ],
)
def test_rejects_what_is_not_arithmetic(text: str) -> None:
    with pytest.raises(FormulaError):
        parse(text)


def test_scientific_numbers() -> None:
    assert parse("1e3 + .5 + 2.5E-1").evaluate({}) == 1000.75
