"""The reader registry: find the reader for a file by its content, never by its extension alone.

A reader is an object with the `Reader` interface, registered under its `name`. The built-ins are
imported statically and registered with `register` on first use, in sniffing order (a renamed
module is an ImportError, never a reader gone missing); third-party readers come after them,
registered the same way (`register(MyReader())`, before or after the first use) or through an
entry point of the `gpuscope.readers` group (each loads a reader object), read on first use. A
second reader under an existing name raises. Each format package's reader module holds what
sniffing needs and imports its read path on read, so reading a Kineto JSON never loads the
SQLite readers. A new format is one package plus one registration:

    # pyproject.toml of the package that adds it
    [project.entry-points."gpuscope.readers"]
    mytracer = "mypackage.reader:READER"     # READER = MyReader(): name, sniff, read

A reader of a multi-file format (rocprof's `results.*`, rocprofv3's `<pid>_*_trace.csv`) also has
`group_key(path)` and `read_group(paths)`: in a directory, the files with one key become one
`Trace`. When two sources describe the same process (an `.rpd` and its `rpd2tracing` JSON, a
rocpd database and the CSVs of the same run), the reader with the higher `priority` is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from gpuscope import plugins
from gpuscope.errors import GpuscopeError, InputError, ReaderError, one_line
from gpuscope.formats import formats_help
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace._sniff import forget
from gpuscope.trace.model import Trace


class Reader(Protocol):
    """A trace format: `sniff` says by content whether a file is one (cheaply, never raising),
    `read` reads it. Optional: `group_key(path)` / `read_group(paths, progress)` for a format
    whose runs span several files, `priority` (int) to be read before another export of one run.
    """

    name: str

    def sniff(self, path: str) -> bool: ...

    def read(self, path: str, progress: Progress | None = None) -> Trace: ...


GROUP = "gpuscope.readers"


FORMATS_HELP = formats_help()  # gpuscope/formats.py: one line per built-in reader
# files gpuscope itself writes next to profiler outputs: never traces
_OWN_OUTPUTS = ("manifest.json", "analysis.json", ".analysis.json", "summary.json")

_READERS: dict[str, Reader] = {}
_loaded = False


def register(reader: Reader) -> None:
    """Add a reader under its `name`; ValueError when the name is taken."""
    plugins.add(_READERS, reader.name, reader, "trace reader")


def readers() -> dict[str, Reader]:
    """Every registered reader, built-ins first in sniffing order, then the entry points', then
    those registered at run time."""
    _register_builtins()
    return dict(_READERS)


def builtin_readers() -> list[Reader]:
    """The built-in readers in sniffing order: specific formats before generic JSON."""
    from gpuscope.trace.readers.jax import JaxReader
    from gpuscope.trace.readers.kineto import KinetoReader
    from gpuscope.trace.readers.ncu import NcuReader
    from gpuscope.trace.readers.nsys import NsysReader
    from gpuscope.trace.readers.pftrace import PftraceReader
    from gpuscope.trace.readers.rocpd import RocpdReader
    from gpuscope.trace.readers.rocprof import RocprofReader
    from gpuscope.trace.readers.rocprofv3 import Rocprofv3Reader
    from gpuscope.trace.readers.rpd import RpdReader

    return [
        RocprofReader(),
        Rocprofv3Reader(),
        RocpdReader(),
        RpdReader(),
        NsysReader(),
        NcuReader(),
        JaxReader(),  # before Kineto: its JSON is a Chrome trace too
        PftraceReader(),
        KinetoReader(),
    ]


def _register_builtins() -> None:
    global _loaded
    if _loaded:
        return
    builtins = builtin_readers()
    third_party = list(_READERS.values())  # registered before the first use: after the built-ins
    _READERS.clear()
    for reader in [*builtins, *installed(), *third_party]:
        register(reader)
    _loaded = True


def installed() -> list[Reader]:
    """The readers of the `gpuscope.readers` entry points."""
    return [reader for _, reader in plugins.installed(GROUP)]


@dataclass(frozen=True)
class Source:
    """Files that one reader turns into one Trace (one process / rank)."""

    reader: Reader
    paths: tuple[str, ...]
    key: str

    @property
    def path(self) -> str:
        return self.paths[0] if len(self.paths) == 1 else self.key


def sniff(path: str) -> Reader | None:
    """The first reader that recognises the file's content."""
    for reader in readers().values():
        if reader.sniff(path):
            return reader
    return None


def find_sources(path: str, bad: list[tuple[str, str]] | None = None) -> list[Source]:
    """The traces in `path`: one for a trace file, every process's outputs for a directory.

    A file in a directory that cannot be opened (permissions, a broken link) is an InputError
    naming it; given a `bad` list, (its path, the message) goes there instead and the others are
    found."""
    if os.path.isdir(path):
        return _directory_sources(path, bad)
    _check_file(path)
    reader = sniff(path)
    if reader is None:
        raise ReaderError(f"{path}: not a profiler output this version can read; expected "
                          f"{FORMATS_HELP}")  # fmt: skip
    return [Source(reader, (path,), _key(reader, path))]


def sources(
    paths: Iterable[str],
    bad: list[tuple[str, str]] | None = None,
    failed: list[tuple[str, str]] | None = None,
) -> list[Source]:
    """The traces in `paths` (files or folders), one `Source` each: the one place that decides
    which files are one trace — a folder's outputs grouped by run (`find_sources`), and the
    files of one run named one by one merged as their folder would be (`together`).

    `bad`: as for `find_sources`. `failed`: a path that cannot be found or read goes there as
    (path, message) and the others are found (without it, it raises); each path's failure comes
    before its bad files (one list may take both). The sniffed heads are let go after each path
    (whoever reads the traces reads the files again)."""
    found: list[Source] = []
    for path in paths:
        mine: list[tuple[str, str]] | None = [] if bad is not None else None
        try:
            found += find_sources(path, mine)
        except GpuscopeError as error:
            if failed is None:
                raise
            failed.append((path, str(error)))
        if bad is not None and mine:
            bad += mine
        forget()
    return together(found)


def together(sources: Sequence[Source]) -> list[Source]:
    """Files named one by one that are one output set (`results.db`, `results.stats.csv`,
    `results.sysinfo.txt` … of one rocprof run) read as one trace, as their folder would be:
    sources of one file each, of one reader that reads groups and with one key, merge in the
    order given. Everything else is kept as it is."""
    merged: dict[tuple[str, str], Source] = {}
    out: list[Source | tuple[str, str]] = []
    for source in sources:
        groups = getattr(source.reader, "read_group", None) is not None
        if len(source.paths) != 1 or not groups or os.path.isdir(source.paths[0]):
            out.append(source)
            continue
        at = (source.reader.name, source.key)
        if at in merged:
            old = merged[at]
            if source.paths[0] not in old.paths:
                merged[at] = Source(old.reader, (*old.paths, source.paths[0]), old.key)
            continue
        merged[at] = source
        out.append(at)
    return [merged[item] if isinstance(item, tuple) else item for item in out]


def read_trace(path: str, progress: Progress | None = None) -> Trace:
    """Read one trace file (or a directory holding one process's outputs)."""
    sources = find_sources(path)
    if len(sources) > 1:
        names = ", ".join(s.path for s in sources[:4])
        raise InputError(f"{path}: holds {len(sources)} traces ({names}…); read them with "
                         "read_traces() or analyze each")  # fmt: skip
    return read_source(sources[0], progress)


def read_traces(path: str, progress: Progress | None = None) -> list[Trace]:
    return [read_source(source, progress) for source in find_sources(path)]


def read_source(source: Source, progress: Progress | None = None) -> Trace:
    reader = source.reader
    group = getattr(reader, "read_group", None)
    try:
        if group is not None:
            trace: Trace = group(list(source.paths), progress)
        else:
            trace = reader.read(source.paths[0], progress)
    except ReaderError as error:
        message = str(error)
        where = source.path
        raise ReaderError(message if message.startswith(where) else f"{where}: {message}") from None
    except (OSError, EOFError) as error:
        raise ReaderError(f"{source.path}: cannot read ({error})") from None
    _check_numbers(trace, source.path)
    return _with_cut_databases(trace, source.paths)


def _with_cut_databases(trace: Trace, paths: Sequence[str]) -> Trace:
    """A warning for each SQLite file that is shorter than it says (its rows may be missing);
    every warning on one line (they may quote a file's bytes)."""
    from gpuscope.trace._sniff import sqlite_cut

    said = []
    for path in paths:
        cut = sqlite_cut(path)
        if cut:
            where = f"{Path(path).name}: " if len(paths) > 1 else ""
            said.append(f"truncated file: {where}{cut} (cut short?): rows may be missing")
    warnings = tuple(one_line(w) for w in (*said, *trace.meta.warnings))  # one line each
    if warnings == trace.meta.warnings:
        return trace
    meta = replace(trace.meta, truncated=trace.meta.truncated or bool(said), warnings=warnings)
    return replace(trace, meta=meta)


# 2^61 (73 years in ns): no profiler writes more; a damaged file can, and the analyses' sums and
# differences of such values (end - start, total time, bytes) would overflow int64
TIME_LIMIT_NS = 2**61
_SPAN = ("start", "dur")
_BOUNDED = {  # every value, and (but for start) the column's sum, stays below the limit
    **dict.fromkeys(("host", "ops", "syncs", "gpu_annotations"), _SPAN),
    "gpu": (*_SPAN, "bytes"),
    "flows": ("start",),
    "totals": ("count", "total_ns", "min_ns", "max_ns"),
}
COUNTER_LIMIT = 1e300  # a counter value past it (or infinite) overflows a sum of a few


def _check_numbers(trace: Trace, where: str) -> None:
    for name, columns in _BOUNDED.items():
        table = getattr(trace, name)
        for column in columns:
            values = getattr(table, column)
            big = (values >= TIME_LIMIT_NS) | (values <= -TIME_LIMIT_NS)
            if big.any():
                raise ReaderError(f"{where}: {int(big.sum()):,} {name} rows have a {column} "
                                  "past ±2^61 (73 years in ns): the file is damaged")  # fmt: skip
            if column != "start" and float(np.abs(values).sum(dtype=np.float64)) >= 2**62:
                raise ReaderError(f"{where}: the {column} of the {name} rows adds up past 2^62: "
                                  "the file is damaged")  # fmt: skip
    values = trace.counters.value
    bad = int((np.abs(values[~np.isnan(values)]) >= COUNTER_LIMIT).sum())
    if bad:
        raise ReaderError(f"{where}: {bad:,} counter values are infinite or past ±1e300: "
                          "the file is damaged")  # fmt: skip
    span = trace.meta.profiler_span
    if span is not None and max(abs(span[0]), abs(span[1])) >= TIME_LIMIT_NS:
        raise ReaderError(f"{where}: the profiler's span {span} is past ±2^61 ns: damaged")


def _check_file(path: str) -> None:
    """InputError naming what is wrong with `path` as the OS says it: no such file, too many
    levels of symbolic links, permission denied, not a regular file, empty."""
    try:
        found = os.stat(path)
    except OSError as error:
        raise InputError(f"{path}: {_why(error)}") from None
    if not stat.S_ISREG(found.st_mode):
        raise InputError(f"{path}: not a regular file")
    if found.st_size == 0:
        raise ReaderError(f"{path}: the file is empty; expected {FORMATS_HELP}")
    problem = _unopenable(path)
    if problem:
        raise InputError(f"{path}: {problem}")


def _unopenable(path: str) -> str | None:
    """Why `path` cannot be opened for reading (None: it can)."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as error:
        return _why(error)
    return None


def _why(error: OSError) -> str:
    """The OS's reason, as a message part: "permission denied", "too many levels of symbolic
    links"."""
    text = error.strerror or str(error)
    return text[:1].lower() + text[1:]


def _key(reader: Reader, path: str) -> str:
    """Files of one reader with one key are one trace; across readers, one process's outputs."""
    group_key = getattr(reader, "group_key", None)
    if group_key is not None:
        return str(group_key(path))
    name = Path(path).name.removesuffix(".gz")
    return str(Path(path).parent / (name.rsplit(".", 1)[0] if "." in name else name))


def _walk(folder: str, bad: list[tuple[str, str]] | None) -> Iterator[str]:
    """The files of `folder` that may be traces; one that cannot be opened (or a directory that
    cannot be listed) raises, or with `bad` is noted there."""

    def trouble(path: str, problem: str) -> None:
        message = f"{path}: {problem}"
        if bad is None:
            raise InputError(f"{message} (or leave such files out: --skip-bad)")
        bad.append((path, message))

    def unlistable(error: OSError) -> None:
        trouble(str(error.filename), f"cannot list this directory ({_why(error)})")

    for root, dirs, files in os.walk(folder, onerror=unlistable):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name.endswith(_OWN_OUTPUTS):
                continue
            path = os.path.join(root, name)
            try:
                found = os.stat(path)
            except OSError as error:
                trouble(path, _why(error))
                continue
            if not stat.S_ISREG(found.st_mode) or found.st_size == 0:
                continue
            problem = _unopenable(path)
            if problem:
                trouble(path, problem)
                continue
            yield path


def _directory_sources(folder: str, bad: list[tuple[str, str]] | None = None) -> list[Source]:
    groups: dict[tuple[str, str], list[str]] = {}
    found: dict[str, Reader] = {}
    for path in _walk(folder, bad):
        reader = sniff(path)
        if reader is None:
            continue
        found[reader.name] = reader
        groups.setdefault((reader.name, _key(reader, path)), []).append(path)
    best: dict[str, Source] = {}
    for (name, key), paths in groups.items():
        source = Source(found[name], tuple(paths), key)
        old = best.get(key)
        if old is None or _priority(source.reader) > _priority(old.reader):
            best[key] = source
    if not best:
        raise ReaderError(f"{folder}: no profiler output found in this directory; expected "
                          f"{FORMATS_HELP}")  # fmt: skip
    return sorted(best.values(), key=lambda s: s.key)


def _priority(reader: Reader) -> int:
    return int(getattr(reader, "priority", 0))
