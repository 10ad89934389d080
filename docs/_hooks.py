"""mkdocs hook: docs/reference/schemas.md gets every shipped JSON Schema, each under its tag
with its description and its JSON (from `gpuscope.schemas`, so the page is never stale)."""

from __future__ import annotations

import json
from typing import Any

MARK = "<!-- gpuscope:schemas -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARK not in markdown:
        return markdown
    from gpuscope import schemas

    parts = []
    for tag in schemas.names():
        schema = schemas.load(tag)
        text = json.dumps(schema, indent=1, ensure_ascii=False)
        parts.append(f"## `{tag}`\n\n{schema.get('description', '')}\n\n"
                     f'??? note "the schema ({len(text):,} characters)"\n\n'
                     + "\n".join(f"    {line}" for line in f"```json\n{text}\n```".splitlines()))  # fmt: skip
    return markdown.replace(MARK, "\n\n".join(parts))
