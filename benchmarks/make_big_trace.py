"""Make a large real-structured Kineto trace by repeating a recorded one N times.

Copy i of every event has its timestamps shifted by i × (the trace's span + a gap) and every id
(`correlation`, `External id`, `Record function id`, `Ev Idx`, flow `id`) shifted by i × (largest
id + 1), so copies neither overlap nor collide. The text of each event is kept byte for byte apart
from those numbers (same layout, same size as the recording); the header keys
(`deviceProperties`, `baseTimeNanoseconds`, ...) and the process/thread metadata events appear
once. The output is written as it is produced, so the ×100 file (~1.8 GB) is never held in memory.

    python benchmarks/make_big_trace.py 10          # -> bench-data/llama_decode_h200_x10.json
    python benchmarks/make_big_trace.py 100 --source PATH --out FILE
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import re
import sys
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / ".." / "shared" / "reference" / "traces" / "llama_decode_h200.json.gz"
GAP_NS = 1_000_000  # 1 ms of idle between copies
SEPARATOR = ",\n  "  # what Kineto writes between two events

ID_KEYS = ("id", "correlation", "External id", "external id", "Record function id", "Ev Idx")
_NUMBER = re.compile(rb'"(ts|' + "|".join(ID_KEYS).encode() + rb')": (-?\d+(?:\.\d+)?)')


class Template:
    """The recorded trace cut into header, events (text) and footer, plus what shifting needs."""

    def __init__(self, text: str) -> None:
        start = text.index("[", text.index('"traceEvents"')) + 1
        decoder = json.JSONDecoder(parse_float=Decimal)
        metadata: list[str] = []
        body: list[str] = []
        first_ns, last_ns, max_id = None, None, 0
        position = _skip_blank(text, start)
        while text[position] != "]":
            event, end = decoder.raw_decode(text, position)
            (metadata if event.get("ph") == "M" else body).append(text[position:end])
            first_ns, last_ns = _extend(event, first_ns, last_ns)
            max_id = max(max_id, _largest_id(event))
            position = _skip_blank(text, end)
            if text[position] == ",":
                position = _skip_blank(text, position + 1)
        self.header = text[:start].encode()
        self.footer = text[position:].encode()
        self.metadata = SEPARATOR.join(metadata).encode()
        self.body = SEPARATOR.join(body).encode()
        self.metadata_events = len(metadata)
        self.body_events = len(body)
        self.span_ns = (last_ns or 0) - (first_ns or 0)
        self.id_step = max_id + 1


def _skip_blank(text: str, position: int) -> int:
    while text[position] in " \t\r\n":
        position += 1
    return position


def _ns(value: object) -> int:
    return int(Decimal(str(value)) * 1000) if isinstance(value, (int, Decimal)) else 0


def _extend(event: dict[str, object], first: int | None, last: int | None) -> tuple[int, int]:
    start = _ns(event.get("ts"))
    end = start + max(_ns(event.get("dur")), 0)
    return (start if first is None else min(first, start), end if last is None else max(last, end))


def _largest_id(event: dict[str, object]) -> int:
    args = event.get("args")
    values = [event.get("id")] + ([args.get(k) for k in ID_KEYS] if isinstance(args, dict) else [])
    return max((v for v in values if isinstance(v, int) and not isinstance(v, bool)), default=0)


def shifted(body: bytes, shift_ns: int, id_shift: int) -> bytes:
    """`body` with every `ts` moved by `shift_ns` and every id by `id_shift` (exact, in text)."""

    if shift_ns == 0 and id_shift == 0:
        return body

    def replace(match: re.Match[bytes]) -> bytes:
        key, number = match.group(1), match.group(2)
        if key == b"ts":
            return b'"ts": ' + _format_us(_ns(Decimal(number.decode())) + shift_ns)
        if b"." in number:
            return match.group(0)
        return b'"' + key + b'": ' + str(int(number) + id_shift).encode()

    return _NUMBER.sub(replace, body)


def _format_us(ns: int) -> bytes:
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    return f"{sign}{ns // 1000}.{ns % 1000:03d}".encode()


def write(template: Template, copies: int, out: Path) -> int:
    """Write `copies` repetitions to `out`; returns the number of events written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    step_ns = template.span_ns + GAP_NS
    parts = (
        shifted(template.body, copy * step_ns, copy * template.id_step) for copy in range(copies)
    )
    with open(out, "wb") as handle:
        handle.write(template.header + b"\n  ")
        separator = b""
        for part in itertools.chain([template.metadata] if template.metadata else [], parts):
            handle.write(separator + part)
            separator = SEPARATOR.encode()
        handle.write(b"\n  " + template.footer)
    return template.metadata_events + copies * template.body_events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("copies", type=int, help="how many copies of the recording (10, 100)")
    parser.add_argument("--source", type=Path, default=SOURCE, help="recorded .json(.gz) trace")
    parser.add_argument("--out", type=Path, help="default: bench-data/<source>_x<copies>.json")
    args = parser.parse_args(argv)
    stem = args.source.name.removesuffix(".gz").removesuffix(".json")
    out = args.out or REPO / "bench-data" / f"{stem}_x{args.copies}.json"
    with gzip.open(args.source) if args.source.suffix == ".gz" else open(args.source, "rb") as f:
        template = Template(f.read().decode("utf-8"))
    events = write(template, args.copies, out)
    size = out.stat().st_size
    print(f"{out}: {args.copies} copies, {events:,} events, {size / 1e6:,.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
