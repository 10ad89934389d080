"""Judge one command line of the CLI mode by everything it touched.

Passing outcomes: ok (exit 0), refused (exit 2 where an output had to be refused), exit-2 (an
`error:` line), closed-stdout (141: its reader went away), gate (1, bench's --fail-if-slower),
command-exit (run: its program's own status). Everything else is a failure, by the first rule it
breaks (the detail lists all of them):

- traceback, hang, crash (killed by a signal), bad-exit (a status outside the command's set);
- bad-stderr: a line that is not `error:`/`warning:`/`gpuscope:`/`wrote …` (an error over two
  lines, a stray print), a control character in a line (a name's ESC [ 2 J would clear the
  terminal), no `error:` line on exit 2, an `error:` line on exit 0;
- not-refused: an output that is an input (through any name), a directory or another output was
  written to (or the command went on); write-error-hidden: exit 0 over a full device or a
  read-only folder;
- input-changed, link-replaced, fifo-replaced, device-replaced, mode-changed: any file that was
  in the case's folder before and is not a named output is not byte for byte what it was (a
  symbolic link not the same link, a FIFO not a FIFO, a device node not a device); /dev/null
  not the null device;
- temp-left (a `.NAME.tmpPID` file, anything left in TMPDIR), stray-file (a new file that is no
  output);
- output-missing, bad-output (a JSON that does not parse, an HTML cut short, standard output
  that is not that output alone), written-on-error (exit 2 and an output written, unless it is
  an analysis set recording each input that failed);
- process-left: a process of the command's session still there a second after it ended.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz.cli_commands import Plan
from tests.fuzz.cli_exec import Ran
from tests.fuzz.cli_targets import EITHER, FAIL, REFUSE, WRITE, Output
from tests.fuzz.oracle import Outcome

OK, REFUSED, EXIT_2, CLOSED, GATE, COMMAND_EXIT = (
    "ok", "refused", "exit-2", "closed-stdout", "gate", "command-exit",
)  # fmt: skip
PASSED = (OK, REFUSED, EXIT_2, CLOSED, GATE, COMMAND_EXIT)
PREFIXES = ("error: ", "warning: ", "gpuscope: ", "wrote ")
USAGE = re.compile(r"^gpuscope(?: \S+)?: error: ")
TEMP = re.compile(r"^\..*\.tmp\d*$")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # what a message must show as escapes
SET_SCHEMA = "gpuscope.analysis-set/1"


@dataclass(frozen=True)
class Entry:
    """What a path in the case's folder was: its kind, its bytes' hash (a file), its target (a
    link) or its device number, and its permission bits."""

    kind: str
    digest: str
    mode: int


def snapshot(folder: Path) -> dict[str, Entry]:
    """Every path under `folder` (links not followed), relative → Entry."""
    found: dict[str, Entry] = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(top, name)
            found[os.path.relpath(path, folder)] = _entry(path)
    return found


def _entry(path: str) -> Entry:
    st = os.lstat(path)
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return Entry("link", os.readlink(path), mode)
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as handle:
            return Entry("file", hashlib.sha256(handle.read()).hexdigest(), mode)
    if stat.S_ISDIR(st.st_mode):
        return Entry("dir", "", mode)
    if stat.S_ISFIFO(st.st_mode):
        return Entry("fifo", "", mode)
    if stat.S_ISCHR(st.st_mode):
        return Entry("device", str(st.st_rdev), mode)
    return Entry("other", "", mode)


def prior(plan: Plan) -> dict[str, bytes | None]:
    """The bytes at each output's file before the command (None: no file there)."""
    found: dict[str, bytes | None] = {}
    for out in plan.outputs:
        if out.path and out.format != "dir":
            found[out.path] = _read(Path(out.path))
    return found


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def judge(
    plan: Plan,
    ran: Ran,
    before: dict[str, Entry],
    was: dict[str, bytes | None],
    folder: Path,
    tmp: Path,
) -> Outcome:
    err = ran.stderr.decode("utf-8", "backslashreplace")
    problems = _status(plan, ran, err) + _stderr(plan, ran.rc, err) + _expected(plan, ran.rc)
    problems += _files(plan, before, snapshot(folder), folder)
    problems += _outputs(plan, ran, was)
    problems += _machine(ran.pid, tmp)
    if ran.survivors:
        problems.append(("process-left", f"still running after the command: {ran.survivors}"))
    if problems:
        detail = "\n".join(f"{status}: {why}" for status, why in problems)
        detail += f"\n--- exit {ran.rc}, stderr:\n{err[-4000:]}"
        return Outcome(problems[0][0], detail, PASSED)
    return Outcome(_passed(plan, ran.rc), err, PASSED)


def _passed(plan: Plan, rc: int | None) -> str:
    if rc == 0:
        return OK
    if rc == 141:
        return CLOSED
    if rc == 1 and plan.exits == (0, 1, 2):
        return GATE
    if rc == 2:
        return REFUSED if any(o.expect == REFUSE for o in plan.outputs) else EXIT_2
    return COMMAND_EXIT


def _status(plan: Plan, ran: Ran, err: str) -> list[tuple[str, str]]:
    found = []
    if ran.rc is None:
        found.append(("hang", "no end within the timeout (killed)"))
    elif ran.rc < 0:
        found.append(("crash", f"killed by signal {-ran.rc}"))
    elif ran.rc not in plan.exits and not (ran.rc == 141 and plan.stdout == "closed"):
        found.append(("bad-exit", f"exit {ran.rc}, expected one of {plan.exits}"))
    if "Traceback" in err:
        found.insert(0, ("traceback", err.strip().splitlines()[-1]))
    return found


def _stderr(plan: Plan, rc: int | None, err: str) -> list[tuple[str, str]]:
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    usage = rc == 2 and any(USAGE.match(line) for line in lines[-1:])
    if rc == 2 and not errors and not usage:
        return [("bad-stderr", "exit 2 without an `error:` line")]
    if plan.free_stderr or usage:
        return []
    if rc == 0 and errors:
        return [("bad-stderr", f"exit 0 with an error line: {errors[0]!r}")]
    stray = [
        line for line in lines if not line.startswith(PREFIXES) and line not in plan.stderr_lines
    ]
    if stray:
        return [("bad-stderr", f"a line that is no message: {stray[0]!r}")]
    raw = [line for line in lines if CONTROL.search(line)]
    return [("bad-stderr", f"control characters in a message: {raw[0]!r}")] if raw else []


def _expected(plan: Plan, rc: int | None) -> list[tuple[str, str]]:
    """Outputs that had to be refused, or whose write had to fail."""
    found = []
    refused = [o for o in plan.outputs if o.expect == REFUSE]
    if refused and rc not in (2, None):
        names = ", ".join(f"{o.option} {o.given!r} ({o.kind})" for o in refused)
        found.append(("not-refused", f"exit {rc}: {names} had to be refused"))
    failing = [o for o in plan.outputs if o.expect == FAIL]
    if failing and not refused and rc not in (2, 141, None):
        names = ", ".join(f"{o.option} {o.given!r} ({o.kind})" for o in failing)
        found.append(("write-error-hidden", f"exit {rc}: {names} cannot be written"))
    return found


# -- the case's folder before and after ------------------------------------------------------


def _files(
    plan: Plan, before: dict[str, Entry], after: dict[str, Entry], folder: Path
) -> list[tuple[str, str]]:
    outputs = {os.path.relpath(o.path, folder) for o in plan.outputs if o.path}
    dirs = {os.path.relpath(o.path, folder) for o in plan.outputs if o.path and o.format == "dir"}
    made = {os.path.relpath(p, folder) for p in plan.may_create}
    found = []
    for path, was in before.items():
        now = after.get(path)
        if path in outputs and path not in dirs:
            continue
        if now is None:
            found.append((_changed(was.kind), f"{path!r} ({was.kind}) is gone"))
        elif now.kind != was.kind or now.digest != was.digest:
            found.append((_changed(was.kind), f"{path!r}: {was} became {now}"))
        elif now.mode != was.mode:
            found.append(("mode-changed", f"{path!r}: mode {was.mode:o} became {now.mode:o}"))
    for path in sorted(set(after) - set(before)):
        if TEMP.match(os.path.basename(path)):
            found.append(("temp-left", f"{path!r} left behind"))
        elif not _expected_path(path, outputs, dirs | made):
            found.append(("stray-file", f"{path!r} is no output"))
    return found


def _changed(kind: str) -> str:
    return {"link": "link-replaced", "fifo": "fifo-replaced", "device": "device-replaced"}.get(
        kind, "input-changed"
    )


def _expected_path(path: str, outputs: set[str], folders: set[str]) -> bool:
    """An output, a folder made on the way to one, or anything under an output folder."""
    if path in outputs | folders or any(path.startswith(f + os.sep) for f in folders):
        return True
    return any(out.startswith(path + os.sep) for out in outputs)


def _machine(pid: int, tmp: Path) -> list[tuple[str, str]]:
    found = []
    st = os.stat("/dev/null")
    if not stat.S_ISCHR(st.st_mode) or st.st_rdev != os.makedev(1, 3):
        _restore_dev_null()
        found.append(("device-replaced", "/dev/null is no longer the null device (restored)"))
    temps = [name for name in os.listdir("/dev") if name.startswith(".") and f".tmp{pid}" in name]
    if temps:
        found.append(("temp-left", f"/dev: {temps}"))
    left = sorted(p.name for p in tmp.iterdir())
    if left:
        found.append(("temp-left", f"left in TMPDIR: {left}"))
    return found


def _restore_dev_null() -> None:
    """Put the machine's /dev/null back (every other process on it needs it)."""
    os.unlink("/dev/null")
    os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.chmod("/dev/null", 0o666)


# -- what each output holds ------------------------------------------------------------------


def _outputs(plan: Plan, ran: Ran, was: dict[str, bytes | None]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    success = ran.rc == 0 or (ran.rc in plan.exits and ran.rc not in (1, 2))
    if _write_failed(plan, ran):
        return found  # the outputs written before the one that failed stay
    for out in plan.outputs:
        data = _data(plan, ran, out)
        if out.format == "dir":
            found += _dir_output(out, success)
        elif success and out.expect == WRITE:
            found += _written(out, data)
        elif _written_on_error(ran.rc, out, data, was.get(out.path)):
            found.append(("written-on-error", f"{out.option} {out.given!r} ({out.kind})"))
    return found


def _write_failed(plan: Plan, ran: Ran) -> bool:
    """The command stopped because an output could not be written (a full device, a read-only
    folder, a closed standard output), and for nothing else: outputs are written one after the
    other, each whole, and those before it stay."""
    errors = [line for line in ran.stderr.splitlines() if line.startswith(b"error: ")]
    failing = plan.stdout != "pipe" or any(o.expect == FAIL for o in plan.outputs)
    return failing and all(b"cannot write (" in e or b"standard output:" in e for e in errors)


def _written_on_error(rc: int | None, out: Output, data: bytes | None, was: bytes | None) -> bool:
    if rc != 2 or out.expect == EITHER or not data or data == was:
        return False
    return not _records_failures(data, out.format)


def _data(plan: Plan, ran: Ran, out: Output) -> bytes | None:
    """What reached the output: its file, its FIFO or descriptor, or standard output."""
    if out.stream == "stdout":
        return ran.stdout if plan.stdout == "pipe" else None
    if out.stream.startswith("fifo:"):
        return ran.streams.get(out.stream[5:], b"")
    if out.stream == "fd":
        return ran.streams.get("fd", b"")
    return _read(Path(out.path)) if out.path else None


def _written(out: Output, data: bytes | None) -> list[tuple[str, str]]:
    if data is None:
        if out.path or out.stream:
            return [("output-missing", f"{out.option} {out.given!r} ({out.kind}): nothing")]
        return []  # a device
    problem = _format_problem(data, out.format)
    if problem:
        return [("bad-output", f"{out.option} {out.given!r} ({out.kind}): {problem}")]
    return []


def _dir_output(out: Output, success: bool) -> list[tuple[str, str]]:
    """run's --output-dir: a run folder with its manifest in it."""
    if not (success and out.expect == WRITE and out.path):
        return []
    manifests = list(Path(out.path).glob("*/manifest.json"))
    if not manifests:
        return [("output-missing", f"{out.option} {out.given!r} ({out.kind}): no manifest")]
    return [("bad-output", f"{m}: {p}") for m in manifests if (p := _format_problem(
        m.read_bytes(), "json"))]  # fmt: skip


def _format_problem(data: bytes, format: str) -> str:
    """Why `data` is not a whole output of `format` ("" when it is)."""
    if not data:
        return "empty"
    if format in ("json", "perfetto"):
        return _json_problem(data, format)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not UTF-8: {error}"
    if format == "html" and not (
        text.lstrip().lower().startswith("<!doctype html") and text.rstrip().endswith("</html>")
    ):
        return f"not a whole HTML document: {text[:60]!r}…{text[-60:]!r}"
    if format == "md" and not text.startswith("#"):
        return f"not a Markdown report alone: {text[:80]!r}"
    return ""


def _json_problem(data: bytes, format: str) -> str:
    if format == "perfetto" and data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            return f"cut gzip: {error}"
    try:
        value: Any = json.loads(data, parse_constant=_no_constant)
    except ValueError as error:
        return f"not strict JSON ({error}): {data[:80]!r}"
    if format == "json" and not (isinstance(value, dict) and "schema" in value):
        return "no schema field"
    return ""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} in the output")


def _records_failures(data: bytes, format: str) -> bool:
    """An analysis set that records the inputs that could not be read (what analyze writes on
    exit 2 when only some of its inputs failed)."""
    if format == "json":
        try:
            value = json.loads(data)
        except ValueError:
            return False
        return isinstance(value, dict) and value.get("schema") == SET_SCHEMA and bool(
            value.get("failed")
        )  # fmt: skip
    return format in ("md", "html") and b"Inputs not read" in data
