"""`gpuscope libtrace` then `gpuscope libperf` through the real CLI, the fake vendor bench
binaries (tests/fakes/bin) on PATH and no GPU: a crash, a timeout and a missing binary are rows,
the replay goes on, --limit and the one-line errors. The log lines follow the libraries'
documented formats (shared/notes/formats.md §5); times are the fakes' fixed rates."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"

ROCBLAS = (
    "./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m {m} -n {n} -k {k} --alpha 1 "
    "--a_type f32_r --lda {m} --b_type f32_r --ldb {k} --beta 0 --c_type f32_r --ldc {m} "
    "--d_type f32_r --ldd {m} --compute_type f32_r --algo 0 --solution_index 0 --flags 0"
)
MIOPEN = (
    "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 2 -c 3 -H 32 -W 32 "
    "-k 8 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1"
)
NCCL = (
    "node1:11:11 [0] NCCL INFO {name}: opCount 0 sendbuff 0x7f01 recvbuff 0x7f02 count {count} "
    "datatype 7 op 0 root 0 comm 0x55 [nranks=2] stream 0x0"
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO / "src"),
        "FAKE_TOOL_LOG": str(tmp_path / "tools.log"),
        "FAKE_BENCH_MODE": "hipblaslt-bench=crash,MIOpenDriver=hang",
        "FAKE_BENCH_MATCH": "hipblaslt-bench=-m 512",
    }


def gpuscope(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuscope", *args], env=env, cwd=cwd, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def trace(tmp_path: Path, env: dict[str, str]) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    small, big = ROCBLAS.format(m=256, n=128, k=64), ROCBLAS.format(m=512, n=512, k=512)
    (logs / "rocblas_bench.log").write_text("\n".join([small] * 3 + [big]) + "\n")
    (logs / "libtrace_stderr.log").write_text(MIOPEN + "\n")
    (logs / "nccl_debug.node1.11.log").write_text(
        NCCL.format(name="AllReduce", count=1048576) + "\n"
        + NCCL.format(name="AllGather", count=4096) + "\n"
    )  # fmt: skip
    done = gpuscope(env, tmp_path, "libtrace", str(logs), "-o", "library_trace.csv",
                    "--model", "bert")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tmp_path / "library_trace.csv"


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_libperf_end_to_end_with_fake_vendor_binaries(
    tmp_path: Path, env: dict[str, str], trace: Path
) -> None:
    args = ["libperf", str(trace), "--timeout-s", "2", "--json", "r.json", "--md", "r.md"]
    done = gpuscope(env, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "not on PATH: all_gather_perf" in done.stdout
    rows = rows_of(tmp_path / "library_perf.csv")
    by = {(r["m"] or r["collective"] or r["conv_n"], r["backend"]): r for r in rows}
    # rocblas-bench ran the logged lines: the fake's 50 TFLOP/s
    for m, n, k in ((256, 128, 64), (512, 512, 512)):
        row = by[(str(m), "rocblas-bench")]
        assert row["status"] == "ok"
        assert float(row["time_us"]) == pytest.approx(2 * m * n * k / 5e7, rel=1e-3)
        assert float(row["tflops"]) == pytest.approx(50.0, rel=1e-3)
        assert row["command"].endswith(ROCBLAS.format(m=m, n=n, k=k).split(" ", 1)[1])
    assert by[("256", "rocblas-bench")]["calls"] == "3"
    # hipblaslt-bench crashed on the 512 GEMM only; the replay went on
    assert by[("512", "hipblaslt-bench")]["status"] == "failed: killed by SIGSEGV"
    assert by[("256", "hipblaslt-bench")]["status"] == "ok"
    assert by[("2", "MIOpenDriver")]["status"] == "failed: timeout after 2 s"
    reduce = by[("AllReduce", "all_reduce_perf")]
    assert float(reduce["time_us"]) == pytest.approx(1048576 * 4 / 1e4, rel=1e-4)
    assert float(reduce["gbps"]) == pytest.approx(1048576 * 4 / (1048576 * 4 / 1e4) / 1e3, rel=1e-3)
    assert (
        by[("AllGather", "all_gather_perf")]["status"] == "not found: all_gather_perf not on PATH"
    )
    assert by[("256", "torch")]["status"].startswith("skipped: no PyTorch")
    assert {r["model"] for r in rows} == {"bert"}
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["schema"] == "gpuscope.libperf/1"
    assert report["summary"]["binaries_not_found"] == ["all_gather_perf"]
    assert "# gpuscope libperf" in (tmp_path / "r.md").read_text()


def test_limit_marks_the_rest_and_a_run_dir_is_accepted(
    tmp_path: Path, env: dict[str, str], trace: Path
) -> None:
    done = gpuscope(env, tmp_path, "libperf", str(tmp_path), "--limit", "1",
                    "--backends", "vendor", "-o", "perf.csv")  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = rows_of(tmp_path / "perf.csv")
    replayed = [r for r in rows if not r["status"].startswith("not replayed")]
    # the most costly config on the nominal device: 4 MiB over 100 GB/s = 42 µs, more than
    # the 512³ GEMM's 3 MiB over 2 TB/s = 1.6 µs
    assert {r["collective"] for r in replayed} == {"AllReduce"}
    assert sum(r["status"] == "not replayed: limit" for r in rows) == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["libperf", "missing.csv"], "error: missing.csv: no such file"),
        (["libperf", "library_trace.csv", "--backends", "gpu"], "error: --backends gpu:"),
    ],
)
def test_bad_input_is_one_error_line(
    tmp_path: Path, env: dict[str, str], trace: Path, args: list[str], message: str
) -> None:
    done = gpuscope(env, tmp_path, *args)
    assert done.returncode == 2
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1


def test_dash_outputs_go_to_stdout_and_the_rest_to_stderr(
    tmp_path: Path, env: dict[str, str], trace: Path
) -> None:
    logs = tmp_path / "logs"
    piped = gpuscope(env, tmp_path, "libtrace", str(logs), "-o", "-")
    assert piped.returncode == 0, piped.stderr
    filed = rows_of(trace)
    streamed = list(csv.DictReader(piped.stdout.splitlines()))
    assert [r["config"] for r in streamed] == [r["config"] for r in filed]  # the same rows
    assert "wrote standard output" in piped.stderr and not (tmp_path / "-").exists()
    done = gpuscope(env, tmp_path, "libperf", str(trace), "--backends", "vendor", "--limit", "1",
                    "--no-measure-peaks", "--json", "-")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"] == "gpuscope.libperf/1"  # the report on stderr
    assert "wrote" in done.stderr and not (tmp_path / "-").exists()
    both = gpuscope(env, tmp_path, "libperf", str(trace), "--json", "-", "--md", "-")
    assert both.returncode == 2
    assert both.stderr.strip() == (
        "error: --json and --md both name standard output: only one can go there"
    )
