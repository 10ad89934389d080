"""The notebook API where HTA's users come from (issue 27.5): options that are checked, the
diff's verdict in its repr, docstring examples that run, every kernel name of every rank, per-rank
tables as plain columns, and figures that neither stack overlapping time nor hide data under a
legend. Numbers are checked against the raw events (tests/rawkineto.py) or the JSON report."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest

import gpuscope
from gpuscope.errors import ConfigError
from gpuscope.frames.results import AnalysisResult, AnalysisSet
from tests import rawkineto as raw

pd = pytest.importorskip("pandas")
REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data"
PATTERNS = DATA / "patterns_h200.json.gz"
COMPILED = DATA / "llama_compiled_h200.json.gz"
DECODE = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
DDP = DATA / "recorded" / "ddp_late_host_h200"  # 2 ranks: rank 1 late on the host
DDP4 = DATA / "recorded" / "ddp4_rank2_computes_more_h200"  # 4 ranks: rank 2 computes more
NCU = DATA / "recorded" / "ncu_tiny_grid_h200_details.csv"


@pytest.fixture(scope="module")
def job() -> AnalysisSet:
    found = gpuscope.analyze(DDP4, workers=1)
    assert isinstance(found, AnalysisSet)
    return found


def rank_files(folder: Path) -> dict[int, Path]:
    return {int(p.name[4:]): next(p.rglob("*.json.gz")) for p in sorted(folder.glob("rank*"))}


# -- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: gpuscope.analyze(PATTERNS, engin="ray"),
        lambda: gpuscope.analyze(PATTERNS, categorie="x.json"),
        lambda: gpuscope.load(PATTERNS, backend="polars"),
        lambda: gpuscope.diff_profiles(PATTERNS, PATTERNS, verbose=True),
        lambda: gpuscope.analyze_counters(NCU, archh="sm_90"),
        lambda: gpuscope.bench(lambda: None, budget=1.0),
        lambda: gpuscope.compare(lambda: 1, lambda: 1, thresold=0.1),
    ],
    ids=["analyze", "analyze", "load", "diff_profiles", "analyze_counters", "bench", "compare"],
)
def test_an_unknown_option_is_a_type_error_naming_it(call: Any) -> None:
    with pytest.raises(TypeError, match=r"engin|categorie|backend|verbose|archh|budget|thresold"):
        call()


def test_bench_options_stay_config_errors_for_the_cli() -> None:
    with pytest.raises(ConfigError, match=r"unknown bench option.*budget; valid: budget_s"):
        gpuscope.bench(lambda: None, budget=1.0)


def test_engine_and_top() -> None:
    with pytest.raises(ConfigError, match=r"analyze\(engine='spark'\): expected one of local"):
        gpuscope.analyze(PATTERNS, engine="spark")
    one = gpuscope.analyze(PATTERNS, engine="dask", top=3)  # one trace: analysed here
    assert isinstance(one, AnalysisResult) and len(one.table("top_kernels")) == 3
    both = gpuscope.analyze(DDP, workers=1, top=2)
    assert isinstance(both, AnalysisSet)
    assert both.table("top_kernels").groupby("rank").size().tolist() == [2, 2]
    parameters = inspect.signature(gpuscope.analyze).parameters
    assert {"categories", "top", "progress", "engine", "workers"} <= set(parameters)


# -- the diff ------------------------------------------------------------------------------------


def test_the_diff_repr_says_its_verdict() -> None:
    d = gpuscope.diff_profiles(PATTERNS, DECODE)
    verdict = d.to_dict()["verdict"]
    text = repr(d)
    assert "\n" not in text and len(text) < 300
    change = f"{verdict['change']:+.1%}"
    assert text.startswith(f"<DiffResult: {verdict['direction']} {change} ({verdict['measure']} ")
    assert f"{verdict['before_us'] / 1000:.3g} → {verdict['after_us'] / 1000:.3g} ms" in text
    assert "noise unknown" in text and verdict["significance"]["significant"] is None
    bound = verdict["bound"]
    assert f"{bound['before']['bound']} → {bound['after']['bound']}" in text
    assert f"{len(d.diff.kernels)} kernels matched" in text


def examples(text: str) -> list[tuple[str, str, str]]:
    """(variable, function, table) for each `x = gpuscope.f(...)` then `x.tables()["t"]` or
    `x.table("t")` in `text`."""
    made = dict(re.findall(r"\b(\w+) = gpuscope\.(\w+)\(", text))
    used = re.findall(r"\b(\w+)\.(?:tables\(\)\[|table\()\"([\w.]+)\"", text)
    return [(v, made[v], name) for v, name in used if v in made]


def test_every_table_an_example_names_is_there() -> None:
    """The docstrings of gpuscope's functions and docs/notebooks.md name tables that the result
    has (`d.tables()["kernels"]` raised a KeyError)."""
    texts = [inspect.getdoc(getattr(gpuscope, f)) or "" for f in gpuscope.__all__]
    texts.append((REPO / "docs" / "notebooks.md").read_text())
    made = {"analyze": lambda: gpuscope.analyze(DECODE),
            "diff_profiles": lambda: gpuscope.diff_profiles(COMPILED, PATTERNS),
            "analyze_counters": lambda: gpuscope.analyze_counters(NCU)}  # fmt: skip
    found = [e for text in texts for e in examples(text)]
    assert ("d", "diff_profiles", "kernels.changes") in found
    for function in {f for _, f, _ in found}:
        names = made[function]().table_names()
        for _, _, name in (e for e in found if e[1] == function):
            assert name in names, (function, name)


# -- sets of ranks -------------------------------------------------------------------------------


def test_kernels_by_name_on_a_set_is_every_name_of_every_rank(job: AnalysisSet) -> None:
    table = job.table("kernels_by_name")
    assert list(table.columns[:2]) == ["trace", "rank"]
    for rank, path in rank_files(DDP4).items():
        mine = table[table["rank"] == rank].set_index("name")
        kernels = [e for e in raw.events(path) if e.get("cat") == "kernel" and e.get("ph") == "X"]
        expected: dict[str, list[int]] = {}
        for e in kernels:
            expected.setdefault(e["name"], []).append(raw.ns(e["dur"]))
        assert set(mine.index) == set(expected)
        for name, durations in expected.items():
            assert mine.loc[name, "count"] == len(durations)
            assert mine.loc[name, "total_us"] == round(sum(durations) / 1000, 3)
        assert mine["share"].sum() == pytest.approx(1.0, abs=1e-4)
        assert len(mine) > len(job.reports[0]["top_kernels"])  # more than the top 15


def plain(value: Any) -> bool:
    if isinstance(value, (list, dict, tuple)):
        return False
    return not (isinstance(value, str) and value[:1] in ("[", "{"))


def test_per_rank_tables_are_plain_columns(job: AnalysisSet) -> None:
    tables = job.tables()
    for name, table in tables.items():
        kept = [c for c in table.columns if c != "evidence"]  # a finding's numbers, as JSON
        for column in kept:
            assert table[column].map(plain).all(), (name, column)
    ranks = job.ranks
    assert ranks is not None
    steps = ranks["steps"]
    long = tables["ranks.steps.per_rank"]
    assert len(long) == len(steps["per_rank"]) * len(steps["names"])
    for entry in steps["per_rank"]:
        for i, step in enumerate(steps["names"]):
            row = long[(long["rank"] == entry["rank"]) & (long["step"] == step)].iloc[0]
            for key, values in entry.items():
                if isinstance(values, list):
                    assert row[key] == values[i], (entry["rank"], step, key)
    per_step = tables["ranks.steps"]
    assert per_step["step"].tolist() == steps["names"]
    assert per_step["most_compute_rank"].tolist() == steps["most_compute_rank"]
    devices = tables["ranks.per_rank"]["devices"]
    assert devices.tolist() == [", ".join(r["devices"]) for r in ranks["per_rank"]]


# -- figures -------------------------------------------------------------------------------------


def drawn(figure: Any) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def test_the_ranks_plot_cuts_each_span_into_parts_that_add_up(job: AnalysisSet) -> None:
    """Per rank: compute alone, communication overlapped with compute, exposed communication
    and idle, from the raw events; stacked, they reach the rank's span and no higher (compute
    and communication stacked whole made a 139 ms bar of a 126.7 ms span)."""
    pytest.importorskip("matplotlib")
    figure = job.plot.ranks()
    axes = figure.axes[0]
    bars = {c.get_label(): [p.get_height() for p in c] for c in axes.containers}
    assert list(bars) == ["compute only", "communication overlapped with compute",
                          "exposed communication", "idle"]  # fmt: skip
    labels = [t.get_text() for t in axes.get_xticklabels()]
    for rank, path in rank_files(DDP4).items():
        ops = raw.gpu_ops(path)
        busy = raw.union(ops)
        comm, compute = raw.union(raw.nccl(path)), raw.union(raw.compute_kernels(path))
        exposed = raw.length(raw.minus(comm, compute))
        span = busy[-1][1] - busy[0][0]
        expected = [raw.length(busy) - raw.length(comm), raw.length(comm) - exposed, exposed,
                    span - raw.length(busy)]  # fmt: skip
        i = labels.index(f"rank {rank}")
        heights = [bars[label][i] for label in bars]
        assert heights == pytest.approx([ns / 1e6 for ns in expected], abs=2e-3)
        assert sum(heights) == pytest.approx(span / 1e6, abs=2e-3)
        old = (raw.length(compute) + raw.length(comm) + span - raw.length(busy)) / 1e6
        assert old > sum(heights) + 0.0005  # what the old bars drew: more than the span


@pytest.mark.parametrize("which", ["timeline", "ranks"])
def test_no_legend_lies_over_the_data(which: str, job: AnalysisSet) -> None:
    """Legends sit right of their axes, inside the figure (the timeline's hid its last 10 ms)."""
    pytest.importorskip("matplotlib")
    figure = gpuscope.analyze(DECODE).plot.timeline() if which == "timeline" else job.plot.ranks()
    renderer = drawn(figure)
    legends = [(ax, ax.get_legend()) for ax in figure.axes if ax.get_legend() is not None]
    assert legends
    for ax, legend in legends:
        box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert not box.overlaps(area) and box.x0 >= area.x1, which
        assert figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1 + 1, which
        assert figure.bbox.y0 <= box.y0 and box.y1 <= figure.bbox.y1 + 1, which
