"""`python -m gpuscope.run.host_agent FOLDER PID`: the samplers of a host that gpuscope itself
does not run on, for a multi-host job.

gpuscope's samplers sample every GPU of the host gpuscope runs on. On every other host of a
multi-rank job, the first rank process that starts there (`_rank_hook.py`) starts this agent:
it runs the run's sampler tools (GPUSCOPE_HOST_SAMPLERS: `[{"kind", "env"}]`, the tools' own
settings) into FOLDER (`<run>/hosts/<host>/`, the same CSV names and columns), marks
`workload_start`, and stops with `workload_end` when process PID (that rank) has exited, or on
SIGTERM / SIGINT. It never touches the job. Errors go to FOLDER/agent.log.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

POLL_S = 0.1


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def specs(environ: dict[str, str] | os._Environ[str] = os.environ) -> list[dict[str, Any]]:
    data = json.loads(environ.get("GPUSCOPE_HOST_SAMPLERS", "[]"))
    return [s for s in data if isinstance(s, dict) and s.get("kind") in ("power", "vram")]


def run(folder: Path, pid: int, stop: threading.Event) -> int:
    from gpuscope.samplers import Sampler, sampler_env_options, sampler_output_name

    with ExitStack() as stack:
        samplers = []
        for spec in specs():
            kind, env = spec["kind"], {str(k): str(v) for k, v in spec.get("env", {}).items()}
            sampler = Sampler(kind, folder / sampler_output_name(kind, env),
                              **sampler_env_options(kind, env))  # fmt: skip
            samplers.append(stack.enter_context(sampler))
        for sampler in samplers:
            sampler.mark("workload_start")
        while not stop.is_set() and alive(pid):
            stop.wait(POLL_S)
        for sampler in samplers:
            sampler.mark("workload_end")
            for warning in sampler.warnings:
                print(f"{sampler.out_csv.name}: {warning}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or not args[1].isdigit():
        print("usage: python -m gpuscope.run.host_agent FOLDER PID", file=sys.stderr)
        return 2
    stop = threading.Event()
    for signo in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signo, lambda _n, _f: stop.set())
    from gpuscope.errors import GpuscopeError

    try:
        return run(Path(args[0]), int(args[1]), stop)
    except GpuscopeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
