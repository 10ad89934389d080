"""`gpuscope analyze` with the ranks of one job, through the real CLI: the cross-rank report in
every output (JSON key `ranks`, the first Markdown / HTML section, the terminal), ranks told by
the trace (distributedInfo) or by `rank<R>/` folders, and an engine that is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / ".." / "shared" / "reference" / "traces"
PAIR = [TRACES / f"hta__a100_sampled_rank-{r}.json.gz" for r in (0, 1)]
PREFILL = TRACES / "llama_prefill_h200.json.gz"


def need(*paths: Path) -> None:
    for path in paths:
        if not path.is_file():
            pytest.skip(f"reference trace not found: {path.resolve()}")


def gpuscope(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "200", **(env or {})}
    argv = [sys.executable, "-m", "gpuscope", "analyze", *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_two_ranks_of_one_job_get_the_cross_rank_report_everywhere(tmp_path: Path) -> None:
    need(*PAIR)
    done = gpuscope(tmp_path, *map(str, PAIR), "--json", "out.json", "--md", "out.md",
                    "--html", "out.html", "--workers", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["schema"] == "gpuscope.analysis-set/1" and len(data["reports"]) == 2
    ranks = data["ranks"]
    assert ranks["schema"] == "gpuscope.ranks/1"
    assert (ranks["world_size"], ranks["ranks_analysed"]) == (128, 2)
    assert [r["rank"] for r in ranks["per_rank"]] == [0, 1]
    ids = [f["id"] for f in ranks["findings"]]
    assert "rank-straggler" in ids and "ranks-partial" in ids
    markdown = (tmp_path / "out.md").read_text()
    assert markdown.index("Across ranks (2 of 128 ranks)") < markdown.index("All 2 traces")
    assert "Across ranks (2 of 128 ranks)" in (tmp_path / "out.html").read_text()
    assert "Across ranks" in done.stdout and "rank-straggler" in done.stdout


def test_ranks_are_told_by_their_folders_when_the_traces_do_not_say(tmp_path: Path) -> None:
    need(PREFILL)
    for rank in (0, 1):
        (tmp_path / "run" / f"rank{rank}").mkdir(parents=True)
        shutil.copy(PREFILL, tmp_path / "run" / f"rank{rank}" / "trace.json.gz")
    done = gpuscope(tmp_path, "run", "--json", "out.json", "-q")
    assert done.returncode == 0, done.stderr
    ranks = json.loads((tmp_path / "out.json").read_text())["ranks"]
    assert [r["rank"] for r in ranks["per_rank"]] == [0, 1]
    unaligned = next(f for f in ranks["findings"] if f["id"] == "ranks-unaligned")
    assert unaligned["evidence"]["without_collectives"] == [0, 1]


def test_the_same_rank_twice_is_a_comparison_not_a_job(tmp_path: Path) -> None:
    need(*PAIR)
    shutil.copy(PAIR[0], tmp_path / "before.json.gz")
    shutil.copy(PAIR[0], tmp_path / "after.json.gz")
    done = gpuscope(tmp_path, "before.json.gz", "after.json.gz", "--json", "out.json", "-q")
    assert done.returncode == 0, done.stderr
    assert "ranks" not in json.loads((tmp_path / "out.json").read_text())


def test_a_missing_engine_is_one_error_line(tmp_path: Path) -> None:
    need(*PAIR)
    hidden = tmp_path / "hide" / "ray"  # a `ray` first on the path that fails to import
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    env = {"PYTHONPATH": f"{tmp_path / 'hide'}{os.pathsep}{REPO / 'src'}"}
    done = gpuscope(tmp_path, *map(str, PAIR), "--engine", "ray", env=env)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --engine ray needs ray"), lines
    assert "pip install 'gpuscope[ray]'" in lines[0]


def test_json_of_a_job_whose_collectives_carry_their_sizes(tmp_path: Path) -> None:
    """`analyze RUN_DIR --json` crashed on the run directory of a real 2-GPU DDP job (numpy
    floats in the cross-rank bandwidth; the terminal report worked): the real A100 pair as a
    2-rank job, its record_param_comms given the sizes PyTorch >= 2.1 records
    (benchmarks/make_rank_traces.py --comm-elems). The JSON validates against its schema."""
    need(*PAIR)
    jsonschema = pytest.importorskip("jsonschema")
    make = [sys.executable, str(REPO / "benchmarks" / "make_rank_traces.py"), "2",
            "--comm-elems", str(1 << 20), "--out", str(tmp_path / "run")]  # fmt: skip
    subprocess.run(make, check=True, capture_output=True, timeout=120)
    done = gpuscope(tmp_path, "run", "--json", "out.json", "--md", "out.md", "-q")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["ranks"]["bandwidth"], "no bandwidth row: not the case that crashed"
    from gpuscope.schemas import load

    jsonschema.validate(data, load(data["schema"]))
    assert "Across ranks" in (tmp_path / "out.md").read_text()
