"""A whole run through the library API, with recording fake tools."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from tools_fakes import Recorder

from gpuscope.errors import ToolError
from gpuscope.madengine.context import ToolRequest
from gpuscope.run.manifest import read_manifest
from gpuscope.run.session import CommandNotFound, RunRequest, model_name, run
from gpuscope.tools.config import ToolConfig, load_catalog, resolve
from gpuscope.tools.host import HostInfo
from gpuscope.tools.registry import Registry, ToolKind

NO_GPU = HostInfo(vendor=None)
DUMP_ENV = "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))"


def _registry(events: list[str], **faults: str) -> Registry:
    def factory(configs: Sequence[ToolConfig]) -> Recorder:
        name = configs[0].name
        flags = {flag: True for flag, who in faults.items() if who == name}
        return Recorder(name, events, env={f"FROM_{name}": "1"}, **flags)  # type: ignore[arg-type]

    registry = Registry()
    registry.register(ToolKind("rec", factory))
    return registry


def _request(tmp_path: Path, *names: str, command: tuple[str, ...] = ()) -> RunRequest:
    env_file = str(tmp_path / "env.json")
    return RunRequest(
        command=command or (sys.executable, "-c", DUMP_ENV, env_file),
        tools=tuple(ToolConfig(name=n, kind="rec") for n in names),
        output_dir=tmp_path / "runs",
        env_vars={"FROM_CONTEXT": "yes"},
    )


def test_a_run_stacks_marks_and_records_everything(tmp_path: Path) -> None:
    events: list[str] = []
    result = run(_request(tmp_path, "A", "B"), registry=_registry(events), host=NO_GPU)
    assert result.exit_code == 0
    assert events == [
        "check A", "check B", "setup B", "setup A", "workload_start A", "workload_start B",
        "workload_end A", "workload_end B", "teardown A", "teardown B",
    ]  # fmt: skip
    env = json.loads((tmp_path / "env.json").read_text())
    assert env["FROM_A"] == env["FROM_B"] == "1" and env["FROM_CONTEXT"] == "yes"
    assert env["GPUSCOPE_RUN_DIR"] == str(result.run_dir.resolve())
    manifest = read_manifest(result.run_dir)
    assert manifest["status"] == "exited" and manifest["exit_code"] == 0
    assert [t["name"] for t in manifest["tools"]] == ["A", "B"]
    assert manifest["env"]["FROM_CONTEXT"] == "yes" and manifest["env"]["FROM_B"] == "1"
    assert manifest["ended_at"] >= manifest["started_at"] and manifest["child_pid"] > 0


def test_a_tool_that_cannot_work_stops_the_run_before_anything(tmp_path: Path) -> None:
    events: list[str] = []
    registry = _registry(events, fail_check="B")
    with pytest.raises(ToolError, match="B cannot work here"):
        run(_request(tmp_path, "A", "B"), registry=registry, host=NO_GPU)
    assert events == ["check A", "check B"]
    assert not (tmp_path / "runs").exists() and not (tmp_path / "env.json").exists()


def test_a_missing_command_exits_127_before_anything(tmp_path: Path) -> None:
    request = _request(tmp_path, "A", command=("no-such-program-xyz",))
    with pytest.raises(CommandNotFound, match="command not found: no-such-program-xyz") as error:
        run(request, registry=_registry([]), host=NO_GPU)
    assert error.value.exit_code == 127


def test_a_failed_setup_is_recorded_and_outer_tools_torn_down(tmp_path: Path) -> None:
    events: list[str] = []
    with pytest.raises(ToolError, match="A setup failed"):
        run(_request(tmp_path, "A", "B"), registry=_registry(events, fail_setup="A"), host=NO_GPU)
    assert events[-3:] == ["setup B", "setup A", "teardown B"]
    (run_dir,) = (tmp_path / "runs").iterdir()
    manifest = read_manifest(run_dir)
    assert manifest["status"] == "not_started" and manifest["error"] == "A setup failed"
    assert not (tmp_path / "env.json").exists()


def test_tools_for_the_other_vendor_are_refused_with_the_counterpart(tmp_path: Path) -> None:
    tools = resolve([ToolRequest("cublas_trace"), ToolRequest("nsys")], load_catalog())
    request = RunRequest(command=("true",), tools=tuple(tools), output_dir=tmp_path)
    with pytest.raises(ToolError) as error:
        run(request, host=HostInfo(vendor="AMD"))
    assert "cublas_trace works on NVIDIA GPUs, but this run is on AMD: use rocblas_trace" in str(
        error.value
    )
    assert "nsys works on NVIDIA GPUs, but this run is on AMD: use rocprof instead" in str(
        error.value
    )


def test_model_name_is_the_script_or_the_program() -> None:
    assert model_name(["python3", "-u", "train_llama.py", "--x"]) == "train_llama"
    assert model_name(["/opt/bin/my_app", "a.py"]) == "a"
    assert model_name(["./bench"]) == "bench"


def test_torch_profiler_with_ncu_is_run_but_warned_about(tmp_path: Path, fake_path: str) -> None:
    tools = resolve([ToolRequest("torch_profiler"), ToolRequest("ncu")], load_catalog())
    request = RunRequest(command=("true",), tools=tuple(tools), output_dir=tmp_path)
    result = run(request, env={"PATH": fake_path}, host=NO_GPU)
    assert result.exit_code == 0
    assert result.manifest.warnings[0].startswith(
        "torch_profiler with ncu: ncu and nsys hold CUPTI, which takes one subscriber"
    )
