"""Typed decoding of Kineto events: the fast strict structs and the tolerant fallback.

msgspec decodes each batch straight into these structs and skips every field not named here,
which is most of what a Kineto event carries (shapes, strides, occupancy, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

_EMPTY = msgspec.Raw(b"")


class Args(msgspec.Struct, frozen=True, gc=False):
    correlation: int = -1
    external_id: int = msgspec.field(default=-1, name="External id")
    legacy_external_id: int = msgspec.field(default=-1, name="external id")
    stream: int | str = -1
    device: int = -1
    bytes: int | str = -1  # ROCm runtime calls write "bytes": "9216"
    # kernels: blocks per dimension, threads per block (tuples: 10 % less decode time than lists)
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None
    registers: int = msgspec.field(default=-1, name="registers per thread")
    shared_memory: int = msgspec.field(default=-1, name="shared memory")
    # cpu ops (record_shapes): kept as raw JSON text, interned per distinct value
    input_dims: msgspec.Raw = msgspec.field(default=_EMPTY, name="Input Dims")
    input_types: msgspec.Raw = msgspec.field(default=_EMPTY, name="Input type")
    concrete: msgspec.Raw = msgspec.field(default=_EMPTY, name="Concrete Inputs")
    sequence: int = msgspec.field(default=-1, name="Sequence number")
    # record_param_comms (collectives)
    collective: str = msgspec.field(default="", name="Collective name")
    in_elems: int = msgspec.field(default=-1, name="In msg nelems")
    out_elems: int = msgspec.field(default=-1, name="Out msg nelems")
    group_size: int = msgspec.field(default=-1, name="Group size")
    dtype: str = ""
    group: str = msgspec.field(default="", name="Process Group Name")
    # the allocator's `[memory]` instant events (profile_memory=True). Every field makes msgspec
    # look further for each key it skips: these five cost ~4 % of the decode on the 54 MB
    # reference trace and nothing measurable on the decode trace, less than finding the events
    # first (a scan of each batch for "[memory]": +6 % of the whole read of a trace without any)
    addr: int = msgspec.field(default=-1, name="Addr")
    mem_bytes: int = msgspec.field(default=0, name="Bytes")
    allocated: int = msgspec.field(default=-1, name="Total Allocated")
    reserved: int = msgspec.field(default=-1, name="Total Reserved")
    device_id: int = msgspec.field(default=-1, name="Device Id")


class LooseArgs(msgspec.Struct):
    correlation: Any = -1
    external_id: Any = msgspec.field(default=-1, name="External id")
    legacy_external_id: Any = msgspec.field(default=-1, name="external id")
    stream: Any = -1
    device: Any = -1
    bytes: Any = -1
    grid: Any = None
    block: Any = None
    registers: Any = -1
    shared_memory: Any = -1
    input_dims: Any = None
    input_types: Any = None
    concrete: Any = None
    sequence: Any = -1
    collective: Any = ""
    in_elems: Any = -1
    out_elems: Any = -1
    group_size: Any = -1
    dtype: Any = ""
    group: Any = ""
    addr: Any = -1
    mem_bytes: Any = 0
    allocated: Any = -1
    reserved: Any = -1
    device_id: Any = -1


_NO_ARGS = Args()


class Event(msgspec.Struct, gc=False):
    """Fast path: ts as float µs (exact to the ns below 2**43 µs, see `ts_to_ns`)."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = -1
    tid: int | str = -1
    ts: float = 0.0
    dur: float = 0.0
    id: int | str = -1
    args: Args = _NO_ARGS


class ExactEvent(msgspec.Struct, gc=False):
    """For epoch-µs timestamps with ns fractions (beyond float precision): ts kept as text."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = -1
    tid: int | str = -1
    ts: msgspec.Raw = msgspec.Raw(b"0")
    dur: float = 0.0
    id: int | str = -1
    args: Args = _NO_ARGS


class LooseEvent(msgspec.Struct):
    """Anything goes (wrong types, nulls, integers beyond int64); normalised value by value."""

    ph: Any = ""
    cat: Any = ""
    name: Any = ""
    pid: Any = -1
    tid: Any = -1
    ts: Any = 0
    dur: Any = 0
    id: Any = -1
    args: Any = None


def decoder(event_type: type) -> Callable[[bytes | bytearray], list[Any]]:
    dec = msgspec.json.Decoder(list[event_type])  # type: ignore[valid-type]
    return dec.decode


def as_int(value: Any, missing: int = -1) -> int:
    """An integer column value from whatever the file had; `missing` when it is not one."""
    if type(value) is int:
        return value if -(2**63) <= value < 2**63 else missing
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text, 16) if text.lower().startswith("0x") else int(text)
        except ValueError:
            return missing
    if isinstance(value, float) and value == value and abs(value) < 2**63:
        return int(value)
    return missing


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def text_us_to_ns(text: Any) -> int:
    """Exact µs → ns for a JSON number given as text/bytes/number ('1712195495519689.047')."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        text = repr(text)
    if not isinstance(text, (str, bytes, bytearray, msgspec.Raw)):
        return 0  # null, a list, an object: no time (as for any text that is not a number)
    raw = text.encode() if isinstance(text, str) else bytes(text)
    sign = -1 if raw.startswith(b"-") else 1
    body = raw.lstrip(b"-+")
    whole, _, frac = body.partition(b".")
    if not whole.isdigit() or (frac and not frac.isdigit()):
        return _decimal_us_to_ns(raw)  # exponents and other rare spellings
    ns = int(whole) * 1000 + int((frac + b"000")[:3])
    if len(frac) > 3 and frac[3] >= ord("5"):
        ns += 1
    return sign * ns if ns < 2**63 else 0


_THREE_DECIMALS = re.compile(rb"-?\d+\.\d{3}(?=\s|$)")


def raw_us_to_ns(values: list[msgspec.Raw]) -> npt.NDArray[np.int64]:
    """Exact ns for many JSON numbers kept as text (the epoch-µs case).

    Kineto writes µs with exactly three decimals ("%.3f"): then the ns value is the text without
    its dot, parsed in one pass. Anything else goes number by number.
    """
    text = b" ".join([bytes(v) for v in values])
    if len(_THREE_DECIMALS.findall(text)) == len(values):
        return np.array(text.replace(b".", b"").split(), dtype=np.int64)
    return np.array([text_us_to_ns(v) for v in values], np.int64)


def _decimal_us_to_ns(raw: bytes) -> int:
    try:
        ns = int((Decimal(raw.decode()) * 1000).to_integral_value())
    except (InvalidOperation, ValueError, UnicodeDecodeError, OverflowError):
        return 0
    return ns if -(2**63) <= ns < 2**63 else 0


def loose_args(value: Any) -> LooseArgs:
    if not isinstance(value, dict):
        return LooseArgs()
    return LooseArgs(
        correlation=value.get("correlation", -1),
        external_id=value.get("External id", -1),
        legacy_external_id=value.get("external id", -1),
        stream=value.get("stream", -1),
        device=value.get("device", -1),
        bytes=value.get("bytes", -1),
        grid=value.get("grid"),
        block=value.get("block"),
        registers=value.get("registers per thread", -1),
        shared_memory=value.get("shared memory", -1),
        input_dims=value.get("Input Dims"),
        input_types=value.get("Input type"),
        concrete=value.get("Concrete Inputs"),
        sequence=value.get("Sequence number", -1),
        collective=value.get("Collective name", ""),
        in_elems=value.get("In msg nelems", -1),
        out_elems=value.get("Out msg nelems", -1),
        group_size=value.get("Group size", -1),
        dtype=value.get("dtype", ""),
        group=value.get("Process Group Name", ""),
        addr=value.get("Addr", -1),
        mem_bytes=value.get("Bytes", 0),
        allocated=value.get("Total Allocated", -1),
        reserved=value.get("Total Reserved", -1),
        device_id=value.get("Device Id", -1),
    )


def raw_text(value: Any) -> bytes:
    """The JSON text of a recorded value (Raw from the fast path, objects from the loose one)."""
    if isinstance(value, msgspec.Raw):
        text = bytes(value)
        if b"\n" in text or b"  " in text:  # pretty-printed file: one spelling per value
            text = msgspec.json.encode(msgspec.json.decode(text))
        return text
    if value is None:
        return b""
    return msgspec.json.encode(value)


def dims(value: Any) -> tuple[int, ...] | None:
    """A [x, y, z] launch dimension, or None when the value is not one."""
    if not isinstance(value, list) or len(value) != 3:
        return None
    result = tuple(as_int(v) for v in value)
    return result if all(v >= 0 for v in result) else None
