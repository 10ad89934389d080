"""DataFrames and Jupyter views of gpuscope's results (the `gpuscope[notebook]` extra).

    >>> import gpuscope
    >>> t = gpuscope.load("trace.json.gz")            # doctest: +SKIP
    >>> t.kernels()                                    # one row per kernel dispatch
    >>> a = gpuscope.analyze("trace.json.gz")          # doctest: +SKIP
    >>> a.tables()["top_kernels"], a.findings[0].action, a.plot.timeline()

This package sits above the trace model and the analyses (layer 4) and wraps their results:
`TraceFrame` a `Trace`, `AnalysisResult` an `Analysis`, and so on. The lower layers know
nothing of DataFrames, notebooks or plots. pandas, pyarrow, polars and matplotlib are imported
only when a table or a figure is asked for: importing this package costs numpy and the model.
"""

from __future__ import annotations

from gpuscope.frames.load import TraceSet, load
from gpuscope.frames.trace import TraceFrame

__all__ = ["TraceFrame", "TraceSet", "load"]
