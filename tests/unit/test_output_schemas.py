"""Every output without an analysis schema validates against its own (issue 21.3): the counters
report of every input here that holds counters, a benchmark and an A/B test, a run's manifest
(start and end), a libperf report made with the fake vendor binaries, `doctor --json` and the
metadata of an exported timeline (issue 25); the shipped bench, run and doctor schemas are
still what the types say (scripts/make_schemas.py), whichever msgspec release derives them."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import gpuscope
from gpuscope.counters.pipeline import analyse_counters
from gpuscope.errors import GpuscopeError
from gpuscope.trace.registry import read_source
from tests.integration.test_libperf_cli import env, trace  # noqa: F401 - fixtures
from tests.integration.test_libperf_cli import gpuscope as cli
from tests.unit.report.test_every_report_encodes import REFERENCE, not_plain, sources, validator

pytest.importorskip("jsonschema")
REPO = Path(__file__).resolve().parents[2]


def errors(data: dict[str, Any]) -> list[str]:
    found = list(not_plain(data))
    data = json.loads(json.dumps(data))
    found += [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
              for e in validator(data["schema"]).iter_errors(data)]  # fmt: skip
    return found[:5]


def test_every_counters_report_validates() -> None:
    failed, checked = [], 0
    for key, source in sources().items():
        try:
            found = read_source(source)
            if not len(found.counters):
                continue
            report = analyse_counters([found]).to_dict()
        except GpuscopeError:
            continue  # not a counters input this version analyses: an error line, tested elsewhere
        checked += 1
        failed += [f"{' + '.join(key[1])}: {e}" for e in errors(report)]
    assert not failed, "\n".join(failed)
    assert checked >= (15 if REFERENCE.is_dir() else 1)


def test_a_benchmark_and_an_ab_test_validate() -> None:
    m = gpuscope.bench(lambda: sum(range(100)), budget_s=0.05, min_samples=5)
    c = gpuscope.compare(lambda: sum(range(100)), lambda: sum(range(110)), budget_s=0.1)
    for result in (m, c):
        data = msgspec.to_builtins(result)
        assert not errors(data), errors(data)
    bad = {**msgspec.to_builtins(m), "samples_us": "fast"}
    assert errors(bad)


def test_a_run_manifest_validates(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "gpuscope", "run", "-q", "--output-dir", str(tmp_path / "runs"),
            "--", sys.executable, "-c", "pass"]  # fmt: skip
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr
    (manifest,) = (tmp_path / "runs").glob("*/manifest.json")
    data = json.loads(manifest.read_text())
    assert data["status"] != "running" and not errors(data), errors(data)
    assert errors({**data, "exit_code": "zero"})
    assert errors({**data, "surprise": 1})  # every key of a manifest is known


def test_a_libperf_report_validates(tmp_path: Path, env: dict[str, str], trace: Path) -> None:  # noqa: F811
    done = cli(env, tmp_path, "libperf", str(trace), "--timeout-s", "2", "--json", "r.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert not errors(report), errors(report)


def test_a_doctor_report_validates(tmp_path: Path) -> None:
    from gpuscope.doctor.diagnose import diagnose
    from gpuscope.tools.config import load_catalog
    from gpuscope.tools.host import Gpu, HostInfo

    argv = [sys.executable, "-m", "gpuscope", "doctor", "--json", "doctor.json"]
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=environment,
                          cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    here = json.loads((tmp_path / "doctor.json").read_text())
    assert here["schema"] == "gpuscope.doctor/1" and not errors(here), errors(here)
    fakes = str(REPO / "tests" / "fakes" / "bin")  # ready tools, a GPU of each kind
    mi300 = Gpu(0, "AMD gfx942", "AMD", "gfx942", 192 << 30)
    h200 = Gpu(0, "NVIDIA H200", "NVIDIA")
    for host in (HostInfo("AMD", (mi300,), "6.8.5", "ROCm 7.0"),
                 HostInfo("NVIDIA", (h200,), "580.1", "CUDA 13.0")):  # fmt: skip
        report = diagnose(load_catalog(), env={"PATH": fakes}, host=host).to_dict()
        assert report["host"]["gpus"] and any(t["ok"] for t in report["tools"])
        assert not errors(report), errors(report)
    assert errors({**here, "tools": [{"name": "nsys", "ok": "yes", "detail": "", "needs": []}]})
    assert errors({**here, "host": {**here["host"], "surprise": 1}})


def test_an_exported_timeline_validates(tmp_path: Path) -> None:
    example = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
    argv = [sys.executable, "-m", "gpuscope", "export", str(example), "-o", "timeline.json"]
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=environment,
                          cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    meta = json.loads((tmp_path / "timeline.json").read_text())["gpuscope"]
    assert meta["schema"] == "gpuscope.perfetto/1" and meta["sources"][0]["written"]
    assert not errors(meta), errors(meta)
    assert errors({**meta, "events": -1})
    assert errors({**meta, "timeline": {**meta["timeline"], "clock": "tsc"}})


@dataclasses.dataclass
class _Sample:
    """First line.

    Indented second paragraph, as a docstring in a class body is written.
    """

    tags: list[str] = dataclasses.field(default_factory=list)
    limit: int | None = None
    name: str = "x"


def test_what_msgspec_derives_is_normalised() -> None:
    """The same schema whichever msgspec release derives it (0.18 kept the docstring's indent,
    gave no default for a factory and listed `None` first; 0.23 does none of these)."""
    spec = importlib.util.spec_from_file_location(
        "make_schemas", REPO / "scripts" / "make_schemas.py"
    )
    assert spec is not None and spec.loader is not None
    make_schemas = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_schemas)
    (ref,), defs = make_schemas.components([_Sample])
    sample = defs["_Sample"]
    assert ref == {"$ref": "#/$defs/_Sample"}
    assert sample["description"] == (
        "First line.\n\nIndented second paragraph, as a docstring in a class body is written."
    )
    tags, limit, name = (sample["properties"][k] for k in ("tags", "limit", "name"))
    assert tags == {"type": "array", "items": {"type": "string"}, "default": []}
    assert list(limit) == ["anyOf", "default"] and limit["default"] is None
    assert limit["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert list(name)[-1] == "default" and name["default"] == "x"


def test_the_generated_schemas_are_current() -> None:
    script = REPO / "scripts" / "make_schemas.py"
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, str(script), "--check"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr
