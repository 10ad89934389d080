"""Views of a diff dict (schema `gpuscope.diff/1`): terminal, Markdown and self-contained HTML.

    >>> from gpuscope.report.diff import render_diff_markdown
    >>> comment = render_diff_markdown(d.to_dict())  # doctest: +SKIP

The sections are laid out once (`_diff_sections.diff_document`) and drawn by the same block
renderers as `gpuscope analyze`'s views: rich for the terminal, GitHub-flavoured Markdown (the
short form, for a pull-request comment), HTML with inline styles and SVG (no scripts, offline).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup
from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from gpuscope.report import html as html_view
from gpuscope.report import markdown as markdown_view
from gpuscope.report._diff_sections import SCHEMA, diff_document, title
from gpuscope.report._rich import section as rich_section
from gpuscope.report._style import CSS

PAGE = Markup(
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    "<title>{title}</title>\n<style>{css}</style>\n</head>\n<body>\n"
    "<header><h1>gpuscope diff</h1><p>{subtitle}</p></header>\n"
    "<main>\n{body}\n</main>\n</body>\n</html>\n"
)


def render_diff_terminal(report: Mapping[str, Any], console: Console) -> None:
    sections = diff_document(report)
    parts = [rich_section(s, console.width) for s in sections]
    head = Text(f"gpuscope diff  ·  {title(report)}")
    console.print(Panel(Group(*parts), title=head, title_align="left", border_style="blue"))


def render_diff_markdown(report: Mapping[str, Any]) -> str:
    """The short form, fit for a pull-request comment: verdict, headline numbers, top movers."""
    sections = diff_document(report, brief=True)
    lines = [f"## gpuscope diff: {markdown_view.text(title(report))}", ""]
    for section in sections:
        lines += markdown_view._section(section, depth=3)
    lines += [f"<sub>schema {SCHEMA} · gpuscope {report.get('gpuscope_version', '?')}</sub>", ""]
    return "\n".join(lines).rstrip() + "\n"


def render_diff_html(report: Mapping[str, Any]) -> str:
    """The whole diff as one self-contained page."""
    sections = diff_document(report)
    body = Markup("\n").join(html_view._section(s, depth=2) for s in sections)
    page = PAGE.format(
        title=f"gpuscope diff — {title(report)}",
        css=Markup(CSS),
        subtitle=f"{title(report)} · schema {SCHEMA}",
        body=body,
    )
    return str(page)
