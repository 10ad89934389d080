"""Write the JSON Schemas that follow from gpuscope's own types (tests/unit/test_schemas.py
checks the shipped files still match):

- `gpuscope.bench/1`: `Measurement` (`gpuscope bench --json`) or `Comparison` (`--compare`),
  msgspec Structs, whose schema msgspec derives;
- `gpuscope.run/1`: the run manifest (`<run-dir>/manifest.json`), a dataclass.

    python scripts/make_schemas.py          # rewrites data/schemas/{bench,run}-1.json
    python scripts/make_schemas.py --check    # exit 1 when a shipped file differs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parents[1] / "src" / "gpuscope" / "data" / "schemas"


def _wrapped(tag: str, description: str, body: dict[str, Any]) -> dict[str, Any]:
    defs = body.pop("$defs", {})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:gpuscope:schema:{tag.split('.', 1)[1].replace('/', '-')}",
        "title": tag,
        "description": description,
        "type": "object",
        "properties": {"schema": {"const": tag}},
        "required": ["schema"],
        **body,
        "$defs": defs,
    }


def bench() -> dict[str, Any]:
    import msgspec

    from gpuscope.timing.ab import Comparison
    from gpuscope.timing.measurement import Measurement

    (measurement, comparison), defs = msgspec.json.schema_components([Measurement, Comparison])
    return _wrapped(
        "gpuscope.bench/1",
        "A benchmark: `gpuscope bench --json` / `gpuscope.bench(...)` (a Measurement: raw "
        "per-call samples in µs, the spec and the environment; statistics are derived) or an A/B "
        "test, `--compare` / `gpuscope.compare(...)` (a Comparison of two Measurements). "
        "docs/bench.md.",
        {"anyOf": [measurement, comparison], "$defs": defs},
    )


def _any(kind: Any) -> dict[str, Any]:
    """`object` values (a file's details in the manifest): any JSON value."""
    return {"description": "any JSON value"}


def run() -> dict[str, Any]:
    import msgspec

    from gpuscope.run.manifest import Manifest

    _, defs = msgspec.json.schema_components([Manifest], schema_hook=_any)
    body = defs.pop("Manifest")
    body["properties"].pop("schema")  # the const of _wrapped
    return _wrapped(
        "gpuscope.run/1",
        "One `gpuscope run`: `<output-dir>/<run-id>/manifest.json` — the command, the tools "
        "stacked around it, environment changes, start and end, exit code or signal, files "
        "produced, ranks and hosts. Written at the start (status running) and rewritten at the "
        "end. docs/run.md.",
        {
            **{k: v for k, v in body.items() if k not in ("title", "type", "required")},
            "properties": {"schema": {"const": "gpuscope.run/1"}, **body["properties"]},
            "required": ["schema", *body["required"]],
            "additionalProperties": False,
            "$defs": defs,
        },
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = []
    for name, make in (("bench-1.json", bench), ("run-1.json", run)):
        text = json.dumps(make(), indent=1, ensure_ascii=False) + "\n"
        path = FOLDER / name
        if args.check:
            if not path.is_file() or path.read_text("utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, "utf-8")
    if stale:
        print(f"stale: {', '.join(stale)} (python scripts/make_schemas.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
