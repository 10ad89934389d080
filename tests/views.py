"""The three renderers over the documents the commands draw, as the tests call them: an
analysis dict (or several) or a diff dict in, text out."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

from gpuscope.analysis.layout import analysis_document
from gpuscope.diff.layout import diff_document
from gpuscope.document.model import Section
from gpuscope.report import html, markdown, terminal

Reports = Sequence[Mapping[str, Any]]


def render_markdown(reports: Reports, lead: Sequence[Section] = ()) -> str:
    return markdown.render(analysis_document(reports, lead))


def render_html(reports: Reports, lead: Sequence[Section] = ()) -> str:
    return html.render(analysis_document(reports, lead))


def render_terminal(reports: Reports, width: int = 80, lead: Sequence[Section] = ()) -> str:
    """What `gpuscope analyze --full` prints on a terminal `width` columns wide."""
    return terminal.render(analysis_document(reports, lead), console=_console(width))


def render_diff_markdown(report: Mapping[str, Any]) -> str:
    """What `gpuscope diff --md` writes (the brief form)."""
    return markdown.render(diff_document(report, brief=True), depth=2)


def render_diff_html(report: Mapping[str, Any]) -> str:
    return html.render(diff_document(report))


def render_diff_terminal(report: Mapping[str, Any], width: int = 80) -> str:
    return terminal.render(diff_document(report), console=_console(width))


def _console(width: int) -> Console:
    """A console as a pipe has it: plain text, `width` columns."""
    return Console(file=io.StringIO(), width=width, highlight=False)
