"""A fake Tool that records what happens to it, for the stacking tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gpuscope.errors import ToolError
from gpuscope.tools.tool import Layer, RunContext


@dataclass
class Recorder:
    tool: str
    events: list[str]
    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    fail_check: bool = False
    fail_setup: bool = False
    fail_teardown: bool = False

    @property
    def name(self) -> str:
        return self.tool

    def check(self, ctx: RunContext) -> None:
        self.events.append(f"check {self.tool}")
        if self.fail_check:
            raise ToolError(f"{self.tool} cannot work here")

    @contextmanager
    def open(self, ctx: RunContext) -> Iterator[Layer]:
        self.events.append(f"setup {self.tool}")
        if self.fail_setup:
            raise ToolError(f"{self.tool} setup failed")
        try:
            yield Layer(self.tool, self.argv, self.env, on_mark=self._mark)
        finally:
            self.events.append(f"teardown {self.tool}")
            if self.fail_teardown:
                raise RuntimeError(f"{self.tool} teardown broke")

    def _mark(self, label: str) -> None:
        self.events.append(f"{label} {self.tool}")
