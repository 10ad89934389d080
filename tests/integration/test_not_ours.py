"""Issue 25: gpuscope never writes a file that is not its own — `run --perf-csv` appends only to
a madengine perf.csv (or a new file), `--db` only to a gpuscope history database (or a new one) —
and it refuses before any work, leaving the file byte for byte as it was (through the real CLI)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.madengine import perfcsv

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
FORMATS = REPO.parent / "shared" / "reference" / "formats"
TRACE = REPO / "tests" / "data" / "llama_compiled_h200.json.gz"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "150",
            "XDG_DATA_HOME": str(tmp_path / "data"), "GPUSCOPE_DB": ""}  # fmt: skip


def gpuscope(env: dict[str, str], cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [PY, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def one_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1 and all(w in lines[0] for w in words), done.stderr
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- run --perf-csv ------------------------------------------------------------------------------

NOT_PERF_CSV = {
    "report.json": b'{"schema": "gpuscope.analysis/1", "kernels": {"count": 3}}\n',
    "train.sh": b"#!/bin/sh\nexec python3 train.py --fast\n",
    "notes.txt": b"model runs: remember to pin the clocks\nperformance was fine\n",
    "blob.bin": bytes(range(256)) * 8,
    "header.csv": b"name,value\nx,1\n",  # a CSV, but not a perf.csv
}


@pytest.mark.parametrize("name", sorted(NOT_PERF_CSV))
def test_perf_csv_refuses_a_file_that_is_not_one_before_the_command_runs(
    env: dict[str, str], tmp_path: Path, name: str
) -> None:
    """Before: a JSON report, a script or notes were rewritten as CSV (exit 0); a binary file
    crashed after the command had run."""
    target = tmp_path / name
    target.write_bytes(NOT_PERF_CSV[name])
    before = digest(target)
    ran = tmp_path / "ran"
    code = f"open({str(ran)!r}, 'w'); print('performance: 5 fps')"
    done = gpuscope(env, tmp_path, "run", "--output-dir", "runs", "--perf-csv", target,
                    "--", PY, "-c", code)  # fmt: skip
    line = one_error(done, "--perf-csv", name, "expected a madengine perf.csv", "untouched")
    assert len(line) - len(str(target)) < 250  # short: a name, what it is, what was expected
    assert digest(target) == before
    assert not ran.exists() and not (tmp_path / "runs").exists()  # decided before the command


def test_perf_csv_refuses_a_sqlite_database(env: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "results.db"
    with sqlite3.connect(target) as db:
        db.execute("CREATE TABLE t (x)")
    db.close()
    before = digest(target)
    done = gpuscope(env, tmp_path, "run", "--perf-csv", target, "--", PY, "-c", "pass")
    one_error(done, "--perf-csv", "results.db", "SQLite database")
    assert digest(target) == before


def test_perf_csv_still_appends_to_perf_csvs_and_creates_new_ones(
    env: dict[str, str], tmp_path: Path
) -> None:
    madengine = tmp_path / "madengine.csv"  # madengine's own file: header, no trailing newline
    madengine.write_text(",".join(perfcsv.HEADER) + "\nold," + "," * 28)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    new = tmp_path / "sub" / "new.csv"
    for target in (madengine, empty, new):
        done = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--perf-csv",
                        target, "--", PY, "-c", "print('performance: 7 fps')")  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert perfcsv.read(madengine)[0]["model"] == "old"
    assert [r["performance"] for r in perfcsv.read(madengine)] == ["", "7"]
    assert [r["performance"] for r in perfcsv.read(empty)] == ["7"]
    assert [r["performance"] for r in perfcsv.read(new)] == ["7"]


def test_append_itself_refuses_what_changed_under_it(tmp_path: Path) -> None:
    """The check is made again under the lock (a file replaced after the early check)."""
    target = tmp_path / "perf.csv"
    target.write_bytes(b"SQLite format 3\0" + bytes(100))
    with pytest.raises(perfcsv.output.OutputError, match="SQLite database"):
        perfcsv.append(target, [{"model": "m", "performance": "1", "metric": "x"}])
    assert target.read_bytes() == b"SQLite format 3\0" + bytes(100)


# -- --db ---------------------------------------------------------------------------------------

PROFILER_DBS = {
    "nsys": FORMATS / "nsys" / "vectoraddition-a100-nsys2022.2" / "report4.sqlite",
    "rpd": FORMATS / "rpd" / "matmul_result.rpd",
    "rocpd": FORMATS / "rocprofv3" / "rocpd-db-gfx942" / "15_results.db",
}
needs_shared = pytest.mark.skipif(not FORMATS.is_dir(), reason="needs ../shared/reference")


@needs_shared
@pytest.mark.parametrize("kind", sorted(PROFILER_DBS))
def test_db_that_is_the_profiler_database_being_analysed_is_refused(
    env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    """Before: `analyze report.sqlite --record --db report.sqlite` added five tables to the nsys
    export and switched it to WAL, exit 0."""
    path = tmp_path / PROFILER_DBS[kind].name
    shutil.copyfile(PROFILER_DBS[kind], path)
    before = digest(path), sorted(os.listdir(tmp_path))
    done = gpuscope(env, tmp_path, "analyze", path, "--record", "--db", path)
    one_error(done, "--db", path.name)
    assert (digest(path), sorted(os.listdir(tmp_path))) == before


@needs_shared
def test_gpuscope_db_naming_a_profiler_database_is_refused(
    env: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "matmul.rpd"
    shutil.copyfile(PROFILER_DBS["rpd"], path)
    before = digest(path)
    for argv in (["analyze", TRACE, "--record"], ["history", "list"],
                 ["history", "import", "--", "perf.csv"]):  # fmt: skip
        (tmp_path / "perf.csv").write_text(",".join(perfcsv.HEADER) + "\nm" + ",1" * 28 + "\n")
        done = gpuscope({**env, "GPUSCOPE_DB": str(path)}, tmp_path, *argv)
        one_error(done, "matmul.rpd", "not a gpuscope history database", "other tables")
    assert digest(path) == before and sorted(os.listdir(tmp_path)) == ["matmul.rpd", "perf.csv"]


def test_db_that_is_an_input_of_the_command_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    trace = tmp_path / TRACE.name
    shutil.copyfile(TRACE, trace)
    before = digest(trace)
    one_error(gpuscope(env, tmp_path, "analyze", trace, "--record", "--db", trace),
              "--db", "is the input")  # fmt: skip
    csv = tmp_path / "perf.csv"
    csv.write_text(",".join(perfcsv.HEADER) + "\nm" + ",1" * 28 + "\n")
    one_error(gpuscope(env, tmp_path, "history", "import", csv, "--db", f"sqlite:///{csv}"),
              "--db", "is the input")  # fmt: skip
    one_error(gpuscope(env, tmp_path, "run", "--perf-csv", csv, "--record", "--db", csv,
                       "--", PY, "-c", "pass"), "--db", "--perf-csv")  # fmt: skip
    assert digest(trace) == before and not (tmp_path / "gpuscope-runs").exists()


def test_db_of_our_own_still_records(env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    for _ in range(2):
        done = gpuscope(env, tmp_path, "analyze", TRACE, "-q", "--record", "--db", db)
        assert done.returncode == 0, done.stderr
    done = gpuscope(env, tmp_path, "history", "list", "--db", db)
    row = next(
        line for line in done.stdout.splitlines() if line.startswith(TRACE.name.split(".")[0])
    )
    assert done.returncode == 0 and row.split()[1] == "2", done.stdout
