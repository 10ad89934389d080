"""`gpuscope analyze` through the real CLI (a subprocess) on damaged and unusual inputs.

Every damaged input is made in `tmp_path` from a recorded trace: the example bundled with the
package, or (when that is absent) a recorded reference trace read in place.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / ".." / "shared" / "reference" / "traces"
BUNDLED = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
CPU_ONLY = TRACES / "hta__cpu_only_gloo_rank34.json.gz"
# (trace, share of the decompressed bytes kept when cutting it: some kernels lie before it)
SOURCES = ((BUNDLED, 0.6), (TRACES / "patterns_h200.json.gz", 0.75))
HEAVY = ("torch", "polars", "plotly", "matplotlib", "numpy", "pandas", "msgspec")


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"}
    argv = [sys.executable, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def analyze_json(trace: Path, tmp: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp / f"{trace.name}.analysis.json"
    result = run("analyze", trace, "--json", out, cwd=tmp)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    data: dict[str, Any] = json.loads(out.read_text())
    return result, data


@pytest.fixture(scope="module")
def source() -> tuple[Path, float]:
    for path, cut in SOURCES:
        if path.is_file():
            return path, cut
    pytest.skip(f"no recorded trace: neither {BUNDLED} nor the reference traces in {TRACES}")


@pytest.fixture(scope="module")
def clean(source: tuple[Path, float], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The analysis of the undamaged trace, to compare damaged ones with."""
    _, data = analyze_json(source[0], tmp_path_factory.mktemp("clean"))
    return data


@pytest.fixture(scope="module")
def text(source: tuple[Path, float]) -> bytes:
    return gzip.decompress(source[0].read_bytes())


# -- the contract of --json -------------------------------------------------------------------


def test_json_has_the_documented_schema(clean: dict[str, Any]) -> None:
    assert clean["schema"] == "gpuscope.analysis/1"
    for key in ("source", "kernels", "memcpy", "categories", "gemm_share", "gpu_busy_us"):
        assert key in clean
    for key in ("span_us", "idle_us", "launch", "sync", "top_kernels", "integrity", "findings"):
        assert key in clean
    assert clean["kernels"]["count"] > 0
    assert clean["kernels"]["time_us"] > 0


# -- truncated files ---------------------------------------------------------------------------


def _cut_json(text: bytes, cut: float, folder: Path) -> Path:
    path = folder / "cut.json"
    path.write_bytes(text[: int(len(text) * cut)])
    return path


def _cut_regzipped(text: bytes, cut: float, folder: Path) -> Path:
    path = folder / "cut.json.gz"
    path.write_bytes(gzip.compress(text[: int(len(text) * cut)], mtime=0))
    return path


def _cut_gzip_stream(source: Path, cut: float, folder: Path) -> Path:
    """The compressed stream itself ends early (no gzip trailer), as when the writer died."""
    data = source.read_bytes()
    path = folder / "stream_cut.json.gz"
    path.write_bytes(data[: int(len(data) * cut)])
    return path


def test_dash_writes_the_report_to_stdout_alone(
    source: tuple[Path, float], clean: dict[str, Any], tmp_path: Path
) -> None:
    done = run("analyze", source[0], "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == clean and not (tmp_path / "-").exists()
    markdown = run("analyze", source[0], "--md", "-", cwd=tmp_path)
    assert markdown.stdout.startswith("#") and "╭" not in markdown.stdout
    both = run("analyze", source[0], "--json", "-", "--md", "-", cwd=tmp_path)
    assert both.returncode == 2 and both.stdout == ""
    assert both.stderr.strip().splitlines() == [
        "error: --json and --md both name standard output: only one can go there"
    ]


def test_same_trace_same_report_whatever_the_hash_seed(
    source: tuple[Path, float], tmp_path: Path
) -> None:
    """Name indices must not follow set iteration order: with them went the order of tied
    rows (two attention shapes of one time swapped places from run to run)."""
    reports = []
    for seed in ("1", "2", "3"):
        out = tmp_path / f"seed{seed}.json"
        argv = [sys.executable, "-m", "gpuscope", "analyze", str(source[0]), "--json", str(out),
                "-q"]  # fmt: skip
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(argv, capture_output=True, env=env, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        reports.append(out.read_bytes())
    assert reports[0] == reports[1] == reports[2]


@pytest.mark.parametrize("make", ["json", "regzipped", "gzip_stream"])
def test_truncated_file_is_analysed_up_to_the_cut(
    make: str,
    source: tuple[Path, float],
    text: bytes,
    clean: dict[str, Any],
    tmp_path: Path,
) -> None:
    path, cut = source
    if make == "json":
        damaged = _cut_json(text, cut, tmp_path)
    elif make == "regzipped":
        damaged = _cut_regzipped(text, cut, tmp_path)
    else:
        damaged = _cut_gzip_stream(path, cut, tmp_path)
    result, data = analyze_json(damaged, tmp_path)
    assert "truncated" in result.stderr.lower(), result.stderr
    assert 0 < data["kernels"]["count"] < clean["kernels"]["count"]


# -- bad bytes inside strings ------------------------------------------------------------------

_KERNEL_NAME = re.compile(rb'"cat": "kernel", "name": "')
DAMAGE = {
    "control_characters": b"\x01\x07\x1b[0m\x7f",
    "invalid_utf8": b"\xff\xfe\xc3(\xed\xa0\x80",
}
# the warning for the junk in two names: \x01 \x07 \x1b (DEL is no JSON control character);
# \xff, \xfe, \xc3 before "(", and each byte of the encoded surrogate \xed\xa0\x80
REPAIRED = {
    "control_characters": "6 control characters replaced by spaces",
    "invalid_utf8": "12 invalid UTF-8 sequences replaced by U+FFFD",
}


def _damage_kernel_names(text: bytes, junk: bytes) -> bytes:
    """Insert `junk` just inside the first and the last kernel names."""
    starts = [m.end() for m in _KERNEL_NAME.finditer(text)]
    assert starts, "the source trace has no kernel events in the expected layout"
    out = bytearray(text)
    for position in sorted({starts[0], starts[-1]}, reverse=True):
        out[position + 2 : position + 2] = junk
    return bytes(out)


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_bad_bytes_in_kernel_names_are_tolerated(
    kind: str, text: bytes, clean: dict[str, Any], tmp_path: Path
) -> None:
    damaged = tmp_path / f"{kind}.json"
    damaged.write_bytes(_damage_kernel_names(text, DAMAGE[kind]))
    result, data = analyze_json(damaged, tmp_path)
    assert data["kernels"]["count"] == clean["kernels"]["count"]
    assert data["gpu_busy_us"] == clean["gpu_busy_us"]
    assert REPAIRED[kind] in result.stderr and "truncated" not in result.stderr, result.stderr


# -- inputs that are not traces: exit 2 and one error line -------------------------------------


def _not_a_trace(kind: str, folder: Path) -> Path:
    path = folder / {"directory": "a_folder"}.get(kind, f"{kind}.json")
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(random.Random(0).randbytes(4096))
    elif kind == "text":
        path = folder / "notes.txt"
        path.write_text("These are my notes about the model.\nNothing to see here.\n")
    elif kind == "not_a_trace":
        path.write_text('{"a": 1}')
    elif kind == "directory":
        path.mkdir()
    return path  # "missing": never created


@pytest.mark.parametrize(
    "kind", ["empty", "garbage", "text", "not_a_trace", "directory", "missing"]
)
def test_bad_input_gives_one_error_line(kind: str, tmp_path: Path) -> None:
    path = _not_a_trace(kind, tmp_path)
    result = run("analyze", path, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert str(path) in lines[0] or path.name in lines[0], lines[0]


# -- unusual but valid traces ------------------------------------------------------------------


def test_cpu_only_trace_has_no_kernels_and_says_so(tmp_path: Path) -> None:
    if not CPU_ONLY.is_file():
        pytest.skip(f"{CPU_ONLY} not found (sibling shared/ checkout absent)")
    _, data = analyze_json(CPU_ONLY, tmp_path)
    assert data["kernels"]["count"] == 0
    assert data["integrity"], "a trace without GPU events must carry an integrity flag"
    assert re.search(r"gpu|kernel|device", json.dumps(data["integrity"]), re.IGNORECASE)


def test_several_traces_give_one_report_each_and_a_combined_table(
    source: tuple[Path, float], tmp_path: Path
) -> None:
    names = ("first_trace.json.gz", "second_trace.json.gz")
    for name in names:
        (tmp_path / name).write_bytes(source[0].read_bytes())
    result = run("analyze", *names, "--json", "both.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for name in names:
        stem = name.removesuffix(".json.gz")
        # once in its own report, once in the combined table
        assert result.stdout.count(stem) >= 2, result.stdout[-3000:]
    reports = json.loads((tmp_path / "both.json").read_text())["reports"]
    assert [r["schema"] for r in reports] == ["gpuscope.analysis/1"] * len(names)


# -- start-up stays light ----------------------------------------------------------------------

_HELP_PROBE = """
import json, sys
from gpuscope.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["analyze", "--help"], ["run", "--tools", "nope", "--", "true"]],
    ids=["top", "analyze", "run-dispatch"],  # the last passes through main() before the command
)
def test_help_imports_no_heavy_module(argv: list[str], tmp_path: Path) -> None:
    probe = _HELP_PROBE.format(argv=argv, heavy=HEAVY)
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
