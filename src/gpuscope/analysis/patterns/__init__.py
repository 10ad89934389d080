"""Known slow patterns (fused optimizers, norms, channels-last, FP32 matmuls, all-reduce staging),
each detected from evidence in the trace with the time it costs (`analysis.py` lists them).

The package offers the extra-analysis interface (`NAME`, `analyse`, `to_dict`, `findings`,
`section`; see `analysis.extras`); `rules.py` holds the detectors, `context.py` what they read.
"""

from gpuscope.analysis.patterns.analysis import (
    NAME,
    Detected,
    Result,
    analyse,
    findings,
    section,
    to_dict,
)

__all__ = ["NAME", "Detected", "Result", "analyse", "findings", "section", "to_dict"]
