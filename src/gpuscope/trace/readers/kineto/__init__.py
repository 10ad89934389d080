"""Kineto / Chrome-trace JSON written by torch.profiler (`.json`, `.json.gz`).

`text_us_to_ns` (a Chrome-trace µs value, as text, to exact ns) is shared with the rpd reader,
whose rpd2tracing JSON writes times the same way."""

from gpuscope.trace.readers.kineto._decode import text_us_to_ns
from gpuscope.trace.readers.kineto.reader import KinetoReader

__all__ = ["KinetoReader", "text_us_to_ns"]
