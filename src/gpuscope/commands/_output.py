"""What every report command does with its outputs, on top of the one safe writer
(`gpuscope.output`): check them against the inputs before any work, encode, write.

    check(args, inputs=[...])                          # --json/--md/--html/-o vs the inputs
    write_json(args.json, data)                        # bytes made in memory
    with output_path(args.output) as path: write(path) # a writer that wants a path

`-` is standard output — that output alone: a report command then leaves out its terminal report,
and a command that says what it wrote says it on stderr.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from gpuscope.output import (
    Target,
    check_outputs,
    is_stdout,
    shown_as,
    write,
    writing,
)

REPORT_OPTIONS = ("json", "md", "html")
output_path = writing
__all__ = [
    "check", "json_bytes", "output_path", "shown_as", "stdout_wanted", "write", "write_json",
    "write_text",
]  # fmt: skip


def targets(args: argparse.Namespace, *names: str) -> dict[str, Target | None]:
    """`--name` → the target given (None where not), for the options `names` (default: the
    report options) that this command has."""
    return {f"--{name}": getattr(args, name, None) for name in names or REPORT_OPTIONS}


def check(
    args: argparse.Namespace,
    inputs: Iterable[Target | None] = (),
    extra: Mapping[str, Target | None] | None = None,
) -> None:
    """OutputError (exit 2, nothing written) when an output is an input or two outputs are one
    file; `extra`: outputs beyond --json/--md/--html (e.g. {"--perfetto": args.perfetto})."""
    check_outputs({**targets(args), **(extra or {})}, [p for p in inputs if p is not None])


def stdout_wanted(args: argparse.Namespace, *names: str) -> bool:
    """True when one report option names standard output (then no terminal report);
    OutputError for two."""
    given = targets(args, *names)
    check_outputs(given)
    return any(is_stdout(target) for target in given.values())


def write_json(target: Target, data: Any) -> None:
    """`data` as indented JSON."""
    write(target, json_bytes(data))


def json_bytes(data: Any) -> bytes:
    """Indented JSON; a file name that is not UTF-8 (its bytes kept by os.fsdecode as lone
    surrogates) is written as JSON escapes (`\\udcff`) that read back as the same name."""
    import msgspec

    try:
        return msgspec.json.format(msgspec.json.encode(data), indent=1)
    except UnicodeEncodeError:  # msgspec refuses lone surrogates; the standard library does not
        import json

        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        return text.encode("utf-8", "backslashreplace")


def write_text(target: Target, text: str) -> None:
    write(target, text.encode("utf-8", "backslashreplace"))
