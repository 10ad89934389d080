"""Whether and how a command can start, decided as a shell decides it, before anything runs.

    >>> prepare(("./train.sh", "--fast"), os.environ["PATH"])     # doctest: +SKIP
    ('/bin/sh', './train.sh', '--fast')                            # a script without #!

A program without a slash is looked up on PATH. Then, with a shell's exit statuses:

- 127 (`CommandNotFound`): no such command, or its `#!` line names an interpreter that does not
  exist (`bad interpreter`);
- 126 (`CommandNotExecutable`): the file exists but cannot run — not executable, a directory,
  an interpreter that is not executable, a binary the kernel cannot run;
- a script without `#!` (exec refuses it with ENOEXEC) runs with /bin/sh, as shells run it.

Binaries that are neither ELF nor `#!` scripts are left to exec (binfmt_misc may run them);
`spawn_error` turns exec's failure into the same 126/127 errors.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

from gpuscope.errors import InputError
from gpuscope.tools.tool import which

SHELL = "/bin/sh"
_HEAD = 256  # what the kernel reads of a file for its #! line (BINPRM_BUF_SIZE)
_SAMPLE = 80  # what bash looks at to call a file binary (a NUL before the first newline)


class CommandNotFound(InputError):
    """The command does not exist: exit 127, as shells, `env` and `timeout` do."""

    exit_code = 127


class CommandNotExecutable(InputError):
    """The command exists but cannot run: exit 126, as shells do."""

    exit_code = 126


def prepare(command: Sequence[str], path: str) -> tuple[str, ...]:
    """`command` as it will run: /bin/sh first for a script without `#!`; raises 126/127."""
    program = command[0]
    found = locate(program, path)
    _check_file(found, program)
    head = _head(found)
    interpreter = _interpreter(head)
    if interpreter is not None:
        _check_interpreter(interpreter, program)
    elif not _runnable_as_is(head):
        return (SHELL, found, *command[1:])
    return tuple(command)


def locate(program: str, path: str) -> str:
    """The file `program` names: itself when it holds a slash, else the first executable of
    that name on `path`; CommandNotFound if there is none."""
    found = program if "/" in program else which(program, path)
    if found is None:
        raise CommandNotFound(f"command not found: {program} (not on PATH, not a file)")
    return found


def spawn_error(program: str, error: OSError) -> InputError:
    """exec's failure for `program` as the shell's 126/127 error (a race since `prepare`, an
    ELF without its loader, a binary for another machine)."""
    if error.errno == errno.ENOENT:
        return CommandNotFound(f"{program}: no such file or directory (or its loader is missing)")
    if error.errno == errno.ENOEXEC:
        return CommandNotExecutable(f"{program}: cannot execute binary file: exec format error")
    return CommandNotExecutable(f"{program}: cannot execute: {error.strerror}")


def _check_file(found: str, program: str) -> None:
    if not os.path.exists(found):
        raise CommandNotFound(f"command not found: {program} (no such file)")
    if os.path.isdir(found):
        raise CommandNotExecutable(f"{program}: is a directory")
    if not os.access(found, os.X_OK):
        raise CommandNotExecutable(
            f"{program}: permission denied (not executable: chmod +x {program}, "
            "or name its interpreter first)"
        )


def _head(found: str) -> bytes:
    try:
        with open(found, "rb") as file:
            return file.read(_HEAD)
    except OSError:  # executable but not readable: only exec can tell
        return b"\x7fELF"


def _interpreter(head: bytes) -> str | None:
    """The program a `#!` line names (None: no `#!`, or an empty one, which exec refuses)."""
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].strip(b" \t")  # the kernel splits at space and tab only
    return os.fsdecode(line.replace(b"\t", b" ").split(b" ", 1)[0]) if line else None


def _check_interpreter(interpreter: str, program: str) -> None:
    if not os.path.exists(interpreter):
        dos = " (the file has Windows line endings)" if interpreter.endswith("\r") else ""
        shown = interpreter.rstrip("\r")
        raise CommandNotFound(f"{program}: bad interpreter: {shown}: no such file{dos}")
    if os.path.isdir(interpreter) or not os.access(interpreter, os.X_OK):
        raise CommandNotExecutable(f"{program}: bad interpreter: {interpreter}: permission denied")


def _runnable_as_is(head: bytes) -> bool:
    """An ELF binary, or something binary (a NUL in its first line) that exec may know; not a
    text file without a valid #! line, which exec refuses."""
    sample = head[:_SAMPLE].split(b"\n", 1)[0]
    return head.startswith(b"\x7fELF") or b"\0" in sample
