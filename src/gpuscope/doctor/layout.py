"""`gpuscope doctor`'s report as a document for every renderer: the host (vendor, driver,
runtime, GPUs, sampler backends), the tools that can run here (every tool with `show_all`, each
with what it found or what it needs), the environment's profiling traps and the device's limits.
"""

from __future__ import annotations

from gpuscope.doctor.diagnose import DoctorReport, Finding
from gpuscope.document.model import Block, Cell, Document, Facts, Note, Section, Table, Text


def doctor_document(report: DoctorReport, show_all: bool = False) -> Document:
    sections = [_host(report), _tools(report, show_all)]
    for title, findings in (("Traps", report.traps), ("Device", report.device)):
        if findings:
            sections.append(Section(title, tuple(_finding(f) for f in findings)))
    return Document("gpuscope doctor", tuple(sections), report.host.vendor or "no GPU found")


def _host(report: DoctorReport) -> Section:
    host = report.host
    items = [
        ("vendor", host.vendor or "none found"),
        ("driver", host.driver or "?"),
        ("runtime", host.runtime or "?"),
    ]
    items += [(f"GPU {g.index}", g.name + (f" ({g.arch})" if g.arch else "")) for g in host.gpus]
    backends = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in report.sampler_backends.items())
    items.append(("samplers", backends or "none"))
    return Section("Host", (Facts(tuple(items)),))


def _tools(report: DoctorReport, show_all: bool) -> Section:
    shown = [t for t in report.tools if t.ok or show_all]
    rows = tuple((Cell("ok" if t.ok else "no"), Cell(t.name), Cell(t.detail)) for t in shown)
    blocks: list[Block] = [Table(("", "tool", "found / needs"), rows)] if rows else []
    hidden = sum(not t.ok for t in report.tools)
    if hidden and not show_all:
        blocks.append(Text(f"{hidden} tools cannot run here; --all lists them with the reason"))
    if not blocks:
        blocks.append(Text("no tool can run here"))
    usable = sum(t.ok for t in report.tools)
    return Section(f"Tools ({usable} of {len(report.tools)} can run here)", tuple(blocks))


def _finding(finding: Finding) -> Block:
    return Note("warning", finding.message, f"→ {finding.action}")
