"""Where the per-rank work runs: in this process, a local process pool (the default), a Ray
cluster or a Dask cluster. Every engine maps one pure function over tasks and yields the results
in task order, with a bounded number in flight, so memory stays flat in the number of ranks.

Ray and Dask are optional extras (`pip install 'gpuscope[ray]'` / `'gpuscope[dask]'`), imported
only when asked for. Ray joins the cluster named by `RAY_ADDRESS` (else starts a local one);
Dask uses the scheduler at `DASK_SCHEDULER_ADDRESS` when set (dask.distributed), else its local
process scheduler.

    >>> list(run_all(run_task, tasks, engine="local", workers=2))          # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from gpuscope.errors import ConfigError

ENGINES = ("local", "ray", "dask")
IN_FLIGHT = 4  # tasks submitted per worker ahead of the one being collected

T = TypeVar("T")
R = TypeVar("R")


def default_workers(tasks: int) -> int:
    return max(1, min(tasks, os.cpu_count() or 1))


def run_all(
    fn: Callable[[T], R], tasks: Sequence[T], *, engine: str = "local", workers: int | None = None
) -> Iterator[R]:
    """`fn(task)` for every task, in order. `workers`: processes (local), or tasks in flight
    per batch on a cluster; None = one per CPU here (local), the cluster's size (Ray, Dask)."""
    if engine not in ENGINES:
        raise ConfigError(f"--engine {engine}: expected one of {', '.join(ENGINES)}")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers}: expected a positive number of workers")
    if engine == "ray":
        return _ray(fn, tasks, workers)
    if engine == "dask":
        return _dask(fn, tasks, workers)
    return _local(fn, tasks, workers or default_workers(len(tasks)))


def _local(fn: Callable[[T], R], tasks: Sequence[T], workers: int) -> Iterator[R]:
    if workers <= 1 or len(tasks) <= 1:
        return (fn(t) for t in tasks)
    return _pool(fn, tasks, workers)


def _pool(fn: Callable[[T], R], tasks: Sequence[T], workers: int) -> Iterator[R]:
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    # forkserver: no fork of a threaded parent (rich, numpy's pools); workers import gpuscope once
    from gpuscope._read_workers import server_start_method

    context = multiprocessing.get_context(server_start_method())
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[R]] = deque()
        queue = iter(tasks)
        for task in queue:
            pending.append(pool.submit(fn, task))
            if len(pending) >= workers * IN_FLIGHT:
                break
        while pending:
            result = pending.popleft().result()
            nxt = next(queue, None)
            if nxt is not None:
                pending.append(pool.submit(fn, nxt))
            yield result


def _missing(engine: str, package: str, error: ImportError) -> ConfigError:
    return ConfigError(
        f"--engine {engine} needs {package}, which is not installed ({error}): "
        f"pip install 'gpuscope[{engine}]' (or pip install {package}), or use --engine local"
    )


def _ray(fn: Callable[[T], R], tasks: Sequence[T], workers: int | None) -> Iterator[R]:
    try:
        ray = importlib.import_module("ray")
    except ImportError as error:
        raise _missing("ray", "ray", error) from None
    return _ray_results(ray, fn, tasks, workers)


def _ray_results(
    ray: Any, fn: Callable[[T], R], tasks: Sequence[T], workers: int | None
) -> Iterator[R]:
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        options: dict[str, Any] = {"address": address} if address else {"num_cpus": workers}
        ray.init(include_dashboard=False, log_to_driver=False, **options)
    remote = ray.remote(num_cpus=1)(fn)
    limit = (workers or int(ray.cluster_resources().get("CPU", 1))) * IN_FLIGHT
    pending: deque[Any] = deque()
    for task in tasks:
        pending.append(remote.remote(task))
        if len(pending) >= limit:
            yield ray.get(pending.popleft())
    while pending:
        yield ray.get(pending.popleft())


def _dask(fn: Callable[[T], R], tasks: Sequence[T], workers: int | None) -> Iterator[R]:
    try:
        dask = importlib.import_module("dask")
    except ImportError as error:
        raise _missing("dask", "dask", error) from None
    address = os.environ.get("DASK_SCHEDULER_ADDRESS")
    if address:
        return _dask_cluster(fn, tasks, address, workers)
    return _dask_local(dask, fn, tasks, workers or default_workers(len(tasks)))


def _dask_local(dask: Any, fn: Callable[[T], R], tasks: Sequence[T], workers: int) -> Iterator[R]:
    batch = max(workers * IN_FLIGHT, 1)
    for i in range(0, len(tasks), batch):
        part = [dask.delayed(fn)(t) for t in tasks[i : i + batch]]
        yield from dask.compute(*part, scheduler="processes", num_workers=workers)


def _dask_cluster(
    fn: Callable[[T], R], tasks: Sequence[T], address: str, workers: int | None
) -> Iterator[R]:
    try:
        Client = importlib.import_module("dask.distributed").Client
    except ImportError as error:
        raise _missing("dask", "dask[distributed]", error) from None
    with Client(address) as client:
        limit = (workers or len(client.scheduler_info()["workers"]) or 1) * IN_FLIGHT
        pending: deque[Any] = deque()
        for task in tasks:
            pending.append(client.submit(fn, task, pure=False))
            if len(pending) >= limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
