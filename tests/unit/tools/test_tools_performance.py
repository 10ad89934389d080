"""The workload's own metric: madengine's `performance:` pattern (its own test lines), the
HuggingFace fallback, multiple_results CSVs, perf.csv rows with madengine's header and status,
and appends to a shared perf.csv from many processes at once."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuscope.errors import InputError
from gpuscope.madengine import perfcsv
from gpuscope.madengine.performance import direction_of, parse, read_log, read_multiple_results

REPO = Path(__file__).resolve().parents[3]

# madengine's PERF_CSV_HEADER (madengine/reporting/update_perf_csv.py), as it is written there
MADENGINE_HEADER = (
    "model,n_gpus,nnodes,gpus_per_node,training_precision,pipeline,args,tags,"
    "docker_file,base_docker,docker_sha,docker_image,git_commit,machine_name,"
    "deployment_type,launcher,gpu_architecture,performance,metric,relative_change,"
    "status,build_duration,test_duration,dataname,data_provider_type,data_size,"
    "data_download_duration,build_number,additional_docker_run_options"
)


@pytest.mark.parametrize(
    ("line", "value", "metric", "text"),
    [  # the formats madengine's PERFORMANCE_LOG_PATTERN docstring and tests name
        ("performance: 14164 samples_per_second", 14164.0, "samples_per_second", "14164"),
        ("performance: 14164/s, samples_per_second", 14164.0, "samples_per_second", "14164"),
        ("performance: 14164, /s samples_per_second", 14164.0, "samples_per_second", "14164"),
        ("performance: 14164, samples_per_second", 14164.0, "samples_per_second", "14164"),
        ("performance: 45.23 requests_per_second", 45.23, "requests_per_second", "45.23"),
        ("performance: 1.2E+3 tokens/sec", 1200.0, "tokens/sec", "1.2E+3"),
        ("performance: .5 loss", 0.5, "loss", ".5"),
        ("performance: -3 delta", -3.0, "delta", "-3"),
        ("[rank0] performance: 7 images_per_second (simulated)", 7.0, "images_per_second", "7"),
    ],
)
def test_madengine_performance_lines(line: str, value: float, metric: str, text: str) -> None:
    (found,) = parse(f"noise\n{line}\nmore noise\n")
    assert (found.value, found.metric, found.text, found.source) == (value, metric, text, "log")


def test_every_line_is_kept_in_order_and_huggingface_is_the_fallback() -> None:
    found = parse("performance: 1 a\nx\nperformance: 2 b\nperformance: 3 a\n")
    assert [(p.metric, p.value) for p in found] == [("a", 1.0), ("b", 2.0), ("a", 3.0)]
    (hf,) = parse("{'train_samples_per_second': 4.23, 'epoch': 1}")
    assert (hf.metric, hf.value, hf.source) == ("samples_per_second", 4.23, "huggingface")
    assert parse("performance: n/a\nperformance:\n") == []


def test_a_log_with_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_bytes(b"\xff\xfe garbage\nperformance: 12 fps\n")
    assert [(p.value, p.metric) for p in read_log(log)] == [(12.0, "fps")]
    assert read_log(tmp_path / "missing.log") == []


@pytest.mark.parametrize(
    ("metric", "direction"),
    [("samples_per_second", "higher"), ("tokens/sec", "higher"), ("TFLOPS", "higher"),
     ("latency_ms", "lower"), ("step_time", "lower"), ("ttft_ms", "lower"),
     ("loss", "lower"), ("pass", "higher")],
)  # fmt: skip
def test_direction_from_the_metric_name(metric: str, direction: str) -> None:
    assert direction_of(metric) == direction


def test_multiple_results_csv(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text("model, performance, metric, batch\nbs1,120.5,tokens/s,1\nbs8,,tokens/s,8\n")
    rows = read_multiple_results(path)
    assert [(r.model, r.value, r.metric, r.extra) for r in rows] == [
        ("bs1", 120.5, "tokens/s", {"batch": "1"}),
        ("bs8", None, "tokens/s", {"batch": "8"}),
    ]
    path.write_text("name,performance\nx,1\n")
    with pytest.raises(InputError, match="no model, metric column"):
        read_multiple_results(path)


def test_status_needs_exit_0_and_a_value() -> None:
    assert perfcsv.status(0, "12") == "SUCCESS"
    assert perfcsv.status(1, "12") == "FAILURE"
    assert perfcsv.status(0, "") == "FAILURE"
    assert perfcsv.status(0, "N/A") == "FAILURE"
    # issue 25: not numbers, or not finite ones (float("1e400") is inf), are no value either
    for text in ("abc", "1e400", "-1e400", "nan", "inf"):
        assert perfcsv.status(0, text) == "FAILURE", text
    assert perfcsv.status(0, " 1e300 ") == "SUCCESS"


def test_values_that_are_not_finite_are_not_values(tmp_path: Path) -> None:
    assert [p.value for p in parse("performance: 1e400 fps\nperformance: 2 fps\n")] == [2.0]
    assert parse("{'train_samples_per_second': 1e999}") == []
    path = tmp_path / "results.csv"
    path.write_text("model,performance,metric\na,abc,x\nb,1e400,x\nc,3,x\n")
    assert [r.value for r in read_multiple_results(path)] == [None, None, 3.0]


def test_a_field_over_the_csv_modules_limit_is_read_and_the_limit_put_back(
    tmp_path: Path,
) -> None:
    import csv

    before = csv.field_size_limit()
    path = tmp_path / "perf.csv"
    long = "x" * (before + 10)
    perfcsv.append(path, [{"model": "m", "performance": "1", "metric": "x", "args": long}])
    perfcsv.append(path, [{"model": "n", "performance": "2", "metric": "x", "wide": "y"}])
    numbered = perfcsv.read_numbered(path)
    assert [(line, r["model"], len(r["args"])) for line, r in numbered] == [
        (2, "m", before + 10), (3, "n", 0)]  # fmt: skip
    assert csv.field_size_limit() == before


def test_the_header_is_madengines() -> None:
    assert ",".join(perfcsv.HEADER) == MADENGINE_HEADER
    text = perfcsv.encode([{"model": "m", "performance": "1", "metric": "x", "extra": "e"}])
    assert text.splitlines()[0] == MADENGINE_HEADER + ",extra"


def test_append_creates_then_appends_then_widens(tmp_path: Path) -> None:
    path = tmp_path / "perf.csv"
    perfcsv.append(path, [{"model": "a", "performance": "1", "metric": "x", "status": "SUCCESS"}])
    perfcsv.append(path, [{"model": "b", "performance": "2", "metric": "x"}])
    assert path.read_text().splitlines()[0] == MADENGINE_HEADER
    perfcsv.append(path, [{"model": "c", "performance": "3", "metric": "x", "batch": "8"}])
    rows = perfcsv.read(path)
    assert [r["model"] for r in rows] == ["a", "b", "c"]
    assert [r["batch"] for r in rows] == ["", "", "8"]  # the file was rewritten with the column
    assert perfcsv.read(path)[0]["status"] == "SUCCESS"


def test_append_keeps_a_file_written_by_madengine(tmp_path: Path) -> None:
    """madengine's pandas writes the header it has (here without a trailing newline)."""
    path = tmp_path / "perf.csv"
    path.write_text(MADENGINE_HEADER + "\nold," + "," * 28)
    perfcsv.append(path, [{"model": "new", "performance": "5", "metric": "x"}])
    assert [r["model"] for r in perfcsv.read(path)] == ["old", "new"]


def test_append_to_a_file_with_a_byte_order_mark_or_cut_inside_a_character(
    tmp_path: Path,
) -> None:
    path = tmp_path / "perf.csv"
    path.write_bytes(b"\xef\xbb\xbf" + MADENGINE_HEADER.encode() + b"\nold" + b"," * 28 + b"\n")
    perfcsv.append(path, [{"model": "new", "performance": "5", "metric": "x", "extra": "e"}])
    assert [r["model"] for r in perfcsv.read(path)] == ["old", "new"]  # one header, widened
    assert path.read_text().count("model,") == 1
    cut = tmp_path / "cut.csv"
    cut.write_bytes(MADENGINE_HEADER.encode() + b"\nm\xc3")
    with pytest.raises(perfcsv.output.OutputError, match="inside a UTF-8 character"):
        perfcsv.append(cut, [{"model": "m", "performance": "1", "metric": "x"}])
    assert cut.read_bytes().endswith(b"\nm\xc3")


def test_read_refuses_a_csv_that_is_not_perf_csv(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=r"not a madengine perf\.csv"):
        perfcsv.read(path)


_APPENDER = textwrap.dedent("""
    import sys
    from gpuscope.madengine import perfcsv
    path, who = sys.argv[1], int(sys.argv[2])
    for i in range(40):
        row = {"model": f"p{who}", "performance": str(i), "metric": "x", "args": "a" * 3000}
        if who == 3 and i == 20:
            row["late_column"] = "widens the file mid-run"
        perfcsv.append(path, [row])
""")


def test_8_processes_appending_at_once_lose_no_row(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "perf.csv"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(path), str(who)], env=env)
             for who in range(8)]  # fmt: skip
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    rows = perfcsv.read(path)
    assert len(rows) == 8 * 40
    for who in range(8):
        mine = [int(r["performance"]) for r in rows if r["model"] == f"p{who}"]
        assert mine == list(range(40))  # each process's rows whole and in its order
    assert all(len(r["args"]) == 3000 for r in rows)
    assert sum(1 for r in rows if r.get("late_column")) == 1
