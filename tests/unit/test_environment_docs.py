"""docs/environment.md lists every `GPUSCOPE_*` variable the code names (issue 21.5), and no
variable the code no longer has."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VARIABLE = re.compile(r"GPUSCOPE_[A-Z][A-Z_]*[A-Z]")


def test_every_variable_is_documented() -> None:
    in_code = {m for p in (REPO / "src").rglob("*.py") for m in VARIABLE.findall(p.read_text())}
    documented = set(VARIABLE.findall((REPO / "docs" / "environment.md").read_text()))
    in_code.discard("GPUSCOPE_TORCH")  # the prefix of the options, in a docstring
    assert len(in_code) >= 27
    assert not in_code - documented, f"not in docs/environment.md: {sorted(in_code - documented)}"
    assert not documented - in_code, f"documented, not in the code: {sorted(documented - in_code)}"
