"""Report files of the report commands (analyze, diff, counters): `--json/--md/--html FILE`,
where `-` is standard output — that output alone: the terminal report is then left out."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPORT_OPTIONS = ("json", "md", "html")


def stdout_wanted(args: argparse.Namespace) -> bool:
    """True when one report option is `-` (then no terminal report); InputError for two."""
    from gpuscope.errors import InputError

    dashes = [f"--{name}" for name in REPORT_OPTIONS if getattr(args, name, None) == "-"]
    if len(dashes) > 1:
        raise InputError(f"{' and '.join(dashes)} are both '-': only one can go to stdout")
    return bool(dashes)


def write_report(target: str, data: bytes) -> None:
    """Write `data` to `target` atomically, or to stdout for `-`; one-line error if it cannot."""
    from gpuscope._atomic import write_atomic
    from gpuscope.errors import InputError

    if target == "-":
        sys.stdout.buffer.write(data if data.endswith(b"\n") else data + b"\n")
        sys.stdout.flush()
        return
    try:
        write_atomic(Path(target), data)
    except OSError as error:
        raise InputError(f"{target}: cannot write ({error.strerror or error})") from None
