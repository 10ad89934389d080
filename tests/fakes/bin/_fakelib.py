"""Shared by the fake GPU tools in this folder.

They are test doubles for gpuscope's CI (no GPU there): each runs the application it wraps and
then *generates* small outputs in the real tool's layout (file names, headers, column names),
as documented in shared/notes/formats.md. No real tool output is copied. Every fake appends one
JSON line per invocation to $FAKE_TOOL_LOG when it is set, so tests can see argv and order.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time

# (name, duration ns): the kernels every fake "profiles"
KERNELS = [
    ("void vector_add<float>(float*, float const*, float const*, int)", 12_800),
    ("gemm_kernel_64x64(float const*, float const*, float*, int, int, int)", 95_360),
]


def log(tool: str, argv: list[str]) -> None:
    path = os.environ.get("FAKE_TOOL_LOG")
    if not path:
        return
    env = {k: v for k, v in os.environ.items() if k.startswith(("GPUSCOPE_", "FAKE_ENV_"))}
    record = {"tool": tool, "argv": argv, "pid": os.getpid(), "time": time.time(), "env": env}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def run_app(app: list[str]) -> tuple[int, int]:
    """Run the wrapped application, forwarding INT/TERM/HUP; (shell-style exit code, pid)."""
    if not app:
        print("fake tool: no application given", file=sys.stderr)
        return 1, 0
    try:
        process = subprocess.Popen(app)
    except FileNotFoundError:
        print(f"fake tool: {app[0]}: not found", file=sys.stderr)
        return 127, 0
    for signo in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signo, lambda n, _f: process.send_signal(n))
    code = process.wait()
    return (code if code >= 0 else 128 - code), process.pid


def write_csv(path: str, header: list[str], rows: list[list[object]], quote_all: bool) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    style = csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, quoting=style, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def boot_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME)


def hostname() -> str:
    return socket.gethostname()
