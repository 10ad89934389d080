"""Every failure the fuzzer found, minimised to a small input written here (made-up values in the
formats' own headers, no bytes of the reference files), run through the same CLI oracle.

Each test names the fuzz case that found it (`benchmarks/fuzz_readers.py --seed S --replay ID`
rebuilds the original from the reference files)."""

from __future__ import annotations

import gzip
import json
from contextlib import closing
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
    """A rocprof v1 kernel row: BeginNs `begin`, 100 ns long (when `begin` is a number)."""
    end = begin + 100 if isinstance(begin, int) else begin
    return (
        f'{index},"{name}",0,0,0,1,1,256,64,0,0,8,0,16,64,0x0,0x0,{begin},{begin},{end},{end},100\n'
    )


def run(path: Path, tmp_path: Path, cut: bool = False, damaged: Path | None = None) -> Outcome:
    """The CLI on `path` (`damaged`: the file cut in a directory), judged; fails the test on a
    failure of the oracle."""
    mutation = Mutation("regression", must_warn=cut)
    outcome = judge(path, damaged or path, tmp_path / "out", mutation)
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
    packed = gzip.compress(json.dumps({"traceEvents": events}).encode(), mtime=0)
    packed = packed[:20] + packed[21:]  # one byte of the deflate stream gone: zlib.error
    run(write(tmp_path / "trace.json.gz", packed), tmp_path)


# --- Kineto and rpd2tracing JSON (trace/_jsonstream.py, readers/kineto/) -----------------------


def kineto(events: list[dict[str, object]]) -> str:
    return json.dumps({"traceEvents": events})


def kernel(ts: object = 10, dur: object = 5, **more: object) -> dict[str, object]:
    event = {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": ts, "dur": dur}
    return {**event, **more}


def test_deeply_nested_value_in_an_event(tmp_path: Path) -> None:
    """kineto:7 (json.deep): msgspec's RecursionError escaped the event stream."""
    text = kineto([kernel(), kernel(20, args="DEEP")]).replace('"DEEP"', "[" * 9999 + "]" * 9999)
    run(write(tmp_path / "trace.json", text), tmp_path)


def test_deeply_nested_value_after_the_events(tmp_path: Path) -> None:
    """kineto:204 (json.deep): the same from the keys after the event array."""
    text = kineto([kernel()])[:-1] + ', "x": ' + "[" * 9999 + "]" * 9999 + "}"
    run(write(tmp_path / "trace.json", text), tmp_path)


def test_timestamp_text_that_is_not_a_number(tmp_path: Path) -> None:
    """kineto:176 (json.long-text): a batch read loosely had its "\\\\" ts parsed as a float."""
    run(write(tmp_path / "trace.json", kineto([kernel(), kernel("\\")])), tmp_path)


def test_timestamps_past_int64_nanoseconds(tmp_path: Path) -> None:
    """kineto:61 (json.bad-number): 1e308 µs cast to int64 (numpy's invalid-value warning)."""
    text = kineto([kernel(), kernel(1e308, 1e308), kernel("1e999"), kernel(10**30)])
    run(write(tmp_path / "trace.json", text), tmp_path)


def rpd_json(events: list[dict[str, object]]) -> str:
    """rpd2tracing's array form: string numbers, process metadata, GPU ops on pid 2."""
    meta = {"name": "process_name", "ph": "M", "pid": "2", "args": {"name": "GPU2"}}
    return json.dumps([{}, meta, *events])


def gpu_op(ts: object, dur: object) -> dict[str, object]:
    return {"pid": "2", "tid": "0", "name": "k", "ts": ts, "dur": dur, "ph": "X",
            "args": {"desc": "KernelExecution"}}  # fmt: skip


def test_rpd_json_timestamp_of_the_wrong_type(tmp_path: Path) -> None:
    """rpd:114 (json.other-value): a list as ts was passed to bytes() (TypeError)."""
    text = rpd_json([gpu_op("100", "5"), gpu_op(["1"], "5"), gpu_op(None, {"a": 1})])
    run(write(tmp_path / "matmul_result.json", text), tmp_path)


def test_rpd_json_numbers_past_int64(tmp_path: Path) -> None:
    """rpd:90 (json.bad-number): huge ids and durations overflowed numpy's int64."""
    ops = [gpu_op("100", "5"), gpu_op("200", "99999999999999999999"), gpu_op(1e308, 2**64)]
    ops.append({**gpu_op("300", "1"), "tid": "1e999"})
    run(write(tmp_path / "matmul_result.json", rpd_json(ops)), tmp_path)


# --- rocprofv3, ncu, nsys stats, rocprof counters: numbers past int64 or float overflow ---------

ROCPROFV3_COPIES = (
    '"Kind","Direction","Stream_Id","Source_Agent_Id","Destination_Agent_Id","Correlation_Id",'
    '"Start_Timestamp","End_Timestamp"\n'
)


def test_rocprofv3_agent_reference_past_int64(tmp_path: Path) -> None:
    """rocprofv3:107 (csv.whole-column): 'Agent 9…9' overflowed the agent id column."""
    row = '"MEMORY_COPY","MEMORY_COPY_HOST_TO_DEVICE",0,"Agent {}","Agent 4",1,1000,2000\n'
    text = ROCPROFV3_COPIES + row.format(0) + row.format("9" * 30)
    run(write(tmp_path / "1_memory_copy_trace.csv", text), tmp_path)


NCU_DETAILS = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
)


def ncu_row(kernel: int, metric: str, unit: str, value: str) -> str:
    return (
        f'"{kernel}","1","python","host","k(int)","1","7","(128, 1, 1)","(4, 1, 1)","0","9.0",'
        f'"GPU Speed Of Light Throughput","{metric}","{unit}","{value}"\n'
    )


def test_ncu_duration_past_int64(tmp_path: Path) -> None:
    """ncu:275 (csv.cells): round(1e308) ns did not fit int64 (and inf raised OverflowError)."""
    rows = [ncu_row(0, "Duration", "ns", "1000"), ncu_row(1, "Duration", "ns", "1e308")]
    rows.append(ncu_row(2, "Duration", "ns", "inf"))
    run(write(tmp_path / "x_details.csv", NCU_DETAILS + "".join(rows)), tmp_path)


def test_ncu_file_cut_inside_its_header(tmp_path: Path) -> None:
    """ncu:7 (bytes.truncate): a header cut short read as a page of no kernels, silently."""
    path = write(tmp_path / "x_details.csv", NCU_DETAILS[:-40])
    outcome = run(path, tmp_path, cut=True)
    assert outcome.status == EXIT_2 or "header line is cut short" in outcome.detail


NSYS_GPU_TRACE = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
)


def test_nsys_gpu_trace_megabytes_overflow(tmp_path: Path) -> None:
    """nsys:131 (csv.cells): 1e308 MB × 1e6 overflowed (numpy warning, then an invalid cast)."""
    copy = "{},100,2,,,,,,,,,,{},40.960,Pageable,Device,NVIDIA A100 (0),1,,7,[CUDA memcpy HtoD]\n"
    text = NSYS_GPU_TRACE + copy.format(1000, "0.004") + copy.format(2000, "1e308")
    run(write(tmp_path / "x_cuda_gpu_trace.csv", text), tmp_path)


ROCPROF_COUNTERS = (
    "Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,"
    "sgpr,wave_size,sig,obj,FETCH_SIZE,WRITE_SIZE\n"
)


def test_rocprof_kib_counter_overflow(tmp_path: Path) -> None:
    """rocprof:453 (csv.cells): FETCH_SIZE 1e308 KiB × 1024 overflowed (numpy warning)."""
    row = '{},"k(int)",0,0,0,1,1,256,64,0,0,8,0,16,64,0x0,0x0,{},2.0\n'
    text = ROCPROF_COUNTERS + row.format(0, "6.5") + row.format(1, "1e308")
    run(write(tmp_path / "results.csv", text), tmp_path)


def test_times_past_int64_differences_are_refused(tmp_path: Path) -> None:
    """rocprof:78 (sqlite.values): a begin near 2^63 ns overflowed the timeline's end - start."""
    text = ROCPROF_KERNELS + kernel_row(0, 100) + kernel_row(1, 9_000_000_000_000_000_000)
    outcome = run(write(tmp_path / "results.csv", text), tmp_path)
    assert outcome.status == EXIT_2 and "past ±2^61" in outcome.detail


# --- SQLite readers --------------------------------------------------------------------------


def test_nsys_export_with_empty_api_tables(tmp_path: Path) -> None:
    """nsys:464 (sqlite.empty): a sync's API name was looked up in empty runtime tables."""
    from tests.unit.trace.test_nsys import CUDA_TABLES, PID_A, Export, gid

    export = Export(tmp_path / "x.sqlite", CUDA_TABLES | {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"})
    export.kernel(1000, 500, "k(int)", corr=11)
    sync = {"start": 4000, "end": 4500, "deviceId": 0, "contextId": 1, "streamId": 7}
    sync.update(correlationId=99, globalPid=gid(PID_A), syncType=3, eventId=0)
    export.insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", **sync)
    run(Path(export.close()), tmp_path)


def test_rocpd_without_thread_rows(tmp_path: Path) -> None:
    """rocpd:396 (sqlite.empty): thread ids were looked up in an empty rocpd_info_thread."""
    import sqlite3

    from tests.unit.trace.test_rocpd import generator

    path = tmp_path / "7_results.db"
    generator().make_rocpd(path, 20, reference=None)
    with closing(sqlite3.connect(path)) as db, db:
        tables = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_info_thread%'"
        )
        for (name,) in tables.fetchall():
            db.execute(f'DELETE FROM "{name}"')
    run(path, tmp_path)


def test_sqlite_table_name_that_is_not_utf8(tmp_path: Path) -> None:
    """rpd:270 (sqlite.page): SQLite's 'malformed database schema (NAME)' message quoting a name
    that is not UTF-8 raised UnicodeDecodeError from the sniffer's first query."""
    import sqlite3

    path = tmp_path / "x.rpd"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute('CREATE TABLE "t\u00e9" (a INTEGER)')
    data = path.read_bytes().replace(b"t\xc3\xa9", b"t\xe9 ")  # a lone Latin-1 é
    data = data.replace(b"(a INTEGER)", b"(a INTEGER,")  # and a schema that does not parse
    assert run(write(path, data), tmp_path).status == EXIT_2


# --- cuts the readers did not report --------------------------------------------------------


def test_kineto_cut_after_the_event_array(tmp_path: Path) -> None:
    """kineto:343 (json.truncate): a cut in deviceProperties, after the events, went unsaid."""
    text = kineto([kernel()])[:-1] + ', "deviceProperties": [{"id": 0, "name": "AMD Ins'
    outcome = run(write(tmp_path / "trace.json", text), tmp_path, cut=True)
    assert "ends after the event array" in outcome.detail


def test_kineto_gzip_stream_cut_in_its_trailer(tmp_path: Path) -> None:
    """kineto:771 (gzip.bytes.truncate): a gzip stream without its last bytes was read as whole."""
    packed = gzip.compress(kineto([kernel(), kernel(20)]).encode(), mtime=0)
    outcome = run(write(tmp_path / "trace.json.gz", packed[:-4]), tmp_path, cut=True)
    assert "ends after the event array" in outcome.detail


def test_rocprof_json_cut_in_other_data(tmp_path: Path) -> None:
    """rocprof:395 (bytes.truncate): results.json cut inside its closing otherData dump."""
    label = '{"args":{"name":"%s"},"ph":"M","pid":%d,"name":"process_name","sort_index":%d}'
    op = ('{"ph":"X","name":"k","pid":"8","tid":"1","ts":"20","dur":"10","args":{"BeginNs":'
          '"20000","EndNs":"30000","Name":"k","dev-id":"2","DurationNs":"10000"}}')  # fmt: skip
    text = '{ "traceEvents":[{},' + label % ("GPU2", 8, 1) + "," + op
    text += '],\n"otherData": {\n    "Agent5.Name": "gfx9'
    outcome = run(write(tmp_path / "results.json", text), tmp_path, cut=True)
    assert "ends after the event array" in outcome.detail


def test_rocprof_stats_whose_only_row_is_cut(tmp_path: Path) -> None:
    """rocprof:186 (bytes.truncate): the cut file read no rows, and its warning was dropped."""
    path = write(tmp_path / "results.copy_stats.csv", ROCPROF_STATS + "CopyHostToDevice,1")
    outcome = run(path, tmp_path, cut=True)
    assert outcome.status == EXIT_2 or "cut short" in outcome.detail


def test_nsys_summary_with_a_cut_last_row(tmp_path: Path) -> None:
    """nsys:4 (bytes.truncate): a summary's short last row was skipped without a word."""
    text = NSYS_API_SUM + "61.8,300,2,150.0,150.0,100,200,70.7,cudaMalloc\n38.2,12775101,1536,"
    outcome = run(write(tmp_path / "x_cuda_api_sum.csv", text), tmp_path, cut=True)
    assert "last row of cuda_api_sum is cut short" in outcome.detail


ROCMINFO = """CMD: rocminfo
ROCk module is loaded
==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    made-up-cpu
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx942
  Marketing Name:          Made-up GPU
  Device Type:             GPU
  Compute Unit:            304
*** Done ***
"""


def test_rocminfo_dump_cut_in_a_run_directory(tmp_path: Path) -> None:
    """rocprof:69 (bytes.truncate): results.sysinfo.txt without its end was read as whole."""
    folder = tmp_path / "run"
    folder.mkdir()
    write(folder / "results.csv", ROCPROF_KERNELS + kernel_row(0, 100))
    dump = write(folder / "results.sysinfo.txt", ROCMINFO[: ROCMINFO.index("Compute Unit")])
    outcome = run(folder, tmp_path, cut=True, damaged=dump)
    assert "rocminfo dump ends before" in outcome.detail


# --- SQLite values and schemas of the wrong kind ----------------------------------------------


def rocprof_db(path: Path, copy: tuple[object, ...]) -> Path:
    """A rocprof v1 results.db with one kernel and one copy row (`copy`: BeginNs, EndNs, dev-id,
    Name, Index, Data)."""
    import sqlite3

    with closing(sqlite3.connect(path)) as db, db:
        db.execute('CREATE TABLE KERN ("Index" INTEGER, "KernelName" TEXT, "gpu-id" INTEGER, '
                   '"BeginNs" INTEGER, "EndNs" INTEGER)')  # fmt: skip
        db.execute("INSERT INTO KERN VALUES (0, 'k(int)', 2, 100, 150)")
        db.execute('CREATE TABLE COPY ("BeginNs" INTEGER, "EndNs" INTEGER, "dev-id" INTEGER, '
                   '"Name" TEXT, "Index" INTEGER, "Data")')  # fmt: skip
        db.execute("INSERT INTO COPY VALUES (?, ?, ?, ?, ?, ?)", copy)
    return path


def test_rocprof_db_infinite_real_in_an_integer_column(tmp_path: Path) -> None:
    """rocprof:241 (sqlite.values): int(inf) raised OverflowError."""
    path = rocprof_db(tmp_path / "results.db", (10, 20, float("inf"), "CopyHostToDevice", 5, ""))
    run(path, tmp_path)


def test_rocprof_db_copy_data_that_is_a_number(tmp_path: Path) -> None:
    """rocprof:769 (sqlite.swap-pages): an integer in the copy's Data column ('in' on an int)."""
    path = rocprof_db(tmp_path / "results.db", (10, 20, 2, "CopyHostToDevice", 5, 7))
    run(path, tmp_path)


def test_nsys_enum_table_without_its_id_column(tmp_path: Path) -> None:
    """nsys:31 (sqlite.drop-column): KeyError 'id' reading an ENUM_* table without ids."""
    from tests.unit.trace.test_nsys import CUDA_TABLES, PID_A, Export, gid

    tables = CUDA_TABLES | {"CUPTI_ACTIVITY_KIND_MEMCPY"}
    export = Export(tmp_path / "x.sqlite", tables)
    export.kernel(1000, 500, "k(int)", corr=11)
    copy = {"start": 2000, "end": 2100, "deviceId": 0, "contextId": 1, "streamId": 7}
    copy.update(correlationId=13, globalPid=gid(PID_A), bytes=4096, copyKind=1)
    export.insert("CUPTI_ACTIVITY_KIND_MEMCPY", **copy, srcKind=1, dstKind=2)
    export.db.execute("CREATE TABLE ENUM_CUDA_MEMCPY_OPER (name TEXT, label TEXT)")
    export.insert("ENUM_CUDA_MEMCPY_OPER", name="CUDA_MEMCPY_KIND_HTOD", label="Host-to-Device")
    run(Path(export.close()), tmp_path)


def test_rocpd_schema_that_is_not_utf8(tmp_path: Path) -> None:
    """rocpd:408 (sqlite.page): a corrupt name in the schema of a claimed rocpd database raised
    UnicodeDecodeError from the reader's first query."""
    import sqlite3

    from tests.unit.trace.test_rocpd import generator

    path = tmp_path / "7_results.db"
    generator().make_rocpd(path, 5, reference=None)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute('CREATE TABLE "z\u00e9" (a INTEGER)')
    data = (
        path.read_bytes().replace(b"z\xc3\xa9", b"z\xe9 ").replace(b"(a INTEGER)", b"(a INTEGER,")
    )
    assert run(write(path, data), tmp_path).status == EXIT_2


def test_sqlite_cut_inside_its_last_page(tmp_path: Path) -> None:
    """rocprof:4 (quick subset, sqlite.truncate): a results.db cut inside its last page was read
    as whole: SQLite reads a short last page without complaint (its missing bytes as zeros)."""
    path = rocprof_db(tmp_path / "results.db", (10, 20, 2, "CopyHostToDevice", 5, "Size=64"))
    data = path.read_bytes()
    outcome = run(write(path, data[:-100]), tmp_path, cut=True)
    assert outcome.status == EXIT_2 or "header says" in outcome.detail


# --- found by the fifth round (seed 5) ---------------------------------------------------------


def test_rocpd_rowid_at_the_int64_limit(tmp_path: Path) -> None:
    """rocpd:168 (sqlite.values): a rowid of 2^63 - 1 made the scan's range end 2^63, which
    SQLite takes as no parameter (OverflowError)."""
    import sqlite3

    from tests.unit.trace.test_rocpd import generator

    path = tmp_path / "7_results.db"
    generator().make_rocpd(path, 20, reference=None)
    with closing(sqlite3.connect(path)) as db, db:
        names = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_region%'"
        ).fetchall()
        for (name,) in names:
            db.execute(f'UPDATE "{name}" SET id = {2**63 - 1} WHERE id = (SELECT max(id) '
                       f'FROM "{name}")')  # fmt: skip
    run(path, tmp_path)


def test_ncu_device_past_int32(tmp_path: Path) -> None:
    """ncu:239 (csv.cells): a Device of 2^63 - 1 overflowed the int32 device column."""
    row = ncu_row(0, "Duration", "ns", "1000").replace('"0","9.0"', f'"{2**63 - 1}","9.0"')
    run(write(tmp_path / "x_details.csv", NCU_DETAILS + row), tmp_path)


def test_rocprofv3_json_nested_too_deep_or_not_utf8(tmp_path: Path) -> None:
    """rocprofv3:859 (json.deep), :1220 (bytes.flip): RecursionError and UnicodeDecodeError
    escaped the rocprofv3 JSON decoder."""
    nest = "[" * 9999 + "]" * 9999
    deep = '{"rocprofiler-sdk-tool": [{"agents": [{"fw_version": {"uCode": ' + nest + "}}]}]}"
    assert run(write(tmp_path / "1_results.json", deep), tmp_path).status == EXIT_2
    raw = b'{"rocprofiler-sdk-tool": [{"agents": [{"product_name": "AMD\xbb"}]}]}'
    assert run(write(tmp_path / "2_results.json", raw), tmp_path / "b").status == EXIT_2


NSYS_KERN_SUM = (
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
)


def test_nsys_summary_cut_inside_a_quoted_name(tmp_path: Path) -> None:
    """nsys:253 (bytes.truncate): a last row cut inside its quoted name has every field."""
    text = NSYS_KERN_SUM + '100.0,300,1,300.0,300.0,300,300,0.0,"add(int, f'
    outcome = run(write(tmp_path / "x_cuda_gpu_kern_sum.csv", text), tmp_path, cut=True)
    assert "cut short" in outcome.detail


def test_csv_last_line_only_an_open_quote(tmp_path: Path) -> None:
    """rocprofv3:712 (bytes.truncate): a last line of one `"` parsed as a blank row, skipped."""
    header = '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp",'
    header += '"End_Timestamp"\n'
    row = '"HSA_CORE_API","hsa_init",197,197,1,1000,2000\n'
    outcome = run(write(tmp_path / "1_hsa_api_trace.csv", header + row + '"'), tmp_path, cut=True)
    assert "cut short" in outcome.detail


def test_rocprof_kernel_csv_cut_inside_its_header(tmp_path: Path) -> None:
    """rocprof:181 (bytes.truncate): a header cut after `sig,` read as a run without kernels."""
    text = ROCPROF_COUNTERS[: ROCPROF_COUNTERS.index("obj")]
    outcome = run(write(tmp_path / "results.csv", text), tmp_path, cut=True)
    assert outcome.status == EXIT_2 or "header line is cut short" in outcome.detail


# --- found by the sixth round (seed 6) ---------------------------------------------------------


def test_kineto_launch_dimensions_past_int64(tmp_path: Path) -> None:
    """kineto:660 (json.bad-number): a grid of 10^30 overflowed the launch-parameter columns."""
    args = {"grid": [10**30, 1, 1], "block": [128, 1, 1], "correlation": 1}
    events = [kernel(args={**args, "grid": [4, 1, 1]}), kernel(20, args=args)]
    run(write(tmp_path / "trace.json", kineto(events)), tmp_path)


ROCPROFV3_KERNEL_STATS = (
    '"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"\n'
)


def test_summary_totals_that_add_up_past_int64(tmp_path: Path) -> None:
    """rocprofv3:351 (csv.cells): totals near 2^63 summed in the analysis (invalid cast)."""
    row = '"k{}",{},{},1,50.0,1,1,0.0\n'
    text = ROCPROFV3_KERNEL_STATS + "".join(row.format(i, 2**62, 2**62) for i in range(3))
    outcome = run(write(tmp_path / "1_kernel_stats.csv", text), tmp_path)
    assert outcome.status == EXIT_2 and "past ±2^61" in outcome.detail


ROCPROFV3_COUNTERS = (
    "Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,Kernel_Name,"
    "Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,SGPR_Count,Counter_Name,"
    "Counter_Value\n"
)


def test_counter_values_past_1e300(tmp_path: Path) -> None:
    """rocprofv3:279 (csv.whole-column): -1e308 counter values overflowed a sum (numpy warning)."""
    row = '{0},{0},1,1,7,7,1024,"k(int)",64,0,0,12,16,SQ_WAVES,{1}\n'
    text = ROCPROFV3_COUNTERS + row.format(1, "-1e308") + row.format(2, "-1e308")
    outcome = run(write(tmp_path / "1_counter_collection.csv", text), tmp_path)
    assert outcome.status == EXIT_2 and "counter values" in outcome.detail


def test_rocpd_kernel_name_that_is_a_number(tmp_path: Path) -> None:
    """rocpd:633 (sqlite.swap-pages): a kernel name that is not text (an integer there; a blob
    here, as SQL cannot put an integer in a TEXT column) went into a regex (TypeError)."""
    import sqlite3

    from tests.unit.trace.test_rocpd import generator

    path = tmp_path / "7_results.db"
    generator().make_rocpd(path, 20, reference=None)
    with closing(sqlite3.connect(path)) as db, db:
        names = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_info_kernel%'"
        ).fetchall()
        for (name,) in names:
            db.execute(f"UPDATE \"{name}\" SET display_name = X'07', kernel_name = X'07'")
    run(path, tmp_path)


def test_ncu_rules_without_a_speedup_type_column(tmp_path: Path) -> None:
    """ncu:889 (bytes.flip): 'Estimated Speedup' without 'Estimated Speedup Type' (KeyError)."""
    header = NCU_DETAILS.rstrip("\n") + ',"Rule Name","Rule Type","Rule Description",'
    header += '"Estimated Speedup"\n'
    metric = ncu_row(0, "Duration", "ns", "1000").rstrip("\n") + ',"","","",""\n'
    rule = ncu_row(0, "", "", "").rstrip("\n") + ',"SOLBottleneck","OPT","made up","12.5"\n'
    run(write(tmp_path / "x_details.csv", header + metric + rule), tmp_path)


def test_csv_cut_inside_its_header_line(tmp_path: Path) -> None:
    """rocprof:1737 (seed 1, bytes.truncate): a stats header cut inside its last quoted name
    read as a file without rows, silently."""
    path = write(
        tmp_path / "results.stats.csv", ROCPROF_STATS[:-2]
    )  # `"Percentage` without its closing quote
    outcome = run(path, tmp_path, cut=True)
    assert outcome.status == EXIT_2 or "header line is cut short" in outcome.detail


def test_rocprofv3_json_registers_and_grid_past_int64(tmp_path: Path) -> None:
    """rocprofv3:1002 (seed 1, json.bad-number): a register count of 2^64 - 1 (msgspec takes
    unsigned 64-bit) overflowed the int64 register column; a grid size too."""
    from tests.unit.trace.test_rocprofv3 import json_document

    document = json_document(908)
    process = document["rocprofiler-sdk-tool"][0]
    process["kernel_symbols"][1]["arch_vgpr_count"] = 2**64 - 1
    dispatch = process["buffer_records"]["kernel_dispatch"][0]["dispatch_info"]
    dispatch["grid_size"]["x"] = 2**64 - 1
    run(write(tmp_path / "908_results.json", json.dumps(document)), tmp_path)


def test_kineto_without_its_last_closing_brace(tmp_path: Path) -> None:
    """kineto:2050 (seed 1, json.truncate): the keys after the events closed their own object
    (`"distributedInfo": {"rank": 1}`) but not the document; the check saw a `}` and was done."""
    text = kineto([kernel()])[:-1] + ', "distributedInfo": {"rank": 1}\n'
    outcome = run(write(tmp_path / "trace.json", text), tmp_path, cut=True)
    assert "ends after the event array" in outcome.detail


def test_csv_cut_between_two_header_cells(tmp_path: Path) -> None:
    """rocprofv3:6288 (seed 1, bytes.truncate): a stats header cut after a whole cell kept the
    columns the reader needs and read as a file without rows, silently."""
    header = '"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"'
    path = write(tmp_path / "1_hip_stats.csv", header[: header.index(',"MinNs"')])
    outcome = run(path, tmp_path, cut=True)
    assert outcome.status == EXIT_2 or "header line is cut short" in outcome.detail


def test_rpd_json_flow_ends_without_gpu_ops(tmp_path: Path) -> None:
    """rpd:5087 (seed 1, json.bad-number): flow finish events but no GPU op left to land on
    (IndexError in the link look-up)."""
    call = {"pid": "7", "tid": "7", "name": "hipLaunchKernel", "ts": "100", "dur": "5", "ph": "X",
            "args": {"desc": "hipLaunchKernel"}}  # fmt: skip
    flow = {"cat": "api_op", "name": "api_op", "id": "1"}
    start = {**flow, "pid": "7", "tid": "7", "ts": "101", "ph": "s"}
    finish = {**flow, "pid": "2", "tid": "0", "ts": "200", "ph": "f", "bp": "e"}
    run(write(tmp_path / "matmul_result.json", rpd_json([call, start, finish])), tmp_path)


def test_warning_quoting_a_line_break_stays_one_line(tmp_path: Path) -> None:
    """ncu:7501 (seed 1, bytes.insert): a Process ID cell holding a line break was quoted in a
    warning ('kernels of 2 processes (pid \\n1183, 1183)'), which printed as two lines."""
    header = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
    header += '"Block Size","Grid Size","Device","CC","gpu__time_duration.sum"\n'
    units = '"","","","","","","","","","","","nsecond"\n'
    row = '"{}","{}","python","host","k(int)","1","7","(128, 1, 1)","(4, 1, 1)","0","9.0","1000"\n'
    text = header + units + row.format(0, "1183") + row.format(1, "\n1183")
    outcome = run(write(tmp_path / "x_raw.csv", text), tmp_path)
    assert outcome.status == OK_WARNING and "processes" in outcome.detail


# --- found by the verification run (seed 8) ----------------------------------------------------


def test_rocprof_db_call_times_that_wrap(tmp_path: Path) -> None:
    """rocprof:1061 (seed 8, sqlite.values): a hipMemcpy's BeginNs of -2^63 made its end
    (begin + duration, numpy scalars) overflow while matching its copy (numpy warning)."""
    import sqlite3

    path = rocprof_db(tmp_path / "results.db", (10, 20, 2, "CopyHostToDevice", 8, ""))
    with closing(sqlite3.connect(path)) as db, db:
        db.execute('CREATE TABLE HIP ("BeginNs" INTEGER, "EndNs" INTEGER, "pid" INTEGER, '
                   '"tid" INTEGER, "Name" TEXT, "args" TEXT, "Index" INTEGER)')  # fmt: skip
        db.execute(
            "INSERT INTO HIP VALUES (?, 30, 2, 7, 'hipMemcpy', "
            "'( dst(0x1) src(0x2) sizeBytes(128) kind(1))', 8)",
            (-(2**63),),
        )
    run(path, tmp_path)


def test_ncu_launch_values_past_their_columns(tmp_path: Path) -> None:
    """ncu:1518 (seed 8, bytes.duplicate): a register count of 150,109,880,320 overflowed the
    int32 column; a block size past int32 and a grid past int64 likewise."""
    header = NCU_DETAILS
    rows = [
        ncu_row(0, "Duration", "ns", "1000"),
        ncu_row(0, "Registers Per Thread", "", "150109880320"),
    ]
    text = header + "".join(rows)
    text = text.replace('"(128, 1, 1)","(4, 1, 1)"', f'"({2**40}, 1, 1)","({10**30}, 1, 1)"')
    run(write(tmp_path / "x_details.csv", text), tmp_path)
