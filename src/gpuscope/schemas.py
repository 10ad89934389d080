"""The JSON Schemas (draft 2020-12) of the documents gpuscope writes, shipped in the package
(`gpuscope/data/schemas/`). Each document names its schema in its `schema` key.

    >>> from gpuscope import schemas
    >>> schemas.names()
    ['gpuscope.analysis-set/1', 'gpuscope.analysis/1', 'gpuscope.bench/1', ...]
    >>> schema = schemas.load("gpuscope.analysis/1")    # or load("analysis"): the newest version
    >>> jsonschema.validate(report, schema)             # doctest: +SKIP

A schema that refers to another (an analysis-set holds analyses and a ranks part) comes back
with them embedded under `$defs`, so it validates on its own. Only the standard library here.

The tags themselves are named once, below: every writer puts its constant in its `schema` key,
and every reader of gpuscope's documents (`history`) tells them apart by it.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from gpuscope.errors import InputError

ANALYSIS = "gpuscope.analysis/1"  # one trace analysed (`analyze --json`)
ANALYSIS_SET = "gpuscope.analysis-set/1"  # several traces, and the ranks of one job
RANKS = "gpuscope.ranks/1"  # the cross-rank part of an analysis set
DIFF = "gpuscope.diff/1"
COUNTERS = "gpuscope.counters/1"
BENCH = "gpuscope.bench/1"  # a measurement, or an A/B comparison
PROFILE = "gpuscope.profile/1"
LIBPERF = "gpuscope.libperf/1"
RUN = "gpuscope.run/1"  # a run's manifest.json
CHECK = "gpuscope.check/1"
DOCTOR = "gpuscope.doctor/1"
PERFETTO = "gpuscope.perfetto/1"  # the metadata of `export`'s timeline
HISTORY_LIST = "gpuscope.history-list/1"
HISTORY_RESULT = "gpuscope.history-result/1"

_FOLDER = "data/schemas"
_ID = "urn:gpuscope:schema:"  # + file name without .json: how one schema refers to another
_FILE = re.compile(r"(?P<kind>[a-z-]+)-(?P<version>\d+)\.json")


def names() -> list[str]:
    """The schema tags that have a schema, e.g. `gpuscope.analysis/1`."""
    return sorted(_files())


def load(name: str) -> dict[str, Any]:
    """The schema of `name`: a tag as documents carry it (`gpuscope.ranks/1`), or a kind alone
    (`ranks`, `gpuscope.ranks`) for its newest version."""
    schema = _read(_resolve(name))
    embedded: dict[str, Any] = {}
    _embed(schema, embedded)
    if embedded:
        schema.setdefault("$defs", {}).update(embedded)
    return schema


def _files() -> dict[str, str]:
    found = {}
    for entry in resources.files("gpuscope").joinpath(_FOLDER).iterdir():
        match = _FILE.fullmatch(entry.name)
        if match:
            found[f"gpuscope.{match['kind']}/{match['version']}"] = entry.name
    return found


def _resolve(name: str) -> str:
    files = _files()
    tag = name if name.startswith("gpuscope.") else f"gpuscope.{name}"
    if tag in files:
        return files[tag]
    versions = [t for t in files if t.rsplit("/", 1)[0] == tag]
    if "/" not in tag and versions:
        return files[max(versions, key=lambda t: int(t.rsplit("/", 1)[1]))]
    raise InputError(f"no schema named {name!r}; known: {', '.join(sorted(files))}")


def _read(filename: str) -> dict[str, Any]:
    text = resources.files("gpuscope").joinpath(f"{_FOLDER}/{filename}").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _embed(node: Any, embedded: dict[str, Any]) -> None:
    """Every schema referred to by id (`urn:gpuscope:schema:ranks-1`), and those it refers to,
    into `embedded` (by that name), once each."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_ID):
            name = ref[len(_ID) :].split("#")[0]
            if name not in embedded:
                embedded[name] = other = _read(f"{name}.json")
                _embed(other, embedded)
        for value in node.values():
            _embed(value, embedded)
    elif isinstance(node, list):
        for value in node:
            _embed(value, embedded)
