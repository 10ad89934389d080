"""The three renderers over the documents the commands draw, as the tests call them: an
analysis dict (or several) or a diff dict in, text out."""

from __future__ import annotations

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


def render_terminal(reports: Reports, console: Console, lead: Sequence[Section] = ()) -> None:
    """What `gpuscope analyze --full` prints."""
    terminal.render(analysis_document(reports, lead), console)


def render_diff_markdown(report: Mapping[str, Any]) -> str:
    """What `gpuscope diff --md` writes (the brief form)."""
    return markdown.render(diff_document(report, brief=True), depth=2)


def render_diff_html(report: Mapping[str, Any]) -> str:
    return html.render(diff_document(report))


def render_diff_terminal(report: Mapping[str, Any], console: Console) -> None:
    terminal.render(diff_document(report), console)
