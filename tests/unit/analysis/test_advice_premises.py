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
