"""LibraryTraceCollector and library_trace.csv: environment, files, aggregation, killed runs."""

from __future__ import annotations

import csv
import datetime as dt
import shutil
from pathlib import Path

import pytest

from gpuscope.cli import main as cli_main
from gpuscope.errors import ConfigError, InputError
from gpuscope.libtrace.collect import LibraryTraceCollector
from gpuscope.libtrace.table import COLUMNS
from gpuscope.libtrace.tracers import TRACERS
from tests.unit.libtrace.conftest import reference_log

NOW = dt.datetime(2026, 11, 22, 1, 2, 3, tzinfo=dt.timezone.utc)
NCCL_COLL = "nccl-rccl-log/h200x2_nccl2.28.9_torch2.11_COLL.log"


def _collector(run_dir: Path, *tools: str) -> LibraryTraceCollector:
    return LibraryTraceCollector(run_dir, list(tools), jobid="42", model="bert", now=lambda: NOW)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_env_points_every_log_into_the_run_dir(tmp_path: Path) -> None:
    env = _collector(tmp_path, *TRACERS).env()
    assert env["ROCBLAS_LAYER"] == "6" and env["HIPBLASLT_LOG_MASK"] == "32"
    assert env["TENSILE_DB"] == "0x8000" and env["MIOPEN_ENABLE_LOGGING_CMD"] == "1"
    assert env["NCCL_DEBUG"] == "INFO" and env["NCCL_DEBUG_SUBSYS"] == "INIT,COLL"
    assert env["CUBLAS_LOGINFO_DBG"] == "1" and env["CUBLASLT_LOG_LEVEL"] == "2"
    assert env["CUDNN_LOGLEVEL_DBG"] == "3"
    destinations = [
        "ROCBLAS_LOG_BENCH_PATH", "ROCBLAS_LOG_PROFILE_PATH", "HIPBLASLT_LOG_FILE",
        "NCCL_DEBUG_FILE", "CUBLAS_LOGDEST_DBG", "CUBLASLT_LOG_FILE", "CUDNN_LOGDEST_DBG",
    ]  # fmt: skip
    assert all(Path(env[name]).parent == tmp_path for name in destinations)
    assert env["NCCL_DEBUG_FILE"].endswith("%h.%p.log")


def test_streams_to_tee_only_for_tensile_and_miopen(tmp_path: Path) -> None:
    assert _collector(tmp_path, "cublas_trace", "nccl_trace").tee_streams == {}
    streams = _collector(tmp_path, "tensile_trace", "miopen_trace").tee_streams
    assert streams == {
        "stdout": tmp_path / "libtrace_stdout.log",
        "stderr": tmp_path / "libtrace_stderr.log",
    }


def test_unknown_tool_lists_the_valid_names(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="rocblas_trace, hipblaslt_trace"):
        _collector(tmp_path, "cublas_trace", "cublass_trace")


def test_finish_writes_madengine_columns_then_ours(tmp_path: Path) -> None:
    shutil.copy(reference_log("cublas-log/cublas_api.log"), tmp_path / "cublas_api.734.log")
    shutil.copy(reference_log(NCCL_COLL), tmp_path / "nccl_debug.vm.1075.log")
    collector = _collector(tmp_path, "cublas_trace", "nccl_trace")
    out = collector.finish()
    assert out == tmp_path / "library_trace.csv" and collector.warnings == []
    header = out.read_text().splitlines()[0].split(",")
    assert header[:6] == ["jobid", "created_date", "model", "library", "config", "calls"]
    assert b"\r" not in out.read_bytes()  # "\n" line ends, as madengine and most tools write
    assert tuple(header) == COLUMNS
    rows = _rows(out)
    assert [r["library"] for r in rows] == ["cublas"] * 3 + ["nccl"] * 6
    assert {(r["jobid"], r["model"], r["created_date"]) for r in rows} == {
        ("42", "bert", "2026-11-22 01:02:03")
    }
    gemm = rows[0]
    assert (gemm["op"], gemm["m"], gemm["n"], gemm["k"], gemm["calls"]) == (
        "gemm", "128", "256", "512", "1",
    )  # fmt: skip
    allreduce = rows[3]
    assert (allreduce["collective"], allreduce["count"], allreduce["bytes"]) == (
        "AllReduce", "1048576", "4194304",
    )  # fmt: skip
    assert allreduce["calls"] == "2" and allreduce["conv_n"] == ""


def test_rows_survive_a_killed_run(tmp_path: Path) -> None:
    text = reference_log(NCCL_COLL).read_text()
    cut = text.index("count 4096 datatype 7 op 0", text.index("AllGather")) + 5
    (tmp_path / "nccl_debug.vm.1.log").write_text(text[:cut])  # killed mid-line
    collector = _collector(tmp_path, "nccl_trace")
    out = collector.finish()
    assert out is not None
    assert [r["calls"] for r in _rows(out)] == ["2", "2"]  # 4 complete AllReduce lines
    (warning,) = collector.warnings
    assert "no newline" in warning and "nccl_debug.vm.1.log" in warning


def test_rccl_and_nccl_tools_read_the_shared_logs_once(tmp_path: Path) -> None:
    shutil.copy(reference_log(NCCL_COLL), tmp_path / "nccl_debug.vm.1.log")
    out = _collector(tmp_path, "rccl_trace", "nccl_trace").finish()
    assert out is not None
    rows = _rows(out)
    assert {r["library"] for r in rows} == {"rccl"} and len(rows) == 6


def test_tee_streams_are_parsed(tmp_path: Path) -> None:
    shutil.copy(
        reference_log("miopen-log/therock_1899_windows_gfx1150_excerpt.log"),
        tmp_path / "libtrace_stderr.log",
    )
    out = _collector(tmp_path, "miopen_trace").finish()
    assert out is not None
    (row,) = _rows(out)
    assert (row["library"], row["calls"], row["conv_direction"], row["layout"]) == (
        "miopen", "2", "fwd", "NHWC",
    )  # fmt: skip


def test_nothing_logged_gives_no_csv_and_says_so(tmp_path: Path) -> None:
    collector = _collector(tmp_path, "cudnn_trace")
    assert collector.finish() is None
    assert not (tmp_path / "library_trace.csv").exists()
    assert "no library calls were logged" in collector.warnings[0]


def test_cli_rebuilds_from_run_dir_and_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(reference_log("cudnn-log/cudnn_L3.log"), run / "cudnn_api.902.log")
    rocmlir = reference_log("rocblas-log/rocmlir_bert-configs-raw.bench.log")
    out = tmp_path / "lt.csv"
    assert cli_main(["libtrace", str(run), str(rocmlir), "-o", str(out), "--model", "m"]) == 0
    rows = _rows(out)
    assert [r["library"] for r in rows] == ["cudnn"] * 3 + ["rocblas"] * 14
    captured = capsys.readouterr()
    assert "17 configs, 17 calls" in captured.out
    assert captured.err.count("no newline") == 1  # the rocMLIR file, reported once


def test_a_folder_is_read_whole_and_a_run_directory_by_its_tracers_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25. Before: in a folder holding one known log name, `nccl.log` and `miopen.txt`
    were skipped without a word."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(reference_log("cudnn-log/cudnn_L3.log"), logs / "cudnn_api.902.log")
    shutil.copy(reference_log(NCCL_COLL), logs / "nccl.log")
    miopen = "miopen-log/therock_1899_windows_gfx1150_excerpt.log"
    shutil.copy(reference_log(miopen), logs / "miopen.txt")
    out = tmp_path / "lt.csv"
    assert cli_main(["libtrace", str(logs), "-o", str(out)]) == 0
    assert {r["library"] for r in _rows(out)} == {"cudnn", "nccl", "miopen"}
    (logs / "manifest.json").write_text("{}")  # now a run directory: its own names only
    assert cli_main(["libtrace", str(logs), "-o", str(out)]) == 0
    assert {r["library"] for r in _rows(out)} == {"cudnn"}
    capsys.readouterr()


def test_cli_rccl_detection_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "rank0.txt"
    log.write_text(
        "n:1:1 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x1 recvbuff 0x1 count 4 datatype 0 "
        "op 0 root 0 comm 0x2 [nranks=2] stream 0x3 task 0 globalrank 0\n"
    )
    out = tmp_path / "lt.csv"
    assert cli_main(["libtrace", str(log), "-o", str(out)]) == 0
    assert _rows(out)[0]["library"] == "rccl"
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    assert cli_main(["libtrace", str(empty), "-o", str(out)]) == 2
    assert cli_main(["libtrace", str(tmp_path / "missing"), "-o", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_rebuild_errors_are_input_errors(tmp_path: Path) -> None:
    from gpuscope.libtrace.rebuild import calls_from_paths

    with pytest.raises(InputError):
        calls_from_paths([tmp_path / "nope"], [])
