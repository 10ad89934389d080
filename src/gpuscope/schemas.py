"""The JSON Schemas (draft 2020-12) of the documents gpuscope writes, shipped in the package
(`gpuscope/data/schemas/`). Each document names its schema in its `schema` key.

    >>> from gpuscope import schemas
    >>> schemas.names()
    ['gpuscope.analysis-set/1', 'gpuscope.analysis/1', 'gpuscope.check/1', 'gpuscope.diff/1', …]
    >>> schema = schemas.load("gpuscope.analysis/1")    # or load("analysis"): the newest version
    >>> jsonschema.validate(report, schema)             # doctest: +SKIP

A schema that refers to another (an analysis-set holds analyses and a ranks part) comes back
with them embedded under `$defs`, so it validates on its own. Only the standard library here.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from gpuscope.errors import InputError

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
