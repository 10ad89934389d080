"""madengine's `perf.csv`: its header and column order, rows for a run, a locked append to a
shared file, and reading one back (`gpuscope history import`).

The header is madengine's `PERF_CSV_HEADER` (madengine/reporting/update_perf_csv.py): 29 columns
from `model` to `additional_docker_run_options`; a `multiple_results` row's other columns follow
them, as madengine adds them. `status` is `SUCCESS` only when the command exited 0 *and* the
row has a performance value (madengine: a performance value and no error in the log).

Appending to a shared file (`gpuscope run --perf-csv PATH`, many runs at once) adds rows only to
a file that is one: missing, empty, or UTF-8 text whose first line is a perf.csv header (model,
performance and metric columns, as `read` wants them). Anything else (a JSON report, a script,
notes, a binary or SQLite file) is refused untouched: `check_target` says so before the command
runs, and the append checks again under the lock. The file is
locked (`flock`) for the whole append, so rows of two runs never interleave or tear; when the
file's header lacks a column of the new rows, the file is rewritten whole (the safe writer:
beside it, then renamed) under the same lock, and a writer that waited on the replaced file
notices the rename and starts again on the new one. madengine's own writer rewrites the file
without a lock: do not let it write the same file at the same moment.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from gpuscope import output
from gpuscope.errors import InputError
from gpuscope.madengine.performance import csv_rows, finite, parse_csv

HEADER = (
    "model",
    "n_gpus",
    "nnodes",
    "gpus_per_node",
    "training_precision",
    "pipeline",
    "args",
    "tags",
    "docker_file",
    "base_docker",
    "docker_sha",
    "docker_image",
    "git_commit",
    "machine_name",
    "deployment_type",
    "launcher",
    "gpu_architecture",
    "performance",
    "metric",
    "relative_change",
    "status",
    "build_duration",
    "test_duration",
    "dataname",
    "data_provider_type",
    "data_size",
    "data_download_duration",
    "build_number",
    "additional_docker_run_options",
)
FILE_NAME = "perf.csv"
SUCCESS, FAILURE = "SUCCESS", "FAILURE"

Row = Mapping[str, str]


def status(exit_code: int | None, performance: str | None) -> str:
    """SUCCESS when the command exited 0 and there is a performance value — a finite number
    (`abc`, `nan` or `1e400` are none) — else FAILURE."""
    return SUCCESS if exit_code == 0 and finite(performance) is not None else FAILURE


def columns(rows: Sequence[Row]) -> list[str]:
    """madengine's header, then any other column of `rows` in first-seen order."""
    extra = [k for row in rows for k in row if k not in HEADER]
    return [*HEADER, *dict.fromkeys(extra)]


def encode(
    rows: Sequence[Row], header: Sequence[str] | None = None, with_header: bool = True
) -> str:
    """`rows` as CSV text in `header`'s column order (missing cells empty)."""
    header = list(header or columns(rows))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if with_header:
        writer.writerow(header)
    for row in rows:
        writer.writerow([row.get(name, "") for name in header])
    return buffer.getvalue()


def write(target: output.Target, rows: Sequence[Row]) -> None:
    """A whole perf.csv (the run directory's)."""
    output.write(target, encode(rows).encode("utf-8"))


def check_target(target: output.Target) -> None:
    """OutputError unless `append` may add rows to `target`: a file that does not exist yet, an
    empty one, or a madengine perf.csv; standard output, a device or a FIFO are written in place.
    Read only its head: decided before the command runs, the file untouched."""
    if output.is_stdout(target) or _not_a_file(Path(target)):
        return
    try:
        with open(target, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except FileNotFoundError:
        return
    except OSError as error:
        raise output.OutputError(
            f"--perf-csv {output.printable_path(target)}: cannot read it to append "
            f"({error.strerror or error})"
        ) from None
    _refuse_foreign(target, head)


_HEAD_BYTES = 64 * 1024  # a header longer than this is not madengine's
_REQUIRED = ("model", "performance", "metric")


def _refuse_foreign(target: output.Target, data: bytes) -> None:
    problem = _not_perf_csv(data)
    if problem is not None:
        raise output.OutputError(
            f"--perf-csv {output.printable_path(target)}: {problem}; expected a madengine "
            f"perf.csv (a header with {', '.join(_REQUIRED)} columns) or a new file: left "
            "untouched"
        )


def _not_perf_csv(data: bytes) -> str | None:
    """Why `data` (a file's head, or all of it) is not a perf.csv to append to; None if it is."""
    from gpuscope.text import printable

    if not data.strip():
        return None
    if data.startswith(b"SQLite format 3\0"):
        return "it is a SQLite database"
    try:  # a head may end inside a character: the decoder keeps that part back
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=False)
    except UnicodeDecodeError:
        return "it is a binary file (not UTF-8 text)"
    text = text.split("\n", 1)[0]  # the header line; a byte-order mark is no part of it
    if b"\0" in data or any(c < " " and c not in "\t\r" for c in text):
        return "it is a binary file"
    header = [h.strip() for h in next(csv.reader([text.rstrip("\r")]), [])]
    missing = [name for name in _REQUIRED if name not in header]
    if missing:
        shown = printable(text[:40]) + ("…" if len(text) > 40 else "")
        return f"its first line {shown!r} is not a perf.csv header (no {', '.join(missing)})"
    return None


def append(target: output.Target, rows: Sequence[Row]) -> None:
    """Append `rows` to a shared perf.csv, creating it with madengine's header; locked.
    OutputError, the file untouched, when it holds something else (see `check_target`)."""
    if not rows:
        return
    if output.is_stdout(target) or _not_a_file(Path(target)):
        output.write(target, encode(rows).encode("utf-8"))
        return
    path = Path(os.path.realpath(target))
    try:
        with _locked(path) as fd:
            _append_locked(path, fd, rows)
    except OSError as error:
        raise output.OutputError(
            f"--perf-csv {output.printable_path(target)}: cannot append ({error.strerror or error})"
        ) from None


def _not_a_file(path: Path) -> bool:
    try:
        import stat

        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[int]:
    """The file at `path`, opened and locked; reopened when another writer replaced it while
    this one waited for the lock."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, path):
                yield fd
                return
        finally:
            os.close(fd)  # closing releases the lock


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _append_locked(path: Path, fd: int, rows: Sequence[Row]) -> None:
    data = _read_fd(fd)
    _refuse_foreign(path, data)  # again: it may have changed since check_target
    try:  # a byte-order mark is no part of the header
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:  # its end cut inside a character: a rewrite would lose bytes
        raise output.OutputError(
            f"--perf-csv {output.printable_path(path)}: it ends inside a UTF-8 character; "
            "expected a madengine perf.csv: left untouched"
        ) from None
    if not text.strip():
        _write_all(fd, encode(rows))
        return
    header, old_rows = parse_csv(text, f"--perf-csv {output.printable_path(path)}")
    wanted = columns(rows)
    if all(name in header for name in wanted if any(row.get(name) for row in rows)):
        lead = "" if text.endswith("\n") else "\n"
        _write_all(fd, lead + encode(rows, header, with_header=False))
        return
    merged = [*header, *(name for name in wanted if name not in header)]
    old = [dict(zip(header, cells, strict=False)) for _, cells in old_rows if cells]
    output.write(path, encode([*old, *rows], merged).encode("utf-8"))


def _read_fd(fd: int) -> bytes:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, text: str) -> None:
    data = text.encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]


def read(path: Path) -> list[dict[str, str]]:
    """The rows of a perf.csv (header names stripped, as madengine reads them). InputError when
    it is not one (no `model`, `performance` and `metric` columns)."""
    return [row for _, row in read_numbered(path)]


def read_numbered(path: Path) -> list[tuple[int, dict[str, str]]]:
    """`read`, each row with the line of the file it starts on (for messages)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    problem = _not_perf_csv(head) if head.strip() else "it is empty"
    if problem is not None:
        raise InputError(
            f"{path}: not a madengine perf.csv ({problem}; expected a header with "
            f"{', '.join(_REQUIRED)} columns)"
        )
    header, numbered = csv_rows(path, str(path))
    return [(line, dict(zip(header, cells, strict=False)))
            for line, cells in numbered if any(c.strip() for c in cells)]  # fmt: skip
