"""Traces: the columnar `Trace` model and the readers that build it."""

from gpuscope.trace._copies import copy_kind
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace._sniff import forget as forget_heads
from gpuscope.trace.model import Trace
from gpuscope.trace.registry import read_trace, register

__all__ = ["Progress", "Trace", "copy_kind", "forget_heads", "read_trace", "register"]
