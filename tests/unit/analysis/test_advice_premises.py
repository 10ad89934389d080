"""Every verdict and finding on every input gpuscope reads here (each reference output of every
format and the bundled recordings, enumerated as `test_every_report_encodes` does) is phrased
for the program that produced it: no PyTorch knobs for a JAX, C++, llama.cpp or Julia program,
no Python for a C++ one, no JAX for PyTorch. The words each kind must not see are listed below."""

from __future__ import annotations

import re

import pytest

from tests.unit.report.test_every_report_encodes import report, sources
from tests.unit.report.test_unclassified_share import _where

PYTORCH = r"torch|\.item\(\)|pin_memory|record_shapes|autocast|\bPyTorch\b|DataLoader"
JAX = r"\bjax\b|jax\.|XLA_FLAGS|lax\.|block_until_ready"
PYTHON = r"\bPython\b"
FOREIGN = {  # program kind -> words its actions must not hold
    "cuda-cpp": re.compile("|".join((PYTORCH, JAX, PYTHON, r"\bhip[A-Z]"))),
    "hip-cpp": re.compile("|".join((PYTORCH, JAX, PYTHON, r"\bcuda[A-Z]"))),
    "jax": re.compile(PYTORCH),
    "ggml": re.compile("|".join((PYTORCH, JAX))),
    "julia": re.compile("|".join((PYTORCH, JAX))),
    "pytorch": re.compile(JAX),
}


def test_no_action_contradicts_the_program_that_made_the_trace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    checked, wrong = 0, []
    for key in sources():
        result = report(key)
        if not result:
            continue
        kind = result["program"]["kind"]
        words = FOREIGN.get(kind)
        said = [("verdict", result["verdict"]["reason"])] + [
            (f["id"], f"{f.get('message') or ''} {f.get('action') or ''}")
            for f in result["findings"]
        ]
        for what, text in said if words else ():
            checked += 1
            found = words.search(text)  # type: ignore[union-attr]
            if found:
                at = max(0, found.start() - 60)
                wrong.append(f"{_where(key)} [{kind}] {what}: {found.group()!r} in "
                             f"…{text[at:found.end() + 60]!r}")  # fmt: skip
    with capsys.disabled():
        print(f"\n{checked} verdicts and findings checked against their program's kind")
    assert checked >= 10, "the enumeration found almost no findings"
    assert not wrong, f"{len(wrong)} actions speak to another kind of program:\n" + "\n".join(wrong)


HOST_CAUSES = ("launch-overhead", "host-work", "sync-overhead")
NATIVE = {"jax": re.compile(r"\bjit|jax\.|\blax\.|XLA")}  # words a host-side action must use


def test_host_side_actions_speak_the_programs_own_terms() -> None:
    """Not only no foreign words: a JAX program's host-side causes are told in JAX's terms."""
    checked, generic = 0, []
    for key in sources():
        result = report(key)
        words = NATIVE.get(result["program"]["kind"]) if result else None
        for f in result["findings"] if words else ():
            if f["id"] in HOST_CAUSES:
                checked += 1
                if not words.search(f["action"]):  # type: ignore[union-attr]
                    generic.append(f"{_where(key)} {f['id']}: {f['action'][:120]!r}")
    assert checked >= 2, "no JAX host-side cause found to check"
    assert not generic, "\n".join(generic)


GRAPHS = re.compile(r"CUDA graphs|HIP graphs|torch\.cuda\.graphs|reduce-overhead|Capture the step")
TRAINING = re.compile(r"gradient|\bDDP\b|optimizer|backward")


def _contradictions(result: dict[str, object]) -> list[str]:
    """What an action says that the trace's own evidence forbids."""
    found: list[str] = []
    program = result["program"]  # type: ignore[index]
    serving = any(str(t).startswith("serving:") for t in program["traits"])  # type: ignore[index]
    steps = result.get("steps") or {}
    phases = {p["name"] for p in steps.get("phases") or []}  # type: ignore[union-attr]
    inference = bool(steps) and "backward" not in phases
    attention = result["categories"]["attention"]["count"] > 0  # type: ignore[index]
    for f in result["findings"]:  # type: ignore[union-attr]
        action, evidence = f["action"], f.get("evidence") or {}
        if f["id"] == "host-work" and GRAPHS.search(action) and "already replay" not in action:
            found.append("graphs told for host work outside operators")
        if (
            f["id"] == "launch-overhead"
            and GRAPHS.search(action)
            and evidence.get("judged_steps")
            and evidence.get("syncs_per_step", 0) >= 2
            and result["breakdown"]["share"]["sync"] > 0  # type: ignore[index]
            and not action.startswith(("The step syncs", "Profile after warm-up"))
        ):
            found.append("graphs told for a step that syncs")  # fmt: skip
        if "QKV" in action and (serving or not attention):
            found.append("QKV fusion told where no attention runs or the server fuses it")
        if inference and TRAINING.search(action):
            found.append(f"training words for an inference trace: {TRAINING.search(action)}")
    return found


def test_no_action_contradicts_the_evidence_of_its_trace() -> None:
    """Each cause's action read against what the trace shows: no graphs for a syncing step or
    for host work, no QKV fusion without attention (or to a server, which fuses it already), no
    training words for a trace without backward."""
    checked, wrong = 0, []
    for key in sources():
        result = report(key)
        if not result:
            continue
        checked += 1
        wrong += [f"{_where(key)}: {w}" for w in _contradictions(result)]
    assert checked >= 10
    assert not wrong, "\n".join(wrong)


def test_every_step_breakdown_sums_to_its_time() -> None:
    """On every input with a timeline: each step's parts sum to its time (within 1 %), the
    judged shares to 1, and no bound exceeds its part's time on the path by more than the
    step's time allows."""
    checked = 0
    for key in sources():
        result = report(key)
        if not result or not result.get("breakdown"):
            continue
        part = result["breakdown"]
        for row in result["step_breakdown"]:
            total = sum(row[f"{p}_us"] for p in part["parts"])
            assert total == pytest.approx(row["wall_us"], rel=0.01, abs=0.01), (_where(key), row)
            checked += 1
        if part["wall_us"]:
            assert sum(part["share"].values()) == pytest.approx(1.0, abs=1e-4), _where(key)
        for name, at_most in part["at_most_us"].items():
            assert at_most <= part["wall_us"] + 0.01, (_where(key), name)
    assert checked >= 50
