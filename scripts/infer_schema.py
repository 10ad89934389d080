"""Draft a JSON Schema (draft 2020-12) from sample documents of one kind: the starting point of
a schema in src/gpuscope/data/schemas/, reviewed by hand before it is shipped.

    python scripts/infer_schema.py --tag gpuscope.counters/1 samples/*.json > draft.json

Every key seen becomes a property with the union of the types seen (an integer only where every
value was one); a key present in every sample is required; the top level refuses keys it does
not list (a new field is a schema change); objects below it accept more keys than the samples
had; objects keyed by names (kernel names, metric ids) — more than `--keyed` keys, or keys that
vary between samples — become `additionalProperties` of their merged value. A key only ever
seen null gets no type (it holds a value where the samples had none).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null",
          list: "array", dict: "object"}  # fmt: skip


def infer(values: list[Any], keyed: int, top: bool = False) -> dict[str, Any]:
    types = sorted({_TYPES[type(v)] for v in values})
    if types == ["null"]:
        return {}  # never seen with a value: no constraint (not "always null")
    if "integer" in types and "number" in types:
        types.remove("integer")
    schema: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    objects = [v for v in values if isinstance(v, dict)]
    arrays = [v for v in values if isinstance(v, list)]
    if objects:
        schema.update(_object(objects, keyed, top))
    if arrays:
        items = [item for array in arrays for item in array]
        if items:
            schema["items"] = infer(items, keyed)
    return schema


def _object(objects: list[dict[str, Any]], keyed: int, top: bool) -> dict[str, Any]:
    keys = sorted({k for o in objects for k in o})
    common = set.intersection(*(set(o) for o in objects))
    if not top and (len(keys) > keyed or (len(objects) > 1 and len(common) < len(keys) / 2)):
        values = [v for o in objects for v in o.values()]
        return {"additionalProperties": infer(values, keyed)} if values else {}
    result: dict[str, Any] = {
        "properties": {k: infer([o[k] for o in objects if k in o], keyed) for k in keys},
        "required": sorted(common),
    }
    if top:
        result["additionalProperties"] = False
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("samples", nargs="+", type=Path)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--keyed", type=int, default=40)
    args = parser.parse_args()
    docs = [json.loads(p.read_text()) for p in args.samples]
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "$id": f"urn:gpuscope:schema:{args.tag.split('.', 1)[1].replace('/', '-')}",
              "title": args.tag, "description": "", **infer(docs, args.keyed, top=True)}  # fmt: skip
    schema["properties"]["schema"] = {"const": args.tag}
    json.dump(schema, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
