"""Stream the `traceEvents` array of a (possibly huge, gzipped, truncated) Chrome-trace JSON file.

The file is never held whole: compressed bytes are read in blocks, decompressed, and the event
array is cut at event boundaries into batches that msgspec decodes straight into typed structs.
A cut is only a candidate (a `}` followed by `,` or `]`); the batch decodes only if the cut really
was between two top-level events, so a wrong guess (a `}` inside a string or a nested list) is
detected by the decoder and an earlier candidate is tried.

Damage is repaired where it can be and reported (`Repairs`): invalid UTF-8 is replaced before a
batch is decoded, control characters when it does not decode otherwise; a file cut short (the
process died while writing) yields every complete event before the cut. What a failed decode
means is decided by what decodes next, never by the decoder's message, whose text (and even the
exception raised for invalid UTF-8) differs between msgspec releases.
"""

from __future__ import annotations

import os
import re
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from queue import Full, Queue
from typing import Any

import msgspec

from gpuscope.errors import ReaderError

BLOCK = 4 << 20  # compressed bytes read at a time
INFLATE_CHUNK = 4 << 20  # decompressed bytes handed on at a time
# decompressed bytes decoded at a time: 4 MB decodes faster than 16 MB (x10 trace: 1.04 vs
# 1.22-1.41 s in one process, 0.84 vs 1.02 s in worker processes) and holds less
BATCH = 4 << 20
MAX_EVENT = 64 << 20  # an event array with no event boundary in this many bytes is refused
_MAX_HEADER = 256 << 20
_WS = b" \t\r\n"
# the end of the event array: its last `}`, the `]`, then the next key or the document's end
# (the keys after the array hold `}, {` and `}]` too, which must not end a span)
_ARRAY_END = re.compile(rb'\}\s*\]\s*(?:,\s*"|\})')
_CONTROL_TO_SPACE = bytes(range(256)).maketrans(bytes(range(32)), b" " * 32)
# control characters that are never JSON whitespace: damage wherever they stand
_DAMAGE = bytes(c for c in range(32) if c not in b"\t\n\r")
_DAMAGE_TO_SPACE = bytes(range(256)).maketrans(_DAMAGE, b" " * len(_DAMAGE))
_REPLACEMENT = "\ufffd".encode()
_ARRAY_END_TRIES = 64  # places where the event array may close, tried in one span

Progress = Callable[[int, int], None]
TAIL_CUT = (
    "truncated file: it ends after the event array, before the document closes (the writer "
    "died?); every event was read, the keys after the events may be missing"
)


@dataclass(frozen=True)
class Repairs:
    """Damaged text replaced so that the file could be read: invalid UTF-8 sequences (by
    U+FFFD), control characters other than tab, line feed and carriage return (by spaces), and
    the batches whose tabs or line breaks inside strings had to become spaces."""

    invalid_utf8: int = 0
    control: int = 0
    breaks: int = 0

    def __add__(self, other: Repairs) -> Repairs:
        return Repairs(
            self.invalid_utf8 + other.invalid_utf8,
            self.control + other.control,
            self.breaks + other.breaks,
        )

    def __bool__(self) -> bool:
        return bool(self.invalid_utf8 or self.control or self.breaks)

    def warning(self) -> str:
        """One line naming what was replaced ("" when nothing was)."""
        said = []
        if self.invalid_utf8:
            said.append(f"{_count(self.invalid_utf8, 'invalid UTF-8 sequence')} replaced by U+FFFD")
        if self.control:
            said.append(f"{_count(self.control, 'control character')} replaced by spaces")
        if self.breaks:
            said.append("tabs or line breaks inside strings replaced by spaces")
        if not said:
            return ""
        return f"damaged text in the file: {'; '.join(said)}; every event was read"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


NO_REPAIRS = Repairs()


@dataclass
class StreamReport:
    """What the stream saw besides the events: top-level keys and any repair it made."""

    header: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False
    tail_cut: bool = False  # every event read, but the document (or gzip stream) ends early
    dropped_bytes: int = 0
    total_bytes: int = 0
    repairs: Repairs = NO_REPAIRS


def _raw_blocks(path: str, progress: Progress | None) -> Iterator[tuple[bytes, bool]]:
    """Decompressed blocks of the file; the flag is True when a gzip stream ended early."""
    total = os.path.getsize(path)
    with open(path, "rb") as handle:
        magic = handle.read(2)
        handle.seek(0)
        inflater = zlib.decompressobj(wbits=31) if magic == b"\x1f\x8b" else None
        done = 0
        while block := handle.read(BLOCK):
            done += len(block)
            if progress is not None:
                progress(done, total)
            if inflater is None:
                yield block, False
                continue
            yield from _inflate(inflater, block)
            while inflater.eof and inflater.unused_data:  # concatenated gzip members
                rest = inflater.unused_data
                inflater = zlib.decompressobj(wbits=31)
                yield from _inflate(inflater, rest)
        if inflater is not None and not inflater.eof:
            yield inflater.flush(), True


def _inflate(inflater: Any, data: bytes) -> Iterator[tuple[bytes, bool]]:
    """The inflated bytes of `data`, INFLATE_CHUNK at a time (a 4 MB compressed block of trace
    JSON inflates to ~40 MB)."""
    while data:
        try:
            out = inflater.decompress(data, INFLATE_CHUNK)
        except zlib.error as error:
            raise ReaderError(f"corrupt gzip data ({error})") from None
        data = inflater.unconsumed_tail
        if out:
            yield out, False
        elif not data:
            return


def _blocks(path: str, progress: Progress | None) -> Iterator[tuple[bytes, bool]]:
    """`_raw_blocks`, inflated ahead by a thread for a gzip file: zlib inflates without the GIL,
    so one block is inflated while the caller decodes the one before (x10 trace as .json.gz:
    see docs/performance.md)."""
    try:
        with open(path, "rb") as handle:
            gzipped = handle.read(2) == b"\x1f\x8b"
    except OSError:
        gzipped = False
    blocks = _raw_blocks(path, progress)
    return _ahead(blocks) if gzipped else blocks


_END = object()


def _ahead(blocks: Iterator[tuple[bytes, bool]], depth: int = 4) -> Iterator[tuple[bytes, bool]]:
    """The items of `blocks`, produced by a background thread up to `depth` ahead; its
    exception is raised here; closing this generator stops the thread."""
    queue: Queue[Any] = Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                queue.put(item, timeout=0.05)
                return True
            except Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in blocks:
                if not put(item):
                    return
            put(_END)
        except BaseException as error:  # handed to the reading thread, raised there
            put(_Failure(error))
        finally:
            blocks.close()  # type: ignore[attr-defined]

    thread = threading.Thread(target=produce, name="gpuscope-inflate", daemon=True)
    thread.start()
    try:
        while (item := queue.get()) is not _END:
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join()


@dataclass
class _Failure:
    error: BaseException


def _skip_ws(buf: bytes, pos: int) -> int:
    size = len(buf)
    while pos < size and buf[pos] in _WS:
        pos += 1
    return pos


def _find_array_start(buf: bytes) -> tuple[int, bytes] | None:
    """Position just inside the events array, and the header text before its key."""
    first = _skip_ws(buf, 0)
    if first < len(buf) and buf[first] == ord("["):
        return first + 1, b""
    key = buf.find(b'"traceEvents"')
    if key < 0:
        return None
    colon = _skip_ws(buf, key + len(b'"traceEvents"'))
    bracket = _skip_ws(buf, colon + 1)
    if colon >= len(buf) or bracket >= len(buf):
        return None
    if buf[colon] != ord(":") or buf[bracket] != ord("["):
        raise ReaderError('"traceEvents" is not followed by a JSON array')
    return bracket + 1, buf[:key]


class EventStream:
    """Iterate decoded event batches: `for batch in EventStream(path, decode): ...`.

    `decode(text)` turns the bytes (or bytearray) of a JSON array of events into a list; it raises
    msgspec.DecodeError / msgspec.ValidationError / UnicodeDecodeError on bad text.
    """

    def __init__(
        self,
        path: str,
        decode: Callable[[bytes | bytearray], list[Any]],
        progress: Progress | None = None,
    ) -> None:
        self.path = path
        self.decode = decode
        self.progress = progress
        self.report = StreamReport()

    def __iter__(self) -> Iterator[list[Any]]:
        for _, batch in self.walk(cut=False):
            yield batch

    def walk(self, cut: bool) -> Iterator[tuple[str, Any]]:
        """("events", a decoded batch) in file order; with `cut`, every batch but what follows
        the last whole event comes instead as ("span", its bytes): whole events cut at the last
        candidate boundary, not decoded (see `decode_span`; the caller decodes them, e.g. in
        another process, and must read the file again without `cut` if a span does not
        decode). The end — a cut-off event, the keys after the array — is read here."""
        buf = b""
        pending: list[bytes] = []  # blocks not yet joined into buf (joined once per batch)
        pending_size = 0
        header: bytes | None = None
        truncated = False
        for block, cut_short in _blocks(self.path, self.progress):
            truncated |= cut_short
            self.report.total_bytes += len(block)
            pending.append(block)
            pending_size += len(block)
            if header is None:
                buf = b"".join([buf, *pending])
                pending, pending_size = [], 0
                found = _find_array_start(buf)
                if found is None:
                    if len(buf) > _MAX_HEADER:
                        raise ReaderError("no traceEvents array in the first 256 MB")
                    continue
                start, header = found
                self._check_header_start(buf)
                buf = buf[start:]
            if len(buf) + pending_size >= BATCH:
                buf = b"".join([buf, *pending])
                pending, pending_size = [], 0
                if cut:
                    span, buf = _cut(buf)
                    if span:
                        yield "span", span
                    continue
                batch, buf = self._split(buf, final=False)
                if batch:
                    yield "events", batch
        if header is None:
            self._raise_no_events(b"".join([buf, *pending]), truncated)
            return
        buf = b"".join([buf, *pending])
        self._add_header(header)
        if cut:  # the whole events left go out as a span too; the end is read below
            span, buf = _cut(buf)
            if span:
                yield "span", span
        while buf:
            size_before = len(buf)
            batch, buf = self._split(buf, final=True)
            if batch:
                yield "events", batch
            if len(buf) == size_before or not batch:
                break
        self._finish(buf, is_object=bool(header), gzip_cut=truncated)

    def _check_header_start(self, buf: bytes) -> None:
        first = _skip_ws(buf, 0)
        if first >= len(buf) or buf[first] not in b"{[":
            raise ReaderError("expected a JSON object with a traceEvents array")

    def _raise_no_events(self, buf: bytes, truncated: bool) -> None:
        text = buf.lstrip()
        if not text:
            raise ReaderError("the file is empty; expected a Chrome/Kineto trace JSON")
        if text[:1] not in b"{[":
            raise ReaderError("not JSON; expected a Chrome/Kineto trace (.json or .json.gz)")
        if truncated:
            raise ReaderError("the file ends before its traceEvents array starts (truncated)")
        raise ReaderError("JSON without a traceEvents array; expected a Chrome/Kineto trace")

    def _split(self, buf: bytes, final: bool) -> tuple[list[Any], bytes]:
        """Decode the longest prefix of whole events; return (events, the rest)."""
        start = _skip_ws(buf, 0)
        if start < len(buf) and buf[start] == ord(","):
            start = _skip_ws(buf, start + 1)
        if start >= len(buf) or buf[start] == ord("]"):
            return [], buf[start:]
        hi = len(buf)
        for _ in range(64):
            cut = _last_boundary(buf, start, hi, final)
            if cut < 0:
                break
            decoded = self._decode_span(buf, start, cut + 1)
            if decoded is not None:
                events, end = decoded
                return events, buf[end:]
            hi = cut
        if not final and len(buf) < MAX_EVENT:
            return [], buf  # no boundary yet: wait for more bytes
        if final:
            return [], buf[start:]
        raise ReaderError(f"could not split the event array near byte {self.report.total_bytes}")

    def _decode_span(self, buf: bytes, start: int, end: int) -> tuple[list[Any], int] | None:
        """Decode buf[start:end] as events; (events, where they end in buf) or None."""
        decoded = decode_span(self.decode, buf, start, end)
        if decoded is None:
            return None
        events, stop, repairs = decoded
        self.report.repairs += repairs
        return events, stop

    def _add_header(self, text: bytes) -> None:
        header, repairs = _decode_header(text)
        self.report.header.update(header)
        self.report.repairs += repairs

    def _finish(self, rest: bytes, is_object: bool, gzip_cut: bool) -> None:
        finish(self.report, rest, is_object, gzip_cut)


def finish(report: StreamReport, rest: bytes, is_object: bool, gzip_cut: bool = False) -> None:
    """Record what follows the last whole event (`rest`): the keys after the event array, a
    document cut short, or a file truncated inside the array."""
    tail = rest.lstrip()
    if tail.startswith(b"]"):
        trailer = tail[1:].lstrip()
        if trailer.startswith(b","):
            header, repairs = _decode_header(b"{" + trailer[1:])
            report.header.update(header)
            report.repairs += repairs
        closed = _closes(trailer) if is_object else True
        report.tail_cut = gzip_cut or not closed
        return
    report.truncated = True
    report.dropped_bytes = len(rest)


def new_report(header: bytes, total_bytes: int) -> StreamReport:
    """The report of a file read piece by piece, from the header text before the event array."""
    found, repairs = _decode_header(header)
    return StreamReport(header=found, total_bytes=total_bytes, repairs=repairs)


def array_start(path: str) -> tuple[int, bytes] | None:
    """Where the event array of an uncompressed file starts (the offset just inside its `[`) and
    the header text before its key; None when it is not in the first 256 MB or the file is not a
    JSON object or array (`EventStream` says what is wrong)."""
    buf = b""
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            buf += block
            try:
                found = _find_array_start(buf)
            except ReaderError:
                return None
            if found is not None:
                first = _skip_ws(buf, 0)
                return (found[0], found[1]) if buf[first : first + 1] in (b"{", b"[") else None
            if len(buf) > _MAX_HEADER:
                return None
    return None


def piece(buf: bytes, lo: int, hi: int, first: bool, at_eof: bool) -> tuple[int, int]:
    """Where the whole events of one piece of the event array lie in `buf`, the file's bytes from
    the piece's start `lo` on: (start, end) such that buf[start:end] are events separated by
    commas, if the cuts are right (the decoder confirms them). A piece runs from the first
    candidate event boundary at or after `lo` (the array's start for the `first` piece) to the
    first at or after `hi` (the end of the file when there is none), so pieces cut at
    neighbouring offsets meet without overlap whichever process reads them; (0, 0) when both
    are the same boundary (an event longer than the piece). (-1, -1): no boundary in buf (more
    bytes decide, unless `at_eof`)."""
    boundary = -1 if first else next_boundary(buf, 0, at_eof)
    end = next_boundary(buf, hi - lo, at_eof)
    if (boundary < 0 and not first) or (end < 0 and not at_eof):
        return -1, -1
    if end >= 0 and end == boundary:
        return 0, 0
    start = _skip_ws(buf, boundary + 1)
    if start < len(buf) and buf[start] == ord(","):
        start = _skip_ws(buf, start + 1)
    return start, (end + 1 if end >= 0 else len(buf))


def closing_bracket(buf: bytes, pos: int) -> int:
    """Index of the `]` that follows `pos` past whitespace; -1 when something else follows."""
    after = _skip_ws(buf, pos)
    return after if buf[after : after + 1] == b"]" else -1


def next_boundary(buf: bytes, lo: int, at_eof: bool) -> int:
    """Index of the first `}` at or after `lo` that may end a top-level event, by the rule of
    `_last_boundary`; -1 when there is none, or when the bytes after one run to the end of buf and
    `at_eof` is False (more bytes decide)."""
    size = len(buf)
    pos = lo
    while (pos := buf.find(b"}", pos)) >= 0:
        after = _skip_ws(buf, pos + 1)
        if after >= size:
            return pos if at_eof else -1
        if buf[after] == ord("]"):
            return pos
        if buf[after] == ord(","):
            following = _skip_ws(buf, after + 1)
            if following >= size:
                return pos if at_eof else -1
            if buf[following] == ord("{"):
                return pos
        pos += 1
    return -1


def _cut(buf: bytes) -> tuple[bytes, bytes]:
    """(whole events up to the last candidate boundary, the rest); (b"", buf) when there is
    none yet or the array has ended (the end is left to `EventStream._split`)."""
    start = _skip_ws(buf, 0)
    if start < len(buf) and buf[start] == ord(","):
        start = _skip_ws(buf, start + 1)
    if start >= len(buf) or buf[start] == ord("]"):
        return b"", buf
    end = _last_boundary(buf, start, len(buf), final=False)
    if end < 0:
        if len(buf) >= MAX_EVENT:
            raise ReaderError("could not split the event array (no event boundary in 64 MB)")
        return b"", buf
    closed = _ARRAY_END.search(buf, start)
    if closed and closed.start() <= end:  # the array ends in the span: stop at its last event
        end = closed.start()
    return buf[start : end + 1], buf[end + 1 :]


def decode_span(
    decode: Callable[[bytes | bytearray], list[Any]],
    buf: bytes,
    start: int,
    end: int,
    nested: bool = False,
) -> tuple[list[Any], int, Repairs] | None:
    """Decode buf[start:end], whole events separated by commas: (events, where they end in buf,
    what was repaired), or None when the cut was not between two top-level events (or the text
    cannot be repaired).

    Invalid UTF-8 is replaced before decoding (msgspec releases differ in which strings they
    check and in what they raise). When the text does not decode, what decodes instead tells
    why: the events up to a `]` that closes the event array inside the span (the keys after the
    array follow), the text with its control characters replaced (damage), or nothing (a cut
    that was not between events: the caller tries an earlier one)."""
    joined = bytearray(b"[")
    joined += memoryview(buf)[start:end]
    joined += b"]"
    text, repairs = valid_utf8(joined)
    try:
        return decode(text), end, repairs
    except RecursionError:  # nested deeper than msgspec goes: not events to keep
        return None
    except (msgspec.DecodeError, UnicodeDecodeError):
        pass  # decided below by what decodes
    if not nested:
        closed = _up_to_array_end(decode, buf, start, end)
        if closed is not None:
            return closed
    return _decode_without_controls(decode, text, end, repairs)


def _up_to_array_end(
    decode: Callable[[bytes | bytearray], list[Any]], buf: bytes, start: int, end: int
) -> tuple[list[Any], int, Repairs] | None:
    """The events of buf[start:end] before the `]` that closes the event array in it: (events,
    the offset of that `]`, repairs); None when the array does not close there. Each place
    where it may close (`_ARRAY_END`) is tried, first first: only the real one decodes (one
    inside an event leaves an object open, one after the array holds its `]`)."""
    for tried, match in enumerate(_ARRAY_END.finditer(buf, start, end)):
        if tried == _ARRAY_END_TRIES:
            break
        brace = match.start()
        found = decode_span(decode, buf, start, brace + 1, nested=True)
        if found is not None:
            events, _, repairs = found
            return events, _skip_ws(buf, brace + 1), repairs
    return None


def _decode_without_controls(
    decode: Callable[[bytes | bytearray], list[Any]],
    text: bytes | bytearray,
    end: int,
    repairs: Repairs,
) -> tuple[list[Any], int, Repairs] | None:
    """Decode `text` with its control characters replaced by spaces: first those that are never
    JSON whitespace, then tabs and line breaks too (raw inside a string they are damage as
    well); None when neither decodes."""
    control = len(text) - len(text.translate(None, _DAMAGE))
    tries = []
    if control:
        text = text.translate(_DAMAGE_TO_SPACE)
        tries.append((text, repairs + Repairs(control=control)))
    spaced = text.translate(_CONTROL_TO_SPACE)
    if spaced != text:
        tries.append((spaced, repairs + Repairs(control=control, breaks=1)))
    for attempt, made in tries:
        try:
            return decode(attempt), end, made
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            continue
    return None


def valid_utf8(text: bytes | bytearray) -> tuple[bytes | bytearray, Repairs]:
    """`text` with every invalid UTF-8 sequence replaced by U+FFFD, and how many were (the text
    itself, unchanged, when it is valid: ASCII is told at once)."""
    if text.isascii():
        return text, NO_REPAIRS
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        fixed = text.decode("utf-8", "replace")
        replaced = fixed.count("\ufffd") - text.count(_REPLACEMENT)  # those there before stay
        return fixed.encode("utf-8"), Repairs(invalid_utf8=replaced)
    return text, NO_REPAIRS


def _last_boundary(buf: bytes, lo: int, hi: int, final: bool) -> int:
    """Index of the last `}` in buf[lo:hi] that may end a top-level event.

    It must be followed by `]`, or by `,` and the `{` of the next event (so that `}, "key"` inside
    an event is skipped); at the end of the file, a `}` that ends the buffer is a candidate too.
    The decoder confirms every candidate.
    """
    size = len(buf)
    pos = hi
    while True:
        pos = buf.rfind(b"}", lo, pos)
        if pos < 0:
            return -1
        after = _skip_ws(buf, pos + 1)
        if after >= size:
            if final:
                return pos
            continue
        if buf[after] == ord("]"):
            return pos
        if buf[after] == ord(","):
            following = _skip_ws(buf, after + 1)
            if buf[following : following + 1] == b"{" or (following >= size and final):
                return pos


def _closes(trailer: bytes) -> bool:
    """Whether the text after the event array closes the document: `}` or `, "k": v, ... }`."""
    body = valid_utf8(trailer.strip())[0].translate(_CONTROL_TO_SPACE)
    if body == b"}":
        return True
    if not body.startswith(b","):
        return False
    try:
        return isinstance(msgspec.json.decode(b"{" + body[1:]), dict)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False


def _decode_header(text: bytes) -> tuple[dict[str, Any], Repairs]:
    """Top-level keys around the event array, and what was repaired in them; tolerant of a
    header cut short or damaged.

    The text before `"traceEvents"` is an object left open (`{"a": 1, "b": {...},`), the text
    after the array is one already closed (`{"c": 2}`): both are tried with and without a `}`.
    """
    body, repairs = valid_utf8(text.rstrip())
    control = len(body) - len(body.translate(None, _DAMAGE))
    body = body.translate(_CONTROL_TO_SPACE)
    if body.endswith(b","):
        body = body[:-1]
    for candidate in (body + b"}", body):
        try:
            value = msgspec.json.decode(candidate)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value, repairs + Repairs(control=control)
    return {}, NO_REPAIRS
