"""The extra analyses are found by name: a renamed or lost module fails here, not silently."""

from __future__ import annotations

from types import ModuleType

import pytest

from gpuscope.analysis import extras
from gpuscope.counters import extra as counters_extra

BUILT_IN = [
    "communication",
    "steps",
    "host_ops",
    "cold_start",
    "efficiency",
    "conversions",
    "patterns",
    "launch_config",
]
INTERFACE = ("analyse", "to_dict", "findings", "section")


def test_every_built_in_extra_is_registered_in_order() -> None:
    assert [m.NAME for m in extras.BUILTIN] == BUILT_IN


def test_the_counter_analysis_plugs_in_through_its_entry_point() -> None:
    """gpuscope registers `counters.extra` in pyproject.toml (analysis/ never imports counters/);
    a stale install without it fails here: run `make .venv/.installed`."""
    assert extras.installed_plugins() == [counters_extra]
    assert [m.NAME for m in extras.modules()] == [*BUILT_IN, "counters"]


@pytest.mark.parametrize("module", extras.modules(), ids=lambda m: m.NAME)
def test_every_extra_offers_the_interface(module: ModuleType) -> None:
    assert isinstance(module.NAME, str)
    assert all(callable(getattr(module, name, None)) for name in INTERFACE)


def test_a_name_registered_twice_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "installed_plugins", lambda: [extras.steps])
    extras._registered.cache_clear()
    try:
        with pytest.raises(ValueError, match="'steps' is already registered"):
            extras.modules()
    finally:
        monkeypatch.undo()
        extras._registered.cache_clear()


def test_an_analysis_registered_at_run_time_runs_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """One module plus one registration: `register` (or an entry point of the group)."""
    import types

    queues = types.ModuleType("queues")
    queues.NAME = "queues"  # type: ignore[attr-defined]
    monkeypatch.setattr(extras, "_ADDED", [])
    extras._registered.cache_clear()
    try:
        extras.register(queues)  # type: ignore[arg-type]
        assert extras.modules()[-1] is queues
        with pytest.raises(ValueError, match="'queues' is already registered"):
            extras.register(queues)  # type: ignore[arg-type]
        assert [m.NAME for m in extras.modules()].count("queues") == 1
    finally:
        monkeypatch.undo()
        extras._registered.cache_clear()
