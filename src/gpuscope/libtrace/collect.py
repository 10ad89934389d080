"""`LibraryTraceCollector`: what `gpuscope run` uses for the library tracer tools."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from gpuscope.errors import ConfigError
from gpuscope.libtrace.call import LibraryCall
from gpuscope.libtrace.logfile import LogLines
from gpuscope.libtrace.table import write_csv
from gpuscope.libtrace.tracers import STREAM_FILES, TRACERS, Tracer
from gpuscope.rank_folders import rank_folders

CSV_NAME = "library_trace.csv"


class LibraryTraceCollector:
    """Set up library logging for one run and turn the logs into `run_dir/library_trace.csv`.

    `libraries` are tool names (rocblas_trace, hipblaslt_trace, tensile_trace, miopen_trace,
    rccl_trace, nccl_trace, cublas_trace, cublaslt_trace, cudnn_trace). The runner:

    1. adds `env()` to the child's environment: each library's own logging variables, with its
       log destination inside `run_dir` (the libraries write their logs themselves);
    2. for every `(stream, path)` in `tee_streams` ("stdout"/"stderr"), copies that stream of the
       child into `path` *while still passing it through to the terminal* — Tensile
       (`Running kernel:` on stdout) and MIOpen (driver commands on stderr) have no file
       destination of their own;
    3. calls `finish()` in teardown, also after a failure or a kill: it parses whatever the logs
       hold (a cut-off last line is dropped) and writes the CSV. `warnings` says what was skipped.

    If gpuscope itself dies, the logs stay in the run directory: `gpuscope libtrace RUN_DIR`
    rebuilds the CSV.

        >>> c = LibraryTraceCollector(run_dir, ["cublas_trace"], jobid="0", model="m")
        >>> subprocess.run(argv, env={**os.environ, **c.env()})
        >>> c.finish()
        PosixPath('…/library_trace.csv')
    """

    def __init__(
        self,
        run_dir: Path,
        libraries: Sequence[str],
        *,
        jobid: str,
        model: str,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc),
    ) -> None:
        self.run_dir = Path(run_dir)
        self.tracers = [tracer(name) for name in dict.fromkeys(libraries)]
        self.jobid = jobid
        self.model = model
        self.warnings: list[str] = []
        self._now = now

    def env(self) -> dict[str, str]:
        """Environment variables to add to the child (log destinations inside run_dir)."""
        merged: dict[str, str] = {}
        for tracer in self.tracers:
            merged.update(tracer.env(self.run_dir))
        return merged

    @property
    def tee_streams(self) -> dict[str, Path]:
        """Child streams the runner must copy (not redirect) into these files."""
        streams = {s for tracer in self.tracers for s in tracer.streams}
        return {s: self.run_dir / STREAM_FILES[s] for s in sorted(streams)}

    def finish(self) -> Path | None:
        """Parse the logs and write `run_dir/library_trace.csv`; None when nothing was logged.
        In a multi-rank run each `rank<R>/` folder holds its rank's logs: they give that rank's
        `rank<R>/library_trace.csv`, and the run's CSV sums every rank's calls."""
        self.warnings = []
        calls = list(parse_logs(self.run_dir, self.tracers, self.warnings))
        calls += self._per_rank()
        if not calls:
            names = ", ".join(t.tool for t in self.tracers)
            self.warnings.append(f"{names}: no library calls were logged in {self.run_dir}")
            return None
        path = self.run_dir / CSV_NAME
        return write_csv(path, calls, jobid=self.jobid, model=self.model, now=self._now())

    def _per_rank(self) -> list[LibraryCall]:
        calls: list[LibraryCall] = []
        for folder in rank_folders(self.run_dir):
            mine = list(parse_logs(folder, self.tracers, self.warnings))
            if mine:
                write_csv(folder / CSV_NAME, mine, jobid=self.jobid, model=self.model,
                          now=self._now())  # fmt: skip
                calls += mine
        return calls


def tracer(name: str) -> Tracer:
    """The tracer of a tool name; ConfigError listing the valid names otherwise."""
    if name not in TRACERS:
        valid = ", ".join(TRACERS)
        raise ConfigError(f"unknown library tracer {name!r}: expected one of {valid}")
    return TRACERS[name]


def parse_logs(run_dir: Path, tracers: Iterable[Tracer], warnings: list[str]) -> list[LibraryCall]:
    """Every call the tracers' log files in run_dir hold, file by file."""
    calls: list[LibraryCall] = []
    seen: set[Path] = set()  # rccl_trace and nccl_trace share their log files
    for tr in tracers:
        for path in tr.log_files(run_dir):
            if path not in seen:
                seen.add(path)
                calls.extend(parse_file(path, tr, warnings))
    return calls


def parse_file(path: Path, tr: Tracer, warnings: list[str]) -> list[LibraryCall]:
    """One log file through one tracer's parser; a dropped last line is noted in `warnings`."""
    lines = LogLines(path)
    calls = list(tr.parse(lines))
    note = lines.warning()
    if note is not None:
        warnings.append(note)
    return calls
