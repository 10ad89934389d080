"""The one way gpuscope writes a file a user named: never over an input, whole or not at all.

    check_outputs({"--json": args.json, "--md": args.md}, inputs=[trace])   # before any work
    write(args.json, data)                          # bytes made in memory
    with writing(args.output) as path: save(path)   # a writer that wants a path

What a target is decides how it is written:

- `-` (or `/dev/stdout`, `/dev/fd/1`): standard output, that output alone (a report command
  then leaves out its terminal report); a write error there (ENOSPC, a closed pipe) is an
  `OutputError`, never a traceback;
- a character device, a FIFO, a socket or an open descriptor (`/dev/null`, `>(jq …)` as
  `/dev/fd/63`): written in place, as a shell's `>` does — never replaced by a regular file;
- anything else: written beside its real path (symlinks followed, so a link stays a link) and
  renamed over it at the end, keeping an existing file's permission bits: a reader, or a crash,
  never sees half a file.

`check_outputs` refuses, before anything is read or written, an output that is one of the
command's inputs (the same file by inode, through any link) or the same file as another output
of the command (two outputs may share a character device such as `/dev/null`).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Union

from gpuscope.errors import InputError

Target = Union[str, "os.PathLike[str]"]
STDOUT = "-"
# spellings of this process's standard output
_STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")
_DESCRIPTORS = ("/dev/fd/", "/proc/self/fd/", "/dev/stdout", "/dev/stderr")


class OutputError(InputError):
    """An output cannot be written, or would destroy data (exit 2)."""


class PipeClosed(OutputError):
    """Standard output's reader went away before an output was whole (exit 141, as SIGPIPE)."""

    exit_code = 141


def is_stdout(target: Target | None) -> bool:
    """True when `target` names standard output (`-`, `/dev/stdout`, `/dev/fd/1`)."""
    return target is not None and os.fspath(target) in _STDOUT_NAMES


def is_file(target: Target | None) -> bool:
    """True when `target` is written as a regular file (not standard output, a device, a FIFO or
    a descriptor): a place where other files, such as a report's figures, can sit beside it."""
    return target is not None and not is_stdout(target) and not _in_place(Path(target))


def shown_as(target: Target) -> str:
    """How a message names an output: its path, or `standard output`."""
    return "standard output" if is_stdout(target) else printable_path(target)


def printable_path(path: Target) -> str:
    """A path as text that any output can carry on one line: bytes that are not UTF-8 as
    `\\xNN`, control characters (a line end, ESC) as escapes."""
    from gpuscope.text import printable

    return printable(os.fsdecode(path))


def check_outputs(outputs: Mapping[str, Target | None], inputs: Iterable[Target] = ()) -> None:
    """OutputError when two outputs are one file, or an output is an input.

    `outputs`: option → target (None: not asked for). `inputs`: every file the command reads.
    """
    given = {option: t for option, t in outputs.items() if t is not None and os.fspath(t) != ""}
    _one_stdout(given)
    seen: dict[tuple[object, ...], str] = {}
    for path in inputs:
        key = _identity(path)
        if key is not None:
            seen.setdefault(
                key, f"is the input {printable_path(path)}: writing there would destroy it"
            )
    for option, target in given.items():
        if is_stdout(target):
            continue
        key = _identity(target)
        _refuse_directory(option, target)
        if key is None:
            continue
        if key in seen and not _shareable(target):
            raise OutputError(
                f"{option} {printable_path(target)}: {seen[key]} (choose another file)"
            )
        seen.setdefault(key, f"is also where {option} goes: one would overwrite the other")


def _one_stdout(given: Mapping[str, Target]) -> None:
    dashes = [option for option, target in given.items() if is_stdout(target)]
    if len(dashes) > 1:
        raise OutputError(
            f"{' and '.join(dashes)} both name standard output: only one can go there"
        )


def _identity(path: Target) -> tuple[object, ...] | None:
    """The file `path` is (device, inode), following links; a file yet to be made: its real
    path; None when it cannot be known (a broken directory)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return ("path", os.path.realpath(path))
    except OSError:
        return None
    return ("inode", found.st_dev, found.st_ino)


def _shareable(target: Target) -> bool:
    """A character device (`/dev/null`) can take any number of outputs."""
    try:
        return stat.S_ISCHR(os.stat(target).st_mode)
    except OSError:
        return False


def _refuse_directory(option: str, target: Target) -> None:
    if os.path.isdir(target):
        raise OutputError(f"{option} {printable_path(target)}: is a directory (expected a file)")


def write(target: Target, data: bytes) -> None:
    """Write `data` to `target` (see the module's docstring for what each kind of target gets)."""
    with writing(target) as path, open(path, "wb") as handle:
        handle.write(data)


@contextlib.contextmanager
def writing(target: Target) -> Iterator[Path]:
    """The path a writer writes `target` through; the output appears when the block ends.

    OSError inside the block (or when the output is put in place) becomes an OutputError that
    names the target."""
    if is_stdout(target):
        with _through_stdout(target) as path:
            yield path
        return
    path = Path(target)
    try:
        if _in_place(path):
            yield path
            return
        with _replacing(Path(os.path.realpath(path))) as temp:
            yield temp
    except OutputError:
        raise
    except OSError as error:
        raise OutputError(f"{printable_path(target)}: cannot write ({_why(error)})") from None


def _in_place(path: Path) -> bool:
    """A device, FIFO, socket or open descriptor: written as it is, never replaced."""
    if os.fspath(path).startswith(_DESCRIPTORS):
        return True
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(mode)


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside `path` that replaces it when the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        yield temp
        _keep_mode(path, temp)
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def _keep_mode(path: Path, temp: Path) -> None:
    """The new file keeps the permission bits of the one it replaces."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    os.chmod(temp, mode)


@contextlib.contextmanager
def _through_stdout(target: Target) -> Iterator[Path]:
    """A temporary file, copied to standard output once written (the writers write by path)."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gpuscope-out-") as folder:
        path = Path(folder) / "stdout"
        yield path
        try:
            with path.open("rb") as handle:
                sys.stdout.flush()
                shutil.copyfileobj(handle, sys.stdout.buffer)
                sys.stdout.flush()
        except OSError as error:
            raise stdout_error(error) from None


def stdout_error(error: OSError) -> OutputError:
    """The one-line error for a failed write to standard output (exit 141 for a closed pipe)."""
    _quiet_stdout()
    if error.errno == errno.EPIPE:
        return PipeClosed("standard output: its reader closed it before the output was whole")
    return OutputError(f"standard output: cannot write ({_why(error)})")


def guard_stdout() -> None:
    """Make a failed write to the real standard output (the terminal report on a full disk)
    an OutputError; a closed pipe stays BrokenPipeError (`gpuscope … | head` ends quietly).
    Does nothing where standard output was replaced (tests capturing it)."""
    import io

    stream = sys.__stdout__
    if stream is None or sys.stdout is not stream:
        return
    stream.flush()
    sys.stdout = io.TextIOWrapper(
        _Guarded(stream.fileno()),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=True,
    )


class _Guarded(io.BufferedWriter):
    """Standard output's descriptor; OSError other than a closed pipe → OutputError."""

    def __init__(self, fd: int) -> None:
        super().__init__(io.FileIO(fd, "w", closefd=False))

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise stdout_error(error) from None

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise stdout_error(error) from None


def _quiet_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's last flush cannot fail again at exit."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)


def _why(error: OSError) -> str:
    return error.strerror or str(error)
