"""docs/notebooks/quickstart.ipynb runs in a real Jupyter kernel (nbclient + ipykernel) and shows
what it promises (issue 21.2): a DataFrame per kernel, the report's summary as self-contained
HTML, the report's tables, figures, and `%gpuscope_bench` after `%load_ext gpuscope`. The cells
tagged `gpu` are left out here; tests/gpu/test_notebook_gpu.py runs them on a GPU."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "docs" / "notebooks" / "quickstart.ipynb"

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("pandas")
pytest.importorskip("matplotlib")


def run_notebook(tmp_path: Path, *, gpu: bool) -> list[Any]:
    """The notebook's code cells after a run in a fresh kernel (in `tmp_path`)."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    if not gpu:
        notebook.cells = [c for c in notebook.cells if "gpu" not in c.metadata.get("tags", [])]
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env_path) if p)
    try:
        where = {"metadata": {"path": str(tmp_path)}}
        client = nbclient.NotebookClient(
            notebook, timeout=300, kernel_name="python3", resources=where
        )
        client.execute()
    finally:
        os.environ["PYTHONPATH"] = env_path
    return [c for c in notebook.cells if c.cell_type == "code"]


def shown(cell: Any, kind: str) -> str:
    """Everything the cell showed of one MIME type (or its stream text)."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream" and kind == "text":
            parts.append(output.text)
        data = output.get("data", {})
        if kind in data:
            parts.append(data[kind])
    return "\n".join(parts)


def test_the_quickstart_runs_and_shows_its_results(tmp_path: Path) -> None:
    cells = {c.source.splitlines()[0]: c for c in run_notebook(tmp_path, gpu=False)}
    errors = [o for c in cells.values() for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    head = shown(cells["t = gpuscope.load(path)"], "text/html")
    assert "<table" in head and "duration_ns" in head and "aten::" in head
    by_category = shown(
        cells['k.groupby("category").duration_ns.sum().sort_values(ascending=False)'], "text/plain"
    )
    assert "gemm" in by_category and "elementwise" in by_category
    report = shown(cells["a = gpuscope.analyze(path)"], "text/html")
    assert report.startswith('<div class="gpuscope-report"><style>')
    assert "cpu-bound" in report and "<script" not in report and "http" not in report
    assert len(shown(cells["a = gpuscope.analyze(path)"], "text/plain")) < 300
    printed = shown(cells["print(repr(a))"], "text")
    assert printed.startswith("<AnalysisResult ") and "warning launch-overhead" in printed
    assert "top_kernels" in shown(cells["tables = a.tables()"], "text/plain")
    assert "<table" in shown(cells['tables["top_kernels"].head()'], "text/html")
    assert "ms of kernel time" in shown(cells["# the frames and the report agree"], "text/plain")
    for figure in ("a.plot.breakdown()", "a.plot.gaps()"):
        assert shown(cells[figure], "image/png"), f"{figure}: no figure shown"
    bench = cells["%gpuscope_bench --budget 0.2 sum(range(10_000))"]
    assert "median" in shown(bench, "text/html") and "<BenchResult " in shown(bench, "text/plain")


def test_the_quickstart_answers_htas_questions_a_line_each(tmp_path: Path) -> None:
    """The HTA-parity cells (issue 27.5) on the shipped 2-rank DDP run: queue length, copy
    bandwidth, idle time per stream, steps and a step's kernels (NCCL included), the memory
    timeline (and the note of a trace without one), every kernel name of every rank, the per-rank
    step table, the ranks' figure and a diff's verdict — each what it claims (their numbers are
    checked against the raw events in tests/unit/frames/test_series.py)."""
    cells = {c.source.splitlines()[0]: c for c in run_notebook(tmp_path, gpu=False)}
    errors = [o for c in cells.values() for o in c.outputs if o.output_type == "error"]
    assert not errors, errors

    def text(start: str) -> str:
        cell = next(c for head, c in cells.items() if head.startswith(start))
        return shown(cell, "text/plain") + shown(cell, "text")

    assert "count" in text("examples = ") and "max" in text("examples = ")  # per stream
    assert "DtoD" in text("r0.memory_bandwidth()")
    assert "host_wait_ns" in text("r0.idle_time()") and "17" in text("r0.idle_time()")
    assert "ProfilerStep#3" in text("r0.steps()")
    assert "communication     2" in text("r0.step_kernels(1)")
    assert "633339904" in text("m = gpuscope.load(")  # device 0's peak, allocated bytes
    assert "profile_memory=True" in text('t.memory().attrs["note"]')
    assert "83607.532" in text("s = gpuscope.analyze(job)")  # rank 0's kernel time, µs
    assert text('s.table("ranks.steps.per_rank")').count("ProfilerStep#4") == 2
    ranks = next(c for head, c in cells.items() if head.startswith("s.plot.ranks()"))
    assert shown(ranks, "image/png"), "s.plot.ranks(): no figure shown"
    verdict = text("print(repr(gpuscope.diff_profiles(")
    assert verdict.startswith("<DiffResult: slower ") and "within the noise" in verdict
