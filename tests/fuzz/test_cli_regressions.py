"""Every failure the CLI mode of the fuzzer found, minimised to a command line over a small made-up
input (or a bundled trace), run and judged by the same oracle (tests/fuzz/cli_oracle.py).

Each test names the fuzz case that found it (`benchmarks/fuzz_cli.py --seed S --replay ID`
rebuilds the original from the reference files)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.fuzz.cli_commands import Plan
from tests.fuzz.cli_exec import Ran, execute
from tests.fuzz.cli_oracle import judge, prior, snapshot
from tests.fuzz.cli_targets import FAIL, REFUSE, WRITE, Output
from tests.fuzz.oracle import Outcome
from tests.unit.counters.conftest import write_counters

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "data" / "llama_compiled_h200.json.gz"  # recorded on an H200, 6.6 kB
ODD = "in put\n\x1b[2J"  # a folder name with a space, a line end and an escape sequence


def cli(folder: Path, plan: Plan) -> tuple[Outcome, Ran]:
    """Run `plan` in `folder` as the fuzzer does; fails the test on a failure of the oracle."""
    tmp = folder.parent / f"{folder.name}-tmp"
    tmp.mkdir(exist_ok=True)
    before, was = snapshot(folder), prior(plan)
    ran = execute(plan, folder, tmp, timeout=60)
    outcome = judge(plan, ran, before, was, folder, tmp)
    assert not outcome.failed, f"{outcome.status}: {outcome.detail}"
    return outcome, ran


def out(option: str, given: str, format: str, expect: str = WRITE, path: str = "") -> Output:
    return Output(option, given, "test", expect, format, path=path)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "case"
    path.mkdir()
    return path


# --- error and warning lines -------------------------------------------------------------------


def test_a_warning_naming_a_file_in_an_odd_folder_is_one_line(folder: Path) -> None:
    """export:185, libtrace:206, analyze:385 (seed 3): a warning naming a file in a folder called
    'in put\\n\\x1b[2J' was printed over two lines, with the escape sequence raw."""
    (folder / ODD).mkdir()
    text = gzip.decompress(TRACE.read_bytes())
    (folder / ODD / "cut.json").write_bytes(text[: len(text) * 2 // 3])
    _, ran = cli(folder, Plan("analyze", ["analyze", f"{ODD}/cut.json", "-q"], []))
    assert b"in put\\x0a\\x1b[2J/cut.json: truncated" in ran.stderr


def test_an_error_naming_a_file_in_an_odd_folder_is_one_line(folder: Path) -> None:
    (folder / ODD).mkdir()
    (folder / ODD / "notes.txt").write_text("not a trace\n")
    outcome, ran = cli(folder, Plan("analyze", ["analyze", f"{ODD}/notes.txt"], []))
    assert outcome.status == "exit-2" and b"\x1b" not in ran.stderr
    assert ran.stderr.startswith(b"error: in put \\x1b[2J/notes.txt: not a profiler output")


def test_wrote_names_an_odd_output_on_one_line(folder: Path) -> None:
    """export:360 (seed 3): 'wrote out put\\n\\x1b[31m…' over two lines."""
    shutil.copyfile(TRACE, folder / "in.json.gz")
    name = "out put\n\x1b[31m.json"
    plan = Plan("export", ["export", "in.json.gz", "-o", name], [
        out("-o", name, "perfetto", path=str(folder / name))])  # fmt: skip
    _, ran = cli(folder, plan)
    assert b"wrote out put\\x0a\\x1b[31m.json:" in ran.stderr


# --- a closed standard output ------------------------------------------------------------------


@pytest.mark.parametrize("command", ["analyze", "diff"])
def test_a_terminal_report_into_a_closed_pipe_ends_141(folder: Path, command: str) -> None:
    """analyze:25 (seed 1), diff:23, bench:152 (seed 3): rich's Console turns the broken pipe
    into SystemExit(1), the exit status of a failed gate (`gpuscope analyze t | head` in a
    pipefail script)."""
    shutil.copyfile(TRACE, folder / "in.json.gz")
    inputs = ["in.json.gz"] * (2 if command == "diff" else 1)
    plan = Plan(command, [command, *inputs], [], stdout="closed")
    _, ran = cli(folder, plan)
    assert ran.rc == 141 and not ran.stderr


# --- export's streamed writer ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["x.json", "x.json.gz"])
def test_export_to_a_full_device_is_one_error(folder: Path, name: str) -> None:
    """export:28, export:149 (seed 2), analyze:130 (seed 3, --perfetto): the timeline writer
    closed its file outside the safe writer, so ENOSPC from the last flush was a traceback."""
    shutil.copyfile(TRACE, folder / "in.json.gz")
    (folder / name).symlink_to("/dev/full")  # a name ending .gz for the same device
    plan = Plan("export", ["export", "in.json.gz", "-o", name], [
        Output("-o", name, "dev-full", FAIL, "perfetto")])  # fmt: skip
    outcome, ran = cli(folder, plan)
    assert outcome.status == "exit-2" and b"No space left on device" in ran.stderr


def test_export_into_a_read_only_folder_is_one_error(folder: Path) -> None:
    """export:39, export:242, analyze:286 (seed 3): opening the temporary file beside the target
    in a read-only folder raised PermissionError outside the safe writer: a traceback."""
    shutil.copyfile(TRACE, folder / "in.json.gz")
    (folder / "ro").mkdir(mode=0o555)
    for option in ("-o", "--perfetto"):
        command = "export" if option == "-o" else "analyze"
        argv = [command, "in.json.gz", option, "ro/t.json", "-q"][: 4 if command == "export" else 5]
        plan = Plan(command, argv, [Output(option, "ro/t.json", "readonly-dir", FAIL, "perfetto")])
        plan.no_dac = True
        outcome, ran = cli(folder, plan)
        assert outcome.status == "exit-2" and b"Permission denied" in ran.stderr


# --- libtrace ------------------------------------------------------------------------------


ROCBLAS_LOG = (
    "./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 256 -n 128 -k 64 --alpha 1 "
    "--a_type f32_r --lda 256 --b_type f32_r --ldb 64 --beta 0 --c_type f32_r --ldc 256 "
    "--d_type f32_r --ldd 256 --compute_type f32_r --algo 0 --solution_index 0 --flags 0\n"
)


@pytest.mark.parametrize("given", ["logs", "logs/rocblas.log"])
def test_libtrace_names_an_unreadable_log(folder: Path, given: str) -> None:
    """libtrace:156 (seed 2), libtrace:10, :100, :215, :237, :485 (seed 3): a log that cannot be
    read, alone or in a folder, was a PermissionError traceback; now 'permission denied'."""
    (folder / "logs").mkdir()
    (folder / "logs" / "rocblas.log").write_text(ROCBLAS_LOG)
    (folder / "logs" / "rocblas.log").chmod(0)
    plan = Plan("libtrace", ["libtrace", given, "-o", "t.csv"], [
        out("-o", "t.csv", "csv", path=str(folder / "t.csv"))])  # fmt: skip
    plan.no_dac = True
    outcome, ran = cli(folder, plan)
    assert outcome.status == "exit-2"
    assert ran.stderr == b"error: logs/rocblas.log: permission denied\n"


# --- analyze --perfetto ----------------------------------------------------------------------


ROCPROF_STATS = (
    '"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n"k(int)",2,300,150,100.0\n'
)


def test_a_timeline_that_cannot_be_made_stops_analyze_before_any_report(folder: Path) -> None:
    """analyze:31 (seed 2), analyze:83, :487 (seed 3): per-name totals have nothing to put on a
    timeline; the reports (over the user's older files) were written first, then exit 2."""
    (folder / "results.stats.csv").write_text(ROCPROF_STATS)
    (folder / "r.md").write_text("an older report\n")
    argv = ["analyze", "results.stats.csv", "--json", "r.json", "--md", "r.md", "--perfetto",
            "t.json"]  # fmt: skip
    outputs = [out("--json", "r.json", "json", path=str(folder / "r.json")),
               out("--md", "r.md", "md", path=str(folder / "r.md")),
               out("--perfetto", "t.json", "perfetto", path=str(folder / "t.json"))]  # fmt: skip
    outcome, ran = cli(folder, Plan("analyze", argv, outputs))
    assert outcome.status == "exit-2" and b"nothing to put on a timeline" in ran.stderr
    assert (folder / "r.md").read_text() == "an older report\n"
    assert not (folder / "r.json").exists() and not (folder / "t.json").exists()


# --- bench -----------------------------------------------------------------------------------


SCRIPT = "def f():\n    return lambda: None\n"
BENCH = ["bench", "s.py:f", "--mode", "cpu", "--budget", "0.02", "--no-peaks"]


def test_a_bad_baseline_stops_bench_before_its_json(folder: Path) -> None:
    """bench:167 (seed 3): the baseline was read after the measurement was written to --json."""
    (folder / "s.py").write_text(SCRIPT)
    (folder / "base.json").write_text('{"schema": "gpuscope.bench/1"}')
    argv = [*BENCH, "--json", "b.json", "--baseline", "base.json"]
    outcome, ran = cli(folder, Plan("bench", argv, [out("--json", "b.json", "json",
                                                        path=str(folder / "b.json"))]))  # fmt: skip
    assert outcome.status == "exit-2" and b"not a valid gpuscope.bench/1" in ran.stderr
    assert not (folder / "b.json").exists()


def test_bench_json_to_stdout_is_that_json_alone(folder: Path) -> None:
    """bench:309 (seed 3): `--json -` wrote the terminal view and then the JSON to stdout."""
    (folder / "s.py").write_text(SCRIPT)
    plan = Plan("bench", [*BENCH, "--json", "-"], [
        Output("--json", "-", "dash", WRITE, "json", stream="stdout")])  # fmt: skip
    plan.free_stderr = True  # the terminal view goes there, as libperf's does
    _, ran = cli(folder, plan)
    assert ran.rc == 0 and ran.stdout.startswith(b"{")


def test_bench_a_script_in_a_folder_whose_name_is_not_utf8(folder: Path) -> None:
    """bench:494 (seed 3): the module name's digest encoded the path as UTF-8: a traceback."""
    odd = os.fsdecode(b"in\xff")
    (folder / odd).mkdir()
    (folder / odd / "s.py").write_text(SCRIPT)
    outcome, _ = cli(folder, Plan("bench", [BENCH[0], f"{odd}/s.py:f", *BENCH[2:]], []))
    assert outcome.status == "ok"


def test_bench_json_of_a_script_whose_folder_name_is_not_utf8(folder: Path) -> None:
    """bench:213 (seed 4): the measurement's name (the target as given) held the name's
    undecodable byte, which msgspec cannot encode: a UnicodeEncodeError traceback."""
    odd = os.fsdecode(b"in\xff")
    (folder / odd).mkdir()
    (folder / odd / "s.py").write_text(SCRIPT)
    argv = [BENCH[0], f"{odd}/s.py:f", *BENCH[2:], "--json", "b.json"]
    plan = Plan("bench", argv, [out("--json", "b.json", "json", path=str(folder / "b.json"))])
    cli(folder, plan)
    assert json.loads((folder / "b.json").read_bytes())["name"] == f"{odd}/s.py:f"


# --- doctor ----------------------------------------------------------------------------------


def test_doctor_refuses_to_write_over_its_tools_config(folder: Path) -> None:
    """doctor:334 (seed 3): `doctor --tools-config t.json --json x/../t.json` replaced the
    user's tools config with the report, exit 0 (doctor did not check its output)."""
    shutil.copyfile(REPO / "src" / "gpuscope" / "tools" / "defaults" / "tools.json",
                    folder / "tools.json")  # fmt: skip
    (folder / "x").mkdir()
    for given in ("tools.json", "x/../tools.json"):
        argv = ["doctor", "--tools-config", "tools.json", "--json", given]
        outcome, ran = cli(folder, Plan("doctor", argv, [out("--json", given, "json", REFUSE)]))
        assert outcome.status == "refused" and b"is the input" in ran.stderr


# --- small JSON inputs beside the traces --------------------------------------------------------


@pytest.mark.parametrize("option", ["--categories", "--peaks"])
def test_a_json_input_nested_too_deep_is_one_error(folder: Path, option: str) -> None:
    """analyze:34 (seed 2, json.deep on --categories): json.loads' RecursionError was a
    traceback; counters --peaks read its file the same way."""
    shutil.copyfile(TRACE, folder / "in.json.gz")
    write_counters(folder / "k_counter_collection.csv", [("k", 1000, {"SQ_WAVES": 8.0}, 32, 0)])
    (folder / "deep.json").write_text("[" * 100_000)
    command, trace = ("analyze", "in.json.gz") if option == "--categories" else (
        "counters", "k_counter_collection.csv")  # fmt: skip
    outcome, ran = cli(folder, Plan(command, [command, trace, option, "deep.json"], []))
    assert outcome.status == "exit-2" and b"deep.json" in ran.stderr


# --- found by the CLI fuzzer outside its own files, fixed by the lead -----------------------------


# found by the CLI fuzzer, fixed in tools/rundir.py (run process hygiene, issue 18.3)
def test_run_into_a_read_only_output_dir_is_one_error(folder: Path) -> None:
    """run:332 (seed 3), run:226 and others (seed 1): the run folder's mkdir in a read-only
    --output-dir raised PermissionError: a traceback."""
    (folder / "ro").mkdir(mode=0o555)
    plan = Plan("run", ["run", "--output-dir", "ro", "--", "true"], [
        Output("--output-dir", "ro", "readonly-dir", FAIL, "dir")])  # fmt: skip
    plan.no_dac = True
    cli(folder, plan)


# found by the CLI fuzzer, fixed in tools/context.py and tools/config.py
@pytest.mark.parametrize(
    ("option", "text"),
    [("--additional-context-file", b'{"tools": [\xff]}'),
     ("--additional-context-file", b"[" * 100_000),
     ("--tools-config", b"[" * 100_000)],
)  # fmt: skip
def test_run_reads_a_bad_configuration_file_without_a_traceback(
    folder: Path, option: str, text: bytes
) -> None:
    """run:969 (seed 1: a byte that is not UTF-8 in a madengine context file), run:578 (seed 4:
    nested too deep): UnicodeDecodeError / RecursionError tracebacks; doctor --tools-config too."""
    (folder / "c.json").write_bytes(text)
    argv = ["run", option, "c.json", "--output-dir", "runs", "--tools", "rocprof", "--", "true"]
    cli(folder, Plan("run", argv, []))


# found by the final CLI run, fixed in tools/config.py
@pytest.mark.parametrize("outputs", ["null", "5"])
def test_doctor_reads_a_tools_config_with_outputs_of_the_wrong_type(
    folder: Path, outputs: str
) -> None:
    """doctor:3991 (seed 1, json.wrong-type): a tool's "outputs" that is not a list was a
    TypeError traceback ('NoneType' object is not iterable) in doctor and run."""
    (folder / "t.json").write_text(f'{{"tools": {{"rocprof": {{"outputs": {outputs}}}}}}}')
    cli(folder, Plan("doctor", ["doctor", "--tools-config", "t.json"], []))


# found by the CLI fuzzer, fixed in ranks/engine.py
def test_several_traces_with_a_long_tmpdir(folder: Path) -> None:
    """The quick subset under pytest's tmp path: the process pool's forkserver socket in a TMPDIR
    over ~95 bytes is 'AF_UNIX path too long': `gpuscope analyze a b` ends in a traceback."""
    shutil.copyfile(TRACE, folder / "a.json.gz")
    shutil.copyfile(TRACE, folder / "b.json.gz")
    tmp = folder.parent / ("t" * 100)
    tmp.mkdir()
    plan = Plan("analyze", ["analyze", "a.json.gz", "b.json.gz", "-q"], [])
    before = snapshot(folder)
    ran = execute(plan, folder, tmp, timeout=60)
    outcome = judge(plan, ran, before, {}, folder, tmp)
    assert not outcome.failed, outcome.detail


# found by the CLI fuzzer, fixed in trace/_sniff.py (the SQLite readers)
def test_reading_a_wal_database_leaves_nothing_beside_it(folder: Path) -> None:
    """analyze:703 (seed 4), analyze:103 (seed 1, sqlite.wal): a database in WAL mode, opened
    read-only (mode=ro), gets NAME-shm and NAME-wal files beside it."""
    import sqlite3

    from tests.fuzz.test_regressions import rocprof_db

    path = rocprof_db(folder / "results.db", (10, 20, 2, "CopyHostToDevice", 8, ""))
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")
    cli(folder, Plan("analyze", ["analyze", "results.db", "-q"], []))


# --- SQLite inputs ---------------------------------------------------------------------------


def test_a_database_in_a_folder_whose_name_is_not_utf8(folder: Path) -> None:
    """export:23 (seed 6): the read-only SQLite URI quoted the path as UTF-8 text: an .rpd in
    such a folder was a UnicodeEncodeError traceback (and the sniffer's table names came back
    empty: a rocprof results.db was 'not a profiler output')."""
    from tests.fuzz.test_regressions import rocprof_db

    odd = os.fsdecode(b"in\xff")
    (folder / odd).mkdir()
    rocprof_db(folder / odd / "results.db", (10, 20, 2, "CopyHostToDevice", 8, ""))
    outcome, _ = cli(folder, Plan("analyze", ["analyze", f"{odd}/results.db", "-q"], []))
    assert outcome.status == "ok"
