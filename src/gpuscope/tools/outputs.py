"""After a run: each profiler's output folder is analysed (every format `gpuscope analyze`
reads), and the report is written beside the outputs as `analysis.json`.

Analysis is best effort: a folder that holds nothing readable, or an output that fails to read,
is a warning in the manifest — never a failed run, never a lost output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuscope.tools.tool import Notes

ANALYSIS_FILE = "analysis.json"


def analyze_folder(folder: Path, notes: Notes, tool: str) -> Path | None:
    """Write `folder/analysis.json` for the traces in `folder`; return its path (None if none)."""
    from gpuscope.errors import GpuscopeError
    from gpuscope.ranks.api import analysis_set
    from gpuscope.trace.registry import sources as sources_of

    if not folder.is_dir():
        return None
    try:
        sources = sources_of([str(folder)])
    except GpuscopeError as error:
        notes.warn(f"{tool}: nothing to analyse in {folder.name}/ ({error})")
        return None
    reports = [r for r in (_report(s, notes, tool) for s in sources) if r is not None]
    if not reports:
        return None
    return _write(folder / ANALYSIS_FILE, analysis_set(reports))


def _report(source: Any, notes: Notes, tool: str) -> dict[str, Any] | None:
    from gpuscope.analysis.pipeline import analyze
    from gpuscope.trace.registry import read_source

    try:
        return analyze(read_source(source)).to_dict()
    except Exception as error:  # the outputs are kept; their analysis is best effort
        notes.warn(f"{tool}: gpuscope analyze {source.path}: {type(error).__name__}: {error}")
        return None


def _write(path: Path, data: Any) -> Path:
    import msgspec

    from gpuscope.output import write

    write(path, msgspec.json.format(msgspec.json.encode(data), indent=1))
    return path
