"""`gpuscope bench` end to end on the CPU path, as a subprocess (no GPU, no torch needed).

Timing values are never asserted: only structure, exit codes and messages. The one gate test
uses a B that does ~1000× the work of A, so its verdict does not depend on machine noise.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TARGETS = """
def small():
    return sum, (range(100),)


def small_again():
    return sum, (range(100),)


def much_slower():
    def same_sum_slowly(r):
        for _ in range(1000):
            total = sum(r)
        return total

    return same_sum_slowly, (range(100),)


def different():
    return sum, (range(101),)


def boom():
    def explode():
        raise ValueError("bad input shape")

    return explode
"""


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuscope", "bench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("error:")]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bench")
    (folder / "targets.py").write_text(TARGETS)
    return folder


def test_single_target_prints_a_table_and_writes_json(work: Path) -> None:
    done = _run(
        "targets.py:small", "--mode", "cpu", "--budget", "0.2", "--json", "m.json", cwd=work
    )
    assert done.returncode == 0, done.stderr
    assert "median" in done.stdout and "cpu-wallclock" in done.stdout
    obj = json.loads((work / "m.json").read_text())
    assert (obj["schema"], obj["kind"], obj["mode"]) == ("gpuscope.bench/1", "measurement", "cpu")
    assert obj["stats_us"]["n"] == len(obj["samples_us"]) >= 10
    assert obj["first_call_us"] > 0
    assert obj["stop_reason"] in ("ci", "budget", "max-samples")
    assert obj["warnings"][0].startswith("cpu-wallclock")


def test_state_option_reaches_the_measurement(work: Path) -> None:
    done = _run(
        "targets.py:small", "--mode", "cpu", "--budget", "0.1", "--state", "burst",
        "--sustain-budget", "3", "--json", "s.json", cwd=work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    obj = json.loads((work / "s.json").read_text())
    assert obj["options"]["state"] == "burst"
    assert obj["power"] is None  # the CPU has no power state


def test_compare_writes_a_verdict(work: Path) -> None:
    done = _run(
        "--compare",
        "targets.py:small",
        "targets.py:small_again",
        "--mode",
        "cpu",
        "--budget",
        "0.3",
        "--json",
        "c.json",
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    obj = json.loads((work / "c.json").read_text())
    assert (obj["schema"], obj["kind"]) == ("gpuscope.bench/1", "comparison")
    assert obj["verdict"] in ("SAME", "FASTER", "SLOWER", "INCONCLUSIVE")
    assert obj["correctness"]["ok"] is True
    assert obj["a"]["stats_us"]["n"] == obj["b"]["stats_us"]["n"]
    assert "verdict:" in done.stdout


def test_fail_if_slower_exits_1(work: Path) -> None:
    done = _run(
        "--compare",
        "targets.py:small",
        "targets.py:much_slower",
        "--mode",
        "cpu",
        "--budget",
        "0.5",
        "--fail-if-slower",
        "50",
        cwd=work,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert _error_lines(done) == [_error_lines(done)[0]]
    assert "slower than A" in done.stderr


def test_wrong_outputs_exit_1_before_timing(work: Path) -> None:
    done = _run("--compare", "targets.py:small", "targets.py:different", "--mode", "cpu", cwd=work)
    assert done.returncode == 1
    assert "does not match" in done.stderr
    assert "INCORRECT" in done.stdout


def test_baseline_round_trip_and_mismatch(work: Path) -> None:
    first = _run(
        "targets.py:small", "--mode", "cpu", "--budget", "0.2", "--json", "b.json", cwd=work
    )
    assert first.returncode == 0, first.stderr
    again = _run(
        "targets.py:small", "--mode", "cpu", "--budget", "0.2", "--baseline", "b.json", cwd=work
    )
    assert again.returncode == 0, again.stderr
    assert "verdict:" in again.stdout
    obj = json.loads((work / "b.json").read_text())
    obj["env"]["device"] = "some other machine"
    (work / "other.json").write_text(json.dumps(obj))
    refused = _run(
        "targets.py:small", "--mode", "cpu", "--budget", "0.2", "--baseline", "other.json", cwd=work
    )
    assert refused.returncode == 2
    assert "compare like with like" in refused.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.py:small"], "file missing.py not found"),
        (["targets.py:nope"], "has no function 'nope'"),
        (["targets.py"], "expected path/to/file.py:function"),
        (["targets.py:boom", "--mode", "cpu"], "raised ValueError: bad input shape"),
        ([], "give one target"),
        (["targets.py:small", "--fail-if-slower", "5"], "needs something to compare with"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(work: Path, args: list[str], message: str) -> None:
    done = _run(*args, cwd=work)
    assert done.returncode == 2
    lines = _error_lines(done)
    assert len(lines) == 1 and message in lines[0]
    assert "Traceback" not in done.stderr


def test_gpu_mode_without_a_gpu_is_a_clear_error(work: Path) -> None:
    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is present: the GPU tests cover this mode")
    except ImportError:
        pass
    done = _run("targets.py:small", "--mode", "hot", cwd=work)
    assert done.returncode == 2
    assert "use mode 'cpu'" in done.stderr
