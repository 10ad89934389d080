"""Performance over time: results of workloads kept in a database, and the regression gate.

Layer 5 (orchestration, side effects). `store.Store` keeps `model.Result`s in SQLite (default,
one file under the user's data directory) or PostgreSQL (`postgresql://…`, the `postgres` extra),
through the one SQL module `sql.py`, with versioned migrations (`schema.py`). `context.py` says
where a result came from (commit, host, GPU, software), `metrics.py` turns gpuscope's reports
into metrics, `check.py` compares the latest result with its history under a stated noise
model, `trend.py` draws a metric over time, `transfer.py` exports and imports.

    >>> from gpuscope.history import Store, check
    >>> with Store.open("sqlite:////tmp/history.db") as store:       # doctest: +SKIP
    ...     outcome = check.check(store, "resnet50")
    >>> outcome.regressions                                          # doctest: +SKIP

The command line: `--record` on run / analyze / bench / libperf / counters, `gpuscope history`
and `gpuscope check` (docs/history.md).
"""

from __future__ import annotations

from gpuscope.history.model import HIGHER, LOWER, Context, Metric, Result
from gpuscope.history.store import Store

__all__ = ["HIGHER", "LOWER", "Context", "Metric", "Result", "Store"]
