"""gpuscope's torch.profiler hook for unmodified Python programs.

The torch_profiler tool copies this file into the run directory as `sitecustomize.py` and puts
that directory first on PYTHONPATH, so every Python process of the program imports it at
startup. It does nothing until the process imports torch; then it starts torch.profiler with
every activity the build supports (CPU and the GPU's), and at exit writes one Kineto trace per
process into $GPUSCOPE_TORCH_TRACE_DIR. A SIGTERM (when the program has no handler of its own)
becomes a normal exit so that the trace is still written. The standard library is all it
imports, so it works in whatever Python runs the program; a sitecustomize that this one hides
on sys.path still runs.

Options, as environment variables (the tool's env_vars): GPUSCOPE_TORCH_RECORD_SHAPES (1),
GPUSCOPE_TORCH_WITH_STACK (0), GPUSCOPE_TORCH_PROFILE_MEMORY (0), GPUSCOPE_TORCH_WITH_FLOPS (0).
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import os
import signal
import socket
import sys
import threading
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

DIR_VAR = "GPUSCOPE_TORCH_TRACE_DIR"
_OPTIONS = {
    "record_shapes": ("GPUSCOPE_TORCH_RECORD_SHAPES", "1"),
    "with_stack": ("GPUSCOPE_TORCH_WITH_STACK", "0"),
    "profile_memory": ("GPUSCOPE_TORCH_PROFILE_MEMORY", "0"),
    "with_flops": ("GPUSCOPE_TORCH_WITH_FLOPS", "0"),
}
_state: dict[str, Any] = {}


def _enabled(name: str, default: str) -> bool:
    return os.environ.get(name, default).strip().lower() not in ("", "0", "false", "no", "off")


def trace_name() -> str:
    """`[rank<R>_]<host>_<pid>.pt.trace.json.gz`: unique per process, rank when distributed."""
    rank = os.environ.get("RANK")
    prefix = f"rank{rank}_" if rank is not None else ""
    return f"{prefix}{socket.gethostname()}_{os.getpid()}.pt.trace.json.gz"


class _TorchLoader(importlib.abc.Loader):
    """torch's own loader, plus: start the profiler once torch has finished importing."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        _start()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader the other finders give for `torch`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _TorchLoader(spec.loader)
        return spec


def _start() -> None:
    folder = os.environ.get(DIR_VAR)
    if not folder or "profiler" in _state:
        return
    try:
        with warnings.catch_warnings():  # torch's notes are not the program's output
            warnings.simplefilter("ignore")
            profiler = _new_profiler()
            profiler.start()
    except Exception as error:
        _note_error(folder, f"could not start torch.profiler: {type(error).__name__}: {error}")
        return
    _state.update(profiler=profiler, pid=os.getpid(), folder=folder)
    atexit.register(_stop)
    _exit_on_sigterm()


def _new_profiler() -> Any:
    import torch.profiler as tp

    options = {key: _enabled(*env) for key, env in _OPTIONS.items()}
    return tp.profile(activities=list(tp.supported_activities()), **options)


def _stop() -> None:
    profiler = _state.pop("profiler", None)
    if profiler is None or os.getpid() != _state.get("pid"):
        return  # a forked child inherited the profiler: the parent writes the trace
    folder = _state["folder"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            profiler.stop()
            profiler.export_chrome_trace(os.path.join(folder, trace_name()))
    except Exception as error:
        _note_error(folder, f"could not write the trace: {type(error).__name__}: {error}")


def _exit_on_sigterm() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signo: int, frame: object) -> None:
    del frame
    raise SystemExit(128 + signo)


def _note_error(folder: str, message: str) -> None:
    """Errors go to a file next to the traces (the program's own output stays clean)."""
    try:
        with open(os.path.join(folder, f"{os.getpid()}.error.txt"), "a", encoding="utf-8") as f:
            f.write(message + "\n")
    except OSError:
        pass


def _run_hidden_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder == here or not os.path.isfile(candidate):
            continue
        spec = importlib.util.spec_from_file_location("_gpuscope_hidden_sitecustomize", candidate)
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        return


def install() -> None:
    if os.environ.get(DIR_VAR) and "torch" not in sys.modules:
        sys.meta_path.insert(0, _TorchFinder())
    _run_hidden_sitecustomize()


if __name__ == "sitecustomize":
    install()
