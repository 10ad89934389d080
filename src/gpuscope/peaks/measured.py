"""The peaks `gpuscope bench` measured on this machine: one cache file, `Measured` entries keyed
by device|driver|runtime|torch, in $GPUSCOPE_CACHE_DIR (else $XDG_CACHE_HOME/gpuscope, else
~/.cache/gpuscope). Measuring is `timing.peaks`' job; reading and writing the cache is here."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import msgspec

KIND = "measured"


class Measured(msgspec.Struct, frozen=True, kw_only=True):
    """The device's attainable rates, measured once with a large matmul and a large copy."""

    device: str
    tflops: float
    gbps: float
    method: str


def cache_dir() -> Path:
    """$GPUSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/gpuscope, else ~/.cache/gpuscope."""
    explicit = os.environ.get("GPUSCOPE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpuscope"


def read_cache(path: Path | None = None) -> dict[str, Measured]:
    """Every cached measurement by key; {} when there is no cache or it cannot be read."""
    try:
        data = (path or cache_dir() / "peaks.json").read_bytes()
        return msgspec.json.decode(data, type=dict[str, Measured])
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return {}  # UnicodeDecodeError: invalid UTF-8 before msgspec 0.23


def cached(key: str, measure: Callable[[], Measured], path: Path | None = None) -> Measured:
    """The measurement stored under `key`, measuring (and storing) it on a miss."""
    path = path or cache_dir() / "peaks.json"
    known = read_cache(path)
    if key not in known:
        known[key] = measure()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(msgspec.json.encode(known))
        except OSError:
            pass  # a read-only home only costs a re-measure next time
    return known[key]


def measured_for(device_name: str, path: Path | None = None) -> Measured | None:
    """A measurement of a device of this name (any driver, runtime or torch), or None."""
    for key, entry in sorted(read_cache(path).items()):
        if key.split("|")[0] == device_name:
            return entry
    return None
