"""The analysis dict (schema `gpuscope.analysis/1`) laid out as a document, once, for every
renderer: `analysis_document` (every section: what --md / --html write and --full prints) and
`summary_document` (the terminal's default: one screen of what matters most).

Only display choices live here: what to show, in which order, with which units. Every number is
read from the dict; nothing is recomputed.
"""

from __future__ import annotations

from gpuscope.analysis.layout._build import analysis_document, overview_document
from gpuscope.analysis.layout._evidence import evidence_blocks
from gpuscope.analysis.layout._sections import (
    SEVERITY_LEVEL,
    failed_section,
    finding_section,
    trace_section,
)
from gpuscope.analysis.layout._summary import ranked, summary_document
from gpuscope.analysis.layout._timeline import busy_strip

__all__ = [
    "SEVERITY_LEVEL",
    "analysis_document",
    "busy_strip",
    "evidence_blocks",
    "failed_section",
    "finding_section",
    "overview_document",
    "ranked",
    "summary_document",
    "trace_section",
]
