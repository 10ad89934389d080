"""Traces: the columnar `Trace` model and the readers that build it."""

from gpuscope.trace.model import Trace
from gpuscope.trace.registry import read_trace, register

__all__ = ["Trace", "read_trace", "register"]
