"""Nsight Compute `ncu --csv` output: the raw page and the details page."""

from gpuscope.trace.readers.ncu.reader import NcuReader

__all__ = ["NcuReader"]
