"""`--csv DIR`, `--parquet DIR`, `--png DIR` on analyze, diff and counters (issue 21.3, 21.4),
through the real CLI: the files hold the JSON report's tables, a set's tables carry trace and
rank columns, figures are PNGs, and a folder that holds an input is refused before any work
(exit 2, nothing written, the inputs byte for byte as they were)."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "data" / "patterns_h200.json.gz"
OTHER = REPO / "tests" / "data" / "llama_compiled_h200.json.gz"
NCU = REPO / "tests" / "data" / "recorded" / "ncu_tiny_grid_h200_details.csv"


def gpuscope(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_analyze_writes_the_reports_tables_and_figures(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("matplotlib")
    done = gpuscope("analyze", TRACE, "-q", "--json", "r.json", "--csv", "csv", "--parquet", "pq",
                    "--png", "png", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    top = rows(tmp_path / "csv" / "top_kernels.csv")
    assert [r["name"] for r in top] == [k["name"] for k in report["top_kernels"]]
    assert [float(r["total_us"]) for r in top] == [k["total_us"] for k in report["top_kernels"]]
    everything = rows(tmp_path / "csv" / "kernels_by_name.csv")
    assert sum(int(r["count"]) for r in everything) == report["kernels"]["count"]
    import pyarrow.parquet as pq

    cats = pq.read_table(tmp_path / "pq" / "categories.parquet").to_pylist()
    assert {c["category"]: c["time_us"] for c in cats} == {
        n: c["time_us"] for n, c in report["categories"].items()
    }
    assert {p.name for p in (tmp_path / "png").iterdir()} == {
        "timeline.png", "breakdown.png", "gaps.png", "strip.png"}  # fmt: skip
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in (tmp_path / "png").iterdir())


def test_a_set_of_ranks_has_trace_and_rank_columns(tmp_path: Path) -> None:
    for rank in (0, 1):
        (tmp_path / "job" / f"rank{rank}").mkdir(parents=True)
        shutil.copy(TRACE, tmp_path / "job" / f"rank{rank}" / TRACE.name)
    done = gpuscope("analyze", "job", "-q", "--csv", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    top = rows(tmp_path / "out" / "top_kernels.csv")
    assert list(top[0])[:2] == ["trace", "rank"] and {r["rank"] for r in top} == {"0", "1"}
    assert len(rows(tmp_path / "out" / "ranks.per_rank.csv")) == 2


def test_diff_and_counters_write_their_tables(tmp_path: Path) -> None:
    done = gpuscope("diff", OTHER, TRACE, "-q", "--json", "d.json", "--csv", "diff", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "d.json").read_text())
    changes = rows(tmp_path / "diff" / "kernels.changes.csv")
    assert [r["key"] for r in changes] == [c["key"] for c in report["kernels"]["changes"]]
    pytest.importorskip("matplotlib")
    done = gpuscope("counters", NCU, "-q", "--csv", "c", "--png", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c" / "kernels.csv").is_file() and (
        tmp_path / "c" / "roofline.png"
    ).is_file()


@pytest.mark.parametrize("option", ["--csv", "--parquet", "--png"])
def test_a_folder_that_holds_an_input_is_refused(tmp_path: Path, option: str) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("matplotlib")
    trace = tmp_path / "in" / TRACE.name
    trace.parent.mkdir()
    shutil.copy(TRACE, trace)
    before = hashlib.sha256(trace.read_bytes()).hexdigest()
    for folder in ("in", "."):
        done = gpuscope("analyze", trace, option, folder, "--json", "r.json", cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.startswith(f"error: {option} ") and "holds the input" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # not even the JSON
    assert [p.name for p in trace.parent.iterdir()] == [TRACE.name]
    assert hashlib.sha256(trace.read_bytes()).hexdigest() == before
    (tmp_path / "file").write_text("x")
    done = gpuscope("analyze", trace, option, "file", cwd=tmp_path)
    assert done.returncode == 2 and "is a file (expected a folder)" in done.stderr
