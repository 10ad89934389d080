"""Operators' recorded inputs (torch.profiler `record_shapes`) and the op that launched each kernel.

Kineto gives every operator its own External id and stamps a kernel with the id of the innermost
operator on the launching thread: `aten::linear → aten::addmm` launches under addmm's id, `aten::to
→ aten::_to_copy → aten::copy_` under copy_'s. `owner_rows` maps each GPU row to that operator's
row of `trace.ops`; inputs are parsed once per distinct JSON text (`Recorded`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._nesting import Nesting
from gpuscope.analysis._unique import unique, unique_rows
from gpuscope.analysis.links import Links
from gpuscope.trace.model import I64, OP, Trace

# torch.profiler's "Input type" text (C++ type names) -> dtype name
DTYPES = {
    "float": "float32", "double": "float64", "c10::half": "float16", "c10::bfloat16": "bfloat16",
    "long int": "int64", "long": "int64", "int": "int32", "short int": "int16", "short": "int16",
    "signed char": "int8", "unsigned char": "uint8", "bool": "bool",
    "c10::float8_e4m3fn": "float8_e4m3fn", "c10::float8_e5m2": "float8_e5m2",
    "c10::float8_e4m3fnuz": "float8_e4m3fnuz", "c10::float8_e5m2fnuz": "float8_e5m2fnuz",
    "c10::float8_e8m0fnu": "float8_e8m0fnu", "c10::float4_e2m1fn_x2": "float4_e2m1fn_x2",
    "c10::complex<float>": "complex64", "c10::complex<double>": "complex128",
    "c10::complex<c10::half>": "complex32", "unsigned short": "uint16", "unsigned int": "uint32",
    "unsigned long": "uint64",
}  # fmt: skip
# c10::ScalarType codes, as "Concrete Inputs" records a dtype argument (c10/core/ScalarType.h)
SCALAR_TYPES = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
    7: "float64", 8: "complex32", 9: "complex64", 10: "complex128", 11: "bool", 12: "qint8",
    13: "quint8", 14: "qint32", 15: "bfloat16", 23: "float8_e5m2", 24: "float8_e4m3fn",
    25: "float8_e5m2fnuz", 26: "float8_e4m3fnuz", 27: "uint16", 28: "uint32", 29: "uint64",
    44: "float8_e8m0fnu", 45: "float4_e2m1fn_x2",
}  # fmt: skip
SIZES = {
    "float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
    "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1, "float4_e2m1fn_x2": 1, "complex64": 8,
    "complex128": 16, "complex32": 4, "uint16": 2, "uint32": 4, "uint64": 8,
}  # fmt: skip
SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}


def dtype_of(text: Any) -> str | None:
    """'c10::BFloat16' -> 'bfloat16'; None for 'Scalar', '' or an unknown type."""
    if not isinstance(text, str):
        return None
    return DTYPES.get(text.strip().lower())


def dtype_code(text: Any) -> str | None:
    """A recorded ScalarType code ('15') -> 'bfloat16'; None when empty or not a code."""
    if not isinstance(text, str) or not text.strip().isdigit():
        return None
    return SCALAR_TYPES.get(int(text))


def short(dtype: str | None) -> str:
    """'bfloat16' -> 'bf16' for tables; '?' when unknown."""
    return SHORT.get(dtype or "", dtype or "?")


@dataclass(frozen=True)
class Inputs:
    """One operator's recorded inputs: per argument its dims, type text and concrete value."""

    dims: tuple[Any, ...]
    types: tuple[Any, ...]
    concrete: tuple[Any, ...]

    def shape(self, i: int) -> list[int] | None:
        """Dims of argument `i` when it is a tensor with integer dims."""
        value = self.dims[i] if i < len(self.dims) else None
        if isinstance(value, list) and all(isinstance(d, int) for d in value):
            return value
        return None

    def dtype(self, i: int) -> str | None:
        return dtype_of(self.types[i]) if i < len(self.types) else None

    def value(self, i: int) -> str:
        """Concrete value of argument `i` as recorded ('' when none)."""
        value = self.concrete[i] if i < len(self.concrete) else ""
        return value if isinstance(value, str) else json.dumps(value)


class Recorded:
    """Parses each distinct recorded text of a trace once."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._parsed: dict[int, tuple[Any, ...]] = {}

    def parsed(self, index: int) -> tuple[Any, ...]:
        if index < 0:
            return ()
        found = self._parsed.get(index)
        if found is None:
            try:
                value = json.loads(self.trace.names[index])
            except ValueError:
                value = None
            found = tuple(value) if isinstance(value, list) else ()
            self._parsed[index] = found
        return found

    def inputs(self, row: int) -> Inputs:
        ops = self.trace.ops
        return Inputs(
            self.parsed(int(ops.input_dims[row])),
            self.parsed(int(ops.input_types[row])),
            self.parsed(int(ops.concrete[row])),
        )


def owner_rows(trace: Trace, links: Links) -> I64:
    """Per row of `trace.gpu`: the row of `trace.ops` (an operator) that launched it, else -1.

    The GPU row's External id is used, else the one of the host call that launched it. When
    several operators share an id (some tracers), the innermost — latest start — wins. When no
    operator has that id (traces cut out of bigger ones, old Kineto builds that stamp kernels with
    their correlation id), the innermost operator around the launching host call on its thread
    is the owner (not for graph launches: one replays kernels that other operators recorded).
    """
    gpu, ops, host = trace.gpu, trace.ops, trace.host
    ext = gpu.external_id.copy()
    linked = (ext < 0) & (links.host_index >= 0)
    ext[linked] = host.external_id[links.host_index[linked]]
    result = np.full(len(gpu), -1, np.int64)
    rows = np.flatnonzero((ops.kind == OP) & (ops.external_id >= 0))
    if len(rows) and len(gpu):
        # by id (ids mostly rise with time: a stable sort of them is one pass), then, where
        # operators share an id, by start and longest first: the last of each id is innermost
        rows = rows[np.argsort(ops.external_id[rows], kind="stable")]
        ids = ops.external_id[rows]
        if (ids[1:] == ids[:-1]).any():
            rows = rows[np.lexsort((-ops.dur[rows], ops.start[rows], ids))]
            ids = ops.external_id[rows]
            last = np.r_[ids[1:] != ids[:-1], True]
            rows, ids = rows[last], ids[last]
        pos = np.clip(np.searchsorted(ids, ext), 0, len(ids) - 1)
        found = (ids[pos] == ext) & (ext >= 0)
        result[found] = rows[pos[found]]
    _owners_around_launches(trace, links, result)
    return result


def _owners_around_launches(trace: Trace, links: Links, result: I64) -> None:
    """Fill `result` where it is -1 with the innermost operator around the launching host call."""
    ops, host = trace.ops, trace.host
    missing = np.flatnonzero((result < 0) & (links.host_index >= 0) & ~links.graph)
    candidates = np.flatnonzero(ops.kind == OP)
    if len(missing) == 0 or len(candidates) == 0:
        return
    calls = links.host_index[missing]
    nesting = Nesting(ops.start[candidates], ops.end[candidates], ops.tid[candidates])
    inner = nesting.innermost(
        host.tid[calls], host.start[calls], host.start[calls] + host.dur[calls]
    )
    result[missing] = np.where(inner >= 0, candidates[np.maximum(inner, 0)], -1)


def distinct(trace: Trace, rows: I64, *extra: Any) -> tuple[I64, I64]:
    """Group operator rows by (name, recorded inputs, *extra columns): the first row of each
    group and, per given row, its group — so inputs are modelled once per distinct call."""
    ops = trace.ops
    columns = [ops.name[rows], ops.input_dims[rows], ops.input_types[rows], ops.concrete[rows]]
    keys = np.stack([*columns, *(np.asarray(e)[rows] for e in extra)], axis=1)
    first, inverse = unique_rows(keys)
    return rows[first], inverse


def per_op(owner: I64, values: Any, size: int) -> Any:
    """Sum `values` (one per GPU row) onto their owner rows: an array of `size` op rows."""
    valid = owner >= 0
    return np.bincount(owner[valid], weights=np.asarray(values)[valid], minlength=size)


def names_matching(trace: Trace, wanted: Any) -> list[int]:
    """Name indices of `trace.names` used by operators whose text satisfies `wanted(name)`."""
    return [int(i) for i in unique(trace.ops.name) if wanted(trace.names[i])]
