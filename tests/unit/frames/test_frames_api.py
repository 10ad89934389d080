"""`gpuscope.load` / `gpuscope.analyze` as a notebook uses them (issue 21.1, 21.2, 21.4): the
tables in the three backends, a folder of ranks as one set, typed findings, a short repr, the
summary as self-contained HTML, figures; and importing gpuscope (or gpuscope.frames) does not
import pandas."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpuscope
from gpuscope.errors import InputError
from gpuscope.frames import TraceFrame, TraceSet
from gpuscope.frames.results import AnalysisResult, AnalysisSet, BenchResult, Finding

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
REPO = Path(__file__).resolve().parents[3]
TRACE = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
PATTERNS = REPO / "tests" / "data" / "patterns_h200.json.gz"
NCU = REPO / "tests" / "data" / "recorded" / "ncu_tiny_grid_h200_details.csv"


@pytest.fixture(scope="module")
def result() -> AnalysisResult:
    found = gpuscope.analyze(TRACE)
    assert isinstance(found, AnalysisResult)
    return found


def test_one_row_per_kernel_in_three_lines() -> None:
    t = gpuscope.load(TRACE)
    assert isinstance(t, TraceFrame)
    k = t.kernels()
    assert len(k) == 7160 and k["duration_ns"].dtype == "Int64"
    assert {"name", "category", "op", "grid_x", "registers", "start_ns", "end_ns"} <= set(k)
    assert (k["end_ns"] - k["start_ns"] == k["duration_ns"]).all()
    assert k["op"].notna().mean() > 0.9  # the launching operator of nearly every kernel
    assert k["stream"].notna().all() and k["scratch_bytes"].isna().all()  # absent is NA, not -1


@pytest.mark.parametrize("method", ["kernels", "copies", "api_calls", "ops", "markers", "counters"])
def test_backends_agree(method: str) -> None:
    t = gpuscope.load(TRACE)
    assert isinstance(t, TraceFrame)
    frames = {b: getattr(t, method)(backend=b) for b in ("pandas", "arrow")}
    assert frames["arrow"].num_rows == len(frames["pandas"])
    assert frames["arrow"].column_names == list(frames["pandas"].columns)
    if "duration_ns" in frames["pandas"]:
        assert (
            frames["arrow"]["duration_ns"].to_pandas().sum()
            == frames["pandas"]["duration_ns"].sum()
        )
    polars = pytest.importorskip("polars")
    df = getattr(t, method)(backend="polars")
    assert isinstance(df, polars.DataFrame) and df.height == len(frames["pandas"])
    with pytest.raises(InputError, match="backend 'spark'"):
        getattr(t, method)(backend="spark")


def test_ops_carry_their_input_shapes() -> None:
    t = gpuscope.load(PATTERNS)
    assert isinstance(t, TraceFrame)
    ops = t.ops()
    mm = ops[ops["name"] == "aten::mm"]
    assert len(mm) and mm["input_dims"].str.startswith("[[").all()


def test_a_folder_of_ranks_is_one_set(tmp_path: Path) -> None:
    for rank in (0, 1):
        (tmp_path / f"rank{rank}").mkdir()
        shutil.copy(PATTERNS, tmp_path / f"rank{rank}" / PATTERNS.name)
    job = gpuscope.load(tmp_path)
    assert isinstance(job, TraceSet) and len(job) == 2
    one = job[0].kernels()
    both = job.kernels()
    assert len(both) == 2 * len(one) and list(both.columns[:2]) == ["trace", "rank"]
    assert sorted(both["trace"].unique()) == [0, 1]
    assert job.kernels(backend="arrow").num_rows == len(both)
    analysed = gpuscope.analyze(tmp_path)
    assert isinstance(analysed, AnalysisSet)
    tables = analysed.tables()
    assert len(tables["top_kernels"]) == 2 * len(one.groupby("name").size().head(15))
    assert "ranks.per_rank" in tables and len(tables["ranks.per_rank"]) == 2
    assert "AnalysisSet of 2 traces" in repr(analysed)
    if pytest.importorskip("matplotlib"):
        figure = analysed.plot.ranks()
        assert figure.axes[0].get_title() == "GPU span per rank"
    assert "<script" not in analysed._repr_html_()


def test_tables_hold_the_report(result: AnalysisResult) -> None:
    report = result.to_dict()
    tables = result.tables()
    for name in ("top_kernels", "categories", "families", "findings", "integrity",
                 "gaps.histogram", "gaps.attribution", "devices", "kernels_by_name"):  # fmt: skip
        assert name in tables, name
    cats = tables["categories"].set_index("category")
    for name, entry in report["categories"].items():
        assert cats.loc[name, "time_us"] == entry["time_us"]
    assert list(tables["findings"]["id"]) == [f["id"] for f in report["findings"]]
    assert tables["gaps.histogram"]["count"].sum() == report["gaps"]["count"]
    assert set(result.tables("arrow")) == set(tables)
    with pytest.raises(KeyError, match="no table 'nope'; this report has: "):
        result.table("nope")


def test_findings_are_objects(result: AnalysisResult) -> None:
    findings = result.findings
    assert findings and all(isinstance(f, Finding) for f in findings)
    first, raw = findings[0], result.to_dict()["findings"][0]
    assert (first.id, first.severity, first.action) == (raw["id"], raw["severity"], raw["action"])
    assert str(first).startswith(f"[{first.severity}] {first.id}: ")


def test_repr_is_one_line_and_html_self_contained(result: AnalysisResult) -> None:
    text = repr(result)
    assert "\n" not in text and len(text) < 300 and "7,160 kernels" in text
    assert len(repr(result.analysis)) < 300  # the plain Analysis too (it printed 159,566)
    html = result._repr_html_()
    assert html.startswith('<div class="gpuscope-report"><style>')
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert "<link" not in html and "@import" not in html
    assert ".gpuscope-report h2" in html and "\nbody" not in html  # styles stay in the cell
    assert "cpu-bound" in html


def test_bench_result_shows_its_samples() -> None:
    m = gpuscope.bench(lambda: sum(range(100)), budget_s=0.05, min_samples=5)
    shown = BenchResult(m)
    assert "median" in repr(shown) and "\n" not in repr(shown)
    samples = shown.tables()["samples"]
    assert len(samples) == len(m.samples_us) and samples["us_per_call"].tolist() == list(
        m.samples_us
    )
    assert "median" in shown._repr_html_()


def test_plots_are_figures(result: AnalysisResult, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from gpuscope.frames.plot import save_all

    for name in result.plot.names():
        assert isinstance(getattr(result.plot, name)(), Figure)
    written = save_all(result.plot, tmp_path, "llama-")
    assert [p.name for p in written] == [
        "llama-timeline.png",
        "llama-breakdown.png",
        "llama-gaps.png",
        "llama-strip.png",
    ]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)


def test_counters_roofline_and_tables() -> None:
    pytest.importorskip("matplotlib")
    c = gpuscope.analyze_counters(NCU)
    # saxpy on 1 and on 1,056 blocks: two launch configurations
    assert "kernels" in c.tables() and len(c.tables()["kernels"]) == 2
    assert c.plot.roofline() is not None and "CountersResult" in repr(c)
    assert "<script" not in c._repr_html_()


def test_diff_profiles_of_paths_and_results(result: AnalysisResult) -> None:
    d = gpuscope.diff_profiles(result, PATTERNS)
    assert "kernels.changes" in d.tables() and d.to_dict()["schema"] == "gpuscope.diff/1"
    assert "DiffResult" in repr(d) and "<script" not in d._repr_html_()


def test_importing_gpuscope_imports_no_dataframe_library(tmp_path: Path) -> None:
    probe = (
        "import json, sys\nimport gpuscope, gpuscope.frames\n"
        "print(json.dumps([m for m in ('pandas', 'pyarrow', 'polars', 'matplotlib', 'IPython')"
        " if m in sys.modules]))\n"
    )
    env = {"PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
