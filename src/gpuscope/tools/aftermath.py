"""What the command left behind, for the manifest and the warnings: the processes gpuscope had
to end (reaper.py)."""

from __future__ import annotations

from collections.abc import Sequence

from gpuscope.tools.child import ChildResult
from gpuscope.tools.manifest import Manifest
from gpuscope.tools.reaper import Survivor
from gpuscope.tools.tool import Notes

# In the command's environment (`<run id>.<gpuscope's pid>`), inherited by all it starts: finds
# the processes that left its process group (setsid, daemons).
MARKER = "GPUSCOPE_JOB"
_LISTED = 5  # processes named in one warning
_SHOWN = 60  # characters of a command line in a warning


def record(manifest: Manifest, notes: Notes, child: ChildResult) -> None:
    """`survivors` in the manifest, and a warning naming them."""
    manifest.survivors = [s.to_dict() for s in child.survivors]
    if child.survivors:
        notes.warn(_survivors_line(child.survivors))


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


def _short(command: Sequence[str]) -> str:
    text = " ".join(command) or "?"
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
