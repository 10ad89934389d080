"""Every kind of HTML page gpuscope writes, opened in a real headless browser (Debian's
chromium through the DevTools protocol, `tests/browser.py`): offline, no console error, no
request but the page itself, no sideways scrolling, and every section and figure shown at a
desktop width (1280 px) and a phone's (390 px). Skipped where /usr/bin/chromium is not installed
(`apt-get install chromium`; CI's test setup installs it). Screenshots of each figure are kept
in the test's folder (`pytest --basetemp DIR` keeps them where you can look)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuscope.madengine import perfcsv
from tests.browser import Browser, Missing

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
TRACE = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
JOB = DATA / "recorded" / "ddp4_rank0_host_late_h200"  # four ranks of one job
BEFORE = DATA / "recorded" / "compiled_default_h200.json.gz"
AFTER = DATA / "recorded" / "compiled_reduce_overhead_h200.json.gz"
WIDTHS = (1280, 390)
PAGES = {  # page → the figure titles it must show
    "analysis": ["Step time by part", "GPU time by category", "Total time of the top kernels",
                 "Busy and idle over the GPU span", "Gaps between kernels by length (count)"],
    "job": ["GPU span per rank", *["Step time by part", "GPU time by category",
            "Total time of the top kernels", "Busy and idle over the GPU span",
            "Gaps between kernels by length (count)"] * 4],
    "diff": ["|Δ| kernel time of the top movers"],
    "trend": ["samples_per_second"],
}  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        with Browser() as opened:
            yield opened
    except Missing as missing:
        pytest.skip(f"no headless browser: {missing}")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The four pages, written by the CLI: one trace, a job's ranks, a diff, a metric's trend."""
    folder = tmp_path_factory.mktemp("pages")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "GPUSCOPE_DB": "",
           "XDG_DATA_HOME": str(folder / "data")}  # fmt: skip
    rows = [{"model": "toy", "performance": str(v), "metric": "samples_per_second",
             "git_commit": f"c0ffee{i}", "status": "SUCCESS"}
            for i, v in enumerate((100.0, 100.4, 99.7, 100.1, 96.2))]  # fmt: skip
    perfcsv.write(folder / "perf.csv", rows)
    commands = {
        "analysis": ["analyze", TRACE, "--html", "analysis.html", "-q"],
        "job": ["analyze", JOB, "--html", "job.html", "-q"],
        "diff": ["diff", BEFORE, AFTER, "--html", "diff.html", "-q"],
        "import": ["history", "import", "perf.csv"],
        "trend": ["history", "trend", "toy", "--metric", "samples_per_second", "--html",
                  "trend.html"],
    }  # fmt: skip
    for name, args in commands.items():
        argv = [sys.executable, "-m", "gpuscope", *map(str, args)]
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert done.returncode == 0, f"{name}: {done.stderr}"
    return {name: folder / f"{name}.html" for name in PAGES}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(PAGES))
def test_the_page_shows_every_section_and_figure(
    browser: Browser, pages: dict[str, Path], name: str, width: int
) -> None:
    page = browser.open(pages[name], width)
    layout = page.layout
    assert page.console_errors == []
    assert page.requests == [page.url], "offline: nothing loaded but the page"
    assert layout["scroll_width"] <= layout["width"], "the page itself never scrolls sideways"
    hidden = [s["title"] for s in layout["sections"] if not s["shows"]]
    assert layout["sections"] and not hidden, f"sections not shown: {hidden}"
    figures = layout["figures"]
    assert [f["title"] for f in figures] == PAGES[name]
    for i, figure in enumerate(figures):
        assert figure["shows"] and figure["svgs"] == 1, figure  # the drawing for this width
        assert figure["marks"][0] > 0 and figure["box"]["height"] > 40, figure
        box = {**figure["box"], "x": 0, "width": width}
        page.screenshot(pages[name].with_name(f"{name}-{width}-{i:02d}.png"), box)
