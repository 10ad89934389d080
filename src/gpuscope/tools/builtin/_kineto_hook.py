"""gpuscope's torch.profiler hook for unmodified Python programs.

The torch_profiler tool copies this file into the run directory as `sitecustomize.py` and puts
that directory first on PYTHONPATH, so every Python process of the program imports it at
startup. It does nothing until the process imports torch. Then it records bounded windows, not
the whole process (a whole training run makes a huge trace, unbounded memory and a slow export
at exit):

- steps (training): optimizer steps are counted through torch's global optimizer step hook
  (`torch.optim.optimizer.register_optimizer_step_post_hook`); after `wait` steps the profiler
  warms up for `warmup` steps and records `active` steps (torch.profiler.schedule), `repeat`
  times; each window is written when it ends;
- time (inference, no optimizer): record `duration_s` seconds starting `start_s` seconds after
  torch was imported (started and stopped on the main thread, through a signal, because
  torch.profiler records the CPU operators of the thread that started it);
- auto (default): steps as soon as an optimizer steps; the time window when none has stepped by
  `start_s`. Until one of them opens, the program is recorded from torch's import (a fallback):
  dropped when a bounded window opens or after `max_record_s`, written at exit when the program
  ended before any window — a short program still gets its whole trace;
- all: the whole process, as before.

Limits: a window still recording `max_record_s` seconds after it started, or whose trace would
make the traces written so far exceed `max_mb` (estimated from the bytes per recorded second of
the windows already written), stops early and is written, with a note; no window starts once
`max_mb` is reached. At exit — a SIGTERM (when the program has no handler of its own) becomes a
normal exit — a window being recorded is written; nothing else remains to export, so the process
ends within seconds. Notes and errors go to files next to the traces, never to the program's
output. The standard library is all it imports; a sitecustomize it hides on sys.path still runs.

Options, as environment variables (the tool's env_vars): GPUSCOPE_TORCH_SCHEDULE (auto | steps |
time | all), GPUSCOPE_TORCH_WAIT (5), _WARMUP (2), _ACTIVE (3), _REPEAT (1), _START_S (10),
_DURATION_S (5), _MAX_RECORD_S (30), _MAX_MB (256), and GPUSCOPE_TORCH_RECORD_SHAPES (1),
_WITH_STACK (0), _PROFILE_MEMORY (0), _WITH_FLOPS (0).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from types import ModuleType
from typing import Any

DIR_VAR = "GPUSCOPE_TORCH_TRACE_DIR"
_OPTIONS = {
    "record_shapes": ("GPUSCOPE_TORCH_RECORD_SHAPES", "1"),
    "with_stack": ("GPUSCOPE_TORCH_WITH_STACK", "0"),
    "profile_memory": ("GPUSCOPE_TORCH_PROFILE_MEMORY", "0"),
    "with_flops": ("GPUSCOPE_TORCH_WITH_FLOPS", "0"),
}
MODES = ("auto", "steps", "time", "all")
# name -> (environment variable, default); integers for steps, floats for seconds and MB
WINDOW = {
    "wait": ("GPUSCOPE_TORCH_WAIT", 5),
    "warmup": ("GPUSCOPE_TORCH_WARMUP", 2),
    "active": ("GPUSCOPE_TORCH_ACTIVE", 3),
    "repeat": ("GPUSCOPE_TORCH_REPEAT", 1),
    "start_s": ("GPUSCOPE_TORCH_START_S", 10.0),
    "duration_s": ("GPUSCOPE_TORCH_DURATION_S", 5.0),
    "max_record_s": ("GPUSCOPE_TORCH_MAX_RECORD_S", 30.0),
    "max_mb": ("GPUSCOPE_TORCH_MAX_MB", 256.0),
}
MODE_VAR = "GPUSCOPE_TORCH_SCHEDULE"
# signal that runs the time window's start / stop on the main thread (a real-time signal on
# Linux: programs do not use them)
_WAKE = getattr(signal, "SIGRTMIN", 34) + 5 if sys.platform == "linux" else signal.SIGUSR2
_state: dict[str, Any] = {}


def _enabled(name: str, default: str) -> bool:
    return os.environ.get(name, default).strip().lower() not in ("", "0", "false", "no", "off")


def settings(environ: dict[str, str] | os._Environ[str] = os.environ) -> dict[str, Any]:
    """The window options from the environment; a bad value is a ValueError naming it."""
    mode = environ.get(MODE_VAR, "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise ValueError(f"{MODE_VAR}={mode}: expected one of {', '.join(MODES)}")
    found: dict[str, Any] = {"mode": mode}
    for key, (var, default) in WINDOW.items():
        text = environ.get(var, "").strip()
        try:
            value = type(default)(text) if text else default
        except ValueError:
            raise ValueError(f"{var}={text}: expected a number") from None
        if value < 0 or (key in ("active", "repeat", "max_record_s", "max_mb") and value <= 0):
            raise ValueError(f"{var}={text}: expected a positive number")
        found[key] = value
    return found


def trace_name(window: int = 1) -> str:
    """`[rank<R>_]<host>_<pid>[_w<N>].pt.trace.json.gz`: unique per process and window."""
    rank = os.environ.get("GPUSCOPE_RANK", os.environ.get("RANK"))
    prefix = f"rank{rank}_" if rank is not None else ""
    suffix = f"_w{window}" if window > 1 else ""
    return f"{prefix}{socket.gethostname()}_{os.getpid()}{suffix}.pt.trace.json.gz"


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


class Windows:
    """Which steps or seconds are recorded; every profiler call happens on the caller's thread
    (the optimizer's, or the main thread through the wake signal)."""

    def __init__(self, options: dict[str, Any], folder: str, clock: Callable[[], float]) -> None:
        self.options = options
        self.folder = folder
        self.clock = clock
        self.mode = options["mode"]
        self.lock = threading.RLock()
        self.steps = 0
        self.next_start = options["wait"]
        self.windows = 0  # windows started
        self.written_bytes = 0
        self.recorded_s = 0.0
        self.profiler: Any = None
        self.since = 0.0
        self.closed = False  # no more windows (a limit, or exit)
        self.notes: list[str] = []
        self.time_window_started = threading.Event()  # the timer counts the duration from here

    # --- the two schedules ---------------------------------------------------------------

    def begin(self) -> None:
        """At torch import: the whole process, or a first window that waits for no step."""
        if self.mode == "all":
            self._open(scheduled=False)
        elif self.mode in ("steps", "auto") and self.next_start == 0:
            self.mode = "steps"
            self._open(scheduled=True)
        elif self.mode == "auto":
            self._open_fallback()

    def on_step(self) -> None:
        """After each optimizer step (torch's global post hook)."""
        with self.lock:
            if self.mode not in ("steps", "auto"):
                return
            self.mode = "steps"
            self.steps += 1
            if self._fallback():
                if self.steps >= self.next_start:
                    self._drop_fallback()
                    self._open(scheduled=True)
                elif self.clock() - self.since > self.options["max_record_s"]:
                    self._drop_fallback()
            elif self.profiler is not None:
                self._step_window()
            elif not self.closed and self.steps >= self.next_start:
                self._open(scheduled=True)

    def on_time(self, what: str) -> None:
        """The time window's start / end (from the timer, run on the main thread)."""
        with self.lock:
            try:
                if what == "start" and self.mode in ("time", "auto") and self._fallback():
                    self._drop_fallback()  # may take a while: the timer waits for the start
                if what == "start" and self.mode in ("time", "auto") and self.profiler is None:
                    self.mode = "time"
                    self._open(scheduled=False)
                elif what == "stop" and self.mode == "time" and self.profiler is not None:
                    self._close()
            finally:
                if what == "start":
                    self.time_window_started.set()

    def at_exit(self) -> None:
        with self.lock:
            if self._fallback() and _state.get("sigterm"):
                self._drop_fallback()  # exit fast: the fallback may hold many seconds
                self.notes.append(
                    "stopped by SIGTERM before any bounded window opened: the fallback recording "
                    "of the whole program is not written (exiting fast)"
                )
            if self._fallback():
                why = self._nothing_recorded().replace("no window was recorded", "")
                self.notes.append(
                    f"no bounded window opened{why}: the whole program from torch's import is "
                    "recorded instead"
                )
            if self.profiler is not None:
                self._close()
            elif self.windows == 0 and self.mode != "all":
                self.notes.append(self._nothing_recorded())
            self.closed = True

    # --- windows -------------------------------------------------------------------------

    def _fallback(self) -> bool:
        return self.profiler is not None and getattr(self.profiler, "_gpuscope_fallback", False)

    def _open_fallback(self) -> None:
        """auto: record from torch's import until a bounded window opens (a short program's
        only trace)."""
        self.profiler = _new_profiler(None, self._ready)
        self.profiler._gpuscope_scheduled = False
        self.profiler._gpuscope_fallback = True
        self.profiler.start()
        self.since = self.clock()

    def _drop_fallback(self) -> None:
        """Stop the fallback recording without writing it: a bounded window takes over, or it
        ran past max_record_s."""
        profiler, self.profiler = self.profiler, None
        profiler._gpuscope_written = True  # nothing to export
        profiler.stop()

    def _open(self, scheduled: bool) -> None:
        if self.closed or self.windows >= (self.options["repeat"] if scheduled else 1):
            return
        if self.written_bytes >= self.options["max_mb"] * 2**20:
            self.closed = True
            self.notes.append(f"no window after window {self.windows}: the traces written "
                              f"reached {self.written_bytes / 2**20:.1f} MB (max_mb)")  # fmt: skip
            return
        self.windows += 1
        self.profiler = _new_profiler(self._schedule() if scheduled else None, self._ready)
        self.profiler._gpuscope_scheduled = scheduled
        self.profiler.start()
        self.since = self.clock()

    def _schedule(self) -> Any:
        import torch.profiler as tp

        warmup, active = self.options["warmup"], self.options["active"]
        return tp.schedule(wait=0, warmup=warmup, active=active, repeat=1)

    def _step_window(self) -> None:
        self.profiler.step()  # the schedule writes the window after its last active step
        if self.profiler is None:
            self.next_start = self.steps + self.options["wait"]
            if self.windows >= self.options["repeat"]:
                self.closed = True
            return
        reason = self._over_limit()
        if reason:
            self.notes.append(f"window {self.windows} stopped early: {reason}")
            self._close()
            self.closed = True

    def _over_limit(self) -> str:
        elapsed = self.clock() - self.since
        if elapsed > self.options["max_record_s"]:
            return f"recording for {elapsed:.1f} s (max_record_s {self.options['max_record_s']})"
        if self.recorded_s > 0:
            rate = self.written_bytes / self.recorded_s
            estimate = self.written_bytes + rate * elapsed
            if estimate > self.options["max_mb"] * 2**20:
                limit = self.options["max_mb"]
                return (f"its trace would make the traces written {estimate / 2**20:.1f} MB "
                        f"(max_mb {limit:g}, at {rate / 2**20:.2f} MB/s)")  # fmt: skip
        return ""

    def _close(self) -> None:
        """Stop the window being recorded; a scheduled one writes itself (on_trace_ready) unless
        it was still warming up (nothing recorded yet)."""
        profiler, self.profiler = self.profiler, None
        profiler.stop()
        if getattr(profiler, "_gpuscope_written", False):
            return
        if profiler._gpuscope_scheduled:
            self.notes.append(f"window {self.windows} ended while warming up: nothing recorded")
            return
        self._write(profiler)

    def _ready(self, profiler: Any) -> None:
        """on_trace_ready: the window ended (its last active step, or a stop while recording)."""
        self._write(profiler)
        if self.profiler is profiler:
            self.profiler = None

    def _write(self, profiler: Any) -> None:
        if getattr(profiler, "_gpuscope_written", False):
            return
        profiler._gpuscope_written = True
        path = os.path.join(self.folder, trace_name(self.windows))
        profiler.export_chrome_trace(path)
        self.recorded_s += max(self.clock() - self.since, 1e-3)
        with contextlib.suppress(OSError):
            self.written_bytes += os.path.getsize(path)

    def _nothing_recorded(self) -> str:
        if self.mode == "steps":
            need = self.options["wait"] + self.options["warmup"] + self.options["active"]
            return (f"no window was recorded: the process made {self.steps} optimizer steps, "
                    f"a window needs {need} (GPUSCOPE_TORCH_WAIT/WARMUP/ACTIVE)")  # fmt: skip
        return (f"no window was recorded: the process ended before the time window "
                f"(GPUSCOPE_TORCH_START_S={self.options['start_s']:g}) and made no optimizer "
                "step")  # fmt: skip


def _new_profiler(schedule: Any, ready: Callable[[Any], None]) -> Any:
    import torch.profiler as tp

    options = {key: _enabled(*env) for key, env in _OPTIONS.items()}
    with warnings.catch_warnings():  # torch's notes are not the program's output
        warnings.simplefilter("ignore")
        if schedule is None:
            return tp.profile(activities=list(tp.supported_activities()), **options)
        return tp.profile(
            activities=list(tp.supported_activities()),
            schedule=schedule,
            on_trace_ready=ready,
            **options,
        )


def _start() -> None:
    folder = os.environ.get(DIR_VAR)
    if not folder or "windows" in _state or _launcher_process():
        return
    try:
        windows = Windows(settings(), folder, time.monotonic)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _hook_steps(windows)
            windows.begin()
    except Exception as error:
        _note(folder, "error", f"could not start torch.profiler: {type(error).__name__}: {error}")
        return
    _state.update(windows=windows, pid=os.getpid(), folder=folder)
    atexit.register(_stop)
    _exit_on_sigterm()
    if windows.mode in ("time", "auto"):
        _start_timer(windows)


def _hook_steps(windows: Windows) -> None:
    if windows.mode not in ("steps", "auto"):
        return
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except ImportError:  # a torch without global optimizer hooks (< 2.0)
        if windows.mode == "steps":
            raise
        windows.mode = "time"
        return
    register_optimizer_step_post_hook(lambda optimizer, args, kwargs: _guarded(windows.on_step))


def _guarded(action: Callable[[], None]) -> None:
    """A profiler problem is noted, never raised into the program."""
    if os.getpid() != _state.get("pid"):
        return  # a forked child: the parent owns the profiler
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            action()
    except Exception as error:
        _note(_state["folder"], "error", f"torch.profiler: {type(error).__name__}: {error}")


def _start_timer(windows: Windows) -> None:
    """A daemon thread that wakes the main thread at the time window's start and end."""
    pending: list[str] = []
    main = threading.main_thread()

    def run_pending(signo: int = 0, frame: object = None) -> None:
        while pending:
            _guarded(partial(windows.on_time, pending.pop(0)))

    on_main = threading.current_thread() is main and signal.getsignal(_WAKE) == signal.SIG_DFL
    if on_main:
        signal.signal(_WAKE, run_pending)

    def wake(what: str) -> None:
        pending.append(what)
        if on_main and signal.getsignal(_WAKE) is run_pending and main.ident is not None:
            signal.pthread_kill(main.ident, _WAKE)
        else:  # no way to reach the main thread: act here (CPU ops of the main thread missed)
            if what == "start":
                windows.notes.append(
                    "the time window was started from a helper thread: the main thread's CPU "
                    "operators are not in its trace"
                )
            run_pending()

    def timer() -> None:
        time.sleep(windows.options["start_s"])
        if windows.mode not in ("time", "auto"):
            return
        wake("start")
        # the duration counts from the window's real start (dropping the fallback first can
        # hold the main thread for a while)
        windows.time_window_started.wait(timeout=windows.options["max_record_s"])
        time.sleep(windows.options["duration_s"])
        wake("stop")

    threading.Thread(target=timer, name="gpuscope-torch-window", daemon=True).start()


def _stop() -> None:
    windows = _state.get("windows")
    if windows is None or os.getpid() != _state.get("pid"):
        return  # a forked child inherited the profiler: the parent writes the trace
    _guarded(windows.at_exit)
    for note in windows.notes:
        _note(_state["folder"], "notes", note)


def _exit_on_sigterm() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signo: int, frame: object) -> None:
    del frame
    _state["sigterm"] = True
    raise SystemExit(128 + signo)


def _note(folder: str, kind: str, message: str) -> None:
    """Errors and notes go to files next to the traces (the program's own output stays clean)."""
    try:
        with open(os.path.join(folder, f"{os.getpid()}.{kind}.txt"), "a", encoding="utf-8") as f:
            f.write(message + "\n")
    except OSError:
        pass


def _launcher_process() -> bool:
    """In a multi-rank job (gpuscope's rank hook is on), a process without a rank is the
    launcher (torchrun's agent, mpirun): it trains nothing, its trace would be noise."""
    return bool(os.environ.get("GPUSCOPE_RANK_VARS")) and not os.environ.get("GPUSCOPE_RANK")


def _run_hidden_sitecustomize() -> None:
    """The next `sitecustomize.py` after this one on sys.path (the user's own)."""
    here = os.path.dirname(os.path.abspath(__file__))
    folders = [os.path.abspath(entry or os.getcwd()) for entry in sys.path]
    for folder in folders[folders.index(here) + 1 :] if here in folders else folders:
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


if __name__ == "__main__":
    pass
elif __name__ == "sitecustomize":
    install()
