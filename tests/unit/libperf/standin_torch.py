"""A stand-in for the parts of PyTorch the libperf torch replay touches (CI has no torch):
tensors that carry only shape, strides, dtype and memory format; matrix products that check
their operands' shapes like torch does; every call recorded in `calls` so a test can compare
what the replay built with what the original program ran."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class Tensor:
    def __init__(
        self, shape: tuple[int, ...], stride: tuple[int, ...] | None = None, dtype: str = "float32",
        numel: int | None = None, fmt: str | None = None,
    ) -> None:  # fmt: skip
        self.shape = tuple(shape)
        self._stride = stride if stride is not None else _contiguous(self.shape)
        self.dtype = dtype
        self.numel = numel if numel is not None else _product(self.shape)
        self.fmt = fmt

    def stride(self, dim: int | None = None) -> Any:
        return self._stride if dim is None else self._stride[dim]

    def as_strided(self, size: tuple[int, ...], stride: tuple[int, ...]) -> Tensor:
        last = sum((n - 1) * s for n, s in zip(size, stride, strict=True))
        assert last < self.numel, f"as_strided past the storage: {last} >= {self.numel}"
        return Tensor(size, stride, self.dtype, self.numel)

    def transpose(self, a: int, b: int) -> Tensor:
        shape, stride = list(self.shape), list(self._stride)
        shape[a], shape[b] = shape[b], shape[a]
        stride[a], stride[b] = stride[b], stride[a]
        return Tensor(tuple(shape), tuple(stride), self.dtype, self.numel)

    def unsqueeze(self, dim: int) -> Tensor:
        assert dim == 0
        return Tensor((1, *self.shape), (self.numel, *self._stride), self.dtype, self.numel)

    def contiguous(self, memory_format: str | None = None) -> Tensor:
        return Tensor(self.shape, None, self.dtype, None, memory_format)


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _product(values: tuple[int, ...]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def make() -> Any:
    """A fresh stand-in torch module with an empty `calls` record."""
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def record(name: str, result: Any) -> Any:
        def op(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, args, kwargs))
            return result(*args, **kwargs)

        return op

    def mm(a: Tensor, b: Tensor) -> Tensor:
        assert a.shape[1] == b.shape[0], f"mm {a.shape} @ {b.shape}"
        return Tensor((a.shape[0], b.shape[1]), dtype=a.dtype)

    def bmm(a: Tensor, b: Tensor) -> Tensor:
        assert a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1], f"bmm {a.shape} {b.shape}"
        return Tensor((a.shape[0], a.shape[1], b.shape[2]), dtype=a.dtype)

    def addmm(c: Tensor, a: Tensor, b: Tensor, **_: Any) -> Tensor:
        out = mm(a, b)
        assert c.shape in (out.shape, out.shape[1:]), f"addmm bias {c.shape} for {out.shape}"
        return out

    def baddbmm(c: Tensor, a: Tensor, b: Tensor) -> Tensor:
        out = bmm(a, b)
        assert c.shape == out.shape
        return out

    def randn(size: Any, dtype: str = "float32", device: str = "cpu") -> Tensor:
        shape = (size,) if isinstance(size, int) else tuple(size)
        return Tensor(shape, dtype=dtype)

    def conv(x: Tensor, w: Tensor, bias: Any, stride: Any, pad: Any, dil: Any, g: int) -> Tensor:
        assert x.shape[1] == w.shape[1] * g
        return Tensor((x.shape[0], w.shape[0]), dtype=x.dtype)

    def conv_backward(*args: Any) -> tuple[Any, Any, Any]:
        return (None, None, None)

    matmul = SimpleNamespace(allow_tf32=False)
    torch = SimpleNamespace(
        calls=calls,
        float16="float16", bfloat16="bfloat16", float32="float32", float64="float64",
        complex64="complex64", complex128="complex128", int8="int8", uint8="uint8",
        int32="int32", int64="int64",
        channels_last="channels_last", channels_last_3d="channels_last_3d",
        randn=randn, ones=randn,
        mm=record("mm", mm), bmm=record("bmm", bmm), addmm=record("addmm", addmm),
        baddbmm=record("baddbmm", baddbmm),
        _addmm_activation=record("_addmm_activation", addmm),
        nn=SimpleNamespace(functional=SimpleNamespace(
            conv2d=record("conv2d", conv), conv3d=record("conv3d", conv),
        )),
        ops=SimpleNamespace(aten=SimpleNamespace(
            convolution_backward=record("convolution_backward", conv_backward),
        )),
        backends=SimpleNamespace(cuda=SimpleNamespace(matmul=matmul)),
    )  # fmt: skip
    return torch
