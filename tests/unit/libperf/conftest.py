"""library_trace.csv files made the way users make them: real library logs (read in place from
../shared/reference/formats/, skipped when absent) or log lines, through gpuscope's libtrace."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from gpuscope.libperf import configs
from gpuscope.libtrace.rebuild import calls_from_paths
from gpuscope.libtrace.table import write_csv
from tests.unit.libtrace.conftest import reference_log

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)


def trace_from_logs(tmp_path: Path, *relative: str) -> Path:
    """library_trace.csv of real logs, as `gpuscope libtrace LOG…` writes it."""
    calls = calls_from_paths([reference_log(r) for r in relative], [])
    return write_csv(tmp_path / "library_trace.csv", calls, jobid="7", model="m", now=NOW)


def trace_from_lines(tmp_path: Path, name: str, lines: list[str]) -> Path:
    """library_trace.csv of log lines written to a log file called `name`."""
    log = tmp_path / name
    log.write_text("".join(line + "\n" for line in lines))
    calls = calls_from_paths([log], [])
    return write_csv(tmp_path / "library_trace.csv", calls, jobid="7", model="m", now=NOW)


def configs_of(path: Path) -> list[configs.Config]:
    return configs.dedupe(configs.load(path).calls)
