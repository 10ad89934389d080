"""Every ceiling a rate is held against, in one place: the datasheet peaks of
`gpuscope/data/peaks.json` (read once), the peaks `gpuscope bench` measured on this machine (its
cache), and `PeakTable`, which picks between them per precision, labelled by where each comes from.

    >>> from gpuscope.peaks import peaks_for
    >>> peaks_for(trace.meta.devices[0]).bandwidth        # bytes/s            # doctest: +SKIP
    3350000000000.0
"""

from gpuscope.peaks.datasheet import KIND as DATASHEET
from gpuscope.peaks.datasheet import DeviceLike, Peaks, multiprocessors, named, peaks_for, table
from gpuscope.peaks.measured import KIND as MEASURED
from gpuscope.peaks.measured import Measured, cache_dir, cached, measured_for, read_cache
from gpuscope.peaks.peak_table import Ceiling, PeakTable

__all__ = [
    "DATASHEET",
    "MEASURED",
    "Ceiling",
    "DeviceLike",
    "Measured",
    "PeakTable",
    "Peaks",
    "cache_dir",
    "cached",
    "measured_for",
    "multiprocessors",
    "named",
    "peaks_for",
    "read_cache",
    "table",
]
