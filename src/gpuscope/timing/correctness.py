"""Correctness of B against A (or of both against a float64 reference), before any timing.

Outputs may be tensors (torch, on any device), numpy arrays, Python numbers, or tuples, lists
and dicts of them. torch is never imported here: tensors are recognised by duck typing.
Default tolerances follow the dtype (as torch.testing.assert_close does); integers and booleans
must match exactly; NaN never passes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np

# dtype name suffix → (rtol, atol)
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
    "float8_e4m3fn": (0.125, 1e-2),
    "float8_e5m2": (0.25, 1e-2),
}
EXACT = (0.0, 0.0)


class Correctness(msgspec.Struct, frozen=True, kw_only=True):
    """Outcome of one output comparison. `against` is "a" or "reference"."""

    checked: bool
    ok: bool
    against: str = "a"
    max_abs: float | None = None
    max_rel: float | None = None
    rtol: float | None = None
    atol: float | None = None
    detail: str = ""


def _is_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def dtype_name(x: Any) -> str:
    return str(getattr(x, "dtype", type(x).__name__)).rsplit(".", 1)[-1]


def tolerance(*leaves: Any) -> tuple[float, float]:
    """The loosest default tolerance over the leaves' dtypes; exact for integers."""
    found = [TOLERANCES.get(dtype_name(x)) for x in leaves]
    known = [t for t in found if t is not None]
    if not known:
        return (1e-7, 1e-7) if any(isinstance(x, float) for x in leaves) else EXACT
    return max(t[0] for t in known), max(t[1] for t in known)


def to_numpy(x: Any) -> np.ndarray[Any, Any]:
    """float64 (or complex128) numpy copy of a tensor, array or number."""
    if _is_tensor(x):
        x = x.detach()
        x = (x if x.is_complex() else x.double()).cpu().numpy()
    arr = np.asarray(x)
    return arr.astype(np.complex128 if np.iscomplexobj(arr) else np.float64)


def snapshot(x: Any) -> Any:
    """A private copy of inputs or outputs, so in-place calls cannot change what we compare."""
    if _is_tensor(x):
        return x.detach().clone()
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, tuple | list):
        return type(x)(snapshot(v) for v in x)
    if isinstance(x, dict):
        return {k: snapshot(v) for k, v in x.items()}
    try:
        return copy.deepcopy(x)
    except Exception:  # not copyable (handles, modules): compare it as it is
        return x


def upcast(x: Any) -> Any:
    """Inputs for a float64 reference: floating tensors/arrays become float64, rest unchanged."""
    if _is_tensor(x):
        return x.double() if x.is_floating_point() else x
    if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating):
        return x.astype(np.float64)
    if isinstance(x, tuple | list):
        return type(x)(upcast(v) for v in x)
    if isinstance(x, dict):
        return {k: upcast(v) for k, v in x.items()}
    return x


def leaves(x: Any, path: str = "out") -> list[tuple[str, Any]]:
    """(path, leaf) pairs of a nested output."""
    if isinstance(x, tuple | list):
        return [pair for i, v in enumerate(x) for pair in leaves(v, f"{path}[{i}]")]
    if isinstance(x, dict):
        return [pair for k in sorted(x, key=str) for pair in leaves(x[k], f"{path}[{k!r}]")]
    return [(path, x)]


def compare_outputs(
    got: Any,
    want: Any,
    rtol: float | None = None,
    atol: float | None = None,
    against: str = "a",
) -> Correctness:
    """Compare `got` (B) with `want` (A or the reference) leaf by leaf."""
    if got is None and want is None:
        return Correctness(checked=False, ok=True, against=against, detail="no outputs")
    g, w = leaves(got), leaves(want)
    if [p for p, _ in g] != [p for p, _ in w]:
        return Correctness(checked=True, ok=False, against=against, detail="structure differs")
    worst = Correctness(checked=True, ok=True, against=against, max_abs=0.0, max_rel=0.0)
    for (path, a), (_, b) in zip(g, w, strict=True):
        worst = _merge(worst, _leaf(path, a, b, rtol, atol, against))
    return worst


def _leaf(
    path: str, got: Any, want: Any, rtol: float | None, atol: float | None, against: str
) -> Correctness:
    default = tolerance(got, want)
    rt = default[0] if rtol is None else rtol
    at = default[1] if atol is None else atol
    a, b = to_numpy(got), to_numpy(want)
    if a.shape != b.shape:
        detail = f"{path}: shape {a.shape} vs {b.shape}"
        return Correctness(checked=True, ok=False, against=against, detail=detail)
    diff = np.abs(a - b)
    finite = bool(np.isfinite(a).all() and np.isfinite(b).all())
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = np.abs(b)
    rel = diff[scale > 0] / scale[scale > 0]
    max_rel = float(rel.max()) if rel.size else 0.0
    ok = finite and bool(np.all(diff <= at + rt * scale))
    detail = "" if ok else f"{path}: " + ("NaN or inf" if not finite else "values differ")
    return Correctness(
        checked=True,
        ok=ok,
        against=against,
        max_abs=max_abs,
        max_rel=max_rel,
        rtol=rt,
        atol=at,
        detail=detail,
    )


def _merge(x: Correctness, y: Correctness) -> Correctness:
    return Correctness(
        checked=True,
        ok=x.ok and y.ok,
        against=x.against,
        max_abs=max(x.max_abs or 0.0, y.max_abs or 0.0),
        max_rel=max(x.max_rel or 0.0, y.max_rel or 0.0),
        rtol=y.rtol if y.rtol is not None else x.rtol,
        atol=y.atol if y.atol is not None else x.atol,
        detail=x.detail or y.detail,
    )


def outputs_of(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call `fn` on private copies of the inputs and keep a private copy of what it returns."""
    return snapshot(fn(*snapshot(args), **snapshot(kwargs)))
