"""`Result`: what one backend measured for one config — a time per call with the samples behind
it, or the status that says why there is none."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

OK = "ok"
STATUS_KINDS = ("ok", "failed", "not found", "skipped", "not replayed")


@dataclass(frozen=True)
class Result:
    """One backend's measurement of one config.

    `status` is `ok`, or `failed: <reason>` (the backend crashed, timed out or printed no
    time), `not found: <binary> not on PATH`, `skipped: <why this backend cannot run it>`, or
    `not replayed: budget|limit`. `time_us` is the time per call (the median of `samples_us` for
    gpuscope's harness; a binary's own mean, one value, for vendor binaries). `command` is the
    exact command line run (vendor) or the PyTorch call (torch); `tool_rate` what the binary
    itself printed (its GFLOP/s or bus bandwidth) beside gpuscope's own rate; `kernels` the
    kernels one call ran, where the harness profiled them (which algorithm the library chose).
    """

    backend: str
    status: str
    time_us: float | None = None
    samples_us: tuple[float, ...] = ()
    mode: str = ""
    command: str = ""
    note: str = ""
    tool_rate: str = ""
    kernels: tuple[str, ...] = ()  # the device kernels one call ran (kernel mode), in order
    comparison: Any = None  # gpuscope.timing.ab.Comparison against the torch result, if run

    @property
    def ok(self) -> bool:
        return self.status == OK and self.time_us is not None and self.time_us > 0

    @property
    def kind(self) -> str:
        """The status without its reason: ok, failed, not found, skipped, not replayed."""
        return next((k for k in STATUS_KINDS if self.status.startswith(k)), self.status)


def one_line(text: str, limit: int = 160) -> str:
    """A reason fit for a CSV cell: whitespace collapsed, cut to `limit` characters."""
    line = re.sub(r"\s+", " ", text).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def failed(reason: str) -> str:
    return f"failed: {one_line(reason)}"


def skipped(reason: str) -> str:
    return f"skipped: {one_line(reason)}"


def error_reason(error: BaseException) -> str:
    """`RuntimeError: CUDA out of memory…` — the first line of an exception."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")
