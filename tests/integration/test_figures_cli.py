"""The figures through the real CLI: `--md FILE` writes them as PNGs in a folder beside it, linked
from the text, through the one safe writer (never over an input; none for standard output), and
no page or Markdown file holds raw JSON."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
FIGURES = (
    "01-step-time-by-part.png",
    "02-gpu-time-by-category.png",
    "03-total-time-of-the-top-kernels.png",
    "04-busy-and-idle-over-the-gpu-span.png",
    "05-gaps-between-kernels-by-length-count.png",
)


def gpuscope(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "120"}
    argv = [sys.executable, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_md_file_gets_its_figures_beside_it_and_no_raw_json(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    done = gpuscope(tmp_path, "analyze", TRACE, "--md", "out/report.md", "--html", "out/r.html",
                    "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "out" / "report_figures"
    assert sorted(p.name for p in folder.iterdir()) == list(FIGURES)
    assert all((folder / name).read_bytes().startswith(b"\x89PNG") for name in FIGURES)
    text = (tmp_path / "out" / "report.md").read_text()
    assert re.findall(r"!\[[^]]*\]\((report_figures/[^)]+)\)", text) == [
        f"report_figures/{name}" for name in FIGURES
    ]
    page = (tmp_path / "out" / "r.html").read_text()
    for view in (text, page.replace("&#34;", '"')):
        assert not re.search(r'\{"[a-z_]+": ', view), "raw JSON in a view"


def test_md_on_standard_output_writes_no_figures(tmp_path: Path) -> None:
    done = gpuscope(tmp_path, "analyze", TRACE, "--md", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# gpuscope analysis") and "![" not in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_figure_never_replaces_an_input(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    folder = tmp_path / "report_figures"
    folder.mkdir()
    planted = folder / FIGURES[0]  # a trace that happens to sit where a figure would go
    shutil.copy(TRACE, planted)
    before = planted.read_bytes()
    done = gpuscope(tmp_path, "analyze", planted, "--md", "report.md", "-q")
    assert done.returncode == 2, done.stderr
    assert "is the input" in done.stderr and "Traceback" not in done.stderr
    assert planted.read_bytes() == before and not (tmp_path / "report.md").exists()
