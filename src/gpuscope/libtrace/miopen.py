"""MIOpen driver commands (MIOPEN_ENABLE_LOGGING_CMD=1), one per call:
`MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 128 -c 3 -H 32 -W 32 …`.

MIOpen logs to the program's stderr (no file destination exists), so `gpuscope run` tees the
child's stderr into the run directory (see collect.py). Library `miopen`; config = the driver
command (madengine's config; Windows builds print `MIOpenDriver.exe` without `./bin/`). The driver
verb gives the op and dtype (`conv` fp32, `convfp16`, `convbfp16`, `convint8`; `bnorm…`, `pool…`,
`activ…`); short and long option spellings are both read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from gpuscope.libtrace._args import first, options, to_int
from gpuscope.libtrace.call import ConvShape, LibraryCall

_COMMAND = re.compile(r"MIOpen(?:\(\w+\))?: Command \[\w+\] (\S*MIOpenDriver(?:\.exe)?\s.*)")
_VERB_DTYPE = {"fp16": "f16", "bfp16": "bf16", "int8": "i8", "fp64": "f64", "fp8": "f8"}
_DIRECTIONS = {"0": "all", "1": "fwd", "2": "bwd_data", "4": "bwd_weight"}


def parse(lines: Iterable[str]) -> Iterator[LibraryCall]:
    """Driver command records among any other lines (MIOpen's own Info lines are skipped)."""
    for line in lines:
        found = _COMMAND.search(line)
        if found:
            yield command_call(found.group(1).strip())


def command_call(config: str) -> LibraryCall:
    """One MIOpenDriver command."""
    tokens = config.split()
    verb = tokens[1] if len(tokens) > 1 else ""
    base = next(
        (b for b in ("conv", "bnorm", "pool", "activ", "softmax") if verb.startswith(b)), ""
    )
    dtype = _VERB_DTYPE.get(verb.removeprefix(base), "f32") if base else ""
    opts = options(tokens[2:])
    conv = _conv_shape(opts) if base == "conv" else None
    op = verb if conv is None else f"conv_{conv.direction}"
    return LibraryCall(library="miopen", config=config, op=op, dtype=dtype, conv=conv)


def _conv_shape(opts: Mapping[str, str]) -> ConvShape:
    def get(*names: str) -> int | None:
        return to_int(first(opts, *names))

    direction = first(opts, "F", "forw") or "0"
    layout = first(opts, "in_layout", "I") or "NCHW"
    return ConvShape(
        n=get("n", "batchsize"),
        c=get("c", "in_channels"),
        h=get("H", "in_h"),
        w=get("W", "in_w"),
        k=get("k", "out_channels"),
        y=get("y", "fil_h"),
        x=get("x", "fil_w"),
        pad_h=get("p", "pad_h"),
        pad_w=get("q", "pad_w"),
        stride_h=get("u", "conv_stride_h"),
        stride_w=get("v", "conv_stride_w"),
        dilation_h=get("l", "dilation_h"),
        dilation_w=get("j", "dilation_w"),
        groups=get("g", "group_count"),
        direction=_DIRECTIONS.get(direction, direction),
        layout=layout,
    )
