"""Reader for JAX / XLA profiles written by `jax.profiler.trace` (TensorBoard's profile folder).

`jax.profiler.trace(logdir, create_perfetto_trace=True)` writes, per host, under
`logdir/plugins/profile/<run>/`:

- `<host>.xplane.pb` — the XSpace protobuf, everything the profiler recorded (device properties
  included); read through xprof's own converter (the `xplane` extra, `pip install
  'gpuscope[xplane]'`), which is what TensorBoard and TraceLens do;
- `<host>.trace.json.gz` and `perfetto_trace.json.gz` — the trace-viewer JSON made from it:
  processes `/device:GPU:N` (threads `Stream #S(...)` hold kernels and copies, with `hlo_op`,
  `hlo_module`, `correlation_id`, `kernel_details` grid / block / registers / shared memory) and
  `/host:CPU` (TraceMe ranges, Python frames, the runtime calls that launched the device work).

The files of one host are one source: the XSpace when xprof is installed, else the JSON.

    >>> from gpuscope.trace.registry import read_trace
    >>> trace = read_trace("logdir/plugins/profile/2026_11_27_09_50_00/")  # doctest: +SKIP
    >>> trace.meta.format, trace.meta.extra["hlo_modules"]                    # doctest: +SKIP
    ('jax', ['jit_step'])
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.model import Trace

XPLANE = ".xplane.pb"
# what jax.profiler names its files, most complete first (a host's files share the prefix)
_SUFFIXES = (XPLANE, ".trace.json.gz", ".trace.json", ".perfetto_trace.json.gz",
             ".perfetto_trace.json")  # fmt: skip
_PERFETTO = ("perfetto_trace.json.gz", "perfetto_trace.json")
# a process of the trace viewer named as XLA's profiler names its planes
_XLA_PROCESS = re.compile(rb'"args"\s*:\s*\{\s*"name"\s*:\s*"/(?:device|host):')
_PLANE_NAMES = (b"/host:", b"/device:", b"Task Environment", b"/custom:")


class JaxReader:
    """`Reader` for jax.profiler's trace-viewer JSON, its XSpace protobuf and their folder."""

    name = "jax"

    def sniff(self, path: str) -> bool:
        return is_xspace(path) or is_trace_viewer_json(path)

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        if is_xspace(path):
            from gpuscope.trace.readers.jax import _xplane

            return _xplane.read(path)
        from gpuscope.trace.readers.jax import _json

        return _json.read(path, progress)

    def group_key(self, path: str) -> str:
        """One host's files of one run: `<run>/<host>` (perfetto_trace.json.gz, which names no
        host, joins the run's only host)."""
        folder, name = os.path.split(path)
        host = _host(name)
        if host is None and name in _PERFETTO:
            hosts = {h for n in _listdir(folder) if (h := _host(n))}
            host = hosts.pop() if len(hosts) == 1 else "perfetto_trace"
        if host is None:
            name = name.removesuffix(".gz")
            host = name.rsplit(".", 1)[0] if "." in name else name
        return str(Path(folder) / host)

    def read_group(self, paths: list[str], progress: Progress | None = None) -> Trace:
        """The most complete file of one host: the XSpace when xprof can read it, else the
        trace JSON, else the Perfetto JSON."""
        if not paths:
            raise ReaderError("no file given; expected a jax.profiler output")
        ordered = sorted(paths, key=_rank)
        spaces = [p for p in ordered if is_xspace(p)]
        others = [p for p in ordered if p not in spaces]
        if spaces and (has_xprof() or not others):
            return self.read(spaces[0], progress)
        trace = self.read(others[0], progress)
        if spaces:
            from dataclasses import replace

            from gpuscope.trace.readers.jax._xplane import EXTRA

            note = (f"{Path(spaces[0]).name} was not read (it needs xprof: pip install "
                    f"'gpuscope[{EXTRA}]'); read {Path(others[0]).name}, which has no device "
                    "properties")  # fmt: skip
            meta = replace(trace.meta, warnings=(*trace.meta.warnings, note))
            trace = replace(trace, meta=meta)
        return trace


def has_xprof() -> bool:
    """Whether xprof's XSpace converter can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("xprof") is not None
    except (ImportError, ValueError):
        return False


def is_xspace(path: str) -> bool:
    """An XSpace protobuf: its first field is a plane (field 1) whose name (field 2, after an
    optional id) is one XLA's profiler gives planes: `/host:CPU`, `/device:GPU:0`, ..."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    if head[:1] != b"\x0a":
        return False
    pos = _skip_varint(head, 1)
    if pos < len(head) and head[pos] == 0x08:  # the plane's id
        pos = _skip_varint(head, pos + 1)
    if pos >= len(head) or head[pos] != 0x12:
        return False
    pos = _skip_varint(head, pos + 1)
    return head[pos:].startswith(_PLANE_NAMES)


def is_trace_viewer_json(path: str) -> bool:
    """The trace viewer's JSON: processes named `/device:...` or `/host:...` (Kineto names its
    processes after the program and `GPU N`, and writes `deviceProperties`)."""
    head = _sniff.head(path)
    start = head.lstrip()[:1]
    return (
        start in (b"{", b"[")
        and b'"process_name"' in head
        and _XLA_PROCESS.search(head) is not None
        and b'"deviceProperties"' not in head
    )


def _skip_varint(data: bytes, pos: int) -> int:
    for _ in range(10):
        if pos >= len(data):
            return len(data)
        pos += 1
        if data[pos - 1] < 0x80:
            return pos
    return len(data)


def _host(name: str) -> str | None:
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _rank(path: str) -> tuple[int, str]:
    name = os.path.basename(path)
    for rank, suffix in enumerate((*_SUFFIXES, *_PERFETTO)):
        if name.endswith(suffix):
            return rank, name
    return len(_SUFFIXES) + len(_PERFETTO), name


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder or ".")
    except OSError:
        return []
