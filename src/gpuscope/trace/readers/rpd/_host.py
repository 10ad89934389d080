"""Host rows of an `.rpd` database: `rocpd_api` holds HIP / HSA / CUDA API calls, ROCTX / NVTX
user ranges and marks (`UserMarker`, the message in `args`), user ranges pushed through
`rpd_rangePush` and the tracer's own overhead records; each becomes a host call, a user range,
or is counted and left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.trace import _sql
from gpuscope.trace._builder import TraceParts
from gpuscope.trace.model import ANNOTATION, I64
from gpuscope.trace.readers.rpd import _vocab as vocab

_API = ("id", "tid", '"start"', '"end"', "apiName_id", "args_id")


@dataclass
class Api:
    """rocpd_api columns and the text of its names (domain -1 in schema 2)."""

    id: I64
    tid: I64
    start: I64
    end: I64
    name: I64
    args: I64
    domain_id: I64
    text: dict[int, str]
    kinds: I64 = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def name_set(self) -> set[str]:
        return {self.text.get(int(i), "") for i in _sql.factorize(self.name)[0]}


def read_api(tables: Any) -> Api:
    has_domain = "domain_id" in _sql.columns(tables.db, "rocpd_api")
    exprs = (*_API, "domain_id" if has_domain else "-1")
    ids, tid, start, end, name, args, domain = tables.ints("rocpd_api", exprs, "rocpd_api")
    text = tables.text(name, domain)
    api = Api(ids, tid, start, end, name, args, domain, text)
    api.kinds = _kinds(api)
    return api


def _kinds(api: Api) -> I64:
    """Domain (or MARK / OVERHEAD) per row, decided once per distinct (name, domain, id space)."""
    names, name_at = _sql.factorize(api.name)
    domains, domain_at = _sql.factorize(api.domain_id)
    space = ((api.id & vocab.ANNOTATION_ID_BIT) != 0).astype(np.int64)
    keys = (name_at * len(domains) + domain_at) * 2 + space
    text = api.text

    def decide(key: int) -> int:
        pair, in_space = divmod(key, 2)
        name, domain = divmod(pair, len(domains))
        return vocab.api_domain(
            text.get(int(names[name]), ""),
            text.get(int(domains[domain]), ""),
            in_space * vocab.ANNOTATION_ID_BIT,
        )

    return _sql.per_id(keys, decide)


def add_api(tables: Any, parts: TraceParts, api: Api) -> None:
    host = api.kinds >= 0
    parts.add(
        "host",
        int(host.sum()),
        name=_sql.intern_ids(parts, api.name[host], api.text),
        start=api.start[host],
        dur=(api.end - api.start)[host],
        tid=api.tid[host],
        correlation=api.id[host],
        domain=api.kinds[host].astype(np.int8),
    )
    _add_ranges(tables, parts, api, api.kinds == vocab.MARK)
    tables.counts["tracer_overhead"] = int((api.kinds == vocab.OVERHEAD).sum())


def _add_ranges(tables: Any, parts: TraceParts, api: Api, marks: Any) -> None:
    """User ranges and marks: named by their message (`UserMarker`), else by their API name."""
    names, args = api.name[marks], api.args[marks]
    table = "rocpd_ustring" if "rocpd_ustring" in tables.names else "rocpd_string"
    messages = tables.text(args, table=table) if table != "rocpd_string" else tables.text(args)
    labels = [
        (messages.get(int(a), "") or vocab.USER_MARKER)
        if api.text.get(int(n), "") == vocab.USER_MARKER
        else api.text.get(int(n), "")
        for n, a in zip(names, args, strict=True)
    ]
    size = len(labels)
    parts.add(
        "ops",
        size,
        kind=np.full(size, ANNOTATION, np.int8),
        name=parts.intern(labels),
        start=api.start[marks],
        dur=(api.end - api.start)[marks],
        tid=api.tid[marks],
    )
    tables.counts["user_marker"] = size
