"""JSON damage: values of the wrong type, NaN/Infinity/huge/negative numbers, dropped or renamed
keys, reshuffled or emptied lists, deep nesting, and cuts of the text at the JSON level."""

from __future__ import annotations

import json
import random
from typing import Any

from tests.fuzz.mutate import Mutation, mutate_bytes, visible_cut

# raw tokens spliced in where json.dumps cannot write them
RAW = ("1e999", "-1e999", "123456789012345678901234567890", "-0", "1E400", "0.0000000e-999")
NUMBERS: tuple[Any, ...] = (
    0,
    -1,
    1.5,
    -1e308,
    1e308,
    2**63,
    2**64,
    -(2**63) - 1,
    10**30,
    float("nan"),
    float("inf"),
    float("-inf"),
)
OTHERS: tuple[Any, ...] = (None, True, "", "12", "abc", "NaN", [], {}, [1], {"a": 1})
_MARK = "\u0000fuzz{}\u0000"


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, Mutation]:
    """A structural change of a JSON document; falls back to bytes for text that is not JSON."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return mutate_bytes(data, rng, "json")
    op = rng.choice(_OPS)
    if op == "truncate":  # after a value or a separator, in the file's own formatting
        marks = [i + 1 for i, byte in enumerate(data) if byte in b",}]"]
        cut = rng.choice(marks) if marks else rng.randrange(len(data))
        return data[:cut], Mutation("json.truncate", visible_cut(data, cut, "json"))
    slots = _slots(doc, rng)
    if not slots:
        return mutate_bytes(data, rng, "json")
    raw: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 5))):
        parent, key = rng.choice(slots)
        parent[key] = _FUNCS[op](parent[key], rng, raw)
    text = json.dumps(doc, allow_nan=True)
    for i, token in enumerate(raw):
        text = text.replace(json.dumps(_MARK.format(i)), token, 1)
    return text.encode(), Mutation(f"json.{op}")


def _slots(doc: Any, rng: random.Random, limit: int = 50_000) -> list[tuple[Any, Any]]:
    """(container, key) of the document's values, every one up to `limit`, then a sample."""
    slots: list[tuple[Any, Any]] = []
    stack = [doc]
    seen = 0
    while stack:
        node = stack.pop()
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for key in keys:
            seen += 1
            if len(slots) < limit:
                slots.append((node, key))
            elif rng.randrange(seen) < limit:  # reservoir: every value equally likely
                slots[rng.randrange(limit)] = (node, key)
            if isinstance(node[key], (dict, list)):
                stack.append(node[key])
    return slots


def _raw(token: str, raw: list[str]) -> str:
    raw.append(token)
    return _MARK.format(len(raw) - 1)


def _wrong_type(value: Any, rng: random.Random, raw: list[str]) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return rng.choice((str(value), None, [value], {"value": value}, True))
    if isinstance(value, str):
        return rng.choice((len(value), None, [value], {"name": value}, 0))
    if isinstance(value, list):
        return rng.choice(({}, None, "list", 0, {"0": value[:1]}))
    if isinstance(value, dict):
        return rng.choice(([], None, "object", 0, list(value.values())[:3]))
    return rng.choice(OTHERS)


def _bad_number(value: Any, rng: random.Random, raw: list[str]) -> Any:
    if rng.random() < 0.3:
        return _raw(rng.choice(RAW), raw)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and rng.random() < 0.4:
        return rng.choice((-value, value * 1000, value + 0.5, value * 10**12))
    return rng.choice(NUMBERS)


def _other(value: Any, rng: random.Random, raw: list[str]) -> Any:
    return rng.choice(OTHERS)


def _reshape(value: Any, rng: random.Random, raw: list[str]) -> Any:
    """A list shuffled, cut, doubled or emptied; an object without a key or with one renamed."""
    if isinstance(value, list) and value:
        choice = rng.randrange(4)
        if choice == 0:
            return rng.sample(value, len(value))
        if choice == 1:
            return value[: rng.randrange(len(value))]
        return value + value if choice == 2 else [*value, None]
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        out = dict(value)
        item = out.pop(key)
        if rng.random() < 0.5:
            out[rng.choice((key.upper(), key + "_", "", key[:-1]))] = item
        return out
    return value


def _deep(value: Any, rng: random.Random, raw: list[str]) -> Any:
    depth = rng.choice((100, 1000, 100_000))
    return _raw("[" * depth + "]" * depth, raw)


def _long_text(value: Any, rng: random.Random, raw: list[str]) -> Any:
    return rng.choice(("x" * 1_000_000, "\u00e9\u4e2d\U0001f600" * 1000, "\\", '"', "\u0000"))


_FUNCS = {
    "wrong-type": _wrong_type,
    "bad-number": _bad_number,
    "other-value": _other,
    "reshape": _reshape,
    "deep": _deep,
    "long-text": _long_text,
}
_OPS = (
    ("truncate",) * 3
    + ("wrong-type",) * 4
    + ("bad-number",) * 4
    + ("reshape",) * 3
    + (
        "other-value",
        "other-value",
        "deep",
        "long-text",
    )
)
