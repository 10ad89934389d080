"""The streaming splitter: batch boundaries, damage and truncation, on small synthetic files.

BATCH/BLOCK are shrunk so that every file is cut into many batches, which is where a splitter
goes wrong (a `}` inside a string, nested lists of objects, keys after the event array).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuscope import _read_workers
from gpuscope.errors import ReaderError
from gpuscope.trace import _jsonstream
from gpuscope.trace.readers.kineto import KinetoReader
from gpuscope.trace.readers.kineto import reader as kineto


@pytest.fixture(autouse=True)
def tiny_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_jsonstream, "BATCH", 300)
    monkeypatch.setattr(_jsonstream, "BLOCK", 97)


def kernel(i: int, name: str = "k", ts: float | None = None) -> dict[str, object]:
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": 7,
        "ts": 1000.0 + 10 * i if ts is None else ts,
        "dur": 1.5,
        "args": {"device": 0, "stream": 7, "correlation": i, "External id": i},
    }


def write(path: Path, doc: object, *, indent: int | None = None) -> str:
    text = json.dumps(doc, indent=indent)
    path.write_text(text)
    return str(path)


def read(path: str) -> tuple[int, int, tuple[str, ...]]:
    trace = KinetoReader().read(path)
    return len(trace.gpu), int(trace.gpu.dur.sum()), trace.meta.warnings


@pytest.mark.parametrize("indent", [None, 2])
def test_many_batches_keep_every_event(tmp_path: Path, indent: int | None) -> None:
    events = [kernel(i, name=f"void k<{{lambda()#{i}}}, {{x}}>(int)") for i in range(200)]
    path = write(tmp_path / "t.json", {"schemaVersion": 1, "traceEvents": events}, indent=indent)
    count, total, warnings = read(path)
    assert (count, total, warnings) == (200, 200 * 1500, ())


def test_nested_objects_in_args_and_keys_after_the_array(tmp_path: Path) -> None:
    events = [kernel(i) for i in range(50)]
    for e in events:
        e["args"]["nested"] = [{"a": 1}, {"b": [{"c": "}, {"}]}]  # type: ignore[index]
    doc = {"traceEvents": events, "deviceProperties": [{"id": 0, "name": "H"}], "traceName": "x"}
    path = write(tmp_path / "t.json", doc)
    trace = KinetoReader().read(path)
    assert len(trace.gpu) == 50
    assert trace.meta.devices[0].name == "H"


def test_bare_event_array(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", [kernel(i) for i in range(30)])
    assert read(path)[0] == 30


def test_truncated_file_keeps_complete_events(tmp_path: Path) -> None:
    text = json.dumps({"traceEvents": [kernel(i) for i in range(100)]})
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) * 6 // 10])
    count, _, warnings = read(str(cut))
    assert 50 <= count < 100
    assert warnings and warnings[0].startswith("truncated")


def test_truncated_gzip_stream(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps({"traceEvents": [kernel(i) for i in range(400)]}).encode())
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    count, _, warnings = read(str(cut))
    assert 0 < count < 400
    assert warnings[0].startswith("truncated")


# junk written into one kernel name -> (the name read, the warning that names the repair)
DAMAGE = {
    "invalid UTF-8": (
        b"k\xff7\xc3(",
        "k\ufffd7\ufffd(",
        "2 invalid UTF-8 sequences replaced by U+FFFD",
    ),
    "a surrogate": (b"k\xed\xa0\x807", "k\ufffd\ufffd\ufffd7", "3 invalid UTF-8 sequences"),
    "control characters": (b"k\x01\x1b7", "k  7", "2 control characters replaced by spaces"),
    "a tab": (b"k\t7", "k 7", "tabs or line breaks inside strings replaced by spaces"),
    "both": (b"k\x017\xff", "k 7\ufffd", "1 invalid UTF-8 sequence replaced by U+FFFD; 1 control"),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
@pytest.mark.parametrize("indent", [None, 2])
def test_damaged_text_is_replaced_and_named(tmp_path: Path, kind: str, indent: int | None) -> None:
    junk, name, said = DAMAGE[kind]
    doc = {"traceEvents": [kernel(i, name=f"k{i}") for i in range(40)], "traceName": "x"}
    text = json.dumps(doc, indent=indent).encode()
    path = tmp_path / "bad.json"
    path.write_bytes(text.replace(b'"k7"', b'"' + junk + b'"'))
    trace = KinetoReader().read(str(path))
    assert len(trace.gpu) == 40 and trace.meta.extra["traceName"] == "x"
    assert name in trace.names and "k7" not in trace.names
    (warning,) = trace.meta.warnings
    assert said in warning and not trace.meta.truncated, warning


def test_a_replacement_character_already_there_is_not_counted(tmp_path: Path) -> None:
    events = [kernel(0, name="ok \ufffd"), kernel(1, name="k1")]
    text = json.dumps({"traceEvents": events}, ensure_ascii=False).encode()
    path = tmp_path / "t.json"
    path.write_bytes(text.replace(b'"k1"', b'"k\xff1"'))
    trace = KinetoReader().read(str(path))
    assert trace.names == ("k\ufffd1", "ok \ufffd")
    assert trace.meta.warnings[0].startswith("damaged text in the file: 1 invalid UTF-8 sequence ")


def test_damage_in_the_keys_around_the_events_is_repaired(tmp_path: Path) -> None:
    devices = [{"id": 0, "name": "GPU \x00A\x00"}]
    text = json.dumps({"deviceProperties": devices, "traceEvents": [kernel(0)], "traceName": "QQ"})
    path = tmp_path / "t.json"
    path.write_bytes(text.encode().replace(b"\\u0000", b"\xff").replace(b"QQ", b"Q\x01Q"))
    trace = KinetoReader().read(str(path))
    assert [d.name for d in trace.meta.devices] == ["GPU \ufffdA\ufffd"]
    assert trace.meta.extra["traceName"] == "Q Q"
    assert "2 invalid UTF-8 sequences replaced by U+FFFD; 1 control" in trace.meta.warnings[0]


def test_the_stream_never_reads_the_decoders_message(tmp_path: Path) -> None:
    """Every DecodeError here says the same thing and invalid UTF-8 raises one too (as msgspec
    0.23 does, where 0.18 raised UnicodeDecodeError): the events, the keys after them, repairs
    and truncation must come out the same as with the real decoder."""
    import msgspec

    real = msgspec.json.Decoder(list[dict[str, Any]]).decode

    def mute(text: bytes | bytearray) -> list[Any]:
        try:
            bytes(text).decode("utf-8")
            return real(text)
        except (msgspec.DecodeError, UnicodeDecodeError):
            raise msgspec.DecodeError("something went wrong") from None

    events = [kernel(i, name=f"n{i}}}, {{v") for i in range(60)]  # `}, {` inside strings too
    for e in events[::7]:
        e["args"]["nested"] = [{"a": 1}, {"b": [{"c": "}, {"}]}]  # type: ignore[index]
    doc = {"traceEvents": events, "deviceProperties": [{"id": 0}, {"id": 1}], "traceName": "x"}
    text = json.dumps(doc).encode().replace(b'"n3}', b'"\xff\x01n3}', 1)
    for cut in (len(text), len(text) * 7 // 10):
        path = tmp_path / "t.json"
        path.write_bytes(text[:cut])
        stream = _jsonstream.EventStream(str(path), mute)
        seen = [e["name"] for batch in stream for e in batch]
        report = stream.report
        assert report.repairs == _jsonstream.Repairs(invalid_utf8=1, control=1)
        if cut == len(text):
            assert len(seen) == 60 and seen[3] == "\ufffd n3}, {v"
            assert report.header["traceName"] == "x" and not report.truncated
        else:
            assert 30 < len(seen) < 60 and report.truncated


def test_epoch_microseconds_keep_nanoseconds(tmp_path: Path) -> None:
    text = (
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, '
        '"ts": 1712195495519689.047, "dur": 1.001, "args": {"device": 0}}]}'
    )
    path = tmp_path / "epoch.json"
    path.write_text(text)
    trace = KinetoReader().read(str(path))
    assert int(trace.gpu.start[0]) == 1712195495519689047
    assert int(trace.gpu.dur[0]) == 1001


def test_wrong_types_and_huge_integers_are_read_leniently(tmp_path: Path) -> None:
    text = (
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, '
        '"ts": 10.5, "dur": 2, "args": {"device": 0, "correlation": 123456789012345678901234, '
        '"stream": "0x7", "bytes": "64"}}]}'
    )
    path = tmp_path / "loose.json"
    path.write_text(text)
    trace = KinetoReader().read(str(path))
    assert int(trace.gpu.start[0]) == 10_500
    assert int(trace.gpu.correlation[0]) == -1
    assert int(trace.gpu.stream[0]) == 7


def launched(i: int, grid: object, block: object, **more: object) -> dict[str, object]:
    event = kernel(i)
    event["args"] = {**event["args"], "grid": grid, "block": block,  # type: ignore[dict-item]
                     "registers per thread": 32 + i, "shared memory": 1024 * i, **more}  # fmt: skip
    return event


@pytest.mark.parametrize("damaged", [False, True])
def test_launch_params_keep_only_whole_dimensions_that_fit(tmp_path: Path, damaged: bool) -> None:
    events = [
        launched(0, [4, 2, 1], [128, 1, 1]),
        launched(1, [1, 1], [64, 1, 1]),  # two dimensions: not a launch shape
        launched(2, [-1, 1, 1], [64, 1, 1]),  # negative
        launched(3, [2**40, 1, 1], [2**31, 1, 1]),  # block past int32
        launched(4, [8, 1, 1], None),  # no block
        kernel(5),  # no grid either
        launched(6, [2**40, 3, 1], [256, 1, 1]),  # a big grid is fine
    ]
    if damaged:  # a value past int64 sends the batch through the lenient decoder
        events.append(launched(7, [2**64, 1, 1], [32, 1, 1]))
    for batch in (300, 1 << 20):  # many batches, and one
        _jsonstream.BATCH = batch
        trace = KinetoReader().read(write(tmp_path / "launch.json", {"traceEvents": events}))
        lp = trace.launch_params
        assert lp.row.tolist() == [0, 6]
        assert (lp.grid_x.tolist(), lp.grid_y.tolist(), lp.block_x.tolist()) == (
            [4, 2**40], [2, 3], [128, 256],
        )  # fmt: skip
        assert (lp.registers.tolist(), lp.shared_mem.tolist()) == ([32, 38], [0, 6144])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty"),
        (b'{"a": 1}', "traceEvents"),
        (b"\x00\x01garbage", "not JSON"),
        (b'{"traceEvents": [', "no events"),
    ],
)
def test_not_a_trace(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(ReaderError, match=expected):
        KinetoReader().read(str(path))


# -- decoding in worker processes ---------------------------------------------------------------


# what the worker processes gave back (see read_with): spans the stream cut and sent, pieces
# the workers read themselves
SPANS = {"merged": 0, "wrong": 0, "pieces": 0, "not_plain": 0}
RESULT, PIECE_RESULT = kineto._result, kineto._piece_result


def read_with(path: str, workers: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GPUSCOPE_READ_WORKERS", str(workers))
    monkeypatch.setattr(_read_workers, "PARALLEL_BYTES", 0)
    result, piece_result = RESULT, PIECE_RESULT

    def counted(future: Any) -> Any:
        try:
            partial = result(future)
        except kineto._WrongCut:
            SPANS["wrong"] += 1
            raise
        SPANS["merged"] += 1
        return partial

    def counted_piece(future: Any) -> Any:
        try:
            found = piece_result(future)
        except kineto._NotPlain:
            SPANS["not_plain"] += 1
            raise
        SPANS["pieces"] += 1
        return found

    monkeypatch.setattr(kineto, "_result", counted)
    monkeypatch.setattr(kineto, "_piece_result", counted_piece)
    SPANS.update(merged=0, wrong=0, pieces=0, not_plain=0)
    return KinetoReader().read(path)


def same_trace(a: Any, b: Any) -> None:
    assert a.names == b.names and a.meta == b.meta
    for table in ("gpu", "host", "ops", "syncs", "flows", "launch_params", "collectives",
                  "memory"):  # fmt: skip
        x, y = getattr(a, table), getattr(b, table)
        for column in dataclasses.fields(x):
            u, v = getattr(x, column.name), getattr(y, column.name)
            assert u.dtype == v.dtype and np.array_equal(u, v), (table, column.name)


def op(i: int, name: str) -> dict[str, object]:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 0, "tid": 1, "ts": 999.0 + 10 * i,
            "dur": 5, "args": {"External id": i, "Input Dims": [[i % 3, 4], []],
                               "Input type": ["float", ""], "Sequence number": i}}  # fmt: skip


def allocation(i: int) -> dict[str, object]:
    """An allocator event (profile_memory=True); every other one frees the one before."""
    size = 512 * (i // 2 + 1) * (1 if i % 2 == 0 else -1)
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 0,
            "tid": 1, "ts": 1001.5 + 10 * i, "args": {
                "Total Reserved": 2 << 20, "Total Allocated": 512 * (i % 2 == 0), "Bytes": size,
                "Device Id": 0, "Addr": 4096 * (i // 2), "Ev Idx": i}}  # fmt: skip


def mixed_events(count: int) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    for i in range(count):
        events += [op(i, f"aten::op{i % 7}"), launched(i, [i + 1, 1, 1], [128, 1, 1])]
        events += [allocation(i)] if i % 3 == 0 else []
    return events


def test_worker_processes_read_the_same_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # keys after the array hold `}, {` and `}]`, which must not end a span
    devices = [{"id": 0, "name": "GPU A", "numSms": 132}, {"id": 1, "name": "GPU B"}]
    doc = {"traceEvents": mixed_events(60), "deviceProperties": devices, "traceName": "x"}
    path = write(tmp_path / "mixed.json", doc)
    one = read_with(path, 1, monkeypatch)
    two = read_with(path, 2, monkeypatch)
    # many pieces, each read by a worker from the file; no span cut and sent by this process
    assert SPANS["pieces"] > 10 and SPANS["merged"] == SPANS["not_plain"] == 0
    assert len(one.gpu) == 60 and len(one.ops) == 60 and len(one.launch_params) == 60
    assert len(one.memory) == 20 and "memory" in one.meta.provides
    assert [d.name for d in two.meta.devices] == ["GPU A"] and two.meta.extra["traceName"] == "x"
    same_trace(one, two)
    # as a stream cut here (what a gzip file gets): the same trace
    monkeypatch.setattr(kineto, "_read_pieces", not_plain)
    assert SPANS["merged"] == 0 and read_with(path, 1, monkeypatch) is not None
    three = read_with(path, 2, monkeypatch)
    assert SPANS["merged"] > 10 and SPANS["wrong"] == 0 and SPANS["pieces"] == 0
    same_trace(one, three)


def not_plain(*args: Any) -> Any:
    raise kineto._NotPlain


@pytest.mark.parametrize(
    "shape", ["pretty", "bare array", "nested lists of objects", "cut short after the array"]
)
def test_pieces_read_by_the_workers_make_the_same_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    events: list[Any] = mixed_events(50)
    if shape == "nested lists of objects":  # `}, {` and `}]` in events: cuts the decoder refuses
        for event in events[::3]:
            event["args"]["extra"] = [{"a": 1}, {"b": [{"c": 2}]}]
    doc: Any = {"traceEvents": events, "deviceProperties": [{"id": 0, "name": "GPU A"}]}
    if shape == "bare array":
        doc = events
    text = json.dumps(doc, indent=2 if shape == "pretty" else None)
    if shape == "cut short after the array":
        text = text[: text.index('"deviceProperties"') + 5]
    path = tmp_path / "t.json"
    path.write_text(text)
    one = read_with(str(path), 1, monkeypatch)
    two = read_with(str(path), 2, monkeypatch)
    same_trace(one, two)
    assert len(two.gpu) == 50
    if shape == "nested lists of objects":
        # then read as a stream (whose cuts the nested lists mislead too: then in one process)
        assert SPANS["not_plain"] == 1 and SPANS["merged"] + SPANS["wrong"] > 0
    else:
        assert SPANS["pieces"] > 5 and SPANS["not_plain"] == SPANS["merged"] == 0


def test_pieces_meet_where_the_next_one_starts() -> None:
    text = b'{"a": 1}, {"b": {"c": 2}},\n {"d": 3}]'
    assert _jsonstream.piece(text, 0, 3, True, True) == (0, 8)  # `{"a": 1}` ...
    assert _jsonstream.piece(text[3:], 3, 12, False, True) == (7, 22)  # ... then `{"b": ...}`
    assert _jsonstream.piece(text[14:], 14, 20, False, True) == (0, 0)  # inside `{"b": ...}`
    assert _jsonstream.piece(text[20:], 20, 30, False, True) == (8, 16)  # `{"d": 3}`
    assert _jsonstream.next_boundary(text, 3, False) == 7
    assert _jsonstream.next_boundary(b'{"a": 1}, ', 0, False) == -1  # more bytes decide
    assert _jsonstream.next_boundary(b'{"a": 1}, ', 0, True) == 7
    assert _jsonstream.closing_bracket(text, 36) == 36 == text.index(b"]")
    assert _jsonstream.closing_bracket(text, 8) == -1


def test_worker_processes_report_repairs_and_truncation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = json.dumps({"traceEvents": mixed_events(40)}).encode()
    damaged = text.replace(b"aten::op3", b"aten::op\x013", 1)[: int(len(text) * 0.8)]
    path = tmp_path / "damaged.json"
    path.write_bytes(damaged)
    one, two = read_with(str(path), 1, monkeypatch), read_with(str(path), 2, monkeypatch)
    assert SPANS["merged"] > 5 and SPANS["wrong"] == 0
    assert any("1 control character replaced by spaces" in w for w in one.meta.warnings)
    assert any("truncated" in w for w in one.meta.warnings)
    same_trace(one, two)


def test_a_cut_inside_a_string_is_read_again_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # names holding `}, {`: the last `}` of a span may lie inside a string
    events = [dict(kernel(i), name=f"n{i}}}, {{v") for i in range(80)]
    path = write(tmp_path / "braces.json", {"traceEvents": events})
    assert kineto._columns_of_span(b'{"ph": "X", "name": "n1}') is None
    one, two = read_with(path, 1, monkeypatch), read_with(path, 2, monkeypatch)
    assert SPANS["wrong"] == 1  # then read again in this process
    same_trace(one, two)


def test_no_worker_processes_to_be_had_reads_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    def broken(*args: Any) -> Any:
        raise BrokenProcessPool("a worker was killed")

    path = write(tmp_path / "mixed.json", {"traceEvents": mixed_events(20)})
    monkeypatch.setattr(kineto, "_read_pieces", broken)
    monkeypatch.setattr(kineto, "_read_in_processes", broken)
    assert len(read_with(path, 2, monkeypatch).gpu) == 20
    monkeypatch.setattr(kineto, "_read_pieces", not_plain)  # gzip: the stream, and no workers
    assert len(read_with(path, 2, monkeypatch).gpu) == 20


# -- gzip inflated ahead by a thread ------------------------------------------------------------


def gz_trace(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": mixed_events(count)}).encode()))
    return path


def test_gzip_is_inflated_ahead_and_reads_the_same(tmp_path: Path) -> None:
    import threading

    path = gz_trace(tmp_path, 50)
    plain = write(tmp_path / "t.json", {"traceEvents": mixed_events(50)})
    zipped, text = KinetoReader().read(str(path)), KinetoReader().read(plain)
    assert len(zipped.gpu) == 50 and zipped.names == text.names
    for table in ("gpu", "ops", "launch_params"):
        for column in ("start", "dur", "name", "row", "grid_x"):
            a, b = getattr(zipped, table), getattr(text, table)
            if hasattr(b, column):
                assert np.array_equal(getattr(a, column), getattr(b, column)), (table, column)
    assert not [t for t in threading.enumerate() if t.name == "gpuscope-inflate"]  # joined


def test_corrupt_gzip_mid_stream_is_one_error_and_no_thread_is_left(tmp_path: Path) -> None:
    import threading

    path = gz_trace(tmp_path, 200)
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\xff" * 64  # damage inside the deflate data
    path.write_bytes(bytes(data))
    with pytest.raises(ReaderError, match=r"^corrupt gzip data "):
        KinetoReader().read(str(path))
    assert not [t for t in threading.enumerate() if t.name == "gpuscope-inflate"]


def test_a_reader_that_stops_early_stops_the_inflating_thread(tmp_path: Path) -> None:
    import threading

    path = gz_trace(tmp_path, 200)
    blocks = _jsonstream._blocks(str(path), None)
    next(iter(blocks))
    blocks.close()  # type: ignore[attr-defined]
    assert not [t for t in threading.enumerate() if t.name == "gpuscope-inflate"]
