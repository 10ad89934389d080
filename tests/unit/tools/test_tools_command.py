"""Whether a command can start, decided as a shell decides it (126, 127, /bin/sh for #!-less)."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from gpuscope.run.command import (
    CommandNotExecutable,
    CommandNotFound,
    prepare,
    spawn_error,
)

PATH = os.environ.get("PATH", "")


def _file(tmp_path: Path, name: str, content: bytes, mode: int = 0o755) -> str:
    path = tmp_path / name
    path.write_bytes(content)
    path.chmod(mode)
    return str(path)


def test_an_executable_with_a_good_interpreter_runs_as_given(tmp_path: Path) -> None:
    script = _file(tmp_path, "ok", f"#!{sys.executable} -u\nprint(1)\n".encode())
    assert prepare((script, "a"), PATH) == (script, "a")


@pytest.mark.parametrize("content", [b"echo hi\n", b"", b"#!\necho hi\n", b"#! \t\n"])
def test_a_script_without_a_usable_shebang_runs_with_sh(tmp_path: Path, content: bytes) -> None:
    script = _file(tmp_path, "plain", content)
    assert prepare((script, "a", "b"), PATH) == ("/bin/sh", script, "a", "b")


def test_a_shebang_less_script_found_on_path_runs_with_sh_by_its_path(tmp_path: Path) -> None:
    script = _file(tmp_path, "myjob", b"echo hi\n")
    assert prepare(("myjob",), str(tmp_path)) == ("/bin/sh", script)


def test_a_binary_that_is_not_elf_is_left_to_exec(tmp_path: Path) -> None:
    garbage = _file(tmp_path, "garbage", b"AB\0\x01\x02 not a program\n")
    assert prepare((garbage,), PATH) == (garbage,)  # binfmt_misc may know it; exec decides
    error = spawn_error(garbage, OSError(errno.ENOEXEC, "Exec format error"))
    assert isinstance(error, CommandNotExecutable) and error.exit_code == 126
    assert str(error) == f"{garbage}: cannot execute binary file: exec format error"


@pytest.mark.parametrize(
    ("name", "setup", "code", "message"),
    [
        ("missing", None, 127, "command not found: {p} (no such file)"),
        ("notexec", b"echo hi\n", 126, "{p}: permission denied (not executable: chmod +x {p}"),
        ("dir", "dir", 126, "{p}: is a directory"),
        ("badinterp", b"#!/nonexistent/python\n", 127,
         "{p}: bad interpreter: /nonexistent/python: no such file"),
        ("dos", b"#!/bin/sh\r\necho hi\r\n", 127,
         "{p}: bad interpreter: /bin/sh: no such file (the file has Windows line endings)"),
        ("interpdir", b"#!/tmp\n", 126, "{p}: bad interpreter: /tmp: permission denied"),
    ],
)  # fmt: skip
def test_a_command_that_cannot_start_gets_the_shells_status(
    tmp_path: Path, name: str, setup: bytes | str | None, code: int, message: str
) -> None:
    path = tmp_path / name
    if setup == "dir":
        path.mkdir()
    elif isinstance(setup, bytes):
        _file(tmp_path, name, setup, 0o644 if name == "notexec" else 0o755)
    with pytest.raises((CommandNotFound, CommandNotExecutable)) as error:
        prepare((str(path), "arg"), PATH)
    assert error.value.exit_code == code
    assert str(error.value).startswith(message.format(p=path))


def test_a_program_not_on_path_is_127() -> None:
    with pytest.raises(CommandNotFound, match="command not found: no-such-program-xyz"):
        prepare(("no-such-program-xyz",), PATH)


def test_exec_errors_map_to_the_shells_statuses() -> None:
    assert spawn_error("x", OSError(errno.ENOENT, "No such file")).exit_code == 127
    assert spawn_error("x", OSError(errno.EACCES, "Permission denied")).exit_code == 126
    assert "cannot execute: Text file busy" in str(
        spawn_error("x", OSError(errno.ETXTBSY, "Text file busy"))
    )
