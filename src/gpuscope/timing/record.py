"""A `Measurement` as `gpuscope bench --json` writes it: the raw record, and beside it the
statistics, rates and warnings derived from it (`diagnostics`) for readers of the file.
`measurement.from_json` reads the raw record back (the derived fields are recomputed).
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import msgspec

from gpuscope.timing.diagnostics import warnings_for
from gpuscope.timing.measurement import Measurement, encode_json


def derived(m: Measurement) -> dict[str, Any]:
    """Statistics, warnings and rates of `m`, as written beside the raw samples."""
    stats = {k: _finite(v) if isinstance(v, float) else v for k, v in asdict(m.stats).items()}
    stats["ci_halfwidth"] = _finite(m.stats.ci_halfwidth)
    out: dict[str, Any] = {"stats_us": stats, "warnings": warnings_for(m)}
    if m.rates is not None:
        out["rates"] = msgspec.to_builtins(m.rates)
    return out


def to_builtins(m: Measurement) -> dict[str, Any]:
    """The JSON object of `m`: raw record plus derived statistics (`stats_us`) and warnings."""
    record: dict[str, Any] = msgspec.to_builtins(m)
    record.update(derived(m))
    return record


def to_json(m: Measurement) -> bytes:
    """`m` as indented JSON with `schema: gpuscope.bench/1`."""
    return encode_json(to_builtins(m))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
