"""Exports of traces to other tools' formats: a Chrome / Perfetto JSON timeline (`perfetto`)."""

from __future__ import annotations

from gpuscope.export.perfetto import ExportResult, export_perfetto, input_files

__all__ = ["ExportResult", "export_perfetto", "input_files"]
