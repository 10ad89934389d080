"""Where the per-rank work runs: in this process, a local process pool (the default), a Ray
cluster or a Dask cluster. Every engine maps one pure function over tasks and yields the results
in task order, with a bounded number in flight, so memory stays flat in the number of ranks.

Ray and Dask are optional extras (`pip install 'gpuscope[ray]'` / `'gpuscope[dask]'`), imported
only when asked for. Ray joins the cluster named by `RAY_ADDRESS` (else starts a local one);
Dask uses the scheduler at `DASK_SCHEDULER_ADDRESS` when set (dask.distributed), else its local
process scheduler. An address that does not answer within `timeout_s` (--engine-timeout,
$GPUSCOPE_ENGINE_TIMEOUT, 30 s) is a ConfigError naming it as given (`_reach.py`).

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
    fn: Callable[[T], R],
    tasks: Sequence[T],
    *,
    engine: str = "local",
    workers: int | None = None,
    timeout_s: float | None = None,
) -> Iterator[R]:
    """`fn(task)` for every task, in order. `workers`: processes (local), or tasks in flight
    per batch on a cluster; None = one per CPU here (local), the cluster's size (Ray, Dask).
    `timeout_s`: how long a cluster's address may take to answer (None: the environment's
    GPUSCOPE_ENGINE_TIMEOUT, else 30 s)."""
    if engine not in ENGINES:
        raise ConfigError(f"--engine {engine}: expected one of {', '.join(ENGINES)}")
    check_workers(workers)
    if engine == "ray":
        return _ray(fn, tasks, workers, timeout_s)
    if engine == "dask":
        return _dask(fn, tasks, workers, timeout_s)
    return _local(fn, tasks, workers or default_workers(len(tasks)))


def check_workers(workers: int | None) -> None:
    """ConfigError for a number of workers below 1 (None: the default)."""
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers}: expected a positive number of workers")


def connect_timeout(timeout_s: float | None) -> float:
    """The seconds a cluster's address may take to answer: `timeout_s` (--engine-timeout), else
    $GPUSCOPE_ENGINE_TIMEOUT, else 30; ConfigError for one that is not a positive number."""
    from gpuscope.ranks._reach import connect_timeout as seconds

    return seconds(timeout_s)


IN_PROCESS = (
    "analysed one after another in this process, not in {workers} worker processes: the main "
    'script does its work outside an `if __name__ == "__main__":` block, so each worker would '
    "run it again, and other threads run, so it cannot be forked; put that work under the guard"
)


def in_process_reason(tasks: int, workers: int | None) -> str | None:
    """Why the local engine runs `tasks` in this process although a pool was wanted (see
    `_read_workers.pool_start_method`); None when it does not, or runs them in a pool."""
    from gpuscope._read_workers import pool_start_method

    wanted = workers or default_workers(tasks)
    if wanted <= 1 or tasks <= 1 or pool_start_method() is not None:
        return None
    return IN_PROCESS.format(workers=wanted)


def _local(fn: Callable[[T], R], tasks: Sequence[T], workers: int) -> Iterator[R]:
    from gpuscope._read_workers import pool_start_method

    method = pool_start_method() if workers > 1 and len(tasks) > 1 else None
    if method is None:
        return (fn(t) for t in tasks)
    return _pool(fn, tasks, workers, method)


def _pool(fn: Callable[[T], R], tasks: Sequence[T], workers: int, method: str) -> Iterator[R]:
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    # forkserver: no fork of a threaded parent (rich, numpy's pools); workers import gpuscope
    # once. fork: a main script that would run again in each worker (pool_start_method)
    context = multiprocessing.get_context(method)
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


def _unreachable(engine: str, what: str, address: str, env: str, why: str) -> ConfigError:
    return ConfigError(
        f"--engine {engine}: cannot reach the {what} at {address} ({env}): {why}; check the "
        "address or start the cluster (or wait longer: --engine-timeout SECONDS)"
    )


def _ray(
    fn: Callable[[T], R], tasks: Sequence[T], workers: int | None, timeout_s: float | None
) -> Iterator[R]:
    try:
        ray = importlib.import_module("ray")
    except ImportError as error:
        raise _missing("ray", "ray", error) from None
    if not ray.is_initialized():
        _join_ray(ray, workers, timeout_s)  # now: a wrong address fails before any result
    return _ray_results(ray, fn, tasks, workers)


def _join_ray(ray: Any, workers: int | None, timeout_s: float | None) -> None:
    """The cluster at RAY_ADDRESS, checked first (Ray itself retries one where nobody listens
    for ever); without one, a local Ray of `workers` CPUs."""
    from gpuscope.ranks._reach import HTTP2, connect_timeout, unreachable

    address = os.environ.get("RAY_ADDRESS")
    if not address:
        ray.init(include_dashboard=False, log_to_driver=False, num_cpus=workers)
        return
    why = unreachable(address, connect_timeout(timeout_s), HTTP2)
    if why is not None:
        raise _unreachable("ray", "Ray cluster", address, "RAY_ADDRESS", why)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    except Exception as error:  # a gRPC server that is not Ray's: any failure of the join
        why = _first_line(error)
        raise _unreachable("ray", "Ray cluster", address, "RAY_ADDRESS", why) from None


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0][:200]}" if text else type(error).__name__


def _ray_results(
    ray: Any, fn: Callable[[T], R], tasks: Sequence[T], workers: int | None
) -> Iterator[R]:
    remote = ray.remote(num_cpus=1)(fn)
    limit = (workers or int(ray.cluster_resources().get("CPU", 1))) * IN_FLIGHT
    pending: deque[Any] = deque()
    for task in tasks:
        pending.append(remote.remote(task))
        if len(pending) >= limit:
            yield ray.get(pending.popleft())
    while pending:
        yield ray.get(pending.popleft())


def _dask(
    fn: Callable[[T], R], tasks: Sequence[T], workers: int | None, timeout_s: float | None
) -> Iterator[R]:
    try:
        dask = importlib.import_module("dask")
    except ImportError as error:
        raise _missing("dask", "dask", error) from None
    address = os.environ.get("DASK_SCHEDULER_ADDRESS")
    if address:
        return _dask_cluster(fn, tasks, _dask_client(address, timeout_s), workers)
    return _dask_local(dask, fn, tasks, workers or default_workers(len(tasks)))


def _dask_client(address: str, timeout_s: float | None) -> Any:
    """A client of the scheduler at `address`, connected now (ConfigError naming the address
    when it does not answer in time)."""
    from gpuscope.ranks._reach import CONNECT, SPEAKS_FIRST, connect_timeout, unreachable

    try:
        Client = importlib.import_module("dask.distributed").Client
    except ImportError as error:
        raise _missing("dask", "dask[distributed]", error) from None
    seconds = connect_timeout(timeout_s)
    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    # a plain TCP scheduler sends its handshake first (TLS waits for the client's hello)
    expect = SPEAKS_FIRST if scheme == "tcp" else CONNECT
    why = unreachable(address, seconds, expect) if scheme in ("tcp", "tls", "ws", "wss") else None
    if why is None:
        try:
            return Client(address, timeout=seconds)
        except Exception as error:  # another service there: any failure of its protocol
            why = _first_line(error)
    raise _unreachable("dask", "Dask scheduler", address, "DASK_SCHEDULER_ADDRESS", why)


def _dask_local(dask: Any, fn: Callable[[T], R], tasks: Sequence[T], workers: int) -> Iterator[R]:
    batch = max(workers * IN_FLIGHT, 1)
    for i in range(0, len(tasks), batch):
        part = [dask.delayed(fn)(t) for t in tasks[i : i + batch]]
        yield from dask.compute(*part, scheduler="processes", num_workers=workers)


def _dask_cluster(
    fn: Callable[[T], R], tasks: Sequence[T], client: Any, workers: int | None
) -> Iterator[R]:
    with client:
        limit = (workers or len(client.scheduler_info()["workers"]) or 1) * IN_FLIGHT
        pending: deque[Any] = deque()
        for task in tasks:
            pending.append(client.submit(fn, task, pure=False))
            if len(pending) >= limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
