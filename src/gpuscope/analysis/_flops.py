"""FLOPs and bytes of GEMM, attention and convolution operators from their recorded inputs.

Counts are the textbook ones: a GEMM is 2·M·N·K (per batch), forward attention 2·B·H·Sq·Sk·(D+Dv)
= 4·B·H·Sq·Sk·D, halved only when the op records is_causal (backward: 2.5× forward, the
FlashAttention convention), a convolution 2·N·K·(C/groups)·R·S·P·Q per computed tensor. Bytes are
the operands read plus the output written once, at the operands' element size: the minimum any
kernel must move, so achieved GB/s is a lower bound on the traffic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from gpuscope.analysis._opinputs import SIZES, Inputs, dtype_code

GEMM, ATTENTION, CONVOLUTION = "gemm", "attention", "convolution"


@dataclass(frozen=True)
class Work:
    """What one call of an operator computes."""

    family: str
    flops: float
    bytes: float
    dtype: str
    shape: str  # "M=2048 N=1024 K=1024", "B=4 H=16 Sq=512 Sk=512 D=64 causal", ...
    mnk: tuple[int, int, int] | None = None  # GEMMs: per-batch M, N, K
    note: str = ""


def _size(dtype: str | None) -> int:
    return SIZES.get(dtype or "", 0)


def _gemm(m: int, n: int, k: int, batch: int, dtype: str, extra: float, out: str | None) -> Work:
    esize, osize = _size(dtype), _size(out or dtype)
    moved = batch * ((m * k + k * n) * esize + m * n * osize) + extra * esize
    label = f"M={m} N={n} K={k}" if batch == 1 else f"B={batch} M={m} N={n} K={k}"
    return Work(GEMM, 2.0 * batch * m * n * k, float(moved), dtype, label, (m, n, k))


def _mm(x: Inputs, a: int = 0, bias: int = -1) -> Work | None:
    left, right, dtype = x.shape(a), x.shape(a + 1), x.dtype(a)
    if left is None or right is None or dtype is None or len(left) != len(right):
        return None
    extra = math.prod(x.shape(bias) or [0]) if bias >= 0 else 0
    if len(left) == 2 and left[1] == right[0]:
        return _gemm(left[0], right[1], left[1], 1, dtype, extra, None)
    if len(left) == 3 and left[2] == right[1] and left[0] == right[0]:
        return _gemm(left[1], right[2], left[2], left[0], dtype, extra, None)
    return None


def _matmul(x: Inputs) -> Work | None:
    left, right, dtype = x.shape(0), x.shape(1), x.dtype(0)
    if not left or not right or dtype is None:
        return None
    a = [1, *left] if len(left) == 1 else left
    b = [*right, 1] if len(right) == 1 else right
    if a[-1] != b[-2]:
        return None
    batch_a, batch_b = a[:-2], b[:-2]
    width = max(len(batch_a), len(batch_b))
    batch_a = [1] * (width - len(batch_a)) + batch_a
    batch_b = [1] * (width - len(batch_b)) + batch_b
    batch = math.prod(max(p, q) for p, q in zip(batch_a, batch_b, strict=True))
    return _gemm(a[-2], b[-1], a[-1], batch, dtype, 0, None)


def _linear(x: Inputs) -> Work | None:
    inp, weight, dtype = x.shape(0), x.shape(1), x.dtype(0)
    if not inp or weight is None or len(weight) != 2 or inp[-1] != weight[1] or dtype is None:
        return None
    extra = math.prod(x.shape(2) or [0])
    return _gemm(math.prod(inp[:-1]), weight[0], weight[1], 1, dtype, extra, None)


def _scaled_mm(x: Inputs) -> Work | None:
    work = _mm(x)
    out = dtype_code(x.value(6))  # out_dtype; the output is written once in it
    if work is None or work.mnk is None or out is None:
        return work
    m, n, k = work.mnk
    return _gemm(m, n, k, 1, work.dtype, 0, out)


def _addmv(x: Inputs) -> Work | None:
    mat, vec, dtype = x.shape(1), x.shape(2), x.dtype(1)
    if mat is None or vec is None or len(mat) != 2 or dtype is None:
        return None
    return _gemm(mat[0], 1, mat[1], 1, dtype, mat[0], None)


# attention op -> (index of q, layout, index of is_causal / custom_mask_type, factor vs forward)
_ATTENTION = {
    "aten::scaled_dot_product_attention": (0, "bhsd", 5, 1.0),
    "aten::_scaled_dot_product_flash_attention": (0, "bhsd", 4, 1.0),
    "aten::_scaled_dot_product_efficient_attention": (0, "bhsd", 6, 1.0),
    "aten::_scaled_dot_product_cudnn_attention": (0, "bhsd", 6, 1.0),
    "aten::_cudnn_attention_forward": (0, "bhsd", 10, 1.0),
    "aten::_flash_attention_forward": (0, "bshd", 8, 1.0),
    "aten::_efficient_attention_forward": (0, "bshd", 9, 1.0),
    "aten::_scaled_dot_product_flash_attention_backward": (1, "bhsd", 11, 2.5),
    "aten::_scaled_dot_product_efficient_attention_backward": (1, "bhsd", 11, 2.5),
    "aten::_scaled_dot_product_cudnn_attention_backward": (1, "bhsd", 14, 2.5),
    "aten::_cudnn_attention_backward": (1, "bhsd", 14, 2.5),
    "aten::_flash_attention_backward": (1, "bshd", 11, 2.5),
    "aten::_efficient_attention_backward": (1, "bshd", 14, 2.5),
}


def _attention(name: str) -> Callable[[Inputs], Work | None]:
    first, layout, causal_at, factor = _ATTENTION[name]

    def model(x: Inputs) -> Work | None:
        q, k, v, dtype = x.shape(first), x.shape(first + 1), x.shape(first + 2), x.dtype(first)
        if not (q and k and v) or not len(q) == len(k) == len(v) == 4 or dtype is None:
            return None
        if layout == "bshd":
            q, k, v = ([t[0], t[2], t[1], t[3]] for t in (q, k, v))
        (b, h, sq, d), sk, dv = q, k[2], v[3]
        causal = _causal(x.value(causal_at))
        flops = factor * 2.0 * b * h * sq * sk * (d + dv) * (0.5 if causal else 1.0)
        tensors = math.prod(q) + math.prod(k) + math.prod(v) + b * h * sq * dv
        moved = tensors * _size(dtype) * (2 if factor > 1 else 1)
        label = f"B={b} H={h} Sq={sq} Sk={sk} D={d}" + (" causal" if causal else "")
        note = "" if causal is not None else "is_causal not recorded: counted unmasked"
        return Work(ATTENTION, flops, float(moved), dtype, label, None, note)

    return model


def _causal(text: str) -> bool | None:
    """is_causal ('True'/'False') or an efficient-attention mask type ('0' none, '1'/'2')."""
    if text in ("True", "False"):
        return text == "True"
    return text != "0" if text in ("0", "1", "2") else None


# convolution op -> indices of (stride, padding, dilation, transposed)
_CONV = {
    "aten::convolution": (3, 4, 5, 6),
    "aten::_convolution": (3, 4, 5, 6),
    "aten::conv1d": (3, 4, 5, -1),
    "aten::conv2d": (3, 4, 5, -1),
    "aten::conv3d": (3, 4, 5, -1),
    "aten::cudnn_convolution": (3, 2, 4, -1),
    "aten::miopen_convolution": (4, 3, 5, -1),
}
_INTS = re.compile(r"-?\d+")


def _ints(text: str, count: int) -> list[int] | None:
    """'[2, 2]' -> [2, 2]; a single '2' is broadcast; None when not recorded."""
    found = [int(v) for v in _INTS.findall(text)]
    if len(found) == 1:
        return found * count
    return found if len(found) == count else None


def _output(x: Inputs, spatial: list[int], kernel: list[int], at: tuple[int, ...]) -> list[int]:
    """Output spatial size from stride / padding / dilation; [] when they are not recorded."""
    stride_at, padding_at, dilation_at, _ = at
    n = len(spatial)
    padding_text = x.value(padding_at)
    if padding_text in ("same", "valid"):
        padding: list[int] | None = [0] * n if padding_text == "valid" else None
        if padding is None:
            return list(spatial)
    else:
        padding = _ints(padding_text, n)
    stride, dilation = _ints(x.value(stride_at), n), _ints(x.value(dilation_at), n)
    if stride is None or padding is None or dilation is None:
        return []
    return [
        (size + 2 * p - d * (r - 1) - 1) // s + 1
        for size, p, d, r, s in zip(spatial, padding, dilation, kernel, stride, strict=True)
    ]


def _convolution(name: str) -> Callable[[Inputs], Work | None]:
    at = _CONV[name]

    def model(x: Inputs) -> Work | None:
        inp, weight, dtype = x.shape(0), x.shape(1), x.dtype(0)
        if not inp or not weight or len(inp) != len(weight) or len(inp) < 3 or dtype is None:
            return None
        if at[3] >= 0 and x.value(at[3]) == "True":
            return None  # transposed: the formula below does not apply
        out = _output(x, inp[2:], weight[2:], at)
        note = "" if out else "stride/padding not recorded: output size assumed equal to input"
        out = out or inp[2:]
        per_output = 2.0 * weight[1] * math.prod(weight[2:])
        outputs = inp[0] * weight[0] * math.prod(out)
        moved = (math.prod(inp) + math.prod(weight) + outputs) * _size(dtype)
        return Work(
            CONVOLUTION,
            per_output * outputs,
            float(moved),
            dtype,
            _conv_label(inp, weight, out),
            None,
            note,
        )

    return model


def _conv_label(inp: list[int], weight: list[int], out: list[int]) -> str:
    dims = "×".join
    return (
        f"N={inp[0]} C={inp[1]} {dims(map(str, inp[2:]))} K={weight[0]} "
        f"R={dims(map(str, weight[2:]))} → {dims(map(str, out))}"
    )


def _convolution_backward(x: Inputs) -> Work | None:
    grad, inp, weight, dtype = x.shape(0), x.shape(1), x.shape(2), x.dtype(0)
    if not grad or not inp or not weight or len(grad) != len(inp) or dtype is None:
        return None
    if x.value(7) == "True":
        return None  # transposed
    mask = [m == "True" for m in re.findall(r"True|False", x.value(10))] or [True, True]
    tensors = sum(mask[:2]) or 2
    per_output = 2.0 * weight[1] * math.prod(weight[2:])
    flops = tensors * per_output * grad[0] * grad[1] * math.prod(grad[2:])
    moved = (math.prod(grad) + 2 * math.prod(inp) + 2 * math.prod(weight)) * _size(dtype)
    label = _conv_label(inp, weight, grad[2:]) + " (backward)"
    return Work(CONVOLUTION, flops, float(moved), dtype, label)


MODELS: dict[str, Callable[[Inputs], Work | None]] = {
    "aten::mm": _mm,
    "aten::bmm": _mm,
    "aten::addmm": lambda x: _mm(x, 1, 0),
    "aten::baddbmm": lambda x: _mm(x, 1, 0),
    "aten::matmul": _matmul,
    "aten::linear": _linear,
    "aten::_scaled_mm": _scaled_mm,
    "aten::addmv": _addmv,
    "aten::convolution_backward": _convolution_backward,
    **{name: _attention(name) for name in _ATTENTION},
    **{name: _convolution(name) for name in _CONV},
}


def work(name: str, inputs: Inputs) -> Work | None:
    """The FLOPs and bytes of one call of operator `name`, None when it has no model or the
    recorded inputs do not fit it."""
    model = MODELS.get(name)
    return model(inputs) if model is not None else None
