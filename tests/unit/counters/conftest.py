"""Small rocprofv3 counter_collection.csv files (ROCm 7 layout, as in AMD's docs sample) written
by the tests, for the cases no recorded file covers (FLOP counters, several passes)."""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

HEADER = ["Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id",
          "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size",
          "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name",
          "Counter_Value", "Start_Timestamp", "End_Timestamp"]  # fmt: skip

# one dispatch: (name, duration ns, {counter: value}, vgprs, lds bytes)
Dispatch = tuple[str, int, dict[str, float], int, int]
Writer = Callable[[Path, Sequence[Dispatch]], Path]


def write_counters(path: Path, dispatches: Sequence[Dispatch], first_id: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        out = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        out.writerow(HEADER)
        start = 1_000_000
        for i, (name, ns, counters, vgprs, lds) in enumerate(dispatches):
            dispatch = first_id + i
            for counter, value in counters.items():
                out.writerow([dispatch, dispatch, "Agent 1", 1, 4242, 4242, 65536, 7, name, 256,
                              lds, 0, vgprs, 0, 16, counter, value, start, start + ns])  # fmt: skip
            start += ns + 1000
    return path


@pytest.fixture
def counters_csv() -> Writer:
    return write_counters
