"""`%load_ext gpuscope` in an IPython shell (issue 21.2): `%%gpuscope_profile` profiles the cell
in the user's namespace (the stand-in torch of tests/unit/capture) and shows the report,
`%gpuscope_bench` times an expression, and the plain result types display as their reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuscope.frames.results import BenchResult, ProfileView
from tests.unit.capture.test_profile import fake_torch  # noqa: F401 - the fixture

IPython = pytest.importorskip("IPython")
pytest.importorskip("pandas")


@pytest.fixture
def shell() -> Any:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gpuscope")
    return ip


def test_profile_magic_profiles_the_cell(shell: Any, fake_torch: Any, tmp_path: Path) -> None:  # noqa: F811
    shell.user_ns["step"] = __import__("tests.unit.capture.test_profile", fromlist=["step"]).step
    out = tmp_path / "prof"
    shown = shell.run_cell_magic(
        "gpuscope_profile", f"--iterations 4 --warmup 1 --out {out}", "step()\n"
    )
    assert isinstance(shown, ProfileView)
    assert shown.analysis.to_dict()["kernels"]["count"] == 4
    assert repr(shown).startswith("<ProfileView cell: first call ")
    html = shown._repr_html_()
    assert "profile of cell" in html and "gpuscope-report" in html and "<script" not in html
    assert "top_kernels" in shown.tables() and (out / "trace.json.gz").is_file()


def test_profile_magic_refuses_unknown_options(shell: Any) -> None:
    from gpuscope.errors import InputError

    with pytest.raises(InputError, match="unknown options --nope"):
        shell.run_cell_magic("gpuscope_profile", "--nope", "pass\n")


def test_bench_magic_times_an_expression(shell: Any) -> None:
    shell.user_ns["n"] = 1000
    shown = shell.run_line_magic("gpuscope_bench", "--budget 0.05 sum(range(n))")
    assert isinstance(shown, BenchResult)
    assert shown.result.name == "sum(range(n))" and shown.result.mode == "cpu"
    assert "median" in shown._repr_html_()


def test_plain_results_display_as_reports(shell: Any) -> None:
    import gpuscope
    from gpuscope.analysis.pipeline import analyze_file

    analysis = analyze_file(
        Path(gpuscope.__file__).parent / "data" / "examples" / "llama_decode_h200.json.gz"
    )
    data, _ = shell.display_formatter.format(analysis)
    assert data["text/html"].startswith('<div class="gpuscope-report">')
    assert data["text/plain"].startswith("<AnalysisResult ") and len(data["text/plain"]) < 300
    measurement = gpuscope.bench(lambda: None, budget_s=0.02, min_samples=3)
    data, _ = shell.display_formatter.format(measurement)
    assert "median" in data["text/html"] and data["text/plain"].startswith("<BenchResult ")
