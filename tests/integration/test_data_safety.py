"""Issue 18: no command destroys a file the user had, every kind of output target works, and
inputs that cannot be read are named — through the real CLI (a subprocess).

Every test checks the inputs byte for byte after the command (`Inputs`), whatever it exits with.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuscope import schemas

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "tests" / "data" / "llama_compiled_h200.json.gz"  # recorded on an H200, 6.6 kB
ROOT = os.geteuid() == 0
# as root, file permissions do not apply: run as root without the capabilities that bypass them,
# or as nobody (allowed to read everything, as the interpreter may live in root's home)
NO_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"] if ROOT else []
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
          "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", "--"]  # fmt: skip
needs_setpriv = pytest.mark.skipif(
    ROOT and shutil.which("setpriv") is None, reason="as root, needs setpriv (util-linux)"
)


def gpuscope(
    *args: str | Path,
    cwd: Path | str,
    prefix: list[str] | None = None,
    stdout: Any = subprocess.PIPE,
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "COLUMNS": "120", "PYTHONIOENCODING": "utf-8"}
    argv = [*(prefix or []), sys.executable, "-m", "gpuscope", *map(os.fsencode, args)]
    return subprocess.run(
        argv, stdout=stdout, stderr=subprocess.PIPE, cwd=cwd, env=env, timeout=120
    )


def one_error(done: subprocess.CompletedProcess[bytes], *words: str) -> str:
    """The command's stderr is one `error:` line (no traceback) holding every word."""
    text = done.stderr.decode("utf-8", "replace")
    lines = [line for line in text.splitlines() if line.startswith("error:")]
    assert "Traceback" not in text, text
    assert len(lines) == 1, text
    assert all(word in lines[0] for word in words), text
    return lines[0]


class Inputs:
    """Checksums of files taken before a command; `unchanged()` compares them after."""

    def __init__(self, *paths: Path) -> None:
        self.sums = {p: self._sum(p) for p in paths}

    @staticmethod
    def _sum(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    def unchanged(self) -> bool:
        return all(p.is_file() and self._sum(p) == s for p, s in self.sums.items())


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "in.json.gz"
    shutil.copyfile(TRACE, path)
    return path


# -- 1. an output that is an input, or another output ------------------------------------------


@pytest.mark.parametrize("option", ["--json", "--md", "--html", "--perfetto"])
def test_analyze_refuses_to_write_over_its_input(trace: Path, option: str) -> None:
    inputs = Inputs(trace)
    done = gpuscope("analyze", trace, option, trace, cwd=trace.parent)
    assert done.returncode == 2
    one_error(done, option, "is the input", "in.json.gz")
    assert inputs.unchanged()


def test_the_input_through_a_link_or_another_name_is_refused(trace: Path) -> None:
    folder = trace.parent
    (folder / "soft.json.gz").symlink_to(trace)
    os.link(trace, folder / "hard.json.gz")
    (folder / "sub").mkdir()
    inputs = Inputs(trace)
    for name in ("soft.json.gz", "hard.json.gz", "sub/../in.json.gz", "./in.json.gz"):
        done = gpuscope("analyze", "in.json.gz", "--json", name, cwd=folder)
        assert done.returncode == 2, name
        one_error(done, "is the input")
    assert inputs.unchanged() and (folder / "soft.json.gz").is_symlink()


def test_a_file_inside_an_input_directory_is_an_input(trace: Path) -> None:
    folder = trace.parent / "run"
    folder.mkdir()
    inside = folder / "rank0.json.gz"
    shutil.move(trace, inside)
    inputs = Inputs(inside)
    done = gpuscope("analyze", folder, "--html", inside, cwd=trace.parent)
    assert done.returncode == 2
    one_error(done, "is the input")
    assert inputs.unchanged()
    done = gpuscope("analyze", folder, "--json", folder / "report.json", "-q", cwd=trace.parent)
    assert done.returncode == 0, done.stderr  # beside the inputs is fine
    assert json.loads((folder / "report.json").read_text())["schema"] == "gpuscope.analysis/1"


def test_two_outputs_of_one_file_are_refused_and_nothing_is_written(trace: Path) -> None:
    out = trace.parent / "a.out"
    done = gpuscope("analyze", trace, "--json", out, "--md", out, cwd=trace.parent)
    assert done.returncode == 2
    one_error(done, "--md", "--json")
    assert not out.exists()
    link = trace.parent / "b.out"
    link.symlink_to(out)
    done = gpuscope("analyze", trace, "--md", out, "--html", link, cwd=trace.parent)
    assert done.returncode == 2 and not out.exists()


def test_every_command_keeps_its_inputs(trace: Path, tmp_path: Path) -> None:
    log = tmp_path / "rocblas.log"
    log.write_text("./rocblas-bench -f gemm -r f32_r --transposeA N --transposeB N -m 64 -n 64 "
                   "-k 64 --alpha 1 --lda 64 --ldb 64 --beta 0 --ldc 64\n")  # fmt: skip
    script = tmp_path / "bench_me.py"
    script.write_text("def f():\n    return lambda: None\n")
    rules = tmp_path / "rules.json"
    rules.write_text('{"kernel_rules": []}')
    inputs = Inputs(trace, log, script, rules)
    cases = [
        ("export", trace, "-o", trace),
        ("diff", trace, TRACE, "--json", trace),
        ("diff", TRACE, trace, "--md", trace),
        ("libtrace", log, "-o", log),
        ("counters", trace, "--json", trace),
        ("bench", f"{script}:f", "--json", script),
        ("analyze", trace, "--categories", rules, "--json", rules),
        ("profile", f"{script}:f", "--md", script),
    ]
    for case in cases:
        done = gpuscope(*case, cwd=tmp_path)
        assert done.returncode == 2, (case, done.stderr)
        one_error(done, "is the input")
    assert inputs.unchanged()


# -- 1. devices, FIFOs, descriptors, links --------------------------------------------------------


def test_dev_null_stays_a_device(trace: Path) -> None:
    done = gpuscope(
        "analyze", trace, "--json", "/dev/null", "--md", "/dev/null", "--html", "/dev/null",
        "-q", cwd=trace.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not ROOT or shutil.which("setpriv") is None, reason="runs as nobody: root")
def test_dev_null_as_a_normal_user(trace: Path) -> None:
    """A normal user cannot create files in /dev: only an in-place write works."""
    done = gpuscope("analyze", trace, "--json", "/dev/null", "-q", cwd="/", prefix=NOBODY)
    assert done.returncode == 0, done.stderr


def test_a_fifo_is_written_in_place(trace: Path) -> None:
    fifo = trace.parent / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    done = gpuscope("analyze", trace, "--json", fifo, "-q", cwd=trace.parent)
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(got[0])["schema"] == "gpuscope.analysis/1"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_process_substitution(trace: Path) -> None:
    out = trace.parent / "out.json"
    command = (f"{sys.executable} -m gpuscope analyze {trace} -q --json >(cat > {out}); "
               "status=$?; wait; exit $status")  # fmt: skip
    done = subprocess.run(["bash", "-c", command], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["schema"] == "gpuscope.analysis/1"


def test_dev_stdout_is_standard_output_alone(trace: Path) -> None:
    done = gpuscope("analyze", trace, "--json", "/dev/stdout", cwd=trace.parent)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"] == "gpuscope.analysis/1"  # no terminal report


def test_a_link_is_followed_and_stays_a_link(trace: Path) -> None:
    target = trace.parent / "real" / "report.md"
    target.parent.mkdir()
    target.write_text("old")
    os.chmod(target, 0o640)
    link = trace.parent / "report.md"
    link.symlink_to(target)
    done = gpuscope("analyze", trace, "--md", link, "-q", cwd=trace.parent)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and target.read_text().startswith("#")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the permission bits are kept


def test_a_full_disk_under_stdout_is_one_error(trace: Path) -> None:
    with open("/dev/full", "wb") as full:
        for extra in ([], ["--json", "-"]):
            done = gpuscope("analyze", trace, *extra, cwd=trace.parent, stdout=full)
            assert done.returncode == 2
            one_error(done, "standard output", "No space left on device")


def test_a_reader_that_closes_the_pipe_is_reported(trace: Path) -> None:
    # `true` ends before gpuscope has read its input: the first write finds the pipe closed
    command = f"{sys.executable} -m gpuscope analyze {trace} --json - | true"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 141
    one_error(done, "standard output", "closed")


@needs_setpriv
def test_a_read_only_folder_is_one_error(trace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    done = gpuscope("analyze", trace, "--json", folder / "r.json", cwd=tmp_path, prefix=NO_DAC)
    assert done.returncode == 2
    one_error(done, "r.json", "cannot write")


# -- 1./2. names that are not UTF-8, names with control characters --------------------------------


def test_a_file_name_that_is_not_utf8(trace: Path, tmp_path: Path) -> None:
    odd = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"tr\xffce.json.gz"))
    shutil.copyfile(trace, odd)
    outputs = ["--json", "o.json", "--md", "o.md", "--html", "o.html", "--perfetto", "o.pf.json"]
    done = gpuscope("analyze", odd, *outputs, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "o.json").read_bytes().decode("utf-8"))  # valid UTF-8
    assert report["source"]["path"] == odd  # JSON escapes that read back as the same name
    for name in ("o.md", "o.html"):
        assert "xffce.json.gz" in (tmp_path / name).read_bytes().decode("utf-8")  # as \xff
    assert b"tr\\xffce.json.gz" in done.stdout
    done = gpuscope("diff", odd, TRACE, "--json", "d.json", "--md", "d.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    json.loads((tmp_path / "d.json").read_bytes().decode("utf-8"))
    done = gpuscope("export", odd, "-o", "t.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    json.loads((tmp_path / "t.json").read_bytes().decode("utf-8"))


HOSTILE = "void k\x1b[2J\x1b]0;pwned\x07<b>\u202eevil(int)"


def hostile_trace(folder: Path) -> Path:
    """Three launches of a kernel whose name clears the screen, sets the title, holds HTML and
    reverses the text after it."""
    events = []
    for i in range(3):
        ts, corr = 1000.0 + 50 * i, i + 1
        events += [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": ts, "dur": 5, "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": HOSTILE, "pid": 0, "tid": 7, "ts": ts + 10,
             "dur": 30.5, "args": {"device": 0, "stream": 7, "correlation": corr}},
        ]  # fmt: skip
    path = folder / "hostile.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def test_control_characters_are_escaped_in_every_view(tmp_path: Path) -> None:
    path = hostile_trace(tmp_path)
    done = gpuscope("analyze", path, "--json", "r.json", "--md", "r.md", "--html", "r.html",
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    for text in (done.stdout, (tmp_path / "r.md").read_bytes(), (tmp_path / "r.html").read_bytes()):
        assert b"\x1b[2J" not in text and b"\x07" not in text and "\u202e".encode() not in text
        assert b"\\x1b[2J" in text
    assert b"<b>" not in (tmp_path / "r.html").read_bytes()
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["top_kernels"][0]["name"] == HOSTILE  # the JSON keeps the exact name


# -- 2. inputs that cannot be read ----------------------------------------------------------------


def test_a_symlink_loop_and_a_missing_file_are_named(tmp_path: Path) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    done = gpuscope("analyze", loop, cwd=tmp_path)
    assert done.returncode == 2
    one_error(done, "loop.json", "too many levels of symbolic links")
    done = gpuscope("analyze", tmp_path / "nope.json", cwd=tmp_path)
    one_error(done, "nope.json", "no such file or directory")


@needs_setpriv
def test_an_unreadable_file_is_permission_denied(trace: Path) -> None:
    os.chmod(trace, 0o000)
    done = gpuscope("analyze", trace, cwd=trace.parent, prefix=NO_DAC)
    assert done.returncode == 2
    one_error(done, "in.json.gz", "permission denied")


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Path]:
    """A folder of two traces, the second unreadable by a normal user."""
    folder = tmp_path / "job"
    folder.mkdir()
    shutil.copyfile(TRACE, folder / "rank0.json.gz")
    shutil.copyfile(TRACE, folder / "rank1.json.gz")
    os.chmod(folder / "rank1.json.gz", 0o000)
    yield folder
    os.chmod(folder / "rank1.json.gz", 0o644)


@needs_setpriv
def test_an_unreadable_trace_in_a_folder_is_named(job: Path) -> None:
    done = gpuscope("analyze", job, "-q", cwd=job, prefix=NO_DAC)
    assert done.returncode == 2
    one_error(done, "rank1.json.gz", "permission denied", "--skip-bad")


@needs_setpriv
def test_skip_bad_leaves_it_out_with_a_warning_and_a_record(job: Path) -> None:
    out = job.parent / "r.json"
    done = gpuscope("analyze", job, "--skip-bad", "--json", out, "-q", cwd=job, prefix=NO_DAC)
    assert done.returncode == 0, done.stderr
    assert b"warning:" in done.stderr and b"rank1.json.gz" in done.stderr
    data = json.loads(out.read_text())
    assert data["schema"] == "gpuscope.analysis-set/1" and len(data["reports"]) == 1
    assert data["failed"][0]["path"].endswith("rank1.json.gz")
    assert "permission denied" in data["failed"][0]["error"]


def test_a_bad_second_input_is_recorded_in_the_set(trace: Path, tmp_path: Path) -> None:
    bad = tmp_path / "b.json"
    bad.write_text("this is not a trace")
    done = gpuscope("analyze", trace, bad, "--json", "r.json", "--md", "r.md", "-q", cwd=tmp_path)
    assert done.returncode == 2
    one_error(done, "b.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["schema"] == "gpuscope.analysis-set/1"
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, schemas.load(data["schema"]))
    assert [f["path"] for f in data["failed"]] == [str(bad)]
    assert len(data["reports"]) == 1
    assert "Inputs not read" in (tmp_path / "r.md").read_text()


def test_perfetto_is_not_written_when_an_input_failed(trace: Path, tmp_path: Path) -> None:
    bad = tmp_path / "b.json"
    bad.write_text("{}")
    done = gpuscope("analyze", trace, bad, "--perfetto", "t.json", "-q", cwd=tmp_path)
    assert done.returncode == 2 and not (tmp_path / "t.json").exists()


# -- 2. configuration that would be silently wrong, patterns that would hang ----------------------


def test_unknown_category_keys_are_errors(trace: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text('{"kernel_rules": [{"category": "gemm", "patern": "mul_mat_q"}]}')
    done = gpuscope("analyze", trace, "--categories", rules, cwd=tmp_path)
    assert done.returncode == 2
    one_error(done, "rules.json", "patern")


def test_a_pathological_pattern_cannot_hang(tmp_path: Path) -> None:
    """(a+)+$ backtracks exponentially in Python's re on a long run of a's without an end."""
    events = [
        {
            "ph": "X",
            "cat": "kernel",
            "name": "a" * 60 + "!",
            "pid": 0,
            "tid": 7,
            "ts": 10.0 * i,
            "dur": 5,
            "args": {"device": 0, "stream": 7},
        }
        for i in range(3)
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    rules = tmp_path / "rules.json"
    rules.write_text('{"kernel_rules": [{"category": "gemm", "pattern": "(a+)+$"}]}')
    done = gpuscope("analyze", path, "--categories", rules, "--json", "r.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # the timeout of gpuscope() would fail it
    assert json.loads((tmp_path / "r.json").read_text())["categories"]["other"]["count"] == 3


def test_gzip_input_names_stay_intact(trace: Path) -> None:
    """The refused write left no temporary file beside the input."""
    gpuscope("analyze", trace, "--json", trace, cwd=trace.parent)
    assert sorted(p.name for p in trace.parent.iterdir()) == ["in.json.gz"]
    with gzip.open(trace) as handle:
        assert json.load(handle)["traceEvents"]
