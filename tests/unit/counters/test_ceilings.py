"""Roofs: a user's peaks file wins, then what `gpuscope bench` measured on this device name
(bf16 and bandwidth; other precisions stay datasheet, labelled), then the datasheet."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from gpuscope.counters.ceilings import ceilings_for, load_peaks_file
from gpuscope.errors import InputError
from gpuscope.trace.model import Device

H100 = Device(id=0, name="NVIDIA H100 80GB HBM3", arch="sm_90", compute_units=132)


def _sheet(label: str) -> dict:
    text = resources.files("gpuscope").joinpath("data/peaks.json").read_text("utf-8")
    return next(d for d in json.loads(text)["devices"] if d["label"] == label)


def test_datasheet_when_nothing_else(tmp_path: Path) -> None:
    roofs = ceilings_for(H100, bench_cache=tmp_path / "none.json")
    sheet = _sheet("NVIDIA H100 SXM5")
    assert roofs is not None and roofs.kind == "datasheet"
    assert roofs.bandwidth == sheet["bandwidth_gbs"] * 1e9
    assert roofs.flops["fp64"] == sheet["tflops"]["fp64"] * 1e12


def test_bench_measurement_replaces_bf16_and_bandwidth(tmp_path: Path) -> None:
    cache = tmp_path / "peaks.json"
    key = "NVIDIA H100 80GB HBM3|580.1|CUDA 13.0|2.11.0"
    cache.write_text(json.dumps({key: {"device": H100.name, "tflops": 700.0, "gbps": 2900.0,
                                       "method": "hot medians"}}))  # fmt: skip
    roofs = ceilings_for(H100, bench_cache=cache)
    assert roofs is not None and roofs.kind == "measured"
    assert roofs.bandwidth == 2900e9 and roofs.flops["bf16"] == 700e12
    assert roofs.kind_of("fp32") == "datasheet" and roofs.kind_of("bf16") == "measured"
    assert roofs.flops["fp32"] == _sheet("NVIDIA H100 SXM5")["tflops"]["fp32"] * 1e12


def test_user_file_wins_and_device_names_pick_an_entry(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    mine = {"label": "a", "names": [H100.name], "tflops": {"fp32": 50}, "bandwidth_gbs": 3000}
    other = {"label": "b", "names": ["other"], "tflops": {"fp32": 1}, "bandwidth_gbs": 1}
    path.write_text(json.dumps({"devices": [mine, other]}))
    roofs = ceilings_for(H100, str(path))
    assert roofs is not None and (roofs.kind, roofs.label, roofs.bandwidth) == ("user", "a", 3000e9)


def test_device_name_option_when_the_trace_has_none() -> None:
    roofs = ceilings_for(None, device_name="AMD Instinct MI250X (one GCD)")
    assert roofs is not None and roofs.bandwidth == 1638.4e9


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "cannot read a peaks JSON file"),
     ('{"tflops": {"fp32": "fast"}}', "must be numbers"),
     ('{"label": "x"}', "neither tflops nor bandwidth_gbs"),
     ('{"devices": [{"names": ["a"]}, {"names": ["b"]}]}', "no entry names the trace's device")],
)  # fmt: skip
def test_bad_peaks_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_peaks_file(str(path), H100)
