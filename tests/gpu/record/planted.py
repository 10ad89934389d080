"""Small PyTorch programs that each plant one cause of lost time (issue 26: causes from the
critical path). Each profiles a few steps with torch.profiler (record_shapes=True, ProfilerStep
ranges from prof.step()) and writes `planted_<name>_h200.json` under OUT. The tests recompute each
trace's expected step-time breakdown from its raw events (tests/unit/analysis/test_planted.py).

    python tests/gpu/record/planted.py OUT NAME   (NAME: one of PLANTS, or "all")

What each one plants:
- input_pipeline: a DataLoader whose batches take 20 ms of CPU work (numpy, no operator open), a
  small MLP training step, and a `loss.item()` for logging at the end of every step (a sync that
  must not be blamed for the 20 ms); with_stack=True, so the Python frames name the batch maker.
- item_sync: an elementwise loop that calls `.item()` after every few ops (32 syncs per step).
- eager_launch: 200 tiny elementwise kernels per step in eager mode, no sync: launch-bound.
- compiled_launch: a torch.compile'd (default mode) MLP of small layers, training with AdamW
  (its optimizer step not compiled): the host launches Inductor's kernels one by one.
- pageable_copy: a 256 MB host→device copy from pageable memory every step, then a small matmul.
- pinned_copy: the same copy from pinned memory (the contrast: already at the link's rate).
- startup: a conv net profiled from its first call (cuDNN autotuning, cuBLAS handles, lazy module
  loads inside step 0), then steady steps.
- gpu_bound: eight 8192² bf16 matmuls per step; the last step ends in a synchronize().
- sleep_then_sync: 5 ms of host sleep, then torch.cuda.synchronize() on an idle GPU, then work:
  a sync that starts inside the gap is not its cause.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
CUDA = torch.device("cuda")


def _profiled(out: Path, name: str, steps: int, step: Callable[[int], None],
              warmup: int = 2, with_stack: bool = False) -> None:  # fmt: skip
    for i in range(warmup):
        step(-1 - i)
    torch.cuda.synchronize()
    # a schedule, so that prof.step() opens ProfilerStep#N ranges; one step of the profiler's
    # own warm-up (not recorded) keeps the tracer's start-up out of the trace
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=steps, repeat=1)
    with profile(activities=ACTIVITIES, record_shapes=True, with_stack=with_stack,
                 schedule=schedule) as prof:  # fmt: skip
        for i in range(steps + 1):
            step(i)
            prof.step()
    prof.export_chrome_trace(str(out / f"planted_{name}_h200.json"))


def _mlp(width: int = 1024, depth: int = 3) -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers).to(CUDA)


def make_batch(index: int) -> np.ndarray:
    """The 'decode and augment' of one batch: 20 ms of CPU work in numpy, no operator open."""
    rng = np.random.default_rng(index)
    data = rng.random((64, 1024), dtype=np.float32)
    scratch = rng.random(20_000)
    end = time.perf_counter() + 0.020
    while time.perf_counter() < end:
        np.sort(scratch)
    return data


class Batches(torch.utils.data.Dataset[np.ndarray]):
    def __len__(self) -> int:
        return 1_000_000

    def __getitem__(self, index: int) -> np.ndarray:
        return make_batch(index)


def input_pipeline(out: Path) -> None:
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    batches: Iterator[torch.Tensor] = iter(
        torch.utils.data.DataLoader(Batches(), batch_size=None, num_workers=0)
    )

    def step(_: int) -> None:
        x = next(batches).to(CUDA)
        loss = model(x).square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(f"loss {loss.item():.4f}", end="\r")  # logging: one sync per step

    _profiled(out, "input_pipeline", 6, step, with_stack=True)


def item_sync(out: Path) -> None:
    x = torch.randn(1 << 16, device=CUDA)

    def step(_: int) -> None:
        nonlocal x
        for _ in range(32):
            x = torch.sin(x) + 0.01
            if x.abs().max().item() > 1e30:  # a host branch on a GPU value: one sync each
                x = x / 2

    _profiled(out, "item_sync", 6, step)


def eager_launch(out: Path) -> None:
    x = torch.randn(1024, device=CUDA)

    def step(_: int) -> None:
        nonlocal x
        for _ in range(100):
            x = x * 0.999 + 0.001

    _profiled(out, "eager_launch", 6, step)


def compiled_launch(out: Path) -> None:
    torch.manual_seed(0)
    blocks = [nn.Sequential(nn.Linear(256, 256), nn.LayerNorm(256), nn.GELU()) for _ in range(12)]
    model = nn.Sequential(*blocks).to(CUDA)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # foreach, not compiled
    compiled = torch.compile(model)  # mode="default": no CUDA graphs
    x = torch.randn(32, 256, device=CUDA)

    def step(_: int) -> None:
        loss = compiled(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    _profiled(out, "compiled_launch", 6, step, warmup=3)


def _copy_program(out: Path, name: str, pinned: bool) -> None:
    host = torch.from_numpy(np.random.default_rng(0).random(64 << 20, dtype=np.float32))
    if pinned:
        host = host.pin_memory()
    weight = torch.randn(2048, 2048, device=CUDA)

    def step(_: int) -> None:
        device = host.to(CUDA, non_blocking=pinned)  # 256 MB
        block = device[: 2048 * 2048].view(2048, 2048)
        (block @ weight).sum()

    _profiled(out, name, 5, step)


def pageable_copy(out: Path) -> None:
    _copy_program(out, "pageable_copy", pinned=False)


def pinned_copy(out: Path) -> None:
    _copy_program(out, "pinned_copy", pinned=True)


def startup(out: Path) -> None:
    torch.backends.cudnn.benchmark = True
    schedule = torch.profiler.schedule(wait=0, warmup=0, active=5, repeat=1)  # from the start
    with profile(activities=ACTIVITIES, record_shapes=True, schedule=schedule) as prof:
        model = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10),
        ).to(CUDA)  # fmt: skip
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
        x = torch.randn(32, 3, 64, 64, device=CUDA)
        for _ in range(5):
            loss = model(x).logsumexp(-1).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            prof.step()
    prof.export_chrome_trace(str(out / "planted_startup_h200.json"))


def gpu_bound(out: Path) -> None:
    a = torch.randn(8192, 8192, device=CUDA, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=CUDA, dtype=torch.bfloat16)

    def step(i: int) -> None:
        for _ in range(8):
            torch.matmul(a, b)
        if i == 4:  # the last profiled step ends with the harness's usual sync
            torch.cuda.synchronize()

    _profiled(out, "gpu_bound", 5, step)


def sleep_then_sync(out: Path) -> None:
    a = torch.randn(1024, 1024, device=CUDA)  # 4 matmuls of ~50 µs: done long before the sync

    def step(_: int) -> None:
        time.sleep(0.005)
        torch.cuda.synchronize()  # the GPU is already idle: this sync waits for nothing
        for _ in range(4):
            torch.matmul(a, a)

    _profiled(out, "sleep_then_sync", 6, step)


PLANTS: dict[str, Callable[[Path], None]] = {
    f.__name__: f
    for f in (
        input_pipeline,
        item_sync,
        eager_launch,
        compiled_launch,
        pageable_copy,
        pinned_copy,
        startup,
        gpu_bound,
        sleep_then_sync,
    )
}


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    chosen = list(PLANTS) if sys.argv[2] == "all" else sys.argv[2:]
    for name in chosen:
        began = time.perf_counter()
        PLANTS[name](folder)
        print(f"{name}: {time.perf_counter() - began:.1f} s", flush=True)
