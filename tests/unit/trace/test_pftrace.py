"""Perfetto protobuf traces (`.pftrace`) of rocprofv3 and rocprofv2.

No real rocprofv3 / rocprofv2 pftrace exists in a public repository: the inputs are made by
`tests/data/pftrace/make_pftrace.py` with the perfetto package's classes, following the writers'
source (see tests/data/README.md). Expected numbers come from `make_pftrace_golden.py` (the wire
format decoded with the standard library). Reading needs the `perfetto` extra; the tests that
read are skipped with the reason without it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuscope.cli import main
from gpuscope.errors import ReaderError
from gpuscope.trace.model import DTOH, HTOD, KERNEL, MEMCPY
from gpuscope.trace.readers.pftrace import PftraceReader
from gpuscope.trace.registry import read_trace, sniff
from tests.unit.trace.reference import GOLDEN, REPO

DATA = REPO / "tests" / "data" / "pftrace"
V3, V2 = DATA / "rocprofv3_results.pftrace", DATA / "rocprofv2_output.pftrace"
needs_perfetto = pytest.mark.skipif(
    importlib.util.find_spec("perfetto") is None, reason="perfetto (gpuscope[perfetto]) absent"
)


def golden(path: Path) -> dict[str, Any]:
    return dict(json.loads((GOLDEN / f"pftrace__{path.name}.json").read_text()))


def test_pftrace_is_sniffed_and_nothing_else_is() -> None:
    for path in (V3, V2):
        found = sniff(str(path))
        assert found is not None and found.name == "pftrace"
    reader = PftraceReader()
    recorded = REPO / "tests" / "data" / "recorded"
    assert not reader.sniff(str(recorded / "jax_step_h200.xplane.pb"))
    assert not reader.sniff(str(recorded / "jax_step_h200.trace.json.gz"))


@needs_perfetto
@pytest.mark.parametrize("path", [V3, V2], ids=["rocprofv3", "rocprofv2"])
def test_kernels_and_copies_match_the_golden_numbers(path: Path) -> None:
    trace, expected = read_trace(str(path)), golden(path)
    gpu = trace.gpu
    kernels, copies = gpu.kind == KERNEL, gpu.kind == MEMCPY
    assert int(kernels.sum()) == expected["kernels"]["count"]
    assert int(gpu.dur[kernels].sum()) == expected["kernels"]["time_ns"]
    assert int(copies.sum()) == expected["memcpy"]["count"]
    assert int(gpu.dur[copies].sum()) == expected["memcpy"]["time_ns"]
    assert len(trace.host) == expected["api_calls"]
    assert list(gpu.copy[copies]) == [HTOD, DTOH]
    assert trace.meta.vendor == "amd" and trace.meta.clock == "boot"


@needs_perfetto
def test_rocprofv3_fields_become_columns() -> None:
    trace = read_trace(str(V3))
    gpu, params = trace.gpu, trace.launch_params
    assert trace.meta.schema == "rocprofv3"
    assert int(np.maximum(gpu.bytes[gpu.kind == MEMCPY], 0).sum()) == golden(V3)["memcpy"]["bytes"]
    assert set(gpu.device.tolist()) == {0} and set(gpu.stream.tolist()) == {1}
    gemm = int(np.flatnonzero([trace.names[i].startswith("Cijk_") for i in gpu.name])[0])
    row = int(np.flatnonzero(params.row == gemm)[0])
    assert (params.grid_x[row], params.block_x[row], params.shared_mem[row]) == (1024, 256, 16384)
    assert (params.registers[row], params.accum_registers[row], params.scalar_registers[row]) == (
        128, 64, 96,
    )  # fmt: skip
    # every kernel and copy is linked to its HIP call by corr_id
    assert set(gpu.correlation.tolist()) <= set(trace.host.correlation.tolist())
    assert {"copy_bytes", "launch_params", "links", "markers"} <= trace.meta.provides
    assert [trace.names[i] for i in trace.ops.name] == ["step"]


@needs_perfetto
def test_rocprofv2_links_calls_by_flow_and_takes_tids_from_track_names() -> None:
    trace = read_trace(str(V2))
    assert trace.meta.schema == "rocprofv2"
    gpu, host = trace.gpu, trace.host
    kernel_ids = set(gpu.correlation[gpu.kind == KERNEL].tolist())
    launches = {
        trace.names[n] for n, c in zip(host.name, host.correlation, strict=True) if c in kernel_ids
    }
    assert launches == {"hipLaunchKernel", "hipExtModuleLaunchKernel"}
    assert set(host.tid.tolist()) == {4242, 4250}
    assert (gpu.bytes == -1).all() and "copy_bytes" not in trace.meta.provides  # v2 has no sizes


@needs_perfetto
def test_a_cut_pftrace_keeps_the_packets_before_the_cut(tmp_path: Path) -> None:
    cut = tmp_path / "cut.pftrace"
    cut.write_bytes(V3.read_bytes()[:2000])
    trace = read_trace(str(cut))
    assert trace.meta.truncated and len(trace.gpu) < 6


def test_without_perfetto_a_one_line_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "perfetto", None)
    monkeypatch.setitem(sys.modules, "perfetto.protos", None)
    monkeypatch.setitem(sys.modules, "perfetto.protos.perfetto.trace", None)
    with pytest.raises(ReaderError, match=r"gpuscope\[perfetto\]"):
        read_trace(str(V3))
    assert main(["analyze", str(V3)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gpuscope[perfetto]" in err
