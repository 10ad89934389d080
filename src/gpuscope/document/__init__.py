"""The report model every renderer draws, at the bottom of the package: sections of facts,
tables, notes and charts (`model`), and one formatter per kind of quantity (`units`).

Analyses fill documents and never import a renderer; renderers (`gpuscope.report`: terminal,
Markdown, HTML) draw any document without knowing which analysis made it.
"""
