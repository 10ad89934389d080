"""A finding as the report carries it: what fired, how bad, why, what to do, and the evidence."""

from __future__ import annotations

from typing import Any

Finding = dict[str, Any]
SEVERITIES = ("info", "warning", "critical")


def finding(
    finding_id: str, severity: str, message: str, action: str, evidence: dict[str, Any]
) -> Finding:
    """`severity` is "info" (worth knowing), "warning" (costs real time here) or "critical"."""
    if severity not in SEVERITIES:
        raise ValueError(f"severity {severity!r}: expected one of {SEVERITIES}")
    return {
        "id": finding_id,
        "severity": severity,
        "message": message,
        "action": action,
        "evidence": evidence,
    }


def us(ns: float) -> float:
    """ns → µs rounded to the ns, for evidence."""
    return round(float(ns) / 1000, 3)
