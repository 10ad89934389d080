"""Renderers: views of the analysis dict (schema `gpuscope.analysis/1`); they never compute.

- `gpuscope.report.markdown.render_markdown(reports) -> str` — GitHub-flavoured Markdown;
- `gpuscope.report.html.render_html(reports) -> str` — one self-contained, offline HTML page.

Both take a list of dicts (one per trace; several give a comparison table first) and lay out the
same document (`_build.document`), so they always show the same numbers.
"""
