"""tools.json: the packaged defaults, a user override, and applying context requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscope.errors import ConfigError
from gpuscope.madengine.context import ToolRequest
from gpuscope.tools.config import (
    ToolConfig,
    counters_dir,
    expand,
    load_catalog,
    requests_from_names,
    resolve,
    split_cmd,
)
from gpuscope.tools.registry import default_registry

MADENGINE_NAMES = (
    "rocprof", "rocprofv3", "rocprofv3_compute", "rocprofv3_memory", "rocprofv3_communication",
    "rocprofv3_full", "rocprofv3_lightweight", "rocprofv3_perfetto", "rocprofv3_api_overhead",
    "rocprofv3_pc_sampling", "rpd", "rocblas_trace", "hipblaslt_trace", "tensile_trace",
    "miopen_trace", "rccl_trace", "gpu_info_power_profiler", "gpu_info_vram_profiler",
)  # fmt: skip
NVIDIA_NAMES = ("nsys", "ncu", "nccl_trace", "cublas_trace", "cublaslt_trace", "cudnn_trace")


def test_packaged_catalog_has_madengine_and_nvidia_tools_each_with_a_kind() -> None:
    catalog = load_catalog()
    registry = default_registry()
    for name in (*MADENGINE_NAMES, *NVIDIA_NAMES, "torch_profiler"):
        assert name in catalog, name
        assert catalog[name].kind in registry, name
        assert catalog[name].description, name


def test_counter_files_referenced_by_presets_exist_and_list_counters() -> None:
    catalog = load_catalog()
    files = {arg.split("/")[-1] for t in catalog.values() for arg in t.cmd if "{counters}" in arg}
    assert files == {
        "compute_bound.txt", "memory_bound.txt", "full_profile.txt", "instruction_mix.txt",
    }  # fmt: skip
    for name in files:
        lines = (counters_dir() / name).read_text().splitlines()
        counters = [line.split(":", 1)[1].strip() for line in lines if line.startswith("pmc:")]
        assert counters and all(c.isidentifier() for c in counters), name


def test_counter_sets_cover_madengine_lists(reference: Path) -> None:
    for theirs in (reference / "madengine" / "counters").glob("*.txt"):
        ours = (counters_dir() / theirs.name).read_text()
        names = [ln.split(":", 1)[1].strip() for ln in theirs.read_text().splitlines()
                 if ln.startswith("pmc:")]  # fmt: skip
        assert all(f"pmc: {n}\n" in ours for n in names), theirs.name


def test_override_cmd_replaces_env_merges_and_new_tools_add(tmp_path: Path) -> None:
    override = tmp_path / "tools.json"
    override.write_text(json.dumps({"tools": {
        "rocprof": {"cmd": "rocprofv3 --kernel-trace --", "env_vars": {"X": "1"}},
        "my_tool": {"cmd": "strace -f", "env_vars": {"Y": "2"}},
    }}))  # fmt: skip
    catalog = load_catalog(override)
    assert catalog["rocprof"].cmd == ("rocprofv3", "--kernel-trace", "--")
    assert catalog["rocprof"].user_cmd
    assert catalog["rocprof"].kind == "rocprof"
    assert catalog["rocprof"].vendor == "AMD"
    assert catalog["my_tool"].cmd == ("strace", "-f")
    assert default_registry().kind_of(catalog["my_tool"]).name == "command"


def test_madengine_own_tools_json_loads_as_an_override(reference: Path) -> None:
    catalog = load_catalog(reference / "madengine" / "tools.json")
    assert catalog["rocprofv3_compute"].cmd[1].endswith("rocprof_wrapper.sh")
    assert catalog["rocprofv3_compute"].kind == "rocprof"
    assert catalog["rocblas_trace"].env_vars["ROCBLAS_TRACE"] == "1"


def test_request_cmd_replaces_and_env_vars_merge_over_defaults() -> None:
    catalog = load_catalog()
    request = ToolRequest("gpu_info_power_profiler", env_vars={"POWER_SAMPLING_RATE": "0.01"})
    (config,) = resolve([request], catalog)
    assert config.env_vars["POWER_SAMPLING_RATE"] == "0.01"
    assert config.env_vars["POWER_DEVICE"] == "all"
    (nsys,) = resolve([ToolRequest("nsys", cmd="nsys profile -t cuda")], catalog)
    assert nsys.cmd == ("nsys", "profile", "-t", "cuda")


def test_unknown_tool_lists_valid_names() -> None:
    with pytest.raises(ConfigError) as error:
        resolve([ToolRequest("rocprov3")], load_catalog())
    assert "unknown tool 'rocprov3'" in str(error.value)
    assert "rocprofv3_compute" in str(error.value) and "nsys" in str(error.value)


def test_a_tool_listed_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="listed twice"):
        resolve(requests_from_names(["nsys", " nsys"]), load_catalog())


def test_cmd_is_split_like_a_shell() -> None:
    assert split_cmd("tool --name 'a b' -x", "t") == ("tool", "--name", "a b", "-x")
    assert split_cmd(["a", "b c"], "t") == ("a", "b c")
    with pytest.raises(ConfigError, match="cannot split"):
        split_cmd("tool 'unterminated", "t")


def test_a_cmd_with_shell_operators_is_refused_when_used() -> None:
    request = ToolRequest("test_tools_A", cmd="echo cmd_A && ")
    catalog = {"test_tools_A": ToolConfig(name="test_tools_A")}
    with pytest.raises(ConfigError, match="shell operators"):
        resolve([request], catalog)


def test_bad_tools_config_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text('{"tools": {"x": {"cmd": "a", "colour": "red"}}}')
    with pytest.raises(ConfigError, match="unknown key"):
        load_catalog(bad)
    bad.write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_catalog(bad)


def test_expand_replaces_only_known_placeholders() -> None:
    values = {"run_dir": "/r", "run_id": "id"}
    assert expand("{run_dir}/x-{run_id}-{other}", values) == "/r/x-id-{other}"
