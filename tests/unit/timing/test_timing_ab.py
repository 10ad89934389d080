"""A/B: verdict rules, block bootstrap, interleaving order and correctness gating."""

from __future__ import annotations

import numpy as np
import pytest
from timing_fakes import FakeClock, ScriptedTimer, constant, cycle

from gpuscope.errors import ConfigError
from gpuscope.timing import ab
from gpuscope.timing.bootstrap import RatioCI, ratio_ci, ratio_ci_unpaired
from gpuscope.timing.measurement import Environment

ENV = Environment(vendor="cpu", device="test-cpu", python="3", platform="test", gpuscope="0")


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.95, 0.98, ab.FASTER),
        (1.02, 1.05, ab.SLOWER),
        (0.995, 1.005, ab.SAME),
        (0.99, 1.01, ab.SAME),
        (0.98, 1.005, ab.INCONCLUSIVE),
        (1.005, 1.02, ab.INCONCLUSIVE),
    ],
)
def test_verdict_from_the_ci_and_the_threshold(low: float, high: float, expected: str) -> None:
    assert ab.verdict(RatioCI(1.0, low, high, 0.95), 0.01) == expected


def test_ratio_ci_of_a_constant_shift_is_exact() -> None:
    a = [[100.0, 101.0, 99.0]] * 8
    b = [[102.0, 103.02, 100.98]] * 8
    ci = ratio_ci(a, b)
    assert ci.ratio == pytest.approx(1.02)
    assert ci.low == pytest.approx(1.02)
    assert ci.high == pytest.approx(1.02)


def test_ratio_ci_is_reproducible_and_brackets_the_ratio() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(100, 2, size=(20, 4))
    b = rng.normal(103, 2, size=(20, 4))
    first, again = ratio_ci(a.tolist(), b.tolist()), ratio_ci(a.tolist(), b.tolist())
    assert first == again
    assert first.low < first.ratio < first.high
    assert first.low > 1.0


def test_ratio_ci_refuses_unpaired_shapes() -> None:
    with pytest.raises(ValueError, match="equal"):
        ratio_ci([[1.0, 2.0]], [[1.0]])


def test_unpaired_ci_for_baselines() -> None:
    ci = ratio_ci_unpaired([10.0] * 20, [11.0] * 20)
    assert (ci.ratio, ci.low, ci.high) == (pytest.approx(1.1),) * 3


def _compare(
    values_a: object, values_b: object, **options: object
) -> tuple[ab.Comparison, list[str]]:
    clock = FakeClock()
    log: list[str] = []
    timers = (
        ScriptedTimer(values_a, clock, log=log, label="A"),  # type: ignore[arg-type]
        ScriptedTimer(values_b, clock, log=log, label="B"),  # type: ignore[arg-type]
    )
    c = ab.compare(lambda: 1.0, lambda: 1.0, (), timers=timers, clock=clock, env=ENV, **options)
    return c, log


def test_planted_two_percent_is_slower_after_min_rounds() -> None:
    c, _ = _compare(constant(100.0), constant(102.0))
    assert c.verdict == ab.SLOWER
    assert c.ratio == pytest.approx(1.02)
    assert c.rounds == 10
    assert c.stop_reason == ab.STOP_DECIDED
    assert c.speedup == pytest.approx(1 / 1.02)
    assert c.slower_than(1.5)
    assert not c.slower_than(2.5)


def test_identical_arms_are_the_same() -> None:
    c, _ = _compare(cycle(100.0, 100.4), cycle(100.0, 100.4))
    assert c.verdict == ab.SAME
    assert c.a is not None and c.b is not None
    assert len(c.a.samples_us) == len(c.b.samples_us) == 10 * 4


def test_a_faster_candidate() -> None:
    c, _ = _compare(constant(100.0), constant(80.0))
    assert c.verdict == ab.FASTER
    assert c.speedup == pytest.approx(1.25)


def test_noise_wider_than_the_threshold_stays_inconclusive_until_the_budget() -> None:
    rng = np.random.default_rng(7)
    noisy_a, noisy_b = rng.uniform(50, 150, 10_000), rng.uniform(50, 150, 10_000)
    c, _ = _compare(iter(noisy_a.tolist()), iter(noisy_b.tolist()), budget_s=1.0)
    assert c.verdict == ab.INCONCLUSIVE
    assert c.stop_reason == "budget"


def test_rounds_alternate_which_arm_goes_first() -> None:
    c, log = _compare(constant(100.0), constant(102.0), block=2)
    timed = log[-(c.rounds * 4) :]
    assert timed[:8] == ["A", "A", "B", "B", "B", "B", "A", "A"]


def test_wrong_outputs_stop_before_timing() -> None:
    c = ab.compare(
        lambda x: x * 2, lambda x: x * 2 + 1e-3, (np.ones(4, dtype=np.float32),), env=ENV
    )
    assert c.verdict == ab.INCORRECT
    assert c.a is None and c.b is None
    assert not c.correctness.ok
    assert c.correctness.max_abs == pytest.approx(1e-3, rel=1e-3)


def test_float64_reference_checks_both_arms() -> None:
    x = np.linspace(0, 1, 64, dtype=np.float32)
    c = ab.compare(
        np.sin,
        lambda v: np.sin(v).astype(np.float16),
        (x,),
        reference=np.sin,
        rtol=1e-3,
        atol=1e-3,
        timers=(
            ScriptedTimer(constant(1.0), FakeClock()),
            ScriptedTimer(constant(1.0), FakeClock()),
        ),
        env=ENV,
    )
    assert c.correctness.against == "reference"
    assert c.correctness.ok and c.correctness_a is not None and c.correctness_a.ok
    assert (c.correctness.max_abs or 0) > (c.correctness_a.max_abs or 0)


def test_kernel_mode_and_bad_thresholds_are_refused() -> None:
    with pytest.raises(ConfigError, match="events"):
        ab.compare(print, print, mode="kernel")
    with pytest.raises(ConfigError, match="threshold"):
        ab.compare(print, print, threshold=2)
    with pytest.raises(ConfigError, match="unknown compare option"):
        ab.compare(print, print, budget=2)


def test_comparison_json_has_schema_kind_and_both_arms() -> None:
    import msgspec

    c, _ = _compare(constant(100.0), constant(102.0))
    obj = msgspec.json.decode(ab.comparison_to_json(c))
    assert (obj["schema"], obj["kind"], obj["verdict"]) == (
        "gpuscope.bench/1",
        "comparison",
        "SLOWER",
    )
    assert obj["a"]["stats_us"]["p50"] == 100.0
    assert obj["b"]["stats_us"]["p50"] == 102.0
    assert obj["speedup"] == pytest.approx(1 / 1.02)
