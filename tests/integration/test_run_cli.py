"""`gpuscope run` through the real CLI, with the fake GPU tools (tests/fakes/bin) on PATH."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
REFERENCE = REPO / ".." / "shared" / "reference"
PY = sys.executable


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "FAKE_TOOL_LOG": str(tmp_path / "tools.log"),
        "PYTHONPATH": str(REPO / "src"),
    }


def gpuscope(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [PY, "-m", "gpuscope", "run", "--output-dir", str(tmp_path / "runs"), *args]
    return subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)


def run_dirs(tmp_path: Path) -> list[Path]:
    runs = tmp_path / "runs"
    return sorted(runs.iterdir()) if runs.is_dir() else []


def manifest(run_dir: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((run_dir / "manifest.json").read_text())
    return data


def tool_log(tmp_path: Path) -> list[dict[str, object]]:
    lines = (tmp_path / "tools.log").read_text().splitlines()
    return [json.loads(line) for line in lines]


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def reference(*parts: str) -> Path:
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared reference file not found: {path}")
    return path


@pytest.mark.parametrize("code", [0, 3])
def test_the_exit_code_is_the_commands(tmp_path: Path, env: dict[str, str], code: int) -> None:
    done = gpuscope(tmp_path, env, "--tools", "rocprof", "--", PY, "-c", f"exit({code})")
    assert done.returncode == code, done.stderr
    (run_dir,) = run_dirs(tmp_path)
    data = manifest(run_dir)
    assert data["schema"] == "gpuscope.run/1"
    assert (data["status"], data["exit_code"], data["signal"]) == ("exited", code, None)
    assert any(f["path"].endswith("_kernel_trace.csv") for f in data["files"])  # type: ignore[attr-defined]


def test_kill_9_gives_137_and_library_rows_survive(tmp_path: Path, env: dict[str, str]) -> None:
    log = reference("formats", "cublas-log", "cublas_api.log")
    app = script(
        tmp_path,
        "app.py",
        f"""
        import os, shutil, signal
        dest = os.environ["CUBLAS_LOGDEST_DBG"].replace("%i", str(os.getpid()))
        shutil.copyfile({str(log)!r}, dest)  # what cuBLAS writes as the program runs
        os.kill(os.getpid(), signal.SIGKILL)
    """,
    )
    done = gpuscope(tmp_path, env, "--tools", "cublas_trace", "--", PY, app)
    assert done.returncode == 128 + signal.SIGKILL
    (run_dir,) = run_dirs(tmp_path)
    assert (manifest(run_dir)["status"], manifest(run_dir)["signal"]) == ("killed", "SIGKILL")
    with (run_dir / "library_trace.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["library"] == "cublas" and r["model"] == "app" for r in rows)
    assert list(rows[0])[:6] == ["jobid", "created_date", "model", "library", "config", "calls"]


def test_sigint_mid_run_is_forwarded_and_teardown_still_runs(
    tmp_path: Path, env: dict[str, str]
) -> None:
    ready = tmp_path / "ready"
    app = script(
        tmp_path,
        "app.py",
        f"""
        import time
        open({str(ready)!r}, "w").close()
        time.sleep(30)
    """,
    )
    argv = [PY, "-m", "gpuscope", "run", "--output-dir", str(tmp_path / "runs"),
            "--tools", "nsys", "--", PY, app]  # fmt: skip
    process = subprocess.Popen(argv, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGINT, stderr
    (run_dir,) = run_dirs(tmp_path)
    data = manifest(run_dir)
    cleanup = data["signals"].pop("cleanup_s")  # type: ignore[union-attr]
    assert data["signals"] == {
        "received": ["SIGINT"],
        "forwarded": ["SIGINT"],
        "killed_after_s": None,
    }
    assert 0 <= cleanup < 2  # nothing left to end
    assert (run_dir / "nsys_output" / "report.nsys-rep").exists()
    assert (run_dir / "nsys_output" / "report.sqlite").exists()  # exported in teardown


def test_a_command_ignoring_sigterm_is_killed_after_the_grace(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """SIGTERM is forwarded; a child that ignores it is SIGKILLed after --kill-after, and the
    manifest and the outputs already written are still there."""
    ready = tmp_path / "ready"
    app = script(
        tmp_path,
        "stubborn.py",
        f"""
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        open({str(ready)!r}, "w").close()
        time.sleep(60)
    """,
    )
    argv = [PY, "-m", "gpuscope", "run", "--output-dir", str(tmp_path / "runs"),
            "--kill-after", "1.5", "--tools", "gpu_info_power_profiler", "--", PY, app]  # fmt: skip
    process = subprocess.Popen(argv, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert time.monotonic() - sent < 15, "the grace was not honoured"
    assert process.returncode == 128 + signal.SIGKILL, stderr
    (run_dir,) = run_dirs(tmp_path)
    data = manifest(run_dir)
    assert data["status"] == "killed" and data["signal"] == "SIGKILL"
    assert data["signals"]["forwarded"] == ["SIGTERM", "SIGKILL"]
    assert 1.5 <= data["signals"]["killed_after_s"] < 10
    assert any("killed with SIGKILL" in w for w in data["warnings"])
    power = (run_dir / "gpu_info_power_profiler_output.csv").read_text()
    assert ",workload_start" in power and ",workload_end" in power


def test_stacking_order_and_identical_wrappers_once(tmp_path: Path, env: dict[str, str]) -> None:
    events = tmp_path / "events.txt"
    step = script(
        tmp_path,
        "step.py",
        f"""
        import os, sys
        open({str(events)!r}, "a").write(" ".join(sys.argv[1:3]) + "\\n")
        if sys.argv[1] == "enter":
            os.execvp(sys.argv[3], sys.argv[3:])
    """,
    )

    def tool(name: str, wrapper: str) -> dict[str, object]:
        return {
            "cmd": f"{PY} {step} enter {wrapper}",
            "pre_scripts": [{"path": step, "args": f"pre {name}"}],
            "post_scripts": [{"path": step, "args": f"post {name}"}],
            "env_vars": {f"FAKE_ENV_{name}": "1"},
        }

    config = tmp_path / "tools.json"
    names = {"A": "A", "B": "B", "C": "C", "A2": "A"}  # A2's wrapper is identical to A's
    config.write_text(json.dumps({"tools": {n: tool(n, w) for n, w in names.items()}}))
    done = gpuscope(tmp_path, env, "--tools-config", str(config), "--tools", "A,B,A2,C",
                    "--", PY, step, "app", "ran")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert events.read_text().split("\n")[:-1] == [
        "pre C", "pre A2", "pre B", "pre A",  # setup: outermost first
        "enter C", "enter B", "enter A", "app ran",  # C wraps B wraps A (A2 = A, applied once)
        "post A", "post B", "post A2", "post C",  # teardown: innermost first
    ]  # fmt: skip
    tools = manifest(run_dirs(tmp_path)[0])["tools"]
    assert [t["argv"] == [] for t in tools] == [False, False, True, False]  # type: ignore[index,union-attr]


def test_context_env_reaches_the_command_and_sampler_settings_do_not(
    tmp_path: Path, env: dict[str, str]
) -> None:
    context = {
        "env_vars": {"FAKE_ENV_CONTEXT": "ctx"},
        "tools": [{"name": "rocprof", "env_vars": {"FAKE_ENV_TOOL": "tool"}},
                  {"name": "gpu_info_vram_profiler", "env_vars": {"VRAM_BACKEND": "fake"}}],
    }  # fmt: skip
    dump = script(
        tmp_path,
        "dump.py",
        """
        import json, os, sys
        json.dump(dict(os.environ), open(sys.argv[1], "w"))
    """,
    )
    out = tmp_path / "env.json"
    done = gpuscope(tmp_path, env, "--additional-context", json.dumps(context),
                    "--", PY, dump, str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(out.read_text())
    assert seen["FAKE_ENV_CONTEXT"] == "ctx" and seen["FAKE_ENV_TOOL"] == "tool"
    assert not any(key.startswith("VRAM_") for key in seen)
    (run_dir,) = run_dirs(tmp_path)
    assert seen["GPUSCOPE_RUN_DIR"] == str(run_dir.resolve())
    assert (run_dir / "gpu_info_vram_profiler_output.csv").read_text().startswith("time,vram(%)")


def test_argv_is_composed_as_a_list_and_user_cmd_is_split_with_shlex(
    tmp_path: Path, env: dict[str, str]
) -> None:
    context = {"tools": [{"name": "rocprof", "cmd": "rocprofv3 --kernel-trace -d 'my out' --"}]}
    done = gpuscope(tmp_path, env, "--additional-context", json.dumps(context),
                    "--", PY, "-c", "print('a b')", "x y")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path)
    expected = ["rocprofv3", "--kernel-trace", "-d", str(run_dir.resolve() / "my out"), "--",
                PY, "-c", "print('a b')", "x y"]  # fmt: skip
    assert manifest(run_dir)["argv"] == expected
    (record,) = tool_log(tmp_path)
    assert record["argv"] == expected[1:]
    assert any((run_dir / "my out").rglob("*_kernel_trace.csv"))


def test_runs_never_overwrite_each_other(tmp_path: Path, env: dict[str, str]) -> None:
    for code in (1, 2):
        gpuscope(tmp_path, env, "--", PY, "-c", f"exit({code})")
    runs = run_dirs(tmp_path)
    assert len(runs) == 2  # same second, two directories
    assert sorted(manifest(r)["exit_code"] for r in runs) == [1, 2]  # type: ignore[type-var]


def test_unknown_tool_exits_2_listing_valid_names(tmp_path: Path, env: dict[str, str]) -> None:
    done = gpuscope(tmp_path, env, "--tools", "rocprov3", "--", PY, "-c", "")
    assert done.returncode == 2
    assert done.stderr.startswith("error: unknown tool 'rocprov3'; valid tools: ")
    assert "rocprofv3_compute" in done.stderr and "cudnn_trace" in done.stderr
    assert run_dirs(tmp_path) == []


def test_unknown_context_key_exits_2(tmp_path: Path, env: dict[str, str]) -> None:
    done = gpuscope(tmp_path, env, "--additional-context", '{"toolz": []}', "--", "true")
    assert done.returncode == 2
    assert "unknown additional-context key(s) toolz; valid keys: gpu_vendor, tools" in done.stderr


def test_missing_binary_fails_before_the_command_starts(
    tmp_path: Path, env: dict[str, str]
) -> None:
    marker = tmp_path / "ran"
    env = {**env, "PATH": str(Path(PY).parent)}  # no fake tools
    done = gpuscope(tmp_path, env, "--tools", "rocprof", "--", PY, "-c",
                    f"open({str(marker)!r}, 'w')")  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: rocprofv3 not found on PATH: install ROCm's rocprofiler-sdk"
    )
    assert done.stderr.rstrip().endswith("or drop the rocprof tool")
    assert not marker.exists() and run_dirs(tmp_path) == []


def test_missing_command_exits_127(tmp_path: Path, env: dict[str, str]) -> None:
    done = gpuscope(tmp_path, env, "--", "no-such-program-xyz")
    assert done.returncode == 127
    assert "command not found: no-such-program-xyz" in done.stderr


def test_madengine_compute_bound_config_runs_unchanged(tmp_path: Path, env: dict[str, str]) -> None:
    config = reference("madengine", "profiling-configs", "rocprofv3_compute_bound.json")
    done = gpuscope(tmp_path, env, "--additional-context-file", str(config),
                    "--", PY, "-c", "print('model')")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path)
    (counters,) = run_dir.rglob("*_counter_collection.csv")
    with counters.open() as f:
        names = {row["Counter_Name"] for row in csv.DictReader(f)}
    assert {"SQ_WAVES", "SQ_INSTS_VALU", "SQ_WAIT_INST_ANY"} <= names
    power = (run_dir / "gpu_info_power_profiler_output.csv").read_text().splitlines()
    assert power[0].startswith("time,Power(Watt) GPU0,Power(Watt) GPU1")  # the fake rocm-smi
    assert sum(line.endswith(",workload_start") for line in power) == 1
    assert sum(line.endswith(",workload_end") for line in power) == 1


def test_a_short_run_marks_its_start_and_end_once(tmp_path: Path, env: dict[str, str]) -> None:
    """Both samplers around a command that ends at once: one start and one end row each, in
    order."""
    done = gpuscope(tmp_path, env, "--tools", "gpu_info_power_profiler,gpu_info_vram_profiler",
                    "--", "true")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path)
    for name in ("gpu_info_power_profiler_output.csv", "gpu_info_vram_profiler_output.csv"):
        rows = list(csv.DictReader((run_dir / name).read_text().splitlines()))
        marks = [(r["mark"], int(r["monotonic_ns"])) for r in rows if r["mark"]]
        assert [m for m, _ in marks] == ["workload_start", "workload_end"], name
        assert marks[0][1] < marks[1][1]


def test_miopen_commands_on_stderr_are_copied_and_still_shown(
    tmp_path: Path, env: dict[str, str]
) -> None:
    log = reference("formats", "miopen-log", "therock_1899_windows_gfx1150_excerpt.log")
    app = script(
        tmp_path,
        "app.py",
        f"""
        import sys
        sys.stderr.write(open({str(log)!r}).read())
    """,
    )
    done = gpuscope(tmp_path, env, "--additional-context", '{"gpu_vendor": "AMD"}',
                    "--tools", "miopen_trace", "--", PY, app)  # fmt: skip
    assert done.returncode == 0
    assert "MIOpen(HIP): Command [LogCmdConvolution]" in done.stderr
    (run_dir,) = run_dirs(tmp_path)
    with (run_dir / "library_trace.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows and {r["library"] for r in rows} == {"miopen"}


def test_torch_profiler_traces_an_unmodified_program(tmp_path: Path, env: dict[str, str]) -> None:
    package = tmp_path / "site" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "profiler.py").write_text(
        textwrap.dedent("""
        import gzip, json
        def supported_activities():
            return ["CPU"]
        class profile:
            def __init__(self, activities, **options):
                pass
            def start(self):
                pass
            def stop(self):
                pass
            def export_chrome_trace(self, path):
                with gzip.open(path, "wt") as f:
                    json.dump({"traceEvents": []}, f)
    """)
    )
    env = {**env, "PYTHONPATH": f"{env['PYTHONPATH']}{os.pathsep}{package.parent}",
           "GPUSCOPE_TORCH_SCHEDULE": "all"}  # the whole process: it makes no step  # fmt: skip
    done = gpuscope(tmp_path, env, "--tools", "torch_profiler", "--", PY, "-c", "import torch")
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path)
    assert len(list((run_dir / "torch_profiler_output").glob("*.pt.trace.json.gz"))) == 1


def test_list_tools(tmp_path: Path, env: dict[str, str]) -> None:
    done = gpuscope(tmp_path, env, "--list-tools")
    assert done.returncode == 0
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert "rocprofv3_memory" in names and "ncu" in names and "gpu_info_vram_profiler" in names


def test_doctor_json(tmp_path: Path, env: dict[str, str]) -> None:
    argv = [PY, "-m", "gpuscope", "doctor", "--json", "-"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schema"] == "gpuscope.doctor/1"
    ready = {t["name"] for t in report["tools"] if t["ok"]}
    assert {"nsys", "ncu", "torch_profiler"} <= ready or report["host"]["vendor"] == "AMD"


def _kernels_in(tool: str, folder: Path) -> tuple[int, int]:
    """(kernel count, total kernel ns) read straight from a tool's raw output, without gpuscope."""
    import sqlite3
    from contextlib import closing

    if tool == "rocprofv3":
        (trace,) = folder.rglob("*_kernel_trace.csv")
        rows = list(csv.DictReader(trace.read_text().splitlines()))
        return len(rows), sum(int(r["End_Timestamp"]) - int(r["Start_Timestamp"]) for r in rows)
    if tool in ("nsys", "rpd"):
        file, table = (
            ("report.sqlite", "CUPTI_ACTIVITY_KIND_KERNEL")
            if tool == "nsys"
            else ("trace.rpd", "rocpd_op")
        )
        with closing(sqlite3.connect(folder / file)) as db:
            count, ns = db.execute(f"SELECT COUNT(*), SUM(end - start) FROM {table}").fetchone()
        return int(count), int(ns)
    rows = list(csv.reader((folder / "ncu_raw.csv").read_text().splitlines()))
    header, data = rows[0], rows[2:]
    at = header.index("gpu__time_duration.sum")
    return len(data), sum(int(r[at].replace(",", "")) for r in data)


@pytest.mark.parametrize(
    ("tool", "folder", "fmt"),
    [
        ("rocprofv3", "rocprof_output", "rocprofv3"),
        ("rpd", "rpd_output", "rpd"),
        ("nsys", "nsys_output", "nsys"),
        ("ncu", "ncu_output", "ncu"),
    ],
)
def test_each_profilers_output_is_analysed_beside_it(
    tmp_path: Path, env: dict[str, str], tool: str, folder: str, fmt: str
) -> None:
    done = gpuscope(tmp_path, env, "--tools", tool, "--", PY, "-c", "print('model')")
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path)
    report = json.loads((run_dir / folder / "analysis.json").read_text())
    assert report["schema"] == "gpuscope.analysis/1"
    assert report["source"]["format"] == fmt
    count, ns = _kernels_in(tool, run_dir / folder)
    assert report["kernels"]["count"] == count
    assert report["kernels"]["time_us"] == pytest.approx(ns / 1000, abs=1e-3)
    assert "analysis.json" in json.dumps(manifest(run_dir))


def test_run_needs_neither_msgspec_nor_rich(tmp_path: Path, env: dict[str, str]) -> None:
    """`gpuscope run` wraps programs in whatever Python they use: it must start where the
    analysis dependencies are absent (a change that imported the trace package in cli.main
    broke it on the GPU machine's system Python)."""
    probe = (
        "import sys\n"
        "sys.modules['msgspec'] = None  # makes `import msgspec` fail, as where it is absent\n"
        "sys.modules['rich'] = None\n"
        "from gpuscope.cli import main\n"
        f"sys.exit(main(['run', '--output-dir', {str(tmp_path / 'runs')!r}, '--', 'true']))\n"
    )
    done = subprocess.run([PY, "-c", probe], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (run_dirs(tmp_path)[0] / "manifest.json").is_file()


# --- the command as a job: its process group, what it leaves behind, exit codes as a shell's ---


def _group_members(pgid: int) -> list[int]:
    members = []
    for name in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except (OSError, ValueError):
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if name.isdigit() and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(name))
    return members


def _wait_for(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


LINUX = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")


@LINUX
def test_sigterm_and_kill_after_leave_no_process_of_the_group(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """`bash job.sh` with `sleep 300 &` and a Python sleeper in the background, all ignoring
    SIGTERM (a job slow to stop): SIGTERM to gpuscope reaches the whole group, --kill-after 1
    SIGKILLs the whole group, and the manifest lists the processes it ended."""
    ready, py_ready = tmp_path / "ready", tmp_path / "py_ready"
    sleeper = f"import time; open({str(py_ready)!r}, 'w').close(); time.sleep(300)"
    job = script(
        tmp_path,
        "job.sh",
        f"""
        trap '' TERM
        sleep 300 &
        {PY} -c "{sleeper}" &
        while [ ! -e {py_ready} ]; do sleep 0.02; done
        : > {ready}
        wait
    """,
    )
    argv = [PY, "-m", "gpuscope", "run", "--output-dir", str(tmp_path / "runs"),
            "--kill-after", "1", "--", "bash", job]  # fmt: skip
    process = subprocess.Popen(argv, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    _wait_for(ready)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGKILL, stderr
    (run_dir,) = run_dirs(tmp_path)
    data = manifest(run_dir)
    assert data["signals"]["forwarded"] == ["SIGTERM", "SIGKILL"]  # type: ignore[index]
    assert _group_members(int(data["child_pid"])) == []  # type: ignore[arg-type]
    survivors = data["survivors"]
    assert len(survivors) == 2  # type: ignore[arg-type]
    assert {s["signal"] for s in survivors} == {"SIGKILL"}  # type: ignore[attr-defined]
    assert all(s["ended"] and s["found"] == "process group" for s in survivors)  # type: ignore[attr-defined]
    commands = sorted(" ".join(s["command"]) for s in survivors)  # type: ignore[attr-defined]
    assert "sleep 300" in commands[1] and "time.sleep(300)" in commands[0]
    assert "2 other processes of the command had to be ended" in stderr


@LINUX
def test_a_daemon_left_by_a_successful_command_is_ended_and_exit_0_kept(
    tmp_path: Path, env: dict[str, str]
) -> None:
    done = gpuscope(tmp_path, env, "--", "bash", "-c", "(sleep 300 &); exit 0")
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path)
    data = manifest(run_dir)
    (survivor,) = data["survivors"]  # type: ignore[misc]
    assert "sleep 300" in " ".join(survivor["command"])
    assert (survivor["signal"], survivor["ended"]) == ("SIGTERM", True)
    assert _group_members(int(data["child_pid"])) == []  # type: ignore[arg-type]
    assert data["exit_code"] == 0 and data["status"] == "exited"
    assert "1 other process of the command had to be ended" in done.stderr


def test_sigint_reaches_the_commands_own_children(tmp_path: Path, env: dict[str, str]) -> None:
    """bash waits for Python, which handles Ctrl-C: SIGINT sent to gpuscope reaches Python (it
    used to reach bash alone, and Python slept on)."""
    ready, got = tmp_path / "ready", tmp_path / "got"
    app = script(
        tmp_path,
        "app.py",
        f"""
        import pathlib, sys, time
        pathlib.Path({str(ready)!r}).touch()
        try:
            time.sleep(30)
        except KeyboardInterrupt:
            pathlib.Path({str(got)!r}).write_text("SIGINT")
            sys.exit(42)
    """,
    )
    argv = [PY, "-m", "gpuscope", "run", "-q", "--output-dir", str(tmp_path / "runs"),
            "--", "bash", "-c", f'"{PY}" {app}; exit $?']  # fmt: skip
    process = subprocess.Popen(argv, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    _wait_for(ready)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 42, stderr
    assert got.read_text() == "SIGINT" and stderr == ""


_CANNOT_START = [
    # name, content (None: a directory), mode (0: not created), exit status, stderr
    ("notexec", b"echo hi\n", 0o644, 126, "error: ./notexec: permission denied (not executable"),
    ("dir", None, 0o755, 126, "error: ./dir: is a directory"),
    ("badinterp", b"#!/nonexistent/python\nprint(1)\n", 0o755, 127,
     "error: ./badinterp: bad interpreter: /nonexistent/python: no such file"),
    ("missing", b"", 0, 127, "error: command not found: ./missing (no such file)"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "mode", "code", "message"), _CANNOT_START)
def test_a_command_that_cannot_start_exits_as_a_shell_would(
    tmp_path: Path, env: dict[str, str], name: str, content: bytes | None, mode: int, code: int,
    message: str,
) -> None:  # fmt: skip
    path = tmp_path / name
    if content is None:
        path.mkdir()
    elif mode:
        path.write_bytes(content)
        path.chmod(mode)
    done = gpuscope(tmp_path, env, "--", f"./{name}", "arg")
    assert done.returncode == code
    assert done.stderr == message + done.stderr[len(message) :] and done.stderr.count("\n") == 1
    assert run_dirs(tmp_path) == []  # checked before anything was created


def test_a_binary_exec_refuses_is_126_with_its_manifest(
    tmp_path: Path, env: dict[str, str]
) -> None:
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x01\x02\0garbage that is no program" * 8)
    garbage.chmod(0o755)
    done = gpuscope(tmp_path, env, "--", "./garbage")
    assert done.returncode == 126
    assert "error: ./garbage: cannot execute binary file: exec format error" in done.stderr
    assert "Traceback" not in done.stderr
    (run_dir,) = run_dirs(tmp_path)  # binfmt_misc might have run it: only exec can tell
    data = manifest(run_dir)
    assert (data["status"], data["exit_code"], data["child_pid"]) == ("not_started", 126, None)
    assert data["error"] == "./garbage: cannot execute binary file: exec format error"


@pytest.mark.parametrize("content", [b'echo "sh ran $0 $1"\n', b""])
def test_a_script_without_shebang_runs_with_sh(
    tmp_path: Path, env: dict[str, str], content: bytes
) -> None:
    plain = tmp_path / "plain"
    plain.write_bytes(content)
    plain.chmod(0o755)
    done = gpuscope(tmp_path, env, "--", "./plain", "arg")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("sh ran ./plain arg\n" if content else "")
    (run_dir,) = run_dirs(tmp_path)
    data = manifest(run_dir)
    assert data["command"] == ["./plain", "arg"] and data["argv"] == ["/bin/sh", "./plain", "arg"]


def test_quiet_and_debug_after_the_subcommand(tmp_path: Path, env: dict[str, str]) -> None:
    done = gpuscope(tmp_path, env, "-q", "--", "true")
    assert (done.returncode, done.stderr) == (0, "")
    done = gpuscope(tmp_path, env, "--debug", "--", "./missing")
    assert "Traceback" in done.stderr and "CommandNotFound" in done.stderr
    analyze = [PY, "-m", "gpuscope", "analyze", str(tmp_path / "none.json"), "--debug"]
    done = subprocess.run(analyze, env=env, capture_output=True, text=True, timeout=60)
    assert "Traceback" in done.stderr and "InputError" in done.stderr
