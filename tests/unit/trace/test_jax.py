"""JAX / XLA profiles: jax.profiler's trace-viewer JSON, its XSpace protobuf and their folder.

Inputs: `tests/data/recorded/jax_step_h200.*` (a jit MLP training step on an H200, 5 steps: the
XSpace, the trace JSON and the Perfetto JSON of one profile) and the real MI300X captures in
`shared/reference/formats/jax-xplane/` (TraceLens's test inputs, with TraceLens's own report of
the legacy capture). Expected numbers come from `make_jax_golden.py` (the wire format decoded
with the standard library); the XSpace tests need xprof (the `xplane` extra) and are skipped
with the reason without it.
"""

from __future__ import annotations

import csv
import functools
import json
import shutil
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuscope.analysis.categories import parent_ops
from gpuscope.cli import main
from gpuscope.errors import ReaderError
from gpuscope.trace.model import DTOD, KERNEL, MEMCPY, OP, PYTHON, Trace
from gpuscope.trace.readers.jax import JaxReader
from gpuscope.trace.readers.jax.reader import has_xprof
from gpuscope.trace.registry import find_sources, read_trace, sniff
from tests.unit.trace.reference import GOLDEN, REPO, reference_file

RECORDED = REPO / "tests" / "data" / "recorded"
XPLANE = RECORDED / "jax_step_h200.xplane.pb"
TRACE_JSON = RECORDED / "jax_step_h200.trace.json.gz"
PERFETTO_JSON = RECORDED / "jax_step_h200.perfetto_trace.json.gz"
LEGACY = "jax-xplane/mi300-conv-minimal-legacy/chi-mi300x-013.xplane.pb"
MI300 = (LEGACY, "jax-xplane/mi300-conv-minimal-08/tw003.xplane.pb",
         "jax-xplane/te-fused-attn/934987a2fc2f.xplane.pb")  # fmt: skip
TRACELENS = "jax-xplane/mi300-conv-minimal-tracelens-csvs"
needs_xprof = pytest.mark.skipif(not has_xprof(), reason="xprof (gpuscope[xplane]) not installed")


def golden(shown: str) -> dict[str, Any]:
    path = GOLDEN / f"jax__{shown.replace('/', '__')}.json"
    return dict(json.loads(path.read_text()))


@functools.cache
def trace_of(path: str) -> Trace:
    return read_trace(path)


def summary(trace: Trace) -> dict[str, Any]:
    """The golden file's numbers, from the trace."""
    gpu = trace.gpu
    by_device: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for kind, label in ((0, "kernel"), (1, "memcpy"), (2, "memset")):
        for device in np.unique(gpu.device[gpu.kind == kind]):
            rows = (gpu.kind == kind) & (gpu.device == device)
            by_device[str(device)][label] = {"count": int(rows.sum()),
                                             "time_ns": int(gpu.dur[rows].sum())}  # fmt: skip
    copies = gpu.kind == MEMCPY
    return {
        "kernels": {"count": int((gpu.kind == KERNEL).sum()),
                    "time_ns": int(gpu.dur[gpu.kind == KERNEL].sum())},
        "memcpy": {"count": int(copies.sum()), "time_ns": int(gpu.dur[copies].sum()),
                   "bytes": int(np.maximum(gpu.bytes[copies], 0).sum())},
        "by_device": {d: dict(sorted(t.items())) for d, t in sorted(by_device.items())},
        "kernels_with_grid": len(trace.launch_params),
        "hlo_ops": len({trace.names[i] for i in trace.ops.name[trace.ops.kind == OP]}),
    }  # fmt: skip


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def expected(shown: str) -> dict[str, Any]:
    found = golden(shown)
    keys = ("kernels", "memcpy", "by_device", "kernels_with_grid", "hlo_ops")
    return {k: found[k] for k in keys}


# -- sniffing ------------------------------------------------------------------------------
def test_jax_files_are_sniffed_as_jax_and_kineto_traces_stay_kineto() -> None:
    for path in (XPLANE, TRACE_JSON, PERFETTO_JSON):
        found = sniff(str(path))
        assert found is not None and found.name == "jax", path
    for kineto in ("compiled_default_h200.json.gz", "compiled_reduce_overhead_h200.json.gz"):
        found = sniff(str(RECORDED / kineto))
        assert found is not None and found.name == "kineto"


def test_xspace_sniff_reads_the_first_plane_name(tmp_path: Path) -> None:
    reader = JaxReader()
    fake = tmp_path / "x.pb"
    fake.write_bytes(b"\x0a\x10\x12\x0e/device:GPU:0\x00")
    assert reader.sniff(str(fake))
    fake.write_bytes(b"\x0a\x10\x12\x0eother:GPU:0\x00\x00")
    assert not reader.sniff(str(fake))


# -- the trace-viewer JSON -----------------------------------------------------------------
@pytest.mark.parametrize("name", [TRACE_JSON.name, PERFETTO_JSON.name])
def test_json_matches_the_golden_numbers(name: str) -> None:
    trace = trace_of(str(RECORDED / name))
    assert summary(trace) == expected(f"recorded/{name}")
    assert trace.meta.format == "jax" and trace.meta.schema == "trace-json"
    assert trace.meta.vendor == "nvidia"
    assert trace.meta.extra["hlo_modules"] == ["jit_step"]


def test_json_kernels_carry_stream_launch_config_and_hlo_op() -> None:
    trace = trace_of(str(TRACE_JSON))
    gpu = trace.gpu
    assert set(gpu.stream.tolist()) == {24} and set(gpu.device.tolist()) == {0}
    first = int(np.flatnonzero(gpu.start == gpu.start.min())[0])
    assert trace.names[gpu.name[first]] == "gemm_fusion_dot_general_8"
    params = trace.launch_params
    row = int(np.flatnonzero(params.row == first)[0])
    assert (params.grid_x[row], params.grid_y[row], params.block_x[row]) == (128, 1, 128)
    assert (params.registers[row], params.shared_mem[row]) == (154, 98328)
    # every kernel of a command buffer was launched by its cuGraphLaunch, as the buffer's op
    owners = {trace.names[i] for i in parent_ops(trace, gpu.external_id)}
    assert owners == {"command_buffer_1"}
    launches = trace.host.correlation[trace.host.external_id >= 0]
    assert {trace.names[i] for i in trace.host.name[trace.host.external_id >= 0]} == {
        "cuGraphLaunch"
    }
    assert set(gpu.correlation.tolist()) <= set(launches.tolist())
    assert {"host_api", "links", "cpu_ops", "launch_params"} <= trace.meta.provides
    assert "devices" not in trace.meta.provides  # the JSON does not describe the GPU


def test_host_events_become_calls_frames_and_ranges() -> None:
    trace = trace_of(str(TRACE_JSON))
    calls = Counter(trace.names[i] for i in trace.host.name)
    # cuGraphCreate / cuGraphLaunch as the driver names them; the captured launches XLA named
    # after their kernels (correlation 2, 4, 6, 8 in each step's command_buffer::update)
    assert calls == {"cuGraphLaunch": 5, "cuGraphCreate": 8, "cuLaunchKernel": 8}
    ops = trace.ops
    frames = {trace.names[i] for i in ops.name[ops.kind == PYTHON]}
    assert "$profiler.py:151 start_trace" in frames
    names = {trace.names[i] for i in ops.name}
    assert {"PjitFunction(step)", "command_buffer::execute", "jit_step:XLA GPU module"} <= names


def test_a_truncated_json_keeps_its_complete_events(tmp_path: Path) -> None:
    import gzip

    text = gzip.decompress(TRACE_JSON.read_bytes())
    cut = tmp_path / "cut.trace.json"
    cut.write_bytes(text[: len(text) * 2 // 3])
    trace = read_trace(str(cut))
    assert trace.meta.truncated and 0 < len(trace.gpu) < 110
    assert trace.meta.warnings[0].startswith("truncated file")


# -- the XSpace ----------------------------------------------------------------------------
@needs_xprof
def test_xspace_matches_the_golden_numbers_and_the_json() -> None:
    space, text = trace_of(str(XPLANE)), trace_of(str(TRACE_JSON))
    assert summary(space) == expected("recorded/jax_step_h200.xplane.pb")
    assert summary(space)["kernels"] == summary(text)["kernels"]
    assert sorted(space.gpu.dur.tolist()) == sorted(text.gpu.dur.tolist())
    assert Counter(space.names[i] for i in space.gpu.name) == Counter(
        text.names[i] for i in text.gpu.name
    )
    assert np.array_equal(np.sort(space.gpu.start), np.sort(text.gpu.start))
    assert space.meta.schema == "xplane" and space.meta.vendor == "nvidia"
    (device,) = space.meta.devices
    assert (device.name, device.arch, device.compute_units) == ("NVIDIA H200", "sm_90", 132)
    assert space.meta.extra["jax_version"] == "0.11.2"
    assert "devices" in space.meta.provides
    assert space.meta.profiler_span is not None and space.meta.base_time_ns is not None


@needs_xprof
@pytest.mark.parametrize("relative", MI300)
def test_mi300x_captures_match_the_golden_numbers(relative: str) -> None:
    trace = trace_of(str(reference_file(relative)))
    assert summary(trace) == expected(relative)
    assert trace.meta.vendor == "amd"
    assert all(d.compute_units in (256, 304) for d in trace.meta.devices)


@needs_xprof
def test_legacy_mi300x_capture_agrees_with_tracelens_report() -> None:
    """TraceLens's kernel_launchers_summary.csv (per kernel: count and µs) and gpu_timeline.csv
    (GPU:7 computation 3.586493 ms; GPU:0 memcpy 0.889028 ms) of the same capture."""
    trace = trace_of(str(reference_file(LEGACY)))
    folder = reference_file(TRACELENS)
    gpu = trace.gpu
    for row in read_csv(folder / "kernel_launchers_summary.csv"):
        rows = (gpu.kind == KERNEL) & np.array([trace.names[i] == row["name"] for i in gpu.name])
        assert int(rows.sum()) == int(row["Count"])
        assert int(gpu.dur[rows].sum()) == round(float(row["total_direct_kernel_time_sum"]) * 1000)
    timeline = read_csv(folder / "gpu_timeline.csv")
    busy = {r["gpu_pid"]: float(r["time ms"]) for r in timeline if r["type"] == "busy_time"}
    kernels = (gpu.kind == KERNEL) & (gpu.device == 7)
    copies = (gpu.kind == MEMCPY) & (gpu.device == 0)
    assert int(gpu.dur[kernels].sum()) == round(busy["8"] * 1e6)  # pid 8 is /device:GPU:7
    assert int(gpu.dur[copies].sum()) == round(busy["1"] * 1e6)
    assert set(gpu.copy[copies].tolist()) == {DTOD}
    assert set(gpu.bytes[copies].tolist()) == {655360}
    owners = {trace.names[i] for i in parent_ops(trace, gpu.external_id[kernels])}
    assert owners == {"cudnn-conv.1.0", "input_transpose_fusion", "input_transpose_fusion.1",
                      "loop_transpose_fusion"}  # fmt: skip


def test_xspace_without_xprof_is_a_one_line_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "xprof", None)  # importing it now raises ImportError
    with pytest.raises(ReaderError, match=r"pip install 'gpuscope\[xplane\]'"):
        read_trace(str(XPLANE))
    assert main(["analyze", str(XPLANE)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gpuscope[xplane]" in err and "Traceback" not in err


# -- the profile folder --------------------------------------------------------------------
def profile_folder(tmp_path: Path) -> Path:
    run = tmp_path / "logdir" / "plugins" / "profile" / "2026_11_27_09_50_00"
    run.mkdir(parents=True)
    shutil.copy(XPLANE, run / "h200-host.xplane.pb")
    shutil.copy(TRACE_JSON, run / "h200-host.trace.json.gz")
    shutil.copy(PERFETTO_JSON, run / "perfetto_trace.json.gz")
    return tmp_path / "logdir"


def test_profile_folder_is_one_source(tmp_path: Path) -> None:
    (source,) = find_sources(str(profile_folder(tmp_path)))
    assert source.reader.name == "jax" and len(source.paths) == 3
    trace = read_trace(str(tmp_path / "logdir"))
    assert int((trace.gpu.kind == KERNEL).sum()) == 110
    assert trace.meta.schema == ("xplane" if has_xprof() else "trace-json")


def test_profile_folder_without_xprof_reads_the_json_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gpuscope.trace.readers.jax.reader.has_xprof", lambda: False)
    trace = read_trace(str(profile_folder(tmp_path)))
    assert trace.meta.schema == "trace-json"
    assert trace.meta.path.endswith("h200-host.trace.json.gz")
    assert any("gpuscope[xplane]" in w for w in trace.meta.warnings)


def test_a_damaged_xspace_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    if not has_xprof():
        pytest.skip("xprof (gpuscope[xplane]) not installed")
    cut = tmp_path / "cut.xplane.pb"
    cut.write_bytes(XPLANE.read_bytes()[:5000])
    try:
        trace = read_trace(str(cut))
    except ReaderError as error:
        assert "XSpace" in str(error)
    else:  # xprof reads what it can of a cut protobuf
        assert len(trace.gpu) <= 110
