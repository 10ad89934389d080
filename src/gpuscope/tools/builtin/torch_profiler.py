"""`torch_profiler`: torch.profiler around an unmodified Python program, then `gpuscope analyze`.

The hook (`_kineto_hook.py`, copied as `sitecustomize.py`) is injected through PYTHONPATH;
each Python process that imports torch records bounded windows (optimizer steps, or seconds for
a program without an optimizer; `_kineto_hook` says how) and writes each one as
`torch_profiler_output/<host>_<pid>[_w<N>].pt.trace.json.gz`; its notes (a window stopped by a
limit, none reached) become warnings in the manifest.
In teardown every trace is analysed with `gpuscope.analyze`; the summary goes next to it as
`<trace>.analysis.json`. An analysis that fails is a warning in the manifest, never a failed run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from gpuscope.errors import ConfigError
from gpuscope.tools.builtin import _kineto_hook
from gpuscope.tools.builtin._base import WrapperTool
from gpuscope.tools.tool import Layer, RunContext

OUTPUT = "torch_profiler_output"
HOOK_DIR = ".gpuscope/torch_hook"
TRACE_GLOB = "*.pt.trace.json*"
RANKS_FILE = "ranks_analysis.json"


class TorchProfilerTool(WrapperTool):
    def check(self, ctx: RunContext) -> None:
        """The window options (GPUSCOPE_TORCH_*) are checked before the command starts."""
        super().check(ctx)
        try:
            _kineto_hook.settings({**ctx.base_env, **self.env(ctx)})
        except ValueError as error:
            raise ConfigError(f"{self.name}: {error}") from None

    @contextmanager
    def open(self, ctx: RunContext) -> Iterator[Layer]:
        out = ctx.run_dir / OUTPUT
        out.mkdir(exist_ok=True)
        hook = _install_hook(ctx.run_dir / HOOK_DIR)
        self.setup(ctx)
        env = {**self.env(ctx), **_hook_env(hook, out, ctx)}
        try:
            yield Layer(tool=self.name, argv=self.prefix(ctx), env=env)
        finally:
            self.teardown(ctx)
            analyze_traces(out, ctx)


def _install_hook(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_bytes(Path(_kineto_hook.__file__).read_bytes())
    return folder


def _hook_env(hook: Path, out: Path, ctx: RunContext) -> dict[str, str]:
    existing = ctx.base_env.get("PYTHONPATH", "")
    path = f"{hook}{os.pathsep}{existing}" if existing else str(hook)
    return {"PYTHONPATH": path, _kineto_hook.DIR_VAR: str(out)}


def analyze_traces(out: Path, ctx: RunContext) -> None:
    """Every trace, the job's ranks' too (`rank<R>/torch_profiler_output/`, run/ranks.py);
    with several ranks, the cross-rank report as `ranks_analysis.json` in the run directory."""
    from gpuscope.rank_folders import rank_folders

    folders = [out, *(f / OUTPUT for f in rank_folders(ctx.run_dir) if (f / OUTPUT).is_dir())]
    for folder in folders:
        for kind in ("error", "notes"):
            for path in sorted(folder.glob(f"*.{kind}.txt")):
                where = path.relative_to(ctx.run_dir) if folder != out else path.name
                for line in path.read_text().splitlines():
                    ctx.notes.warn(f"torch_profiler: {where}: {line.strip()}")
    traces = sorted(p for folder in folders for p in folder.glob(TRACE_GLOB))
    if not traces:
        ctx.notes.warn(
            "torch_profiler: no trace was written; the program must be Python, import torch, "
            "reach a window (see the notes above) and exit normally (not python -I/-S, not "
            "os._exit or kill -9)"
        )
    outcomes = [_analyze_one(trace, ctx) for trace in traces]
    if len(folders) > 2:
        _analyze_ranks([o for o in outcomes if o is not None], ctx)


def _analyze_one(trace: Path, ctx: RunContext) -> Any:
    """The trace's report beside it; returns the outcome (with the rank summary) or None."""
    try:
        from gpuscope.errors import ReaderError
        from gpuscope.ranks.work import run_task, task_of
        from gpuscope.trace.registry import find_sources

        outcome = run_task(task_of(find_sources(str(trace))[0]))
        if outcome.error is not None:
            raise ReaderError(outcome.error)
        summary = trace.with_name(trace.name.split(".pt.trace")[0] + ".analysis.json")
        summary.write_text(json.dumps(_plain(outcome.report), indent=2, default=str) + "\n")
        return outcome
    except Exception as error:  # the trace is kept; its analysis is best effort
        problem = f"{type(error).__name__}: {error}"
        ctx.notes.warn(f"torch_profiler: gpuscope analyze {trace.name}: {problem}")
        return None


def _analyze_ranks(outcomes: list[Any], ctx: RunContext) -> None:
    """The first trace of each rank, across ranks (gpuscope.ranks) -> ranks_analysis.json."""
    try:
        from gpuscope.ranks.api import analyze_outcomes

        first: dict[int, Any] = {}
        for o in outcomes:
            if o.summary is not None and o.summary.rank is not None:
                first.setdefault(o.summary.rank, o)
        result = analyze_outcomes(first[r] for r in sorted(first))
        if result.ranks is not None:
            text = json.dumps(result.ranks, indent=1) + "\n"
            (ctx.run_dir / RANKS_FILE).write_text(text, encoding="utf-8")
    except Exception as error:  # best effort, as every analysis of a run
        ctx.notes.warn(f"torch_profiler: cross-rank analysis: {type(error).__name__}: {error}")


def _plain(analysis: Any) -> Any:
    """The analysis as JSON-able data, whichever shape the analysis API returns."""
    for method in ("to_json_dict", "to_dict", "as_dict"):
        if callable(getattr(analysis, method, None)):
            return getattr(analysis, method)()
    if callable(getattr(analysis, "to_json", None)):
        return json.loads(analysis.to_json())
    if is_dataclass(analysis) and not isinstance(analysis, type):
        return asdict(analysis)
    return analysis
