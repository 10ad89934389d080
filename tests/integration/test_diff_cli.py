"""`gpuscope diff` through the real CLI (a subprocess): real pairs, every output, bad input."""

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
HTA = ("hta__trace_compare_base.json.gz", "hta__trace_compare_test.json.gz")
BERT = ("tl__h100_bert-small_inference.json.gz", "tl__mi300x_bert-small_inference.json.gz")


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160", "PYTHONIOENCODING": "utf-8"}
    argv = [sys.executable, "-m", "gpuscope", "diff", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def pair(names: tuple[str, str]) -> tuple[Path, Path]:
    paths = tuple(TRACES / n for n in names)
    for path in paths:
        if not path.exists():
            pytest.skip(f"reference trace {path.name} not found under {TRACES.resolve()}")
    return paths[0], paths[1]


def test_every_output_of_a_real_pair(tmp_path: Path) -> None:
    before, after = pair(HTA)
    result = run(
        before, after, "--json", "d.json", "--md", "d.md", "--html", "d.html", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "gpuscope diff" in result.stdout and "Top movers" in result.stdout
    report = json.loads((tmp_path / "d.json").read_text())
    assert report["schema"] == "gpuscope.diff/1"
    assert report["before"]["path"] == str(before) and report["after"]["path"] == str(after)
    assert (tmp_path / "d.md").read_text().startswith("## gpuscope diff")
    assert "</html>" in (tmp_path / "d.html").read_text()


def test_cross_vendor_pair_quiet_json(tmp_path: Path) -> None:
    before, after = pair(BERT)
    result = run(before, after, "-q", "--json", "d.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    report = json.loads((tmp_path / "d.json").read_text())
    assert report["kernels"]["matches"]["shape"] >= 4
    assert report["caveats"][0]["id"] == "cross-vendor"


def test_dash_sends_one_output_to_stdout_alone(tmp_path: Path) -> None:
    before, after = pair(HTA)
    result = run(before, after, "--json", "-", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["schema"] == "gpuscope.diff/1"  # no terminal report in it
    assert not (tmp_path / "-").exists()
    both = run(before, after, "--md", "-", "--html", "-", cwd=tmp_path)
    assert both.returncode == 2 and "--md and --html both name standard output" in both.stderr


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_bad_inputs_are_one_error_line(tmp_path: Path) -> None:
    before, _ = pair(HTA)
    line = one_error_line(run(before, tmp_path / "missing.json", cwd=tmp_path))
    assert "missing.json" in line and "no such file" in line

    text = tmp_path / "notes.txt"
    text.write_text("not a trace\n")
    assert "notes.txt" in one_error_line(run(text, before, cwd=tmp_path))

    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for name in ("hta__a100_sampled_rank-0.json.gz", "hta__a100_sampled_rank-1.json.gz"):
        if not (TRACES / name).exists():
            pytest.skip(f"reference trace {name} not found")
        shutil.copy(TRACES / name, ranks / name)
    assert "holds 2 traces" in one_error_line(run(ranks, before, cwd=tmp_path))


def test_unwritable_output_is_one_error_line(tmp_path: Path) -> None:
    before, after = pair(HTA)
    (tmp_path / "file").write_text("")
    line = one_error_line(
        run(before, after, "-q", "--json", tmp_path / "file" / "d.json", cwd=tmp_path)
    )
    assert "cannot write" in line
