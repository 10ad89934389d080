"""`gpuscope run`: a stack of capture tools (`gpuscope.tools`) around any command, one
directory per run with its manifest.

    >>> from gpuscope.run import RunRequest, run
    >>> from gpuscope.tools import ToolRequest, load_catalog, resolve
    >>> tools = resolve([ToolRequest("nsys")], load_catalog())            # doctest: +SKIP
    >>> request = RunRequest(command=("python3", "train.py"), tools=tuple(tools))
    >>> result = run(request)                                             # doctest: +SKIP
    >>> result.exit_code, result.run_dir                                  # doctest: +SKIP

Modules: `session` (the whole run), `stack` (stacking order), `command` (whether a command can
start: 126/127), `child` (the command's process group, signals, exit code), `tee`, `reaper` and
`procs` (the processes it leaves behind), `gpu_processes` (who holds GPU memory), `aftermath`
(what is recorded of both), `manifest`, `rundir`, `ranks` with its bootstrap `_rank_hook` and
`host_agent` (a `rank<R>/` folder per rank of a distributed job, a host's samplers), and
`workload_metric` (the workload's own metric into the manifest and a perf.csv).
"""

from __future__ import annotations

from gpuscope.run.session import RunRequest, RunResult, run

__all__ = ["RunRequest", "RunResult", "run"]
