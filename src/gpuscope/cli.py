"""The `gpuscope` command line: parse, call the library, one error boundary.

Every command lives in `gpuscope.commands.<name>`; this module only wires them together and maps
gpuscope's exceptions to `error: …` lines and exit codes (see errors.py).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from gpuscope._version import __version__
from gpuscope.commands import COMMANDS
from gpuscope.errors import GpuscopeError

_DEBUG_HELP = "show tracebacks on errors"


def _load(name: str) -> ModuleType:
    return importlib.import_module(COMMANDS[name])


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with `only`, load just that command's module (fast path for one command)."""
    parser = argparse.ArgumentParser(
        prog="gpuscope",
        description="GPU performance toolkit for AMD (ROCm) and NVIDIA (CUDA).",
    )
    parser.add_argument("--version", action="version", version=f"gpuscope {__version__}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = [_common_options()]
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        module = _load(name)
        description = getattr(module, "DESCRIPTION", module.HELP)  # --help's; HELP: one line
        command = sub.add_parser(name, help=module.HELP, description=description, parents=common)
        module.configure(command)
        command.set_defaults(_main=module.main, _build_parser=build_parser)  # completion
    return parser


def _common_options() -> argparse.ArgumentParser:
    """Options every command also takes after its name (`gpuscope run --debug -- …`). SUPPRESS:
    absent after the name, they keep the value given (or not) before it."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    return common


def _command_in(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if arg in COMMANDS:
            return arg
        if not arg.startswith("-"):
            return None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=_command_in(argv))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from gpuscope._read_workers import use_processes
    from gpuscope.output import guard_stdout

    use_processes()  # big trace files are decoded in worker processes (our main is guarded)
    guard_stdout()  # a full disk under the terminal report: one `error:` line, not a traceback
    try:
        code = int(args._main(args))
        sys.stdout.flush()
        return code
    except GpuscopeError as error:
        if args.debug:
            raise
        from gpuscope.text import printable

        print(f"error: {printable(str(error))}", file=sys.stderr)  # one line, whatever a name holds
        return error.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`gpuscope ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except SystemExit as stop:
        # rich's Console ends a write that found the pipe closed with SystemExit(1) (its
        # on_broken_pipe, which has already pointed stdout at /dev/null): the same quiet 141,
        # not 1, which is the status of a failed gate
        if isinstance(stop.__context__, BrokenPipeError):
            return 141
        raise
