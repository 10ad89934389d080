"""Renderers: draw any `gpuscope.document.model.Document`; they never compute and never know
which analysis made the document.

- `gpuscope.report.registry` — renderers by name (`render("html", doc)`), gpuscope's own and a
  third party's registered alike through the `gpuscope.renderers` entry points;
- `gpuscope.report.terminal.render(doc) -> str` — rich, for a terminal (80 columns and up);
- `gpuscope.report.markdown.render(doc) -> str` — GitHub-flavoured Markdown;
- `gpuscope.report.html.render(doc) -> str` — one self-contained, offline HTML page;
- `gpuscope.report.figures` — the document's figures as matplotlib figures and PNGs.
"""
