"""The regression gate: is the latest result of a workload worse than its history, beyond the
noise? Every verdict states the noise model it was made under.

**What is compared.** The latest result — or with `latest="commit"`, the latest result and the
results of its (clean) commit just before it, when CI recorded several repeats of one commit on
one setup — against a reference (`Against`): the `window`
of the N results before it (default 10), the `last` one, or every result of a `commit`. Only
results on the same GPU model and count count as reference (`any_hardware` lifts that): a new
GPU is not a regression; a new driver or ROCm / CUDA version may be one, so those are compared.

**Noise models**, chosen per metric by what the data allows:

- `run-to-run` (≥ 3 reference results): the reference's spread between runs — which holds
  everything that varies between runs, within-run sampling included — gives a t-test of the
  latest value against the reference mean (a prediction interval; with repeats of the latest
  commit, the two-sample t-test with the variance pooled — a regression moves the level, not
  the spread — which keeps k + n − 2 degrees of freedom where Welch's test would have almost
  none with 2-3 repeats). The change must exceed t(confidence) × its standard error.
- `samples` (fewer reference results, samples on both sides): the bootstrap CI of the ratio of
  medians of the samples, as `gpuscope bench --baseline` compares two runs. Within-run noise
  only: the run-to-run spread is unknown, so the floor matters more.
- `threshold` (fewer than 3 results, no samples): no noise estimate; only a change beyond
  the threshold (default 5 %) counts.

With samples on both sides and ≥ 3 reference results, both tests must agree
(`run-to-run + samples`).

**Verdict.** A change in the metric's worse direction past the bar — the larger of the noise
bound, `threshold` (given) or `floor` (default 1 %) — is a `regression` (exit 1); the same in
the better direction an `improvement`; otherwise `within noise`. Defaults (confidence 0.995
one-sided, floor 1 %) come from benchmarks/bench_history.py, docs/performance.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpuscope.errors import InputError
from gpuscope.history.model import LOWER, Result
from gpuscope.history.store import Store
from gpuscope.schemas import CHECK as SCHEMA
from gpuscope.timing import tdist

DEFAULT_WINDOW = 10
DEFAULT_CONFIDENCE = 0.995
DEFAULT_FLOOR = 0.01
UNKNOWN_NOISE_THRESHOLD = 0.05  # the bar when the noise cannot be estimated
MIN_SPREAD_RESULTS = 3
REGRESSION, IMPROVEMENT, WITHIN, NO_HISTORY = (
    "regression",
    "improvement",
    "within noise",
    "no history",
)
_FETCH_CAP = 100_000  # reference rows looked at, at most, while skipping other hardware


@dataclass(frozen=True)
class Against:
    """The reference: `window` (n results before the latest), `last`, or `commit`."""

    kind: str = "window"
    n: int = DEFAULT_WINDOW
    commit: str | None = None

    def describe(self) -> str:
        if self.kind == "commit":
            return f"commit {self.commit}"
        return "the previous result" if self.kind == "last" else f"the previous {self.n} results"


def parse_against(text: str) -> Against:
    """`last`, `window:N` (or `window`), `commit:SHA`."""
    if text == "last":
        return Against("last", 1)
    if text == "window":
        return Against()
    match = re.fullmatch(r"window:(\d+)", text)
    if match and int(match[1]) >= 1:
        return Against("window", int(match[1]))
    match = re.fullmatch(r"commit:([0-9A-Za-z._/-]+)", text)
    if match:
        return Against("commit", 0, match[1])
    raise InputError(f"--against {text}: expected last, window:N (N >= 1) or commit:SHA")


@dataclass(frozen=True)
class Options:
    against: Against = Against()
    metrics: tuple[str, ...] = ()  # () = every metric of the latest result
    threshold: float | None = None  # fraction; None = floor
    floor: float = DEFAULT_FLOOR
    confidence: float = DEFAULT_CONFIDENCE
    any_hardware: bool = False
    tag: str | None = None
    latest: str = "result"  # "commit": the latest commit's repeats are tested together
    resamples: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.latest not in ("result", "commit"):
            raise InputError(f"--latest {self.latest}: expected result or commit")
        if not 0.5 < self.confidence < 1:
            raise InputError(f"--confidence {self.confidence:g}: expected a number in (0.5, 1)")
        if self.threshold is not None and not 0 <= self.threshold < 10:
            raise InputError(f"--threshold {self.threshold * 100:g}: expected 0 to 1000 %")


@dataclass(frozen=True)
class MetricCheck:
    """One metric's verdict. Changes are relative (0.03 = 3 %), signed so that > 0 is worse."""

    metric: str
    unit: str
    direction: str
    verdict: str
    method: str
    latest: float
    reference: float | None = None
    change: float | None = None  # latest / reference − 1 (as measured, not signed by direction)
    worse_by: float | None = None  # the change in the worse direction (> 0: worse)
    ci: tuple[float, float] | None = None  # CI of `change` at `ci_level`
    ci_level: float | None = None
    confidence: float | None = None  # one-sided probability that it changed in this direction
    noise: float | None = None  # the noise bound at the confidence, relative
    bar: float | None = None  # what a change had to pass: max(noise, threshold or floor)
    n_latest: int = 1
    n_reference: int = 0
    reference_spread: float | None = None  # CV of the reference values
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "unit": self.unit,
            "direction": self.direction,
            "verdict": self.verdict,
            "method": self.method,
            "latest": self.latest,
            "reference": self.reference,
            "change": self.change,
            "worse_by": self.worse_by,
            "ci": list(self.ci) if self.ci else None,
            "ci_level": self.ci_level,
            "confidence": self.confidence,
            "noise": self.noise,
            "bar": self.bar,
            "n_latest": self.n_latest,
            "n_reference": self.n_reference,
            "reference_spread": self.reference_spread,
            "note": self.note,
        }


@dataclass(frozen=True)
class Outcome:
    workload: str
    against: Against
    options: Options
    latest: tuple[Result, ...]
    reference: tuple[Result, ...]
    checks: tuple[MetricCheck, ...]
    skipped_hardware: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def regressions(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.verdict == REGRESSION]

    @property
    def improvements(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.verdict == IMPROVEMENT]

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions else 0

    def to_dict(self) -> dict[str, Any]:
        o = self.options
        return {
            "schema": SCHEMA,
            "workload": self.workload,
            "against": {
                "kind": self.against.kind,
                "n": self.against.n,
                "commit": self.against.commit,
            },
            "options": {
                "latest": o.latest,
                "threshold": o.threshold,
                "floor": o.floor,
                "confidence": o.confidence,
                "any_hardware": o.any_hardware,
                "tag": o.tag,
            },
            "latest": [_brief(r) for r in self.latest],
            "reference": [_brief(r) for r in self.reference],
            "skipped_other_hardware": self.skipped_hardware,
            "checks": [c.to_dict() for c in self.checks],
            "regressions": len(self.regressions),
            "improvements": len(self.improvements),
            "exit_code": self.exit_code,
            "notes": list(self.notes),
        }


def _brief(result: Result) -> dict[str, Any]:
    c = result.context
    return {
        "id": result.id,
        "recorded_at": c.recorded_at,
        "commit": c.commit,
        "dirty": c.dirty,
        "branch": c.branch,
        "gpu_model": c.gpu_model,
        "driver": c.driver,
    }


# -- selecting the results ---------------------------------------------------------------------


def check(store: Store, workload: str, options: Options | None = None) -> Outcome:
    """The latest result of `workload` against its reference; InputError when the workload is
    unknown or has no result."""
    options = options or Options()
    latest, older = _latest_group(store, workload, options)
    reference, skipped = _reference(store, workload, latest, older, options)
    return compare(workload, latest, reference, options, skipped)


def _latest_group(
    store: Store, workload: str, options: Options
) -> tuple[list[Result], list[Result]]:
    """The newest result with the results of its commit just before it (repeats), and the
    results fetched after them."""
    window = options.against.n if options.against.kind == "window" else 1
    fetched = store.latest(workload, limit=max(window, 1) * 2 + 8, tag=options.tag)
    if not fetched:
        if not store.has_workload(workload):
            known = ", ".join(w.name for w in store.workloads()[:10])
            raise InputError(f"no workload {workload!r} in {store.url} (known: {known or 'none'})")
        raise InputError(
            f"workload {workload!r} has no result{' tagged ' + options.tag if options.tag else ''}"
        )
    head = fetched[0]
    group = [head]
    if options.latest == "commit" and head.context.commit and head.context.dirty is False:
        for result in fetched[1:]:
            if _setup(result) != _setup(head) or result.context.dirty is not False:
                break
            group.append(result)
    return group, fetched[len(group) :]


def _setup(result: Result) -> tuple[object, ...]:
    """What makes two results repeats of one measurement: commit, GPUs and software."""
    c = result.context
    return (c.commit, c.gpu_model, c.gpu_count, c.driver, c.rocm, c.cuda, c.torch)


def _reference(
    store: Store, workload: str, latest: list[Result], older: list[Result], options: Options
) -> tuple[list[Result], int]:
    against = options.against
    head = latest[0]
    if against.kind == "commit":
        assert against.commit is not None
        found = store.latest(workload, commit=against.commit, tag=options.tag)
        candidates = [r for r in found if r.id not in {x.id for x in latest}]
        if not candidates:
            raise InputError(
                f"--against commit:{against.commit}: no result of {workload!r} "
                "recorded at that commit"
            )
        kept = [r for r in candidates if options.any_hardware or _same_hardware(r, head)]
        return kept, len(candidates) - len(kept)
    wanted = against.n
    kept, skipped, pool, offset = [], 0, older, len(latest)
    while True:
        for result in pool:
            if options.any_hardware or _same_hardware(result, head):
                kept.append(result)
                if len(kept) == wanted:
                    return kept, skipped
            else:
                skipped += 1
        offset += len(pool)
        if len(pool) == 0 or offset >= _FETCH_CAP:
            return kept, skipped
        more = store.latest(workload, limit=offset * 2, tag=options.tag)
        pool = more[offset:]
        if not pool:
            return kept, skipped


def _same_hardware(a: Result, b: Result) -> bool:
    return (a.context.gpu_model, a.context.gpu_count) == (b.context.gpu_model, b.context.gpu_count)


# -- comparing -----------------------------------------------------------------------------


def compare(
    workload: str,
    latest: Sequence[Result],
    reference: Sequence[Result],
    options: Options,
    skipped_hardware: int = 0,
) -> Outcome:
    """The verdict of every metric of `latest` (the first is the newest) against `reference`."""
    names = options.metrics or tuple(m.name for m in latest[0].metrics)
    missing = [n for n in names if latest[0].metric(n) is None]
    if missing:
        have = ", ".join(m.name for m in latest[0].metrics)
        raise InputError(
            f"{workload}: the latest result has no metric {', '.join(missing)} "
            f"(it has {have or 'none'})"
        )
    checks = tuple(_check_metric(name, latest, reference, options) for name in names)
    notes = []
    if skipped_hardware:
        plural = "s" if skipped_hardware > 1 else ""
        notes.append(
            f"{skipped_hardware} result{plural} on other GPUs left out (--any-hardware uses them)"
        )
    return Outcome(
        workload,
        options.against,
        options,
        tuple(latest),
        tuple(reference),
        checks,
        skipped_hardware,
        tuple(notes),
    )


def _check_metric(
    name: str, latest: Sequence[Result], reference: Sequence[Result], options: Options
) -> MetricCheck:
    head = latest[0].metric(name)
    assert head is not None
    group = [m for r in latest if (m := r.metric(name)) is not None]
    ref = [m for r in reference if (m := r.metric(name)) is not None]
    base = MetricCheck(
        name,
        head.unit,
        head.direction,
        NO_HISTORY,
        "none",
        head.value,
        n_latest=len(group),
        n_reference=len(ref),
    )
    if not ref:
        return replace(base, note="no earlier result has this metric")
    values_l = [m.value for m in group]
    values_r = [m.value for m in ref]
    samples_l = [s for m in group for s in m.samples]
    samples_r = [s for m in ref for s in m.samples]
    has_samples = bool(samples_l) and bool(samples_r)
    if len(ref) >= MIN_SPREAD_RESULTS:
        found = _run_to_run(base, values_l, values_r, options)
        if has_samples:
            found = _both(found, _samples(base, samples_l, samples_r, options), options)
        return found
    if has_samples:
        return _samples(base, samples_l, samples_r, options)
    return _threshold_only(base, values_l, values_r, options)


def _signed(change: float, direction: str) -> float:
    return change if direction == LOWER else -change


def _verdict(worse_by: float, bar: float) -> str:
    if worse_by > bar:
        return REGRESSION
    if -worse_by > bar:
        return IMPROVEMENT
    return WITHIN


def _bar(noise: float, options: Options) -> float:
    return max(noise, options.threshold if options.threshold is not None else options.floor)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _var(values: Sequence[float]) -> float:
    m = _mean(values)
    return math.fsum((v - m) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0


def _run_to_run(
    base: MetricCheck, latest: Sequence[float], ref: Sequence[float], options: Options
) -> MetricCheck:
    """t-test of the latest mean against the reference mean, the reference's spread as the
    run-to-run noise (pooled with the latest commit's repeats)."""
    center, k, n = _mean(ref), len(latest), len(ref)
    var_r = _var(ref)
    if k >= 2:  # pooled: a regression moves the level, not the run-to-run spread
        var_r = ((n - 1) * var_r + (k - 1) * _var(latest)) / (n + k - 2)
    se2, df = var_r * (1 / k + 1 / n), float(n + k - 2)
    diff = _mean(latest) - center
    scale = abs(center) or 1.0
    se = math.sqrt(se2) / scale
    change = diff / scale
    worse_by = _signed(change, base.direction)
    noise = tdist.ppf(options.confidence, df) * se if se > 0 else 0.0
    bar = _bar(noise, options)
    verdict = _verdict(worse_by, bar)
    half = tdist.ppf(0.975, df) * se
    return replace(
        base,
        verdict=verdict,
        method="run-to-run",
        reference=center,
        change=change,
        worse_by=worse_by,
        ci=(change - half, change + half),
        ci_level=0.95,
        noise=noise,
        bar=bar,
        confidence=_confidence(worse_by, se, df, verdict),
        reference_spread=math.sqrt(var_r) / scale,
    )


def _confidence(worse_by: float, se: float, df: float, verdict: str) -> float | None:
    """One-sided probability that the metric moved the way it did (worse, or better for an
    improvement); None for no change."""
    if se <= 0:
        return 1.0 if worse_by != 0 else None
    t = worse_by / se
    return round(tdist.cdf(t if verdict != IMPROVEMENT else -t, df), 6)


def _samples(
    base: MetricCheck, latest: Sequence[float], ref: Sequence[float], options: Options
) -> MetricCheck:
    """Bootstrap CI of median(latest samples) / median(reference samples)."""
    from gpuscope.timing.bootstrap import ratio_ci_unpaired

    level = 2 * options.confidence - 1  # two-sided CI whose one-sided tails are 1 − confidence
    ci = ratio_ci_unpaired(ref, latest, level, options.resamples, options.seed)
    change = ci.ratio - 1
    worse_low = _signed(ci.low - 1, base.direction)
    worse_high = _signed(ci.high - 1, base.direction)
    worst, best = max(worse_low, worse_high), min(worse_low, worse_high)
    bar = _bar(0.0, options)
    if best > bar:
        verdict = REGRESSION  # the whole CI is worse by more than the bar
    elif worst < -bar:
        verdict = IMPROVEMENT
    else:
        verdict = WITHIN
    noise = (ci.high - ci.low) / 2 / ci.ratio if ci.ratio else None
    return replace(
        base,
        verdict=verdict,
        method="samples",
        reference=_median(ref),
        change=change,
        worse_by=_signed(change, base.direction),
        ci=(ci.low - 1, ci.high - 1),
        ci_level=level,
        noise=noise,
        bar=bar,
        confidence=None,
        note="within-run noise only: fewer than 3 earlier results to measure the run-to-run spread"
        if base.n_reference < MIN_SPREAD_RESULTS
        else None,
    )


def _both(run: MetricCheck, samples: MetricCheck, options: Options) -> MetricCheck:
    """Run-to-run and per-sample tests together: a change counts when both see it."""
    agree = run.verdict if run.verdict == samples.verdict else WITHIN
    return replace(run, verdict=agree, method="run-to-run + samples")


def _threshold_only(
    base: MetricCheck, latest: Sequence[float], ref: Sequence[float], options: Options
) -> MetricCheck:
    center = _mean(ref)
    scale = abs(center) or 1.0
    change = (_mean(latest) - center) / scale
    worse_by = _signed(change, base.direction)
    bar = options.threshold if options.threshold is not None else UNKNOWN_NOISE_THRESHOLD
    return replace(
        base,
        verdict=_verdict(worse_by, bar),
        method="threshold",
        reference=center,
        change=change,
        worse_by=worse_by,
        bar=bar,
        note=f"noise unknown: {len(ref)} earlier result(s) without samples; only a change past "
        f"{bar * 100:g} % counts",
    )


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
