"""gpuscope's own renderers (`report.registry.OWN`) are pyproject.toml's entry points, and a source
tree that is not installed (PYTHONPATH=src: no metadata anywhere) still draws its reports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpuscope.report import registry

REPO = Path(__file__).resolve().parents[2]


def test_own_entry_points_are_pyprojects() -> None:
    text = (REPO / "pyproject.toml").read_text()  # no tomllib on Python 3.10
    section = text.split(f'[project.entry-points."{registry.GROUP}"]\n', 1)[1].split("\n\n")[0]
    declared = dict(line.replace(" ", "").replace('"', "").split("=", 1)
                    for line in section.splitlines() if "=" in line)  # fmt: skip
    assert declared == dict(registry.OWN)


def test_a_source_tree_without_metadata_renders(tmp_path: Path) -> None:
    """With no entry point installed anywhere (what `PYTHONPATH=src` from a clone sees; here the
    metadata scan is made to find none), the terminal, Markdown and HTML reports are drawn."""
    code = (
        "import sys; from importlib import metadata; from gpuscope import plugins\n"
        "plugins._entry_points = lambda: metadata.EntryPoints(())\n"
        "from gpuscope.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    trace = REPO / "tests" / "data" / "patterns_h200.json.gz"
    argv = [sys.executable, "-c", code, "analyze", str(trace), "--md", "r.md", "--html", "r.html"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "100"}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "At a glance" in done.stdout
    assert (tmp_path / "r.md").read_text().startswith("#")
    assert "<html" in (tmp_path / "r.html").read_text()
