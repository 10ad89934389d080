"""Shared by the fake vendor bench binaries (rocblas-bench, hipblaslt-bench, MIOpenDriver,
all_reduce_perf): test doubles for `gpuscope libperf` in CI (no GPU there).

Each prints its result in the real tool's documented output layout (rocBLAS / hipBLASLt client
docs, MIOpenDriver's printf formats, nccl-tests' table header; see src/gpuscope/libperf/
vendor_bench.py), with a time computed from its arguments at a fixed rate, so a test can check
the parsed time against its own computation:

    GEMM   µs = 2·m·n·k·batch / 5e7          (50 TFLOP/s)
    conv   ms = 2·N·K·C/g·Ho·Wo·Y·X / 5e10   (50 TFLOP/s)
    nccl   µs = bytes / 1e4                  (10 GB/s)

$FAKE_BENCH_MODE = "BINARY=MODE[,BINARY=MODE…]" makes one binary misbehave: crash (SIGSEGV),
fail (exit 1 with a message), hang (sleeps 60 s), garbage (exit 0 with no result).
$FAKE_BENCH_MATCH = "BINARY=TEXT[,…]" limits a binary's misbehaviour to argv holding TEXT.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from _fakelib import log


def options(argv: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    i = 0
    while i < len(argv):
        if argv[i].startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            found[argv[i].lstrip("-")] = argv[i + 1]
            i += 2
        else:
            found.setdefault(argv[i].lstrip("-"), "")
            i += 1
    return found


def misbehave(name: str, argv: list[str]) -> None:
    """Act on $FAKE_BENCH_MODE for this binary (returns only in mode ok / not matched)."""
    modes = _pairs("FAKE_BENCH_MODE")
    mode = modes.get(name, "ok")
    match = _pairs("FAKE_BENCH_MATCH").get(name, "")
    if mode == "ok" or (match and match not in " ".join(argv)):
        return
    if mode == "crash":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "fail":
        print(f"{name}: error: invalid problem size", file=sys.stderr)
        sys.exit(1)
    if mode == "hang":
        time.sleep(60)
    if mode == "garbage":
        print("nothing to see here")
        sys.exit(0)


def _pairs(variable: str) -> dict[str, str]:
    """`A=x,B=y` → {"A": "x", "B": "y"}."""
    items = os.environ.get(variable, "").split(",")
    return dict(item.split("=", 1) for item in items if "=" in item)


def start(name: str, argv: list[str]) -> dict[str, str]:
    log(name, argv)
    misbehave(name, argv)
    return options(argv)
