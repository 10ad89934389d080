"""Issue 25: `history import` takes what gpuscope itself writes — a perf.csv with a field over
the csv module's 131,072-character limit, `--multiple-results` rows whose performance is not a
number — and its failures are one short line naming the file and the row (real CLI)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.madengine import perfcsv

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
LIMIT = 131_072  # csv.field_size_limit()'s default


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "150",
            "XDG_DATA_HOME": str(tmp_path / "data"), "GPUSCOPE_DB": ""}  # fmt: skip


def gpuscope(env: dict[str, str], cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [PY, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def values(db: Path) -> list[tuple[str, float]]:
    with sqlite3.connect(db) as raw:
        found = raw.execute("SELECT w.name, m.value FROM metrics m JOIN results r ON "
                            "m.result_id = r.id JOIN workloads w ON r.workload_id = w.id "
                            "ORDER BY r.id").fetchall()  # fmt: skip
    raw.close()
    return [(str(n), float(v)) for n, v in found]


def test_a_perf_csv_with_a_field_over_the_csv_limit_imports(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Before: `history import` of the perf.csv of a run with long arguments died with a
    traceback (_csv.Error: field larger than field limit (131072))."""
    long_args = ["a" * 100_000, "b" * 100_000]  # one argument may hold 128 KiB, two more
    done = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--perf-csv", "all.csv",
                    "--", PY, "-c", "print('performance: 42 fps')", *long_args)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (row,) = perfcsv.read(tmp_path / "all.csv")
    assert len(row["args"]) > LIMIT  # what made the import fail
    done = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--perf-csv", "all.csv",
                    "--", PY, "-c", "print('performance: 43 fps')")  # fmt: skip
    assert done.returncode == 0, done.stderr  # appending after such a row works too
    db = tmp_path / "h.db"
    done = gpuscope(env, tmp_path, "history", "import", "all.csv", "--db", db)
    assert done.returncode == 0 and "imported 2 results" in done.stderr, done.stderr
    assert [v for _, v in values(db)] == [42.0, 43.0]


def test_multiple_results_that_are_not_numbers_are_failures_and_import(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Before: rows with performance `abc` or `1e400` were written as SUCCESS, and gpuscope's
    own `history import` then refused the file whole."""
    code = ("open('res.csv','w').write('model,performance,metric\\n"
            "a,abc,tok/s\\nb,1e400,tok/s\\nc,nan,tok/s\\nd,12.5,tok/s\\n')")  # fmt: skip
    done = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--model", "llm",
                    "--multiple-results", "res.csv", "--perf-csv", "all.csv",
                    "--", PY, "-c", code)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = perfcsv.read(tmp_path / "all.csv")
    assert [(r["model"], r["performance"], r["status"]) for r in rows] == [
        ("llm_a", "abc", "FAILURE"), ("llm_b", "1e400", "FAILURE"), ("llm_c", "nan", "FAILURE"),
        ("llm_d", "12.5", "SUCCESS")]  # fmt: skip
    db = tmp_path / "h.db"
    done = gpuscope(env, tmp_path, "history", "import", "all.csv", "--db", db)
    assert done.returncode == 0 and "imported 1 results" in done.stderr, done.stderr
    assert values(db) == [("llm_d", 12.5)]
    (warning,) = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert "all.csv: 3 rows without a finite performance value left out" in warning
    assert "line 2: 'abc'" in warning and "line 3: '1e400'" in warning


def test_one_non_finite_value_in_many_rows_is_named_and_the_rest_imported(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Before: one `inf` among many rows failed the whole import, naming neither file nor row."""
    lines = [",".join(perfcsv.HEADER)]
    for i, value in enumerate(["1.5", "2.5", "inf", "", "4.5"]):
        row = dict.fromkeys(perfcsv.HEADER, "")
        row.update(model=f"m{i}", performance=value, metric="fps")
        lines.append(",".join(row[h] for h in perfcsv.HEADER))
    (tmp_path / "perf.csv").write_text("\n".join(lines) + "\n")
    db = tmp_path / "h.db"
    done = gpuscope(env, tmp_path, "history", "import", "perf.csv", "--db", db)
    assert done.returncode == 0, done.stderr
    assert [v for _, v in values(db)] == [1.5, 2.5, 4.5]
    assert "perf.csv: 2 rows without a finite performance value left out (line 4: 'inf')" in (
        done.stderr
    )


def test_a_report_with_a_non_finite_value_names_its_file(
    env: dict[str, str], tmp_path: Path
) -> None:
    report = tmp_path / "bench.json"
    report.write_text('{"schema": "gpuscope.bench/1", "name": "x", "unit": "us", '
                      '"samples_us": [1.0, Infinity], "stats": {"median": Infinity}}')  # fmt: skip
    good = tmp_path / "good.csv"
    good.write_text(",".join(perfcsv.HEADER) + "\nm" + ",1" * 17 + ",fps" + "," * 10 + "\n")
    done = gpuscope(env, tmp_path, "history", "import", good, report, "--db", tmp_path / "h.db")
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr
    assert "bench.json" in lines[0], done.stderr


def test_a_binary_file_is_one_short_line(env: dict[str, str], tmp_path: Path) -> None:
    """Before: ~1 KB of the file's binary header was printed in the error."""
    blob = tmp_path / "core.bin"
    blob.write_bytes(b"\x7fELF" + bytes(range(1, 256)) * 16)
    sqlite = tmp_path / "some.db"
    with sqlite3.connect(sqlite) as raw:
        raw.execute("CREATE TABLE t (x)")
    raw.close()
    for path, what in ((blob, "binary file"), (sqlite, "SQLite database")):
        done = gpuscope(env, tmp_path, "history", "import", path, "--db", tmp_path / "h.db")
        lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr
        assert path.name in lines[0] and what in lines[0] and "not a madengine perf.csv" in lines[0]
        assert lines[0].isprintable() and len(lines[0]) - len(str(path)) < 200, lines[0]


def test_trend_needs_no_metric_for_a_workload_of_one(env: dict[str, str], tmp_path: Path) -> None:
    """Before: `history trend WORKLOAD` required --metric even when the workload had one."""
    lines = [",".join(perfcsv.HEADER)]
    for value in ("10", "12", "11"):
        row = dict.fromkeys(perfcsv.HEADER, "")
        row.update(model="bert", performance=value, metric="samples_per_second")
        lines.append(",".join(row[h] for h in perfcsv.HEADER))
    (tmp_path / "perf.csv").write_text("\n".join(lines) + "\n")
    db = tmp_path / "h.db"
    assert gpuscope(env, tmp_path, "history", "import", "perf.csv", "--db", db).returncode == 0
    done = gpuscope(env, tmp_path, "history", "trend", "bert", "--db", db)
    named = gpuscope(env, tmp_path, "history", "trend", "bert", "--db", db,
                     "--metric", "samples_per_second")  # fmt: skip
    assert done.returncode == 0 and done.stdout == named.stdout, done.stderr
    assert "samples_per_second" in done.stdout and "▁" in done.stdout
    run = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--record", "--db", db,
                   "--workload", "two", "--", PY, "-c", "print('performance: 1 fps')")  # fmt: skip
    assert run.returncode == 0, run.stderr
    done = gpuscope(env, tmp_path, "history", "trend", "two", "--db", db)
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "two has 2 metrics (fps, wall_s): choose one with --metric" in lines[0]
