"""gpuscope: GPU performance toolkit for AMD (ROCm) and NVIDIA (CUDA).

Importing gpuscope is cheap: torch, numpy-heavy analysis and plotting load only when used.

    >>> import gpuscope
    >>> report = gpuscope.analyze("trace.json.gz")          # doctest: +SKIP
    >>> m = gpuscope.bench(torch.matmul, a, b)              # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuscope._version import __version__

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.capture.profile import ProfileResult
    from gpuscope.timing.ab import Comparison
    from gpuscope.timing.measurement import Measurement


def analyze(path: str, **options: Any) -> Analysis:
    """Read one trace file and analyse it; see `gpuscope.analysis.analyze.analyze_file`."""
    from gpuscope.analysis.analyze import analyze_file

    return analyze_file(path, **options)


def bench(fn: Any, *args: Any, **options: Any) -> Measurement:
    """Time `fn(*args)` on the GPU (or the CPU as a labelled fallback); see `gpuscope.timing`."""
    from gpuscope.timing.harness import bench as _bench

    return _bench(fn, *args, **options)


def profile(fn: Any, *args: Any, **options: Any) -> ProfileResult:
    """Profile `fn(*args)`: first call, warm-up, a scheduled torch.profiler window, the report;
    see `gpuscope.capture.profile`."""
    from gpuscope.capture.profile import profile as _profile

    return _profile(fn, *args, **options)


def compare(a: Any, b: Any, inputs: Any = (), **options: Any) -> Comparison:
    """A/B test two implementations: correctness, then interleaved timing and a verdict."""
    from gpuscope.timing.ab import compare as _compare

    return _compare(a, b, inputs, **options)


__all__ = ["__version__", "analyze", "bench", "compare", "profile"]
