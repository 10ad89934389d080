"""Communication analysis: exposed collective time, per-collective statistics and bandwidth,
variance of identical calls (`analysis.py` says what it finds and how).

The package offers the extra-analysis interface (`NAME`, `analyse`, `to_dict`, `findings`,
`section`; see `analysis.extras`) and the collective vocabulary that `ranks/` and `libperf/`
share with it: `KINDS`, `bus_factor` (nccl-tests factors), `label`, `subtract` (intervals).
"""

from gpuscope.analysis.communication.analysis import NAME, analyse
from gpuscope.analysis.communication.exposure import subtract
from gpuscope.analysis.communication.model import Communication
from gpuscope.analysis.communication.names import KINDS, bus_factor
from gpuscope.analysis.communication.rules import EXPOSED_INFO, EXPOSED_WARNING, findings, label
from gpuscope.analysis.communication.serialize import to_dict
from gpuscope.analysis.communication.views import section

__all__ = [
    "EXPOSED_INFO",
    "EXPOSED_WARNING",
    "KINDS",
    "NAME",
    "Communication",
    "analyse",
    "bus_factor",
    "findings",
    "label",
    "section",
    "subtract",
    "to_dict",
]
