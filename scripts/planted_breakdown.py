"""The nine planted programs (tests/data/recorded/planted/): gpuscope's step-time breakdown of
their steady steps beside the one recomputed from the raw events by tests/rawstates.py, as the
Markdown table in docs/analyze.md ("Checked against"), with each program's verdict and top cause.

    python scripts/planted_breakdown.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import gpuscope  # noqa: E402
from gpuscope.analysis.layout._summary import ranked  # noqa: E402
from tests.rawstates import PARTS, breakdown  # noqa: E402

PLANTED = HERE.parent / "tests" / "data" / "recorded" / "planted"
SHOWN = ("compute", "copies", "launch", "host_work", "sync", "copy_staging", "startup", "queued")


def main() -> None:
    shown = " · ".join(SHOWN)
    print(f"| program | verdict | top cause | per step: {shown} (ms, gpuscope / raw) |")
    print("|---|---|---|---|")
    for path in sorted(PLANTED.glob("planted_*_h200.json.gz")):
        name = path.name[len("planted_") : -len("_h200.json.gz")]
        report = gpuscope.analyze(str(path)).to_dict()
        warm = report["breakdown"]["warmup_steps"]
        rows = report["step_breakdown"][warm:]
        raw = breakdown(path)[warm:]
        cells = []
        for part in SHOWN:
            mine = sum(r[f"{part}_us"] for r in rows) / len(rows) / 1000
            theirs = sum(p[part] for _, p in raw) / len(raw) / 1e6
            cells.append(f"{mine:.3f} / {theirs:.3f}")
        wall = sum(r["wall_us"] for r in rows) / len(rows) / 1000
        raw_wall = sum(sum(p[k] for k in PARTS) for _, p in raw) / len(raw) / 1e6
        top = ranked(report["findings"])[0]["id"] if report["findings"] else "—"
        verdict = f"{report['verdict']['bound']} ({report['verdict']['cause']})"
        print(f"| {name} (step {wall:.2f} / {raw_wall:.2f} ms) | {verdict} | {top} | "
              + " · ".join(cells) + " |")  # fmt: skip


if __name__ == "__main__":
    main()
