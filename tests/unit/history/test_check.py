"""`gpuscope check`'s statistics on series with a known truth (seeded, deterministic): within
noise stays 0, a planted regression is 1, an improvement is reported, each noise model is used
where the data allows it, and the reference is chosen as asked."""

from __future__ import annotations

import math
import random

import pytest

from gpuscope.errors import InputError
from gpuscope.history import check
from gpuscope.history.check import Against, Options, compare, parse_against
from gpuscope.history.model import Context, Metric, Result, from_samples
from gpuscope.history.store import Store
from gpuscope.timing import tdist as _tdist


def series(
    values: list[float],
    direction: str = "higher",
    samples: int = 0,
    gpu: str = "H100",
    commits: list[str] | None = None,
    seed: int = 1,
    start: int = 0,
) -> list[Result]:
    """Results oldest first, newest last; `samples`: that many per result around each value."""
    rng = random.Random(seed)
    out = []
    for i, value in enumerate(values, start):
        if samples:
            metric = from_samples("m", [value * rng.gauss(1, 0.01) for _ in range(samples)],
                                  "x", direction)  # fmt: skip
        else:
            metric = Metric("m", value, "x", direction)
        commit = commits[i - start] if commits else f"{i:07x}"
        ctx = Context(f"2026-11-27T10:{i // 60:02d}:{i % 60:02d}.000Z", commit=commit, dirty=False,
                      gpu_model=gpu, gpu_count=1)  # fmt: skip
        out.append(Result("w", "run", ctx, (metric,), id=i + 1))
    return out


def verdict(results: list[Result], **options: object) -> check.MetricCheck:
    newest = results[::-1]
    outcome = compare("w", [newest[0]], newest[1:], Options(**options))  # type: ignore[arg-type]
    return outcome.checks[0]


NOISY = [100.0, 100.6, 99.5, 100.2, 99.7, 100.4, 99.9, 100.1, 99.6]  # SD ≈ 0.37 %


def test_within_noise_is_not_a_regression() -> None:
    found = verdict(series([*NOISY, 99.4]))
    assert (found.verdict, found.method) == ("within noise", "run-to-run")
    assert found.worse_by is not None and 0 < found.worse_by < found.bar  # type: ignore[operator]


def test_a_3_percent_drop_of_a_throughput_is_a_regression() -> None:
    found = verdict(series([*NOISY, 97.0]))
    assert found.verdict == "regression" and found.confidence is not None
    assert found.change == pytest.approx(97 / 100.0 - 1, abs=0.001)
    assert found.confidence > 0.999


def test_direction_decides_what_worse_means() -> None:
    assert verdict(series([*NOISY, 97.0], direction="lower")).verdict == "improvement"
    assert verdict(series([*NOISY, 103.0], direction="lower")).verdict == "regression"


def test_the_bar_is_the_noise_or_the_floor_or_the_threshold() -> None:
    flat = [100.0] * 9  # no spread: the floor decides
    assert verdict(series([*flat, 99.5])).verdict == "within noise"
    assert verdict(series([*flat, 98.9])).verdict == "regression"
    assert verdict(series([*flat, 98.9]), threshold=0.02).verdict == "within noise"
    # a threshold below the noise does not make noise fail
    assert verdict(series([*NOISY, 99.0]), threshold=0.001).verdict == "within noise"


def test_samples_decide_when_the_history_is_short() -> None:
    found = verdict(series([100.0, 96.0], samples=40), against=Against("last", 1))
    assert (found.method, found.verdict) == ("samples", "regression")
    assert found.note and "within-run noise only" in found.note
    same = verdict(series([100.0, 100.1], samples=40), against=Against("last", 1))
    assert same.verdict == "within noise"


def test_both_tests_must_agree_with_samples_and_history() -> None:
    found = verdict(series([*NOISY, 96.0], samples=30))
    assert (found.method, found.verdict) == ("run-to-run + samples", "regression")


def test_without_samples_or_history_only_the_threshold_counts() -> None:
    found = verdict(series([100.0, 97.0]))
    assert (found.method, found.verdict, found.bar) == ("threshold", "within noise", 0.05)
    assert verdict(series([100.0, 94.0])).verdict == "regression"
    assert verdict(series([100.0])).verdict == "no history"


def test_repeats_of_the_latest_commit_are_one_group() -> None:
    results = series([*NOISY, 97.2, 97.0, 96.9], commits=[*"abcdefghi", "z", "z", "z"])
    newest = results[::-1]
    outcome = compare("w", newest[:3], newest[3:], Options())
    assert outcome.checks[0].n_latest == 3 and outcome.checks[0].verdict == "regression"


def test_repeats_are_grouped_only_when_asked_and_on_one_setup(tmp_path: object) -> None:
    store = Store.open(f"sqlite:///{tmp_path}/h.db")  # type: ignore[str-bytes-safe]
    store.add_many(series([*NOISY, 97.2, 97.0, 96.9], commits=[*"abcdefghi", "z", "z", "z"]))
    single = check.check(store, "w")
    assert len(single.latest) == 1 and single.reference[0].context.commit == "z"
    grouped = check.check(store, "w", Options(latest="commit"))
    assert len(grouped.latest) == 3 and grouped.checks[0].verdict == "regression"
    store.add_many(series([97.1], commits=["z"], gpu="MI300X", start=12))
    assert len(check.check(store, "w", Options(latest="commit", any_hardware=True)).latest) == 1
    store.close()


def test_check_on_a_store_leaves_out_other_gpus(tmp_path: object) -> None:
    store = Store.open(f"sqlite:///{tmp_path}/h.db")  # type: ignore[str-bytes-safe]
    store.add_many(series([80.0] * 3, gpu="MI300X"))
    store.add_many(series(NOISY[:5], start=3))
    store.add_many(series([81.0], gpu="MI300X", start=8))
    store.add_many(series([*NOISY[5:], 97.0], start=9))
    outcome = check.check(store, "w", Options(against=parse_against("window:9")))
    assert outcome.checks[0].n_reference == 9 and outcome.skipped_hardware == 1
    assert {r.context.gpu_model for r in outcome.reference} == {"H100"}
    assert outcome.exit_code == 1 and "1 result on other GPUs left out" in outcome.notes[0]
    mixed = check.check(store, "w", Options(against=Against("window", 9), any_hardware=True))
    assert mixed.checks[0].verdict == "within noise"  # a GPU change is not a regression
    store.close()


def test_against_last_window_and_commit(tmp_path: object) -> None:
    store = Store.open(f"sqlite:///{tmp_path}/h.db")  # type: ignore[str-bytes-safe]
    store.add_many(series([*NOISY, 97.0], commits=[*"abcdefghi", "z"]))
    last = check.check(store, "w", Options(against=Against("last", 1)))
    assert [r.context.commit for r in last.reference] == ["i"]
    window = check.check(store, "w", Options(against=Against("window", 4)))
    assert [r.context.commit for r in window.reference] == ["i", "h", "g", "f"]
    commit = check.check(store, "w", Options(against=parse_against("commit:c")))
    assert [r.context.commit for r in commit.reference] == ["c"]
    assert window.exit_code == 1 and window.to_dict()["regressions"] == 1
    with pytest.raises(InputError, match="no result of 'w' recorded at that commit"):
        check.check(store, "w", Options(against=parse_against("commit:nope")))
    with pytest.raises(InputError, match=r"no workload 'x'.*known: w"):
        check.check(store, "x")
    with pytest.raises(InputError, match="has no metric nope"):
        check.check(store, "w", Options(metrics=("nope",)))
    store.close()


@pytest.mark.parametrize("text", ["window:0", "commit:", "prev", "window:x"])
def test_bad_against_is_one_error(text: str) -> None:
    with pytest.raises(InputError, match="expected last, window:N"):
        parse_against(text)


def test_a_b_false_alarms_stay_rare_and_a_3_percent_regression_is_caught() -> None:
    """A small version of benchmarks/bench_history.py: 0.4 % run-to-run noise, 10 results."""
    rng = random.Random(7)
    alarms = caught = 0
    for _ in range(200):
        values = [100 * math.exp(rng.gauss(0, 0.004)) for _ in range(10)]
        alarms += verdict(series(values)).verdict == "regression"
        values[-1] *= 0.97
        caught += verdict(series(values)).verdict == "regression"
    assert alarms <= 2 and caught >= 190


def test_student_t_matches_tables() -> None:
    assert _tdist.ppf(0.975, 8) == pytest.approx(2.306004, abs=1e-6)
    assert _tdist.ppf(0.995, 8) == pytest.approx(3.355387, abs=1e-6)
    assert _tdist.ppf(0.99, 1) == pytest.approx(31.820516, abs=1e-5)
    assert _tdist.cdf(0.0, 5) == pytest.approx(0.5)
    assert _tdist.cdf(-2.015048, 5) == pytest.approx(0.05, abs=1e-6)
