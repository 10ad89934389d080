"""Tests of the Markdown and HTML renderers (views of the analysis dict)."""
