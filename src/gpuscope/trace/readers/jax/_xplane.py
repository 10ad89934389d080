"""The XSpace protobuf (`<host>.xplane.pb`) through xprof, the package made for it (the `xplane`
extra): its converter makes the same trace-viewer JSON TensorBoard shows (and jax.profiler writes
beside the XSpace), which `_build` lays out like the JSON file; its `ProfileData` gives what the
JSON leaves out: each GPU plane's properties (name, SM / CU count, compute capability, vendor),
the host's versions (`/host:metadata`) and the profile's start and stop (`Task Environment`).

xprof's C++ code logs to the process's stderr while it converts; that output is caught and only
its last error line is kept, for the message when the conversion fails.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpuscope.errors import ReaderError
from gpuscope.trace.model import Device, Trace
from gpuscope.trace.readers.jax import _build, _json

EXTRA = "xplane"  # the extra that installs xprof, which reads an XSpace

_GPU = re.compile(r"^/device:GPU:(\d+)$")
_VERSIONS = ("jax_version", "jaxlib_version", "cuda_version", "cuda_runtime_version",
             "cuda_driver_version", "rocm_version", "gpu_version")  # fmt: skip


def read(path: str) -> Trace:
    converter, profile_data = _xprof(path)
    with _quiet_stderr() as said:
        try:
            text, _ = converter.xspace_to_tool_data(
                [path], "trace_viewer", {"use_saved_result": False}
            )
        except Exception as error:  # xprof raises what its C++ side says
            text, failure = None, str(error)
        else:
            failure = ""
    if failure:
        raise ReaderError(f"xprof cannot read this XSpace ({failure}){_last_error(said)}")
    if not text:
        raise ReaderError(f"xprof cannot read this XSpace{_last_error(said)}")
    planes = _plane_stats(profile_data, path)
    source = _source(path, planes)
    data = text.encode() if isinstance(text, str) else bytes(text)
    return _json.read_text(data, source)


def _xprof(path: str) -> tuple[Any, Any]:
    """xprof's converter and ProfileData, or a one-line error naming the extra."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its dependencies' deprecation notices
            from xprof import profile_data
            from xprof.convert import raw_to_tool_data
    except ImportError:
        stem = Path(path).name.removesuffix(".xplane.pb")
        raise ReaderError(
            f"reading a JAX XSpace (.xplane.pb) needs xprof: pip install 'gpuscope[{EXTRA}]' "
            f"(or analyze the {stem}.trace.json.gz that jax.profiler writes beside it)"
        ) from None
    return raw_to_tool_data, profile_data.ProfileData


def _plane_stats(profile_data: Any, path: str) -> dict[str, dict[str, str]]:
    """Each plane's stats by plane name (values as xprof gives them: text)."""
    found: dict[str, dict[str, str]] = {}
    try:
        with profile_data.from_file(path) as data:
            for plane in data.planes:
                found[plane.name] = dict(plane.stats)
    except (OSError, ValueError):
        return {}
    return found


def _source(path: str, planes: dict[str, dict[str, str]]) -> _build.Source:
    devices, vendors = [], set()
    for name, stats in planes.items():
        match = _GPU.match(name)
        if match:
            devices.append(_device(int(match.group(1)), stats))
            vendors.add(stats.get("device_vendor", "").lower())
    vendor = "nvidia" if vendors == {"nvidia"} else "amd" if vendors == {"amd"} else ""
    task = planes.get("Task Environment", {})
    start, stop = _int(task.get("profile_start_time")), _int(task.get("profile_stop_time"))
    metadata = planes.get("/host:metadata", {})
    return _build.Source(
        path, "xplane",
        devices=tuple(sorted(devices, key=lambda d: d.id)), vendor=vendor,
        base_time_ns=start if start > 0 else None,
        profiler_span=(0, stop - start) if 0 < start <= stop else None,
        extra={k: metadata[k] for k in _VERSIONS if metadata.get(k)},
    )  # fmt: skip


def _device(index: int, stats: dict[str, str]) -> Device:
    """A GPU plane's properties: `core_count` is SMs (NVIDIA) or CUs (AMD)."""
    major, minor = _int(stats.get("compute_cap_major")), _int(stats.get("compute_cap_minor"))
    nvidia = stats.get("device_vendor", "").lower() == "nvidia"
    return Device(
        id=index,
        name=stats.get("gpu_device_name", "") or stats.get("device_vendor", ""),
        properties=dict(stats),
        arch=f"sm_{major}{minor}" if nvidia and major >= 0 and minor >= 0 else "",
        compute_units=max(0, _int(stats.get("core_count"))),
    )


def _int(value: Any) -> int:
    text = str(value or "").strip()
    return int(text) if text.isdigit() and len(text) < 20 else -1


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[list[str]]:
    """The process's stderr (file descriptor 2) caught while inside; its lines are in the list
    yielded once the block ends."""
    said: list[str] = []
    with tempfile.TemporaryFile() as caught:
        try:
            saved = os.dup(2)
        except OSError:
            yield said
            return
        try:
            os.dup2(caught.fileno(), 2)
            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            said += caught.read().decode("utf-8", "replace").splitlines()


def _last_error(said: list[str]) -> str:
    """`: <xprof's last error line>` from what it logged, or ""."""
    errors = [line for line in said if line.startswith(("E0", "F0", "Error", "error"))]
    return f": {errors[-1][-300:]}" if errors else ""
