"""Issue 22 through the real CLI (subprocesses): a run's own metric into the manifest and a
madengine perf.csv, --perf-csv appends, --baseline's overhead, --record on every command, the
history commands and the `check` gate's exit codes, against SQLite and a real PostgreSQL server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuscope import schemas
from gpuscope.madengine import perfcsv
from tests.postgres import Server

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
TRACE = REPO / "tests" / "data" / "llama_compiled_h200.json.gz"
NCU = REPO / "tests" / "data" / "recorded" / "ncu_tiny_grid_h200_raw.csv"
jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "150",
            "XDG_DATA_HOME": str(tmp_path / "data"), "GPUSCOPE_DB": ""}  # fmt: skip


def gpuscope(env: dict[str, str], cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [PY, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def workload_run(env: dict[str, str], cwd: Path, value: float, *extra: str) -> None:
    code = f"print('step 1'); print('performance: {value} samples_per_second')"
    done = gpuscope(env, cwd, "run", "-q", "--output-dir", cwd / "runs", "--record",
                    "--workload", "toy", *extra, "--", PY, "-c", code)  # fmt: skip
    assert done.returncode == 0, done.stderr


def valid(data: object, tag: str) -> None:
    jsonschema.Draft202012Validator(schemas.load(tag)).validate(data)


def one_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1 and all(w in lines[0] for w in words), done.stderr


# -- 1. the workload's own metric ---------------------------------------------------------------


def test_a_run_reads_its_performance_lines_and_writes_madengines_perf_csv(
    env: dict[str, str], tmp_path: Path
) -> None:
    code = ("import sys; print('performance: 14164/s, samples_per_second');"
            "print('performance: 3.5 latency_ms', file=sys.stderr);"
            "print('performance: 14000 samples_per_second'); sys.exit(3)")  # fmt: skip
    done = gpuscope(env, tmp_path, "run", "--output-dir", "runs", "--tag", "nightly", "--",
                    PY, "-c", code)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "performance: 14164/s" in done.stdout  # still passed through
    (run_dir,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert [(p["metric"], p["value"], p["direction"]) for p in manifest["performance"]] == [
        ("samples_per_second", 14164.0, "higher"), ("samples_per_second", 14000.0, "higher"),
        ("latency_ms", 3.5, "lower")]  # fmt: skip
    header = (run_dir / "perf.csv").read_text().splitlines()[0]
    assert header == ",".join(perfcsv.HEADER)
    rows = {r["metric"]: r for r in perfcsv.read(run_dir / "perf.csv")}
    assert rows["samples_per_second"]["performance"] == "14164"  # the first, as madengine reads
    assert {r["status"] for r in rows.values()} == {"FAILURE"}  # exit 3: failed despite a value
    assert rows["latency_ms"]["tags"] == "nightly" and rows["latency_ms"]["model"] == Path(PY).stem
    assert {f["path"] for f in manifest["files"]} >= {"stdout.log", "stderr.log", "perf.csv"}


def test_no_value_is_one_failure_row_and_no_capture_leaves_the_streams(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--", PY, "-c", "pass")
    assert done.returncode == 0
    (row,) = perfcsv.read(next((tmp_path / "runs").iterdir()) / "perf.csv")
    assert (row["performance"], row["status"]) == ("", "FAILURE")
    done = gpuscope(env, tmp_path, "run", "-q", "--no-capture", "--output-dir", "plain", "--",
                    PY, "-c", "print('performance: 1 x')")  # fmt: skip
    run_dir = next((tmp_path / "plain").iterdir())
    assert not (run_dir / "stdout.log").exists()
    assert json.loads((run_dir / "manifest.json").read_text())["performance"] == []


def test_multiple_results_csv_gives_one_row_each(env: dict[str, str], tmp_path: Path) -> None:
    code = ("open('res.csv','w').write('model,performance,metric,batch\\n"
            "bs1,10.5,tok/s,1\\nbs8,,tok/s,8\\n')")  # fmt: skip
    done = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--model", "llm",
                    "--multiple-results", "res.csv", "--", PY, "-c", code)  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_dir = next((tmp_path / "runs").iterdir())
    rows = perfcsv.read(run_dir / "perf.csv")
    assert [(r["model"], r["performance"], r["status"], r["batch"]) for r in rows] == [
        ("llm_bs1", "10.5", "SUCCESS", "1"), ("llm_bs8", "", "FAILURE", "8")]  # fmt: skip
    assert (run_dir / "multiple_results_res.csv").is_file()


def test_perf_csv_appends_to_a_shared_file(env: dict[str, str], tmp_path: Path) -> None:
    shared = tmp_path / "all" / "perf.csv"
    for value in (1, 2):
        done = gpuscope(env, tmp_path, "run", "-q", "--output-dir", "runs", "--perf-csv", shared,
                        "--", PY, "-c", f"print('performance: {value} fps')")  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert [r["performance"] for r in perfcsv.read(shared)] == ["1", "2"]
    (tmp_path / "dir").mkdir()
    one_error(gpuscope(env, tmp_path, "run", "--perf-csv", "dir", "--", "true"), "--perf-csv",
              "is a directory")  # fmt: skip


# -- 2. profiling overhead ----------------------------------------------------------------------


def test_baseline_runs_without_tools_first_and_reports_the_overhead(
    env: dict[str, str], tmp_path: Path
) -> None:
    env = {**env, "PATH": f"{REPO / 'tests' / 'fakes' / 'bin'}{os.pathsep}{env['PATH']}"}
    code = "import time; time.sleep(0.3); print('performance: 100 samples_per_second')"
    done = gpuscope(env, tmp_path, "run", "--baseline", "--tools", "rocprof", "--output-dir",
                    "runs", "--", PY, "-c", code)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "baseline: the command without tools" in done.stderr
    assert "wall time (s)" in done.stderr and "samples_per_second" in done.stderr
    # two runs in one second: their ids sort by a random suffix, so tell them by their tools
    runs = [json.loads((d / "manifest.json").read_text()) for d in (tmp_path / "runs").iterdir()]
    (base,) = [m for m in runs if m["tools"] == []]
    (profiled,) = [m for m in runs if m["tools"]]
    assert profiled["tools"][0]["name"] == "rocprof"
    assert base["started_at"] <= profiled["started_at"]
    found = profiled["baseline"]
    assert found["run_id"] == base["run_id"] and found["duration_s"] == base["duration_s"]
    expected = round((profiled["duration_s"] / base["duration_s"] - 1) * 100, 3)
    assert found["overhead"]["wall_pct"] == pytest.approx(expected, abs=0.01)
    assert found["overhead"]["metrics"] == {"samples_per_second": 0.0}


# -- 3./4. record, list, show, trend, export, import ---------------------------------------------


def test_record_then_history_list_show_trend(env: dict[str, str], tmp_path: Path) -> None:
    for value in (100, 101, 99.5):
        workload_run(env, tmp_path, value, "--tag", "ci")
    done = gpuscope(env, tmp_path, "history", "list", "--json", "-")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    valid(data, "gpuscope.history-list/1")
    assert [(w["name"], w["results"]) for w in data["workloads"]] == [("toy", 3)]
    assert data["db"] == f"sqlite:///{tmp_path}/data/gpuscope/history.db"
    results = json.loads(gpuscope(env, tmp_path, "history", "list", "toy", "--json", "-").stdout)
    valid(results, "gpuscope.history-list/1")
    newest = results["results"][0]
    assert newest["metrics"][0] == {"name": "samples_per_second", "value": 99.5, "unit": "",
                                    "direction": "higher", "samples": None}  # fmt: skip
    assert newest["context"]["tags"] == ["ci"] and newest["context"]["host"]
    assert newest["context"]["extra"]["exit_code"] == 0
    shown = gpuscope(env, tmp_path, "history", "show", str(newest["id"]), "--json", "-")
    valid(json.loads(shown.stdout), "gpuscope.history-result/1")
    text = gpuscope(env, tmp_path, "history", "show", "toy").stdout
    assert "samples_per_second" in text and "higher is better" in text
    trend = gpuscope(env, tmp_path, "history", "trend", "toy", "--metric", "samples_per_second",
                     "--html", "t.html", "--png", "t.png")  # fmt: skip
    assert trend.returncode == 0, trend.stderr
    page = (tmp_path / "t.html").read_text()
    assert "<svg" in page and "polyline" in page and "toy" in page
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")
    spark = gpuscope(env, tmp_path, "history", "trend", "toy", "--metric", "samples_per_second")
    assert any(ch in spark.stdout for ch in "▁▂▃▄▅▆▇█"), spark.stdout


def test_record_on_analyze_bench_and_counters(env: dict[str, str], tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    assert gpuscope(env, tmp_path, "analyze", TRACE, "-q", "--record", "--db", db).returncode == 0
    (tmp_path / "b.py").write_text("def f():\n    return lambda: sum(range(100))\n")
    done = gpuscope(env, tmp_path, "bench", "b.py:f", "--mode", "cpu", "--budget", "0.2",
                    "--record", "--db", db, "--workload", "sum100")  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = gpuscope(env, tmp_path, "counters", NCU, "-q", "--record", "--db", db, "--commit", "abc")
    assert done.returncode == 0, done.stderr
    data = json.loads(gpuscope(env, tmp_path, "history", "list", "--db", db, "--json", "-").stdout)
    found = {w["name"]: w["metrics"] for w in data["workloads"]}
    assert found["llama_compiled_h200"][:3] == ["gpu_busy_us", "kernel_time_us", "span_us"]
    assert found["sum100"] == ["time_us"]
    assert found["ncu_tiny_grid_h200_raw"][0] == "kernel_time_us"
    bench = json.loads(gpuscope(env, tmp_path, "history", "show", "sum100", "--db", db,
                                "--json", "-").stdout)  # fmt: skip
    assert len(bench["metrics"][0]["samples"]) > 1  # bench samples kept
    done = gpuscope(env, tmp_path, "analyze", TRACE, "-q", "--workload", "x")
    one_error(done, "--workload only apply with --record")


def test_record_on_libperf_with_fake_vendor_benches(env: dict[str, str], tmp_path: Path) -> None:
    env = {**env, "PATH": f"{REPO / 'tests' / 'fakes' / 'bin'}{os.pathsep}{env['PATH']}",
           "FAKE_TOOL_LOG": str(tmp_path / "tools.log")}  # fmt: skip
    gemm = ("./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 256 -n 128 -k 64 "
            "--alpha 1 --a_type f32_r --lda 256 --b_type f32_r --ldb 64 --beta 0 --c_type f32_r "
            "--ldc 256 --d_type f32_r --ldd 256 --compute_type f32_r --algo 0 "
            "--solution_index 0 --flags 0")  # fmt: skip
    (tmp_path / "rocblas_bench.log").write_text(gemm + "\n")
    done = gpuscope(env, tmp_path, "libtrace", "rocblas_bench.log", "-o", "library_trace.csv",
                    "--model", "bert")  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = gpuscope(env, tmp_path, "libperf", "library_trace.csv", "--backends", "vendor",
                    "--no-measure-peaks", "--record")  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = json.loads(gpuscope(env, tmp_path, "history", "show", "bert", "--json", "-").stdout)
    assert shown["kind"] == "libperf" and shown["metrics"][0]["name"] == "total_us"
    assert shown["metrics"][1]["name"].startswith("time_us:")


def test_export_and_import_go_both_ways(env: dict[str, str], tmp_path: Path) -> None:
    for value in (100, 98):
        workload_run(env, tmp_path, value)
    assert gpuscope(env, tmp_path, "history", "export", "-o", "all.csv").returncode == 0
    lines = (tmp_path / "all.csv").read_text().splitlines()
    assert lines[0].startswith("result_id,workload,kind,recorded_at,commit") and len(lines) == 5
    # the workload as list / show / trend take it, or as --workload; not two different ones
    by_name = gpuscope(env, tmp_path, "history", "export", "toy", "-o", "-")
    assert by_name.stdout.splitlines() == lines
    one_error(gpuscope(env, tmp_path, "history", "export", "toy", "--workload", "x", "-o", "-"),
              "two workloads given")  # fmt: skip
    assert gpuscope(env, tmp_path, "history", "export", "-o", "perf.csv").returncode == 0
    rows = perfcsv.read(tmp_path / "perf.csv")
    assert {r["metric"] for r in rows} == {"samples_per_second", "wall_s"}
    other = f"sqlite:///{tmp_path}/other.db"
    report = tmp_path / "report.json"
    gpuscope(env, tmp_path, "analyze", TRACE, "-q", "--json", report)
    done = gpuscope(env, tmp_path, "history", "import", "perf.csv", report, "--db", other)
    assert done.returncode == 0 and "imported 5 results of 2 workloads" in done.stderr, done.stderr
    listed = json.loads(gpuscope(env, tmp_path, "history", "list", "--db", other, "--json",
                                 "-").stdout)  # fmt: skip
    assert {w["name"] for w in listed["workloads"]} == {"toy", "llama_compiled_h200"}
    run_dir = next((tmp_path / "runs").iterdir())
    done = gpuscope(env, tmp_path, "history", "import", run_dir, "--db", other, "--workload", "r")
    assert done.returncode == 0, done.stderr
    shown = json.loads(gpuscope(env, tmp_path, "history", "show", "r", "--db", other, "--json",
                                "-").stdout)  # fmt: skip
    assert shown["kind"] == "run" and shown["metrics"][0]["name"] == "samples_per_second"


def test_history_outputs_are_safe_and_bad_input_is_one_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    workload_run(env, tmp_path, 100)
    db = tmp_path / "data" / "gpuscope" / "history.db"
    one_error(gpuscope(env, tmp_path, "history", "export", "-o", db), "is the input")
    one_error(gpuscope(env, tmp_path, "history", "list", "--json", "-", "--db",
                       f"sqlite:///{tmp_path}/h.db", "x"), "no such database")  # fmt: skip
    assert not (tmp_path / "h.db").exists()
    one_error(gpuscope(env, tmp_path, "history", "list", "x"), "no workload 'x'")
    one_error(gpuscope(env, tmp_path, "history", "show", "nope"), "no result or workload 'nope'")
    one_error(gpuscope(env, tmp_path, "history", "trend", "toy", "--metric", "nope"), "no metric")
    one_error(gpuscope(env, tmp_path, "history", "list", "--db", "mysql://h/db"), "unknown")
    (tmp_path / "bad.csv").write_text("a,b\n")
    one_error(gpuscope(env, tmp_path, "history", "import", "bad.csv"), "not a madengine perf.csv")
    (tmp_path / "bad.json").write_text('{"schema": "other/1"}')
    one_error(gpuscope(env, tmp_path, "history", "import", "bad.json"), "is not a report")
    done = gpuscope(env, tmp_path, "history", "export", "-o", "x.parquet")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        one_error(done, "Parquet needs pyarrow")
        assert not (tmp_path / "x.parquet").exists()
    else:
        assert done.returncode == 0


# -- 5. check ---------------------------------------------------------------------------------


def test_check_gates_on_a_regression(env: dict[str, str], tmp_path: Path) -> None:
    for value in (100.0, 100.3, 99.8, 100.1, 99.9, 100.2):
        workload_run(env, tmp_path, value)
    done = gpuscope(env, tmp_path, "check", "toy", "--metric", "samples_per_second", "--json",
                    "c.json")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "within noise" in done.stdout
    valid(json.loads((tmp_path / "c.json").read_text()), "gpuscope.check/1")
    workload_run(env, tmp_path, 96.0)
    done = gpuscope(env, tmp_path, "check", "toy", "--metric", "samples_per_second", "--md", "-")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "| `samples_per_second ↑` | 96 |" in done.stdout and "| regression |" in done.stdout
    assert "> ✖ **regression** — samples_per_second -4." in done.stdout
    assert "run-to-run" in done.stdout
    found = json.loads(gpuscope(env, tmp_path, "check", "toy", "--metric", "samples_per_second",
                                "--json", "-").stdout)  # fmt: skip
    (metric,) = found["checks"]
    assert metric["verdict"] == "regression" and metric["change"] == pytest.approx(-0.04, abs=0.002)
    one_error(gpuscope(env, tmp_path, "check", "nope"), "no workload 'nope'")
    one_error(gpuscope(env, tmp_path, "check", "toy", "--against", "yesterday"), "--against")
    one_error(gpuscope(env, tmp_path, "check", "toy", "--db", f"sqlite:///{tmp_path}/none.db"),
              "no such database")  # fmt: skip


@pytest.fixture(scope="module")
def pg_server() -> Iterator[Server]:
    with Server.start() as server:
        yield server


def test_gpuscope_db_on_postgresql(env: dict[str, str], tmp_path: Path, pg_server: Server) -> None:
    """A team's setup: GPUSCOPE_DB points at PostgreSQL, every run records, check gates."""
    env = {**env, "GPUSCOPE_DB": pg_server.create_database("cli")}
    for value in (100.0, 100.3, 99.8, 100.1, 99.9, 100.2, 95.0):
        workload_run(env, tmp_path, value)
    done = gpuscope(env, tmp_path, "check", "toy", "--metric", "samples_per_second")
    assert done.returncode == 1, done.stdout + done.stderr
    listed = json.loads(gpuscope(env, tmp_path, "history", "list", "toy", "--json", "-").stdout)
    assert len(listed["results"]) == 7 and listed["db"].startswith("postgresql://")
    exported = gpuscope(env, tmp_path, "history", "export", "-o", "-")
    assert exported.returncode == 0 and exported.stdout.count(",samples_per_second,") == 7


_PROBE = """
import json, sys
from gpuscope.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in ("sqlite3", "psycopg", "numpy", "msgspec") if m in sys.modules)))
"""


@pytest.mark.parametrize("argv", [["--help"], ["history", "--help"], ["check", "--help"]])
def test_help_imports_no_database_module(argv: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([PY, "-c", _PROBE.format(argv=argv)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
