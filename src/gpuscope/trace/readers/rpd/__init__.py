"""rocmProfileData traces: the `.rpd` SQLite database and its `rpd2tracing.py` JSON."""

from gpuscope.trace.readers.rpd.reader import RpdReader

__all__ = ["RpdReader"]
