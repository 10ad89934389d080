"""`gpuscope bench`: time a callable on the GPU (or the CPU, labelled), or A/B two of them.

gpuscope bench kernels.py:setup_matmul --mode hot --json mm.json
gpuscope bench --compare old.py:setup new.py:setup --fail-if-slower 2
gpuscope bench kernels.py:setup_matmul --baseline mm.json --fail-if-slower 5
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpuscope.commands._output import check
from gpuscope.commands._record import add_options
from gpuscope.output import is_stdout, write
from gpuscope.text import printable_data

HELP = "time a callable (file.py:function) on the GPU, or compare two with a verdict"

MODES = ("auto", "hot", "cold", "graph", "kernel", "cpu")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        metavar="FILE.py:FUNCTION",
        help="function that returns the callable to time, or (callable, args[, kwargs])",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="auto",
        help="what to time (default: hot on a GPU, else cpu)",
    )
    parser.add_argument(
        "--state",
        choices=("sustained", "burst", "both"),
        default="sustained",
        help="power state to report: sustained (default: load the GPU until a power-limited "
        "callable settles, as in a real loop), burst (short run at boost clocks), or both",
    )
    parser.add_argument(
        "--sustain-budget",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="longest load phase before sampling in the sustained state (default 15)",
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="write the result (schema gpuscope.bench/1)"
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="A/B test two targets: correctness, then interleaved timing",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="compare with a measurement written earlier by --json",
    )
    parser.add_argument(
        "--allow-mismatch", action="store_true", help="allow a baseline from other hardware or mode"
    )
    parser.add_argument(
        "--fail-if-slower",
        type=float,
        metavar="PCT",
        help="exit 1 if B (or this run) is slower by more than PCT %% with 95 %% confidence",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=1.0,
        metavar="PCT",
        help="A/B: differences below PCT %% count as SAME (default 1)",
    )
    parser.add_argument(
        "--target-ci",
        type=float,
        default=1.0,
        metavar="PCT",
        help="stop when the median's 95 %% CI is within ±PCT %% (default 1)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="time budget for sampling (default 1; 2 for --compare)",
    )
    parser.add_argument(
        "--flush", action="store_true", help="kernel mode: flush the cache before each call"
    )
    parser.add_argument("--flops", type=float, metavar="N", help="FLOPs per call, for TFLOP/s")
    parser.add_argument("--bytes", type=float, metavar="N", help="bytes moved per call, for GB/s")
    parser.add_argument(
        "--transformer",
        metavar="SEQ,HIDDEN[,LAYERS]",
        help="estimate FLOPs per call of dense transformer layers",
    )
    parser.add_argument(
        "--no-peaks", action="store_true", help="do not measure the device's peaks for %% of peak"
    )
    add_options(parser)


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    _check_usage(args)
    console = Console(stderr=is_stdout(args.json))  # `--json -`: that JSON alone on stdout
    if args.compare:
        return _compare(args, console)
    return _single(args, console)


def _check_usage(args: argparse.Namespace) -> None:
    from gpuscope.errors import ConfigError

    if bool(args.target) == bool(args.compare):
        raise ConfigError("give one target FILE.py:FUNCTION, or --compare A B (not both)")
    if args.compare and args.baseline:
        raise ConfigError("--baseline compares one target with a stored run; drop --compare")
    if args.fail_if_slower is not None and not (args.compare or args.baseline):
        raise ConfigError(
            "--fail-if-slower needs something to compare with: --compare or --baseline"
        )
    scripts = [spec.rpartition(":")[0] for spec in [args.target, *(args.compare or [])] if spec]
    from gpuscope.commands._record import checked, db_output

    check(args, [*scripts, args.baseline], {"--json": args.json, **db_output(args)})

    checked(args)


def _keep(args: argparse.Namespace, data: dict[str, Any], workload: str) -> None:
    """--record: the measurement (or the comparison) under --workload (default: the target)."""
    import os

    from gpuscope.commands._record import record

    record(args, data, workload, os.path.abspath(args.json) if args.json else None)


def _bound(target: Any) -> Any:
    import functools

    return functools.partial(target.fn, **target.kwargs) if target.kwargs else target.fn


def _flops(args: argparse.Namespace) -> float | None:
    if not args.transformer:
        return float(args.flops) if args.flops is not None else None
    from gpuscope.errors import ConfigError
    from gpuscope.timing.throughput import transformer_flops

    try:
        numbers = [int(x) for x in args.transformer.split(",")]
        return transformer_flops(*numbers[:3])
    except (ValueError, TypeError) as error:
        raise ConfigError(
            f"--transformer {args.transformer!r}: expected SEQ,HIDDEN[,LAYERS] integers"
        ) from error


def _single(args: argparse.Namespace, console: Any) -> int:
    from gpuscope.commands._render import show
    from gpuscope.timing.harness import bench
    from gpuscope.timing.layout import measurement_document
    from gpuscope.timing.record import to_json
    from gpuscope.timing.spec import load

    target = load(args.target)
    old = _baseline(args)
    m = _run_user_code(
        args.target,
        lambda: bench(
            _bound(target),
            *target.args,
            mode=args.mode,
            state=args.state,
            sustain_budget_s=args.sustain_budget,
            name=args.target,
            target_ci=args.target_ci / 100,
            budget_s=args.budget or 1.0,
            flush=args.flush,
            flops=_flops(args),
            bytes=args.bytes,
            peaks=not args.no_peaks,
        ),
    )
    show(printable_data(measurement_document(m)), console)
    if args.json:
        write(args.json, to_json(m))
    if args.record:
        from gpuscope.timing.record import to_builtins

        _keep(args, to_builtins(m), args.target)
    if old is not None:
        _against_baseline(args, old, m, console)
    return 0


def _baseline(args: argparse.Namespace) -> Any:
    """The stored measurement, read before the timing: a baseline that cannot be read stops the
    command with nothing written."""
    from gpuscope.timing.baseline import load_baseline

    return load_baseline(args.baseline) if args.baseline else None


def _against_baseline(args: argparse.Namespace, old: Any, m: Any, console: Any) -> None:
    from gpuscope.commands._render import show
    from gpuscope.timing.baseline import against_baseline
    from gpuscope.timing.layout import comparison_document

    c = against_baseline(old, m, args.threshold / 100, args.allow_mismatch)
    show(printable_data(comparison_document(c)), console)
    _gate(args, c)


def _compare(args: argparse.Namespace, console: Any) -> int:
    from gpuscope.commands._render import show
    from gpuscope.errors import GateFailed
    from gpuscope.timing.ab import INCORRECT, compare, comparison_to_json
    from gpuscope.timing.layout import comparison_document
    from gpuscope.timing.spec import load

    spec_a, spec_b = args.compare
    a, b = load(spec_a), load(spec_b)
    c = _run_user_code(
        f"{spec_a} / {spec_b}",
        lambda: compare(
            _bound(a),
            _bound(b),
            a.args,
            inputs_b=b.args if b.has_inputs else None,
            names=(spec_a, spec_b),
            mode=args.mode,
            threshold=args.threshold / 100,
            budget_s=args.budget or 2.0,
        ),
    )
    show(printable_data(comparison_document(c)), console)
    if args.json:
        write(args.json, comparison_to_json(c))
    if args.record and c.verdict != INCORRECT:
        from gpuscope.timing.ab import comparison_to_builtins

        _keep(args, comparison_to_builtins(c), f"{spec_a} vs {spec_b}")
    if c.verdict == INCORRECT:
        raise GateFailed(f"{spec_b} does not match {spec_a}: {c.correctness.detail}")
    _gate(args, c)
    return 0


def _gate(args: argparse.Namespace, c: Any) -> None:
    from gpuscope.errors import GateFailed

    pct = args.fail_if_slower
    if pct is not None and c.slower_than(pct):
        raise GateFailed(
            f"B is slower than A: time ratio {c.ratio:.4f} "
            f"(95 % CI {c.ci_low:.4f}–{c.ci_high:.4f}) exceeds the allowed +{pct:g} %"
        )


def _run_user_code(label: str, run: Any) -> Any:
    """Run the benchmark; an exception from the user's callable becomes one `error:` line."""
    from gpuscope.errors import GpuscopeError, InputError

    try:
        return run()
    except GpuscopeError:
        raise
    except Exception as error:
        raise InputError(
            f"{label}: the timed callable raised {type(error).__name__}: {error}"
        ) from error
