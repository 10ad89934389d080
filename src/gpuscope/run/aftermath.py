"""What the command left behind, for the manifest and the warnings: the processes gpuscope had
to end (reaper.py), and GPU memory still held by processes of the run (gpu_processes.py)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from gpuscope.run import procs
from gpuscope.run.child import ChildResult
from gpuscope.run.gpu_processes import GpuProcess, Query
from gpuscope.run.manifest import Manifest
from gpuscope.run.reaper import Survivor
from gpuscope.tools.tool import Notes

# In the command's environment (`<run id>.<gpuscope's pid>`), inherited by all it starts: finds
# the processes that left its process group (setsid, daemons).
MARKER = "GPUSCOPE_JOB"
_LISTED = 5  # processes named in one warning
_SHOWN = 60  # characters of a command line in a warning


def record(manifest: Manifest, notes: Notes, child: ChildResult, marker: str, gpus: Query) -> None:
    """`survivors` and `gpu_processes` in the manifest; a warning for what had to be ended and
    for each process of the run still holding GPU memory."""
    manifest.survivors = [s.to_dict() for s in child.survivors]
    if child.survivors:
        notes.warn(_survivors_line(child.survivors))
    try:
        holders = gpus()
    except Exception as error:  # a vendor library's surprise must not fail a finished run
        notes.warn(f"could not list the processes holding GPU memory: {error!r}")
        holders = []
    ours = _ours(child, marker)
    known = {s.pid: list(s.command) for s in child.survivors}
    commands = {h.pid: known.get(h.pid) or procs.command(h.pid) for h in holders}
    manifest.gpu_processes = [_holder(h, commands[h.pid], h.pid in ours) for h in holders]
    for holder in holders:
        if holder.pid in ours:
            notes.warn(_holder_line(holder, commands[holder.pid]))


def _survivors_line(survivors: Sequence[Survivor]) -> str:
    shown = [_survivor(s) for s in survivors[:_LISTED]]
    more = f" and {len(survivors) - _LISTED} more" if len(survivors) > _LISTED else ""
    count = len(survivors)
    return (f"{count} other process{'es' if count > 1 else ''} of the command had to be ended "
            f"(see survivors in manifest.json): {'; '.join(shown)}{more}")  # fmt: skip


def _survivor(survivor: Survivor) -> str:
    what = f"pid {survivor.pid} `{_short(survivor.command)}`"
    if not survivor.ended:
        return f"{what} is still running (sent {survivor.signal or 'nothing: not permitted'})"
    left = " (had left the process group)" if survivor.found == "environment" else ""
    return f"{what}{left} ended by {survivor.signal}"


def _ours(child: ChildResult, marker: str) -> set[int]:
    alive = procs.scan(child.pid, marker.encode(), exclude=(os.getpid(),))
    return {child.pid, *(s.pid for s in child.survivors), *(p.pid for p, _ in alive)}


def _holder(holder: GpuProcess, command: list[str], ours: bool) -> dict[str, object]:
    return {"gpu": holder.gpu, "pid": holder.pid, "used_bytes": holder.used_bytes,
            "command": command, "of_this_run": ours}  # fmt: skip


def _holder_line(holder: GpuProcess, command: list[str]) -> str:
    used = holder.used_bytes
    amount = f"{used / 2**20:,.0f} MiB of GPU memory" if used is not None else "GPU memory"
    return (f"GPU {holder.gpu}: pid {holder.pid} `{_short(command)}` of this run still holds "
            f"{amount} after the run")  # fmt: skip


def _short(command: Sequence[str]) -> str:
    text = " ".join(command) or "?"
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
