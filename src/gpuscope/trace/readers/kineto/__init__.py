"""Kineto / Chrome-trace JSON written by torch.profiler (`.json`, `.json.gz`)."""

from gpuscope.trace.readers.kineto.reader import KinetoReader

__all__ = ["KinetoReader"]
