"""Load a benchmark target from `path/to/file.py:function`.

The function is called with no arguments and returns either the callable to time, or
`(callable, args)`, or `(callable, args, kwargs)`:

    # bench_mm.py
    def matmul():
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        return torch.matmul, (a, a)

    $ gpuscope bench bench_mm.py:matmul
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuscope.errors import InputError

FORM = "path/to/file.py:function"


@dataclass(frozen=True)
class Target:
    """A callable to time with its inputs; `has_inputs` says whether the setup supplied them."""

    spec: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    has_inputs: bool = False
    path: Path | None = None


def parse(spec: str) -> tuple[Path, str]:
    """Split `file.py:function`; InputError naming the expected form otherwise."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name.isidentifier():
        raise InputError(f"bench target {spec!r}: expected {FORM}")
    file = Path(path)
    if not file.is_file():
        raise InputError(f"bench target {spec!r}: file {path} not found; expected {FORM}")
    return file, name


@contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        with suppress(ValueError):
            sys.path.remove(str(folder))


def _module(spec: str, file: Path) -> ModuleType:
    digest = hashlib.sha1(os.fsencode(file.resolve())).hexdigest()[:10]  # any name's bytes
    name = f"_gpuscope_target_{file.stem}_{digest}"
    loader_spec = importlib.util.spec_from_file_location(name, file)
    if loader_spec is None or loader_spec.loader is None:
        raise InputError(f"bench target {spec!r}: {file} is not an importable Python file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        with _importable_from(file.resolve().parent):
            loader_spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise InputError(
            f"bench target {spec!r}: importing {file} raised {_brief(error)}"
        ) from error
    return module


def _brief(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".rstrip(": ")


def _unpack(
    spec: str, result: Any
) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], bool]:
    if callable(result):
        return result, (), {}, False
    expected = "the callable to time, (callable, args) or (callable, args, kwargs)"
    if not isinstance(result, tuple) or not 2 <= len(result) <= 3 or not callable(result[0]):
        raise InputError(
            f"bench target {spec!r} returned {type(result).__name__}; expected {expected}"
        )
    args = result[1]
    kwargs = result[2] if len(result) == 3 else {}
    if not isinstance(args, tuple | list) or not isinstance(kwargs, dict):
        raise InputError(f"bench target {spec!r}: args must be a tuple or list and kwargs a dict")
    return result[0], tuple(args), dict(kwargs), True


def load(spec: str) -> Target:
    """Import the file, call the function, and return what it set up."""
    file, name = parse(spec)
    module = _module(spec, file)
    setup = getattr(module, name, None)
    if not callable(setup):
        found = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))
        raise InputError(
            f"bench target {spec!r}: {file} has no function {name!r}"
            + (f" (functions there: {', '.join(found)})" if found else "")
        )
    try:
        with _importable_from(file.resolve().parent):
            result = setup()
    except Exception as error:
        raise InputError(f"bench target {spec!r}: {name}() raised {_brief(error)}") from error
    fn, args, kwargs, has_inputs = _unpack(spec, result)
    return Target(spec, fn, args, kwargs, has_inputs, file)
