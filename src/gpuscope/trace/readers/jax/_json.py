"""jax.profiler's trace-viewer JSON (`<host>.trace.json.gz`, `perfetto_trace.json.gz`), streamed
in batches like every Chrome-trace JSON; the events are laid out by `_build`."""

from __future__ import annotations

from typing import Any

import msgspec

from gpuscope.errors import ReaderError
from gpuscope.trace._jsonstream import TAIL_CUT, EventStream, Progress
from gpuscope.trace.model import Trace
from gpuscope.trace.readers.jax import _build


class Event(msgspec.Struct, gc=False):
    """One trace-viewer event; every field as written (checked when laid out)."""

    ph: Any = ""
    name: Any = ""
    pid: Any = -1
    tid: Any = -1
    ts: Any = 0
    dur: Any = 0
    args: Any = None


_decode = msgspec.json.Decoder(list[Event]).decode


def _decode_lenient(text: bytes | bytearray) -> list[Any]:
    try:
        return _decode(text)
    except msgspec.ValidationError:  # an event that is not an object: leave it out
        values = msgspec.json.decode(text)
        return [msgspec.convert(v, Event) for v in values if isinstance(v, dict)]


def read(path: str, progress: Progress | None = None) -> Trace:
    stream = EventStream(path, _decode_lenient, progress)
    events: list[Any] = []
    for batch in stream:
        events += batch
    report = stream.report
    warnings = []
    if report.truncated:
        warnings.append(f"truncated file: it ends in the middle of the event array (the writer "
                        f"died?); read the {len(events):,} complete events, dropped the last "
                        f"{report.dropped_bytes:,} bytes")  # fmt: skip
    if report.tail_cut:
        warnings.append(TAIL_CUT)
    if report.repairs:
        warnings.append(report.repairs.warning())
    if not events:
        raise ReaderError("the traceEvents array holds no events")
    cut = report.truncated or report.tail_cut
    source = _build.Source(path, "trace-json", truncated=cut, warnings=tuple(warnings))
    return _build.build(events, source)


def read_text(text: bytes, source: _build.Source) -> Trace:
    """The JSON xprof made of an XSpace, held in memory."""
    try:
        document = msgspec.json.decode(text, type=_Document)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise ReaderError(f"xprof's trace-viewer JSON does not decode ({error})") from None
    if not document.traceEvents:
        raise ReaderError("xprof found no events in this XSpace")
    return _build.build(document.traceEvents, source)


class _Document(msgspec.Struct):
    traceEvents: list[Event] = []  # the JSON's key
