"""Kineto on ROCm copies each launch call's own arguments into the kernel's `grid` / `block`.
`hipExtModuleLaunchKernel` and `hipHccModuleLaunchKernel` (the way rocBLAS / hipBLASLt launch
their Tensile kernels) take the *global work size* in work-items, not a count of work-groups:
a Tensile GEMM shows `grid [73728, 1, 1]`, `block [256, 1, 1]` — 288 work-groups, one wave on
an MI300X, not 73,728. `LaunchParams` holds work-groups, so those rows are divided here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from gpuscope.trace.model import GpuOps, HostCalls, LaunchParams

WORK_ITEM_LAUNCHES = frozenset({"hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel"})
AXES = "xyz"


def in_work_groups(
    launch: LaunchParams, gpu: GpuOps, host: HostCalls, names: tuple[str, ...]
) -> LaunchParams:
    """`launch` with the grid of kernels launched by a work-item call divided by their block
    (rounded up, as the hardware does). A row whose grid is smaller than its block on an axis is
    already in work-groups (a later Kineto that converts) and is left alone."""
    codes = [i for i, name in enumerate(names) if name in WORK_ITEM_LAUNCHES]
    if not len(launch) or not codes:
        return launch
    calls = host.correlation[np.isin(host.name, codes) & (host.correlation >= 0)]
    if not len(calls):
        return launch
    rows = np.isin(gpu.correlation[launch.row], calls)
    grid = np.stack([getattr(launch, f"grid_{a}") for a in AXES], axis=1)
    block = np.stack([getattr(launch, f"block_{a}") for a in AXES], axis=1).astype(np.int64)
    rows &= ((block > 0) & (grid >= block)).all(axis=1)
    if not rows.any():
        return launch
    blocks = np.where(rows[:, None], -(-grid // np.maximum(block, 1)), grid)
    changed: dict[str, Any] = {f"grid_{a}": blocks[:, i] for i, a in enumerate(AXES)}
    return replace(launch, **changed)
