"""Write the JSON Schemas that follow from gpuscope's own types (tests/unit/test_schemas.py
checks the shipped files still match):

- `gpuscope.bench/1`: `Measurement` (`gpuscope bench --json`) or `Comparison` (`--compare`),
  msgspec Structs, whose schema msgspec derives;
- `gpuscope.run/1`: the run manifest (`<run-dir>/manifest.json`), a dataclass;
- `gpuscope.doctor/1`: `gpuscope doctor --json`, a `DoctorReport` (dataclasses).

msgspec releases differ in what they derive (0.23 dedents docstrings, gives the default of a
`default_factory` field and lists the members of `X | None` in the annotation's order; 0.18 did
none of these), so what it derives is normalised here: descriptions dedented
(`inspect.cleandoc`), every field's `default` taken from the type itself, last in its property,
the members of every `anyOf` in one order (null last). The files are then the same whichever
msgspec made them (the test suite checks them under the lock's msgspec and the oldest).

    python scripts/make_schemas.py          # rewrites data/schemas/{bench,run,doctor}-1.json
    python scripts/make_schemas.py --check    # exit 1 when a shipped file differs
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Callable, Iterator
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


def components(
    types: list[type], hook: Callable[[type], dict[str, Any]] | None = None
) -> tuple[tuple[dict[str, Any], ...], dict[str, Any]]:
    """msgspec's `schema_components` of `types`, normalised (see the module's docstring)."""
    import msgspec

    if hook is None:
        refs, defs = msgspec.json.schema_components(types)
    else:
        refs, defs = msgspec.json.schema_components(types, schema_hook=hook)
    classes = {cls.__name__: cls for cls in _classes(types)}
    for name, schema in defs.items():
        if isinstance(schema.get("description"), str):
            schema["description"] = inspect.cleandoc(schema["description"])
        if name in classes and "properties" in schema:
            _set_defaults(classes[name], schema["properties"])
    _order_any_of([refs, defs])
    return refs, defs


def _order_any_of(node: Any) -> None:
    """The members of every `anyOf` in one order (they are alternatives): by their JSON text,
    null last."""
    if isinstance(node, dict):
        if isinstance(node.get("anyOf"), list):
            node["anyOf"].sort(key=lambda m: (m == {"type": "null"}, json.dumps(m, sort_keys=True)))
        for value in node.values():
            _order_any_of(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            _order_any_of(value)


def _classes(types: list[type]) -> Iterator[type]:
    """Every Struct and dataclass that `types` are made of."""
    import msgspec.inspect as mi

    seen: set[int] = set()
    stack: list[Any] = list(mi.multi_type_info(types))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, (mi.StructType, mi.DataclassType)):
            yield node.cls
        if isinstance(node, (mi.Type, mi.Field)):
            stack += [getattr(node, f) for f in node.__struct_fields__]
        elif isinstance(node, tuple):
            stack += node


def _set_defaults(cls: type, properties: dict[str, Any]) -> None:
    """Each property's `default` from the field itself (a factory's value too), last."""
    import msgspec
    import msgspec.inspect as mi

    info = mi.type_info(cls)
    for field in info.fields:  # type: ignore[attr-defined]
        prop = properties.get(field.encode_name)
        if prop is None:
            continue
        prop.pop("default", None)
        if field.default is not msgspec.NODEFAULT:
            prop["default"] = msgspec.to_builtins(field.default)
        elif field.default_factory is not msgspec.NODEFAULT:
            prop["default"] = msgspec.to_builtins(field.default_factory())


def bench() -> dict[str, Any]:
    from gpuscope.timing.ab import Comparison
    from gpuscope.timing.measurement import Measurement

    (measurement, comparison), defs = components([Measurement, Comparison])
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
    from gpuscope.run.manifest import Manifest

    _, defs = components([Manifest], hook=_any)
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


def doctor() -> dict[str, Any]:
    from gpuscope.doctor.diagnose import DoctorReport

    _, defs = components([DoctorReport])
    body = defs.pop("DoctorReport")
    for schema in (body, *defs.values()):  # `to_dict` (asdict) writes every field
        schema["required"] = list(schema["properties"])
        schema["additionalProperties"] = False
    return _wrapped(
        "gpuscope.doctor/1",
        "`gpuscope doctor --json`: this machine's GPUs, driver and runtime (`host`), whether "
        "each tool of the catalog can run here and what it needs (`tools`), environment "
        "variables and settings that distort profiles (`traps`), what the device supports "
        "(`device`) and which sampler backends are present. docs/run.md.",
        {
            "properties": {"schema": {"const": "gpuscope.doctor/1"}, **body["properties"]},
            "required": ["schema", *body["required"]],
            "additionalProperties": False,
            "$defs": defs,
        },
    )


SCHEMAS = {"bench-1.json": bench, "run-1.json": run, "doctor-1.json": doctor}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = []
    for name, make in SCHEMAS.items():
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
