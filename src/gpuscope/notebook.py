"""gpuscope in IPython / Jupyter: `%load_ext gpuscope`, its magics, and how results show.

    %load_ext gpuscope

    %%gpuscope_profile --iterations 5
    y = model(x)                      # the cell: first call, warm-up, a profiler window, report

    %gpuscope_bench torch.matmul(a, b)        # GPU-correct timing, like %timeit

Results show as their report's summary (self-contained HTML, no scripts, nothing fetched) and
as a one-line text. The wrappers (`gpuscope.frames.results`) carry `_repr_html_`; the plain
result types of the lower layers (`Analysis`, `Diff`, `CounterAnalysis`, `Measurement`,
`Comparison`, `ProfileResult`) get the same views through IPython's display formatters,
registered here by type name, so those modules never import this one (nor IPython).

This module is an interface, like the command line (the top layer): it runs the profiler
(`gpuscope.capture`) and gives each wrapper the layout of its package (`diff`, `counters`,
`ranks`), which `gpuscope.frames` — their neighbour in the layer below — does not import.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

# module, type name → how to wrap it for display
_VIEWS = {
    ("gpuscope.analysis.analyze", "Analysis"): "analysis",
    ("gpuscope.diff.compare", "Diff"): "diff",
    ("gpuscope.counters.analysis", "CounterAnalysis"): "counters",
    ("gpuscope.timing.measurement", "Measurement"): "bench",
    ("gpuscope.timing.ab", "Comparison"): "bench",
    ("gpuscope.capture.profile", "ProfileResult"): "profile",
}
_registered: set[int] = set()


def wrap(value: Any, kind: str) -> Any:
    """The notebook wrapper of a plain result (`kind` as in `_VIEWS`)."""
    from gpuscope.frames import results

    if kind == "analysis":
        return results.AnalysisResult(value)
    if kind == "diff":
        return diff_result(value)
    if kind == "counters":
        return counters_result(value)
    if kind == "profile":
        return results.ProfileView(value)
    return results.BenchResult(value)


def diff_result(diff: Any) -> Any:
    """A `gpuscope.diff.Diff` as a `DiffResult` drawn by the diff's own layout."""
    from gpuscope.diff.layout import diff_document
    from gpuscope.frames.results import DiffResult

    return DiffResult(diff, lambda report: diff_document(report, brief=True))


def counters_result(report: Any) -> Any:
    """A `CounterAnalysis` as a `CountersResult` drawn by the counters' layout."""
    from gpuscope.counters.views import counters_document
    from gpuscope.frames.results import CountersResult

    return CountersResult(report, counters_document)


def analysis_set(job: Any) -> Any:
    """A `gpuscope.ranks.api.JobResult` as an `AnalysisSet`, its cross-rank section first."""
    from gpuscope.frames.results import AnalysisSet
    from gpuscope.ranks.section import section

    return AnalysisSet(job, section)


def register_views(ipython: Any = None) -> None:
    """Show the plain result types as their wrappers do, in this IPython shell (once)."""
    ipython = ipython or _shell()
    if ipython is None or id(ipython) in _registered:
        return
    formatters = ipython.display_formatter.formatters
    for (module, name), kind in _VIEWS.items():
        formatters["text/html"].for_type_by_name(module, name, _html(kind))
        formatters["text/plain"].for_type_by_name(module, name, _plain(kind))
    # the plots are bare matplotlib Figures (no pyplot): shown as PNG without `%matplotlib`
    formatters["image/png"].for_type_by_name("matplotlib.figure", "Figure", _png)
    _registered.add(id(ipython))


def _png(figure: Any) -> bytes:
    from IPython.core.pylabtools import print_figure

    data: bytes = print_figure(figure, "png", bbox_inches="tight")  # type: ignore[no-untyped-call]
    return data


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _html(kind: str) -> Any:
    def draw(value: Any) -> str:
        html: str = wrap(value, kind)._repr_html_()
        return html

    return draw


def _plain(kind: str) -> Any:
    def draw(value: Any, printer: Any, cycle: bool) -> None:
        printer.text(repr(wrap(value, kind)))

    return draw


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext gpuscope`: the magics, and the results' views."""
    register_views(ipython)
    ipython.register_magic_function(gpuscope_profile, "cell", "gpuscope_profile")
    ipython.register_magic_function(gpuscope_bench, "line", "gpuscope_bench")


def _profile_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%%gpuscope_profile", add_help=False, exit_on_error=False)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", default="gpuscope-profile")
    parser.add_argument("--device", choices=("auto", "gpu", "cpu"), default="auto")
    parser.add_argument("--name", default="cell")
    return parser


def _parse(parser: argparse.ArgumentParser, line: str) -> argparse.Namespace:
    from gpuscope.errors import InputError

    try:
        args, rest = parser.parse_known_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as error:
        raise InputError(f"{parser.prog}: {error}") from None
    if rest and parser.prog.startswith("%%"):
        raise InputError(f"{parser.prog}: unknown options {' '.join(rest)}")
    args.rest = rest
    return args


def gpuscope_profile(line: str, cell: str) -> Any:
    """`%%gpuscope_profile [--iterations N] [--warmup N] [--out DIR] [--device auto|gpu|cpu]`:
    run the cell once (its first call, timed alone), `--warmup` times, then `--iterations`
    times inside one torch.profiler window (`gpuscope.profile`), and show the report. The
    trace and the table stay in `--out`; the result is returned (`_.analysis` ...)."""
    from gpuscope.capture.profile import profile

    args = _parse(_profile_parser(), line)
    ipython = _shell()
    namespace = ipython.user_ns if ipython is not None else {}
    code = compile(cell, "<gpuscope_profile cell>", "exec")

    def run_cell() -> None:
        exec(code, namespace)

    result = profile(run_cell, iterations=args.iterations, warmup=args.warmup,
                     out_dir=args.out, name=args.name, device=args.device)  # fmt: skip
    return wrap(result, "profile")


def _bench_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%gpuscope_bench", add_help=False, exit_on_error=False)
    parser.add_argument("--mode", default=None)
    parser.add_argument("--target-ci", type=float, default=None, dest="target_ci")
    parser.add_argument("--budget", type=float, default=None, dest="budget_s")
    parser.add_argument("--name", default=None)
    return parser


def gpuscope_bench(line: str) -> Any:
    """`%gpuscope_bench [--mode M] [--target-ci F] [--budget S] [--name N] EXPR`: time
    `EXPR` with gpuscope's bench harness (device events with a guard kernel on a GPU; the wall
    clock, labelled, on a CPU) until its median is known to `--target-ci` (or `--budget`
    seconds pass); show it."""
    from gpuscope.errors import InputError
    from gpuscope.timing.harness import bench

    args = _parse(_bench_parser(), line)
    expr = " ".join(args.rest).strip()
    if not expr:
        raise InputError("%gpuscope_bench: give an expression to time, e.g. torch.mm(a, b)")
    ipython = _shell()
    namespace = ipython.user_ns if ipython is not None else {}
    code = compile(expr, "<gpuscope_bench>", "eval")

    def call() -> Any:
        return eval(code, namespace)

    options = {k: v for k, v in vars(args).items() if k != "rest" and v is not None}
    options.setdefault("name", expr)
    return wrap(bench(call, **options), "bench")
