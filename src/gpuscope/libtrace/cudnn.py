"""cuDNN API log (cuDNN ≥ 9: CUDNN_LOGLEVEL_DBG=3, CUDNN_LOGDEST_DBG=<file>): one record per API
call, a 4-space-indented tree of `key: type=T; val=V;` lines closed by `i! Time: …`.

A call is a `cudnnBackendExecute()` record that carries its execution plan's operations
(`operation: type=CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:` with xDesc/wDesc/yDesc,
convDesc and engine_id), or a legacy `cudnnConvolutionForward/BackwardData/BackwardFilter()` record
(cuDNN 8, CUDNN_LOGINFO_DBG=1). The status-only `cudnnBackendExecute()` record that follows each
call and the descriptor bookkeeping records are skipped. Library `cudnn`; config = the operations,
tensor dims, convolution parameters, types and engine id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from gpuscope.libtrace._args import dtype_name
from gpuscope.libtrace.call import ConvShape, LibraryCall

_HEADER = re.compile(r"^[IWE]! CuDNN \([^)]*\) function (\w+)\(\) called:")
_NODE = re.compile(
    r"^[iwe]!(?P<indent> +)(?P<key>\w+): type=(?P<type>[^;]*?)(?:; val=(?P<val>.*?))?;?:?\s*$"
)
_TENSOR = re.compile(r"^d?[a-z]Desc$")  # xDesc, dwDesc, aDesc …; not convDesc or knobDesc
_LEGACY = {
    "cudnnConvolutionForward": "CONVOLUTION_FORWARD",
    "cudnnConvolutionBackwardData": "CONVOLUTION_BACKWARD_DATA",
    "cudnnConvolutionBackwardFilter": "CONVOLUTION_BACKWARD_FILTER",
}
_DIRECTIONS = {"FORWARD": "fwd", "BACKWARD_DATA": "bwd_data", "BACKWARD_FILTER": "bwd_weight"}


@dataclass
class _Record:
    """What one API record says about the work it launches."""

    ops: list[str] = field(default_factory=list)
    tensors: dict[str, dict[str, str]] = field(default_factory=dict)
    conv: dict[str, str] = field(default_factory=dict)
    engine: str = ""


def parse(lines: Iterable[str]) -> Iterator[LibraryCall]:
    """Execute records among any other lines; a record cut off by a kill is dropped."""
    record: _Record | None = None
    stack: list[tuple[int, str]] = []
    for line in lines:
        header = _HEADER.match(line)
        if header:
            function = header.group(1)
            record, stack = _Record(ops=[_LEGACY[function]] if function in _LEGACY else []), []
            if function not in _LEGACY and function != "cudnnBackendExecute":
                record = None
        elif record is not None and line[1:].startswith("! Time:"):
            if record.ops:
                yield execute_call(record)
            record = None
        elif record is not None:
            node = _NODE.match(line)
            if node:
                _add(record, stack, node)


def _add(record: _Record, stack: list[tuple[int, str]], node: re.Match[str]) -> None:
    indent, key, value = len(node["indent"]), node["key"], node["val"]
    while stack and stack[-1][0] >= indent:
        stack.pop()
    parent = stack[-1][1] if stack else ""
    if value is None:
        stack.append((indent, key))
        if key == "operation":
            record.ops.append(_op_name(node["type"]))
        return
    if key == "engine_id":
        record.engine = value
    elif _TENSOR.match(parent):
        record.tensors.setdefault(parent, {})[key] = value
    elif parent == "convDesc":
        record.conv[key] = value


def _op_name(descriptor_type: str) -> str:
    return descriptor_type.removeprefix("CUDNN_BACKEND_OPERATION_").removesuffix("_DESCRIPTOR")


def execute_call(record: _Record) -> LibraryCall:
    """The call one execute record describes."""
    dtype = _tensor_dtype(next(iter(record.tensors.values()), {}))
    compute = record.conv.get("computeType") or record.conv.get("dataType") or ""
    conv_op = next((op for op in record.ops if op.startswith("CONVOLUTION_")), None)
    conv = _conv_shape(record, conv_op) if conv_op else None
    a, b = _dims(record, "aDesc"), _dims(record, "bDesc")
    return LibraryCall(
        library="cudnn",
        config=_config(record, dtype, compute),
        op=f"conv_{conv.direction}" if conv else "+".join(op.lower() for op in record.ops),
        dtype=dtype,
        compute_type=dtype_name(_enum(compute)) if compute else "",
        m=_at(a, -2),
        n=_at(b, -1),
        k=_at(a, -1),
        batch=_product(a[:-2]) if len(a) >= 2 else None,
        conv=conv,
    )


def _config(record: _Record, dtype: str, compute: str) -> str:
    parts = ["+".join(record.ops)]
    parts += [
        f"{name.removesuffix('Desc')}={t.get('dimA', '?')}" for name, t in record.tensors.items()
    ]
    for key in ("lowerPadA", "upperPadA", "padA", "strideA", "dilationA", "groupCount", "mode"):
        if key in record.conv:
            parts.append(f"{key}={_enum(record.conv[key])}")
    parts += [f"dtype={dtype}", f"compute={dtype_name(_enum(compute))}", f"engine={record.engine}"]
    return " ".join(parts)


def _conv_shape(record: _Record, op: str) -> ConvShape:
    x = _dims(record, "xDesc", "dxDesc")
    w = _dims(record, "wDesc", "dwDesc")
    y = _dims(record, "yDesc", "dyDesc")
    pad = _ints(record.conv.get("lowerPadA") or record.conv.get("padA") or "")
    stride, dilation = (
        _ints(record.conv.get("strideA", "")),
        _ints(record.conv.get("dilationA", "")),
    )
    groups = x[1] // w[1] if len(x) > 1 and len(w) > 1 and w[1] else None
    return ConvShape(
        n=_at(x, 0), c=_at(x, 1), h=_at(x, -2), w=_at(x, -1),
        k=_at(w, 0) if w else _at(y, 1), y=_at(w, -2), x=_at(w, -1),
        pad_h=_at(pad, -2), pad_w=_at(pad, -1),
        stride_h=_at(stride, -2), stride_w=_at(stride, -1),
        dilation_h=_at(dilation, -2), dilation_w=_at(dilation, -1),
        groups=groups,
        direction=_DIRECTIONS.get(op.removeprefix("CONVOLUTION_"), op.lower()),
        layout=_layout(record, "xDesc", "dxDesc"),
    )  # fmt: skip


def _dims(record: _Record, *names: str) -> list[int]:
    for name in names:
        if name in record.tensors:
            return _ints(record.tensors[name].get("dimA", ""))
    return []


def _layout(record: _Record, *names: str) -> str:
    for name in names:
        strides = _ints(record.tensors.get(name, {}).get("strideA", ""))
        if len(strides) == 4:
            return "NHWC" if strides[1] == 1 and strides[3] != 1 else "NCHW"
    return ""


def _tensor_dtype(tensor: dict[str, str]) -> str:
    spelling = tensor.get("type") or tensor.get("dataType") or ""
    return dtype_name(_enum(spelling)) if spelling else ""


def _enum(value: str) -> str:
    """`CUDNN_DATA_FLOAT (0)` → `FLOAT`; `CUDNN_CROSS_CORRELATION (1)` → `CROSS_CORRELATION`."""
    return value.split(" (")[0].removeprefix("CUDNN_DATA_").removeprefix("CUDNN_")


def _ints(text: str) -> list[int]:
    return [int(v) for v in re.findall(r"-?\d+", text)]


def _product(values: list[int]) -> int:
    result = 1
    for value in values:
        result *= value
    return result


def _at(values: list[int], index: int) -> int | None:
    return values[index] if values and -len(values) <= index < len(values) else None
