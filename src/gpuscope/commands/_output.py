"""Output files of the commands, where `-` is standard output — that output alone: a report
command (analyze, diff, counters) then leaves out its terminal report, and a command that says
what it wrote says it on stderr.

    write_report(args.json, data)                        # bytes made in memory
    with output_path(args.output) as path: write(path)   # a writer that wants a path
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
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


@contextlib.contextmanager
def output_path(target: str | Path) -> Iterator[Path]:
    """The path to write `target` at: itself, or for `-` a temporary file that is copied to
    stdout once written (the writers write atomically, by path). OSError → one-line error."""
    import shutil
    import tempfile

    from gpuscope.errors import InputError

    if str(target) != "-":
        try:
            yield Path(target)
        except OSError as error:
            raise InputError(f"{target}: cannot write ({error.strerror or error})") from None
        return
    with tempfile.TemporaryDirectory(prefix="gpuscope-out-") as folder:
        path = Path(folder) / "stdout"
        yield path
        with path.open("rb") as handle:
            shutil.copyfileobj(handle, sys.stdout.buffer)
        sys.stdout.flush()


def shown_as(target: str | Path) -> str:
    """How a message names an output: its path, or `standard output`."""
    return "standard output" if str(target) == "-" else str(target)


def to_stdout(*targets: str | Path | None) -> bool:
    """True when one of the targets is `-`; InputError when several are."""
    from gpuscope.errors import InputError

    dashes = [t for t in targets if t is not None and str(t) == "-"]
    if len(dashes) > 1:
        raise InputError("several outputs are '-': only one can go to stdout")
    return bool(dashes)
