"""The engines that run the per-rank work: a process pool gives exactly what running in this
process gives, in order; Ray and Dask are optional and say how to get them (they really run in
tests/integration/test_cluster_engines.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuscope.errors import ConfigError
from gpuscope.ranks.api import tasks_for
from gpuscope.ranks.engine import run_all
from gpuscope.ranks.work import run_task

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
PAIR = [TRACES / f"hta__a100_sampled_rank-{r}.json.gz" for r in (0, 1)]


def square(x: int) -> int:
    return x * x


def test_the_pool_returns_results_in_task_order() -> None:
    assert list(run_all(square, list(range(40)), workers=2)) == [x * x for x in range(40)]


def test_pool_and_in_process_outcomes_are_the_same() -> None:
    for path in PAIR:
        if not path.is_file():
            pytest.skip(f"reference trace not found: {path}")
    tasks = tasks_for([str(p) for p in PAIR], report=False)
    alone = list(run_all(run_task, tasks, workers=1))
    pooled = list(run_all(run_task, tasks, workers=2))
    for a, b in zip(alone, pooled, strict=True):
        assert a.error is None and b.error is None
        assert a.summary is not None and b.summary is not None
        assert a.summary.calls.start.tolist() == b.summary.calls.start.tolist()
        assert (a.summary.exposed_ns, a.summary.rank) == (b.summary.exposed_ns, b.summary.rank)


def test_a_broken_trace_is_an_outcome_not_an_exception(tmp_path: Path) -> None:
    bad = tmp_path / "rank0.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": "x"')
    tasks = tasks_for([str(bad)])
    (outcome,) = run_all(run_task, tasks, workers=1)
    assert outcome.summary is None and outcome.error


@pytest.mark.parametrize("engine", ["ray", "dask"])
def test_a_missing_engine_says_how_to_install_it(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, engine, None)  # `import ray` fails as if not installed
    with pytest.raises(ConfigError, match=rf"pip install 'gpuscope\[{engine}\]'"):
        list(run_all(square, [1, 2], engine=engine))


@pytest.mark.parametrize(("engine", "workers"), [("spark", None), ("local", 0)])
def test_bad_engine_options_are_usage_errors(engine: str, workers: int | None) -> None:
    with pytest.raises(ConfigError):
        run_all(square, [1], engine=engine, workers=workers)
