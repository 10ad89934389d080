"""madengine's sampler settings (tool env_vars) → `Sampler` keyword arguments.

POWER_DEVICE / VRAM_DEVICE                 all | 0 | 0,1,2        → devices
POWER_SAMPLING_RATE / VRAM_SAMPLING_RATE   seconds (default 0.1)  → rate_s
POWER_DUAL_GCD / VRAM_DUAL_GCD             true | false           → dual_gcd
POWER_BACKEND / VRAM_BACKEND (gpuscope)    auto | nvml | amdsmi | rocm-smi | fake → backend
POWER_MODE / VRAM_MODE                     must match the tool (power / vram)
POWER_OUTPUT_FILE / VRAM_OUTPUT_FILE       file name in the run dir → `sampler_output_name`
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any, Literal

from gpuscope.errors import ConfigError

Kind = Literal["power", "vram"]
DEFAULT_OUTPUT = {
    "power": "gpu_info_power_profiler_output.csv",
    "vram": "gpu_info_vram_profiler_output.csv",
}
_BOOLEANS = {
    "true": True,
    "1": True,
    "yes": True,
    "false": False,
    "0": False,
    "no": False,
    "": False,
}


def sampler_env_options(kind: Kind, env: Mapping[str, str]) -> dict[str, Any]:
    """The Sampler kwargs (devices, rate_s, dual_gcd, backend) madengine's env names ask for."""
    prefix = _prefix(kind)
    mode = env.get(f"{prefix}_MODE", kind).strip().lower()
    if mode != kind:
        raise ConfigError(f"{prefix}_MODE={mode!r}: the {kind} sampler needs {prefix}_MODE={kind}")
    return {
        "devices": _devices(prefix, env.get(f"{prefix}_DEVICE", "all")),
        "rate_s": _rate(prefix, env.get(f"{prefix}_SAMPLING_RATE", "0.1")),
        "dual_gcd": _boolean(prefix, env.get(f"{prefix}_DUAL_GCD", "false")),
        "backend": env.get(f"{prefix}_BACKEND", "auto").strip() or "auto",
    }


def sampler_output_name(kind: Kind, env: Mapping[str, str]) -> str:
    """The CSV's file name inside the run directory (madengine's default unless overridden)."""
    name = env.get(f"{_prefix(kind)}_OUTPUT_FILE", "").strip()
    return PurePath(name).name if name else DEFAULT_OUTPUT[kind]


def _prefix(kind: str) -> str:
    if kind not in DEFAULT_OUTPUT:
        raise ConfigError(f"unknown sampler kind {kind!r}: expected power or vram")
    return kind.upper()


def _devices(prefix: str, text: str) -> str:
    spec = text.strip().lower()
    if spec == "all" or all(part.strip().isdigit() for part in spec.split(",")):
        return spec
    raise ConfigError(f"{prefix}_DEVICE={text!r}: expected all, 0 or a list like 0,1,2")


def _rate(prefix: str, text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        rate = -1.0
    if not rate > 0:
        raise ConfigError(f"{prefix}_SAMPLING_RATE={text!r}: expected seconds > 0, e.g. 0.1")
    return rate


def _boolean(prefix: str, text: str) -> bool:
    value = _BOOLEANS.get(text.strip().lower())
    if value is None:
        raise ConfigError(f"{prefix}_DUAL_GCD={text!r}: expected true or false")
    return value
