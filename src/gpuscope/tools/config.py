"""Tool definitions: the packaged `tools.json`, a user's `--tools-config`, and the merge.

The file format is madengine's `tools.json` (`{"tools": {NAME: {cmd, env_vars, pre_scripts,
post_scripts}}}`) plus gpuscope's own keys: `kind` (which implementation runs the tool),
`vendor`, `description`, `outputs` and `options`. A user config overrides the defaults tool by
tool: `cmd` replaces, `env_vars` merge, other keys replace; new names add tools. Context
entries (`--additional-context`) are applied last, the same way.

Placeholders usable in `cmd`, `env_vars` and script args: `{run_dir}`, `{run_id}`, and
`{counters}` (the packaged counter files).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gpuscope.errors import ConfigError
from gpuscope.madengine.context import VENDORS, ToolRequest, env_mapping

ENTRY_KEYS = (
    "kind", "description", "vendor", "cmd", "env_vars", "pre_scripts", "post_scripts",
    "outputs", "options",
)  # fmt: skip
GENERIC_KIND = "command"
DEFAULTS = Path(__file__).resolve().with_name("defaults")  # package data: tools.json, counters


@dataclass(frozen=True)
class Script:
    """A madengine pre/post script: a path and its argument string."""

    path: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolConfig:
    """One tool's resolved definition (placeholders still unexpanded)."""

    name: str
    kind: str = ""  # "" = the kind named like the tool, else the generic "command" kind
    cmd: tuple[str, ...] = ()
    env_vars: Mapping[str, str] = field(default_factory=dict)
    vendor: str | None = None
    description: str = ""
    outputs: tuple[str, ...] = ()
    pre_scripts: tuple[Script, ...] = ()
    post_scripts: tuple[Script, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    user_cmd: bool = False


def counters_dir() -> Path:
    """Where the packaged rocprofv3 counter files live."""
    return DEFAULTS / "counters"


def load_catalog(override: Path | None = None) -> dict[str, ToolConfig]:
    """The packaged tools, with `override` (a tools.json of the same format) applied."""
    packaged = DEFAULTS / "tools.json"
    catalog = _parse_catalog(json.loads(packaged.read_text(encoding="utf-8")), "tools.json")
    if override is None:
        return catalog
    return apply_override(catalog, _parse_catalog(_read_json(override), str(override)))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read tools config {path}: {error.strerror}") from None
    except RecursionError:
        raise ConfigError(f"tools config {path} is nested too deep") from None
    except ValueError as error:  # UnicodeDecodeError too
        raise ConfigError(f"tools config {path} is not valid JSON: {error}") from None


def _parse_catalog(data: Any, origin: str) -> dict[str, ToolConfig]:
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, dict):
        raise ConfigError(f'{origin}: expected {{"tools": {{NAME: {{...}}}}}} (madengine format)')
    return {name: _parse_entry(name, entry, origin) for name, entry in tools.items()}


def _parse_entry(name: str, entry: Any, origin: str) -> ToolConfig:
    where = f"{origin}: tool {name}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected an object")
    extra = sorted(k for k in entry if k not in ENTRY_KEYS and not k.startswith("_"))
    if extra:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(extra)}; valid: {', '.join(ENTRY_KEYS)}"
        )
    return ToolConfig(
        name=name,
        kind=_text(entry.get("kind", ""), f"{where}.kind"),
        cmd=split_cmd(entry.get("cmd", ""), where),
        env_vars=env_mapping(entry.get("env_vars", {}), f"{where}.env_vars"),
        vendor=_vendor(entry.get("vendor"), where),
        description=_text(entry.get("description", ""), f"{where}.description"),
        outputs=_outputs(entry.get("outputs", []), f"{where}.outputs"),
        pre_scripts=_scripts(entry.get("pre_scripts", []), f"{where}.pre_scripts"),
        post_scripts=_scripts(entry.get("post_scripts", []), f"{where}.post_scripts"),
        options=env_mapping(entry.get("options", {}), f"{where}.options"),
    )


def split_cmd(cmd: Any, where: str) -> tuple[str, ...]:
    """A `cmd` as argv: a string is split like a POSIX shell would (never re-joined)."""
    if isinstance(cmd, list) and all(isinstance(part, str) for part in cmd):
        return tuple(cmd)
    if not isinstance(cmd, str):
        raise ConfigError(f"{where}.cmd: expected a string or a list of strings")
    try:
        return tuple(shlex.split(cmd))
    except ValueError as error:
        raise ConfigError(f"{where}.cmd: cannot split {cmd!r}: {error}") from None


def _check_prefix(config: ToolConfig) -> ToolConfig:
    """A cmd is a command prefix; shell operators in it would be passed as arguments."""
    if set(config.cmd) & {"&&", "||", "|", ";", ">", "<"}:
        raise ConfigError(
            f"tool {config.name}: cmd {' '.join(config.cmd)!r} uses shell operators; a tool cmd "
            "is a command prefix (e.g. 'rocprofv3 --hip-trace --'), not a shell line"
        )
    return config


def _vendor(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.upper() not in VENDORS:
        raise ConfigError(f"{where}.vendor {value!r} is not one of {', '.join(VENDORS)}")
    return value.upper()


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, not {type(value).__name__}")
    return value


def _outputs(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of file patterns (strings)")
    return tuple(value)


def _scripts(value: Any, where: str) -> tuple[Script, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of {{path, args}}")
    scripts = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise ConfigError(f'{where}: each script needs a "path"')
        args = split_cmd(item.get("args", ""), where)
        scripts.append(Script(path=item["path"], args=args))
    return tuple(scripts)


def apply_override(
    catalog: Mapping[str, ToolConfig], override: Mapping[str, ToolConfig]
) -> dict[str, ToolConfig]:
    """Override tool by tool: cmd replaces, env_vars merge, other given keys replace."""
    merged = dict(catalog)
    for name, new in override.items():
        old = catalog.get(name)
        merged[name] = new if old is None else _overlay(old, new)
    return merged


def _overlay(old: ToolConfig, new: ToolConfig) -> ToolConfig:
    defaults = ToolConfig(name=new.name)
    changes: dict[str, Any] = {"env_vars": {**old.env_vars, **new.env_vars}}
    for attr in ("kind", "vendor", "description", "outputs", "pre_scripts", "post_scripts"):
        if getattr(new, attr) != getattr(defaults, attr):
            changes[attr] = getattr(new, attr)
    if new.options:
        changes["options"] = {**old.options, **new.options}
    if new.cmd:
        changes["cmd"], changes["user_cmd"] = new.cmd, True
    return replace(old, **changes)


def resolve(requests: Iterable[ToolRequest], catalog: Mapping[str, ToolConfig]) -> list[ToolConfig]:
    """The requested tools, in order, with each request's cmd/env_vars applied."""
    configs: list[ToolConfig] = []
    seen: set[str] = set()
    for request in requests:
        if request.name not in catalog:
            raise ConfigError(
                f"unknown tool {request.name!r}; valid tools: {', '.join(sorted(catalog))}"
            )
        if request.name in seen:
            raise ConfigError(f"tool {request.name!r} is listed twice; list each tool once")
        seen.add(request.name)
        configs.append(_check_prefix(_apply_request(catalog[request.name], request)))
    return configs


def _apply_request(config: ToolConfig, request: ToolRequest) -> ToolConfig:
    env = {**config.env_vars, **request.env_vars}
    if request.cmd is None:
        return replace(config, env_vars=env)
    cmd = split_cmd(request.cmd, f"tool {request.name}")
    return replace(config, cmd=cmd, env_vars=env, user_cmd=True)


def requests_from_names(names: Sequence[str]) -> list[ToolRequest]:
    """`--tools a,b` as requests (no cmd, no env_vars)."""
    return [ToolRequest(name=n.strip()) for n in names if n.strip()]


def expand(text: str, values: Mapping[str, str]) -> str:
    """Replace `{run_dir}`-style placeholders; other braces are left alone."""
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text
