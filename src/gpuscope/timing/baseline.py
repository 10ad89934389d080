"""Compare a new measurement with a stored one (`gpuscope bench T --baseline old.json`).

The runs were not interleaved, so drift between them is not cancelled: the verdict is only as
good as the stability of the machine between the two runs. Runs on different hardware, drivers
or modes are refused unless explicitly allowed.
"""

from __future__ import annotations

from pathlib import Path

from gpuscope.errors import InputError
from gpuscope.timing.ab import Comparison, verdict
from gpuscope.timing.bootstrap import ratio_ci_unpaired
from gpuscope.timing.correctness import Correctness
from gpuscope.timing.measurement import Measurement, from_json

STOP_BASELINE = "baseline"


def load_baseline(path: Path) -> Measurement:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"baseline {path}: cannot read ({error.strerror})") from error
    return from_json(data, where=f"baseline {path}")


def against_baseline(
    old: Measurement, new: Measurement, threshold: float = 0.01, allow_mismatch: bool = False
) -> Comparison:
    """Verdict of `new` (B) against `old` (A)."""
    if not allow_mismatch:
        if old.mode != new.mode:
            raise InputError(
                f"baseline was timed in mode {old.mode!r}, this run in {new.mode!r}; "
                "use the same --mode (or allow the mismatch explicitly)"
            )
        if not old.env.same_hardware(new.env):
            raise InputError(
                f"baseline ran on {old.env.device} ({old.env.driver}, {old.env.runtime}), this run "
                f"on {new.env.device} ({new.env.driver}, {new.env.runtime}); "
                "compare like with like, or pass --allow-mismatch"
            )
    ci = ratio_ci_unpaired(old.samples_us, new.samples_us)
    return Comparison(
        verdict=verdict(ci, threshold),
        threshold=threshold,
        correctness=Correctness(checked=False, ok=True, detail="baseline has no outputs"),
        a=old,
        b=new,
        ratio=ci.ratio,
        ci_low=ci.low,
        ci_high=ci.high,
        level=ci.level,
        stop_reason=STOP_BASELINE,
    )
