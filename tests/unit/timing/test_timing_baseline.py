"""Comparing with a stored measurement: like with like only, unless allowed."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from gpuscope.errors import InputError
from gpuscope.timing.ab import SAME, SLOWER
from gpuscope.timing.baseline import against_baseline, load_baseline
from gpuscope.timing.measurement import Environment, Measurement
from gpuscope.timing.record import to_json

ENV = Environment(vendor="nvidia", device="H100", python="3", platform="t", gpuscope="0")
OLD = Measurement(
    name="mm",
    mode="hot",
    timer="device-events+guard",
    samples_us=(100.0, 100.2, 99.8) * 10,
    calls_per_sample=1,
    stop_reason="ci",
    target_ci=0.01,
    elapsed_s=0.1,
    env=ENV,
)


def test_same_and_slower_against_a_baseline(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_bytes(to_json(OLD))
    old = load_baseline(path)
    assert against_baseline(old, OLD).verdict == SAME
    slower = msgspec.structs.replace(OLD, samples_us=tuple(v * 1.05 for v in OLD.samples_us))
    c = against_baseline(old, slower)
    assert c.verdict == SLOWER and c.slower_than(3)


def test_mismatched_hardware_or_mode_is_refused_unless_allowed() -> None:
    h200 = msgspec.structs.replace(OLD, env=msgspec.structs.replace(ENV, device="H200"))
    with pytest.raises(InputError, match="compare like with like"):
        against_baseline(OLD, h200)
    with pytest.raises(InputError, match=r"mode 'hot'.*'graph'"):
        against_baseline(OLD, msgspec.structs.replace(OLD, mode="graph"))
    assert against_baseline(OLD, h200, allow_mismatch=True).verdict == SAME


def test_unreadable_baseline(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_baseline(tmp_path / "absent.json")


@pytest.mark.parametrize("text", [b'{"schema": "gpuscope.bench/1", "name": "\xff"}', b"{not json"])
def test_a_baseline_that_is_not_json_is_one_input_error(tmp_path: Path, text: bytes) -> None:
    # invalid UTF-8: a UnicodeDecodeError before msgspec 0.23, a DecodeError since
    path = tmp_path / "b.json"
    path.write_bytes(text)
    with pytest.raises(InputError, match=r"not JSON"):
        load_baseline(path)
