"""madengine's `--additional-context` / `--additional-context-file`, read and validated.

The format is madengine's, unchanged: a JSON object (or the Python dict literal madengine also
accepts on its command line) with `gpu_vendor`, `tools: [{name, cmd?, env_vars?}]` and friends.
The file is read first and the command line wins, key by key; `env_vars` dicts merge.

    >>> ctx = parse_context('{"gpu_vendor": "AMD", "tools": [{"name": "rocprof"}]}')
    >>> ctx.gpu_vendor, [t.name for t in ctx.tools]
    ('AMD', ['rocprof'])
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscope.errors import ConfigError

# Keys gpuscope acts on.
USED_KEYS = ("gpu_vendor", "tools", "env_vars", "docker_env_vars", "guest_os")
# madengine keys about building/deploying containers or clusters: accepted, ignored, reported.
IGNORED_KEYS = (
    "MAD_CONTAINER_IMAGE", "MAD_ROCM_PATH", "cleanup_on_failure", "ctx_test", "data",
    "debug", "deploy", "deployment_config", "distributed", "docker_build_arg", "docker_cpus",
    "docker_gpus", "docker_mounts", "encapsulate_script", "gen_sys_env_details",
    "generate_sys_env_details", "gpu_renderDs", "host_os", "k8s", "kubernetes", "launcher",
    "live_output", "log_error_benign_patterns", "model_args", "monitor", "multiple_results",
    "numa_balancing", "post_scripts", "pre_scripts", "rocenv_mode", "shared_data",
    "skip_perf_collection", "slurm", "timeout", "vllm",
)  # fmt: skip
TOOL_ENTRY_KEYS = ("name", "cmd", "env_vars")
VENDORS = ("AMD", "NVIDIA")


@dataclass(frozen=True)
class ToolRequest:
    """One `tools` entry: a tool name, optionally a replacement `cmd` and extra `env_vars`."""

    name: str
    cmd: str | None = None
    env_vars: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """The parts of a madengine context that `gpuscope run` uses."""

    gpu_vendor: str | None = None
    tools: tuple[ToolRequest, ...] = ()
    env_vars: Mapping[str, str] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()


def load_context(text: str | None = None, file: Path | None = None) -> Context:
    """Merge the context file and the command-line context (the command line wins)."""
    merged: dict[str, Any] = {}
    if file is not None:
        merged = _merge(merged, _decode(_read(file), str(file)))
    if text is not None:
        merged = _merge(merged, _decode(text, "--additional-context"))
    return _validate(merged)


def parse_context(text: str) -> Context:
    return load_context(text=text)


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read additional context file {file}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{file}: not UTF-8 text ({error.reason} at byte {error.start}); "
                          "expected a JSON object") from None  # fmt: skip


def _decode(text: str, origin: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except RecursionError:
        raise ConfigError(f"{origin}: nested too deep to be a context") from None
    except ValueError:
        value = _literal(text, origin)
    if not isinstance(value, dict):
        raise ConfigError(f'{origin}: expected a JSON object like {{"tools": [...]}}')
    return value


def _literal(text: str, origin: str) -> Any:
    import ast

    try:  # madengine itself reads its command-line context with ast.literal_eval
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ConfigError(
            f"{origin}: not JSON (nor a Python dict literal): {text[:80]!r}; "
            'expected e.g. {"tools": [{"name": "rocprof"}]}'
        ) from None


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def _validate(raw: Mapping[str, Any]) -> Context:
    known = set(USED_KEYS) | set(IGNORED_KEYS)
    unknown = sorted(k for k in raw if k not in known and not k.startswith("_"))
    if unknown:
        raise ConfigError(
            f"unknown additional-context key(s) {', '.join(unknown)}; "
            f"valid keys: {', '.join(USED_KEYS)} (and madengine's {', '.join(IGNORED_KEYS)})"
        )
    env = {**env_mapping(raw.get("docker_env_vars", {}), "docker_env_vars")}
    env.update(env_mapping(raw.get("env_vars", {}), "env_vars"))
    return Context(
        gpu_vendor=_vendor(raw.get("gpu_vendor")),
        tools=_tools(raw.get("tools", [])),
        env_vars=env,
        ignored=tuple(sorted(k for k in raw if k in IGNORED_KEYS)),
    )


def _vendor(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.upper() not in VENDORS:
        raise ConfigError(f"gpu_vendor {value!r} is not one of {', '.join(VENDORS)}")
    return value.upper()


def _tools(value: Any) -> tuple[ToolRequest, ...]:
    if not isinstance(value, list):
        raise ConfigError('"tools" must be a list like [{"name": "rocprof"}]')
    return tuple(_tool(entry, i) for i, entry in enumerate(value))


def _tool(entry: Any, index: int) -> ToolRequest:
    where = f"tools[{index}]"
    if isinstance(entry, str):  # a bare name is a convenient shorthand
        return ToolRequest(name=entry)
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ConfigError(f'{where}: expected an object with a "name", e.g. {{"name": "rocprof"}}')
    extra = sorted(k for k in entry if k not in TOOL_ENTRY_KEYS)
    if extra:
        raise ConfigError(
            f"{where} ({entry['name']}): unknown key(s) {', '.join(extra)}; "
            f"valid keys: {', '.join(TOOL_ENTRY_KEYS)}"
        )
    cmd = entry.get("cmd")
    if cmd is not None and not isinstance(cmd, str):
        raise ConfigError(f"{where} ({entry['name']}): cmd must be a string")
    env = env_mapping(entry.get("env_vars", {}), f"{where}.env_vars")
    return ToolRequest(name=entry["name"], cmd=cmd, env_vars=env)


def env_mapping(value: Any, where: str) -> dict[str, str]:
    """An env_vars object as str -> str; scalar values are written as strings."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be an object of NAME: value")
    env: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, (dict, list)) or item is None:
            raise ConfigError(f"{where}.{key}: expected a string or number, got {item!r}")
        env[str(key)] = _env_text(item)
    return env


def _env_text(item: object) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    return str(item)
