"""The inputs the fuzzer damages: real profiler outputs, read in place and never copied into the
repository, grouped by the reader that claims them.

Sources: `shared/reference/formats/` (rocprof v1, rocprofv3, rpd, nsys, ncu), the Kineto traces
of `shared/reference/traces/` and `tests/data/`, and one rocprofv3 JSON built by the rocprofv3
tests (no real one is public). Besides single files, a few whole output directories are seeds:
one of their files is damaged and the directory is analysed, as `gpuscope analyze DIR` would.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from gpuscope.trace._sniff import SQLITE_MAGIC
from gpuscope.trace.registry import sniff

REPO = Path(__file__).resolve().parents[2]
REFERENCE = (REPO / ".." / "shared" / "reference").resolve()
FOLDERS = ("rocprof-v1", "rocprofv3", "rpd", "nsys", "ncu-csv")
DIRECTORIES = (
    "rocprof-v1/hip-programming-gfx942",
    "rocprofv3/amd-docs-rocm6.2-2024-10",
    "nsys/vectoraddition-a100-nsys2022.2/stats-by-nsys2025.3",
)
MAX_JSON_BYTES = 1_300_000  # larger Kineto traces make a case slow without reaching new code


@dataclass(frozen=True)
class Seed:
    """A file, or a directory of one run's outputs (then one file in it is damaged per case)."""

    format: str  # the registry name of the reader that claims it
    path: Path

    @property
    def label(self) -> str:
        try:
            return str(self.path.relative_to(REFERENCE))
        except ValueError:
            return self.path.name


def kind_of(path: Path) -> str:
    """How a file is damaged: "sqlite", "gzip", "json" or "text" (CSV and logs)."""
    with open(path, "rb") as handle:
        head = handle.read(64)
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    return "json" if head.lstrip()[:1] in (b"{", b"[") else "text"


def too_big(path: Path) -> bool:
    """A JSON trace whose raw text is over MAX_JSON_BYTES (other formats are all small)."""
    kind = kind_of(path)
    if kind == "json":
        return path.stat().st_size > MAX_JSON_BYTES
    if kind != "gzip":
        return False
    with gzip.open(path, "rb") as handle:
        return len(handle.read(MAX_JSON_BYTES + 1)) > MAX_JSON_BYTES


def claimed_files(directory: Path) -> list[Path]:
    """The files in `directory` (not below it) that some reader claims, sorted by name."""
    found = []
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.stat().st_size > 0 and sniff(str(path)) is not None:
            found.append(path)
    return found


def _reference_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        root = REFERENCE / "formats" / folder
        if root.is_dir():
            files += sorted(p for p in root.rglob("*") if p.is_file())
    traces = REFERENCE / "traces"
    if traces.is_dir():
        files += sorted(traces.glob("*.json*"))
    # recorded for gpuscope: the same traces as in shared/reference, used when that is absent
    names = {p.name for p in files}
    files += [p for p in sorted((REPO / "tests" / "data").glob("*.json.gz")) if p.name not in names]
    return files


def write_synthetic(folder: Path) -> list[Path]:
    """The rocprofv3 JSON the rocprofv3 tests build from rocprofiler-sdk's serialisation."""
    from tests.unit.trace.test_rocprofv3 import json_document

    folder.mkdir(parents=True, exist_ok=True)
    plain = folder / "908_results.json"
    plain.write_text(json.dumps(json_document(908)))
    packed = folder / "909_results.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(json_document(909)).encode(), mtime=0))
    return [plain, packed]


def catalogue(synthetic: Path) -> dict[str, list[Seed]]:
    """Every seed, by reader name; `synthetic` is a folder for the generated ones."""
    seeds: dict[str, list[Seed]] = {}
    for path in [*_reference_files(), *write_synthetic(synthetic)]:
        if path.stat().st_size == 0 or too_big(path):
            continue
        reader = sniff(str(path))
        if reader is not None:
            seeds.setdefault(reader.name, []).append(Seed(reader.name, path))
    for relative in DIRECTORIES:
        folder = REFERENCE / "formats" / relative
        files = claimed_files(folder) if folder.is_dir() else []
        if files:
            name = sniff(str(files[0]))
            assert name is not None
            seeds.setdefault(name.name, []).append(Seed(name.name, folder))
    return {name: seeds[name] for name in sorted(seeds)}
