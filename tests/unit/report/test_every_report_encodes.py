"""Every report encodes (issue 18): the JSON, Markdown and HTML of every input gpuscope reads
here, made by the command's own code (`commands.analyze`), the JSON validated against the
schema it names (`gpuscope.schemas`, draft 2020-12):

- every reference output of every format alone: `find_sources` on each file and each folder of
  `../shared/reference` (read in place; skipped when absent), and the bundled traces;
- every folder of several as `gpuscope analyze FOLDER` sees it (an analysis-set, or a job);
- jobs: a bundled trace as ranks 0 and 1 (told by `rank<R>/` folders), the real rank pair
  (HTA's A100 ranks 0 and 1), and jobs that benchmarks/make_rank_traces.py makes from it: 4
  ranks on 2 hosts with a late rank, 2 ranks whose collectives carry their sizes (the `--json`
  crash of a real DDP job), 3 ranks of which one recorded no collective (an unaligned clock);
- `gpuscope diff` of every input with the next one (and the documented real pairs): JSON
  (`gpuscope.diff/1`), Markdown and HTML.

Before encoding, the report dicts must hold plain data only (str, int, finite float, bool, None,
lists / tuples, str-keyed dicts): a numpy scalar crashes the JSON encoder, and a NaN would be
written as null without a word. Integers must be ints in the JSON (2.0 is not a count). Every
failing input is listed, not only the first.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import math
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from gpuscope import schemas
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.categories import load_rules
from gpuscope.analysis.pipeline import analyze
from gpuscope.commands.analyze import _analyze_one, _lead, json_report
from gpuscope.commands.analyze import _analyze_sources as analyze_sources
from gpuscope.diff import diff
from gpuscope.errors import GpuscopeError
from gpuscope.trace.registry import Source, find_sources, read_source
from tests.views import render_diff_html, render_diff_markdown, render_html, render_markdown

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / ".." / "shared" / "reference"
BUNDLED = (REPO / "tests" / "data", REPO / "src" / "gpuscope" / "data" / "examples")
TRACES = REFERENCE / "traces"
PAIR = [TRACES / f"hta__a100_sampled_rank-{r}.json.gz" for r in (0, 1)]
PREFILL = TRACES / "llama_prefill_h200.json.gz"
UNIONS = (REFERENCE, REFERENCE / "formats")  # folders that only repeat the ones below them
DIFF_PAIRS = (  # docs/diff.md: a kernel lost; NVIDIA against AMD (matched by op and shape); an
    # A100 against a V100 (matched by architecture-neutral name and by launching op)
    ("hta__trace_compare_base.json.gz", "hta__trace_compare_test.json.gz"),
    ("tl__h100_bert-small_inference.json.gz", "tl__mi300x_bert-small_inference.json.gz"),
    ("hta__a100_sampled_rank-0.json.gz", "hta__v100_profile_memory_nccl_rank1_BENCH.json.gz"),
)
Key = tuple[str, tuple[str, ...]]


def need_reference() -> None:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference outputs not found: {REFERENCE.resolve()}")


def _targets(root: Path) -> Iterator[str]:
    """`root`, every folder and every file below it (no hidden ones), in a stable order."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        yield folder
        yield from (os.path.join(folder, f) for f in sorted(files) if not f.startswith("."))


@functools.cache
def sources() -> dict[Key, Source]:
    """Every source that `gpuscope analyze` finds in a file or folder here, once each."""
    roots = [p for p in (*BUNDLED, REFERENCE) if p.is_dir()]
    found: dict[Key, Source] = {}
    for target in (t for root in roots for t in _targets(root)):
        try:
            for source in find_sources(target):
                found.setdefault((source.reader.name, source.paths), source)
        except GpuscopeError:
            continue  # not a profiler output: the command says so, no report
    return found


@functools.cache
def folders_of_several() -> tuple[str, ...]:
    folders = [t for t in _targets(REFERENCE) if os.path.isdir(t) and Path(t) not in UNIONS]
    return tuple(f for f in folders if _count(f) > 1)


def _count(folder: str) -> int:
    try:
        return len(find_sources(folder))
    except GpuscopeError:
        return 0


@functools.cache
def report(key: Key) -> dict[str, Any] | None:
    """What `gpuscope analyze` reports for one source; None when it cannot be read (the
    command's error line, tested elsewhere)."""
    try:
        return _analyze_one(sources()[key], load_rules(None), 15)
    except GpuscopeError:
        return None


def not_plain(value: Any, where: str = "") -> Iterator[str]:
    """Where `value` holds anything but plain JSON-able Python data."""
    kind = type(value)
    if kind is dict:
        for k, v in value.items():
            if type(k) is not str:
                yield f"{where}: key {k!r} of type {type(k).__name__}"
            yield from not_plain(v, f"{where}.{k}")
    elif kind in (list, tuple):
        for i, v in enumerate(value):
            yield from not_plain(v, f"{where}[{i}]")
    elif kind is float and not math.isfinite(value):
        yield f"{where}: {value!r} (a number that cannot be computed is None)"
    elif kind not in (str, int, float, bool, type(None)):
        yield f"{where}: {value!r} of type {kind.__module__}.{kind.__qualname__}"


@functools.cache
def validator(tag: str) -> Any:
    """Draft 2020-12, strict about integers: a JSON 2.0 is not an integer here."""
    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", lambda _, x: type(x) is int)
    strict = jsonschema.validators.extend(base, type_checker=checker)
    schema = schemas.load(tag)
    base.check_schema(schema)
    return strict(schema)


def problems_of(reports: list[dict[str, Any]], ranks: dict[str, Any] | None) -> list[str]:
    """Plain data, a JSON that validates, Markdown and HTML that render; what failed."""
    found = [p for i, r in enumerate(reports) for p in not_plain(r, f"reports[{i}]")]
    found += list(not_plain(ranks, "ranks"))
    if found:
        return found[:10]
    data = json.loads(json_report(reports, ranks))
    errors = validator(data["schema"]).iter_errors(data)
    found += [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors]
    lead = _lead(ranks, [])
    for name, render in (("markdown", render_markdown), ("html", render_html)):
        try:
            assert render(reports, lead)
        except Exception as error:  # every input's failures are listed, not the first
            found.append(f"{name}: {type(error).__name__}: {error}")
    return found[:10]


def check(cases: Sequence[tuple[str, Callable[[], tuple[list[Any], Any]]]]) -> int:
    """Every case's problems, all of them in one failure; the number of documents checked."""
    failed: list[str] = []
    checked = 0
    for name, make in cases:
        reports, ranks = make()
        if not reports:
            continue
        checked += 1
        failed += [f"{name}: {p}" for p in problems_of(reports, ranks)]
    assert not failed, f"{len(failed)} problems:\n" + "\n".join(failed)
    return checked


def as_command(paths: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """`gpuscope analyze PATHS...` with several traces: the reports and the cross-rank part."""
    found = [s for p in paths for s in find_sources(p)]
    args = argparse.Namespace(categories=None, top=15, engine="local", workers=1, traces=paths)
    reports, ranks, _ = analyze_sources(found, args)
    return reports, ranks


def test_every_input_alone_encodes_validates_and_renders() -> None:
    cases = [
        (" + ".join(k[1]), lambda k=k: ([r] if (r := report(k)) else [], None)) for k in sources()
    ]
    checked = check(cases)
    assert checked >= (90 if REFERENCE.is_dir() else len(BUNDLED))


def test_every_folder_of_several_as_one_command() -> None:
    need_reference()
    folders = folders_of_several()
    assert len(folders) >= 10
    check([(folder, lambda f=folder: as_command([f])) for folder in folders])


def make_rank_traces() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_rank_traces", REPO / "benchmarks" / "make_rank_traces.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The jobs, each as the paths given to the command: a bundled trace as ranks 0 and 1 told
    by their folders (runs without ../shared), the real pair and the generated jobs."""
    root = tmp_path_factory.mktemp("jobs")
    bundled = BUNDLED[0] / "patterns_h200.json.gz"
    for rank in (0, 1):
        (root / "folders" / f"rank{rank}").mkdir(parents=True)
        shutil.copy(bundled, root / "folders" / f"rank{rank}" / bundled.name)
    found = {"bundled trace twice, rank<R>/ folders": [str(root / "folders")]}
    if not all(p.is_file() for p in (*PAIR, PREFILL)):
        return found
    gen = make_rank_traces()
    made = {
        "4 ranks, 2 hosts": gen.make(4, root / "four", ranks_per_host=2),
        "2 ranks, sized collectives": gen.make(2, root / "sized", comm_elems=1 << 20),
        "3 ranks, one without collectives": gen.make(3, root / "three", (*PAIR, PREFILL)),
    }
    return {**found, "HTA A100 pair": [str(p) for p in PAIR],
            **{name: [str(p.parent)] for name, (p, *_) in made.items()}}  # fmt: skip


def test_rank_sets_encode_validate_and_render(jobs: dict[str, list[str]]) -> None:
    results = {name: as_command(paths) for name, paths in jobs.items()}
    assert all(ranks is not None for _, ranks in results.values()), "not seen as jobs"
    check([(name, lambda r=result: r) for name, result in results.items()])
    if "HTA A100 pair" not in jobs:
        pytest.skip(f"only the bundled job: reference rank traces not found under {TRACES}")
    sized = results["2 ranks, sized collectives"][1]
    assert sized is not None and sized["bandwidth"], "no bandwidth: the crash case is not hit"
    three = results["3 ranks, one without collectives"][1]
    assert three is not None and three["clock"]["unaligned_ranks"] == [2]


def diff_problems(before: Analysis, after: Analysis) -> list[str]:
    """`gpuscope diff --json / --md / --html` of the pair; what failed."""
    try:
        report = diff(before, after).to_dict()
        found = list(not_plain(report))
        if found:
            return found[:10]
        data = json.loads(msgspec.json.encode(report))  # as commands/diff.py writes it
        errors = validator("gpuscope.diff/1").iter_errors(data)
        found += [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors]
        assert render_diff_markdown(report) and render_diff_html(report)
    except Exception as error:  # every pair's failures are listed, not the first
        found = [f"{type(error).__name__}: {error}"]
    return found[:10]


def analyses() -> Iterator[Analysis]:
    """Every readable input analysed as `gpuscope diff` does, one at a time (memory stays flat)."""
    for source in sources().values():
        try:
            yield analyze(read_source(source), load_rules(None))
        except GpuscopeError:
            continue


def test_every_input_diffed_with_the_next() -> None:
    pairs = [(TRACES / a, TRACES / b) for a, b in DIFF_PAIRS]
    failed: list[str] = []
    first = previous = None
    for current in analyses():
        if previous is None:
            first = current
        else:
            name = f"{previous.trace.meta.path} → {current.trace.meta.path}"
            failed += [f"{name}: {p}" for p in diff_problems(previous, current)]
        previous = current
    if first is not None and previous is not None and previous is not first:
        failed += [f"last → first: {p}" for p in diff_problems(previous, first)]
    for a, b in (p for p in pairs if p[0].is_file() and p[1].is_file()):
        pair = [analyze(read_source(find_sources(str(x))[0]), load_rules(None)) for x in (a, b)]
        failed += [f"{a.name} → {b.name}: {p}" for p in diff_problems(*pair)]
    assert not failed, f"{len(failed)} problems:\n" + "\n".join(failed)


def test_a_report_that_holds_numpy_or_nan_is_caught() -> None:
    np = pytest.importorskip("numpy")
    ranks = {"bandwidth": [{"algbw_gbs": np.float64(1.5), "count": np.int64(2)}],
             "busy": float("nan"), "ok": (1, "a", None)}  # fmt: skip
    found = list(not_plain(ranks))
    assert [f.split(":")[0] for f in found] == [
        ".bandwidth[0].algbw_gbs",
        ".bandwidth[0].count",
        ".busy",
    ]
    assert found[0].endswith("numpy.float64") and found[1].endswith("numpy.int64")


def test_the_schemas_are_strict_where_it_matters() -> None:
    path = next(k for k in sources() if k[1][0].endswith("patterns_h200.json.gz"))
    good = json.loads(json_report([report(path) or {}]))
    assert not list(validator("gpuscope.analysis/1").iter_errors(good))
    for bad in (
        {**good, "kernels": {**good["kernels"], "count": 2.0}},  # a count as a float
        {**good, "utilization": 1.5},  # a share past 1
        {**good, "verdict": {**good["verdict"], "bound": "slow"}},  # not a verdict
        {**good, "findings": [{**good["findings"][0], "severity": "high"}]},
        {**good, "surprise": 1},  # an undocumented key
        {k: v for k, v in good.items() if k != "gaps"},  # a missing key (null when unknown)
    ):
        assert list(validator("gpuscope.analysis/1").iter_errors(bad))
