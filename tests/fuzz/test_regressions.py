"""Every failure the fuzzer found, minimised to a small input written here (made-up values in the
formats' own headers, no bytes of the reference files), run through the same CLI oracle.

Each test names the fuzz case that found it (`benchmarks/fuzz_readers.py --seed S --replay ID`
rebuilds the original from the reference files)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.fuzz.mutate import Mutation
from tests.fuzz.oracle import EXIT_2, OK, OK_WARNING, Outcome, judge

ROCPROF_KERNELS = (
    "Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,"
    "sgpr,wave_size,sig,obj,DispatchNs,BeginNs,EndNs,CompleteNs,DurationNs\n"
)
ROCPROF_STATS = '"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
NSYS_API_SUM = (
    "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
)


def kernel_row(index: int, begin: int | str, name: str = "k(int)") -> str:
    return (
        f'{index},"{name}",0,0,0,1,1,256,64,0,0,8,0,16,64,0x0,0x0,{begin},{begin},'
        f"{begin}0,{begin}0,100\n"
    )


def run(path: Path, tmp_path: Path, cut: bool = False) -> Outcome:
    """The CLI on `path`, judged; fails the test on a failure of the oracle."""
    outcome = judge(path, path, tmp_path / "out", Mutation("regression", must_warn=cut))
    assert not outcome.failed, f"{outcome.status}: {outcome.detail}"
    return outcome


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- trace/_csv.py ----------------------------------------------------------------------------


def test_csv_integer_past_int64_is_invalid_not_a_traceback(tmp_path: Path) -> None:
    """rocprof:14 (csv.cells): OverflowError from a 26-digit cell in an integer column."""
    text = ROCPROF_KERNELS + kernel_row(0, 100) + kernel_row(1, "99999999999999999999999999")
    assert run(write(tmp_path / "results.csv", text), tmp_path).status in (OK, OK_WARNING)


def test_csv_with_carriage_return_line_ends(tmp_path: Path) -> None:
    """rocprof:192 (bytes.line-ends): csv.Error on a lone \\r while checking the last row."""
    text = (ROCPROF_STATS + '"k(int)",2,300,150,100.0\n').replace("\n", "\r")
    run(write(tmp_path / "results.stats.csv", text), tmp_path)


def test_nsys_summary_with_carriage_return_line_ends(tmp_path: Path) -> None:
    """nsys:355 (bytes.line-ends): csv.Error from csv_row while finding the report's header."""
    text = (NSYS_API_SUM + "100.0,300,2,150.0,150.0,100,200,70.7,cudaMalloc\n").replace("\n", "\r")
    run(write(tmp_path / "x_cuda_api_sum.csv", text), tmp_path)


def test_csv_cut_last_row_closes_the_file(tmp_path: Path) -> None:
    """rocprof:54 (bytes.truncate): the file of a cut last row was left open (ResourceWarning)."""
    text = ROCPROF_STATS + '"k(int)",2,300,150,100.0\n"j(int)",1'
    outcome = run(write(tmp_path / "results.stats.csv", text), tmp_path, cut=True)
    assert "last row is cut short" in outcome.detail


def test_csv_header_without_rows(tmp_path: Path) -> None:
    """rocprof:61 (csv.rows): numpy's 'input contained no data' UserWarning leaked."""
    run(write(tmp_path / "results.stats.csv", ROCPROF_STATS), tmp_path)


def test_sniffing_a_json_line_longer_than_the_csv_field_limit(tmp_path: Path) -> None:
    """rocprof:180 (json.deep): nsys' sniffer parsed a 200 kB JSON line as CSV (field limit)."""
    event = {
        "name": "x" * 200_000,
        "ph": "X",
        "ts": 1,
        "dur": 2,
        "pid": 1,
        "tid": 1,
        "cat": "cpu_op",
    }
    path = write(tmp_path / "trace.json", json.dumps({"traceEvents": [event, event]}))
    assert run(path, tmp_path).status in (OK, OK_WARNING)


def test_gzip_stream_corrupt_mid_way(tmp_path: Path) -> None:
    """kineto:0 (gzip.bytes.delete): zlib.error from the sniffer's look at the head."""
    events = [
        {"name": f"k{i}", "ph": "X", "ts": i, "dur": 1, "pid": 1, "tid": 1} for i in range(99)
    ]
    packed = bytearray(gzip.compress(json.dumps({"traceEvents": events}).encode(), mtime=0))
    packed[len(packed) // 2] ^= 0xFF
    run(write(tmp_path / "trace.json.gz", bytes(packed)), tmp_path)


_ = EXIT_2
