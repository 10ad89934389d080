"""A finding is a typed, frozen object; its dict (`to_dict`) is what the report's JSON holds, key
for key in the documented order, and it reads as that mapping."""

from __future__ import annotations

import dataclasses

import pytest

from gpuscope.analysis import Finding, finding


def test_a_finding_is_typed_and_its_dict_is_the_json_object() -> None:
    f = finding("host-sync", "warning", "syncs drain the queue", "drop them", {"count": 3},
                impact_ns=1500.0, cause="host-sync")  # fmt: skip
    assert isinstance(f, Finding) and f.id == "host-sync" and f.impact_us == 1.5
    assert list(f.to_dict()) == ["id", "severity", "message", "action", "evidence", "impact_us",
                                 "cause"]  # fmt: skip
    assert f["evidence"] == {"count": 3} and dict(f) == f.to_dict() and f == f.to_dict()
    with pytest.raises(KeyError):
        f["impact_ns"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.severity = "info"  # type: ignore[misc]


def test_a_finding_checks_its_severity_and_cause() -> None:
    with pytest.raises(ValueError, match="severity 'bad'"):
        finding("x", "bad", "m", "a", {})
    with pytest.raises(ValueError, match="cause 'nope'"):
        finding("x", "info", "m", "a", {}, cause="nope")
