"""gpuscope: GPU performance toolkit for AMD (ROCm) and NVIDIA (CUDA).

Importing gpuscope is cheap: numpy, pandas, torch and plotting load only when used.

    >>> import gpuscope
    >>> t = gpuscope.load("trace.json.gz")                  # doctest: +SKIP
    >>> t.kernels()                                         # one row per kernel (pandas)
    >>> a = gpuscope.analyze("trace.json.gz")               # doctest: +SKIP
    >>> a.tables()["top_kernels"], a.findings, a.plot.breakdown()
    >>> m = gpuscope.bench(torch.matmul, a, b)              # doctest: +SKIP

The DataFrames, plots and Jupyter views need the `notebook` extra
(`pip install 'gpuscope[notebook]'`); `%load_ext gpuscope` adds `%%gpuscope_profile` and
`%gpuscope_bench` to IPython.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from gpuscope._version import __version__

if TYPE_CHECKING:
    from collections.abc import Callable

    from gpuscope.capture.profile import ProfileResult
    from gpuscope.frames.load import TraceSet
    from gpuscope.frames.results import AnalysisResult, AnalysisSet, CountersResult, DiffResult
    from gpuscope.frames.trace import TraceFrame
    from gpuscope.timing.ab import Comparison
    from gpuscope.timing.measurement import Measurement


def load(*paths: str | os.PathLike[str]) -> TraceFrame | TraceSet:
    """The traces in `paths` (files or folders of any format `gpuscope analyze` reads) as
    DataFrames: a `TraceFrame` for one trace, a `TraceSet` for several.

        >>> t = gpuscope.load("trace.json.gz")              # doctest: +SKIP
        >>> t.kernels().groupby("category").duration_ns.sum()
    """
    from gpuscope.frames.load import load as _load

    _notebook_views()
    return _load(*paths)


def analyze(
    *paths: str | os.PathLike[str],
    categories: str | os.PathLike[str] | None = None,
    top: int = 15,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "local",
    workers: int | None = None,
) -> AnalysisResult | AnalysisSet:
    """Read the traces in `paths` and analyse them.

    One trace gives an `AnalysisResult` (`.to_dict()` the report, `.tables()`, `.findings`,
    `.plot`, `.analysis` the full `Analysis`); several (a folder of ranks) an `AnalysisSet` with
    the cross-rank report. Options (an unknown one is a TypeError): `categories` (a JSON file
    of extra kernel category rules), `top` (kernels in `top_kernels`, 15), `progress` (a
    callback `(done, total)`, one trace), and for several traces where they are analysed, as
    `gpuscope analyze --engine / --workers`: `engine` "local" (a process pool), "ray" or "dask"
    (their extras), `workers` (processes, or tasks in flight on a cluster).

        >>> a = gpuscope.analyze("trace.json.gz")           # doctest: +SKIP
        >>> a.findings[0].action
        >>> job = gpuscope.analyze("run/", engine="ray")     # doctest: +SKIP
    """
    from gpuscope.errors import ConfigError, InputError
    from gpuscope.frames import results
    from gpuscope.ranks.engine import ENGINES
    from gpuscope.trace.registry import sources as sources_of

    _notebook_views()
    if not paths:
        raise InputError("analyze(): give at least one trace file or folder")
    if engine not in ENGINES:
        raise ConfigError(f"analyze(engine={engine!r}): expected one of {', '.join(ENGINES)}")
    rules_file = None if categories is None else os.fspath(categories)
    sources = sources_of(os.fspath(p) for p in paths)
    if len(sources) == 1:
        from gpuscope.analysis.categories import load_rules
        from gpuscope.analysis.pipeline import analyze as _analyze
        from gpuscope.trace.registry import read_source

        trace = read_source(sources[0], progress)
        return results.AnalysisResult(_analyze(trace, load_rules(rules_file), top))
    from gpuscope.notebook import analysis_set
    from gpuscope.ranks.api import analyze_job

    job = analyze_job([os.fspath(p) for p in paths], categories=rules_file, reports=True,
                      engine=engine, workers=workers, top=top)  # fmt: skip
    found: AnalysisSet = analysis_set(job)
    return found


def diff_profiles(before: Any, after: Any) -> DiffResult:
    """Compare two profiles (`gpuscope diff`): each an `AnalysisResult`, an `Analysis` or a
    trace path. (`gpuscope.diff` is the package: `gpuscope.diff.diff` takes two `Analysis`.)

        >>> d = gpuscope.diff_profiles("before.json.gz", "after.json.gz")   # doctest: +SKIP
        >>> d                                        # its verdict, in one line
        >>> d.table("kernels.changes")               # every kernel matched, before and after
    """
    from gpuscope.diff import diff as _diff
    from gpuscope.notebook import diff_result

    _notebook_views()
    result: DiffResult = diff_result(_diff(_analysis(before), _analysis(after)))
    return result


def _analysis(value: Any) -> Any:
    from gpuscope.errors import InputError
    from gpuscope.frames.results import AnalysisResult

    if isinstance(value, (str, os.PathLike)):
        value = analyze(value)
    if isinstance(value, AnalysisResult):
        return value.analysis
    if type(value).__name__ == "Analysis":
        return value
    kind = type(value).__name__
    raise InputError(f"diff_profiles(): expected a trace path or an analysis, got {kind}")


def analyze_counters(*paths: str | os.PathLike[str], arch: str | None = None,
             peaks: str | None = None, device: str | None = None) -> CountersResult:  # fmt: skip
    """Hardware counters (`gpuscope counters`: rocprof, rocprofv3, ncu outputs in `paths`):
    metrics per kernel, the roofline, advice. `arch` / `device` name the GPU when the files do not.

        >>> c = gpuscope.analyze_counters("ncu_details.csv")        # doctest: +SKIP
        >>> c.plot.roofline()
    """
    from gpuscope.counters.pipeline import analyse_counters
    from gpuscope.notebook import counters_result
    from gpuscope.trace.registry import read_source, sources

    _notebook_views()
    traces = [read_source(s) for s in sources(os.fspath(p) for p in paths)]
    result: CountersResult = counters_result(analyse_counters(traces, arch, peaks, device))
    return result


def bench(fn: Any, *args: Any, **options: Any) -> Measurement:
    """Time `fn(*args)` on the GPU (or the CPU as a labelled fallback); see `gpuscope.timing`.

    >>> m = gpuscope.bench(torch.matmul, a, b)          # doctest: +SKIP
    >>> m.median_us, m.stats.ci_low
    """
    from gpuscope.timing.harness import bench as _bench

    _notebook_views()
    return _bench(fn, *args, **options)


def profile(fn: Any, *args: Any, **options: Any) -> ProfileResult:
    """Profile `fn(*args)`: first call, warm-up, a scheduled torch.profiler window, the report;
    see `gpuscope.capture.profile`."""
    from gpuscope.capture.profile import profile as _profile

    _notebook_views()
    return _profile(fn, *args, **options)


def compare(a: Any, b: Any, inputs: Any = (), **options: Any) -> Comparison:
    """A/B test two implementations: correctness, then interleaved timing and a verdict."""
    from gpuscope.timing.ab import compare as _compare

    _notebook_views()
    return _compare(a, b, inputs, **options)


def _notebook_views() -> None:
    """Inside IPython, show gpuscope's results as their reports (once; nothing elsewhere)."""
    if "IPython" in sys.modules:
        from gpuscope.notebook import register_views

        register_views()


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext gpuscope`: the `%%gpuscope_profile` and `%gpuscope_bench` magics."""
    from gpuscope.notebook import load_ipython_extension as _load_extension

    _load_extension(ipython)


__all__ = [
    "__version__", "analyze", "analyze_counters", "bench", "compare", "diff_profiles", "load",
    "profile",
]  # fmt: skip
