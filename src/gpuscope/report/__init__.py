"""Renderers: draw any `gpuscope.document.model.Document`; they never compute and never know
which analysis made the document.

- `gpuscope.report.terminal.render(doc, console)` — rich, for a terminal (80 columns and up);
- `gpuscope.report.markdown.render(doc) -> str` — GitHub-flavoured Markdown;
- `gpuscope.report.html.render(doc) -> str` — one self-contained, offline HTML page.
"""
