"""The reader registry: every built-in reader registered (by a static import, so a renamed module
fails loudly), third-party readers after them, a duplicate name refused; each format's package
loads only what sniffing needs, so reading a Kineto JSON loads no SQLite reader; and no reader
imports another reader's private module."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.trace import Trace, registry
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace.readers.jax import JaxReader
from gpuscope.trace.readers.kineto import KinetoReader
from gpuscope.trace.readers.ncu import NcuReader
from gpuscope.trace.readers.nsys import NsysReader
from gpuscope.trace.readers.pftrace import PftraceReader
from gpuscope.trace.readers.rocpd import RocpdReader
from gpuscope.trace.readers.rocprof import RocprofReader
from gpuscope.trace.readers.rocprofv3 import Rocprofv3Reader
from gpuscope.trace.readers.rpd import RpdReader

REPO = Path(__file__).resolve().parents[3]
READERS = REPO / "src" / "gpuscope" / "trace" / "readers"
BUNDLED = REPO / "src" / "gpuscope" / "data" / "examples" / "llama_decode_h200.json.gz"
# in sniffing order: specific formats before generic JSON
BUILTIN = {
    "rocprof": RocprofReader,
    "rocprofv3": Rocprofv3Reader,
    "rocpd": RocpdReader,
    "rpd": RpdReader,
    "nsys": NsysReader,
    "ncu": NcuReader,
    "jax": JaxReader,  # its trace-viewer JSON is a Chrome trace too: before Kineto
    "pftrace": PftraceReader,
    "kineto": KinetoReader,
}
# what sniffing a file loads of each other format's package besides its `__init__` and `reader`:
# the modules with the tests of its file kinds (rocprof's sit beside the readers of those kinds)
SNIFFING = {
    "rocprof": {
        *("_dispatch_csv", "_json", "_stats", "_sysinfo"),
        *("_dispatch", "_piece", "_jsonevents", "_flows", "_sizes"),  # what those import
    },
    "rocprofv3": {"_files"},
    "rocpd": {"_meta"},
    "rpd": {"_json", "_vocab"},
    "nsys": {"_export", "_reports", "_stats_text"},
    "ncu": set(),
    "jax": set(),
    "pftrace": set(),
}


class Fake:
    def __init__(self, name: str) -> None:
        self.name = name

    def sniff(self, path: str) -> bool:
        return False

    def read(self, path: str, progress: Progress | None = None) -> Trace:
        raise AssertionError("never read")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty registry, built-ins not yet loaded (the state of a new process)."""
    monkeypatch.setattr(registry, "_READERS", {})
    monkeypatch.setattr(registry, "_loaded", False)


def test_every_builtin_reader_is_registered_in_sniffing_order() -> None:
    found = registry.readers()
    assert list(found)[: len(BUILTIN)] == list(BUILTIN)
    for name, cls in BUILTIN.items():
        assert type(found[name]) is cls
        assert found[name].name == name


def test_the_formats_named_in_help_are_the_builtin_readers() -> None:
    """Issue 25: `analyze --help` left out JAX and Perfetto, a copied list grown stale. The list
    lives in gpuscope/formats.py (light: --help imports no numpy), one line per reader."""
    from gpuscope.formats import FORMATS, formats_help

    assert set(FORMATS) == {r.name for r in registry.builtin_readers()}
    assert formats_help() == registry.FORMATS_HELP
    for word in ("JAX", "Perfetto", "torch.profiler", "rocpd", "Nsight Compute"):
        assert word in formats_help()


def test_analyze_help_lists_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuscope.cli import main
    from gpuscope.formats import FORMATS

    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    assert all(label in shown for label in FORMATS.values())


def test_one_list_of_formats_for_help_docs_and_history() -> None:
    """Each format's label heads its row of docs/analyze.md's table; its file endings (which a
    workload's name drops in the history) are listed for every reader, once, longest first."""
    from gpuscope.formats import ENDINGS, FORMATS, endings
    from gpuscope.history.metrics import workload_from_path

    assert set(ENDINGS) == set(FORMATS)
    rows = [line for line in (REPO / "docs" / "analyze.md").read_text().splitlines()
            if line.startswith("| ") and line.count("|") == 4]  # fmt: skip
    for label in FORMATS.values():
        assert sum(row.startswith(f"| {label}") for row in rows) == 1, label
    assert endings()[0] in (".nsys-rep", ".json.gz") and len(set(endings())) == len(endings())
    assert workload_from_path("run/llama.json.gz") == "llama"
    assert workload_from_path("host.xplane.pb") == "host.xplane"


def test_a_reader_plugs_in_through_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """A package's entry point of the `gpuscope.readers` group: read on first use, after the
    built-ins, before readers registered at run time."""
    monkeypatch.setattr(registry, "_READERS", {})
    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "installed", lambda: [Fake("theirs")])
    registry.register(Fake("mine"))
    assert list(registry.readers()) == [*BUILTIN, "theirs", "mine"]
    assert registry.GROUP == "gpuscope.readers"


@pytest.mark.usefixtures("fresh")
def test_third_party_readers_come_after_the_builtins() -> None:
    registry.register(Fake("mine"))  # before the first use, as a plug-in at import time
    assert list(registry.readers()) == [*BUILTIN, "mine"]
    registry.register(Fake("later"))
    assert list(registry.readers()) == [*BUILTIN, "mine", "later"]


@pytest.mark.usefixtures("fresh")
def test_a_duplicate_name_raises() -> None:
    registry.readers()
    with pytest.raises(ValueError, match="'kineto' is already registered"):
        registry.register(Fake("kineto"))
    registry.register(Fake("mine"))
    with pytest.raises(ValueError, match="'mine' is already registered"):
        registry.register(Fake("mine"))


@pytest.mark.usefixtures("fresh")
def test_a_builtin_name_taken_before_the_first_use_raises_on_it() -> None:
    registry.register(Fake("nsys"))
    with pytest.raises(ValueError, match="'nsys' is already registered"):
        registry.readers()


@pytest.mark.usefixtures("fresh")
def test_a_builtin_reader_that_cannot_be_imported_fails_loudly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gpuscope.trace.readers.ncu", None)  # as if renamed
    with pytest.raises(ImportError, match=r"gpuscope\.trace\.readers\.ncu"):
        registry.readers()


_PROBE = """
import json, sys
from gpuscope.trace.registry import read_trace
read_trace(sys.argv[1])
print(json.dumps(sorted(m for m in sys.modules if m.startswith("gpuscope.trace"))))
"""


def test_reading_a_kineto_json_loads_no_other_reader() -> None:
    """The other formats are sniffed, never read: none of their read paths is imported (the
    SQLite readers, `_sql_scan`, the nsys stats, the rocprofv3 and ncu readers)."""
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(BUNDLED)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout.splitlines()[-1]))
    assert "gpuscope.trace.readers.kineto.reader" in loaded
    assert "gpuscope.trace._sql_scan" not in loaded
    for package, sniffing in SNIFFING.items():
        modules = {p.stem for p in (READERS / package).glob("*.py")} - {"__init__", "reader"}
        assert sniffing <= modules, f"{package}: {sniffing - modules} no longer exist"
        read_path = {f"gpuscope.trace.readers.{package}.{m}" for m in modules - sniffing}
        assert not loaded & read_path, package


def test_no_reader_imports_another_readers_private_module() -> None:
    packages = {p.name for p in READERS.iterdir() if (p / "__init__.py").exists()}
    assert packages >= set(BUILTIN)
    for package in packages:
        for file in (READERS / package).glob("*.py"):
            for imported in _imports(file):
                parts = imported.split(".")
                if parts[:3] != ["gpuscope", "trace", "readers"] or len(parts) < 5:
                    continue
                private = any(p.startswith("_") for p in parts[4:])
                assert parts[3] == package or not private, f"{file.name} imports {imported}"


def _imports(file: Path) -> list[str]:
    """Every module `file` imports, and every name it imports from a module (`from a import _b`
    is `a._b`)."""
    found = []
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


REFERENCE_ROCPROF = (
    Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "formats" / "rocprof-v1"
    / "kokkos-rocm4-2021"
)  # fmt: skip


def test_the_files_of_one_run_named_one_by_one_are_one_trace() -> None:
    """`gpuscope analyze out/results.*` reads what `gpuscope analyze out/` reads: rocprof's
    results.db, its stats CSVs and results.sysinfo.txt were six traces (and the sysinfo file
    alone an error)."""
    from gpuscope.trace.registry import find_sources, together

    if not REFERENCE_ROCPROF.is_dir():
        pytest.skip(f"reference outputs not found: {REFERENCE_ROCPROF.resolve()}")
    files = sorted(str(p) for p in REFERENCE_ROCPROF.iterdir())
    (folder,) = find_sources(str(REFERENCE_ROCPROF))
    (given,) = together([s for f in files for s in find_sources(f)])
    assert sorted(given.paths) == sorted(folder.paths) and given.reader is folder.reader
    import gpuscope

    a, b = gpuscope.analyze(*files).to_dict(), gpuscope.analyze(str(REFERENCE_ROCPROF)).to_dict()
    assert a["kernels"] == b["kernels"] and a["memcpy"] == b["memcpy"]


def test_traces_of_readers_without_groups_stay_apart(tmp_path: Path) -> None:
    """Two Kineto traces of one name in one folder (a.json, a.json.gz) are two traces."""
    from gpuscope.trace.registry import Source, together

    class Plain:
        name = "kineto"

    class Grouping:
        name = "rpd"

        def read_group(self, paths: list[str]) -> None: ...

    one = [Source(Plain(), (str(tmp_path / n),), str(tmp_path / "a")) for n in ("a.json", "a.gz")]  # type: ignore[arg-type]
    assert together(one) == one
    two = [Source(Grouping(), (str(tmp_path / n),), "k") for n in ("x.rpd", "x.json", "x.rpd")]  # type: ignore[arg-type]
    (merged,) = together(two)
    assert merged.paths == (str(tmp_path / "x.rpd"), str(tmp_path / "x.json"))
