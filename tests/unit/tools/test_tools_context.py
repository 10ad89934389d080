"""madengine's --additional-context / --additional-context-file: parsing, merging, validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscope.errors import ConfigError
from gpuscope.madengine.context import IGNORED_KEYS, USED_KEYS, load_context, parse_context


def test_json_tools_in_order_with_cmd_and_env() -> None:
    ctx = parse_context(
        '{"gpu_vendor": "amd", "tools": [{"name": "rocprof", "cmd": "rocprofv3 --hip-trace --"},'
        ' {"name": "gpu_info_power_profiler", "env_vars": {"POWER_SAMPLING_RATE": 0.05}}]}'
    )
    assert ctx.gpu_vendor == "AMD"
    assert [t.name for t in ctx.tools] == ["rocprof", "gpu_info_power_profiler"]
    assert ctx.tools[0].cmd == "rocprofv3 --hip-trace --"
    assert ctx.tools[1].env_vars == {"POWER_SAMPLING_RATE": "0.05"}


def test_python_dict_literal_as_madengine_accepts() -> None:
    ctx = parse_context("{'tools': [{'name': 'rpd'}], 'guest_os': 'UBUNTU'}")
    assert [t.name for t in ctx.tools] == ["rpd"]


def test_command_line_wins_over_file_and_env_vars_merge(tmp_path: Path) -> None:
    file = tmp_path / "ctx.json"
    file.write_text(json.dumps({
        "gpu_vendor": "AMD", "tools": [{"name": "rocprof"}], "env_vars": {"A": "1", "B": "1"},
    }))  # fmt: skip
    ctx = load_context('{"tools": [{"name": "nsys"}], "env_vars": {"B": "2"}}', file)
    assert ctx.gpu_vendor == "AMD"
    assert [t.name for t in ctx.tools] == ["nsys"]
    assert ctx.env_vars == {"A": "1", "B": "2"}


def test_docker_env_vars_apply_too_and_env_vars_win() -> None:
    ctx = parse_context('{"docker_env_vars": {"X": "d", "Y": "d"}, "env_vars": {"Y": "e"}}')
    assert ctx.env_vars == {"X": "d", "Y": "e"}


def test_unknown_key_lists_the_valid_keys() -> None:
    with pytest.raises(ConfigError) as error:
        parse_context('{"tools": [], "tool": []}')
    message = str(error.value)
    assert "unknown additional-context key(s) tool" in message
    assert all(key in message for key in USED_KEYS)


def test_madengine_deployment_keys_are_accepted_and_reported() -> None:
    ctx = parse_context('{"slurm": {"nodes": 2}, "distributed": {}, "_comment": "x"}')
    assert ctx.ignored == ("distributed", "slurm")
    assert set(ctx.ignored) <= set(IGNORED_KEYS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"tools": {"name": "x"}}', '"tools" must be a list'),
        ('{"tools": [{"cmd": "x"}]}', 'expected an object with a "name"'),
        ('{"tools": [{"name": "x", "args": 1}]}', "unknown key(s) args"),
        ('{"tools": [{"name": "x", "cmd": ["a"]}]}', "cmd must be a string"),
        ('{"tools": [{"name": "x", "env_vars": {"A": {"b": 1}}}]}', "expected a string or number"),
        ('{"gpu_vendor": "INTEL"}', "is not one of AMD, NVIDIA"),
        ("[1, 2]", "expected a JSON object"),
        ("{not json", "not JSON"),
    ],
)
def test_invalid_context_says_what_is_wrong(text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=None) as error:
        parse_context(text)
    assert expected in str(error.value)


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read additional context file"):
        load_context(None, tmp_path / "nope.json")


def test_every_madengine_example_config_parses(reference: Path) -> None:
    configs = sorted((reference / "madengine" / "profiling-configs").glob("*.json"))
    assert configs
    for path in configs:
        ctx = load_context(None, path)
        assert ctx.tools, path.name
        assert ctx.gpu_vendor == "AMD"
