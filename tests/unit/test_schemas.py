"""`gpuscope.schemas`: the shipped JSON Schemas load by tag or kind, are valid draft 2020-12
schemas, match the tags the writers put in their documents, and embed what they refer to.
(tests/unit/report/test_every_report_encodes.py validates every report against them.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope import schemas
from gpuscope.errors import InputError
from gpuscope.schemas import ANALYSIS, BENCH, COUNTERS, DIFF, DOCTOR, LIBPERF, PERFETTO, RANKS, RUN
from gpuscope.schemas import ANALYSIS_SET as SET_SCHEMA

jsonschema = pytest.importorskip("jsonschema")
REPO = Path(__file__).resolve().parents[2]


def test_every_analysis_output_has_its_schema() -> None:
    written = {ANALYSIS, SET_SCHEMA, RANKS, DIFF, COUNTERS, BENCH, LIBPERF, RUN, DOCTOR, PERFETTO}
    assert written <= set(schemas.names())
    for tag in schemas.names():
        schema = schemas.load(tag)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["title"] == tag and schema["properties"]["schema"] == {"const": tag}


def test_load_by_tag_or_by_kind() -> None:
    assert schemas.load("ranks") == schemas.load("gpuscope.ranks") == schemas.load(RANKS)
    with pytest.raises(InputError, match=r"no schema named 'nope'; known: gpuscope\.analysis"):
        schemas.load("nope")
    with pytest.raises(InputError):
        schemas.load("gpuscope.ranks/9")


def test_a_set_schema_validates_on_its_own() -> None:
    """It refers to the analysis and ranks schemas by id: they come embedded."""
    schema = schemas.load(SET_SCHEMA)
    assert {"analysis-1", "ranks-1"} <= set(schema["$defs"])
    validator = jsonschema.Draft202012Validator(schema)  # no registry: nothing to fetch
    bare = {"schema": SET_SCHEMA, "reports": [{"schema": ANALYSIS}]}
    missing = {e.message for e in validator.iter_errors(bare)}
    assert "'kernels' is a required property" in missing  # the analysis schema applied
    assert list(validator.iter_errors({"schema": SET_SCHEMA, "reports": []}))


def test_the_schema_command_prints_one_or_lists_them(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-m", "gpuscope", "schema"]
    listed = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=60, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == schemas.names()
    one = subprocess.run([*argv, "counters"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=60, env=env)  # fmt: skip
    assert one.returncode == 0 and json.loads(one.stdout) == schemas.load(COUNTERS)
    bad = subprocess.run([*argv, "nope"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=60, env=env)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.startswith("error: no schema named 'nope'")


def test_loading_a_schema_imports_nothing_heavy(tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "from gpuscope import schemas\n"
        "schemas.load('gpuscope.analysis-set/1')\n"
        "print(json.dumps([m for m in ('numpy', 'msgspec', 'rich') if m in sys.modules]))\n"
    )
    env = {"PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-c", probe]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
