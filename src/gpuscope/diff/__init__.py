"""Before / after: two analysed profiles compared (`gpuscope diff BEFORE AFTER`).

    >>> import gpuscope
    >>> from gpuscope.diff import diff
    >>> before, after = gpuscope.analyze("a.gz"), gpuscope.analyze("b.gz")  # doctest: +SKIP
    >>> report = diff(before, after).to_dict()  # doctest: +SKIP

`names` makes kernel names comparable, `kernels` matches the kernels of both sides, `significance`
holds Welch's t-test, `compare` builds the `Diff`, `summary` and `verdict` derive the rest, and
`serialize` writes the dict of schema `gpuscope.diff/1` (docs/diff.md).
"""

from __future__ import annotations

from gpuscope.diff.compare import Diff, diff
from gpuscope.schemas import DIFF as SCHEMA

__all__ = ["SCHEMA", "Diff", "diff"]
