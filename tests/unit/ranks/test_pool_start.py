"""Issue 25: which start method the local pool may use, read from the main script itself — a
script that does its work outside an `if __name__ == "__main__":` guard would run it again in
every forkserver / spawn worker (and start a pool there: BrokenProcessPool)."""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest

from gpuscope import _read_workers
from gpuscope.ranks.engine import in_process_reason


def as_main(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str | None,
            spec: str | None = None) -> None:  # fmt: skip
    main = types.ModuleType("__main__")
    if source is not None:
        path = tmp_path / "script.py"
        path.write_text(source)
        main.__file__ = str(path)
    main.__spec__ = types.SimpleNamespace(name=spec) if spec else None  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.delenv("GPUSCOPE_READ_WORKERS", raising=False)
    monkeypatch.setattr(_read_workers, "_asked", False)


GUARDED = '''"""doc"""
import gpuscope
from pathlib import Path
RUNS = "runs"
def main() -> None:
    gpuscope.analyze(RUNS)
if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize(
    ("source", "reruns"),
    [(GUARDED, False),
     ("import gpuscope\nresult = gpuscope.analyze('runs')\n", True),
     ("import gpuscope\ngpuscope.analyze('runs')\n", True),
     ("import gpuscope\nif '__main__' == __name__:\n    gpuscope.analyze('runs')\n", False),
     ("import gpuscope\nif __name__ != '__main__':\n    gpuscope.analyze('runs')\n", True),
     ("import pathlib\nRUNS = pathlib.Path('r')\n", True),  # any call: the pool forks then
     ("def f(:\n", True)],  # cannot tell: assume the worst
)  # fmt: skip
def test_a_script_reruns_when_it_calls_outside_the_guard(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str, reruns: bool
) -> None:
    as_main(monkeypatch, tmp_path, source)
    assert _read_workers.main_reruns() is reruns


def test_nothing_reruns_without_a_script_or_for_a_packages_main(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    as_main(monkeypatch, tmp_path, None)  # a notebook, the REPL, python -c
    assert not _read_workers.main_reruns()
    as_main(monkeypatch, tmp_path, "import x\nx.run()\n", spec="gpuscope.__main__")
    assert not _read_workers.main_reruns()


def test_the_start_method_and_the_in_process_note(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    as_main(monkeypatch, tmp_path, GUARDED)
    assert _read_workers.pool_start_method() == _read_workers.server_start_method()
    as_main(monkeypatch, tmp_path, "import gpuscope\ngpuscope.analyze('runs')\n")
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert _read_workers.pool_start_method() == "fork"
    assert in_process_reason(4, 2) is None
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert _read_workers.pool_start_method() is None
    assert "not in 2 worker processes" in (in_process_reason(4, 2) or "")
    assert in_process_reason(1, 2) is None and in_process_reason(4, 1) is None
    _read_workers.use_processes()  # the caller vouches for its main (the CLI does)
    assert _read_workers.pool_start_method() == _read_workers.server_start_method()
